"""One behavioural suite for every backend: the search contract (docs/search.md) on the 314
fixture papers with their all-MiniLM-L6-v2 vectors, run against the embedded store, against
Milvus Lite (a file in a temporary folder, its server stopped at teardown) and against a Milvus
standalone server, a process of its own that other processes share (tests/backends/conftest.py):
the server refuses expressions Lite accepts (an infix LIKE), so Lite alone does not show that
the backend works where it is meant to be deployed.

Where Milvus cannot express a part of a query, the backend checks it in Python or refuses
with a message (docs/scale-out.md); these tests hold both backends to the same answers."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from paperdex.backends import Backend, EmbeddedBackend
from paperdex.index.publish import publish
from paperdex.paper import index_text
from paperdex.search import MAX_WINDOW, MIN_COSINE, RELAX_BELOW, Filters
from paperdex.search.query import QueryError
from paperdex.store import Store
from paperdex.text import STOPWORDS, stem, tokens

from .milvus_server import MARK

SERVER = pytest.param("milvus_server", marks=MARK)  # its tests run on one worker (milvus_server.GROUP)
BACKENDS = ["embedded", "milvus", SERVER]
MILVUS = ["milvus", SERVER]


@pytest.fixture(scope="session")
def milvus_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("milvus")


@pytest.fixture(scope="session")
def milvus_ro(built_store_dir, milvus_dir):
    from paperdex.backends.migrate import migrate_store
    from paperdex.backends.milvus import MilvusBackend

    b = MilvusBackend(milvus_dir / "papers.db")
    with Store(built_store_dir) as s:
        migrate_store(s, b)
    yield b
    b.close()
    from milvus_lite.server_manager import server_manager_instance

    assert str((milvus_dir / "papers.db").absolute()) not in server_manager_instance._servers


@pytest.fixture(scope="session")
def milvus_server_ro(built_store_dir, milvus_server, tmp_path_factory):
    """The fixture store copied into a collection on the session's Milvus server (its lexical
    snapshot published in a temporary folder, not under ~/.cache)."""
    from paperdex.backends.migrate import migrate_store
    from paperdex.backends.milvus import MilvusBackend

    b = MilvusBackend(milvus_server.uri, collection="contract", snapshots=str(tmp_path_factory.mktemp("snapshots")))
    with Store(built_store_dir) as s:
        migrate_store(s, b)
    yield b
    b.close()


@pytest.fixture(scope="session")
def milvus_server_snapshots(tmp_path_factory) -> Path:
    """The snapshot folder of the server's writable collection (`writable`)."""
    return tmp_path_factory.mktemp("server-snapshots")


@pytest.fixture(scope="session")
def embedded_ro(built_store_dir):
    b = EmbeddedBackend(built_store_dir)
    yield b
    b.close()


@pytest.fixture(params=BACKENDS)
def backend(request) -> Backend:
    """Read-only by convention: tests that write use `writable`."""
    return request.getfixturevalue(f"{request.param}_ro")


_N = iter(range(10**6))
SUBSET = 60  # papers in a writable copy (Milvus copies are made per test)


@pytest.fixture(params=BACKENDS)
def writable(request, built_store_dir, milvus_dir, milvus_ro, tmp_path):
    """A private writable backend holding the first SUBSET fixture papers."""
    if request.param == "embedded":
        d = tmp_path / "copy"
        shutil.copytree(built_store_dir, d)
        s = Store(d)
        keep = [r[0] for r in s.conn.execute("SELECT id FROM papers ORDER BY rowid LIMIT ?", (SUBSET,))]
        for pid in [r[0] for r in s.conn.execute("SELECT id FROM papers")]:
            if pid not in keep:
                s.delete(pid)
        publish(s)
        b = EmbeddedBackend(s)
    else:
        from paperdex.backends.migrate import migrate_store
        from paperdex.backends.milvus import MilvusBackend

        if request.param == "milvus":
            b = MilvusBackend(milvus_dir / "papers.db", collection=f"w{next(_N)}")
            with Store(built_store_dir) as s:
                migrate_store(s, b, limit=SUBSET)
        else:
            # One collection for every test, emptied and copied again: making and loading one on
            # the server costs about 4 s (a Lite file, 0.3 s), emptying and copying it 0.5 s.
            server = request.getfixturevalue("milvus_server")
            snaps = request.getfixturevalue("milvus_server_snapshots")
            b = MilvusBackend(server.uri, collection="writable", snapshots=str(snaps))
            b.delete_rows(list(b.copy_states()))
            with Store(built_store_dir) as s:
                migrate_store(s, b, restart=True, limit=SUBSET)
            assert b.count() == SUBSET
    yield b
    b.close()


