"""The pages of issue 11 without a browser: signals, links, translated messages, the home and
API pages, daily views and their counts, and the .json twin of each view."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode, urlparse

from webstore import SIGNALS_ID, SIGNALS_WEEK

from paperdex.web import i18n


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def _card(html: str, pid: str) -> str:
    return html[html.index(f'data-id="{pid}"') :].split("</article>")[0]


def test_card_carries_every_signal(client):
    card = _card(client.get("/", params={"q": "optimistic exploration linear MDP"}).text, SIGNALS_ID)
    assert 'href="https://huggingface.co/papers/2599.00101" rel="noopener nofollow"' in card
    assert "▲ 42" in card and "3 comments" in card and "★ 2.1k" in card
    assert 'href="https://example.org/optimistic" rel="noopener nofollow"' in card  # project page
    assert 'href="/?q=venue%3A%22ICML+2025%22"' in card and ">Spotlight<" in card
    assert 'href="/?q=area%3A%22Theory+%C2%B7+Reinforcement+Learning+and+Planning%22"' in card
    assert 'href="/?q=au%3A%22Bo+Lindqvist%22"' in card and 'href="/?q=cat%3Acs.LG"' in card
    assert "Accepted at ICML 2025" in card  # the arXiv comment
    assert '<span class="chip light">68T05</span>' in card  # an MSC code: shown, not a link
    for a in re.findall(r'<a [^>]*href="http[^"]*"[^>]*>', card):
        assert 'rel="noopener nofollow"' in a


def test_matched_category_first(client):
    card = _card(client.get("/", params={"q": "cat:cs.LG mixture-of-experts syntax"}).text, "2599.00103")
    chips = re.findall(r'class="chip cat[^"]*"[^>]*>([^<]+)<', card)
    assert chips == ["cs.LG", "cs.CL"]  # the stored order is cs.CL, cs.LG, I.2.7


def test_chinese_messages_and_authors(client):
    zh = client.get("/", params={"q": 'ti:"unclosed', "lang": "zh"})
    assert zh.status_code == 400 and "引号不成对" in zh.text and "at character" not in zh.text
    zh = client.get("/", params={"q": "zebrafinch xqzvbn", "lang": "zh"}).text
    assert "没有论文包含" in zh
    zh = client.get("/", params={"q": "Rectified Diffusion image editing", "lang": "zh"}).text
    assert "Lena Vogel, Ming Zhao 等" in _text(_card(zh, "2599.00102"))


def test_messages_translate_by_code():
    from paperdex.messages import message

    for m in [message("no_close_matches"), message("not_in_store", id="2501.00001")]:
        assert i18n.message("zh", m) != m
    assert i18n.message("en", message("no_close_matches")) == "no close matches"
    assert i18n.message("zh", message("store_empty")) == "库中还没有论文"  # feed.py's notice
    assert i18n.message("zh", "Not Found") == "未找到"  # Starlette's plain text
    assert i18n.message("zh", "no close matches") == "no close matches"  # plain text of a coded message: as is


def test_home_page(client):
    html = client.get("/").text
    assert "This store holds 320 papers, dated 2025-03-19 to 2026-07-01." in html
    assert f'href="/?{urlencode({"q": "扩散模型 图像编辑"})}"' in html
    assert 'href="/?q=ti%3A%22reinforcement+learning%22+cat%3Acs.LG"' in html
    assert "本库共 320 篇论文" in client.get("/", params={"lang": "zh"}).text
    assert 'data-testid="home"' not in client.get("/", params={"q": "x"}).text


def test_api_page_uses_this_server_and_a_real_paper(client):
    html = client.get("/api/docs", headers={"host": "localhost:9123"}).text
    assert "curl 'http://localhost:9123/api/search?q=weight+decay'" in html
    pid = re.search(r"curl 'http://localhost:9123/api/papers/([^'/]+)'", html).group(1)
    assert client.get(f"/api/papers/{pid}").status_code == 200  # a paper this store has
    zh = client.get("/api/docs", params={"lang": "zh"}).text
    assert "检索论文" in zh and "参数" in zh


def test_week_view_by_upvotes_with_counts_that_follow_the_filter(client):
    d = client.get("/daily.json", params={"day": SIGNALS_WEEK, "view": "week", "sort": "upvotes"}).json()
    assert (d["start"], d["end"]) == ("2025-03-24", "2025-03-30")
    assert [p["id"] for p in d["papers"][:3]] == ["2599.00102", SIGNALS_ID, "2599.00103"]
    cats = {c["value"]: c["count"] for c in d["categories"]}
    assert "cs.CV" in cats and not set(cats) & {"68T05", "I.2.7"}  # only real arXiv categories
    cv = client.get("/daily.json", params={"day": SIGNALS_WEEK, "view": "week", "category": "cs.CV"}).json()
    assert cv["total"] == cats["cs.CV"] < d["total"]
    html = client.get("/daily", params={"day": SIGNALS_WEEK, "view": "week", "category": "cs.CV"}).text
    assert f"{cv['total']} of {d['period_total']} papers in cs.CV" in html
    month = client.get("/daily.json", params={"day": SIGNALS_WEEK, "view": "month"}).json()
    assert (month["start"], month["end"]) == ("2025-03-01", "2025-03-31") and month["total"] > d["total"]


def test_trending_is_the_last_week_by_upvotes(client):
    d = client.get("/daily.json", params={"view": "trending"}).json()
    assert d["end"] == "2026-07-01" and [p["id"] for p in d["papers"]] == ["2599.00104"]
    assert "Trending papers" in client.get("/daily", params={"view": "trending"}).text


def test_search_json_is_the_page_view(client):
    params = {"q": "zebrafinch", "author": "Solo Author"}
    page = client.get("/", params=params).text
    js = client.get("/search.json", params=params).json()
    assert [h["id"] for h in js["hits"]] == re.findall(r'<article class="card" data-id="([^"]+)"', page)
    assert js["total"] == 1
    bad = client.get("/search.json", params={"q": '"unclosed'})
    assert bad.status_code == 400 and "unbalanced quote" in bad.json()["error"]["message"]


def test_back_link_keeps_state(client):
    html = client.get("/", params={"q": "learning", "category": "cs.CV", "sort": "newest", "page": "2"}).text
    link = re.search(r'<h2 class="card-title"[^>]*><a href="([^"]+)"', html).group(1)
    assert link.endswith("?q=learning&amp;category=cs.CV&amp;sort=newest&amp;page=2")
    paper = client.get(link.replace("&amp;", "&")).text
    pid = link.split("?")[0].removeprefix("/paper/")
    # back to the same page of results, scrolled to the card that was opened
    back = f'href="/?q=learning&amp;category=cs.CV&amp;sort=newest&amp;page=2#p-{pid}" data-testid="back"'
    assert back in paper and f'id="p-{pid}"' in html
    daily = client.get("/daily", params={"day": SIGNALS_WEEK, "view": "week"}).text
    link = re.search(r'<h2 class="card-title"[^>]*><a href="([^"]+)"', daily).group(1).replace("&amp;", "&")
    pid = link.split("?")[0].removeprefix("/paper/")
    assert f'href="/daily?day=2025-03-24&amp;view=week#p-{pid}" data-testid="back"' in client.get(link).text


# --- issue 23: weight, suggestions, hints, one translation table ----------------------------------


def test_pages_are_compressed_and_load_katex_only_for_math(client):
    r = client.get("/", params={"q": "learning"}, headers={"Accept-Encoding": "gzip"})
    assert r.headers["content-encoding"] == "gzip"
    js = client.get("/static/katex/katex.min.js", headers={"Accept-Encoding": "gzip"})
    assert js.headers["content-encoding"] == "gzip"
    # a page with math its text cannot say carries KaTeX in its head, before app.js; one without does not
    paper = client.get(f"/paper/{SIGNALS_ID}").text
    head = paper.split("</head>")[0]
    assert head.index("/static/katex/katex.min.js") < head.index("/static/app.js")
    assert head.count('blocking="render"') == 2  # the first frame waits for the typesetting: nothing moves
    assert "katex.min.css" not in head  # MathML output: no stylesheet, no web fonts
    assert "katex" not in client.get("/daily", params={"day": "2025-03-27"}).text.split("</head>")[0]


def test_suggestions_come_from_the_store(client):
    got = client.get("/api/suggest", params={"q": "au:lindq"}).json()["suggestions"]
    assert got[0] == {"query": 'au:"Bo Lindqvist"', "label": "Bo Lindqvist", "kind": "author", "note": "1 paper"}
    got = client.get("/api/suggest", params={"q": "robot 机器人", "lang": "zh"}).json()["suggestions"]
    assert {"query": "robot cat:cs.RO", "label": "cat:cs.RO", "kind": "category", "note": "机器人学"} in got
    got = client.get("/api/suggest", params={"q": 'ti:"weight decay" ca'}).json()["suggestions"]
    assert got[0]["query"] == 'ti:"weight decay" cat:'
    assert client.get("/api/suggest", params={"q": "x" * 501}).status_code == 400


def test_no_result_hints_are_queries_from_the_tree(client):
    from paperdex.search import query as Q
    from paperdex.web import render

    html = client.get("/", params={"q": 'ti:"weight decay" cat:cs.XQ'}).text
    hints = re.findall(r'<a href="([^"]+)" data-testid="hint-fewer">', html)
    assert len(hints) == 2
    for href in hints:
        q = parse_qs(urlparse(href.replace("&amp;", "&")).query)["q"][0]
        Q.parse(q)  # parses
        assert client.get(href.replace("&amp;", "&")).status_code == 200
    queries = [
        'ti:"weight decay" cat:cs.LG',
        'a OR b -c venue:"Neur IPS" date:2025..2026',
        "ti:(x OR y) abs:gra* 大模型",
    ]
    for q in queries:
        tree = Q.parse(q)
        assert Q.parse(render.unparse(tree)) == tree, q
    assert render.fewer_hints("-a b") == [("-a", "b")]  # "-a" alone finds nothing: not offered


def test_every_template_key_is_translated():
    """Every t('key') the templates use has its Chinese text in the one table."""
    from pathlib import Path

    from paperdex.messages import MESSAGES
    from paperdex.web import i18n, render

    keys = set()
    for f in Path(i18n.__file__).parent.joinpath("templates").glob("*.html"):
        keys |= set(re.findall(r"\bt\('([a-z_]+)'", f.read_text()))
    keys = {k for k in keys if not k.endswith("_")}  # t('decision_' ~ value): the values below
    keys |= {f"decision_{d}" for d in render.DECISIONS} | {f"presentation_{p}" for p in render.PRESENTATIONS}
    keys |= {f"layout_{x}" for x in ("cards", "compact")} | {f"sort_{x}" for x in ("top", "newest", "upvotes", "stars")}
    missing = sorted(k for k in keys if not MESSAGES.get(k, {}).get("zh"))
    assert not missing, missing


def test_daily_json_says_what_ranked_it(client):
    d = client.get("/daily.json", params={"day": "2025-03-24"}).json()
    assert d["sort"] == "top" and d["ranked_by"] == ["upvotes", "listing"]
    assert d["papers"][0]["id"] == "2599.00102" and d["trending"] == ["2599.00102"]
    listed = client.get("/daily.json", params={"day": "2025-03-24", "sort": "newest"}).json()
    assert listed["papers"][-1]["id"] == "2599.00102"


def test_a_typo_offers_the_fixed_query_as_a_link(client):
    page = client.get("/?q=tranformer+attention")
    assert page.status_code == 200
    link = re.search(r'<a href="([^"]+)" data-testid="did-you-mean">([^<]+)</a>', page.text)
    assert link and link.group(1) == "/?q=transformer%20attention" and "transformer attention" in link.group(2)
    fixed = client.get(link.group(1))
    assert fixed.status_code == 200 and 'data-testid="did-you-mean"' not in fixed.text
    assert "did you mean “transformer”?" in client.get("/api/search?q=tranformer").json()["notices"]


def test_the_api_page_in_chinese_says_every_endpoint_in_chinese(client):
    """The library's routes joined /openapi.json, and so /api/docs: in Chinese, each summary,
    description and parameter they add is in Chinese too (messages.toml, [outside])."""
    from paperdex.messages import MESSAGES

    texts = []
    for item in client.get("/openapi.json").json()["paths"].values():
        for op in item.values():
            texts += [op.get("summary"), op.get("description")] + [
                p.get("description") for p in op.get("parameters", [])
            ]
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
            texts += [v.get("description") for v in body.get("properties", {}).values()]
    assert [t for t in texts if t and MESSAGES.get(t, {}).get("en") != t] == []
    zh = client.get("/api/docs", params={"lang": "zh"}).text
    assert "把论文保存到标签" in zh and "POST" in zh and "/api/tags/{name}/papers" in zh
