from paperdex import query as Q
from paperdex import zh
from paperdex.search import FUSION


def test_translate_segments_and_looks_up():
    assert zh.translate("权重衰减") == ["weights", "decay"]
    assert zh.translate("no chinese here") == []


def test_expand_keeps_english_words_and_adds_translations_as_free_words():
    tree = zh.expand(Q.parse("Muon 优化器 收敛"))
    c = Q.compile_query(tree)
    assert '"muon"' in c.rank and '"convergence"' in c.rank
    assert c.dense_text == "Muon 优化器 收敛"  # the embedding model sees the query as typed


def test_expand_leaves_fielded_and_excluded_words_alone():
    tree = zh.expand(Q.parse("ti:扩散 -机器人"))
    assert len(tree.children) == 2


def test_chinese_query_finds_english_paper_lexically(searcher):
    res = searcher.search("权重衰减", mode="lexical", per_page=5)
    assert res.hits and "weight decay" in res.hits[0].paper.title.lower()


def test_chinese_queries_use_their_own_fusion(searcher):
    k, w_lex, w_dense = FUSION["zh"]
    res = searcher.search("权重衰减 训练", per_page=20)
    for h in res.hits:
        want = (w_lex / (k + h.lexical_rank) if h.lexical_rank else 0) + (
            w_dense / (k + h.dense_rank) if h.dense_rank else 0
        )
        assert abs(h.score - want) < 1e-9


def test_dictionary_can_be_switched_off(monkeypatch):
    monkeypatch.setattr(zh, "ENABLED", False)
    assert zh.translate("权重衰减") == []
