"""Chinese queries over English papers: the dictionary's interface and what the engine does
with it (docs/search.md, "Free words"); and over papers written in Chinese, by their own words
(docs/search.md, "Papers written in Chinese")."""

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from paperdex.search import Searcher
from paperdex.store import PrefixCounts
from paperdex.text import zh
from paperdex.web.render import hit_json, why_words

SAMPLE_ZH = Path(zh.__file__).parents[1] / "data" / "sample-queries-zh.jsonl"


def test_concepts_are_alternatives_per_chinese_word():
    got = zh.concepts("权重衰减")
    assert got and all(isinstance(alts, list) and alts for alts in got)
    assert any("decay" in alt for alts in got for alt in alts)
    assert zh.concepts("no chinese here") == []


def test_compounds_the_dictionary_lacks_back_off_to_their_parts():
    got = [alt for alts in zh.concepts("模型量化") for alt in alts]
    assert any("quantiz" in a for a in got)


def test_a_phrase_listed_by_its_halves_needs_both_halves():
    """小目标检测 (small-target detection): the learned dictionary lists "small target | detection",
    the translations of its two halves; a paper that only says "detection" does not hold it."""
    got = zh.concepts("小目标检测")
    assert len(got) == 2
    assert any("small target" in alts for alts in got) and any("detection" in alts for alts in got)
    assert not any("small target" in alts and "detection" in alts for alts in got)


def test_chinese_query_finds_english_paper_lexically(searcher):
    res = searcher.search("权重衰减", mode="lexical", per_page=5)
    assert res.hits and "weight decay" in res.hits[0].paper.title.lower()
    assert any("<mark>" in hit_json(h)["title_html"] for h in res.hits)  # translations are highlighted


def test_mixed_query_keeps_english_words(searcher):
    mixed = searcher.search("weight 衰减", mode="lexical", per_page=50)
    assert mixed.total > 0
    for h in mixed.hits:
        text = (h.paper.title + " " + h.paper.abstract).lower()
        assert "weight" in text


def test_chinese_queries_use_their_own_fusion(ro_store):
    """A Chinese query is ranked with its class's dense weight, an English one with its own:
    at weight 0 a Chinese hybrid ranking is by words alone (each score its BM25F over the
    best), at weight 1 meaning moves it, and neither setting moves an English query."""
    from paperdex.search import FUSION, Searcher

    def hits(weights, q):
        return Searcher(ro_store, fusion={**FUSION, **weights}).search(q, per_page=10, facets=False).hits

    zh, en = "权重衰减 训练", "weight decay training"
    words_only = hits({("zh", "keywords"): 0.0}, zh)
    best = words_only[0].lexical_score
    assert all(h.score == pytest.approx((h.lexical_score or 0) / best) for h in words_only)
    assert [h.lexical_score for h in words_only] == sorted((h.lexical_score or 0 for h in words_only), reverse=True)
    ids = [h.paper.id for h in words_only]
    assert [h.paper.id for h in hits({("zh", "keywords"): 1.0}, zh)] != ids
    same = [[h.paper.id for h in hits({("zh", "keywords"): w}, en)] for w in (0.0, 1.0)]
    assert same[0] == same[1] == [h.paper.id for h in hits({}, en)]


def test_unknown_chinese_word_says_so(searcher):
    res = searcher.search("鲸鱼", mode="lexical")
    assert res.total == 0 and any("鲸鱼" in n for n in res.notices)


def test_dictionary_can_be_switched_off(ro_store):
    assert zh.concepts("权重衰减", enabled=False) == []
    assert Searcher(ro_store, zh_dict=False).search("权重衰减", mode="lexical").total == 0


def test_segmenting_chinese_prints_no_warning():
    """jieba imports pkg_resources, whose deprecation warning (a UserWarning) reached every CLI
    run with a Chinese query; a fresh interpreter, since this one may have imported jieba
    already, with the warnings a user sees. (Not `-W error` for every class: in a venv
    installed without bytecode, jieba's own source compiles with invalid-escape warnings that
    Python hides from users.)"""
    import subprocess
    import sys

    code = "from paperdex.text import zh; print(zh.concepts('扩散模型')[0])"
    cmd = [sys.executable, "-W", "error::UserWarning", "-c", code]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stderr[-2000:]


