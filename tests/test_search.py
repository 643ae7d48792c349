"""The search contract (docs/search.md) on the fixture store: 314 real arXiv papers with
their all-MiniLM-L6-v2 vectors."""

import re
from collections import Counter
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paperdex.index import lexical
from paperdex.index.publish import publish
from paperdex.search import MAX_WINDOW, RANKED_LIST, Filters, fuse, mark, rank, required, rrf, snippet
from paperdex.search.query import QueryError
from paperdex.text import stem
from paperdex.web.render import hit_json, marked_html


def ids(res):
    return [h.paper.id for h in res.hits]


def everything(searcher, q, **kw):
    """Every paper a query lists, page by page: the relevance order ranks more than the
    matched set (docs/search.md), Newest lists exactly the matched set."""
    out, page = [], 1
    while True:
        res = searcher.search(q, page=page, per_page=50, facets=False, **kw)
        out.extend(ids(res))
        if page >= res.pages:
            return out, res
        page += 1


def stems(*words):
    return frozenset(stem(w) for w in words)


def test_title_phrase_and_category(searcher):
    res = searcher.search('ti:"weight decay" cat:cs.LG', per_page=50)
    for h in res.hits:
        assert "weight decay" in h.paper.title.lower()
        assert "cs.LG" in h.paper.categories
    assert set(ids(res)) == {"2504.17160", "2505.13738", "2506.14562"}


def test_free_words_all_required_for_short_queries(searcher):
    got, res = everything(searcher, "weight decay", mode="lexical", sort="newest")
    assert res.total == len(got) >= 3
    for h in searcher.search("weight decay", mode="lexical", sort="newest", per_page=50).hits:
        text = (h.paper.title + " " + h.paper.abstract).lower()
        assert "weight" in text and "decay" in text
    # the relevance order ranks papers with either word too, those with both first
    ranked, rel = everything(searcher, "weight decay", mode="lexical")
    assert rel.total == res.total and set(got) <= set(ranked) and len(ranked) > len(got)
    assert set(ranked[: len(got)]) == set(got)
    assert required(2) == 2 and required(3) == 2 and required(5) == 4 and required(12) == 6


def test_newest_sorts_the_matched_set(searcher):
    rel, r1 = everything(searcher, "weight decay")
    new, r2 = everything(searcher, "weight decay", sort="newest")
    assert set(new) <= set(rel) and r1.total == r2.total == len(new) and len(rel) == r1.listed
    assert r1.listed == max(r1.total, min(r1.ranked, RANKED_LIST))
    dates = [searcher.store.get(i).date for i in new]
    assert dates == sorted(dates, reverse=True)


def test_exclusion_removes_papers(searcher):
    with_ = set(ids(searcher.search("weight decay", mode="lexical", per_page=100)))
    without = set(ids(searcher.search("weight decay -ti:alphadecay", mode="lexical", per_page=100)))
    assert "2506.14562" in with_ and "2506.14562" not in without
    assert without == with_ - {"2506.14562"}


def test_hybrid_hits_say_why_they_matched(searcher):
    res = searcher.search("weight decay regularization", per_page=20)
    assert res.mode == "hybrid"
    top = res.hits[0]
    assert top.lexical_rank is not None and top.dense_rank is not None
    assert [h.score for h in res.hits] == sorted((h.score for h in res.hits), reverse=True)
    assert 0 < res.hits[-1].score <= top.score <= 1
    # a paper both sides rank first scores 1: the convex combination of normalised scores,
    # the dense weight 0.3 shrunk by the words' gap between their best two (1 - 0.5)
    assert fuse(np.array([2.0, 1.0]), np.array([0.9, 0.5]), 0.3, 0.5).tolist() == pytest.approx([1.0, 0.425])
    assert "<mark>" in hit_json(top)["title_html"] or "<mark>" in hit_json(top)["snippet_html"]


def test_searches_at_once_rank_as_each_alone(built_store_dir):
    """A server's searchers run at once over the vectors and snapshots the process shares
    (the filters' gathered rows, the query vectors kept): every one of them lists the papers,
    scores, counts and notices it lists alone."""
    from concurrent.futures import ThreadPoolExecutor

    from paperdex.search import Searcher
    from paperdex.store import Store

    queries = ["weight decay regularization", "graph neural networks", "图神经网络", "qwxzv plorbnik", "robot"]
    filters = [None, Filters(category="cs.LG"), Filters(category="cs.RO")]

    def run(q, f):
        with Store(built_store_dir, readonly=True) as store:
            res = Searcher(store).search(q, filters=f, per_page=20)
        return [(h.paper.id, h.score, h.dense_rank) for h in res.hits], res.total, res.notices

    asks = [(q, f) for q in queries for f in filters]
    alone = [run(q, f) for q, f in asks]
    assert any(hits and hits[0][2] is not None for hits, _, _ in alone)  # the dense side took part
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            assert list(pool.map(lambda a: run(*a), asks)) == alone


def test_pages_are_slices_of_one_order(searcher):
    whole = ids(searcher.search("learning", per_page=40, facets=False))
    pages = [ids(searcher.search("learning", per_page=10, page=p, facets=False)) for p in (1, 2, 3, 4)]
    assert sum(pages, []) == whole
    p2 = searcher.search("learning", mode="lexical", per_page=5, page=2)
    assert [h.lexical_rank for h in p2.hits] == [6, 7, 8, 9, 10]


