"""Every text paperdex shows a person, once: a code, and its English and Chinese templates with
named fields. One table (MESSAGES) for the core's messages (query errors, search notices,
service errors) and the interface's labels (the web templates' ``t('code')``), and one lookup,
:func:`text`.

A producer writes ``message("unbalanced_quote")`` or ``message("no_paper_id", id=pid)``; what it
gets is a :class:`Message`, which *is* the English text (a ``str``), so callers, log lines, JSON
fields and tests that read it as a string are unchanged, and which carries its code and fields,
so the interface shows it in another language with ``msg.in_lang("zh")`` instead of matching
the English text. A field whose value is a Message (a query error inside "… (at character N)")
is shown in the same language.

Text that code outside paperdex produces as plain English (Starlette's 404, the OpenAPI
descriptions) has its English text as its code: :func:`shown` recognises it by that.

The bottom layer: this module imports nothing of paperdex.
"""

from __future__ import annotations

import string
from typing import Any

LANGS = ("en", "zh")

MESSAGES: dict[str, dict[str, str]] = {
    # --- composition ----------------------------------------------------------------------
    "at_character": {"en": "{message} (at character {position})", "zh": "{message}（第 {position} 个字符处）"},
    # the names of request parameters, as a message about one says them
    "param_from": {"en": "from", "zh": "起始日期"},
    "param_to": {"en": "to", "zh": "截止日期"},
    "param_day": {"en": "day", "zh": "日期"},
    # --- the query language (query.py) ------------------------------------------------------
    "unbalanced_quote": {
        "en": 'unbalanced quote: this " has no closing "',
        "zh": '引号不成对：这个 " 没有对应的闭引号',
    },
    "unbalanced_close": {
        "en": "unbalanced parenthesis: this ')' has no matching '('",
        "zh": "括号不成对：这个 ')' 没有对应的 '('",
    },
    "unbalanced_open": {
        "en": "unbalanced parenthesis: this '(' is never closed",
        "zh": "括号不成对：这个 '(' 没有闭合",
    },
    "minus_before_close": {
        "en": "'-' must stand before a word, phrase or group, not ')'",
        "zh": "'-' 后面应是词、短语或括号组，而不是 ')'",
    },
    "field_needs_value": {
        "en": "{field}: needs a value right after the colon",
        "zh": "{field}: 冒号后面需要紧跟一个值",
    },
    "field_nested": {"en": "{field}: cannot be nested inside {outer}:", "zh": "{field}: 不能嵌套在 {outer}: 里面"},
    "field_one_value": {"en": "{field}: takes one value, not a group", "zh": "{field}: 只接受一个值，不能是括号组"},
    "too_many_terms": {
        "en": "too many terms: {terms} words and phrases with query syntax; at most {limit} in one query",
        "zh": "检索项太多：使用查询语法时有 {terms} 个词和短语；一个查询最多 {limit} 个",
    },
    "unexpected": {"en": "unexpected {token!r}", "zh": "意外的 {token!r}"},
    "needs_term_before": {"en": "{op} needs a term before it", "zh": "{op} 前面需要一个检索词"},
    "or_needs_term_after": {"en": "OR needs a term after it", "zh": "OR 后面需要一个检索词"},
    "and_needs_both_sides": {"en": "AND needs a term on both sides", "zh": "AND 两边都需要检索词"},
    "not_needs_term_after": {"en": "NOT needs a term after it", "zh": "NOT 后面需要一个检索词"},
    "empty_group": {"en": "empty group", "zh": "空的括号组"},
    "empty_parentheses": {"en": "empty parentheses", "zh": "空括号"},
    "too_deep": {
        "en": "too deeply nested: at most {limit} levels of parentheses",
        "zh": "嵌套太深：括号最多 {limit} 层",
    },
    "cat_expects": {
        "en": "cat: expects a category such as cs.LG or cs, got {value!r}",
        "zh": "cat: 需要一个分类，例如 cs.LG 或 cs，实际为 {value!r}",
    },
    "decision_expects": {
        "en": "decision: expects one of {choices}, got {value!r}",
        "zh": "decision: 应为以下之一：{choices}，实际为 {value!r}",
    },
    "date_shape": {
        "en": "dates are YYYY, YYYY-MM or YYYY-MM-DD, got {value!r}",
        "zh": "日期格式应为 YYYY、YYYY-MM 或 YYYY-MM-DD，实际为 {value!r}",
    },
    "date_not_real": {"en": "{value!r} is not a date on the calendar", "zh": "{value!r} 不是日历上存在的日期"},
    "date_range_open": {"en": "a date range needs at least one end", "zh": "日期范围至少需要一端"},
    "date_range_backwards": {
        "en": "date range {start}..{end} ends before it starts",
        "zh": "日期范围 {start}..{end} 的结束早于开始",
    },
    "query_too_long": {
        "en": "query too long ({n:,} characters; the limit is {limit:,})",
        "zh": "查询太长（{n:,} 个字符，上限为 {limit:,}）",
    },
    # --- the search engine (search.py, backends) --------------------------------------------
    "unknown_mode": {
        "en": "unknown mode {value!r}; use one of {choices}",
        "zh": "未知的 mode {value!r}；可选：{choices}",
    },
    "unknown_sort": {
        "en": "unknown sort {value!r}; use one of {choices}",
        "zh": "未知的 sort {value!r}；可选：{choices}",
    },
    "unknown_view": {
        "en": "unknown view {value!r}; use one of {choices}",
        "zh": "未知的 view {value!r}；可选：{choices}",
    },
    "too_broad": {
        "en": "this query is too broad to evaluate; use fewer prefixes or common words",
        "zh": "查询范围太大，无法计算；请减少前缀通配或常用词",
    },
    "prefix_too_short": {"en": "{word}*: a prefix needs at least two letters", "zh": "{word}*：前缀至少需要两个字母"},
    "results_window": {
        "en": "results are listed up to number {limit:,}; narrow the query or sort differently",
        "zh": "结果最多列出到第 {limit:,} 条；请缩小查询范围或换一种排序",
    },
    "untranslated_dense_only": {
        "en": "no English word is known for {word}; only semantic search can find it",
        "zh": "“{word}”没有已知的英文对应词，只能靠语义检索找到",
    },
    "untranslated_no_words": {
        "en": "no English word is known for {word}; it matches nothing by words",
        "zh": "“{word}”没有已知的英文对应词，关键词检索匹配不到",
    },
    "missing_words_without": {
        "en": "no paper contains {words}; showing results without",
        "zh": "没有论文包含 {words}；以下结果不含这些词",
    },
    "no_words_semantic": {
        "en": "no paper contains these words; showing semantic matches",
        "zh": "没有论文包含这些词；以下为语义匹配结果",
    },
    "some_words_semantic": {
        "en": "no paper contains enough of these words; showing semantic matches, then papers with some of them",
        "zh": "没有论文包含足够多的这些词；以下为语义匹配结果，其后是包含部分词的论文",
    },
    "missing_words": {"en": "no paper contains {words}", "zh": "没有论文包含 {words}"},
    "only_common_words": {
        "en": "only very common words; add a word that says what you are looking for",
        "zh": "查询只有非常常见的词；请加一个说明你要找什么的词",
    },
    "no_close_semantic": {
        "en": "no close semantic match; showing word matches only",
        "zh": "没有语义上接近的结果；只显示关键词匹配",
    },
    "no_close_matches": {"en": "no close matches", "zh": "没有接近的结果"},
    "id_not_in_store": {
        "en": "{id} is not in this store (`paperdex ingest arxiv --id {id}` adds it)",
        "zh": "本库没有 {id}（用 `paperdex ingest arxiv --id {id}` 可以添加）",
    },
    "not_in_store": {"en": "{id} is not in this store", "zh": "本库没有 {id}"},
    "no_vectors": {
        "en": "semantic search is off until vectors exist (run `paperdex embed`)",
        "zh": "语义检索尚未启用：还没有向量（请运行 `paperdex embed`）",
    },
    "index_unpublished": {
        "en": "the search index of this store is missing or from an older paperdex, so it was built in memory "
        "for this process; run `paperdex migrate` once to publish it",
        "zh": "本库的检索索引缺失或来自旧版 paperdex，因此本进程在内存中临时构建了索引；"
        "请运行一次 `paperdex migrate` 发布它",
    },
    "milvus_phrase": {
        "en": "on the Milvus backend an exact phrase is checked paper by paper, and {n:,} papers hold its words "
        "(the limit is {limit:,}); add a rarer word or a filter",
        "zh": "在 Milvus 后端上，精确短语要逐篇论文检查，而含有这些词的论文有 {n:,} 篇（上限为 {limit:,}）；"
        "请加一个更少见的词或一个筛选条件",
    },
    # an optional part of paperdex whose package this install lacks: the one line every entry point shows
    "needs_extra": {
        "en": "{what} needs {package}, which this install lacks: pip install 'paperdex[{extra}]'",
        "zh": "{what}需要 {package}，当前安装中没有：pip install 'paperdex[{extra}]'",
    },
    # --- the service (service.py) -----------------------------------------------------------
    "param_date_shape": {
        "en": "{name} must be a date YYYY, YYYY-MM or YYYY-MM-DD, got {value!r}",
        "zh": "{name} 应为日期 YYYY、YYYY-MM 或 YYYY-MM-DD，实际为 {value!r}",
    },
    "param_date_not_real": {"en": "{name} is not a real date: {value!r}", "zh": "{name} 不是真实存在的日期：{value!r}"},
    "day_shape": {
        "en": "day must be a date YYYY-MM-DD, got {value!r}",
        "zh": "day 应为日期 YYYY-MM-DD，实际为 {value!r}",
    },
    "busy": {
        "en": "the server is busy with other searches; try again in a moment",
        "zh": "服务器正忙于其他检索，请稍后再试",
    },
    # related work for a pasted text (service.related): the text cannot be narrowed like a query
    "related_over_budget": {
        "en": "finding work related to this text needed more than its time budget of {budget:g} s and was "
        "stopped; the server is busy: try again in a moment",
        "zh": "查找与这段文字相关的工作超出了 {budget:g} 秒的时间预算，已停止；服务器正忙，请稍后再试",
    },
    "related_words_only": {
        "en": "found by the text's words alone: the model was busy and did not read it in time (a retry in "
        "a moment adds the papers close in meaning)",
        "zh": "仅按文字中的词查找：模型正忙，未能及时读取这段文字（稍后重试会加入含义相近的论文）",
    },
    "over_budget": {
        "en": "this search needed more than its time budget of {budget:g} s and was stopped; "
        "narrow it (fewer OR terms, prefixes or very common words)",
        "zh": "这次检索超出了 {budget:g} 秒的时间预算，已停止；请缩小范围（减少 OR、前缀通配或非常常见的词）",
    },
    "not_ready": {"en": "not ready: {kind}: {error}", "zh": "尚未就绪：{kind}: {error}"},
    # /healthz while the published indexes are behind the database (service.health)
    "index_behind": {
        "en": "searches do not see every committed paper yet: {what} behind the database; {action}",
        "zh": "检索尚未覆盖所有已提交的论文：{what}落后于数据库；{action}",
    },
    "index_behind_what_lexical": {"en": "the word index is", "zh": "词索引"},
    "index_behind_what_vectors": {"en": "the published vectors are", "zh": "已发布的向量"},
    "index_behind_what_both": {"en": "the word index and the vectors are", "zh": "词索引和向量"},
    "index_behind_waiting": {
        "en": "a writer is running and publishes them when it finishes",
        "zh": "有写入进程正在运行，完成后会发布",
    },
    "index_behind_publishing": {
        "en": "this server is publishing them (the writer that committed them is gone)",
        "zh": "本服务器正在发布（提交它们的写入进程已不在）",
    },
    "index_behind_loading": {"en": "this server is loading them", "zh": "本服务器正在加载"},
    "index_behind_cannot": {
        "en": "this server cannot publish them ({error}); run `{fix}`",
        "zh": "本服务器无法发布（{error}）；请运行 `{fix}`",
    },
    "filter_too_long": {"en": "a filter value is longer than {limit} characters", "zh": "筛选值超过 {limit} 个字符"},
    "filter_nul": {"en": "a filter value contains a NUL character", "zh": "筛选值含有 NUL 字符"},
    "query_longer_than": {"en": "the query is longer than {limit} characters", "zh": "查询超过 {limit} 个字符"},
    "query_nul": {"en": "the query contains a NUL character", "zh": "查询含有 NUL 字符"},
    "param_not_text": {"en": "{name} must be text, got {value}", "zh": "{name} 应为文本，收到 {value}"},
    "page_range": {"en": "page must be between 1 and {limit}", "zh": "页码应在 1 到 {limit} 之间"},
    "per_page_range": {"en": "per_page must be between 1 and {limit}", "zh": "每页数量应在 1 到 {limit} 之间"},
    "k_range": {"en": "k must be between 1 and {limit}", "zh": "k 应在 1 到 {limit} 之间"},
    "limit_range": {"en": "limit must be between 1 and {limit}", "zh": "limit 应在 1 到 {limit} 之间"},
    "limit_from_zero": {"en": "limit must be between 0 and {limit}", "zh": "limit 应在 0 到 {limit} 之间"},
    "saved_no_longer_runs": {
        "en": "the saved search {name!r} no longer runs: {error}",
        "zh": "已保存的搜索 {name!r} 已无法运行：{error}",
    },
    "text_too_long": {"en": "the text is longer than {limit:,} characters", "zh": "文字超过 {limit:,} 个字符"},
    "text_missing": {"en": "text: paste an abstract or a paragraph", "zh": "text: 请粘贴一段摘要或文字"},
    "k_related": {"en": "k: an integer from 1 to {limit}", "zh": "k: 应为 1 到 {limit} 之间的整数"},
    "no_paper_this_id": {"en": "no paper with this id", "zh": "没有这个编号的论文"},
    "no_paper_id": {"en": "no paper with id {id!r}", "zh": "没有编号为 {id!r} 的论文"},
    # --- the discovery stage's (feed, library, recommend) and the web's -----------------------
    "day_written": {
        "en": "a day is written YYYY-MM-DD, got {value!r}",
        "zh": "日期应写成 YYYY-MM-DD，实际为 {value!r}",
    },
    "no_papers_on": {"en": "no papers listed on {day}", "zh": "{day} 没有论文"},
    "no_papers_period": {"en": "no papers in this period", "zh": "这段时间没有论文"},
    "no_upvotes_week": {"en": "no papers with upvotes in the last 7 days", "zh": "最近 7 天没有获得点赞的论文"},
    "no_hf_upvotes": {
        "en": "no paper of this period has Hugging Face upvotes; sorted by date",
        "zh": "这段时间的论文都没有 Hugging Face 点赞数据；按日期排序",
    },
    "for_you_needs_tags": {
        "en": "save papers to a tag to sort them for you; sorted by date",
        "zh": "把论文存入标签后即可为你排序；现按日期排序",
    },
    "no_dates": {"en": "no paper in the store has a date", "zh": "库中的论文都没有日期"},
    "store_empty": {"en": "the store has no papers yet", "zh": "库中还没有论文"},
    "category_too_long": {"en": "category is too long", "zh": "分类太长"},
    # a machine-written summary's labels (discover/summaries.pick, web/templates/_summary.html)
    "summary_tldr": {"en": "TL;DR", "zh": "一句话总结"},
    "summary_motivation": {"en": "Motivation", "zh": "研究动机"},
    "summary_method": {"en": "Method", "zh": "研究方法"},
    "summary_result": {"en": "Result", "zh": "实验结果"},
    "summary_conclusion": {"en": "Conclusion", "zh": "结论"},
    "summary_heading": {"en": "Summary", "zh": "摘要速览"},
    "summary_mark": {"en": "machine-written", "zh": "机器生成"},
    "summary_by": {
        "en": "Written by the language model {model}; it may be wrong. The abstract is the authors' own.",
        "zh": "由语言模型 {model} 自动生成，可能有误；作者原文见摘要。",
    },
    "model_too_few": {
        "en": "{model}: the default; {n} saved papers are too few to compare models on (needs {needed})",
        "zh": "{model}：默认模型；已存的 {n} 篇论文太少，无法比较各模型（至少需要 {needed} 篇）",
    },
    "model_better": {
        "en": "{model}: ranked held-out saved papers higher ({figures})",
        "zh": "{model}：把留出的已存论文排得更靠前（{figures}）",
    },
    "model_default": {
        "en": "{model}: the default; no other model ranked held-out saved papers clearly higher ({figures})",
        "zh": "{model}：默认模型；没有别的模型把留出的已存论文排得明显更靠前（{figures}）",
    },
    "model_figures": {
        "en": "held-out saved papers in the first 20: {top20}; MRR {mrr}",
        "zh": "留出的已存论文进入前 20 的比例：{top20}；MRR {mrr}",
    },
    "more_papers_better": {
        "en": "recommendations get better with more papers in the tag",
        "zh": "标签中的论文越多，推荐越准",
    },
    "import_zotero": {"en": "Bring a Zotero library in as tags:", "zh": "把 Zotero 文库导入为标签："},
    "import_zotero_file": {"en": "its CSL JSON or BibTeX export", "zh": "其 CSL JSON 或 BibTeX 导出"},
    "import_zotero_api": {"en": "a tag per collection", "zh": "每个分类一个标签"},
    # the tag page, below {n} papers (bench/tag_size.py; docs/recommendations.md, "How many papers a tag needs")
    "tag_needs_papers": {
        "en": "This tag has {count} of the {n} papers from which its recommendations were measured"
        " to hold: with 3 to 10, about 6 in 10 of the first 20 were on a broad field's topic; with"
        " {n}, 9 in 10 (a narrow topic: 8 in 10 from 3).",
        "zh": "这个标签有 {count} 篇论文；实测表明约 {n} 篇起推荐才稳定：3 到 10 篇时，"
        "宽泛领域的前 20 条推荐约六成切题；{n} 篇时约九成（窄主题 3 篇起即约八成）。",
    },
    "tag_has_no_papers": {
        "en": "save papers to this tag to get recommendations",
        "zh": "把论文保存到这个标签，即可获得推荐",
    },
    "paste_paragraph": {"en": "paste a paragraph or an abstract", "zh": "请粘贴一段文字或摘要"},
    "no_tag": {"en": "no tag named {name!r}", "zh": "没有名为 {name!r} 的标签"},
    "tag_exists": {"en": "a tag named {name!r} exists already", "zh": "已有名为 {name!r} 的标签"},
    "tag_name_too_long": {"en": "a tag name is at most {limit} characters", "zh": "标签名最多 {limit} 个字符"},
    "ids_not_in_store": {"en": "not in this store: {ids}", "zh": "本库没有：{ids}"},
    "library_read_only": {
        "en": "the library cannot be changed through a read-only store",
        "zh": "只读的库不能修改文库",
    },
    "tag_needs_name": {"en": "a tag needs a name", "zh": "标签需要一个名字"},
    "tag_name_chars": {
        "en": "a tag name cannot contain control characters, / or \\",
        "zh": "标签名不能含控制字符、/ 或 \\",
    },
    "too_many_tags": {"en": "the library holds at most {limit} tags", "zh": "文库最多 {limit} 个标签"},
    "tag_too_full": {"en": "a tag holds at most {limit} papers", "zh": "一个标签最多 {limit} 篇论文"},
    "search_value_bad": {"en": "{param}: not a value a search accepts", "zh": "{param}：搜索不接受这个值"},
    "saved_mode": {"en": "mode: one of {choices}", "zh": "mode：应为以下之一：{choices}"},
    "saved_not_parsed": {"en": "cannot save this search: {error}", "zh": "无法保存这个搜索：{error}"},
    "saved_query_too_long": {
        "en": "a saved query is at most {limit} characters of text",
        "zh": "保存的查询最多 {limit} 个字符的文本",
    },
    "saved_needs_query": {"en": "a saved search needs a query or a filter", "zh": "已保存的搜索需要查询词或筛选条件"},
    "saved_exists": {
        "en": "a saved search named {name!r} exists (#{id}: {query!r}); remove it first, or replace it with --replace",
        "zh": "已有名为 {name!r} 的已保存搜索（#{id}：{query!r}）；请先删除它，或用 --replace 替换",
    },
    "too_many_saved": {"en": "at most {limit} saved searches", "zh": "最多 {limit} 个已保存的搜索"},
    "no_saved_search": {"en": "no saved search {key!r}", "zh": "没有已保存的搜索 {key!r}"},
    "saved_search_broken": {
        "en": "this saved search no longer runs: {error}; edit it (saved add --replace) or remove it",
        "zh": "这个已保存的搜索已无法运行：{error}；请修改它（saved add --replace）或删除它",
    },
    "not_library_export": {
        "en": "not a paperdex library export (expected format {format!r})",
        "zh": "不是 paperdex 的文库导出文件（应为格式 {format!r}）",
    },
    "export_newer": {
        "en": "this library export is from a newer paperdex",
        "zh": "这个文库导出文件来自更新版本的 paperdex",
    },
    "export_tags_shape": {
        "en": "tags: each is an object with name and papers",
        "zh": "tags：每一项应是含 name 与 papers 的对象",
    },
    "export_saved_shape": {
        "en": "saved_searches: each is an object with name, query and params",
        "zh": "saved_searches：每一项应是含 name、query 与 params 的对象",
    },
    "internal_error": {
        "en": "internal error; the server log has the details",
        "zh": "服务器内部错误；详情见服务器日志",
    },
    # --- the web's writes (web/views/auth.py, library.py) and on-demand summaries (summary.py) ---
    "write_needs_token": {
        "en": "writing needs a token: make one with `paperdex token create`, then sign in on /library "
        "or send Authorization: Bearer TOKEN",
        "zh": "写入需要令牌：先用 `paperdex token create` 创建，再在 /library 登录，或发送 Authorization: Bearer TOKEN",
    },
    "token_not_valid": {"en": "this token is not valid (revoked or mistyped)", "zh": "令牌无效（已吊销或输错）"},
    "csrf_failed": {
        "en": "this form is not from this site (CSRF check failed); reload the page and retry",
        "zh": "此表单不是来自本站（CSRF 校验失败）；请刷新页面后重试",
    },
    "cannot_write_library": {
        "en": "this server cannot write its library: {reason}",
        "zh": "本服务器无法写入文献库：{reason}",
    },
    "cannot_write": {"en": "this server cannot write: {reason}", "zh": "本服务器无法写入：{reason}"},
    "body_not_json": {
        "en": "the body must be JSON, sent with Content-Type: application/json",
        "zh": "请求体必须是 JSON，并以 Content-Type: application/json 发送",
    },
    "body_not_object": {"en": "the body must be a JSON object", "zh": "请求体必须是一个 JSON 对象"},
    "body_not_object_because": {
        "en": "the body must be a JSON object: {reason}",
        "zh": "请求体必须是一个 JSON 对象：{reason}",
    },
    "no_paper_in_store": {"en": "no paper {id!r} in this store", "zh": "本库没有论文 {id!r}"},
    "feed_format": {"en": "a feed is .rss or .atom", "zh": "订阅源的格式是 .rss 或 .atom"},
    "ids_list": {
        "en": "ids: a list of paper ids ({example})",
        "zh": "ids: 论文编号的列表（{example}）",
    },
    "saved_params": {
        "en": "params: an object (mode, category, from, to, venue, area, author, lang)",
        "zh": "params: 应为一个对象（mode、category、from、to、venue、area、author、lang）",
    },
    "export_format": {"en": "format: json or bibtex", "zh": "format: json 或 bibtex"},
    "summary_langs": {"en": "lang takes {langs}, comma-separated", "zh": "lang 可取 {langs}，以逗号分隔"},
    "llm_settings": {"en": "the language model's settings: {reason}", "zh": "语言模型的设置有误：{reason}"},
    "no_llm": {
        "en": "this server has no language model configured (PAPERDEX_LLM_URL, PAPERDEX_LLM_MODEL)",
        "zh": "本服务器没有配置语言模型（PAPERDEX_LLM_URL、PAPERDEX_LLM_MODEL）",
    },
    "llm_unusable": {"en": "the language model could not be used: {reason}", "zh": "无法使用语言模型：{reason}"},
    "summary_budget": {
        "en": "today's summary budget is spent (PAPERDEX_LLM_PER_DAY)",
        "zh": "今天的摘要额度已用完（PAPERDEX_LLM_PER_DAY）",
    },
    "llm_not_summary": {
        "en": "the language model's answer was not a summary: {reason}",
        "zh": "语言模型的回答不是摘要：{reason}",
    },
    # --- the interface: the labels of the web pages (web/templates, web/views) --
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
    "go": {"en": "Go", "zh": "前往"},
    "day": {"en": "Day", "zh": "日期"},
    "error": {"en": "Something is wrong with this request", "zh": "请求有误"},
    "not_found": {"en": "Not found", "zh": "未找到"},
    "back_search": {"en": "Back to search", "zh": "返回检索"},
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
    "close": {"en": "Close", "zh": "关闭"},
    "no_facets": {"en": "Nothing to refine.", "zh": "没有可筛选的项。"},
    "hint_clear": {"en": "Remove the filters", "zh": "去掉筛选条件"},
    "hint_dense": {"en": "Search by meaning (semantic search)", "zh": "改用语义检索"},
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
    # saving to a tag (web/views/library.py)
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
    "empty_period": {"en": "No papers in this period.", "zh": "这段时间没有论文。"},
    # one table for every page: the library, tags, saved searches and feeds (web/views)
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
    "day_glance": {"en": "The day at a glance", "zh": "当天概览"},
    "shape_no_signal": {
        "en": "No Hugging Face upvotes for this day's papers yet.",
        "zh": "当天的论文还没有 Hugging Face 点赞。",
    },
    "shape_tags": {"en": "New for your tags", "zh": "与你的标签相关的新论文"},
    "new_for_tag": {"en": "{n} for {tag}", "zh": "{tag}：{n} 篇"},
    "shape_tags_none": {"en": "Nothing close to your tags today.", "zh": "今天没有与你的标签相近的论文。"},
    "shape_tags_empty": {
        "en": "Save papers to a tag to see what is new for it.",
        "zh": "把论文存入标签后，这里会显示相关新论文。",
    },
    "for_tag_likely": {"en": "for {tag} · likely", "zh": "可能相关：{tag}"},
    "for_tag_strong": {"en": "for {tag} · strong", "zh": "高度相关：{tag}"},
    "tag_too_small": {
        "en": "Add {n} more papers to {tag} to see which papers are for it (a tag of fewer marks too many wrongly).",
        "zh": "再向 {tag} 添加 {n} 篇论文，才会标出与它相关的论文（更小的标签误标太多）。",
    },
    "tag_too_small_one": {
        "en": "Add 1 more paper to {tag} to see which papers are for it (a tag of fewer marks too many wrongly).",
        "zh": "再向 {tag} 添加 1 篇论文，才会标出与它相关的论文（更小的标签误标太多）。",
    },
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
    # "Top" on a day without Hugging Face upvotes (web/views/daily.py daily_listing): stars do not lead it
    "ranked_by_no_upvotes_listing": {
        "en": "No Hugging Face upvotes for these papers yet, so in arXiv's listing order "
        "(GitHub stars rank the repositories, not the papers: see Stars)",
        "zh": "这些论文还没有 Hugging Face 点赞，因此按 arXiv 发布顺序排列"
        "（GitHub 星标衡量的是代码仓库而非论文，见“星标最多”）",
    },
    "ranked_by_no_upvotes_tags": {
        "en": "No Hugging Face upvotes for these papers yet, so ranked by your tags "
        "(GitHub stars rank the repositories, not the papers: see Stars)",
        "zh": "这些论文还没有 Hugging Face 点赞，因此按你的标签排序"
        "（GitHub 星标衡量的是代码仓库而非论文，见“星标最多”）",
    },
    # the day's completeness (web/views/daily.py day_completeness, from sources/completeness.py)
    "day_complete": {
        "en": "Complete: all {n} papers of arXiv's {listings} listing are here",
        "zh": "已完整：arXiv 的 {listings} 列表中的 {n} 篇论文均已收录",
    },
    "day_missing": {
        "en": "{n} papers missing from arXiv's {listings} listing; the next sync asks for them again",
        "zh": "arXiv 的 {listings} 列表中有 {n} 篇论文尚未收录；下次同步会再次获取",
    },
    "day_missing_one": {
        "en": "1 paper missing from arXiv's {listings} listing; the next sync asks for it again",
        "zh": "arXiv 的 {listings} 列表中有 1 篇论文尚未收录；下次同步会再次获取",
    },
    "day_missing_given_up": {
        "en": "{n} papers of arXiv's {listings} listing missing; no longer asked for (over a week old)",
        "zh": "arXiv 的 {listings} 列表中有 {n} 篇论文缺失；已超过一周，不再获取",
    },
    # the trending view with nothing to show: what it ranks by, and why it is empty
    "trending_none": {
        "en": "Trending lists the last 7 days' papers by Hugging Face upvotes: none of the papers of "
        "{span} has any yet (this store has no Hugging Face data for them).",
        "zh": "热门按 Hugging Face 点赞列出最近 7 天的论文：{span} 的论文还没有任何点赞"
        "（本库没有它们的 Hugging Face 数据）。",
    },
    "see_newest": {"en": "This week's papers, newest first", "zh": "本周论文（最新在前）"},
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
    "in_query": {"en": "query", "zh": "查询参数"},
    "in_path": {"en": "path", "zh": "路径"},
    "pagination": {"en": "Pages", "zh": "分页"},
}

