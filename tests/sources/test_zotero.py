"""A Zotero library brought in as tags: its CSL-JSON export and its web API (recorded responses
in tests/fixtures/zotero, served through httpx's MockTransport to the real client)."""

from __future__ import annotations

import json
import logging

import httpx
import pytest
from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.discover import library as L
from paperdex.paper import Paper
from paperdex.sources import zotero as Z
from tests.sources.conftest import Router, fixture

KEY = "P9xq2SecretKey"
ITEMS = "https://api.zotero.org/users/475425/items/top"


def _stored(store) -> None:
    """What a store already holds: the arXiv preprint, and EAGLE as an OpenReview record."""
    store.upsert(
        [
            Paper(
                id="2211.17192",
                title="Fast Inference from Transformers via Speculative Decoding",
                authors=["Yaniv Leviathan"],
            ),
            Paper(
                id="openreview:FEAGLE24",
                title="EAGLE: Speculative Sampling Requires Rethinking Feature Uncertainty",
                authors=["Yuhui Li", "Fangyun Wei"],
                sources=["openreview"],
            ),
        ]
    )


def test_a_csl_export_reads_arxiv_ids_dois_venues_and_odd_dates():
    res = Z.parse_csl(fixture("zotero", "library.csl.json").read_text(), "library.csl.json")
    by = {p.title[:20]: p for p in res.papers}
    pre = by["Fast Inference from "]
    assert (pre.id, pre.published, pre.venue, pre.abs_url) == ("2211.17192", "2023-05-18", None, None)
    old = by["Attention Is All You"]  # the older translator: "arXiv:1706.03762 [cs]" is no venue
    assert (old.id, old.venue, old.authors) == ("1706.03762", None, ["Ashish Vaswani", "Noam Shazeer"])
    nature = by["Highly accurate prot"]
    assert nature.title == "Highly accurate protein structure prediction with AlphaFold"
    assert (nature.id, nature.venue, nature.published) == ("doi:10.1038/s41586-021-03819-2", "Nature", "2021-08-01")
    assert nature.extra["doi"] == "10.1038/s41586-021-03819-2" and nature.extra["zotero"]["date_precision"] == "month"
    chapter = by["Learning Internal Re"]
    assert chapter.id == "zotero:4TPC9KHM" and chapter.venue.startswith("Parallel Distributed Processing")
    assert chapter.published == "1986-01-01" and chapter.extra["zotero"]["date_precision"] == "year"
    assert by["EAGLE: speculative s"].published == "2024-03-01"  # {"raw": "2024-03"}
    medusa = by["Medusa: Simple LLM I"]  # Better BibTeX: the citation key is the id
    assert (medusa.id, medusa.published, medusa.authors[1]) == ("zotero:cai2024medusa", "2024-01-01", "Together AI")
    assert res.errors == ["library.csl.json: item 7: missing or empty 'title'; skipped"]
    day = {"title": "A paper", "issued": {"date-parts": [[2023, 5, 31]]}}
    assert Z.csl_to_paper(day).published == "2023-05-31"  # a 31st is a day, not only its month
    assert Z.csl_to_paper({**day, "issued": {"date-parts": [[2023, 2, 31]]}}).published == "2023-02-01"


def test_a_csl_file_goes_into_a_tag_matching_stored_papers_and_adding_the_rest(store, tmp_path):
    _stored(store)
    out = L.import_papers(store, [(p, ["specdec"]) for p in Z.read_csl(fixture("zotero", "library.csl.json")).papers])
    assert (out["entries"], out["matched"], out["ingested"], out["added"]) == (6, 2, 4, 6)
    ids = set(L.tag_papers(store, "specdec"))
    assert {"2211.17192", "openreview:FEAGLE24", "1706.03762", "doi:10.1038/s41586-021-03819-2"} <= ids
    assert store.get("openreview:FEAGLE24").venue is None  # matched, not overwritten
    again = L.import_papers(store, [(p, ["specdec"]) for p in Z.read_csl(fixture("zotero", "library.csl.json")).papers])
    assert (again["matched"], again["ingested"], again["added"]) == (6, 0, 0)  # a re-import adds nothing