def test_the_cached_segmenter_segments_as_the_one_built_in_memory(tmp_path, monkeypatch):
    """The prefix dictionary read lazily from the cache file must give the very segmentation
    of the dictionary built in memory (relevance figures depend on it): every query of the
    sample's Chinese set, and mixed text."""
    import json
    import re
    from pathlib import Path

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # platformdirs' cache dir on Linux
    built = zh._tokenizer.__wrapped__(zh.DICT, PrefixCounts)  # no cache file yet: built in memory, then saved
    assert isinstance(built.FREQ, dict)
    assert len(list(tmp_path.glob("paperdex/zh-segmenter-*.sqlite"))) == 1
    lazy = zh._tokenizer.__wrapped__(zh.DICT, PrefixCounts)
    assert isinstance(lazy.FREQ, PrefixCounts) and lazy.total == built.total

    queries = Path(zh.__file__).parents[1] / "data" / "sample-queries-zh.jsonl"
    texts = [json.loads(x)["query"] for x in queries.read_text(encoding="utf-8").splitlines() if x.strip()]
    texts += ["扩散模型 图像编辑", "大语言模型的推理能力", "用 transformer 做 3D 点云分割", "模型量化与剪枝"]
    runs = [r for t in texts for r in re.findall(r"[\u4e00-\u9fff]+", t)]
    assert len(runs) > 50
    for run in runs:
        assert list(lazy.cut(run)) == list(built.cut(run)), run


def test_a_modality_to_a_modality_reads_as_one_concept_however_it_is_written(searcher):
    """文本生成视频, 文生视频 and 文本到视频 all mean text-to-video: one concept, "text to video",
    not "text generation" beside "video" (bench/train_zh_dict.py composes the family), so the
    three spellings list the same papers, a text-to-video one first; 图生视频 is image-to-video,
    not "video" alone."""
    spellings = ["文本生成视频", "文生视频", "文本到视频"]
    assert {zh.concepts(typed)[0][0] for typed in spellings} == {"text to video"}
    lists = [[h.paper.id for h in searcher.search(t, mode="lexical", facets=False).hits] for t in spellings]
    assert lists[0] and lists[0] == lists[1] == lists[2]
    assert re.search(r"text[- ]to[- ]video", searcher.store.get(lists[0][0]).title.lower())
    assert zh.concepts("图生视频")[0][0] == "image to video"
    # a learned spelling of the family also reads as the pair's acronym, as papers write it
    assert "t2i" in zh.concepts("文生图")[0] and "t2v" in zh.concepts("文生视频")[0]


def test_large_model_reads_as_llm(searcher):
    """大模型 ("large model") is what Chinese says for an LLM: it finds the papers that say "LLM"
    or "large language model", where the learned dictionary alone dropped the word."""
    assert zh.concepts("大模型 推荐")[0][:2] == ["large language model", "llm"]
    # written with what is done to it, it stays whole: not 大 | 模型量化 ("model quantization")
    for typed in ("大模型量化", "大模型微调", "大模型训练数据"):
        assert zh.concepts(typed)[0][:2] == ["large language model", "llm"], typed
    # and 量化 typed as a topic is quantization, not the verb "quantify"
    assert zh.concepts("大模型量化")[1][0] == "quantization"
    hits = searcher.search("大模型", mode="lexical", per_page=10, facets=False).hits
    assert hits and all(
        re.search(r"\bllms?\b|large language model", (h.paper.title + " " + h.paper.abstract).lower()) for h in hits
    )


def test_a_framing_word_does_not_take_the_next_words_characters():
    """基于 ("based on") opens phrases the summaries write often (基于扩散, "diffusion-based"); as
    dictionary words they cut 基于扩散策略 as 基于扩散 | 策略 ("diffusion", "strategy") where the
    researcher asked for a diffusion policy. And a word whose readings each gave way to another
    (小目标: small, small target, small target detection) still reads as its best one."""
    assert ["diffusion policy"] in zh.concepts("基于扩散策略的机器人操作")
    assert zh.concepts("小目标")[0][0] == "small target"


def test_work_in_a_question_is_set_aside_and_a_workflow_stays_one():
    """工作 in 上下文学习的工作机制 (how in-context learning works) is a question's frame word, not
    "workflows", which the learner took from 工作流; 工作流 itself still reads as a workflow."""
    assert zh.concepts("上下文学习的工作机制")[1] == ["work"]
    assert zh.concepts("工作流") == [["workflow"]]


def test_text_in_a_question_reads_as_text():
    """文字 in a question is text (用文字指令编辑图像: edit an image by a text instruction); the
    summaries the dictionary learned from write it of writing systems ("scripts")."""
    assert zh.concepts("用文字指令编辑图像")[0] == ["text"]