def ids(res) -> list[str]:
    return [h.paper.id for h in res.hits]


def everything(b, q, sort="newest", **kw) -> tuple[list[str], object]:
    """Every paper a query lists, page by page; by default Newest, which lists the matched set
    (the relevance order ranks more: docs/search.md)."""
    kw["sort"] = sort
    out, page = [], 1
    while True:
        res = b.search(q, page=page, per_page=100, facets=False, **kw)
        out.extend(ids(res))
        if page >= res.pages:
            return out, res
        page += 1


def stems_of(text: str) -> set[str]:
    return {stem(w) for w in tokens(text)}


def text_of(p) -> str:
    """A paper's words as the index reads them (LaTeX markup resolved)."""
    return " ".join([index_text(p.title), index_text(p.abstract), " ".join(p.authors)])


# --- what matches --------------------------------------------------------------------------


def test_free_words_are_all_required_when_few(backend):
    got, res = everything(backend, "weight decay", mode="lexical")
    assert res.total == len(got) >= 3
    for pid in got:
        s = stems_of(text_of(backend.get(pid)))
        assert {"weight", "decai"} <= s


def test_three_to_five_words_need_all_but_one_when_few_papers_hold_all(backend):
    got, _ = everything(backend, "robot grasping manipulation", mode="lexical")
    want = [stem(w) for w in ("robot", "grasping", "manipulation")]
    held = [sum(w in stems_of(text_of(backend.get(pid))) for w in want) for pid in got]
    assert all(n >= 2 for n in held) and held.count(3) < RELAX_BELOW and held.count(2) > 0


def test_three_to_five_words_need_all_when_enough_papers_hold_all(backend):
    """`diffusion image generation` sorted newest lists papers with all three words, not every
    paper on image generation; papers with two join only where fewer than RELAX_BELOW have three."""
    got, res = everything(backend, "diffusion image generation", mode="lexical")
    want = [stem(w) for w in ("diffusion", "image", "generation")]
    assert res.total == len(got) >= RELAX_BELOW
    assert all(set(want) <= stems_of(text_of(backend.get(pid))) for pid in got)


def test_a_filter_only_narrows_what_matches(backend):
    """How many words a match needs is decided over the whole corpus: under `cat:cs.RO` the
    matches of `diffusion image generation` are its matches in cs.RO, not a looser rule's."""
    got, _ = everything(backend, "diffusion image generation", mode="lexical")
    narrowed, _ = everything(backend, "diffusion image generation cat:cs.RO", mode="lexical")
    assert sorted(narrowed) == sorted(p for p in got if "cs.RO" in backend.get(p).categories)
    for mode in ("hybrid", "dense"):
        got, _ = everything(backend, "robot grasping", mode=mode)
        narrowed, r = everything(backend, "robot grasping", mode=mode, filters=Filters(category="cs.CV"))
        assert sorted(narrowed) == sorted(p for p in got if "cs.CV" in backend.get(p).categories)


def test_title_phrase_and_category(backend):
    res = backend.search('ti:"weight decay" cat:cs.LG', per_page=50)
    assert set(ids(res)) == {"2504.17160", "2505.13738", "2506.14562"}
    for h in res.hits:
        assert "weight decay" in h.paper.title.lower() and "cs.LG" in h.paper.categories


def test_exact_phrase_anywhere(backend):
    got, res = everything(backend, '"language model"', mode="lexical")
    assert res.total == len(got) > 0
    for pid in got:
        p = backend.get(pid)
        words = tokens(" ".join([index_text(p.title), index_text(p.abstract)]))
        assert any(words[i : i + 2] == ["language", "model"] for i in range(len(words) - 1))


def test_exclusion_removes_papers(backend):
    with_ = set(everything(backend, "weight decay", mode="lexical")[0])
    without = set(everything(backend, "weight decay -ti:alphadecay", mode="lexical")[0])
    assert "2506.14562" in with_ and without == with_ - {"2506.14562"}
    both = set(everything(backend, "diffusion video", mode="lexical")[0])
    diff = set(everything(backend, "diffusion", mode="lexical")[0])
    assert set(everything(backend, "diffusion -video", mode="lexical")[0]) == diff - both


def test_or_and_groups(backend):
    ro = set(everything(backend, "cat:cs.RO")[0])
    cv = set(everything(backend, "cat:cs.CV")[0])
    assert set(everything(backend, "cat:cs.RO OR cat:cs.CV")[0]) == ro | cv
    assert set(everything(backend, "cat:cs.RO AND cat:cs.CV")[0]) == ro & cv
    assert set(everything(backend, "cat:cs.RO -cat:cs.CV")[0]) == ro - cv


