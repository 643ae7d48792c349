"""Issue 34, suggestions while typing a topic, not only a field: words and phrases of the
store's titles (with their paper counts), acronyms with what they stand for, Chinese words the
zh dictionary knows whose English reading the store's titles hold, completed inside ti:, abs:
and an open quote; and any text typed gets an answer, never a 500, of queries that parse."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from paperdex.store import Store
from paperdex.web.app import create_app
from paperdex.web.render import parses
from paperdex.web.suggest import _title_phrases


@pytest.fixture(scope="module")
def sc(web_dir) -> TestClient:
    return TestClient(create_app(web_dir, pool_size=1), base_url="http://localhost", raise_server_exceptions=False)


def _ask(sc: TestClient, q: str, lang: str = "en") -> list[dict[str, str]]:
    r = sc.get("/api/suggest", params={"q": q, "lang": lang})
    assert r.status_code == 200, (q, r.status_code, r.text[:200])
    return r.json()["suggestions"]


def _titles_with(web_dir, pattern: str) -> int:
    """Papers whose title holds `pattern` as whole words, any case: counted apart from the index."""
    with Store(web_dir, readonly=True) as st:
        titles = [r[0] for r in st.conn.execute("SELECT title FROM papers")]
    return sum(1 for t in titles if re.search(rf"\b{pattern}\b", t, re.I))


def test_a_word_being_typed_is_completed_from_the_titles(sc, web_dir):
    got = _ask(sc, "specul")
    assert got[0] == {"query": "speculative", "label": "speculative", "kind": "term", "note": "1 paper"}
    got = _ask(sc, "diffusion mo")  # the word typed before joins the phrase
    assert [g["query"] for g in got[:2]] == ["diffusion models", "diffusion model"]
    assert got[0]["note"] == f"{_titles_with(web_dir, 'diffusion models')} papers"
    # a phrase nearly always followed by one word gives way to the longer phrase
    got = [g["label"] for g in _ask(sc, "large lang")]
    assert got[0] == "large language models" and "large language" not in got
    # what came before the phrase stays as typed
    assert _ask(sc, "cat:cs.LG diffusion mo")[0]["query"] == "cat:cs.LG diffusion models"
    # a field's completion stays first: "ca" may be starting cat:
    assert _ask(sc, 'ti:"weight decay" ca')[0]["query"] == 'ti:"weight decay" cat:'


def test_counts_are_exact_when_the_words_are_found_in_a_sample(sc, web_dir, monkeypatch):
    from paperdex.web import suggest

    monkeypatch.setattr(suggest, "TITLE_SAMPLE", 4)  # as on a large store: every k-th title read
    got = _ask(sc, "diffusion mo")[0]
    assert got["label"] == "diffusion models"
    assert got["note"] == f"{_titles_with(web_dir, 'diffusion models')} papers"
    # a word counted as a search finds it: LLM inside LLM-as-a-judge counts too
    got = {g["label"]: g["note"] for g in _ask(sc, "ll")}
    assert got["LLM"].endswith(f" · {_titles_with(web_dir, 'LLM')} papers")


def test_words_are_completed_inside_a_field_or_a_quote(sc):
    assert _ask(sc, 'ti:"diffusion mo')[0]["query"] == 'ti:"diffusion models"'
    assert _ask(sc, '"diffusion mo')[0]["query"] == '"diffusion models"'
    assert "ti:speculative" in [g["query"] for g in _ask(sc, "ti:specul")]
    assert _ask(sc, 'abs:"reinforcement le')[0]["query"] == 'abs:"reinforcement learning"'
    # a field's word is not the start of a phrase: the next word is completed alone
    assert _ask(sc, "abs:reinforcement le")[0]["query"] == "abs:reinforcement learning"


def test_acronyms_say_what_they_stand_for(sc):
    got = {g["label"]: g for g in _ask(sc, "ll")}
    assert got["LLMs"]["kind"] == "acronym"
    assert got["LLMs"]["note"].startswith("large language models · ")


def test_chinese_words_the_dictionary_knows_and_the_store_holds(sc, web_dir):
    got = _ask(sc, "扩散", "zh")
    n = _titles_with(web_dir, "diffusion models")
    assert got[0] == {"query": "扩散模型", "label": "扩散模型", "kind": "zh", "note": f"diffusion models · {n} 篇论文"}
    assert all(g["kind"] == "zh" and g["label"].startswith("扩散") for g in got)
    # the end of a longer run of characters, the rest of the query kept
    assert _ask(sc, "robot 扩散", "en")[0]["query"] == "robot 扩散模型"
    assert _ask(sc, "强化学", "en")[0]["query"] == "强化学习"
    # tungsten (钨) is in the dictionary, not in this store's titles: nothing to offer
    assert _ask(sc, "钨", "zh") == []


@pytest.mark.parametrize(
    "q",
    ["spec*", 'spec"ul', "NEAR(spec", "{title} : spec", "spec-", "-spec", "(spec", "AND", "ti:(", "ti:", 'abs:"',
     "\\", "扩散'", "扩散*", "ｓｐｅｃ", "Spéc", "x" * 500, "a b c d e f g", "大语言模型 推理 扩"],
)  # fmt: skip
def test_any_text_gets_queries_that_parse(sc, q):
    for s in _ask(sc, q):
        assert (s["kind"] == "syntax" and s["query"].endswith(":")) or parses(s["query"]), (q, s)


# what a search box receives: words, field prefixes, quotes, operators, Chinese, other scripts
PIECES = ["spec", "ul", "large", " ", "-", '"', "ti:", "abs:", "au:", "(", ")", "*", "扩散", "推", "ﬁ", "é", "ß"]
TYPED = hs.lists(
    hs.sampled_from(PIECES) | hs.text(max_size=4),
    max_size=8,
).map("".join)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=TYPED)
def test_whatever_is_typed_gets_an_answer(sc, q):
    for s in _ask(sc, q):
        assert (s["kind"] == "syntax" and s["query"].endswith(":")) or parses(s["query"]), (q, s)


def test_a_phrase_stays_inside_a_run_of_words():
    got = _title_phrases("Speculative Decoding: Fast, LLM-Based Serving of the Models", ["specul"])
    assert got == {"speculative": "Speculative", "speculative decoding": "Speculative Decoding"}
    got = _title_phrases("Fast, LLM-Based Serving of the Models", ["llm-b"])
    # two words past the one typed at most, never ending on a stopword ("serving of")
    assert got == {"llm-based": "LLM-Based", "llm-based serving": "LLM-Based Serving"}
    # a question's filler ("can") is no suggestion alone, only inside a phrase
    got = _title_phrases("How Can Models Learn", ["ca"])
    assert got == {"can models": "Can Models", "can models learn": "Can Models Learn"}
