"""The one table of messages and interface labels (paperdex/messages.toml, read by
paperdex/messages.py): complete in both languages with the same fields, every producer naming
a code it has and the fields its templates need, and the Chinese the pages show."""

from __future__ import annotations

import ast
import html
import pickle
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from paperdex.discover import digest as D
from paperdex.discover import feed, library
from paperdex.discover import recommend as R
from paperdex.discover import summaries as S
from paperdex.messages import LANGS, MESSAGES, Message, fields, message, text
from paperdex.paper import Paper
from paperdex.search import query as Q
from paperdex.service import ServiceError
from paperdex.web import i18n
from paperdex.web.app import create_app

PACKAGE = Path(__file__).resolve().parent.parent / "paperdex"


def test_every_code_has_both_languages_with_the_same_fields():
    for code, entry in MESSAGES.items():
        assert set(entry) == set(LANGS), code
        assert all(entry[lang].strip() for lang in LANGS), code
        assert sorted(fields(entry["zh"])) == sorted(fields(entry["en"])), code


def _message_calls() -> list[tuple[str, int, str, set[str]]]:
    """Every message("code", field=...) call in the package: file, line, code, fields given."""
    calls = []
    for f in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "message" and node.args):
                continue
            arg = node.args[0]
            codes = (
                [arg.value]
                if isinstance(arg, ast.Constant)
                else [arg.body.value, arg.orelse.value]  # message("a" if x else "b", ...)
                if isinstance(arg, ast.IfExp)
                else []
            )
            for code in codes:
                calls.append((f.name, node.lineno, code, {k.arg for k in node.keywords if k.arg}))
    return calls


def test_every_producer_names_a_code_and_gives_its_fields():
    calls = _message_calls()
    assert len(calls) > 50  # query.py, search.py, service.py, backends/milvus.py
    for file, line, code, given in calls:
        assert code in MESSAGES, (file, line, code)
        assert set(fields(MESSAGES[code]["en"])) == given, (file, line, code)
    with pytest.raises(KeyError):
        message("no_paper_id")  # a field missing