def test_pages_past_the_window_are_refused_with_a_message_unless_past_the_last(searcher, monkeypatch):
    """A page past the results window is refused when the search lists more than the window;
    past its last page too, it is that (an empty page): page 501 of a search of 5,435 papers was
    refused "up to number 10,000"."""
    from paperdex.search import engine, planning

    past = searcher.search("learning", per_page=20, page=MAX_WINDOW // 20 + 1)
    assert past.hits == [] and past.total > 0 and past.page > past.pages
    listed = searcher.search("learning", per_page=20).listed
    for module in (engine, planning):  # a window the fixture's listing exceeds
        monkeypatch.setattr(module, "MAX_WINDOW", listed // 2)
    with pytest.raises(QueryError, match=f"up to number {listed // 2:,}"):
        searcher.search("learning", per_page=20, page=-(-(listed // 2) // 20) + 1)


@pytest.mark.parametrize("per_page", [20, 30, 7, 1])
def test_the_last_page_the_window_reaches_lists_to_its_end_and_says_why_it_is_the_last(searcher, monkeypatch, per_page):
    """Page 500 of `model` (51,809 papers, 20 a page) ended the pager without a word; and with 30 a
    page the pager's last page, 334 (9,991-10,000), was refused "up to number 10,000". The last
    page lists the window's last results and says why no page follows; the one before says nothing."""
    from paperdex.search import engine, planning

    listed = searcher.search("learning", per_page=20).listed
    window = listed // 2 - 3  # a window the fixture's listing exceeds, no multiple of a page
    for module in (engine, planning):
        monkeypatch.setattr(module, "MAX_WINDOW", window)
    said = f"results are listed up to number {window:,}; narrow the query or sort differently"
    for sort in ("relevance", "newest"):
        every, _ = everything(searcher, "learning", sort=sort)  # 50 a page: the window's order
        last = searcher.search("learning", per_page=per_page, sort=sort)
        assert last.pages == -(-window // per_page) and said not in last.notices
        res = searcher.search("learning", per_page=per_page, page=last.pages, sort=sort)
        assert ids(res) == every[(last.pages - 1) * per_page : window] and said in res.notices
        before = searcher.search("learning", per_page=per_page, page=last.pages - 1, sort=sort)
        assert len(before.hits) == per_page and said not in before.notices


def test_newest_sort_and_filters(searcher):
    res = searcher.search("model", sort="newest", per_page=30, filters=Filters(category="cs.CV", date_from="2025-06"))
    dates = [h.paper.date for h in res.hits]
    assert dates and dates == sorted(dates, reverse=True)
    assert all(d >= "2025-06" for d in dates)
    assert all("cs.CV" in h.paper.categories for h in res.hits)


def test_invalid_filter_dates_are_refused(searcher):
    with pytest.raises(QueryError, match="calendar"):
        searcher.search("model", filters=Filters(date_from="2025-02-30"))


def test_category_rule_is_case_insensitive_and_archives_match(searcher, ro_store):
    """An archive (cat:cs) matches every paper with any of its categories, each paper once, in
    whatever number of the archive's categories it is."""
    a = searcher.search("cat:cs.CV", per_page=5)
    assert a.total == searcher.search("cat:cs.cv", per_page=5).total > 0
    for archive in ("cs", "stat", "eess"):
        want = {p.id for p in ro_store.iter_papers() if any(c.split(".")[0] == archive for c in p.categories)}
        got = searcher.search(f"cat:{archive}", per_page=100, sort="newest")
        assert got.total == len(want) > 0 and {h.paper.id for h in got.hits} <= want


def test_a_category_prefix_is_every_category_it_begins(searcher, ro_store):
    """cat:cs.C* found no paper and said only that none met the conditions (it looked for a
    category named "cs.C"): it is every category beginning with cs.C, as arXiv expands one, from
    the query and the form's filter alike. An archive or a prefix reads arXiv categories only:
    cat:I* (the archive "i") found the papers whose ACM classes read "I.2.7"."""
    papers = list(ro_store.iter_papers())

    def having(begins: str) -> set[str]:
        return {p.id for p in papers if any(c.startswith(begins) for c in p.categories)}

    def found(q: str, **kw) -> set[str]:
        got, res = everything(searcher, q, sort="newest", **kw)
        assert res.total == len(got)
        return set(got)

    cs_c = having("cs.C")
    assert {c for p in papers for c in p.categories if c.startswith("cs.C")} >= {"cs.CV", "cs.CL", "cs.CR"}
    assert found("cat:cs.C*") == found("cat:cs.c*") == cs_c > found("cat:cs.CV") > set()
    assert found("", filters=Filters(category="cs.C*")) == cs_c
    assert found("cat:cs.CV OR cat:cs.CL OR cat:cs.CR OR cat:cs.CY OR cat:cs.CG") == cs_c
    assert found("cat:cs.CV*") == found("cat:cs.CV")
    assert found("cat:c*") == found("cat:cs*") == found("cat:cs.*") == found("cat:cs") == having("cs.")
    assert having("I.") and found("cat:I*") == set() and searcher.search("cat:I*").notices


@pytest.mark.parametrize(
    ("typed", "says"),
    [("*", "would be every category"), ("cs.*.*", "the start of one ending in * such as cs.C*")],
)
def test_a_category_that_is_no_prefix_is_refused_saying_what_cat_takes(searcher, typed, says):
    """cat:* and cat:cs.*.* were refused with "cat: expects a category such as cs.LG or cs", as if
    a prefix were not a thing cat: takes."""
    with pytest.raises(QueryError, match=re.escape(says)):
        searcher.search(f"diffusion cat:{typed}")


def test_archive_category_and_author_filter(searcher, ro_store):
    res = searcher.search("cat:cs.RO", per_page=100)
    assert res.hits and all(any(c.startswith("cs.RO") for c in h.paper.categories) for h in res.hits)
    p = ro_store.get("2505.13738")
    res = searcher.search(f'au:"{p.authors[0]}"', per_page=10)
    assert "2505.13738" in ids(res)


def test_empty_query_browses_newest(searcher):
    res = searcher.search("", per_page=5)
    dates = [h.paper.date for h in res.hits]
    assert len(dates) == 5 and dates == sorted(dates, reverse=True)
    assert res.total == searcher.store.count()


def test_facets_count_the_matched_set_exactly(searcher):
    for mode in ("lexical", "hybrid"):
        res = searcher.search("diffusion", mode=mode)
        got, _ = everything(searcher, "diffusion", mode=mode, sort="newest")
        papers = [searcher.store.get(i) for i in got]
        assert sum(n for _, n in res.facets["year"]) == res.total == len(papers)
        for cat, n in res.facets["category"]:
            assert n == sum(cat in p.categories for p in papers)


def test_category_counts_read_either_way_are_the_papers_own(searcher, monkeypatch):
    """LexIndex.category_counts reads a few matched papers' entries alone, more through the
    mask at every entry: both count what the papers' records say."""
    ix = searcher.lex
    papers = searcher.store.get_many([int(r) for r in ix.rowids])
    rng = np.random.default_rng(5)
    for share in (0.0, 0.01, 0.3, 1.0):
        mask = rng.random(ix.n) < share
        want = Counter(c for d in np.flatnonzero(mask) for c in papers[int(ix.rowids[d])].categories)
        for few in (1, ix.n + 1):  # the entries alone, then the mask at every entry
            monkeypatch.setattr(lexical, "FEW_DOCS", few)
            assert dict(ix.category_counts(mask)) == want


def test_nonsense_says_no_close_matches(searcher):
    res = searcher.search("qwxzv plorbnik")
    assert res.total == 0 and res.hits == []
    assert any("no close matches" in n for n in res.notices)


def test_conditions_no_paper_meets_say_so_not_no_close_matches(searcher):
    """A category no paper has, or a date range before the corpus, leaves nothing: the notice
    names the conditions, where "no close matches" would blame the words."""
    for res in (
        searcher.search("diffusion cat:cs.XX"),
        searcher.search("diffusion", filters=Filters(category="cs.XX")),
        searcher.search("diffusion date:1990..1991"),
    ):
        assert res.total == 0 and res.hits == []
        assert any("meets the query's conditions" in n for n in res.notices)
        assert not any("no close matches" in n or "semantic" in n for n in res.notices)
    assert searcher.search("diffusion cat:cs.CV").total > 0


def test_the_notice_says_which_side_matched(searcher):
    """Words that stand in papers, though never enough of them together, are not reported as
    in no paper (issue 35): the notice says so, and the order still ranks those papers."""
    res = searcher.search("robot speech")
    lexical = searcher.search("robot speech", mode="lexical")
    assert lexical.total == 0 and lexical.ranked and res.total > 0
    assert not any("no paper contains these words" in n for n in res.notices)
    assert any("enough of these words" in n for n in res.notices)
    # the words' side alone: its ranked papers hold some of the words, and nothing semantic was asked
    assert any("showing papers with some of them" in n for n in lexical.notices)
    assert not any("no close matches" in n or "semantic" in n for n in lexical.notices)


def test_a_word_no_paper_has_is_set_aside_with_a_notice(searcher):
    base = searcher.search("learning", mode="lexical").total
    res = searcher.search("learning transformerz", mode="lexical")
    assert res.total == base
    assert any("transformerz" in n for n in res.notices)


def test_every_word_counts_however_common(searcher):
    """No common-term cut-off: a frequent word still narrows and ranks."""
    both = set(everything(searcher, "LLM agents", mode="lexical", sort="newest")[0])
    llm = set(everything(searcher, "LLM", mode="lexical", sort="newest")[0])
    agents = set(everything(searcher, "agents", mode="lexical", sort="newest")[0])
    assert both == llm & agents


@pytest.mark.parametrize(
    "q", ["2505.13738", "https://arxiv.org/abs/2505.13738v2", "arXiv:2505.13738", "https://arxiv.org/pdf/2505.13738"]
)
def test_pasted_id_or_url_finds_that_paper(searcher, q):
    res = searcher.search(q)
    assert ids(res) == ["2505.13738"]


def test_pasted_id_not_in_store_says_how_to_add_it(searcher):
    res = searcher.search("2401.99999")
    assert res.total == 0 and "paperdex ingest arxiv --id 2401.99999" in res.notices[0]


@pytest.mark.parametrize(
    "a, b", [("ＬＬＭ", "LLM"), ("ﬁne-tuning", "fine-tuning"), ("Ｔｒａｎｓｆｏｒｍｅｒ", "transformer")]
)
def test_full_width_and_ligatures_match_like_ascii(searcher, a, b):
    assert ids(searcher.search(a, mode="lexical", per_page=50)) == ids(searcher.search(b, mode="lexical", per_page=50))
    assert searcher.search(a, mode="lexical").total > 0


def test_hyphenated_terms_keep_their_words(searcher):
    res = searcher.search("in-context learning", mode="lexical", per_page=50, sort="newest")
    assert res.total > 0
    for h in res.hits:
        assert "context" in (h.paper.title + " " + h.paper.abstract).lower()


def test_an_acronym_also_finds_its_long_form(searcher):
    """CoT: four papers of the fixture write "chain-of-thought" and never "CoT"."""
    only_long = {"2506.09424", "2509.08910", "2601.19063"}
    got = set(ids(searcher.search("CoT", mode="lexical", per_page=100)))
    assert only_long <= got
    assert got == set(ids(searcher.search("chain-of-thought OR cot", mode="lexical", per_page=100)))
    # an acronym that is also an everyday word expands only when typed in capitals
    from paperdex.text import acronyms

    assert acronyms.expand("MAP") and not acronyms.expand("map") and not acronyms.expand("decoding")


@pytest.mark.parametrize(
    "q",
    [
        'title:x OR abstract:"y" NEAR(a b)',
        "x\x00y",
        "🙂🚀",
        "扩散模型 图像生成",
        "a" * 10_000,
        "* OR *",
        '""',
        " ".join(["the"] * 64),
        " ".join(["ti:a*"] * 48),
        " OR ".join(f"w{i}" for i in range(1000)),
    ],
)
def test_hostile_queries_answer_or_explain(searcher, q):
    """Answered (a page of papers within what the query lists) or refused with one short line
    saying why; any other exception, or an answer that is not one, fails."""
    try:
        res = searcher.search(q)
    except QueryError as e:
        assert 0 < len(str(e)) <= 200 and "\n" not in str(e), str(e)
        return
    assert len(res.hits) <= min(res.listed, res.per_page)
    assert all(h.paper.id and np.isfinite(h.score) for h in res.hits)


def test_a_pasted_run_of_letters_gets_a_short_notice(searcher):
    """Ten thousand letters in one word: no paper holds it, and the notice says so naming its
    start, not the whole paste (no "did you mean" is looked for: its edits took 90 s to try,
    test_hostile_queries_answer_or_explain's duration)."""
    res = searcher.search("a" * 10_000)
    (notice,) = [n for n in res.notices if "no paper contains" in n]
    assert len(notice) < 100 and "“aaaaaaaaaa" in notice and "…”" in notice
    # and a pasted run of Chinese the dictionary cannot read, named the same way, in both languages
    (notice,) = [n for n in searcher.search("龘" * 900).notices if "no English word" in n]
    assert len(notice) < 120 and "龘龘龘…" in notice and len(notice.in_lang("zh")) < 100


def test_query_syntax_is_bounded_to_64_terms(searcher):
    """The documented limit (docs/search.md, Cost): a thousand ORed terms are refused with a
    message, 64 are answered; plain words are a description, bounded by their length."""
    with pytest.raises(QueryError, match="at most 64"):
        searcher.search(" OR ".join(f"w{i}" for i in range(1000)))
    with pytest.raises(QueryError, match="at most 64"):
        searcher.search(" ".join(["ti:a*"] * 65))
    searcher.search(" OR ".join(f"w{i}" for i in range(64)))
    searcher.search(" ".join(f"w{i}" for i in range(200)))


def test_similar_papers(searcher):
    sims = searcher.similar("2505.13738", k=5)
    assert len(sims) == 5 and "2505.13738" not in [h.paper.id for h in sims]
    with pytest.raises(KeyError):
        searcher.similar("0000.00000")


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=3000),
    st.lists(st.booleans(), min_size=1, max_size=3000),
    st.sampled_from([1, 5, 40, 100]),
)
def test_the_candidates_above_a_sampled_floor_hold_the_best_k_and_their_ties(scores, keep, k):
    """rank.above and rank.phrase_candidates give what sorting out every candidate gives."""
    n = min(len(scores), len(keep))
    acc = np.array(scores[:n], dtype=np.float32) / 3
    mask = np.array(keep[:n]) & (acc > 0)
    cand = rank.above(acc, mask, k)
    assert np.all(np.diff(cand) > 0) and mask[cand].all()
    assert np.array_equal(rank.top_k(acc, cand, k), rank.top_k(acc, np.flatnonzero(mask), k))
    every = np.flatnonzero(mask)
    with_ties = np.flatnonzero(mask & (acc >= np.sort(acc[every])[-k])) if len(every) >= k else every
    assert set(with_ties) <= set(cand)


def test_words_whose_first_papers_are_far_in_meaning_earn_less_trust():
    """rank.words_far: the words' first papers' mean cosine in the lowest FAR_WORDS of the dense
    pool's range (a paper without a vector counts as the deepest); near ones, none, or a pool
    of one paper: not far."""
    pool = np.linspace(0.6, 0.4, 200, dtype=np.float32)  # best first
    assert rank.words_far(np.array([0.42, 0.43, np.nan], dtype=np.float32), pool)
    assert not rank.words_far(np.array([0.58, 0.55, 0.5], dtype=np.float32), pool)
    assert not rank.words_far(np.array([0.41, 0.5, 0.6], dtype=np.float32), pool)  # mean 0.503: over a quarter
    assert not rank.words_far(np.zeros(0, dtype=np.float32), pool)
    assert not rank.words_far(np.array([0.1], dtype=np.float32), pool[:1])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=300), st.sampled_from([1, 10, 100, 1000]))
def test_an_order_cut_to_k_is_the_whole_orders_prefix(scores, k):
    """rank.best_first (a relevance order as deep as asked) gives the first k of the whole
    pool sorted by score, ties to the lower doc, whatever the ties at the cut."""
    s = np.array(scores, dtype=np.float32)
    cand = np.arange(len(s))[::-1] * 3  # distinct documents, not in doc order
    assert rank.best_first(cand, s, k).tolist() == cand[np.lexsort((cand, -s))][:k].tolist()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(0, 400), max_size=300, unique=True), st.lists(st.integers(0, 400), max_size=40, unique=True)
)
def test_a_documents_place_is_where_it_stands_whichever_way_it_is_found(arr, docs):
    """rank._places compares a page's few documents with every entry, or sorts for more: the
    same places either way."""
    a, d = np.array(arr, dtype=np.int64), np.array(docs, dtype=np.int64)
    want = [arr.index(x) if x in arr else -1 for x in docs]
    assert rank._places(a, d).tolist() == want
    saved = rank.PLACES_COMPARED
    try:
        rank.PLACES_COMPARED = -1  # every call sorts
        assert rank._places(a, d).tolist() == want
    finally:
        rank.PLACES_COMPARED = saved


