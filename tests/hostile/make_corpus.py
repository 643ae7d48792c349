"""Writes the hostile-records corpus next to this file (run it after changing a case; the
files are committed so the corpus can be read and reused without Python).

* ``good.jsonl``: records that are odd or malicious but valid: markup and script in every
  text field, ``javascript:``/``data:`` links, control and escape characters, bidi overrides,
  heavy LaTeX, a 100,000-character abstract (cut at ingest, with a note), ids with ``/``,
  ``?``, ``#`` and ``%``, numeric ids and titles, a UTF-8 byte-order mark. All must be kept.
* ``bad.jsonl``: each line that cannot become a paper (NaN, huge numbers, a non-object
  ``extra``, deep nesting, dates that do not exist, wrong types, unpaired surrogates, invalid
  UTF-8, broken JSON) between good lines. Bad lines must be reported, good ones kept.
* ``expected.json``: the ids that must be stored and, for each bad line, a piece of its message.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
XSS = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'><svg onload=alert(3)>"


def good_records() -> list[dict]:
    base = {"authors": ["Ada Lovelace"], "categories": ["cs.LG"], "listed": "2025-03-19"}
    recs = [
        {"id": "2598.00001", "title": f"Hostile title {XSS}", "abstract": f"Hostile abstract {XSS} end."},
        {
            "id": "2598.00002",
            "title": "Links that must not be followed",
            "code_url": "javascript:alert(1)",
            "abs_url": "data:text/html,<script>alert(1)</script>",
            "pdf_url": "JaVaScRiPt:alert(1)",
        },
        {
            "id": "2598.00003",
            "title": "More links",
            "code_url": "//evil.example/x",
            "pdf_url": "vbscript:msgbox(1)",
            "abs_url": 'https://ok.example/"onmouseover="alert(1)',
        },
        {
            "id": "2598.00004",
            "title": "Terminal \x1b[31mred\x1b[0m and \x9b2J bell\x07 title",
            "abstract": "Escape \x1b]0;pwned\x07 sequences and \x1b[2J clear screen.",
            "authors": ["Eve \x1b[1mBold\x1b[0m"],
        },
        {
            "id": "2598.00005",
            "title": "Right-to-left \u202egnp.exe override \u2066isolate\u2069",
            "abstract": "Zero\u200bwidth, joiner \u200d, BOM \ufeff inside.",
        },
        {
            "id": "2598.00006",
            "title": r"$\frac{a}{b}$ \textbf{bold {nested}} $$\int_0^\infty$$ and a stray $ sign",
            "abstract": r"\begin{itemize}\item x\end{itemize} $x^{2^{3}}$ \\ \{ \} %comment & tab",
        },
        {"id": "2598.00007", "title": "A very long abstract", "abstract": "lorem ipsum dolor " * 5_600},
        {"id": "hep-th/9901002", "title": "An old-style arXiv id with a slash"},
        {"id": "openreview:abc?x=1#frag", "title": "An id with query and fragment characters"},
        {"id": "bib:ab%2Fcd&x=<b>", "title": "An id with a percent, an ampersand and markup"},
        {"id": 2598, "title": 1984, "abstract": "A numeric id and a numeric title."},
        {"id": "2598.00008", "title": "Emoji 🧪🔬 CJK 扩散模型 combining é and 𝔼 astral"},
        {
            "id": "2598.00009",
            "title": "Private-use marker characters \ue000 \ue001 \ue002 injected",
            "abstract": "\ue000<b>not bold</b>\ue001 \ue004em\ue005",
        },
        {
            "id": "2598.00010",
            "title": "Hostile metadata",
            "venue": '"></a></details><script>alert(1)</script>',
            "venue_area": "<style>body{display:none}</style>",
            "comment": "[x](javascript:alert(1)) <i>c</i>",
            "categories": ["cs.LG", "<script>x</script>"],
            "authors": [f"Author {i} <b>" for i in range(300)],
        },
        {
            "id": "2598.00011",
            "title": "Big but valid numbers",
            "code_url": "https://github.com/x/y",
            "code_stars": 10**15,
            "extra": {"<b>key</b>": {"a": {"b": {"c": [1, 2.5, None, True, "javascript:x"]}}}},
        },
        {"id": "2598.00012", "title": "Leap day and a time", "listed": "2024-02-29T23:59:59Z"},
        {"id": "2598.00013", "title": "NUL \x00 and DEL \x7f inside", "abstract": "Nul\x00byte."},
        {"id": "2598.00014", "title": "\u0000" + "x" * 1500},
    ]
    return [{**base, **r} for r in recs]


def bad_lines() -> list[tuple[bytes, str]]:
    """(line bytes, a piece of the message that must name it)."""

    def j(d: dict) -> bytes:
        return json.dumps({"id": "2597.00001", "title": "t", **d}).encode()

    return [
        (b'{"id": "2597.00001", "title": "t", "code_stars": NaN}', "is nan"),
        (b'{"id": "2597.00002", "title": "t", "extra": {"x": Infinity}}', "is inf"),
        (b'{"id": "2597.00003", "title": "t", "extra": {"x": -Infinity}}', "is -inf"),
        (j({"code_stars": 10**30}), "out of range"),
        (b'{"id": "2597.00004", "title": "t", "n": ' + b"9" * 5000 + b"}", "more than 4,300 digits"),
        (j({"extra": "s"}), "'extra' must be a JSON object"),
        (j({"extra": [1]}), "'extra' must be a JSON object"),
        (j({"extra": 3}), "'extra' must be a JSON object"),
        (b'{"id": "2597.00005", "title": "t", "extra": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", "nested"),
        (j({"extra": {"a": [[[[[[[[[[[1]]]]]]]]]]]}}), "nested more than"),
        (j({"listed": "2025-13-45"}), "not a real date"),
        (j({"published": "2025-02-30"}), "not a real date"),
        (j({"updated": "yesterday"}), "must be a date"),
        (j({"id": 2597.5}), "write ids as strings"),
        (json.dumps({"title": "no id"}).encode(), "missing or empty 'id'"),
        (j({"id": ""}), "missing or empty 'id'"),
        (j({"id": "has space"}), "spaces or control characters"),
        (j({"id": "../../etc/passwd"}), "not usable in a link"),
        (j({"title": None}), "missing or empty 'title'"),
        (j({"title": {"en": "x"}}), "'title' must be a string"),
        (j({"authors": ["a", 7]}), "'authors[1]' must be a string"),
        (j({"categories": ["cs.LG"] * 2001}), "the limit is 2,000"),  # authors are never refused
        (j({"authors_truncated": "yes"}), "must be true or false"),
        (b'{"id": "2597.00006", "title": "lone \\ud800 surrogate"}', "unpaired surrogate"),
        (b'{"id": "2597.00007", "title": "caf\xe9 latin-1"}', "invalid UTF-8"),
        (b"{oops", "invalid JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b'"just a string"', "expected a JSON object"),
        (b"null", "expected a JSON object"),
        (j({"code_stars": -1}), "'code_stars' must be a whole number"),
        (j({"code_stars": "many"}), "'code_stars' must be a whole number"),
        (j({"categories": "x" * 400}), "category is longer"),
    ]


def main() -> None:
    good = good_records()
    lines = [json.dumps(r, ensure_ascii=False).encode() for r in good]
    (HERE / "good.jsonl").write_bytes(b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n")
    out: list[bytes] = []
    expected_bad: dict[int, str] = {}
    between = []
    for k, (raw, msg) in enumerate(bad_lines()):
        keep = {"id": f"2596.{k:05d}", "title": f"Good record between bad ones {k}", "listed": "2025-03-20"}
        out.append(json.dumps(keep).encode())
        between.append(keep["id"])
        out.append(raw)
        expected_bad[len(out)] = msg
    (HERE / "bad.jsonl").write_bytes(b"\n".join(out) + b"\n")
    good_ids = [str(r["id"]) for r in good] + between
    (HERE / "expected.json").write_text(
        json.dumps({"good_ids": good_ids, "bad_lines": expected_bad}, indent=1, ensure_ascii=False) + "\n"
    )


if __name__ == "__main__":
    main()
