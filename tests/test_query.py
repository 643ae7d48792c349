import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperdex import query as Q


def compiled(q: str) -> Q.Compiled:
    return Q.compile_query(Q.parse(q))


def test_free_words_are_soft_and_ranked():
    c = compiled("weight decay")
    assert c.soft == '"weight" OR "decay"'
    assert c.rank == '"weight" OR "decay"'
    assert c.where == ""
    assert c.dense_text == "weight decay"


def test_fielded_phrase_and_category_are_required():
    c = compiled('ti:"weight decay" cat:cs.LG')
    assert c.soft is None
    assert "fts_exact" in c.where and "paper_categories" in c.where
    assert c.params == ['{title} : "weight decay"', "cs.lg"]
    assert c.rank == '{title} : "weight decay"'


def test_exclusion_and_not_do_not_rank():
    c = compiled("diffusion -video NOT audio")
    assert c.rank == '"diffusion"'
    assert c.where.count("NOT") == 2


def test_or_and_parentheses():
    tree = Q.parse("(llm OR language) AND agents")
    assert isinstance(tree.children[0], Q.Bool) and tree.children[0].op == "OR"
    assert tree.children[1].words == ["agents"]


def test_date_ranges():
    c = compiled("date:2025-01..2025-06")
    assert c.params == ["2025-01", "2025-06\uffff"]
    c = compiled("date:2025")
    assert c.params == ["2025", "2025\uffff"]
    c = compiled("date:..2024-12")
    assert c.params == ["2024-12\uffff"]


def test_prefix_and_id():
    assert compiled("transform*").rank == '"transform" *'
    assert compiled("id:2510.05491v2").params == ["2510.05491"]


@pytest.mark.parametrize(
    "q, message",
    [
        ('"unbalanced phrase', "unbalanced quote"),
        ("(graph OR tree", "never closed"),
        ("graph)", "no matching '('"),
        ("OR graph", "needs a term before"),
        ("graph OR", "needs a term after"),
        ("ti: graph", "needs a value"),
        ("date:yesterday", "date: expects"),
        ("date:2025-06..2025-01", "ends before it starts"),
        ("cat:cs.LG;DROP", "cat: expects"),
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
        'a" OR "b',  # balanced but odd quotes
        "x\x00y\x00",  # NUL bytes
        "🙂🚀 transformers",
        "扩散模型 图像生成",
        "Muon 优化器 收敛",
        "'; DROP TABLE papers; --",
        "a" * 10_000,
        " ".join(f"w{i}" for i in range(2000)),
    ],
)
def test_hostile_input_compiles_to_quoted_words_only(q):
    c = compiled(q)
    for expr in [c.rank, c.soft, *c.params]:
        if not isinstance(expr, str) or expr.startswith(("%", "2")):
            continue
        # every FTS5 string is built from quoted \w-words, column filters and OR only
        stripped = expr
        for token in ("{title}", "{abstract}", "{authors}", " : ", " OR ", " *"):
            stripped = stripped.replace(token, " ")
        for part in stripped.split('"'):
            assert all(ch.isalnum() or ch == "_" or ch.isspace() for ch in part), expr


def test_mixed_script_query_keeps_english_terms():
    c = compiled("Muon优化器 收敛")
    assert c.rank == '"muon"'
    assert c.dense_text == "Muon优化器 收敛"


def test_pure_chinese_query_has_no_lexical_terms_but_is_text():
    c = compiled("一种新的扩散模型")
    assert c.rank is None and c.soft is None
    assert c.has_text and c.dense_text == "一种新的扩散模型"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_parser_never_crashes(q):
    try:
        c = compiled(q)
    except Q.QueryError:
        return
    assert isinstance(c.where, str)