def test_phrase_candidates_are_the_best_and_argpartitions_choice_at_a_tie(monkeypatch):
    monkeypatch.setattr(rank, "PHRASE_DEPTH", 50)
    rng = np.random.default_rng(3)
    acc = rng.random(40_000).astype(np.float32) + 0.01
    mask = rng.random(40_000) < 0.7
    got, exact = rank.phrase_candidates(acc, mask)
    every = np.flatnonzero(mask)
    assert exact and got.tolist() == sorted(every[np.argsort(-acc[every])[:50]].tolist())
    acc[:] = 1.0  # every candidate tied: argpartition over all of them decides, as before
    got, exact = rank.phrase_candidates(acc, mask)
    assert not exact and got.tolist() == sorted(every[np.argpartition(-acc[every], 49)[:50]].tolist())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 200), min_size=1, max_size=400), st.randoms(use_true_random=False))
def test_the_words_best_read_from_the_phrase_candidates_are_the_same(scores, rnd):
    """Words.best read from `top` (the phrase candidates with no tie left out, their scores then
    raised by the bonus) gives what the best of every candidate gives, at any depth."""
    depth = 50
    acc = np.array(scores * rnd.randint(1, 8), dtype=np.float32) / 3  # a few hundred papers or more
    A = np.arange(len(acc)) % 5 != 0
    with patch.object(rank, "PHRASE_DEPTH", depth):
        top, exact = rank.phrase_candidates(acc, A & (acc > 0))
        acc[top] *= 1 + np.array([rnd.randint(0, 3) for _ in top], dtype=np.float32) / 4
        for k in (1, 7, depth, depth + 9):
            got = rank.Words(A, A, acc, [], True, top=top if exact else None).best(k)
            want = rank.Words(A, A, acc, [], True).best(k)
            assert got[0].tolist() == want[0].tolist() and got[1] == want[1]