def _cli(store, *args, env=None):
    return CliRunner().invoke(cli, ["--data-dir", str(store.data_dir), *args], env=env)


def test_the_cli_imports_csl_json_and_refuses_a_broken_file_in_one_line(store):
    _stored(store)
    r = _cli(store, "tag", "import", str(fixture("zotero", "library.csl.json")), "--tag", "specdec")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["added"] == 6 and L.get_tag(store, "specdec").count == 6
    r = _cli(store, "tag", "import", str(fixture("zotero", "broken.csl.json")), "--tag", "broken")
    assert r.exit_code == 1 and "broken.csl.json: not JSON" in r.output and len(r.output.strip().splitlines()) == 1
    assert [t.name for t in L.tags(store)] == ["specdec"]  # nothing of it imported
    r = _cli(store, "tag", "import", str(fixture("zotero", "library.csl.json")))
    assert r.exit_code == 1 and "--tag NAME" in r.output


def _api(pages_after_429: int = 0) -> Router:
    page1 = json.loads(fixture("zotero", "api", "items_top_page1.json").read_text())
    page2 = json.loads(fixture("zotero", "api", "items_top_page2.json").read_text())
    nxt = f'<{ITEMS}?format=json&include=data%2Ccsljson&itemType=-attachment&limit=100&start=100>; rel="next"'
    r = Router()
    r.add(
        lambda q: q.url.path.endswith("/collections"),
        httpx.Response(200, json=json.loads(fixture("zotero", "api", "collections.json").read_text())),
    )
    r.add(lambda q: q.url.params.get("start") == "100", httpx.Response(200, json=page2, headers={"Total-Results": "4"}))
    in_collection = [page1[0], page2[1]]  # the items whose data.collections name it
    r.add(lambda q: "/collections/QJ4W8T2N/items/top" in q.url.path, httpx.Response(200, json=in_collection))
    first = httpx.Response(200, json=page1, headers={"Link": nxt, "Total-Results": "4"})
    limited = httpx.Response(429, text="Too Many Requests", headers={"Retry-After": "7"})
    r.add(lambda q: q.url.path.endswith("/items/top"), [limited] * pages_after_429 + [first])
    return r


def test_a_web_library_becomes_a_tag_per_collection_read_page_by_page(store, make_http, clock, caplog):
    _stored(store)
    router = _api(pages_after_429=1)
    lib = Z.WebLibrary("users/475425", KEY, make_http(router))
    with caplog.at_level(logging.DEBUG):
        entries, errors = Z.read_library(lib)
    out = L.import_papers(store, entries, errors)
    assert out["tags"] == {"Speculative decoding": 2, "zotero": 1, "Drafters-EAGLE": 1}
    assert set(L.tag_papers(store, "Speculative decoding")) == {"2211.17192", "openreview:FEAGLE24"}
    assert L.tag_papers(store, "zotero") == ["doi:10.1038/s41586-021-03819-2"]  # in no collection
    assert out["entries"] == 3 and not errors  # the standalone note is no paper
    assert 7.0 in clock.sleeps  # the 429's Retry-After, then the same page again
    sent = [q for q in router.requests if q.url.path.endswith("/items/top")]
    assert [q.url.params.get("start") for q in sent] == ["0", "0", "100"]
    assert all(q.headers["Zotero-API-Key"] == KEY and KEY not in str(q.url) for q in router.requests)
    assert KEY not in caplog.text


def test_one_collection_by_name_into_the_tag_the_user_names(store, make_http):
    router = _api()
    lib = Z.WebLibrary("users/475425", None, make_http(router))
    entries, _ = Z.read_library(lib, "speculative DECODING", "reading")
    assert {t for _, tags in entries for t in tags} == {"reading"}
    assert any("/collections/QJ4W8T2N/items/top" in str(q.url) for q in router.requests)
    assert all("Zotero-API-Key" not in q.headers for q in router.requests)  # a public library
    with pytest.raises(Z.ZoteroError, match="no collection 'nope'"):
        Z.read_library(lib, "nope")