def test_category_rule_is_case_insensitive_and_archives_match(backend):
    a = backend.search("cat:cs.CV", per_page=5)
    assert a.total == backend.search("cat:cs.cv", per_page=5).total > 0
    got, res = everything(backend, "cat:cs")
    assert res.total >= a.total
    for pid in got:
        assert any(c.lower().split(".")[0] == "cs" for c in backend.get(pid).categories)


def test_dates_and_form_filters(backend):
    got, res = everything(backend, "date:2026-01..2026-03")
    assert got and all("2026-01-01" <= backend.get(p).date <= "2026-03-31" for p in got)
    res = backend.search("model", sort="newest", per_page=30, filters=Filters(category="cs.CV", date_from="2025-06"))
    dates = [h.paper.date for h in res.hits]
    assert dates and dates == sorted(dates, reverse=True) and all(d >= "2025-06" for d in dates)
    assert all("cs.CV" in h.paper.categories for h in res.hits)
    assert not everything(backend, "date:..2024")[0]
    assert set(everything(backend, "-date:2025")[0]) == set(everything(backend, "date:2026")[0])


def test_a_month_is_every_day_of_it(backend):
    """date:2025-03 ended on the 12th (`+ "-12-31"` cut to ten characters): days 13-31 were missed."""
    dates = {pid: backend.get(pid).date for pid in everything(backend, "")[0]}
    for month in ("2025-03", "2025-04", "2026-02", "2026-06"):
        want = {pid for pid, d in dates.items() if d and d.startswith(month)}
        assert any(dates[pid][8:] > "12" for pid in want), month  # the case: days after the 12th
        assert set(everything(backend, f"date:{month}")[0]) == want, month
    assert set(everything(backend, "date:2025-03..2025-04")[0]) == {
        pid for pid, d in dates.items() if d and "2025-03" <= d[:7] <= "2025-04"
    }
    res = backend.search("", filters=Filters(date_from="2025-03-13", date_to="2025-03"), per_page=1)
    assert res.total == sum(1 for d in dates.values() if d and "2025-03-13" <= d <= "2025-03-31")


def test_author_filter_and_field(backend):
    p = backend.get("2505.13738")
    assert "2505.13738" in ids(backend.search(f'au:"{p.authors[0]}"', per_page=10))
    assert "2505.13738" in ids(backend.search("", filters=Filters(author=p.authors[0]), per_page=10))


def test_an_author_phrase_stays_within_one_name(backend):
    # 2409.13661's authors: ..., Andrea Stocco, Paolo Tonella: "Stocco Paolo" is no one's name
    assert "2409.13661" in ids(backend.search('au:"Andrea Stocco"', per_page=10))
    assert everything(backend, 'au:"Stocco Paolo"')[0] == []


def test_an_author_name_typed_family_name_first(backend):
    typed = set(everything(backend, 'au:"Ziwei Liu"')[0])
    assert len(typed) == 2 and set(everything(backend, 'au:"Liu Ziwei"')[0]) == typed
    assert "2409.13661" in everything(backend, 'au:"Tonella Paolo"')[0]  # written "Paolo Tonella"
    assert everything(backend, 'au:"Paolo Stocco"')[0] == []  # either order, still within one name


def test_an_author_whose_name_is_a_stopword_is_found_and_no_name_is_refused(backend):
    """au:An (a name, and an English stopword the word index leaves out) matched every paper."""
    want = {pid for pid in everything(backend, "")[0] if any("an" in tokens(a) for a in backend.get(pid).authors)}
    assert want  # the fixture has one
    assert set(everything(backend, "au:An")[0]) == want
    assert set(everything(backend, "", filters=Filters(author="An"))[0]) == want
    assert set(everything(backend, "au:the")[0]) == set()
    for nothing in ("-", '""', " "):
        with pytest.raises(QueryError, match="an author needs a name"):
            backend.search("", filters=Filters(author=nothing))


def test_a_chinese_author_name_finds_its_pinyin_spelling(backend):
    typed = set(everything(backend, 'au:"Ziwei Liu"')[0])
    assert len(typed) == 2 and set(everything(backend, "au:刘子玮")[0]) == typed
    assert {h.paper.id for h in backend.search("", filters=Filters(author="刘子玮"), per_page=10).hits} == typed