@given(st.lists(st.integers(0, 300), max_size=60, unique=True), st.lists(st.integers(0, 300), max_size=20, unique=True))
def test_the_fused_pool_is_both_pools_sorted_each_paper_once(a, b):
    got = rank.union(np.array(a, dtype=np.intp), np.array(b, dtype=np.int64))
    assert got.dtype == np.int64 and got.tolist() == sorted(set(a) | set(b))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 999), max_size=40, unique=True), max_size=6),
    st.lists(st.integers(0, 999), min_size=1, max_size=80, unique=True),
    st.sampled_from([1000, 10**6]),
)
def test_the_phrase_bonus_counts_each_candidates_pairs_either_way(papers, cand, size):
    """rank.pair_counts over every paper (many pairs' papers) or among the candidates (few):
    for each candidate, how many of the pairs stand together in it; a pair with a word no
    paper holds, in none."""

    class Snapshot:  # pair k is ("w<k>", "x"), in papers[k]
        n = size

        def term(self, s: str) -> int | None:
            return None if s == "unknown" else -1 if s == "x" else int(s[1:])

        def pair_docs(self, a: int, b: int) -> np.ndarray:
            return np.array(sorted(papers[a]), dtype=np.int32)

    ix = Snapshot()
    pairs = [(f"w{k}", "x") for k in range(len(papers))] + [("unknown", "x")]
    got = rank.pair_counts(ix, np.array(sorted(cand)), pairs)
    assert got.tolist() == [float(sum(c in p for p in papers)) for c in sorted(cand)]


def test_rrf_arithmetic():
    scores = rrf([[1, 2, 3], [3, 1]], k=60)
    assert scores[1] == pytest.approx(1 / 61 + 1 / 62)
    assert scores[2] == pytest.approx(1 / 62)
    assert scores[3] == pytest.approx(1 / 63 + 1 / 61)
    weighted = rrf([[1], [2]], weights=[2.0, 1.0], k=0)
    assert weighted == {1: 2.0, 2: 1.0}


