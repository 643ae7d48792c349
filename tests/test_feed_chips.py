"""The daily page's "for TAG" chip is earned (recommend.CHIP_P, calibrated in
docs/recommendations.md): a three-paper tag does not mark every card of a day, a paper on its
topic still carries the chip with its strength, and the JSON says how strong."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fastapi.testclient import TestClient

from paperdex.discover import library as L
from paperdex.ingest import import_vectors, ingest_file
from paperdex.web.app import create_app
from tests.conftest import DATA, PAPERS

DAY = "2025-03-19"  # the sample's busiest day: 31 papers, none about robots but one
TAG = ["2503.14554", "2503.17046", "2503.19510"]  # robot papers of other days
COPY = "2599.09001"


@pytest.fixture
def client(store, tmp_path):
    """The site over the sample with a three-paper tag "robots", and on DAY the published
    version of one of its papers (the same abstract and vector under another id and title)."""
    L.add_to_tag(store, "robots", TAG)
    line = next(json.loads(x) for x in PAPERS.read_text().splitlines() if json.loads(x)["id"] == TAG[2])
    line.update(id=COPY, title=line["title"] + " (extended version)", listed=DAY)
    (tmp_path / "copy.jsonl").write_text(json.dumps(line) + "\n")
    ingest_file(store, tmp_path / "copy.jsonl")
    ids = (DATA / "papers.ids.txt").read_text().split()
    (tmp_path / "ids.txt").write_text(COPY + "\n")
    vec = np.load(DATA / "papers.minilm.f16.npy")[[ids.index(TAG[2])]]
    import_vectors(store, vec, tmp_path / "ids.txt", "all-MiniLM-L6-v2")
    return TestClient(create_app(store.data_dir, pool_size=1), base_url="http://localhost")


def test_a_small_tag_marks_only_the_cards_it_earns(client):
    page = client.get("/daily", params={"day": DAY}).text
    assert page.count('class="card"') == 30
    chips = page.split('data-testid="for-you-mark">')[1:]
    assert [c.split("<")[0] for c in chips] == ["for robots · strong"]
    assert page.index(f'data-id="{COPY}"') < page.index('data-testid="for-you-mark"')
    zh = client.get("/daily", params={"day": DAY}, headers={"Accept-Language": "zh"}).text
    assert zh.count('data-testid="for-you-mark"') == 1 and "高度相关：robots" in zh
    assert "1 for robots" in page  # the day's shape counts the earned chips only


@pytest.mark.parametrize("sort", ["top", "foryou"])
def test_the_json_says_how_strong(client, sort):
    d = client.get("/daily.json", params={"day": DAY, "sort": sort}).json()
    assert d["papers"][0]["id"] == COPY
    assert list(d["chips"]) == [COPY]
    chip = d["chips"][COPY]
    assert chip["tag"] == "robots" and chip["strength"] == "strong" and 0.9 <= chip["chance"] <= 1


def test_for_you_ranks_by_the_calibrated_chance(client):
    got = client.get("/api/for-you", params={"day": DAY}).json()["papers"]
    assert got[0]["id"] == COPY and got[0]["score"] >= 0.9
    assert all(0 <= p["score"] < 0.8 for p in got[1:])  # the rest of the day earns no chip


def test_a_one_paper_tag_says_it_is_too_small_instead_of_marking(store):
    from paperdex.discover import feed

    L.add_to_tag(store, "robots", TAG[:1])
    d = feed.listing(store, "day", DAY, sort="top")
    assert not d.scores and [n.code for n in d.notices if n.code == "tag_too_small"] == ["tag_too_small"]
    assert "Add 2 more papers to robots" in str(d.notices[0])
    assert feed.listing(store, "day", DAY, sort="foryou").ranked_by == ["tags"]  # it still orders "for you"
    L.add_to_tag(store, "robots", TAG[1:2])
    assert "Add 1 more paper to robots" in str(feed.listing(store, "day", DAY, sort="foryou").notices[0])


def test_a_paper_the_tag_holds_is_no_recommendation_for_it(client, store):
    """Saved to the tag, the day's best paper for it loses its chip and its first place: before, it
    said "for robots · strong" beside "Saved to robots" and led For you, while the day's shape
    ("New for your tags") did not count it."""
    L.add_to_tag(store, "robots", [COPY])
    for sort in ("top", "foryou"):
        d = client.get("/daily.json", params={"day": DAY, "sort": sort}).json()
        assert COPY not in d["chips"] and d["papers"][0]["id"] != COPY
        assert d["for_tags"] == [], d["for_tags"]  # the chips and the shape agree: none
    page = client.get("/daily", params={"day": DAY, "sort": "foryou"}).text
    assert 'data-testid="for-you-mark"' not in page
    assert COPY not in {p["id"] for p in client.get("/api/for-you", params={"day": DAY}).json()["papers"]}


def test_small_tags_are_named_in_one_line(client, store):
    """Tags too small to mark papers are one line naming them, not a line per tag (7 one-paper tags
    were 7 lines above the first paper of every view)."""
    for name, pid in zip(("frag", "reading", "later"), TAG, strict=True):
        L.add_to_tag(store, name, [pid])
    d = client.get("/daily.json", params={"day": DAY, "view": "week", "sort": "foryou"}).json()
    small = [n for n in d["notices"] if "fewer than 3 papers" in n or "Add " in n]
    assert small == ["Tags of fewer than 3 papers mark no papers as for them (they would mark too many wrongly): "
                     "add papers to frag, later, reading."]  # fmt: skip
    zh = client.get("/daily", params={"day": DAY, "sort": "top"}, headers={"Accept-Language": "zh"}).text
    assert zh.count("不足 3 篇论文的标签") == 1 and "请向 frag, later, reading 添加论文" in zh


def test_for_you_on_a_day_without_papers_says_so(client):
    """/for-you on a day with no papers said "No tags yet" to a user with tags."""
    page = client.get("/for-you", params={"day": "2025-03-23"}).text  # a Sunday of the sample: no papers
    assert "no papers listed on 2025-03-23" in page and "No tags yet" not in page
    got = client.get("/api/for-you", params={"day": "2025-03-23"}).json()
    assert got["papers"] == [] and got["notices"] == ["no papers listed on 2025-03-23"]