def test_prefix(backend):
    got, res = everything(backend, "transform*", mode="lexical")
    assert got
    for pid in got:
        assert any(stem(w).startswith("transform") for w in tokens(text_of(backend.get(pid))))


def test_a_prefix_finds_at_least_its_word(backend):
    # the index holds stems: "learning*" once found only stems beginning "learning" (7 papers of
    # the 63k store, where "learning" finds 21,146)
    for word in ("learning", "segmentation", "transformer"):
        whole = set(everything(backend, word, mode="lexical")[0])
        assert whole and whole <= set(everything(backend, f"{word}*", mode="lexical")[0]), word
    assert set(everything(backend, "ti:learning", mode="lexical")[0]) <= set(
        everything(backend, "ti:learning*", mode="lexical")[0]
    )


def test_abstract_field(backend):
    got, _ = everything(backend, "abs:robots", mode="lexical")
    assert got and all("robot" in stems_of(index_text(backend.get(p).abstract)) for p in got)
    assert set(got) <= set(everything(backend, "robots", mode="lexical")[0])


def test_id_filter_and_pasted_references(backend):
    assert ids(backend.search("id:2505.13738")) == ["2505.13738"]
    for q in ("2505.13738", "https://arxiv.org/abs/2505.13738v2", "arXiv:2505.13738"):
        assert ids(backend.search(q)) == ["2505.13738"]
    res = backend.search("2401.99999")
    assert res.total == 0 and "paperdex ingest arxiv --id 2401.99999" in res.notices[0]
    # a pasted list of ids: those papers, and a word for an id the store lacks (the words
    # "2505.13738 2409.13661" matched no paper)
    for q in ("2505.13738 2409.13661", "2505.13738, https://arxiv.org/abs/2409.13661v2"):
        assert set(everything(backend, q)[0]) == {"2505.13738", "2409.13661"}, q
    got, res = everything(backend, "2505.13738 2401.99999")
    assert got == ["2505.13738"] and sum("2401.99999 is not in this store" in n for n in res.notices) == 1


def test_chinese_words_find_english_papers(backend):
    res = backend.search("扩散模型", mode="lexical", per_page=50)
    assert res.total > 0
    assert all("diffus" in stems_of(text_of(h.paper)) for h in res.hits)


def pairs_of(p) -> set[tuple[str, str]]:
    """Adjacent stems of the title and of the abstract, as the lexical snapshot pairs them."""
    out = set()
    for text in (p.title, p.abstract):
        ws = [stem(w) for w in tokens(index_text(text)) if w not in STOPWORDS]
        out |= set(zip(ws, ws[1:], strict=False))
    return out


def test_a_translated_phrase_matches_only_where_its_words_stand_together(backend):
    """大语言模型 is "large language model" or "LLM". VQ-Insight writes "large-scale" and
    "vision-language models" and never the phrase: not a match, under either order, and
    not counted; SAKURA ("large audio-language models", "large language models") is."""
    got, res = everything(backend, "大语言模型", mode="lexical")
    assert res.total == len(got) > 0
    assert "2506.18564" not in got and "2505.13237" in got
    for pid in got:
        p = backend.get(pid)
        assert "llm" in stems_of(text_of(p)) or {("larg", "languag"), ("languag", "model")} <= pairs_of(p), pid
    new, res_new = everything(backend, "大语言模型", mode="lexical", sort="newest")
    assert sorted(new) == sorted(got) and res_new.total == res.total
    # the acronym typed in capitals means the same two things
    assert sorted(everything(backend, "LLM", mode="lexical")[0]) == sorted(got)
    # scattered words still match when typed as words
    assert "2506.18564" in everything(backend, "large language model", mode="lexical")[0]


def made_up(b, papers: list[tuple[str, str, str]]):
    """Made-up papers (id, title, abstract) added to a writable backend, and a function from a
    query to the ones of them it matches (lexical, every page; the total checked against them)."""
    base = b.get(b.search("", per_page=1).hits[0].paper.id)
    b.upsert(
        [replace(base, id=i, title=t, abstract=a, authors=["Ada Lovelace"], updated="2026-07-01") for i, t, a in papers]
    )
    mine = {i for i, _, _ in papers}

    def matched(q: str) -> set[str]:
        got, res = everything(b, q, mode="lexical")
        assert res.total == len(got)
        return set(got) & mine

    return matched