def test_highlight_marks_stemmed_matches_and_escapes():
    segs = snippet("Decaying weights <script>alert(1)</script> decay", stems("decay"))
    html = marked_html(segs)
    assert "<mark>Decaying</mark>" in html and "<mark>decay</mark>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_a_compound_asked_for_joined_is_marked_whole_where_it_is_hyphenated():
    """ "oversmoothing" finds "Over-smoothing" (masks.other_spelling): the reader sees the whole
    word marked, not "smoothing" alone; a hyphenated pair nobody asked for keeps its own marks."""
    asked = stems("oversmoothing", "smoothing")
    assert mark("Avoiding Over-smoothing in GNNs", asked) == [
        ("Avoiding ", False), ("Over-smoothing", True), (" in GNNs", False)
    ]  # fmt: skip
    assert mark("label-smoothing and smoothing", asked) == [
        ("label-", False), ("smoothing", True), (" and ", False), ("smoothing", True)
    ]  # fmt: skip
    assert marked_html(snippet("x " * 300 + "the over-smoothing issue", asked, 60)).count("<mark>") == 1


def test_a_greek_letter_is_marked_when_its_name_is_asked_for():
    """ "beta-VAE" finds "β-VAE" (text.greek_names); the reader sees the letter marked."""
    assert mark("Disentangling with β-VAE", stems("beta", "vae")) == [
        ("Disentangling with ", False), ("β", True), ("-", False), ("VAE", True)
    ]  # fmt: skip


_PIECES = ["decay", "Decaying", "weights", "s", "'s", "é", "模型", "_x", "x-y", " ", ". "]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=120), st.sampled_from([8, 30, 320]))
def test_a_snippets_window_is_marked_as_the_window_alone_would_be(words, width):
    """highlight.snippet marks its window from the whole text's matches when it can: the
    window's runs are what mark() gives for the window by itself (a one-letter word stems to
    "", which the query's "'s" puts among the stems)."""
    text = "".join(w + ("" if i % 4 else " ") for i, w in enumerate(words))  # words run together too
    query = stems("decay", "weights") | {""}
    # and windows cutting a word at their start or their end, where the cut part is a match
    cut = ["q" * 10 + "decay" + "-" * 35 + "decay-" * 60, "decay-" * 5 + "-" * 285 + "decayqqqq" + "-" * 100]
    for t, w in [(text, width), (cut[0], 309), (cut[1], 320)]:
        segs = [x for x in snippet(t, query, w) if x != ("…", False)]
        assert segs == mark("".join(t for t, _ in segs), query)


def test_the_result_carries_its_plan_and_the_words_worth_highlighting(searcher):
    res = searcher.search("diffusion models for image editing", per_page=5)
    assert res.plan is not None and res.plan.q == "diffusion models for image editing"
    assert [c.label for c in res.plan.concepts] == ["diffusion", "models", "image", "editing"]
    # stopwords and the store's everyday words out ("model" is in most papers), the rest kept
    assert stem("edit") in res.highlight and not res.highlight & stems("for", "models")
    marked = {stem(t.lower()) for h in res.hits for t, on in [*h.title_marked, *h.snippet] if on}
    assert marked and marked <= res.highlight


def test_snippet_windows_long_abstracts():
    text = "filler " * 200 + "the quokka result " + "tail " * 200
    segs = snippet(text, stems("quokka"), width=100)
    flat = "".join(s for s, _ in segs)
    assert flat.startswith("…") and flat.endswith("…") and "quokka" in flat and len(flat) < 130


def test_snippet_of_a_huge_abstract_is_bounded():
    text = "lorem ipsum " * 500_000  # 6 MB
    segs = snippet(text, stems("lorem", "ipsum"))
    assert len("".join(s for s, _ in segs)) < 400


def test_similar_without_vectors_falls_back_to_title_words(empty_store):
    from paperdex.paper import Paper
    from paperdex.search import Searcher

    empty_store.upsert(
        [
            Paper(id="a", title="Diffusion models for protein design"),
            Paper(id="b", title="Protein structure design with diffusion"),
            Paper(id="c", title="Robot grasping"),
        ]
    )
    sims = Searcher(empty_store).similar("a", k=5)
    assert [h.paper.id for h in sims] == ["b"]


def test_readers_see_a_write_once_it_is_published(empty_store):
    from paperdex.paper import Paper
    from paperdex.search import Searcher

    s = Searcher(empty_store)
    empty_store.upsert([Paper(id="a", title="Quokka detection")])
    publish(empty_store)
    assert ids(s.search("quokka")) == ["a"]
    empty_store.upsert([Paper(id="b", title="Quokka tracking")])
    publish(empty_store)
    assert sorted(ids(s.search("quokka"))) == ["a", "b"]
    empty_store.delete("a")
    publish(empty_store)
    assert ids(s.search("quokka")) == ["b"]


def test_an_author_written_in_characters_is_found_as_written(empty_store):
    """A paper from a Chinese source names its authors in characters: au:李四 looked for the
    pinyin spellings alone ("Si Li", "Li Si") and found 0 of them."""
    from paperdex.paper import Paper
    from paperdex.search import Searcher

    empty_store.upsert(
        [
            Paper(id="a", title="大语言模型的推理能力研究", authors=["张三", "李四"]),
            Paper(id="b", title="Weight decay", authors=["Si Li"]),
            Paper(id="c", title="Other", authors=["王五"]),
        ]
    )
    publish(empty_store)
    s = Searcher(empty_store)
    assert sorted(ids(s.search("au:李四", mode="lexical"))) == ["a", "b"]  # as written, and its pinyin
    assert ids(s.search('au:"张 三"', mode="lexical")) == ["a"]
    res = s.search("au:王五", mode="lexical")
    assert ids(res) == ["c"] and any("王五" in n for n in res.notices)


# --- properties of the contract -----------------------------------------------------------

WORDS = ["learning", "model", "robot", "diffusion", "language", "weight", "decay", "graph", "video", "agents"]
ZH = ["扩散模型", "机器人", "语言模型", "强化学习", "权重衰减"]
queries = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
PROPS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@PROPS
@given(q=queries, mode=st.sampled_from(["hybrid", "lexical", "dense"]), size=st.sampled_from([3, 7]))
def test_property_pages_concatenate_to_one_page(searcher, q, mode, size):
    n = 4
    joined = sum((ids(searcher.search(q, mode=mode, per_page=size, page=p, facets=False)) for p in range(1, n + 1)), [])
    assert joined == ids(searcher.search(q, mode=mode, per_page=size * n, facets=False))


@PROPS
@given(q=queries, mode=st.sampled_from(["hybrid", "lexical", "dense"]))
def test_property_total_is_the_matched_set_and_newest_sorts_it(searcher, q, mode):
    new, res = everything(searcher, q, mode=mode, sort="newest")
    assert res.total == len(new) == len(set(new))
    rel, r2 = everything(searcher, q, mode=mode)
    assert r2.total == res.total and len(rel) == len(set(rel)) == r2.listed  # R's best; M may rank lower