# Text from outside paperdex, as plain English (its code is its English text), with its Chinese.
_OUTSIDE = {
    # Starlette (the 404 its router answers: HTTPException.detail)
    "Not Found": "未找到",
    # the API page: summaries and parameter descriptions (OpenAPI text is English)
    "Search papers": "检索论文",
    "Similar papers": "相似论文",
    "One paper": "单篇论文",
    "Daily papers": "每日论文",
    "Days with papers": "有论文的日期",
    "Query in the paperdex query language; empty lists newest": "paperdex 查询语法的查询；为空时列出最新论文",
    "Ranking": "排序方式（混合/关键词/语义）",
    "Order of the hits": "结果顺序",
    "1-based page number": "页码（从 1 开始）",
    "Hits per page": "每页结果数",
    "Papers per page": "每页论文数",
    "A category (cs.LG) or archive (cs)": "分类（cs.LG）或大类（cs）",
    "Earliest date, YYYY[-MM[-DD]]": "最早日期，YYYY[-MM[-DD]]",
    "Latest date, YYYY[-MM[-DD]]": "最晚日期，YYYY[-MM[-DD]]",
    "Substring of the venue": "会议/期刊名称的一部分",
    "Substring of the venue area": "会议领域名称的一部分",
    "An author name": "作者姓名",
    "How many neighbours": "返回多少篇相似论文",
    "How many days": "返回多少天",
    "Only papers in this category or archive": "只看该分类或大类的论文",
    "Hits carry title_html and snippet_html (escaped, query words in <mark>), and why (ranks per side).": (
        "每条结果带 `title_html` 与 `snippet_html`（已转义，查询词包在 `<mark>` 中）以及 `why`（两侧各自的排名）。"
    ),
    "Nearest neighbours of a paper by embedding (title words when it has no vector).": (
        "按向量找出一篇论文的最近邻（没有向量时按标题词）。"
    ),
    "One paper with every field, its links and a BibTeX entry. Ids may contain `/`\n(hep-th/9901002) and may "
    "carry an `arXiv:` prefix or a version suffix.": (
        "单篇论文的全部字段、链接与 BibTeX 条目。编号可以含 `/`（`hep-th/9901002`），可以带 `arXiv:` 前缀或版本后缀。"
    ),
    "Papers listed on one day, with per-category counts and the previous/next days.": (
        "某一天发布的论文，附各分类的数量以及前一天/后一天。"
    ),
    "Days that have papers, newest first, with counts.": "有论文的日期（最新在前）及其论文数。",
    "YYYY-MM-DD; default: the latest day in the store": "YYYY-MM-DD；默认为库中最新的一天",
}
MESSAGES.update({en: {"en": en, "zh": zh} for en, zh in _OUTSIDE.items()})

