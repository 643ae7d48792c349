import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperdex.search import query as Q


def test_free_words_fielded_phrases_and_filters_parse():
    tree = Q.parse('weight decay ti:"weight decay" cat:cs.LG -video')
    kinds = [type(c).__name__ for c in tree.children]
    assert kinds == ["Text", "Text", "Text", "Filter", "Not"]
    assert tree.children[2].phrase and tree.children[2].column == "title"
    assert tree.children[3].value == "cs.LG"


def test_or_and_parentheses():
    tree = Q.parse("(llm OR language) AND agents")
    assert isinstance(tree.children[0], Q.Bool) and tree.children[0].op == "OR"
    assert tree.children[1].words == ["agents"]


def test_date_ranges_are_real_calendar_dates():
    assert Q.parse("date:2025-01..2025-06").children[0].value == ("2025-01", "2025-06")
    assert Q.parse("date:2025").children[0].value == ("2025", "2025")
    assert Q.parse("date:..2024-12").children[0].value == ("", "2024-12")
    assert Q.parse("date:2025-03..2025").children[0].value == ("2025-03", "2025")
    for bad in ("date:2025-13", "date:2025-02-30", "date:2025-00-10"):
        with pytest.raises(Q.QueryError, match="not a date on the calendar"):
            Q.parse(bad)
    assert Q.date_range("2024-02-29", None) == ("2024-02-29", "")


def test_full_width_and_curly_quotes_mean_what_ascii_means():
    tree = Q.parse("ＬＬＭ ｔｉ：agents “weight decay” （a ＯＲ b）")
    assert tree.children[0].words == ["llm"]
    assert tree.children[1].column == "title"
    assert tree.children[2].phrase and tree.children[2].words == ["weight", "decay"]
    assert isinstance(tree.children[3], Q.Bool) and tree.children[3].op == "OR"


@pytest.mark.parametrize("dash", ["-", "\u2013", "\u2014", "\u2212", "\u2010"])
def test_a_dash_an_editor_or_a_pdf_puts_before_a_word_excludes_it(dash):
    """`diffusion –video` (en dash) required "video": the opposite of `diffusion -video`."""
    tree = Q.parse(f"diffusion {dash}video")
    assert isinstance(tree.children[1], Q.Not) and tree.children[1].child.words == ["video"]
    assert Q.parse(f"Kullback{dash}Leibler").children[0].words == ["kullback", "leibler"]


def test_prefix_and_id():
    t = Q.parse("transform*").children[0]
    assert t.prefix and t.words == ["transform"]
    assert Q.parse("id:2510.05491v2").children[0].value == "2510.05491"


@pytest.mark.parametrize(
    "q, ref",
    [
        ("2505.13738", ("id", "2505.13738")),
        ("  https://arxiv.org/abs/2505.13738v2 ", ("id", "2505.13738")),
        ("arXiv:2505.13738", ("id", "2505.13738")),
        ("https://arxiv.org/pdf/2505.13738v1.pdf", ("id", "2505.13738")),
        ("hep-th/9901002v1", ("id", "hep-th/9901002")),
        ("10.48550/arXiv.2505.13738", ("id", "2505.13738")),
        ("https://doi.org/10.1145/3292500.3330701", ("doi", "10.1145/3292500.3330701")),
        ("weight decay 2505.13738", None),
    ],
)
def test_pasted_references(q, ref):
    assert Q.paper_ref(q) == ref


def test_nesting_is_bounded_with_a_message():
    with pytest.raises(Q.QueryError, match="too deeply nested"):
        Q.parse("(" * 5_000 + "a" + ")" * 5_000)


@pytest.mark.parametrize(
    "q, message",
    [
        ('"unbalanced phrase', "unbalanced quote"),
        ("(graph OR tree", "never closed"),
        ("graph)", "no matching '('"),
        (")", "no matching '('"),  # was "empty group": no group was opened
        ('"weight dec*"', "a * is not a prefix"),  # looked for the word "dec", found nothing, said why not
        ("OR graph", "needs a term before"),
        ("graph OR", "needs a term after"),
        ("ti: graph", "needs a value"),
        ("date:yesterday", "dates are YYYY"),
        ("date:2025-06..2025-01", "ends before it starts"),
        ("cat:cs.LG;DROP", "cat: expects"),
        ("NOT NOT x", "NOT needs a term"),
        ("()", "empty parentheses"),
        ("x" * 20001, "query too long"),
    ],
)
def test_broken_syntax_explains_itself(q, message):
    with pytest.raises(Q.QueryError) as e:
        Q.parse(q)
    assert message in str(e.value)


def test_error_names_position():
    with pytest.raises(Q.QueryError) as e:
        Q.parse('graph "neural')
    assert e.value.position == 6
    assert "character 7" in str(e.value)