@PROPS
@given(
    q=queries, mode=st.sampled_from(["hybrid", "lexical", "dense"]), cat=st.sampled_from(["cs.AI", "cs.CV", "cs.RO"])
)
def test_property_a_filter_only_narrows_and_facets_count_their_click(searcher, q, mode, cat):
    whole, res = everything(searcher, q, mode=mode, sort="newest")
    narrowed, r2 = everything(searcher, q, mode=mode, sort="newest", filters=Filters(category=cat))
    in_cat = [i for i in whole if cat in searcher.store.get(i).categories]
    assert sorted(narrowed) == sorted(in_cat) and r2.total == len(in_cat)
    counted = dict(searcher.search(q, mode=mode).facets["category"])
    assert counted.get(cat, 0) == r2.total or r2.total == 0 and cat not in counted


@PROPS
@given(w=st.sampled_from(ZH))
def test_property_a_chinese_word_finds_papers_wherever_it_stands(searcher, w):
    if searcher.search(w, mode="lexical").total == 0:
        return
    assert searcher.search(f'"{w}"', mode="lexical").total > 0
    assert searcher.search(f"ti:{w} OR abs:{w}", mode="lexical").total > 0
    assert searcher.search(f"{w} OR qwxzv", mode="lexical").total > 0


@PROPS
@given(a=st.sampled_from(WORDS), b=st.sampled_from(WORDS))
def test_property_a_word_matching_nothing_never_empties_an_or(searcher, a, b):
    before = searcher.search(f"{a} OR {b}", mode="lexical").total
    after = searcher.search(f"{a} OR {b} OR qwxzvplorb", mode="lexical").total
    assert after == before > 0


def test_a_query_splits_words_as_the_index_does(empty_store):
    """`foo_bar` is two words in a paper and in a query (text.tokens on both sides), also where
    a phrase or a prefix is checked by its words' postings (a corpus without a phrase index)."""
    from paperdex.paper import Paper
    from paperdex.search import Searcher
    from paperdex.search.corpus import StoreCorpus
    from paperdex.search.query import parse

    class ByWords(StoreCorpus):  # checks a phrase as a backend without FTS5 does: its words' candidates
        def phrase_rowids(self, t, fts, candidates):
            return [int(r) for r in candidates()]

    empty_store.upsert([Paper(id="u", title="Tuning the foo_bar coefficient", abstract="We set foo_bar by search.")])
    assert parse("foo_bar").children[0].words == ["foo", "bar"]
    for s in (Searcher(empty_store), Searcher(empty_store, corpus=ByWords(empty_store))):
        for q in ("foo_bar", 'ti:"foo_bar coefficient"', "foo_bar*"):
            assert ids(s.search(q, mode="lexical")) == ["u"], q


def test_words_standing_together_rank_first(empty_store):
    from paperdex.paper import Paper
    from paperdex.search import Searcher

    empty_store.upsert(
        [
            Paper(id="apart", title="Spatial decay for vision transformers", abstract="Each weight is a token score."),
            Paper(id="phrase", title="Optimizers revisited", abstract="We study weight decay in adaptive optimizers."),
        ]
    )
    res = Searcher(empty_store).search("weight decay", mode="lexical")
    assert [h.paper.id for h in res.hits] == ["phrase", "apart"]


def test_incremental_index_equals_a_full_rebuild(store):
    import numpy as np

    from paperdex.index import lexical
    from paperdex.paper import Paper

    store.upsert([Paper(id="n1", title="Quokka weight decay", abstract="New words here.", categories=["q-bio.PE"])])
    store.delete("2505.13738")
    publish(store)
    prev = lexical.load(store)
    store.upsert([Paper(id="n2", title="Another quokka", abstract="More text.")])
    inc, full = lexical.build(store, prev), lexical.build(store)
    for k in full.arrays:
        if k in ("vocab", "df", "bm_ptr", "bigrams") or k.endswith("_ptr"):
            continue  # the carried vocabulary may keep terms no paper has any more (ids differ)
        assert np.array_equal(np.asarray(inc.arrays[k]), np.asarray(full.arrays[k])), k

    def pairs(ix):  # the word pairs by their stems, each with its papers
        out = {}
        for a in range(len(ix.pair_ptr) - 1):
            for k in range(int(ix.pair_ptr[a]), int(ix.pair_ptr[a + 1])):
                out[(ix.vocab[a], ix.vocab[int(ix.pair_next[k])])] = ix.pairs.docs(k).tolist()
        return out

    assert pairs(inc) == pairs(full)
    a = _ids_with(store, inc, "quokka")
    assert a == _ids_with(store, full, "quokka")


def _ids_with(store, ix, q):
    from paperdex.search import Searcher
    from paperdex.search.corpus import StoreCorpus

    class Pinned(StoreCorpus):  # the store's records, searched through the given snapshot
        def lexical(self):
            return ix

    s = Searcher(store, corpus=Pinned(store))
    return [h.paper.id for h in s.search(q, mode="lexical", per_page=50).hits]


def test_close_matches_stay_near_the_best_hit():
    """e5's cosines crowd together: a hit 0.05 under its query's best is more often off topic
    than on (docs/relevance.md), however high its cosine; MiniLM has no such limit."""
    from paperdex.search import close_matches

    got = [(1, 0.916), (2, 0.87), (3, 0.867), (4, 0.86), (5, 0.858)]
    assert [r for r, _ in close_matches(got, "multilingual-e5-small", "en")] == [1, 2, 3]
    assert close_matches([(1, 0.85), (2, 0.84)], "multilingual-e5-small", "en") == []  # no close match
    mini = [(1, 0.7), (2, 0.5), (3, 0.41), (4, 0.39)]
    assert [r for r, _ in close_matches(mini, "all-MiniLM-L6-v2", "en")] == [1, 2, 3]


def test_decision_filter_separates_accepted_from_rejected_submissions(empty_store):
    """With submissions ingested, `venue:"ICLR 2025"` holds every paper submitted there;
    `decision:` (OpenReview's decision) tells accepted from rejected, and a value it does not
    know is refused with the ones it knows."""
    from paperdex.paper import Paper
    from paperdex.search import Searcher

    def paper(pid, decision, venue):
        extra = {"openreview": {"decision": decision, "presentation": None}}
        return Paper(id=pid, title=f"Quokka study {pid}", venue=venue, extra=extra, sources=["openreview"])

    empty_store.upsert(
        [
            paper("openreview:a", "accepted", "ICLR 2025 Poster"),
            paper("openreview:r", "rejected", "Submitted to ICLR 2025"),
            paper("openreview:w", "withdrawn", "ICLR 2025 Conference Withdrawn Submission"),
        ]
    )
    s = Searcher(empty_store)
    assert sorted(ids(s.search('venue:"ICLR 2025"', per_page=10))) == ["openreview:a", "openreview:r", "openreview:w"]
    assert ids(s.search('venue:"ICLR 2025" decision:accepted', per_page=10)) == ["openreview:a"]
    assert ids(s.search("quokka decision:rejected", per_page=10)) == ["openreview:r"]
    assert sorted(ids(s.search('venue:"ICLR 2025" -decision:accepted', per_page=10))) == [
        "openreview:r",
        "openreview:w",
    ]
    with pytest.raises(QueryError, match="decision: expects one of accepted"):
        s.search("decision:maybe")