def test_a_refused_key_is_one_line_without_the_key(store, make_http, monkeypatch):
    router = Router().add(lambda q: True, httpx.Response(403, text="Forbidden"))
    monkeypatch.setattr(Z, "HttpClient", lambda **kw: make_http(router))
    r = _cli(store, "tag", "import", "--zotero", "users/475425", "--api-key-env", "ZKEY", env={"ZKEY": KEY})
    assert r.exit_code == 1 and len(r.output.strip().splitlines()) == 1
    assert "refused to read users/475425 (HTTP 403)" in r.output and KEY not in r.output
    assert L.tags(store) == []
    r = _cli(store, "tag", "import", "--zotero", "users/475425", "--api-key-env", "ZKEY", env={"ZKEY": ""})
    assert r.exit_code == 1 and "$ZKEY is empty or unset" in r.output
    r = _cli(store, "tag", "import", "--zotero", "alice")
    assert r.exit_code == 1 and "users/ID or groups/ID" in r.output


def test_a_bib_entry_without_an_arxiv_id_finds_its_stored_paper_by_title(store):
    """BibTeX import goes through the same matching: before, an entry whose key was not a stored
    id became a second record of a paper the store had."""
    _stored(store)
    bib = (
        "@inproceedings{li2024eagle,\n title={{EAGLE}: Speculative Sampling Requires Rethinking Feature Uncertainty},\n"
    )
    bib += " author={Li, Yuhui and Wei, Fangyun},\n booktitle={ICML},\n year={2024}\n}\n"
    out = L.import_bibtex(store, bib, "eagle")
    assert (out["matched"], out["ingested"]) == (1, 0)
    assert L.tag_papers(store, "eagle") == ["openreview:FEAGLE24"] and store.get("bib:li2024eagle") is None


def test_the_tag_page_says_how_many_papers_its_recommendations_need(store):
    from fastapi.testclient import TestClient

    from paperdex.web.app import create_app

    L.import_papers(store, [(p, ["specdec"]) for p in Z.read_csl(fixture("zotero", "library.csl.json")).papers])
    c = TestClient(create_app(store.data_dir, pool_size=1), base_url="http://localhost")
    page = c.get("/tag/specdec").text
    assert "This tag has 6 of the 20 papers from which its recommendations were measured to hold" in page
    assert "这个标签有 6 篇论文；实测表明约 20 篇起推荐才稳定" in c.get("/tag/specdec", params={"lang": "zh"}).text
    # 14 more ids, not in this store yet: an import keeps them (add_to_tag refuses them)
    L.import_json(
        store,
        {
            "format": "paperdex-library",
            "version": 1,
            "tags": [{"name": "specdec", "papers": [f"p{i}" for i in range(14)]}],
        },
    )
    assert 'data-testid="tag-needs"' not in c.get("/tag/specdec").text  # 20 papers: said no more
    assert "paperdex tag import --zotero users/ID" in c.get("/library").text  # where a library comes in


def test_a_zotero_paper_exports_to_bibtex_with_its_doi_and_no_more_date_than_known(store):
    L.import_papers(store, [(p, ["bio"]) for p in Z.read_csl(fixture("zotero", "library.csl.json")).papers[2:3]])
    bib = L.export_bibtex(store, "bio")
    assert "doi          = {10.1038/s41586-021-03819-2}" in bib and "month        = aug" in bib
    assert "date " not in bib  # Zotero knew the month, not a day


def test_the_cli_brings_a_zotero_collection_in(store, make_http, monkeypatch):
    router = _api()
    monkeypatch.setattr(Z, "HttpClient", lambda **kw: make_http(router))
    r = _cli(
        store,
        "tag",
        "import",
        "--zotero",
        "users/475425",
        "--collection",
        "QJ4W8T2N",
        "--api-key-env",
        "ZKEY",
        env={"ZKEY": KEY},
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["tags"] == {"Speculative decoding": 2} and KEY not in r.output
    assert L.get_tag(store, "Speculative decoding").count == 2