def test_over_as_a_prefix_and_equivariant_are_read():
    """过 opening a word is "over-" (过平滑: over-smoothing, 过采样: oversampling), not the aspect
    particle the learner once dropped it as, leaving "smooth" and "samples"; 等变 is
    "equivariant", where jieba's 等 | 变 left nothing to read."""
    assert zh.concepts("缓解图神经网络的过平滑")[-1] == ["over smoothing"]
    assert ["oversampling"] in zh.concepts("不平衡数据的过采样方法")
    assert zh.concepts("等变神经网络")[0] == ["equivariant", "equivariance"]
    assert zh.concepts("奖励模型过优化")[1] == ["overoptimization"]


def test_a_hyphenated_term_is_not_cut_at_its_function_word():
    """The learner read "end-to-end speech" as holding the phrase "end speech", so 端到端语音对话
    (end-to-end spoken dialogue) searched for "end speech" and IWSLT submissions; and "state-of-
    the-art performance" gave 先进性能 "art performance". End-to-end stays a concept of its own,
    speech another, and no reading holds a phrase cut out of such a term."""
    got = zh.concepts("端到端语音对话大模型")
    assert got[:3] == [["end to end"], ["speech"], ["conversational", "dialogue"]]
    readings = [alt for alts in zh.dictionary()[0].values() for alt in alts]
    assert "end speech" not in readings and "art performance" not in readings


def test_an_earlier_dictionarys_cache_file_goes_after_a_week(tmp_path, monkeypatch):
    """Each dictionary or jieba version has its own 10 MB segmenter cache: when a new one is
    written, another version's file unwritten for over a week is removed, a recent one kept
    (that version may still be installed beside this one)."""
    import os
    import time

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = tmp_path / "paperdex"
    cache.mkdir()
    stale, recent = cache / "zh-segmenter-0000000000000000.sqlite", cache / "zh-segmenter-1111111111111111.sqlite"
    for f, age_days in ((stale, 8), (recent, 1)):
        f.write_bytes(b"x")
        os.utime(f, (time.time() - age_days * 86400,) * 2)
    zh._tokenizer.__wrapped__(zh.DICT, PrefixCounts)
    left = sorted(p.name for p in cache.glob("zh-segmenter-*.sqlite"))
    assert recent.name in left and stale.name not in left and len(left) == 2


ZH_PAPERS = [
    {
        "id": "zh-1",
        "title": "基于扩散模型的图像编辑方法",
        "abstract": "本文提出一种基于扩散模型的图像编辑方法，在多个数据集上取得了最好的效果。",
        "authors": ["李四", "王五"],
        "published": "2025-05-01",
        "categories": ["cs.CV"],
    },
    {  # 扩散 and 模型, never 扩散模型 written together; 扩散 in its abstract only
        "id": "zh-2",
        "title": "一种新的模型压缩方法",
        "abstract": "我们研究扩散的模型，并压缩它。",
        "authors": ["张三"],
        "published": "2025-05-03",
        "categories": ["cs.LG"],
    },
]


@pytest.fixture
def zh_searcher(store, tmp_path):
    from paperdex.ingest import ingest_file

    path = tmp_path / "zh.jsonl"
    path.write_text("\n".join(json.dumps(p, ensure_ascii=False) for p in ZH_PAPERS) + "\n", encoding="utf-8")
    ingest_file(store, path)  # among the fixture store's 314 English papers
    return Searcher(store)