def test_feedback_reranks_a_question_and_changes_nothing_it_matches(searcher, monkeypatch):
    """Dense feedback (an English question or claim: the query vector moved toward the first
    order's best papers) re-ranks, and only that: what matches (total, facets) is the first
    embedding's, and pages stay slices of one order."""
    from paperdex.search import engine

    q = "how do diffusion models generate images from text prompts"
    assert engine.plan(q).query_class in engine.FEEDBACK
    with_fb = searcher.search(q, per_page=20)
    pages = [h.paper.id for pg in (1, 2) for h in searcher.search(q, page=pg, per_page=10, facets=False).hits]
    assert pages == [h.paper.id for h in with_fb.hits]
    monkeypatch.setattr(engine, "FEEDBACK", set())
    without = searcher.search(q, per_page=20)
    assert (with_fb.total, with_fb.facets) == (without.total, without.facets)
    assert [h.paper.id for h in with_fb.hits] != [h.paper.id for h in without.hits]  # it does re-rank


def test_a_sentence_pasted_from_a_paper_is_ranked_by_its_words(searcher, ro_store):
    """A long sentence that stands nearly word for word in one abstract was pasted from that
    paper: hybrid ranks it as its words do (the paper first, the dense side not ranking
    against them); a question of as many words, which no abstract holds, keeps the dense side."""
    import re

    pasted = 0
    for p in ro_store.iter_papers():
        sentence = next((x for x in re.split(r"(?<=\.)\s+", p.abstract) if 18 <= len(x.split()) <= 40), None)
        if sentence is None or "$" in sentence:
            continue
        hybrid = searcher.search(sentence, per_page=10, facets=False, literal=True)
        lexical = searcher.search(sentence, mode="lexical", per_page=10, facets=False, literal=True)
        assert hybrid.hits[0].paper.id == p.id
        assert [h.paper.id for h in hybrid.hits] == [h.paper.id for h in lexical.hits]
        pasted += 1
        if pasted == 8:
            break
    assert pasted == 8
    q = "how do robots learn to grasp unseen objects from a few demonstrations in cluttered scenes with cameras"
    hybrid = searcher.search(q, per_page=10, facets=False, literal=True)
    lexical = searcher.search(q, mode="lexical", per_page=10, facets=False, literal=True)
    assert [h.paper.id for h in hybrid.hits] != [h.paper.id for h in lexical.hits]


def test_fields_given_by_name_replace_a_requests_own(searcher):
    from paperdex.search import Filters, Request

    req = Request(q="diffusion", mode="hybrid", per_page=20)
    got = searcher.search(req, mode="lexical", per_page=3, filters=Filters(category="cs.CV"))
    assert got.mode == "lexical" and len(got.hits) == 3
    assert all("cs.CV" in h.paper.categories for h in got.hits)


def test_the_same_words_are_encoded_once(ro_store):
    """Page 2, a facet, a sort and a filter of the same words reuse the query's vector; other
    words are encoded (docs/performance.md: the encoder costs more than the engine)."""
    from paperdex.index.embed import get_embedder
    from paperdex.search import Searcher

    real = get_embedder(ro_store.model)

    class Counting:
        name, dim = real.name, real.dim

        def __init__(self):
            self.read: list[str] = []

        def embed_docs(self, texts):
            return real.embed_docs(texts)

        def embed_query(self, text):
            self.read.append(text)
            return real.embed_query(text)

    emb = Counting()
    s = Searcher(ro_store, embedder=emb)
    first = s.search("weight decay regularization", facets=False)
    assert emb.read == ["weight decay regularization"] and first.mode == "hybrid"
    s.search("weight decay regularization", page=2)
    s.search("weight  decay regularization", filters=Filters(category="cs.LG"))
    s.search("weight decay regularization cat:cs.LG", sort="newest")
    assert emb.read == ["weight decay regularization"]
    assert ids(s.search("weight decay regularization", facets=False)) == ids(first)
    s.search("Weight decay schedules")
    assert emb.read == ["weight decay regularization", "Weight decay schedules"]


@pytest.mark.parametrize(("joined", "apart"), [("finetuning", "fine-tuning"), ("pretraining", "pre-training")])
def test_a_compound_finds_the_same_papers_however_it_is_spelled(searcher, joined, apart):
    """Papers write "fine-tuning" and "finetuning" for one thing: either spelling typed finds,
    and counts, the papers of both."""
    got_joined, res_joined = everything(searcher, joined, mode="lexical", sort="newest")
    got_apart, res_apart = everything(searcher, apart, mode="lexical", sort="newest")
    assert set(got_joined) == set(got_apart) and res_joined.total == res_apart.total
    texts = [(p.title + " " + p.abstract).lower() for p in map(searcher.store.get, got_joined)]
    assert any(joined[:7] in t for t in texts) and any(apart[:8] in t for t in texts)


def test_a_chinese_word_finds_its_translation_however_papers_spell_it(searcher):
    """微调 reads as "fine tuning": it finds the papers that write "finetuning" too."""
    got_zh, res_zh = everything(searcher, "微调", mode="lexical", sort="newest")
    got_en, _ = everything(searcher, "fine-tuning", mode="lexical", sort="newest")
    assert set(got_zh) == set(got_en) and res_zh.total == len(got_en)
    assert any("finetun" in (p.title + " " + p.abstract).lower() for p in map(searcher.store.get, got_zh))


def test_a_word_keeps_its_papers_when_papers_rarely_write_it_apart(empty_store):
    """ "over-smoothing" joins "oversmoothing" because papers write it so; "net work", once among
    many "network"s, is not read as "network"; a paper holding the typed spelling is not pushed
    under one found by the other."""
    from paperdex.paper import Paper
    from paperdex.search import Searcher

    network = [Paper(id=f"n{i}", title=f"A network for task {i}", abstract="A neural network.") for i in range(40)]
    empty_store.upsert(
        [
            *network,
            Paper(id="apart", title="Over-smoothing in graph models", abstract="Graph models suffer over-smoothing."),
            Paper(id="apart2", title="Why over-smoothing happens", abstract="A study of over-smoothing."),
            Paper(id="joined", title="Oversmoothing in graph models", abstract="Graph models suffer oversmoothing."),
            Paper(id="joined2", title="Oversmoothing, measured", abstract="We measure oversmoothing."),
            Paper(id="net", title="Fishing gear", abstract="The net work of fishermen in the harbour."),
        ]
    )
    s = Searcher(empty_store)
    assert set(ids(s.search("oversmoothing", mode="lexical"))) == {"apart", "apart2", "joined", "joined2"}
    assert set(ids(s.search("over-smoothing", mode="lexical"))) == {"apart", "apart2", "joined", "joined2"}
    assert ids(s.search("oversmoothing graph", mode="lexical"))[0] == "joined"
    found = set(ids(s.search("network", mode="lexical", per_page=100)))
    assert "net" not in found and len(found) == 40