def test_messages_imports_nothing_of_paperdex():
    tree = ast.parse((PACKAGE / "messages.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and not (node.module or "").startswith("paperdex"), node.module
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("paperdex") for a in node.names)


def test_a_message_is_its_english_text_and_survives_str_and_pickle():
    m = message("no_paper_id", id="2501.00001")
    assert m == "no paper with id '2501.00001'" and isinstance(m, str)
    assert m.code == "no_paper_id" and m.in_lang("zh") == "没有编号为 '2501.00001' 的论文"
    with pytest.raises(Q.QueryError) as e:
        Q.parse('ti:"open')
    err = ServiceError(400, str(e.value))  # as service.search passes a query error on
    assert isinstance(err.message, Message) and err.message.code == "at_character"
    assert err.message == 'unbalanced quote: this " has no closing " (at character 4)'
    assert err.message.in_lang("zh") == '引号不成对：这个 " 没有对应的闭引号（第 4 个字符处）'
    back = pickle.loads(pickle.dumps(err.message))
    assert back == err.message and back.in_lang("zh") == err.message.in_lang("zh")
    assert type(m.in_lang("en")) is str


def test_plain_text_only_for_the_foreign_codes():
    """Only what third-party code produces as plain English (Starlette's 404, the OpenAPI text)
    is recognised, by a code that is its own English text; the English of paperdex's own
    messages, as plain text, is left as it is."""
    foreign = {code for code, entry in MESSAGES.items() if entry["en"] == code}
    assert "Not Found" in foreign and "Search papers" in foreign
    assert i18n.message("zh", "Not Found") == "未找到"
    assert i18n.message("en", "Not Found") == "Not Found"
    for plain in ["no papers listed on 2025-01-01", "no tag named 'x'", "the store has no papers yet"]:
        assert i18n.message("zh", plain) == plain


def test_one_lookup_for_messages_and_labels():
    """The templates' t() and a Message's in_lang() read the same table by the same function."""
    assert i18n.t is text
    assert i18n.t("zh", "search") == "检索" and i18n.t("en", "no_such_code") == "no_such_code"
    assert i18n.t("zh", "store_empty") == message("store_empty").in_lang("zh") == "库中还没有论文"
    assert i18n.t("en", "papers_n", n=1) == "1 paper" and i18n.t("zh", "papers_n", n=3) == "3 篇论文"


def test_discover_producers_make_messages(store, empty_store):
    """feed, library and recommend make Messages, and they survive the exceptions, notices and
    ServiceErrors that carry them to a page."""
    d = feed.daily(empty_store)
    assert d.notices == ["the store has no papers yet"] and d.notices[0].code == "store_empty"
    assert i18n.message("zh", d.notices[0]) == "库中还没有论文"
    with pytest.raises(feed.FeedError) as fe:
        feed.daily(store, "2025-1-1")
    err = ServiceError(400, str(fe.value))  # as service and web/discover pass a feed error on
    assert isinstance(err.message, Message) and err.message.code == "day_written"
    assert err.message == "a day is written YYYY-MM-DD, got '2025-1-1'"
    assert err.message.in_lang("zh") == "日期应写成 YYYY-MM-DD，实际为 '2025-1-1'"
    with pytest.raises(feed.FeedError) as fe:
        feed.listing(store, "fortnight")
    assert fe.value.args[0].code == "unknown_view"
    assert str(fe.value) == "unknown view 'fortnight'; use one of day, week, month, trending"
    with pytest.raises(library.LibraryError) as le:
        library.get_tag(store, "x")
    assert le.value.status == 404 and le.value.message == "no tag named 'x'"
    assert le.value.message.in_lang("zh") == "没有名为 'x' 的标签"
    with pytest.raises(library.LibraryError) as le:
        library.add_to_tag(store, "t", ["2501.99999"])
    assert le.value.message.code == "ids_not_in_store" and le.value.message == "not in this store: 2501.99999"
    metrics = {"svm": {"top20": 0.4, "mrr": 0.3}, "tf-idf centroid": {"top20": 0.6, "mrr": 0.5}}
    text = R.Choice("tf-idf centroid", metrics, 4, 10).text()
    figures = "held-out saved papers in the first 20: 60% vs 40% SVM; MRR 0.50 vs 0.30"
    assert text == f"tf-idf centroid: ranked held-out saved papers higher ({figures})"
    assert i18n.message("zh", text) == (
        "tf-idf centroid：把留出的已存论文排得更靠前"
        "（留出的已存论文进入前 20 的比例：60% vs 40% SVM；MRR 0.50 vs 0.30）"
    )
    assert pickle.loads(pickle.dumps(text)).in_lang("zh") == text.in_lang("zh")


def test_summaries_make_messages():
    """A summary run's failures and report are Messages: the English as before, the Chinese from
    the table (shown once the CLI or the API gets an interface language)."""
    with pytest.raises(S.ReplyError) as e:
        S.parse_reply('{"en": {"tldr": 1}}', ("en",))
    assert str(e.value) == "the answer's en.tldr is missing or not text"
    assert e.value.args[0].in_lang("zh") == "回答中的 en.tldr 缺失或不是文本"
    line = S.Report(done=3, cached=1, failed=2, over_budget=7, tokens=1500).line()
    assert line == "summarised 3, already current 1, failed 2, 7 left for tomorrow (daily budget); 1500 tokens"
    assert line.in_lang("zh") == "已生成 3 篇，已是最新 1 篇，失败 2 篇，7 篇留待明天（每日额度）；共 1500 个 token"


def test_the_digest_makes_messages():
    """The digest's words are Messages: the English as before, the Chinese from the table (shown
    once the digest gets a language setting); a tag's note is one Message with its parts."""
    d = D.Digest(None, "http://h")
    assert d.subject == "paperdex digest for today: 0 for you, 0 new papers"
    assert d.subject.in_lang("zh") == "paperdex 每日简报 · 今天：为你推荐 0 篇，新论文 0 篇"
    assert D.render_text(d).endswith("\nNothing new today.\n") and "<p>Nothing new today.</p>" in D.render_html(d)
    reason = R.Reason([("1", "A $\\alpha$ title", 0.9)], ["robot", "pose"])
    why = D.reason_note(R.Recommendation(Paper(id="2", title="t"), 1.0, reason))
    assert why == "Why: like “A α title” · words: robot, pose"
    assert why.in_lang("zh") == "推荐理由：与 “A α title” 相似 · 关键词：robot, pose"


@pytest.fixture(scope="module")
def client(built_store_dir) -> TestClient:
    return TestClient(create_app(built_store_dir, pool_size=1), base_url="http://localhost")


def _shown(resp) -> list[str]:
    return [html.unescape(x) for x in re.findall(r'data-testid="(?:error|notice)"[^>]*>(.*?)</', resp.text)]


ZH_HEADER = {"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"}


@pytest.mark.parametrize(
    ("params", "status", "zh"),
    [
        ({"q": 'ti:"unclosed'}, 400, '引号不成对：这个 " 没有对应的闭引号（第 4 个字符处）'),
        ({"q": "date:2026..2025"}, 400, "日期范围 2026..2025 的结束早于开始（第 6 个字符处）"),
        ({"q": "a)"}, 400, "括号不成对：这个 ')' 没有对应的 '('（第 2 个字符处）"),
        ({"from": "2025-13"}, 400, "起始日期 不是真实存在的日期：'2025-13'"),
        ({"q": "x", "per_page": 0}, 400, "每页数量应在 1 到 100 之间"),
        ({"q": "2501.99999"}, 200, "提示: 本库没有 2501.99999（用 `paperdex ingest arxiv --id 2501.99999` 可以添加）"),
    ],
    ids=["quote", "date-range", "parenthesis", "from", "per_page", "pasted-id"],
)
def test_chinese_pages_show_the_table(client, params, status, zh):
    for by_cookie in (True, False):  # the zh cookie, then Accept-Language
        client.cookies.clear()
        if by_cookie:
            client.cookies.set(i18n.COOKIE, "zh")
        r = client.get("/", params=params, headers={} if by_cookie else ZH_HEADER)
        assert r.status_code == status
        assert zh in [re.sub(r"\s+", " ", s).strip() for s in _shown(r)]


def test_chinese_notices_and_errors_on_other_pages(client):
    r = client.get("/", params={"q": "zebrafinch xqzvbn"}, headers=ZH_HEADER)
    assert "没有论文包含 “zebrafinch”, “xqzvbn”" in html.unescape(r.text)
    r = client.get("/paper/nope", headers=ZH_HEADER)
    assert r.status_code == 404 and "没有编号为 'nope' 的论文" in html.unescape(r.text)
    r = client.get("/no-such-page", headers=ZH_HEADER)
    assert r.status_code == 404 and "未找到" in r.text
    r = client.get("/paper/" + "x" * 600, headers=ZH_HEADER)  # refused by web/limits.py
    assert r.status_code == 400 and "pid：最多 500 个字符" in r.text
    r = client.get("/daily", params={"view": "fortnight"}, headers=ZH_HEADER)
    assert r.status_code == 400 and "未知的 view 'fortnight'；可选：day, week, month, trending" in _shown(r)


def test_the_api_answers_in_english_whatever_the_language(client):
    r = client.get("/api/search", params={"q": "a)"}, headers=ZH_HEADER)
    assert r.status_code == 400
    assert r.json()["error"]["message"] == "unbalanced parenthesis: this ')' has no matching '(' (at character 2)"
    r = client.get("/api/search", params={"q": "zebrafinch xqzvbn"}, headers=ZH_HEADER)
    assert "no paper contains “zebrafinch”, “xqzvbn”" in r.json()["notices"]
    r = client.get("/daily.json", params={"view": "fortnight"}, headers=ZH_HEADER)
    assert r.status_code == 400
    assert r.json()["error"]["message"] == "unknown view 'fortnight'; use one of day, week, month, trending"