_FORMATTER = string.Formatter()


def fields(template: str) -> list[str]:
    """The names of the fields of a template, in order ("{id!r}" -> "id")."""
    return [name for _, name, _, _ in _FORMATTER.parse(template) if name is not None]


def text(lang: str, code: str, /, **params: Any) -> str:
    """The text of `code` in `lang` (English when the table has none) with its fields filled; a
    Message among them in `lang` too. A count of one (``n=1`` or ``count=1``) picks `code_one`
    when the table has it; a code the table does not have is shown as it is."""
    if params.get("count", params.get("n")) in (1, "1") and f"{code}_one" in MESSAGES:
        code = f"{code}_one"
    entry = MESSAGES.get(code)
    if entry is None:
        return code
    template = entry.get(lang) or entry["en"]
    if not params:
        return template
    return template.format_map({k: v.in_lang(lang) if isinstance(v, Message) else v for k, v in params.items()})


def shown(lang: str, msg: str) -> str:
    """A message as a reader of `lang` reads it: a Message in `lang`; plain text in `lang` when
    it is the English of a code that is its own English text (from outside paperdex), else as
    it is (the English of paperdex's own messages, as plain text, is not matched back)."""
    if isinstance(msg, Message):
        return msg.in_lang(lang)
    return text(lang, msg) if MESSAGES.get(msg, {}).get("en") == msg else msg


class Message(str):
    """A message: its English text (this string), its `code` in MESSAGES and its `params`."""

    code: str
    params: dict[str, Any]

    def __new__(cls, code: str, params: dict[str, Any]) -> Message:
        missing = [f for f in fields(MESSAGES[code]["en"]) if f not in params]
        if missing:
            raise KeyError(f"message {code!r} needs {', '.join(missing)}")
        self = super().__new__(cls, text("en", code, **params))
        self.code, self.params = code, dict(params)
        return self

    def __getnewargs__(self) -> tuple[Any, ...]:  # pickle and copy
        return (self.code, self.params)

    def __str__(self) -> str:
        # str(error) and f"{error}" keep the Message, so it survives `ServiceError(400, str(e))`
        return self

    def in_lang(self, lang: str) -> str:
        """The message in `lang` (English when the table has no text for it)."""
        return text(lang, self.code, **self.params)


def message(code: str, **params: Any) -> Message:
    """The message `code` with its fields; raises KeyError for an unknown code or a missing field."""
    return Message(code, params)


def param(name: str) -> str:
    """A request parameter's name as a message about it says it: a Message when the table
    names it in other languages, else the name."""
    return message(f"param_{name}") if f"param_{name}" in MESSAGES else name