def test_a_typo_gets_a_did_you_mean_and_a_word_papers_use_does_not(searcher):
    """A rare typed word one letter from a common one offers the fixed query, never searches it
    unasked; the fix is a word papers write ("semantation" shares a stem with "semantic", one
    letter from "segmantation", and no paper writes it)."""

    def offered(q):
        return [n.params["query"] for n in searcher.search(q).notices if n.code == "did_you_mean"]

    assert offered("tranformer attention") == ["transformer attention"]
    assert offered("Segmantation") == ["segmentation"]
    assert offered("transformer attention") == [] and offered("qwxzv") == []
    assert searcher.search("tranformer").total == 0  # offered, not searched


@pytest.mark.parametrize(("typed", "written"), [("generalization", "generali"), ("generation", "generat")])
def test_generalization_and_generation_are_two_words(searcher, typed, written):
    """Porter stems both "generalization" and "generation" to "gener": on the 63k corpus
    "generalization" matched 33,641 papers, every generation paper among them, and listed
    "Generation is Required ..." first. text._Stemmer keeps them apart: every paper listed
    for one writes it, and the two lists differ."""
    got, res = everything(searcher, typed, mode="lexical", sort="newest")
    assert got and res.total == len(got)
    texts = [(p.title + " " + p.abstract).lower() for p in map(searcher.store.get, got)]
    assert all(written in t for t in texts)


def test_a_prefix_finds_every_word_it_begins_or_is_refused(searcher, monkeypatch):
    """A prefix past MAX_PREFIX_TERMS words was cut to its commonest, silently: `co*` undercounted
    the 63k store by the papers of 2,187 rarer words. Within the limit it is every such word;
    past it, a message (docs/search.md, "Cost")."""
    from paperdex.search import masks

    ix = searcher.lex
    words = ix.prefix_terms("co", 10**6)
    monkeypatch.setattr(masks, "MAX_PREFIX_TERMS", len(words))
    want = set()
    for t in words:
        want |= {int(r) for r in ix.rowids[ix.term_docs(int(t))]}
    got = searcher.search("co*", mode="lexical", per_page=1, facets=False)
    assert got.total == len(want)
    monkeypatch.setattr(masks, "MAX_PREFIX_TERMS", len(words) - 1)
    with pytest.raises(QueryError, match="add a letter"):
        searcher.search("co*", mode="lexical", per_page=1)


@pytest.mark.parametrize("q", ["😀", "\u200b", "—"])
def test_a_query_with_no_word_says_so(searcher, q):
    """An emoji or a zero-width space listed every paper under "only very common words"."""
    res = searcher.search(q, per_page=1)
    assert any("holds no word to search" in n for n in res.notices)
    assert not any("common words" in n for n in res.notices)
    with pytest.raises(QueryError, match="at least two letters"):
        searcher.search("*")  # every paper, silently


def test_a_prefix_no_word_begins_is_set_aside_as_a_word_no_paper_holds(searcher):
    """`diffusion xqzpl*` found no paper and said "no word begins with “xqzpl”" and "no paper here
    meets the query's conditions": it lists what `diffusion xqzpl` lists, the prefix set aside and
    said so. Under a field, or alone, it matches nothing and says only that no word begins with it."""
    plain = searcher.search("diffusion xqzpl", per_page=20)
    res = searcher.search("diffusion xqzpl*", per_page=20)
    assert res.total == plain.total > 0 and ids(res) == ids(plain)
    assert "no word begins with “xqzpl”; showing results without" in res.notices
    assert not any("conditions" in n or "no paper contains" in n for n in res.notices)
    for q in ("xqzpl*", "ti:xqzpl*", "diffusion ti:xqzpl*", "xqzpl* cat:cs.CV"):
        res = searcher.search(q)
        assert res.total == 0 and res.notices == ["no word begins with “xqzpl”"], (q, res.notices)


def test_an_id_the_store_lacks_gets_one_notice_that_says_what_it_is(searcher):
    """`id:nope` said "nope is not in this store" and "no paper here meets the query's conditions":
    one notice, that it is not an arXiv id (nothing `ingest arxiv` could add); an arXiv id says
    how to add it, alone too; a category that leaves out an id the store has is the conditions'."""
    assert searcher.search("id:nope diffusion").notices == [
        "“nope” is not an arXiv id, and no paper in this store has it as its id"
    ]
    for q in ("id:2599.99999", "2599.99999 2599.99998"):
        notices = searcher.search(q).notices
        assert notices and all("ingest arxiv --id 2599.9999" in n for n in notices), notices
    res = searcher.search("id:2505.13738 cat:math.AG")
    assert res.total == 0 and res.notices == [
        "no paper here meets the query's conditions (its fields, prefixes, ids, categories, dates or filters)"
    ]


def test_a_query_that_is_a_stored_papers_id_finds_it(store):
    """Before: `zh-walk-1` or `mypaper` (ids of papers ingested from JSON Lines or BibTeX) gave
    "0 papers match" where `id:zh-walk-1` found the paper and a pasted arXiv id finds its paper.
    Now a one-token query no paper's text holds that is a stored id lists that paper, saying so;
    a word papers hold that is also an id (`transformer`) is searched as a word, with a notice."""
    from paperdex.paper import Paper
    from paperdex.search import Searcher

    words = Searcher(store).search("transformer", per_page=20)
    store.upsert(
        [
            Paper(id="zh-walk-1", title="随机游走的一篇论文", authors=["A B"]),
            Paper(id="mypaper", title="Notes on gardening", authors=["A B"]),
            Paper(id="transformer", title="Notes on pruning roses", authors=["A B"]),
        ]
    )
    publish(store)
    s = Searcher(store)
    for q in ("zh-walk-1", "mypaper", " mypaper "):
        res = s.search(q, mode="lexical")
        assert (ids(res), res.total) == ([q.strip()], 1), q
        assert res.notices[0] == f"no paper's text holds {q.strip()!r}; it is the id of the paper listed"
        assert s.search(q).hits[0].paper.id == q.strip()  # hybrid too
    got = s.search("transformer", per_page=20)
    assert (ids(got), got.total) == (ids(words), words.total) and "transformer" not in ids(got)
    assert "'transformer' is also a paper's id: search id:transformer for that paper" in got.notices
    two = s.search("gardening mypaper", mode="lexical")  # two words: no id
    assert two.mode == "lexical" and not [n for n in two.notices if "id" in n]
