"""`au:` with a Chinese name finds the papers that spell it in pinyin (text/names.py), on the
fixture store's real author lists."""

from paperdex.text.names import matched, orders, readings


def authors_of(res):
    return [a for h in res.hits for a in h.paper.authors]


def test_a_name_reads_as_papers_spell_it():
    assert readings("何恺明") == ["Kaiming He", "Kai Ming He", "He Kaiming", "Kai Ming Ho"]
    assert readings("欧阳娜娜")[0] == "Nana Ouyang"  # a two-character family name stays whole
    assert "Le Zeng" in readings("曾乐")  # 曾 as a family name is Zeng, as a word ceng
    assert "Bu Lyu" in readings("吕布") and "Bu Lu" in readings("吕布")  # ü as papers write it
    assert readings("Kaiming He") == [] and readings("深度学习模型") == [] and readings("何恺明abc") == []


def test_au_with_a_chinese_name_finds_its_pinyin_spelling(searcher):
    typed = searcher.search('au:"Ziwei Liu"', per_page=50)
    res = searcher.search("au:刘子玮", per_page=50)
    assert res.total == typed.total == 2
    assert {h.paper.id for h in res.hits} == {h.paper.id for h in typed.hits}
    assert "Ziwei Liu" in authors_of(res) and not any(a in authors_of(res) for a in ("Ziyi Liu", "Xinwang Liu"))
    assert any("刘子玮" in n and "Ziwei Liu" in n for n in res.notices)
    assert not any("no English word" in n for n in res.notices)


def test_hyphenated_and_polyphonic_family_names(searcher):
    assert "Song-Chun Zhu" in authors_of(searcher.search("au:朱松纯", per_page=50))  # Song-Chun: two words
    assert "Chenxi Xie" in authors_of(searcher.search("au:解晨曦", per_page=50))  # 解 as a family name: Xie
    assert "Ming-Hsuan Yang" in authors_of(searcher.search("au:杨明轩", per_page=50))  # Taiwan's Wade-Giles
    assert "Chien-Chih Wang" in authors_of(searcher.search("au:王建志", per_page=50))


def test_a_name_no_paper_has_finds_nothing_and_says_how_it_was_read(searcher):
    res = searcher.search("au:司马相如", per_page=50)
    assert res.total == 0 and res.hits == []
    assert any("Xiangru Sima" in n for n in res.notices)


def test_a_name_typed_either_way_round():
    assert orders("He Kaiming") == ["He Kaiming", "Kaiming He"]
    assert orders("Yang Ming-Hsuan")[-1] == "Ming-Hsuan Yang"  # a hyphenated given name stays one part
    assert orders("Kaiming") == []
    two = ["Andrea Stocco", "Paolo Tonella"]
    assert matched(two, [["tonella", "paolo"], ["paolo", "tonella"]]) == ["Paolo Tonella"]
    assert matched(two, [["stocco", "paolo"]]) == []


def test_au_family_name_first_finds_the_paper_written_given_name_first(searcher):
    res = searcher.search('au:"Liu Ziwei"', per_page=50)
    assert {h.paper.id for h in res.hits} == {h.paper.id for h in searcher.search('au:"Ziwei Liu"', per_page=50).hits}
    assert res.total == 2 and all("Ziwei Liu" in h.paper.authors for h in res.hits)


def test_a_chinese_name_typed_as_a_word_offers_the_author_search(searcher):
    res = searcher.search("刘子玮 diffusion", per_page=5)
    (offer,) = [n for n in res.notices if "au:刘子玮" in n]
    assert "au:刘子玮 diffusion" in offer
    (offer,) = [n for n in searcher.search("au:刘子玮 刘子玮", per_page=5).notices if "search “" in n]
    assert "“au:刘子玮 au:刘子玮”" in offer  # the name typed alone is the one rewritten
    assert not [n for n in searcher.search("司马相如", per_page=5).notices if "au:" in n]  # no such author here
    assert not [n for n in searcher.search("改进 扩散模型", per_page=5).notices if "au:" in n]
