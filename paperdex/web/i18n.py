"""Interface text in English and Chinese, and how a request picks one.

Order of precedence: an explicit ``?lang=`` (which also sets a cookie), the ``lang`` cookie,
then the browser's ``Accept-Language``. Paper text is never translated; only the interface.
"""

from __future__ import annotations

from ..search import NOTICE_NO_VECTORS

LANGS = ("en", "zh")
COOKIE = "lang"

TEXT: dict[str, dict[str, str]] = {
    # notices from the search core are keyed by their English text
    NOTICE_NO_VECTORS: {"en": NOTICE_NO_VECTORS, "zh": "语义检索尚未启用：还没有向量（请运行 `paperdex embed`）"},
    "tagline": {"en": "Search research papers on your own machine", "zh": "在本机检索学术论文"},
    "search": {"en": "Search", "zh": "检索"},
    "search_placeholder": {
        "en": 'Search papers — e.g. weight decay, ti:"diffusion" cat:cs.CV',
        "zh": '检索论文，例如：扩散模型、weight decay、ti:"diffusion" cat:cs.CV',
    },
    "daily": {"en": "Daily Papers", "zh": "每日论文"},
    "filters": {"en": "Filters", "zh": "筛选"},
    "date_from": {"en": "From", "zh": "起始日期"},
    "date_to": {"en": "To", "zh": "截止日期"},
    "category": {"en": "Category", "zh": "分类"},
    "venue": {"en": "Venue", "zh": "会议/期刊"},
    "area": {"en": "Area", "zh": "领域"},
    "author": {"en": "Author", "zh": "作者"},
    "sort": {"en": "Sort", "zh": "排序"},
    "relevance": {"en": "Relevance", "zh": "相关度"},
    "newest": {"en": "Newest", "zh": "最新"},
    "mode": {"en": "Mode", "zh": "检索方式"},
    "hybrid": {"en": "Hybrid", "zh": "混合"},
    "lexical": {"en": "Keyword", "zh": "关键词"},
    "dense": {"en": "Semantic", "zh": "语义"},
    "apply": {"en": "Apply", "zh": "应用"},
    "clear": {"en": "Clear filters", "zh": "清除筛选"},
    "results": {"en": "{n} results", "zh": "共 {n} 条结果"},
    "results_one": {"en": "1 result", "zh": "共 1 条结果"},
    "took": {"en": "{ms} ms", "zh": "{ms} 毫秒"},
    "no_results": {"en": "No papers match this search.", "zh": "没有找到匹配的论文。"},
    "no_results_hint": {
        "en": "Try fewer words, remove a filter, or switch to semantic search.",
        "zh": "试试减少关键词、去掉筛选条件，或改用语义检索。",
    },
    "latest": {"en": "Latest papers", "zh": "最新论文"},
    "et_al": {"en": "et al.", "zh": "等"},
    "show_abstract": {"en": "Show full abstract", "zh": "展开摘要"},
    "hide_abstract": {"en": "Show less", "zh": "收起摘要"},
    "abstract": {"en": "Abstract", "zh": "摘要"},
    "why": {"en": "Why this matched", "zh": "匹配原因"},
    "why_lexical": {"en": "Keyword rank", "zh": "关键词排名"},
    "why_dense": {"en": "Semantic rank", "zh": "语义排名"},
    "why_score": {"en": "Fused score", "zh": "融合得分"},
    "why_none": {"en": "not in top results", "zh": "未进入前列"},
    "arxiv": {"en": "arXiv", "zh": "arXiv"},
    "pdf": {"en": "PDF", "zh": "PDF"},
    "code": {"en": "Code", "zh": "代码"},
    "prev": {"en": "Previous", "zh": "上一页"},
    "next": {"en": "Next", "zh": "下一页"},
    "page_of": {"en": "Page {page} of {pages}", "zh": "第 {page} / {pages} 页"},
    "categories": {"en": "Categories", "zh": "分类"},
    "years": {"en": "Years", "zh": "年份"},
    "similar": {"en": "Similar papers", "zh": "相似论文"},
    "no_similar": {"en": "No similar papers found.", "zh": "没有找到相似论文。"},
    "bibtex": {"en": "BibTeX", "zh": "BibTeX 引用"},
    "copy": {"en": "Copy", "zh": "复制"},
    "copied": {"en": "Copied", "zh": "已复制"},
    "authors": {"en": "Authors", "zh": "作者"},
    "all_authors": {"en": "… show all {n} authors", "zh": "… 显示全部 {n} 位作者"},
    "published": {"en": "Date", "zh": "日期"},
    "comment": {"en": "Comment", "zh": "备注"},
    "identifier": {"en": "Identifier", "zh": "编号"},
    "sources": {"en": "Sources", "zh": "来源"},
    "prev_day": {"en": "Previous day", "zh": "前一天"},
    "next_day": {"en": "Next day", "zh": "后一天"},
    "all": {"en": "All", "zh": "全部"},
    "papers_on": {"en": "{n} papers on {day}", "zh": "{day} 共 {n} 篇论文"},
    "papers_on_one": {"en": "1 paper on {day}", "zh": "{day} 共 1 篇论文"},
    "go": {"en": "Go", "zh": "前往"},
    "day": {"en": "Day", "zh": "日期"},
    "no_papers_day": {"en": "No papers on this day.", "zh": "当天没有论文。"},
    "error": {"en": "Something is wrong with this request", "zh": "请求有误"},
    "not_found": {"en": "Not found", "zh": "未找到"},
    "back_search": {"en": "Back to search", "zh": "返回检索"},
    "language": {"en": "Language", "zh": "语言"},
    "switch_lang": {"en": "中文", "zh": "English"},
    "api": {"en": "API", "zh": "API"},
    "query_help": {
        "en": 'Query language: words, "exact phrase", ti: au: abs: cat: date:2025..2026, AND OR NOT, -exclude',
        "zh": '查询语法：关键词、"精确短语"、ti: au: abs: cat: date:2025..2026、AND OR NOT、-排除',
    },
    "notice": {"en": "Note", "zh": "提示"},
}


def t(lang: str, key: str, **kw: object) -> str:
    """Interface text `key` in `lang`, with `{name}` placeholders filled."""
    if kw.get("n") == 1 and f"{key}_one" in TEXT:
        key = f"{key}_one"
    entry = TEXT.get(key)
    if entry is None:
        return key
    s = entry.get(lang) or entry["en"]
    return s.format(**kw) if kw else s


def negotiate(query_lang: str | None, cookie_lang: str | None, accept_language: str | None) -> str:
    """The interface language for a request (see module docstring)."""
    for v in (query_lang, cookie_lang):
        if v and v.lower()[:2] in LANGS:
            return v.lower()[:2]
    best, best_q = "en", -1.0
    for i, part in enumerate((accept_language or "").split(",")[:20]):
        bits = part.strip().split(";")
        tag = bits[0].strip().lower()[:2]
        q = 1.0
        for b in bits[1:]:
            b = b.strip()
            if b.startswith("q="):
                try:
                    q = float(b[2:])
                except ValueError:
                    q = 0.0
        q -= i * 1e-6  # earlier wins a tie
        if tag in LANGS and q > best_q:
            best, best_q = tag, q
    return best