@pytest.mark.parametrize(
    "q",
    [
        'title:secret OR abstract:"x" NEAR(a b) ^c',  # FTS5 syntax typed by a user
        "{title abstract}: hack",
        'a" OR "b',
        '"x\x00y" "a^b" "NEAR(a b)"',  # (a * inside quotes is refused: test_broken_syntax_explains_itself)
        '"扩散 model"',
    ],
)
def test_phrases_reach_fts5_as_quoted_words_only(q):
    tree = Q.parse(q)
    for node in tree.children:
        if isinstance(node, Q.Text) and node.phrase:
            expr = Q.fts_string(node) or ""
            for token in ("{title}", "{abstract}", "{authors}", " : "):
                expr = expr.replace(token, " ")
            for part in expr.split('"'):
                assert all(ch.isalnum() or ch.isspace() for ch in part), expr


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_parser_never_crashes(q):
    try:
        tree = Q.parse(q)
    except Q.QueryError:
        return
    assert isinstance(tree, Q.Bool)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_control_characters_read_as_spaces_and_curly_quotes_as_straight(q):
    import unicodedata

    want = "".join(" " if ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 else ch for ch in unicodedata.normalize("NFKC", q))
    want = want.translate(str.maketrans({c: '"' for c in "\u201c\u201d\u201e\u00ab\u00bb\u300c\u300d"}))
    want = want.translate(str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2212"}))  # dashes: "-"
    assert Q._clean(q) == want


def test_the_embedding_model_reads_a_prefix_as_its_letters():
    from paperdex.search.planning import plan

    assert plan("transform*").dense_text == "transform"  # not the "*" a tokenizer would read as a word
    assert plan('ti:diffus* "image editing"').dense_text == "diffus image editing"


@pytest.mark.parametrize("q", ['""', 'au:""', 'ti:"  "', 'diffusion abs:"-"'])
def test_empty_quotes_are_refused_not_read_as_every_paper(q):
    with pytest.raises(Q.QueryError, match="empty quotes"):
        Q.parse(q)


def test_function_words_and_words_unread_on_purpose_get_no_untranslated_notice():
    from paperdex.search.planning import plan

    assert not [n for n in plan("让AI帮我自动读论文写综述").notices if "让" in n]  # "let": not a topic
    assert not plan("SFT 和 RL 对泛化能力的影响").notices  # 和: "and"
    assert not plan("Embedding 模型 文本检索 训练方法").notices  # 模型 is left unread on purpose
    assert [n for n in plan("龘").notices if "龘" in n]  # a word no one can read: said
    assert [n for n in plan("改进 扩散模型").notices if "改进" in n]


def test_fields_under_their_long_names():
    """arXiv's search form says title / author / abstract, Google Scholar author:."""
    assert Q.parse("title:diffusion").children == Q.parse("ti:diffusion").children
    assert Q.parse('Author:"Kaiming He"').children == Q.parse('au:"Kaiming He"').children
    assert (
        Q.parse("abstract:(robot OR robotic) category:cs.RO").children
        == Q.parse("abs:(robot OR robotic) cat:cs.RO").children
    )
    assert Q.parse("year:2025").children == Q.parse("date:2025").children  # "year:2025" was a word


@pytest.mark.parametrize("typed", ["cs.*", "CS.*", "cs."])
def test_an_archive_written_with_a_star_is_the_archive(typed):
    """cat:cs.* (arXiv's listing style) was refused: "cat: expects a category such as cs.LG or cs"."""
    assert Q.parse(f"cat:{typed}").children == [Q.Filter("cat", typed.rstrip("*").rstrip("."))]


@pytest.mark.parametrize("typed", ["cs*", "cs.C*", "c*", "CS.cv*"])
def test_a_category_prefix_keeps_its_star(typed):
    """cat:cs.C* was read as the category "cs.C" (no paper has it); a prefix is one (search: test_search)."""
    assert Q.parse(f"cat:{typed}").children == [Q.Filter("cat", typed)]


def test_a_function_word_under_a_field_is_a_stopword(searcher):
    def ids(q):
        return {h.paper.id for h in searcher.search(q, per_page=100, mode="lexical").hits}

    assert ids("ti:让diffusion") == ids("ti:diffusion") and ids("ti:diffusion")  # 让 ("let"): as "the" is
    assert searcher.search("ti:和", mode="lexical").total == searcher.search("ti:the", mode="lexical").total
    assert searcher.search("ti:龘", mode="lexical").total == 0  # a word no one reads still matches nothing


def test_a_pasted_passage_with_parentheses_is_read_as_text_not_refused(searcher):
    """The first 600 characters of an abstract with "(ADS)" and "(ODD)" in them had 66+ words
    "with query syntax" and were refused (MAX_TERMS); a passage is read as plain text and says so."""
    passage = searcher.store.get("2409.13661").abstract[:600]
    assert len(passage.split()) > Q.MAX_TERMS and "(" in passage
    res = searcher.search(passage, per_page=5)
    assert res.hits[0].paper.id == "2409.13661"
    assert any("read as plain text" in n for n in res.notices)
    # written as a query (a field, an operator, a minus), it stays one, and the limit holds
    for syntax in ("ti:driving", "OR", "-driving"):
        with pytest.raises(Q.QueryError, match="too many terms"):
            searcher.search(f"{passage} {syntax}")
