"""Interface text in English and Chinese, and how a request picks one.

Order of precedence: an explicit ``?lang=`` (which also sets a cookie), the ``lang`` cookie,
then the browser's ``Accept-Language``. Paper text is never translated; only the interface.
"""

from __future__ import annotations

import re
import string

from paperdex.messages import MESSAGES, Message

LANGS = ("en", "zh")
COOKIE = "lang"

TEXT: dict[str, dict[str, str]] = {
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
    # home
    "home_what": {
        "en": "paperdex searches research papers on this machine: keyword and semantic search over one "
        "local store, in English and Chinese, with no account and no tracking.",
        "zh": "paperdex 在本机检索学术论文：对本地论文库做关键词与语义混合检索，支持中英文查询，无需账号，不做跟踪。",
    },
    "home_stats": {
        "en": "This store holds {n} papers, dated {first} to {last}.",
        "zh": "本库共 {n} 篇论文，日期从 {first} 到 {last}。",
    },
    "home_empty": {
        "en": "This store is empty: add papers with `paperdex ingest`.",
        "zh": "论文库为空：请用 `paperdex ingest` 导入论文。",
    },
    "try": {"en": "Try", "zh": "试试这些查询"},
    "ex_en": {"en": "English", "zh": "英文"},
    "ex_zh": {"en": "Chinese", "zh": "中文"},
    "ex_fielded": {"en": "Fielded", "zh": "字段检索"},
    # results
    "refine": {"en": "Filters", "zh": "筛选"},
    "close": {"en": "Close", "zh": "关闭"},
    "no_facets": {"en": "Nothing to refine.", "zh": "没有可筛选的项。"},
    "hint_clear": {"en": "Remove the filters", "zh": "去掉筛选条件"},
    "hint_dense": {"en": "Search by meaning (semantic search)", "zh": "改用语义检索"},
    "hint_fewer": {"en": "Search only “{q}”", "zh": "只检索“{q}”"},
    "hint_daily": {"en": "Browse the daily papers", "zh": "浏览每日论文"},
    # signals
    "stars_title": {"en": "{n} GitHub stars", "zh": "{n} 个 GitHub 星标"},
    "project_page": {"en": "Project page", "zh": "项目主页"},
    "hf": {"en": "Hugging Face", "zh": "Hugging Face"},
    "hf_page": {"en": "Hugging Face page", "zh": "Hugging Face 页面"},
    "hf_title": {"en": "Hugging Face Daily Papers: upvotes and comments", "zh": "Hugging Face 每日论文：点赞与评论"},
    "upvotes": {"en": "{n} upvotes", "zh": "{n} 个赞"},
    "upvotes_one": {"en": "1 upvote", "zh": "1 个赞"},
    "comments_n": {"en": "{n} comments", "zh": "{n} 条评论"},
    "comments_n_one": {"en": "1 comment", "zh": "1 条评论"},
    "decision_accepted": {"en": "Accepted", "zh": "已接收"},
    "decision_rejected": {"en": "Rejected", "zh": "未接收"},
    "decision_desk_rejected": {"en": "Desk rejected", "zh": "直接拒稿"},
    "decision_withdrawn": {"en": "Withdrawn", "zh": "已撤稿"},
    "decision_under_review": {"en": "Under review", "zh": "审稿中"},
    "decision_submitted": {"en": "Submitted", "zh": "已投稿"},
    "presentation_oral": {"en": "Oral", "zh": "口头报告"},
    "presentation_spotlight": {"en": "Spotlight", "zh": "焦点报告"},
    "presentation_poster": {"en": "Poster", "zh": "海报"},
    "presentation_highlight": {"en": "Highlight", "zh": "亮点论文"},
    "back_daily": {"en": "Back to the daily papers", "zh": "返回每日论文"},
    # daily
    "trending": {"en": "Trending papers", "zh": "热门论文"},
    "view": {"en": "View", "zh": "视图"},
    "view_day": {"en": "Day", "zh": "日"},
    "view_week": {"en": "Week", "zh": "周"},
    "view_month": {"en": "Month", "zh": "月"},
    "view_trending": {"en": "Trending", "zh": "热门"},
    "sort_newest": {"en": "Newest", "zh": "最新"},
    "sort_upvotes": {"en": "Upvotes", "zh": "点赞最多"},
    "sort_stars": {"en": "Stars", "zh": "星标最多"},
    "sort_foryou": {"en": "For you", "zh": "为你推荐"},
    # saving to a tag (web/discover.py)
    "save_to_tag": {"en": "Save to a tag", "zh": "存入标签"},
    "saved_to": {"en": "Saved to", "zh": "已存入"},
    "tag_name": {"en": "Tag", "zh": "标签"},
    "prev_week": {"en": "Previous week", "zh": "上一周"},
    "next_week": {"en": "Next week", "zh": "下一周"},
    "prev_month": {"en": "Previous month", "zh": "上个月"},
    "next_month": {"en": "Next month", "zh": "下个月"},
    "papers_in": {"en": "{n} papers · {span}", "zh": "{span} 共 {n} 篇论文"},
    "papers_in_one": {"en": "1 paper · {span}", "zh": "{span} 共 1 篇论文"},
    "papers_in_cat": {"en": "{n} of {all} papers in {cat} · {span}", "zh": "{span} {cat} 分类 {n} 篇（共 {all} 篇）"},
    "trending_count": {"en": "{n} papers with upvotes · {span}", "zh": "{span} 有点赞的论文 {n} 篇"},
    "trending_count_one": {"en": "1 paper with upvotes · {span}", "zh": "{span} 有点赞的论文 1 篇"},
    "no_papers_period": {"en": "No papers in this period.", "zh": "这段时间没有论文。"},
    # one table for every page: the library, tags, saved searches and feeds (web/discover.py)
    "library": {"en": "Library", "zh": "文库"},
    "tags": {"en": "Tags", "zh": "标签"},
    "no_tags": {
        "en": "No tags yet: open a paper and save it to a tag.",
        "zh": "还没有标签：打开一篇论文，把它存入标签。",
    },
    "papers_n": {"en": "{n} papers", "zh": "{n} 篇论文"},
    "papers_n_one": {"en": "1 paper", "zh": "1 篇论文"},
    "recommended": {"en": "Recommended for this tag", "zh": "为此标签推荐"},
    "saved_papers": {"en": "Papers in this tag", "zh": "此标签中的论文"},
    "why_rec": {"en": "Why", "zh": "推荐理由"},
    "like": {"en": "Like", "zh": "相似于"},
    "words": {"en": "Words", "zh": "关键词"},
    "model": {"en": "Model", "zh": "模型"},
    "save": {"en": "Save", "zh": "保存"},
    "new_tag": {"en": "or a new tag", "zh": "或新标签"},
    "not_interested": {"en": "Not interested", "zh": "不感兴趣"},
    "dismissed_one": {"en": "Marked “not interested”: {title}", "zh": "已标为“不感兴趣”：{title}"},
    "undo": {"en": "Undo", "zh": "撤销"},
    "undone": {"en": "Undone: the paper is back in the recommendations.", "zh": "已撤销：这篇论文重新出现在推荐中。"},
    "remove": {"en": "Remove", "zh": "移除"},
    "sign_in": {"en": "Sign in", "zh": "登录"},
    "sign_in_to_save": {"en": "Sign in to save", "zh": "登录后即可保存"},
    "sign_out": {"en": "Sign out", "zh": "退出"},
    "token": {"en": "Token", "zh": "令牌"},
    "signed_in_as": {"en": "Signed in with the token “{name}”.", "zh": "已用令牌“{name}”登录。"},
    "read_only": {
        "en": "Read-only: saving needs a token. Make one with `paperdex token create` and sign in.",
        "zh": "只读：保存需要令牌。用 `paperdex token create` 创建后登录。",
    },
    "saved_searches": {"en": "Saved searches", "zh": "已保存的搜索"},
    "no_saved": {"en": "No saved searches yet.", "zh": "还没有保存的搜索。"},
    "new_n": {"en": "{n} new", "zh": "{n} 篇新论文"},
    "save_search": {"en": "Save this search", "zh": "保存此搜索"},
    "search_saved": {"en": "Search saved.", "zh": "已保存此搜索。"},
    "open_saved": {"en": "See what is new", "zh": "查看新论文"},
    "back": {"en": "Back", "zh": "返回"},
    "name": {"en": "Name", "zh": "名称"},
    "query": {"en": "Query", "zh": "查询"},
    "mark_seen": {"en": "Mark as seen", "zh": "标为已读"},
    "open_search": {"en": "Open the search", "zh": "打开搜索"},
    "feeds": {"en": "Feeds", "zh": "订阅"},
    "related": {"en": "Related work", "zh": "相关工作"},
    "paste": {"en": "Paste an abstract or a paragraph", "zh": "粘贴摘要或一段文字"},
    "find_related": {"en": "Find related work", "zh": "查找相关工作"},
    "key_terms": {"en": "Key terms", "zh": "关键词"},
    "export": {"en": "Export", "zh": "导出"},
    "dismissed_n": {"en": "{n} papers marked not interested", "zh": "{n} 篇标为不感兴趣"},
    "dismissed_n_one": {"en": "1 paper marked not interested", "zh": "1 篇标为不感兴趣"},
    "nothing_yet": {"en": "Nothing to recommend yet.", "zh": "暂无推荐。"},
    "delete": {"en": "Delete", "zh": "删除"},
    "delete_tag": {"en": "Delete this tag", "zh": "删除此标签"},
    "rename_tag": {"en": "Rename", "zh": "重命名"},
    "new_name": {"en": "New name", "zh": "新名称"},
    "tag_actions": {"en": "Rename or delete", "zh": "重命名或删除"},
    "delete_tag_note": {
        "en": "Deleting the tag keeps its papers in the store; only the tag goes.",
        "zh": "删除标签不会删除论文，只删除这个标签。",
    },
    "for_you": {"en": "For you", "zh": "为你推荐"},
    "for_you_day": {"en": "Papers of {day} for you", "zh": "{day} 为你推荐的论文"},
    "from_tag": {"en": "for the tag", "zh": "来自标签"},
    "in_tag": {"en": "already in {tag}", "zh": "已在 {tag} 中"},
    "score": {"en": "score", "zh": "得分"},
    "more_recs": {"en": "More recommendations", "zh": "更多推荐"},
    # navigation, accessibility
    "skip_to_content": {"en": "Skip to content", "zh": "跳到正文"},
    "site_nav": {"en": "Site", "zh": "站点导航"},
    "footer_license": {"en": "arXiv metadata CC0", "zh": "arXiv 元数据 CC0"},
    "suggestions": {"en": "Suggestions", "zh": "输入建议"},
    "results_label": {"en": "Results", "zh": "结果"},
    "results_for": {"en": "Results for “{q}”", "zh": "“{q}”的检索结果"},
    "filters_on": {"en": "on", "zh": "已启用"},
    "eg": {"en": "e.g. {x}", "zh": "例如 {x}"},
    "list_sep": {"en": "; ", "zh": "；"},
    # why this matched, in plain words
    "why_title": {"en": "matched {k} of {n} words in the title", "zh": "标题命中 {n} 个词中的 {k} 个"},
    "why_title_one": {"en": "matched the word in the title", "zh": "标题命中该词"},
    "why_text": {"en": "matched {k} of {n} words in the abstract", "zh": "摘要命中 {n} 个词中的 {k} 个"},
    "why_text_one": {"en": "matched the word in the abstract", "zh": "摘要命中该词"},
    "why_meaning": {"en": "close in meaning", "zh": "语义相近"},
    "why_words_only": {"en": "matched the words of the query", "zh": "命中查询词"},
    "why_read_as": {"en": "Read as:", "zh": "理解为："},
    "why_details": {"en": "Scores", "zh": "得分明细"},
    "hint_without": {"en": "Search without “{part}”", "zh": "去掉“{part}”再检索"},
    # the daily digest
    "sort_top": {"en": "Top", "zh": "精选"},
    "day_shape": {"en": "The day at a glance", "zh": "当天概览"},
    "shape_categories": {"en": "Categories", "zh": "分类"},
    "shape_trending": {"en": "Trending", "zh": "热门"},
    "shape_no_signal": {
        "en": "No upvotes or stars for this day's papers yet.",
        "zh": "当天的论文还没有点赞或星标。",
    },
    "shape_tags": {"en": "New for your tags", "zh": "与你的标签相关的新论文"},
    "new_for_tag": {"en": "{n} for {tag}", "zh": "{tag}：{n} 篇"},
    "shape_tags_none": {"en": "Nothing close to your tags today.", "zh": "今天没有与你的标签相近的论文。"},
    "shape_tags_empty": {
        "en": "Save papers to a tag to see what is new for it.",
        "zh": "把论文存入标签后，这里会显示相关新论文。",
    },
    "for_tag": {"en": "for {tag}", "zh": "相关：{tag}"},
    "layout": {"en": "Layout", "zh": "布局"},
    "layout_cards": {"en": "Cards", "zh": "卡片"},
    "layout_compact": {"en": "Compact", "zh": "紧凑"},
    "keys_help": {
        "en": "Keys: j / k next / previous · Enter or x expand · o open · s save",
        "zh": "快捷键：j / k 下一篇 / 上一篇 · Enter 或 x 展开 · o 打开 · s 保存",
    },
    "ranked_by_upvotes_stars_tags": {
        "en": "Ranked by Hugging Face upvotes, then GitHub stars, then your tags",
        "zh": "按 Hugging Face 点赞、GitHub 星标、你的标签依次排序",
    },
    "ranked_by_upvotes_stars_listing": {
        "en": "Ranked by Hugging Face upvotes, then GitHub stars, then listing order",
        "zh": "按 Hugging Face 点赞、GitHub 星标、发布顺序依次排序",
    },
    "ranked_by_upvotes_tags": {
        "en": "Ranked by Hugging Face upvotes, then your tags",
        "zh": "按 Hugging Face 点赞、你的标签依次排序",
    },
    "ranked_by_upvotes_listing": {
        "en": "Ranked by Hugging Face upvotes, then listing order",
        "zh": "按 Hugging Face 点赞、发布顺序依次排序",
    },
    "ranked_by_stars_tags": {"en": "Ranked by GitHub stars, then your tags", "zh": "按 GitHub 星标、你的标签依次排序"},
    "ranked_by_stars_listing": {
        "en": "Ranked by GitHub stars, then listing order",
        "zh": "按 GitHub 星标、发布顺序依次排序",
    },
    "ranked_by_tags": {"en": "Ranked by your tags", "zh": "按你的标签排序"},
    "ranked_by_listing": {
        "en": "In listing order: no upvotes, stars or tags to rank by yet",
        "zh": "按发布顺序：还没有点赞、星标或标签可供排序",
    },
    # API page
    "api_title": {"en": "JSON API", "zh": "JSON API"},
    "api_intro": {
        "en": "Every page's data as JSON, from this server. The OpenAPI description:",
        "zh": "本服务器各页面的数据均可按 JSON 获取。OpenAPI 描述：",
    },
    "api_errors": {
        "en": "Errors answer with status 400 (a bad request or query), 404 (unknown id) or 503 (busy), and a body",
        "zh": "出错时返回状态码 400（请求或查询有误）、404（编号不存在）或 503（繁忙），响应体为",
    },
    "api_param": {"en": "parameter", "zh": "参数"},
    "api_in": {"en": "in", "zh": "位置"},
    "api_type": {"en": "type", "zh": "类型"},
    "api_try": {"en": "open", "zh": "打开"},
    "api_description": {"en": "description", "zh": "说明"},
    # API summaries and parameter descriptions (OpenAPI text is English)
    "Search papers": {"en": "Search papers", "zh": "检索论文"},
    "Similar papers": {"en": "Similar papers", "zh": "相似论文"},
    "One paper": {"en": "One paper", "zh": "单篇论文"},
    "Daily papers": {"en": "Daily papers", "zh": "每日论文"},
    "Days with papers": {"en": "Days with papers", "zh": "有论文的日期"},
    "Query in the paperdex query language; empty lists newest": {
        "en": "Query in the paperdex query language; empty lists newest",
        "zh": "paperdex 查询语法的查询；为空时列出最新论文",
    },
    "Ranking": {"en": "Ranking", "zh": "排序方式（混合/关键词/语义）"},
    "Order of the hits": {"en": "Order of the hits", "zh": "结果顺序"},
    "1-based page number": {"en": "1-based page number", "zh": "页码（从 1 开始）"},
    "Hits per page": {"en": "Hits per page", "zh": "每页结果数"},
    "Papers per page": {"en": "Papers per page", "zh": "每页论文数"},
    "A category (cs.LG) or archive (cs)": {
        "en": "A category (cs.LG) or archive (cs)",
        "zh": "分类（cs.LG）或大类（cs）",
    },
    "Earliest date, YYYY[-MM[-DD]]": {"en": "Earliest date, YYYY[-MM[-DD]]", "zh": "最早日期，YYYY[-MM[-DD]]"},
    "Latest date, YYYY[-MM[-DD]]": {"en": "Latest date, YYYY[-MM[-DD]]", "zh": "最晚日期，YYYY[-MM[-DD]]"},
    "Substring of the venue": {"en": "Substring of the venue", "zh": "会议/期刊名称的一部分"},
    "Substring of the venue area": {"en": "Substring of the venue area", "zh": "会议领域名称的一部分"},
    "An author name": {"en": "An author name", "zh": "作者姓名"},
    "How many neighbours": {"en": "How many neighbours", "zh": "返回多少篇相似论文"},
    "How many days": {"en": "How many days", "zh": "返回多少天"},
    "Only papers in this category or archive": {
        "en": "Only papers in this category or archive",
        "zh": "只看该分类或大类的论文",
    },
    "Hits carry title_html and snippet_html (escaped, query words in <mark>), and why (ranks per side).": {
        "en": "Hits carry title_html and snippet_html (escaped, query words in <mark>), and why (ranks per side).",
        "zh": "每条结果带 `title_html` 与 `snippet_html`（已转义，查询词包在 `<mark>` 中）"
        "以及 `why`（两侧各自的排名）。",
    },
    "Nearest neighbours of a paper by embedding (title words when it has no vector).": {
        "en": "Nearest neighbours of a paper by embedding (title words when it has no vector).",
        "zh": "按向量找出一篇论文的最近邻（没有向量时按标题词）。",
    },
    "One paper with every field, its links and a BibTeX entry. Ids may contain `/`\n(hep-th/9901002) and may "
    "carry an `arXiv:` prefix or a version suffix.": {
        "en": "One paper with every field, its links and a BibTeX entry. Ids may contain `/`\n(hep-th/9901002) and "
        "may carry an `arXiv:` prefix or a version suffix.",
        "zh": "单篇论文的全部字段、链接与 BibTeX 条目。编号可以含 `/`（`hep-th/9901002`），"
        "可以带 `arXiv:` 前缀或版本后缀。",
    },
    "Papers listed on one day, with per-category counts and the previous/next days.": {
        "en": "Papers listed on one day, with per-category counts and the previous/next days.",
        "zh": "某一天发布的论文，附各分类的数量以及前一天/后一天。",
    },
    "Days that have papers, newest first, with counts.": {
        "en": "Days that have papers, newest first, with counts.",
        "zh": "有论文的日期（最新在前）及其论文数。",
    },
    "in_query": {"en": "query", "zh": "查询参数"},
    "in_path": {"en": "path", "zh": "路径"},
    "pagination": {"en": "Pages", "zh": "分页"},
    "YYYY-MM-DD; default: the latest day in the store": {
        "en": "YYYY-MM-DD; default: the latest day in the store",
        "zh": "YYYY-MM-DD；默认为库中最新的一天",
    },
}