def test_multi_word_alternatives_need_their_words_side_by_side(writable):
    """Made-up papers for each case a user would notice, on both backends."""
    matched = made_up(
        writable,
        [
            ("2699.10001", "Reasoning in large language models", "We probe how models reason."),
            ("2699.10002", "A large benchmark", "Sign language recognition with a model of each hand."),
            ("2699.10003", "Reasoning with LLMs", "We probe how they reason."),
            # the pair across the title's end and the abstract's start is not a phrase of the paper
            ("2699.10004", "Going large", "Language model training, sign language and a model."),
            ("2699.10005", "Large models of language", "A language model in the abstract only."),
            ("2699.10006", "End-to-end driving", "A planner trained end to end."),
            ("2699.10007", "The end of driving", "Where the road ends."),
            # "large language" in the title, "language model" in the abstract: a phrase of the
            # paper, but not of its title
            ("2699.10008", "Large language agents with a model", "Each agent has a language model."),
            # the phrase in the title and in the abstract; in the title, and apart in the abstract
            ("2699.10009", "Large language models", "Large language models, in the abstract too."),
            ("2699.10010", "Large language models at scale", "Large, small and language models compared."),
            # a dictionary gloss that is the word's only rendering: its words may stand apart
            ("2699.10011", "Low-bit quantization", "Each model is quantized to four bits."),
        ],
    )
    mine = {f"2699.{10000 + i}" for i in range(1, 12)}
    phrase = {"2699.10001", "2699.10003", "2699.10008", "2699.10009", "2699.10010"}
    assert matched("大语言模型") == phrase
    assert matched('"大语言模型"') == phrase
    assert matched("大语言模型 推理") == {"2699.10001", "2699.10003"}
    assert matched("ti:大语言模型") == {"2699.10001", "2699.10003", "2699.10009", "2699.10010"}
    assert matched("abs:大语言模型") == {"2699.10009"}
    assert matched("large language model") == mine - {"2699.10003", "2699.10006", "2699.10007", "2699.10011"}
    assert matched("模型量化") == {"2699.10011"}  # "model quantization", apart
    assert matched("端到端") == {"2699.10006"}  # "end to end": the word end twice, together
    assert matched("end-to-end") == {"2699.10006"}
    assert "2699.10004" not in matched("大语言模型 OR qwxzv")


def test_a_greek_letter_finds_its_tex_spelling_and_the_reverse(writable):
    """β-VAE typed found only the papers writing β (2 of the 63k store), beta-VAE only those
    writing $\\beta$ (2 others); a Greek word keeps its letters."""
    matched = made_up(
        writable,
        [
            ("2699.20001", "Disentangling with β-VAE", "A study of ε-greedy exploration."),
            ("2699.20002", r"Disentangling with $\beta$-VAE", r"A study of $\varepsilon$-greedy exploration."),
            ("2699.20003", "Beta and VAE apart", "A VAE, then a beta prior, then greedy search."),
            ("2699.20004", "Γλώσσα models", "A study in Greek."),
        ],
    )
    both = {"2699.20001", "2699.20002"}
    for q in ('"β-VAE"', '"beta VAE"', 'ti:"β-VAE"', '"ε-greedy"', '"epsilon-greedy"', '"ϵ-greedy"'):
        assert matched(q) == both, q
    # unquoted, a hyphenated word's parts need not stand together ("Beta and VAE apart" too)
    assert both < matched("β-VAE") == matched("beta-VAE") == matched("Β-VAE")
    assert matched("γλώσσα") == {"2699.20004"}


def test_venue_area_and_decision(writable):
    """`venue:` and `area:` match a substring, ASCII case folded (SQLite's LIKE on the embedded
    store), `%` and `_` typed literally; `decision:` is OpenReview's. A Milvus server refuses
    the infix LIKE that Milvus Lite answers, so the backend may not express these as one."""
    base = writable.get(writable.search("", per_page=1).hits[0].paper.id)

    def paper(pid: str, venue: str | None, area: str | None, decision: str | None):
        extra = {"openreview": {"decision": decision, "presentation": None}} if decision else {}
        return replace(base, id=pid, title=f"Quokka study {pid}", venue=venue, venue_area=area, extra=extra)

    writable.upsert(
        [
            paper("openreview:a", "ICLR 2025 Poster", "Computer Vision", "accepted"),
            paper("openreview:r", "Submitted to ICLR 2025", "Robotics_Control", "rejected"),
            paper("openreview:w", "ICLR 2025 Conference Withdrawn Submission", None, "withdrawn"),
            paper("2699.20001", "NeurIPS 2025 100% Workshop", "Vision–Language (ÉTUDE)", None),
        ]
    )

    def got(q: str) -> list[str]:
        return sorted(everything(writable, q)[0])

    assert got('venue:"iclr 2025"') == ["openreview:a", "openreview:r", "openreview:w"]
    assert got("venue:poster") == ["openreview:a"]
    assert got('venue:"100%"') == ["2699.20001"] and got('venue:"1_0"') == []
    assert got("area:VISION") == ["2699.20001", "openreview:a"]
    assert got("area:robotics_control") == ["openreview:r"] and got("area:robotics%control") == []
    assert got("area:étude") == []  # SQLite folds ASCII letters only
    assert got('venue:"ICLR 2025" decision:accepted') == ["openreview:a"]
    assert got("quokka decision:rejected") == ["openreview:r"]
    assert got("venue:iclr -decision:accepted") == ["openreview:r", "openreview:w"]
    assert writable.delete("openreview:a") and got("decision:accepted") == [] and got("venue:poster") == []


