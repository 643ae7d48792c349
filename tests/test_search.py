import pytest

from paperdex.query import QueryError
from paperdex.search import Filters, _stems, marked_html, rrf, snippet


def ids(res):
    return [h.paper.id for h in res.hits]


def test_title_phrase_and_category(searcher):
    res = searcher.search('ti:"weight decay" cat:cs.LG', per_page=50)
    assert res.hits, "the fixture has three such papers"
    for h in res.hits:
        assert "weight decay" in h.paper.title.lower()
        assert "cs.LG" in h.paper.categories
    assert set(ids(res)) == {"2504.17160", "2505.13738", "2506.14562"}


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
    both = [h for h in res.hits if h.lexical_rank and h.dense_rank]
    for h in both:
        assert h.score == pytest.approx(1 / (60 + h.lexical_rank) + 1 / (60 + h.dense_rank))
    assert "<mark>" in top.to_dict()["title_html"] or "<mark>" in top.to_dict()["snippet_html"]


def test_dense_finds_papers_without_shared_words(searcher):
    res = searcher.search("robots grasping objects with a gripper", mode="dense", per_page=10)
    assert sum("cs.RO" in h.paper.categories for h in res.hits) >= 5


def test_lexical_only_and_pagination(searcher):
    p1 = searcher.search("learning", mode="lexical", per_page=5, page=1)
    p2 = searcher.search("learning", mode="lexical", per_page=5, page=2)
    assert p1.total > 10 and p1.pages == -(-p1.total // 5)
    assert not set(ids(p1)) & set(ids(p2))
    assert [h.lexical_rank for h in p2.hits] == [6, 7, 8, 9, 10]


def test_newest_sort_and_filters(searcher):
    res = searcher.search("model", sort="newest", per_page=30, filters=Filters(category="cs.CV", date_from="2025-06"))
    dates = [h.paper.date for h in res.hits]
    assert dates == sorted(dates, reverse=True)
    assert all(d >= "2025-06" for d in dates)
    assert all("cs.CV" in h.paper.categories for h in res.hits)


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


def test_facets_count_categories_and_years(searcher):
    res = searcher.search("diffusion", mode="lexical")
    cats = dict(res.facets["category"])
    assert cats and all(n > 0 for n in cats.values())
    assert sum(n for _, n in res.facets["year"]) == res.total


@pytest.mark.parametrize(
    "q",
    ['title:x OR abstract:"y" NEAR(a b)', "x\x00y", "🙂🚀", "扩散模型 图像生成", "a" * 10_000, "* OR *", '""'],
)
def test_hostile_queries_never_raise_sqlite_errors(searcher, q):
    try:
        searcher.search(q)
    except QueryError:
        pass  # a clear message is fine; an sqlite3 error is not


def test_similar_papers(searcher):
    sims = searcher.similar("2505.13738", k=5)
    assert len(sims) == 5 and "2505.13738" not in [h.paper.id for h in sims]
    with pytest.raises(KeyError):
        searcher.similar("0000.00000")


def test_rrf_arithmetic():
    scores = rrf([[1, 2, 3], [3, 1]], k=60)
    assert scores[1] == pytest.approx(1 / 61 + 1 / 62)
    assert scores[2] == pytest.approx(1 / 62)
    assert scores[3] == pytest.approx(1 / 63 + 1 / 61)
    weighted = rrf([[1], [2]], weights=[2.0, 1.0], k=0)
    assert weighted == {1: 2.0, 2: 1.0}


def test_highlight_marks_stemmed_matches_and_escapes():
    segs = snippet("Decaying weights <script>alert(1)</script> decay", _stems(("decay",)))
    html = marked_html(segs)
    assert "<mark>Decaying</mark>" in html and "<mark>decay</mark>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_snippet_windows_long_abstracts():
    text = "filler " * 200 + "the quokka result " + "tail " * 200
    segs = snippet(text, _stems(("quokka",)), width=100)
    flat = "".join(s for s, _ in segs)
    assert flat.startswith("…") and flat.endswith("…") and "quokka" in flat and len(flat) < 130


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