# Messages of paperdex are messages.Message objects, shown with msg.in_lang(lang). Text that
# third-party code produces as plain English is recognised by its English, matched against its
# template in messages.MESSAGES (below, with where from). A field named in the set is itself
# such a message, translated in turn.
FOREIGN: dict[str, frozenset[str]] = {
    # Starlette (a 404 its router answers: HTTPException.detail)
    "not_found": frozenset(),
}


def _matcher(template: str) -> re.Pattern[str]:
    parts = []
    for literal, name, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if name is not None:
            parts.append(f"(?P<{name}>.*)" if f"(?P<{name}>" not in "".join(parts) else f"(?P={name})")
    return re.compile("^" + "".join(parts) + "$", re.DOTALL)


_FOREIGN = [(code, _matcher(MESSAGES[code]["en"])) for code in FOREIGN]


def recognise(text: str) -> Message | None:
    """Plain English text of a FOREIGN message as that Message (its fields as they are shown)."""
    for code, pattern in _FOREIGN:
        m = pattern.match(text)
        if m:
            params: dict[str, object] = dict(m.groupdict())
            for name in FOREIGN[code]:
                params[name] = recognise(m[name]) or m[name]
            return Message(code, params, shown=True)
    return None


def message(lang: str, text: str) -> str:
    """A message from the core in the interface language: a Message in `lang`; plain text is
    a FOREIGN message recognised by its English, or (API page text) a TEXT entry keyed by the
    English, else the English text."""
    if isinstance(text, Message):
        return text.in_lang(lang)
    if lang == "en" or not text:
        return text
    entry = TEXT.get(text)
    if entry is not None:
        return entry.get(lang) or text
    found = recognise(text)
    return found.in_lang(lang) if found is not None else text


def t(lang: str, key: str, **kw: object) -> str:
    """Interface text `key` in `lang`, with `{name}` placeholders filled."""
    if kw.get("count", kw.get("n")) in (1, "1") and f"{key}_one" in TEXT:
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