def test_a_pasted_doi_finds_the_paper_wherever_its_source_kept_it(writable):
    """A BibTeX entry's doi (extra.bibtex.doi), a `doi:` id with no doi field, a Zotero item's
    and a paper's second DOI: each pasted in any case, bare, as doi: or a doi.org URL, finds its
    paper (the BibTeX one had been "not in this store"); a changed DOI and a deleted paper's go."""
    base = writable.get(writable.search("", per_page=1).hits[0].paper.id)

    def paper(pid: str, extra: dict):
        return replace(base, id=pid, title=f"Okapi study {pid}", extra=extra)

    writable.upsert(
        [
            paper("bib:cvpr", {"bibtex": {"key": "cvpr", "doi": "10.1109/CVPR.2026.00001"}}),
            paper("doi:10.1000/xyz123", {}),
            paper("zotero:k", {"zotero": {"doi": "10.5555/Z.1"}}),
            paper("2699.30001", {"arxiv": {"doi": "10.1234/J.5"}, "bibtex": {"doi": "https://doi.org/10.1234/C.6"}}),
        ]
    )

    def found(q: str) -> list[str]:
        res = writable.search(q)
        assert res.mode == "lookup" and res.total == len(res.hits), q
        return ids(res)

    assert found("10.1109/CVPR.2026.00001") == found("https://doi.org/10.1109/cvpr.2026.00001") == ["bib:cvpr"]
    assert found("10.1000/xyz123") == found("doi:10.1000/XYZ123") == ["doi:10.1000/xyz123"]
    assert found("10.5555/z.1") == ["zotero:k"]
    assert found("10.1234/J.5") == found("10.1234/c.6") == ["2699.30001"]
    writable.upsert([paper("bib:cvpr", {"bibtex": {"key": "cvpr", "doi": "10.1109/CVPR.2026.00002"}})])
    assert found("10.1109/CVPR.2026.00001") == [] and found("10.1109/CVPR.2026.00002") == ["bib:cvpr"]
    assert writable.delete("2699.30001") and found("10.1234/c.6") == [] and found("10.1234/j.5") == []


def test_a_merge_that_moves_a_paper_leaves_its_old_ids_naming_it(writable):
    """A merge that moves a paper to another id (an OpenReview record joined by its arXiv
    preprint, a `doi:` record folded in: sources.merge passes the moves, Store.upsert's `moved`)
    leaves each old id an alias, on every backend. On Milvus the old id's paper stayed listed
    until a `migrate --to`, and after it `id:OLD` and the `doi:` record's DOI found nothing."""
    base = writable.get(writable.search("", per_page=1).hits[0].paper.id)
    old, new, doi = "openreview:Wb12", "2699.40001", "doi:10.1000/Wombat.7"
    venue = replace(base, id=old, title="Wombat burrow acoustics", extra={"openreview": {"decision": "accepted"}})
    n = writable.count() + 1
    writable.upsert([venue])
    joined = replace(venue, id=new, sources=["openreview", "arxiv"])
    s = writable.upsert([joined], moved={old: new, doi: new})
    assert (s.added, s.updated) == (0, 1) and writable.count() == n  # the paper under its new id

    def found(q: str) -> list[str]:
        res = writable.search(q, mode="lexical")
        return ids(res) if res.mode == "lookup" else everything(writable, q, mode="lexical")[0]

    assert writable.get(old).id == writable.get(doi).id == new
    assert found("wombat") == found(f"id:{old}") == found(f"id:{doi}") == [new]
    assert found("10.1000/wombat.7") == found("https://doi.org/10.1000/WOMBAT.7") == [new]
    # the paper moves again: every id that named it follows
    writable.upsert([replace(joined, id="2699.40002")], moved={new: "2699.40002"})
    assert {writable.get(i).id for i in (old, doi, new)} == {"2699.40002"}
    assert found("10.1000/wombat.7") == found(f"id:{old}") == ["2699.40002"]
    # an old id stored as a paper again is that paper, no longer an alias
    writable.upsert([replace(venue, title="Numbat gait")])
    assert writable.get(old).title == "Numbat gait" and found(f"id:{old}") == [old]