def _ids(res) -> list[str]:
    return [h.paper.id for h in res.hits]


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_a_paper_written_in_chinese_is_found_by_its_own_words(zh_searcher, mode):
    """扩散模型 found zh-1 only as a "related" paper close in meaning, ti:扩散 and "图像编辑" not at
    all: a title's Chinese was one word to the index. Now each is a match, counted and marked."""
    english = zh_searcher.search("权重衰减", mode="lexical", per_page=5)  # a Chinese query still reads English
    assert english.hits and "weight decay" in english.hits[0].paper.title.lower()
    for q in ["扩散模型", "ti:扩散", '"图像编辑"', "图像编辑方法"]:
        res = zh_searcher.search(q, mode=mode, per_page=50)
        matched = [h.paper.id for h in res.hits if h.tier == "match"] if mode == "hybrid" else _ids(res)
        assert "zh-1" in matched, q
        assert res.total >= len(matched)
        hit = next(h for h in res.hits if h.paper.id == "zh-1")
        shown = hit_json(hit)
        assert "<mark>" in shown["title_html"] + shown["snippet_html"], q
    res = zh_searcher.search("扩散模型", mode="lexical", per_page=50)
    zh1 = next(h for h in res.hits if h.paper.id == "zh-1")
    assert hit_json(zh1)["title_html"] == "基于<mark>扩散模型</mark>的图像编辑方法"
    assert why_words(zh1, res.plan)["in_title"] == 1  # "why": its title holds the query's one concept
    assert "zh-2" not in _ids(res)  # 扩散 and 模型 apart are not 扩散模型
    assert "zh-2" not in _ids(zh_searcher.search("ti:扩散", mode="lexical", per_page=50))  # in its abstract only
    assert {"zh-1", "zh-2"} <= set(_ids(zh_searcher.search("abs:扩散", mode="lexical", per_page=50)))
    # no English word is known for 基于: as written, where papers hold it, and said where none does
    unknown = zh_searcher.search("ti:基于", mode="lexical", per_page=50)
    assert _ids(unknown) == ["zh-1"] and not unknown.notices
    nowhere = zh_searcher.search("ti:不存在", mode="lexical", per_page=50)
    assert nowhere.total == 0 and any("不存在" in n for n in nowhere.notices)
    assert "zh-1" not in _ids(zh_searcher.search("diffusion", mode="lexical", per_page=50))


def test_a_chinese_word_changes_no_score_where_no_paper_holds_it(ro_store):
    """The Chinese word a concept reads is an alternative of its own (`Concept.zh`): over the
    fixture's English papers every concept's mask and scores are those of its English alone, to
    the bit, so an English store ranks a Chinese query as before."""
    import numpy as np

    from paperdex.search.corpus import StoreCorpus, lex_index
    from paperdex.search.masks import Eval
    from paperdex.search.planning import plan

    ix = lex_index(ro_store)
    queries = [json.loads(line)["query"] for line in SAMPLE_ZH.read_text(encoding="utf-8").splitlines()[:40]]
    seen = 0
    for q in queries:
        for c in plan(q).concepts:
            if not c.zh:
                continue
            seen += 1
            ev = Eval(ix, StoreCorpus(ro_store))
            english = replace(c, zh="")
            assert np.array_equal(ev.concept_mask(c), ev.concept_mask(english)), q
            # summed onto other concepts' scores, where the order of float sums shows
            a = np.random.default_rng(0).random(ix.n, dtype=np.float32)
            b = a.copy()
            ev.concept_score(c, a)
            ev.concept_score(english, b)
            assert a.tobytes() == b.tobytes(), q
    assert seen > 20


def test_a_chinese_word_is_marked_where_it_is_written_inside_a_run():
    from paperdex.search import mark

    got = mark("Muon优化器: 基于扩散模型的扩散", frozenset({"扩散", "扩散模型", "muon"}))
    assert [seg for seg, hit in got if hit] == ["Muon", "扩散模型", "扩散"]  # overlapping words one mark
    assert mark("diffusion models", frozenset({"扩散模型"})) == [("diffusion models", False)]


def test_a_chinese_paper_scores_as_an_english_one_holding_the_word(zh_searcher):
    """Among English papers a Chinese word's bigrams are rare: summed at full weight their IDF put
    zh-1, which holds 数据集 once, first of 116 for `数据集` (15.6 against the best English
    paper's 2.0). Weighed by the English reading's IDF (`masks.zh_weight`), it is matched and
    counted, and ranks as a paper holding "dataset" would."""
    res = zh_searcher.search("数据集", mode="lexical", per_page=200)
    ids = _ids(res)
    assert "zh-1" in ids and ids[0] != "zh-1"
    assert next(h.score for h in res.hits if h.paper.id == "zh-1") <= res.hits[0].score


def test_a_chinese_paper_writing_the_phrase_ranks_with_english_ones_writing_it(zh_searcher):
    """扩散模型 asks for "diffusion model" standing together, and the phrase bonus raised the English
    papers writing it; zh-1, which writes 扩散模型 itself, was scored as a paper holding the words
    apart (39th of 46, among those). Its Chinese word now stands together as the phrase does."""
    res = zh_searcher.search("扩散模型", mode="lexical", per_page=200)
    together = [
        re.search(r"diffusion[- ]models?\b", f"{h.paper.title} {h.paper.abstract}".lower()) is not None
        or h.paper.id == "zh-1"
        for h in res.hits
    ]
    assert "zh-1" in _ids(res) and not together[-1]
    assert together == sorted(together, reverse=True)  # every paper writing the phrase before any holding it apart
