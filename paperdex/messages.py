"""Every message the core shows a person (query errors, search notices, service errors), once:
a code, and its English and Chinese templates with named fields.

A producer writes ``message("unbalanced_quote")`` or ``message("no_paper_id", id=pid)``; what it
gets is a :class:`Message`, which *is* the English text (a ``str``), so callers, log lines, JSON
fields and tests that read it as a string are unchanged, and which carries its code and fields,
so the interface shows it in another language with ``msg.in_lang("zh")`` instead of matching
the English text. A field whose value is a Message (a query error inside "… (at character N)")
is shown in the same language.

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
    "busy_related": {
        "en": "the server is busy with other related-work requests; try again in a moment",
        "zh": "服务器正忙于其他查找相关工作的请求，请稍后再试",
    },
    "over_budget": {
        "en": "this search needed more than its time budget of {budget:g} s and was stopped; "
        "narrow it (fewer OR terms, prefixes or very common words)",
        "zh": "这次检索超出了 {budget:g} 秒的时间预算，已停止；请缩小范围（减少 OR、前缀通配或非常常见的词）",
    },
    "not_ready": {"en": "not ready: {kind}: {error}", "zh": "尚未就绪：{kind}: {error}"},
    "filter_too_long": {"en": "a filter value is longer than {limit} characters", "zh": "筛选值超过 {limit} 个字符"},
    "filter_nul": {"en": "a filter value contains a NUL character", "zh": "筛选值含有 NUL 字符"},
    "query_longer_than": {"en": "the query is longer than {limit} characters", "zh": "查询超过 {limit} 个字符"},
    "query_nul": {"en": "the query contains a NUL character", "zh": "查询含有 NUL 字符"},
    "page_range": {"en": "page must be between 1 and {limit}", "zh": "页码应在 1 到 {limit} 之间"},
    "per_page_range": {"en": "per_page must be between 1 and {limit}", "zh": "每页数量应在 1 到 {limit} 之间"},
    "k_range": {"en": "k must be between 1 and {limit}", "zh": "k 应在 1 到 {limit} 之间"},
    "limit_range": {"en": "limit must be between 1 and 1000", "zh": "limit 应在 1 到 1000 之间"},
    "text_too_long": {"en": "the text is longer than {limit:,} characters", "zh": "文字超过 {limit:,} 个字符"},
    "text_missing": {"en": "text: paste an abstract or a paragraph", "zh": "text: 请粘贴一段摘要或文字"},
    "k_related": {"en": "k: an integer from 1 to 100", "zh": "k: 应为 1 到 100 之间的整数"},
    "no_paper_this_id": {"en": "no paper with this id", "zh": "没有这个编号的论文"},
    "no_paper_id": {"en": "no paper with id {id!r}", "zh": "没有编号为 {id!r} 的论文"},
    # --- the discovery stage's (feed, library, recommend) and the web's; `not_found` is
    # Starlette's own text, recognised by its English (i18n.FOREIGN) -------------------------
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
    "paste_paragraph": {"en": "paste a paragraph or an abstract", "zh": "请粘贴一段文字或摘要"},
    "no_tag": {"en": "no tag named {name!r}", "zh": "没有名为 {name!r} 的标签"},
    "tag_exists": {"en": "a tag named {name!r} exists already", "zh": "已有名为 {name!r} 的标签"},
    "tag_name_too_long": {"en": "a tag name is at most {limit} characters", "zh": "标签名最多 {limit} 个字符"},
    "ids_not_in_store": {"en": "not in this store: {ids}", "zh": "本库没有：{ids}"},
    "not_found": {"en": "Not Found", "zh": "未找到"},
    "internal_error": {
        "en": "internal error; the server log has the details",
        "zh": "服务器内部错误；详情见服务器日志",
    },
}

_FORMATTER = string.Formatter()


def fields(template: str) -> list[str]:
    """The names of the fields of a template, in order ("{id!r}" -> "id")."""
    return [name for _, name, _, _ in _FORMATTER.parse(template) if name is not None]


def plain(template: str) -> str:
    """The template with each field's conversion and format dropped ("{n:,}" -> "{n}"), for
    fields whose values are already the text they are shown as."""
    out = []
    for literal, name, _, _ in _FORMATTER.parse(template):
        out.append(literal.replace("{", "{{").replace("}", "}}"))
        if name is not None:
            out.append("{" + name + "}")
    return "".join(out)


class Message(str):
    """A message: its English text (this string), its `code` in MESSAGES and its `params`."""

    code: str
    params: dict[str, Any]
    shown: bool  # the params are the text they are shown as (recognised from the English)

    def __new__(cls, code: str, params: dict[str, Any], *, shown: bool = False) -> Message:
        entry = MESSAGES[code]
        missing = [f for f in fields(entry["en"]) if f not in params]
        if missing:
            raise KeyError(f"message {code!r} needs {', '.join(missing)}")
        self = super().__new__(cls, _render(entry["en"], params, "en", shown))
        self.code, self.params, self.shown = code, dict(params), shown
        return self

    def __getnewargs_ex__(self) -> tuple[tuple[Any, ...], dict[str, Any]]:  # pickle and copy
        return (self.code, self.params), {"shown": self.shown}

    def __str__(self) -> str:
        # str(error) and f"{error}" keep the Message, so it survives `ServiceError(400, str(e))`
        return self

    def in_lang(self, lang: str) -> str:
        """The message in `lang` (English when the table has no text for it)."""
        if lang == "en":
            return str.__str__(self)
        entry = MESSAGES[self.code]
        return _render(entry.get(lang) or entry["en"], self.params, lang, self.shown)


def _render(template: str, params: dict[str, Any], lang: str, shown: bool) -> str:
    values = {k: v.in_lang(lang) if isinstance(v, Message) else v for k, v in params.items()}
    return (plain(template) if shown else template).format_map(values)


def message(code: str, **params: Any) -> Message:
    """The message `code` with its fields; raises KeyError for an unknown code or a missing field."""
    return Message(code, params)


def param(name: str) -> str:
    """A request parameter's name as a message about it says it: a Message when the table
    names it in other languages, else the name."""
    return message(f"param_{name}") if f"param_{name}" in MESSAGES else name