def test_word_no_paper_has_is_set_aside(backend):
    base = backend.search("learning", mode="lexical").total
    res = backend.search("learning transformerz", mode="lexical")
    assert res.total == base and any("transformerz" in n for n in res.notices)


def test_nonsense_says_no_close_matches(backend):
    res = backend.search("qwxzv plorbnik")
    assert res.total == 0 and res.hits == [] and any("no close matches" in n for n in res.notices)


def test_syntax_errors_and_limits_are_messages(backend):
    with pytest.raises(QueryError, match="unbalanced quote"):
        backend.search('"weight decay')
    # past the window and past the last page (this store lists far fewer): that page, empty
    # (test_search.py has the window's own error, for a search that lists more than it)
    past = backend.search("learning", per_page=20, page=MAX_WINDOW // 20 + 1)
    assert past.hits == [] and past.total > 0 and past.page > past.pages
    with pytest.raises(QueryError, match="calendar"):
        backend.search("model", filters=Filters(date_from="2025-02-30"))


# --- counts, order, pages ------------------------------------------------------------------


def test_total_and_facets_count_the_matched_set(backend):
    for mode in ("lexical", "hybrid", "dense"):
        res = backend.search("diffusion", mode=mode)
        got, _ = everything(backend, "diffusion", mode=mode)
        papers = [backend.get(i) for i in got]
        assert res.total == len(got) == len(set(got))
        assert sum(n for _, n in res.facets["year"]) == res.total
        for cat, n in res.facets["category"]:
            assert n == sum(cat in p.categories for p in papers)


def test_newest_sorts_the_matched_set(backend):
    rel, r1 = everything(backend, "weight decay", sort="relevance")
    new, r2 = everything(backend, "weight decay", sort="newest")
    assert set(new) <= set(rel) and r1.total == r2.total == len(new)
    dates = [backend.get(i).date for i in new]
    assert dates == sorted(dates, reverse=True)


def test_empty_query_browses_newest(backend):
    res = backend.search("", per_page=5)
    dates = [h.paper.date for h in res.hits]
    assert len(dates) == 5 and dates == sorted(dates, reverse=True)
    assert res.total == backend.count() == 314


def test_pages_are_slices_of_one_order(backend):
    for mode in ("hybrid", "lexical"):
        whole = ids(backend.search("learning", mode=mode, per_page=40, facets=False))
        pages = [ids(backend.search("learning", mode=mode, per_page=10, page=p, facets=False)) for p in (1, 2, 3, 4)]
        assert sum(pages, []) == whole and len(set(whole)) == 40
    p2 = backend.search("learning", mode="lexical", per_page=5, page=2)
    assert [h.lexical_rank for h in p2.hits] == [6, 7, 8, 9, 10]


def test_hybrid_hits_say_why_they_matched(backend):
    res = backend.search("weight decay regularization", per_page=20)
    assert res.mode == "hybrid" and res.hits[0].lexical_rank is not None
    assert [h.score for h in res.hits] == sorted((h.score for h in res.hits), reverse=True)
    assert all(h.lexical_rank is not None or h.dense_rank is not None for h in res.hits)


def test_dense_finds_papers_without_shared_words(backend):
    res = backend.search("robots grasping objects with a gripper", mode="dense", per_page=10)
    assert res.hits and res.hits[0].paper.title.startswith("GraspCoT")
    new = backend.search("robots grasping objects with a gripper", mode="dense", per_page=100, sort="newest")
    assert new.hits and all("cs.RO" in h.paper.categories for h in new.hits)  # close matches only: no noise
    rel = backend.search("robots grasping objects with a gripper", mode="dense", per_page=new.total)
    assert set(ids(rel)) == set(ids(new))  # the close matches are the nearest
    top_floor, floor, _ = MIN_COSINE["all-MiniLM-L6-v2"]["en"]
    assert rel.hits[0].dense_score >= top_floor and all(h.dense_score >= floor for h in rel.hits)


QUERIES = [
    "diffusion",
    "robot grasping",
    "traffic flow forecasting",
    "large language model reasoning agents benchmark evaluation",
    "ti:diffusion",
    '"language model"',
    "diffusion -video",
    "transform*",
    "cat:cs date:2025",
    "(cat:cs.RO OR ti:robot) planning",
    "扩散模型 图像编辑",
    "大语言模型 推理",
    "ti:大语言模型 OR GNN",
    "-大语言模型 cat:cs.CL",
    "in-context learning",
    "",
]


@pytest.mark.parametrize("milvus", MILVUS)
@pytest.mark.parametrize("mode", ["hybrid", "lexical", "dense"])
def test_both_backends_match_the_same_papers(request, embedded_ro, milvus, mode):
    """One engine reads both: the same matches, counts, notices, facets and order (the
    embedded store's candidates' cosines are int8 estimates, Milvus's exact floats, so only
    a near tie may swap)."""
    milvus_ro = request.getfixturevalue(f"{milvus}_ro")
    for q in QUERIES:
        a = embedded_ro.search(q, mode=mode, per_page=10)
        b = milvus_ro.search(q, mode=mode, per_page=10)
        assert (a.total, a.mode, a.notices, a.ranked) == (b.total, b.mode, b.notices, b.ranked), q
        assert a.facets == b.facets, q
        swapped = [(x, y) for x, y in zip(a.hits, b.hits, strict=True) if x.paper.id != y.paper.id]
        assert all(abs(x.score - y.score) < 2e-3 for x, y in swapped), (q, ids(a), ids(b))
        ea, _ = everything(embedded_ro, q, mode=mode)
        eb, _ = everything(milvus_ro, q, mode=mode)
        assert sorted(ea) == sorted(eb), q


# --- writes --------------------------------------------------------------------------------


def test_upsert_new_changed_identical_and_older(writable):
    n = writable.count()
    p = writable.get(writable.search("", per_page=1).hits[0].paper.id)
    new = replace(p, id="2699.00001", title="Zebrafish swimming kinematics", updated="2026-07-01")
    s = writable.upsert([new])
    assert (s.added, s.updated, s.unchanged) == (1, 0, 0) and writable.count() == n + 1
    assert ids(writable.search("zebrafish", mode="lexical")) == ["2699.00001"]
    assert writable.get("2699.00001").title == new.title

    s = writable.upsert([new])
    assert (s.added, s.updated, s.unchanged) == (0, 0, 1)
    changed = replace(new, title="Octopus arm control", updated="2026-07-02")
    s = writable.upsert([changed])
    assert (s.added, s.updated, s.unchanged) == (0, 1, 0) and writable.count() == n + 1
    assert writable.search("zebrafish", mode="lexical").total == 0
    assert ids(writable.search("octopus", mode="lexical")) == ["2699.00001"]
    older = replace(new, title="Stale squid copy", updated="2026-06-01")
    s = writable.upsert([older])
    assert s.unchanged == 1 and writable.get("2699.00001").title == "Octopus arm control"


def test_upsert_with_vectors_and_a_text_change_drops_the_vector(writable):
    p = writable.get(writable.search("", per_page=1).hits[0].paper.id)
    rng = np.random.default_rng(0)
    v = rng.normal(size=384).astype(np.float32)
    v /= np.linalg.norm(v)
    new = replace(p, id="2699.00002", title="Axolotl regeneration atlas")
    writable.upsert([new], vectors={new.id: v}, model="all-MiniLM-L6-v2")
    res = writable.search("axolotl regeneration", mode="dense", query_vector=v, per_page=3)
    assert ids(res)[0] == "2699.00002" and res.hits[0].dense_score == pytest.approx(1.0, abs=1e-2)
    writable.upsert([replace(new, comment="a comment only")])  # same text: the vector stays
    assert ids(writable.search("axolotl", mode="dense", query_vector=v, per_page=1)) == ["2699.00002"]
    writable.upsert([replace(new, title="Axolotl limb regeneration atlas")])  # new text: no vector
    res = writable.search("axolotl", mode="dense", query_vector=v, per_page=5)
    assert "2699.00002" not in ids(res)
    assert "2699.00002" in ids(writable.search("axolotl", mode="lexical"))


def test_delete(writable):
    n = writable.count()
    victim = writable.search("", per_page=1).hits[0].paper
    word = max(tokens(victim.title), key=len)
    assert victim.id in everything(writable, word, mode="lexical")[0]
    assert writable.delete(victim.id) and not writable.delete(victim.id)
    assert writable.get(victim.id) is None and writable.count() == n - 1
    for mode in ("lexical", "hybrid", "dense"):
        assert victim.id not in everything(writable, word, mode=mode)[0]
    assert victim.id not in everything(writable, "")[0]
