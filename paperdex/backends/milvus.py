"""The search contract (docs/search.md) on Milvus, through pymilvus: a Milvus Lite file for one
machine, or a Milvus standalone/cluster server (``http://host:19530``) for many.

One collection holds the papers::

    pk         INT64 primary key (the store's rowid when migrated; ties go to the lower one)
    id, doi    VARCHAR              a paper id, its DOI (lower case) for pasted references
    doc        VARCHAR              the whole record as JSON (zlib + base64 when long)
    lex        VARCHAR -> sparse    BM25 function input: paperdex's own Porter stems of
                                    title x3 + abstract + authors x2 (a BM25F stand-in),
                                    space-padded (`lex like "% stem %"` is "holds the word")
    ti_lex, au_lex VARCHAR          the distinct stems of the title, of the authors
    cats, archives, categories      ARRAY<VARCHAR>: categories lower-cased, their archives,
                                    and as given (for facets)
    date       INT64                YYYYMMDD (listed, else published; 0 = none)
    venue_lc, area_lc VARCHAR       ASCII-lower-cased, for `venue:` / `area:` (LIKE)
    dense      FLOAT_VECTOR         the paper's embedding (zeros with has_vec = false if none)

Words are stemmed by paperdex (``paperdex.text``) before they reach Milvus, and the analyzer
only splits on whitespace: a word matches in Milvus exactly when it matches in the embedded
store. Milvus Lite 2.5 has no TEXT_MATCH and no NOT operator, so:

* free words are listed through the BM25 index: one sparse search per stem within the
  constraints (rare stems whole; common ones among the candidates the rare ones bound, else
  block by block of primary keys); the free-word rule, the BM25 sums and the phrase bonus
  are then computed here, exactly for every matched paper (``_by_postings``);
* words inside constraints (NOT/OR structure, ``ti:``, ``au:``) are ``lex like "% stem %"``
  (Milvus Lite indexes neither ARRAY nor infix LIKE: a scan), and the minimum-should-match
  rule, when it must be an expression, an OR of ANDs (up to ``MAX_COMBOS``);
* NOT is pushed into the atom where it has a complement (dates, ids) and otherwise evaluated
  as ``pk not in [...]`` over the papers the negated part matches (up to ``MAX_SCAN``);
* exact phrases, ``abs:`` words, prefixes and over-long free-word rules have a superset in
  Milvus and are checked exactly in Python on the candidates (at most ``MAX_SCAN`` of them;
  past that the query is refused with a message, never answered wrongly);
* a multi-word alternative ("large language model" for 大语言模型, an acronym's long form)
  counts only with its words together (``search.alt_pairs``): Milvus lists the papers with
  all of its words, and the pairs are checked on their ``lex`` rows (``_lex_adjacent``: the
  title is the part ``lex`` repeats three times, so no pair across the title's end counts),
  or on the paper's own text where the row cannot say. Milvus Lite 2.5.1 creates fields with
  ``enable_match`` but refuses ``PHRASE_MATCH`` (and ``TEXT_MATCH``) filters ("Invalid expr").

Fusion is the contract's RRF, computed here from the BM25 ranking (every matched paper, or
to ``FUSE_DEPTH`` on the expression road) and a dense ranking (``DENSE_DEPTH``), so that the
cosine floors, the per-class fusion weights and "why this matched" are the embedded store's.
The gaps are listed in docs/scale-out.md.
"""

from __future__ import annotations

import base64
import itertools
import json
import logging
import math
import threading
import time
import zlib
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .. import query as Q
from ..paper import Paper, index_text
from ..search import (
    _REAL_CATEGORY,
    DENSE_DEPTH,
    MAX_PREFIX_TERMS,
    NOTICE_NO_VECTORS,
    PHRASE_BOOST,
    PHRASE_DEPTH,
    RELAX_BELOW,
    Concept,
    Filters,
    Hit,
    Result,
    alt_pairs,
    close_matches,
    concepts_of,
    counts_all,
    mark,
    phrase_units,
    plan,
    required,
    snippet,
    text_pairs,
    together,
)
from ..store import IngestSummary, StoreError
from ..text import STOPWORDS, has_cjk, stem, tokens

log = logging.getLogger(__name__)

# The previous search contract's fusion, (k, lexical weight, dense weight) by (language,
# length): this backend still ranks the matched set by RRF; the embedded engine ranks every
# candidate by fused scores (search.relevance_order). Bringing it here is issue 20's one engine.
RRF_FUSION = {
    ("en", "short"): (60, 1.0, 0.05),
    ("en", "long"): (10, 1.0, 0.05),
    ("zh", "short"): (60, 1.0, 0.05),
    ("zh", "long"): (10, 1.0, 0.05),
}


_QUIET = threading.local()
_LITE_LOCK = threading.Lock()
_LITE_REFS: dict[str, int] = {}


class _QuietEmptyArray(logging.Filter):
    """pymilvus 2.5 logs ERRORs (and raises) when a query with an ARRAY output field matches
    nothing; `_query` reads that as no rows and re-raises anything else, so while it runs
    pymilvus's own query-failure lines are noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(_QUIET, "on", False)


for _name in ("pymilvus.decorators", "pymilvus.milvus_client.milvus_client"):
    logging.getLogger(_name).addFilter(_QuietEmptyArray())

MAX_SCAN = 16_384  # candidates checked in Python at most (Milvus's largest query/search window)
MAX_COMBOS = 64  # OR-of-AND terms one free-word rule may expand to
FUSE_DEPTH = 1000  # lexical ranks computed per query (at least; deeper when a page needs it)
MAX_TOPK = 16_384
FIRST_WINDOW = 2048  # a stem's papers listed in the first search (rare words are complete in it)
MAX_BLOCKS = 64  # a stem's papers are listed in at most this many searches (1M papers)
MAX_LEX = 65_000  # bytes of the BM25 text (VARCHAR's limit is 65,535)
DEFAULT_DIM = 384  # both of paperdex's models
FALSE = "pk < 0"
FACET_LIMIT = 12
_NOT_EXACT = object()


def _lit(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _like(value: str) -> str:
    """A LIKE pattern for 'contains value' (`%` and `_` typed by a user are literal)."""
    esc = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return _lit("%" + esc + "%")


def _ascii_lower(s: str | None) -> str:
    """SQLite's LIKE folds ASCII letters only; so does this (the embedded rule)."""
    return (s or "").translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(65, 91)}


def _date_int(d: str | None) -> int:
    if not d:
        return 0
    digits = d[:10].replace("-", "")
    return int(digits.ljust(8, "0")) if digits.isdigit() else 0


def _stems(text: str) -> list[str]:
    return [stem(w) for w in tokens(text) if w not in STOPWORDS]


def _archive(cat: str) -> str:
    return cat.split(".", 1)[0]


def _encode_doc(p: Paper) -> str:
    s = json.dumps(asdict(p), ensure_ascii=False, sort_keys=True)
    if len(s.encode()) <= 60_000:
        return s
    return "z:" + base64.b64encode(zlib.compress(s.encode(), 6)).decode()


def _decode_doc(s: str) -> Paper:
    if s.startswith("z:"):
        s = zlib.decompress(base64.b64decode(s[2:])).decode()
    return Paper(**json.loads(s))


def _fit(values: list[str], cap: int, length: int) -> list[str]:
    out = [v for v in dict.fromkeys(values) if len(v.encode()) <= length]
    return out[:cap]


def _spaced(words: list[str]) -> str:
    """Stems between spaces, so that `LIKE "% stem %"` finds a whole stem."""
    return " " + " ".join(words) + " "


def _unspaced(text: str) -> list[str]:
    """The stems of a `_spaced` text, empty ones included (Porter makes "" of an "s")."""
    return text[1:-1].split(" ") if len(text) > 2 else []


def _lex(ti: list[str], ab: list[str], au: list[str]) -> str:
    """The BM25 text (title x3 + abstract + authors x2, a BM25F stand-in), which also holds
    every distinct stem of the paper: when it would be too long, authors count once, then
    the text is every distinct stem once."""
    for parts in (
        (ti, ti, ti, ab, au, au),
        (ti, ti, ti, ab, list(dict.fromkeys(au))),
        (list(dict.fromkeys(ti + ab + au)),),
    ):
        lex = _spaced([w for part in parts for w in part])
        if len(lex.encode()) <= MAX_LEX:
            return lex
    log.warning("paper with %d bytes of distinct words: Milvus keeps the first %d", len(lex.encode()), MAX_LEX)
    return lex.encode()[:MAX_LEX].decode(errors="ignore").rsplit(" ", 1)[0] + " "


def _row(pk: int, p: Paper, vec: np.ndarray | None, dim: int) -> dict:
    ti = _stems(index_text(p.title))
    ab = _stems(index_text(p.abstract))
    au = _stems(" ".join(p.authors))
    lex = _lex(ti, ab, au)
    cats = [c.lower() for c in p.categories]
    doi = str((p.extra or {}).get("doi") or "").lower()
    has = vec is not None
    v = np.zeros(dim, dtype=np.float32) if vec is None else np.asarray(vec, dtype=np.float32)
    return {
        "pk": int(pk),
        "id": p.id,
        "doi": doi[:500],
        "doc": _encode_doc(p),
        "lex": lex,
        "ti_lex": _spaced(list(dict.fromkeys(ti)))[:8000],
        "au_lex": _spaced(list(dict.fromkeys(au)))[:MAX_LEX],
        "cats": _fit(cats, 256, 300),
        "archives": _fit([_archive(c) for c in cats], 256, 300),
        "categories": _fit(list(p.categories), 256, 300),
        "date": _date_int(p.date),
        "venue_lc": _ascii_lower(p.venue)[:2000],
        "area_lc": _ascii_lower(p.venue_area)[:2000],
        "content_hash": p.content_hash(),
        "text_hash": p.text_hash(),
        "updated": p.updated or "",
        "has_vec": has,
        "dense": v,
    }


# --- a paper as the Python checker sees it ---------------------------------------------------


class _Doc:
    """One candidate, for the parts of a query Milvus cannot decide: fields' stems and
    exact (unstemmed) word sequences computed on demand, by the embedded store's rules."""

    def __init__(self, pk: int, paper: Paper) -> None:
        self.pk = pk
        self.paper = paper
        self._stems: dict[str | None, set[str]] = {}
        self._words: dict[str, list[str]] = {}
        self._pairs: dict[str | None, set[tuple[str, str]]] = {}

    def words(self, column: str) -> list[str]:
        w = self._words.get(column)
        if w is None:
            p = self.paper
            text = {
                "title": index_text(p.title),
                "abstract": index_text(p.abstract),
                "authors": " ; ".join(p.authors),
                "categories": " ".join(p.categories),
            }[column]
            w = self._words[column] = tokens(text)
        return w

    def stems(self, column: str | None) -> set[str]:
        s = self._stems.get(column)
        if s is None:
            if column is None:
                s = self.stems("title") | self.stems("abstract") | self.stems("authors")
            else:
                ws = tokens(" ".join(self.paper.authors)) if column == "authors" else self.words(column)
                s = {stem(w) for w in ws if w not in STOPWORDS}
            self._stems[column] = s
        return s

    def pairs(self, column: str | None) -> set[tuple[str, str]]:
        """Adjacent stem pairs of a field (None: the title's and the abstract's, as the
        embedded store's pair index holds them)."""
        got = self._pairs.get(column)
        if got is None:
            p = self.paper
            if column is None:
                got = self.pairs("title") | self.pairs("abstract")
            else:
                got = text_pairs({"title": p.title, "abstract": p.abstract, "authors": " ".join(p.authors)}[column])
            self._pairs[column] = got
        return got

    def has_phrase(self, ws: list[str], column: str | None) -> bool:
        cols = [column] if column else ["title", "abstract", "authors", "categories"]
        n = len(ws)
        for c in cols:
            seq = self.words(c)
            for i in range(len(seq) - n + 1):
                if seq[i : i + n] == ws:
                    return True
        return False

    @property
    def date(self) -> int:
        return _date_int(self.paper.date)


def _concept_in(c: Concept, d: _Doc, column: str | None) -> bool:
    """search._Eval.concept_mask for one paper: any alternative, all its words in the field,
    a multi-word one only with its words together (search.alt_pairs)."""
    stems = d.stems(column)
    return any(
        all(s in stems for s in alt) and (not together(c, alt) or all(p in d.pairs(column) for p in alt_pairs(alt)))
        for alt in c.alts
    )


def _multiword(c: Concept) -> bool:
    """Whether the concept has an alternative whose words must stand together (checked in Python)."""
    return any(together(c, alt) for alt in c.alts)


def _lex_adjacent(pairs: list[tuple[str, str]], lex: str, ti_lex: str, au_lex: str) -> bool | None:
    """Whether each pair stands together in the title or the abstract, read from a row's
    `lex` (title x3, abstract, authors: see `_lex`), or None when the row alone cannot say
    (no title, the distinct-stems form, a title with more than one reading, a pair whose
    second word is also an author's): then the paper's own text decides. Pairs across the
    parts (the title's last word and the abstract's first) are not pairs of the paper."""
    W, D = _unspaced(lex), _unspaced(ti_lex)
    if not D:
        return None
    n, first = len(W), W[0] if W else None
    # the title: the W[:L] that W repeats three times (L >= its distinct stems); one reading only
    Ls = [
        L
        for L in range(len(D), n // 3 + 1)
        if W[L] == first and W[2 * L] == first and W[:L] == W[L : 2 * L] == W[2 * L : 3 * L] and set(W[:L]) == set(D)
    ]
    if len(Ls) != 1:
        return None
    L = Ls[0]
    title = set(zip(W[:L], W[1:L], strict=False))
    rest = W[3 * L :]
    authors = set(_unspaced(au_lex))
    for x, y in pairs:
        if (x, y) in title:
            continue
        hits = [i for i in range(len(rest) - 1) if rest[i] == x and rest[i + 1] == y]
        if not hits:
            return False
        if y in authors:  # the abstract's last word and the first author's, or two authors'
            return None
    return True


# --- compiling a query --------------------------------------------------------------------


@dataclass
class Part:
    """A node in Milvus terms: `expr` (None = no restriction) is exact, or a superset of
    what the node matches when `exact` is False (then Python decides)."""

    expr: str | None
    exact: bool


def _and(exprs: Iterable[str | None]) -> str | None:
    es = [e for e in exprs if e is not None]
    if not es:
        return None
    if FALSE in es:
        return FALSE
    return es[0] if len(es) == 1 else " and ".join(f"({e})" for e in es)


def _or(exprs: list[str]) -> str:
    es = [e for e in exprs if e != FALSE]
    if not es:
        return FALSE
    return es[0] if len(es) == 1 else " or ".join(f"({e})" for e in es)


_FIELD = {None: "lex", "title": "ti_lex", "authors": "au_lex", "abstract": "lex"}


def _alt_expr(alt: tuple[str, ...], field: str) -> str:
    """All of the alternative's words (a superset of a multi-word alternative's papers: their
    adjacency is checked on the candidates)."""
    # stems are runs of letters and digits: nothing in them is special to LIKE
    return _and([f"{field} like {_lit('% ' + s + ' %')}" for s in dict.fromkeys(alt)]) or FALSE


def concept_expr(c: Concept, column: str | None = None) -> str:
    field = _FIELD[column]
    return _or([_alt_expr(alt, field) for alt in c.alts])


def min_should(exprs: list[str], k: int) -> str | None:
    """At least k of the expressions, as an OR of ANDs; None when that is too long."""
    n = len(exprs)
    if k >= n:
        return _and(exprs)
    if math.comb(n, k) > MAX_COMBOS:
        return None
    return _or([_and(list(sub)) or FALSE for sub in itertools.combinations(exprs, k)])


# --- the backend --------------------------------------------------------------------------


class MilvusBackend:
    """Papers in a Milvus collection, searched under the contract of docs/search.md."""

    name = "milvus"

    def __init__(self, uri: str | Path, *, collection: str = "papers", dim: int = DEFAULT_DIM) -> None:
        from pymilvus import MilvusClient

        self.uri = str(uri)
        self.lite = not self.uri.startswith(("http://", "https://", "tcp://", "grpc://"))
        if self.lite:
            path = Path(self.uri).expanduser().absolute()
            path.parent.mkdir(parents=True, exist_ok=True)
            self.uri = str(path)
        self.client = MilvusClient(self.uri)
        self._closed = False
        with _LITE_LOCK:
            _LITE_REFS[self.uri] = _LITE_REFS.get(self.uri, 0) + 1
        self.col = collection
        self.meta_col = f"{collection}_meta"
        self.dim = dim
        self._embedder = None
        self._written: set[str] = set()
        self._vstate = None
        self._post_cache: dict = {}
        self._last_post: dict = {}
        self._last_counts: dict[int, int] = {}
        self._restricted: set[str] = set()
        self.fusion = RRF_FUSION
        self._ensure()

    # --- schema ---------------------------------------------------------------------------
    def _ensure(self) -> None:
        from pymilvus import DataType, Function, FunctionType

        c = self.client
        if not c.has_collection(self.meta_col):
            s = c.create_schema()
            s.add_field("key", DataType.VARCHAR, is_primary=True, max_length=256)
            s.add_field("value", DataType.VARCHAR, max_length=65535)
            s.add_field("v", DataType.FLOAT_VECTOR, dim=2)
            ip = c.prepare_index_params()
            ip.add_index("v", index_type="FLAT", metric_type="L2")
            c.create_collection(self.meta_col, schema=s, index_params=ip, consistency_level="Strong")
        if c.has_collection(self.col):
            dim = self._meta("dim")
            if dim:
                self.dim = int(dim)
            c.load_collection(self.col)
            return
        s = c.create_schema()
        s.add_field("pk", DataType.INT64, is_primary=True)
        s.add_field("id", DataType.VARCHAR, max_length=512)
        s.add_field("doi", DataType.VARCHAR, max_length=512)
        s.add_field("doc", DataType.VARCHAR, max_length=65535)
        s.add_field(
            "lex",
            DataType.VARCHAR,
            max_length=65535,
            enable_analyzer=True,
            analyzer_params={"tokenizer": "whitespace"},
        )
        s.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        # FLOAT_VECTOR, not FLOAT16: Milvus Lite 2.5.1 scans f16 about 20x slower (no f16 SIMD;
        # 50 ms against 2.4 ms for 10k vectors, measured), for half the bytes
        s.add_field("dense", DataType.FLOAT_VECTOR, dim=self.dim)
        s.add_field("has_vec", DataType.BOOL)
        # stems as spaced VARCHARs, not ARRAYs: Milvus Lite 2.5.1 inserted 20k rows of 120-stem
        # arrays in 437 s and the same stems as one string in 17 s (measured)
        s.add_field("ti_lex", DataType.VARCHAR, max_length=8192)
        s.add_field("au_lex", DataType.VARCHAR, max_length=65535)
        for name, cap, length in (
            ("cats", 256, 300),
            ("archives", 256, 300),
            ("categories", 256, 300),
        ):
            s.add_field(name, DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=cap, max_length=length)
        s.add_field("date", DataType.INT64)
        s.add_field("venue_lc", DataType.VARCHAR, max_length=8192)
        s.add_field("area_lc", DataType.VARCHAR, max_length=8192)
        s.add_field("content_hash", DataType.VARCHAR, max_length=64)
        s.add_field("text_hash", DataType.VARCHAR, max_length=64)
        s.add_field("updated", DataType.VARCHAR, max_length=64)
        s.add_function(
            Function(
                name="bm25", function_type=FunctionType.BM25, input_field_names=["lex"], output_field_names=["sparse"]
            )
        )
        ip = c.prepare_index_params()
        ip.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        # Milvus Lite 2.5 offers FLAT, IVF_FLAT and AUTOINDEX for dense vectors; FLAT is exact.
        # A server deployment may recreate this index as HNSW (docs/scale-out.md).
        ip.add_index("dense", index_type="FLAT", metric_type="IP")
        c.create_collection(self.col, schema=s, index_params=ip, consistency_level="Strong")
        self._set_meta("dim", str(self.dim))

    def _meta(self, key: str) -> str | None:
        got = self.client.query(self.meta_col, filter=f"key == {_lit(key)}", output_fields=["value"])
        return got[0]["value"] if got else None

    def _set_meta(self, key: str, value: str) -> None:
        self.client.upsert(self.meta_col, [{"key": key, "value": value, "v": [0.0, 0.0]}])

    get_state = _meta
    set_state = _set_meta

    @property
    def model(self) -> str | None:
        return self._meta("model")

    def _vector_state(self) -> tuple[str | None, bool]:
        """(model, whether any paper has a vector), read at most once a second."""
        now = time.monotonic()
        got = getattr(self, "_vstate", None)
        if got is None or now - got[0] > 1.0:
            model = self.model
            got = self._vstate = (now, model, bool(model) and self._exists("has_vec == true"))
        return got[1], got[2]

    def close(self) -> None:
        """Close the connection; the last backend of a URI closes it (pymilvus shares one
        connection alias per URI between clients) and, for a Milvus Lite file, stops its
        server process (milvus-lite runs one per file)."""
        if self._closed:
            return
        self._closed = True
        with _LITE_LOCK:
            _LITE_REFS[self.uri] -= 1
            last = _LITE_REFS[self.uri] == 0
            if last:
                del _LITE_REFS[self.uri]
        if not last:
            return
        try:
            self.client.close()
        finally:
            if self.lite:
                from milvus_lite.server_manager import server_manager_instance

                server_manager_instance.release_server(self.uri)

    def __enter__(self) -> MilvusBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- low-level reads ---------------------------------------------------------------------
    def _query(self, filter: str, output_fields: list[str], limit: int | None = None) -> list[dict]:
        from pymilvus import MilvusException

        _QUIET.on = True
        try:
            if limit is None:
                return self.client.query(self.col, filter=filter, output_fields=output_fields)
            return self.client.query(self.col, filter=filter, output_fields=output_fields, limit=limit)
        except MilvusException as e:  # pymilvus 2.5 fails to decode an empty ARRAY column
            if "Unsupported data type: 0" in str(e):
                return []
            raise
        finally:
            _QUIET.on = False

    def _count(self, expr: str | None) -> int:
        if expr == FALSE:
            return 0
        got = self._query(filter=expr or "", output_fields=["count(*)"])
        return int(got[0]["count(*)"])

    def _exists(self, expr: str) -> bool:
        return bool(self._query(filter=expr, output_fields=["pk"], limit=1))

    def _rows(self, expr: str | None, fields: list[str], cap: int | None = None) -> list[dict]:
        """Every row matching expr (in pk order, paged by pk); more than `cap` raises."""
        if expr == FALSE:
            return []
        out: list[dict] = []
        last = -1
        while True:
            f = f"pk > {last}" if expr is None else f"({expr}) and pk > {last}"
            got = self._query(filter=f, output_fields=list({"pk", *fields}), limit=MAX_TOPK)
            if not got:
                return out
            got.sort(key=lambda r: r["pk"])
            out.extend(got)
            if cap is not None and len(out) > cap:
                raise _TooMany(len(out))
            if len(got) < MAX_TOPK:
                return out
            last = got[-1]["pk"]

    def _docs(self, pks: list[int]) -> dict[int, Paper]:
        out: dict[int, Paper] = {}
        for i in range(0, len(pks), 1000):
            chunk = pks[i : i + 1000]
            for r in self._query(filter=f"pk in {chunk}", output_fields=["pk", "doc"]):
                out[int(r["pk"])] = _decode_doc(r["doc"])
        return out

    def count(self) -> int:
        return self._count(None)

    def vector_count(self) -> int:
        return self._count("has_vec == true")

    def get(self, pid: str) -> Paper | None:
        got = self._query(filter=f"id == {_lit(pid)}", output_fields=["doc"], limit=1)
        return _decode_doc(got[0]["doc"]) if got else None

    def pk(self, pid: str) -> int | None:
        got = self._query(filter=f"id == {_lit(pid)}", output_fields=["pk"], limit=1)
        return int(got[0]["pk"]) if got else None

    # --- writes ------------------------------------------------------------------------------
    def _claim_model(self, model: str) -> None:
        current = self.model
        if current and current != model and self._exists("has_vec == true"):
            raise StoreError(f"this collection holds vectors from {current}; refusing to mix in {model}")
        if current != model:
            self._set_meta("model", model)

    def _next_pks(self, n: int) -> list[int]:
        start = int(self._meta("next_pk") or 1)
        self._set_meta("next_pk", str(start + n))
        return list(range(start, start + n))

    def upsert(
        self,
        papers: Iterable[Paper],
        vectors: dict[str, np.ndarray] | None = None,
        model: str | None = None,
        batch_size: int = 1000,
    ) -> IngestSummary:
        """The embedded store's upsert rules: new papers added, changed ones replaced (losing
        their vector when the title or abstract changed, unless a new one is given), identical
        or older copies skipped."""
        vectors = vectors or {}
        if vectors:
            if not model:
                raise ValueError("vectors need the name of the model that made them")
            self._claim_model(model)
        total = IngestSummary()
        batch: list[Paper] = []
        for p in papers:
            batch.append(p)
            if len(batch) >= batch_size:
                total = total + self._upsert_batch(batch, vectors)
                batch = []
        if batch:
            total = total + self._upsert_batch(batch, vectors)
        # vectors for papers already stored and unchanged
        rest = {pid: v for pid, v in vectors.items() if pid not in self._written}
        if rest:
            self._attach_vectors(rest)
        self._written = set()
        self._vstate = None
        return total

    def _upsert_batch(self, batch: list[Paper], vectors: dict[str, np.ndarray]) -> IngestSummary:
        s = IngestSummary()
        latest: dict[str, Paper] = {}
        for p in batch:
            prev = latest.get(p.id)
            if prev is not None:
                same = prev.content_hash() == p.content_hash()
                s.unchanged += same
                s.updated += not same
            latest[p.id] = p
        ids = list(latest)
        old: dict[str, dict] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            for r in self._query(
                filter=f"id in [{', '.join(_lit(x) for x in chunk)}]",
                output_fields=["pk", "id", "content_hash", "text_hash", "updated", "has_vec", "dense"],
            ):
                old[r["id"]] = r
        rows = []
        new_ids = [pid for pid in ids if pid not in old]
        pks = dict(zip(new_ids, self._next_pks(len(new_ids)), strict=True)) if new_ids else {}
        written = set()
        for pid, p in latest.items():
            prev = old.get(pid)
            vec = vectors.get(pid)
            if prev is None:
                rows.append(_row(pks[pid], p, vec, self.dim))
                s.added += 1
                written.add(pid)
                continue
            same = prev["content_hash"] == p.content_hash()
            older = bool(p.updated and prev["updated"] and p.updated < prev["updated"])
            if (same or older) and vec is None:
                s.unchanged += 1
                continue
            if vec is None and prev["has_vec"] and prev["text_hash"] == p.text_hash():
                vec = _vec_of(prev["dense"])
            if same or older:
                s.unchanged += 1
                cur = self.get(pid) if older else p
                rows.append(_row(prev["pk"], cur or p, vec, self.dim))
            else:
                s.updated += 1
                rows.append(_row(prev["pk"], p, vec, self.dim))
            written.add(pid)
        if rows:
            self.client.upsert(self.col, rows)
        self._vstate = None
        self._written = self._written | written
        return s

    def _attach_vectors(self, vectors: dict[str, np.ndarray]) -> None:
        ids = list(vectors)
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            got = self._query(filter=f"id in [{', '.join(_lit(x) for x in chunk)}]", output_fields=["pk", "doc"])
            rows = []
            for r in got:
                p = _decode_doc(r["doc"])
                rows.append(_row(int(r["pk"]), p, vectors[p.id], self.dim))
            if rows:
                self.client.upsert(self.col, rows)

    def write_rows(
        self, items: list[tuple[int, Paper, np.ndarray | None]], model: str | None = None, contiguous: bool = False
    ) -> None:
        """Write papers under given primary keys as they are (migration: pk = the store's
        rowid); keeps next_pk past them. `contiguous`: the items are all the papers whose
        keys lie between their smallest and largest key."""
        self._vstate = None
        if model and any(v is not None for _, _, v in items):
            self._claim_model(model)
        if not items:
            return
        rows = [_row(pk, p, v, self.dim) for pk, p, v in items]
        if contiguous:
            # the batch is every row of its pk range: clear the range (a resumed copy may have
            # written part of it) and insert, which costs Milvus far less than an upsert
            lo, hi = min(r["pk"] for r in rows), max(r["pk"] for r in rows)
            self.client.delete(self.col, filter=f"pk >= {lo} and pk <= {hi}")
            self.client.insert(self.col, rows)
        else:
            self.client.upsert(self.col, rows)
        top = max(pk for pk, _, _ in items) + 1
        if top > int(self._meta("next_pk") or 1):
            self._set_meta("next_pk", str(top))

    def delete(self, pid: str) -> bool:
        self._vstate = None
        pk = self.pk(pid)
        if pk is None:
            return False
        self.client.delete(self.col, filter=f"pk in [{pk}]")
        return True

    def flush(self) -> None:
        self.client.flush(self.col)

    # --- the query, compiled -------------------------------------------------------------------
    def _compile(self, n: Q.Node, notices: list[str]) -> Part | None:
        """Mirrors search._Eval.node: None when the node constrains nothing."""
        if isinstance(n, Q.Text):
            return self._compile_text(n, notices)
        if isinstance(n, Q.Filter):
            return Part(self._filter_expr(n), True)
        if isinstance(n, Q.Not):
            inner = self._compile(n.child, notices)
            if inner is None:
                return None
            return self._negate(n.child, inner)
        parts = [p for p in (self._compile(c, notices) for c in n.children) if p is not None]
        if not parts:
            return None
        exact = all(p.exact for p in parts)
        if n.op == "AND":
            e = _and(p.expr for p in parts)
            return Part(e, exact)
        if any(p.expr is None for p in parts):
            return Part(None, False)
        return Part(_or([p.expr for p in parts]), exact)  # type: ignore[misc]

    def _compile_text(self, t: Q.Text, notices: list[str]) -> Part | None:
        col = t.column
        if t.prefix and len(t.words) == 1 and not has_cjk(t.raw):
            if len(t.words[0].rstrip("*")) < 2:
                raise Q.QueryError(f"{t.words[0]}*: a prefix needs at least two letters")
            return Part(None, False)
        cs, untranslated = concepts_of(t)
        for w in untranslated:
            notices.append(f"no English word is known for {w}; it matches nothing by words")
        if untranslated:
            return Part(FALSE, True)
        phrase = t.phrase and sum(1 for w in t.words if not has_cjk(w)) > 1 and Q.fts_string(t) is not None
        exprs = [concept_expr(c, col) for c in cs]
        if not exprs and not phrase:
            return None
        return Part(_and(exprs), not phrase and col != "abstract" and not any(_multiword(c) for c in cs))

    def _filter_expr(self, f: Q.Filter) -> str:
        if f.kind == "decision":  # not stored as a field of this collection yet
            raise Q.QueryError("decision: is not searchable on the Milvus backend yet; use the embedded store")
        if f.kind == "cat":
            key = str(f.value).strip().lower()
            if "." in key:
                return f"ARRAY_CONTAINS(cats, {_lit(key)})"
            return f"ARRAY_CONTAINS(archives, {_lit(key)})"
        if f.kind == "date":
            start, end = f.value  # type: ignore[misc]
            lo = int((start + "-01-01")[:10].replace("-", "")) if start else 1
            hi = int((end + "-12-31")[:10].replace("-", "")) if end else 99991231
            return f"date >= {lo} and date <= {hi}"
        if f.kind == "id":
            return f"id == {_lit(str(f.value))}"
        column = {"venue": "venue_lc", "area": "area_lc"}[f.kind]
        return f"{column} like {_like(_ascii_lower(str(f.value)))}"

    def _negate(self, node: Q.Node, inner: Part) -> Part:
        """NOT, which Milvus Lite 2.5 cannot parse: the complement of a date range or an id
        directly, anything else as `pk not in` the papers the inner part matches."""
        if inner.expr == FALSE:
            return Part(None, True) if inner.exact else Part(None, False)
        if inner.exact and isinstance(node, Q.Filter) and node.kind in ("date", "id"):
            if node.kind == "id":
                return Part(f"id != {_lit(str(node.value))}", True)
            start, end = node.value  # type: ignore[misc]
            lo = int((start + "-01-01")[:10].replace("-", "")) if start else 1
            hi = int((end + "-12-31")[:10].replace("-", "")) if end else 99991231
            return Part(f"date < {lo} or date > {hi}", True)
        try:
            rows = self._rows(inner.expr, [] if inner.exact else ["doc"], cap=MAX_SCAN)
        except _TooMany:
            return Part(None, False)  # decided in Python on the candidates the rest allows
        if inner.exact:
            pks = [int(r["pk"]) for r in rows]
        else:
            pks = [int(r["pk"]) for r in rows if self._check(node, _Doc(int(r["pk"]), _decode_doc(r["doc"])))]
        return Part(f"pk not in {pks}" if pks else None, True) if pks else Part(None, True)

    # --- the exact check in Python ---------------------------------------------------------------
    def _check(self, n: Q.Node, d: _Doc) -> bool | None:
        """Mirrors search._Eval.node for one paper: True/False, or None when the node
        constrains nothing."""
        if isinstance(n, Q.Text):
            col = n.column
            if n.prefix and len(n.words) == 1 and not has_cjk(n.raw):
                pre = n.words[0].rstrip("*")
                return any(s.startswith(pre) for s in d.stems(col))
            cs, untranslated = concepts_of(n)
            if untranslated:
                return False
            ok: bool | None = None
            if n.phrase and sum(1 for w in n.words if not has_cjk(w)) > 1 and Q.fts_string(n) is not None:
                ws = [w for w in n.words if not has_cjk(w)]
                ok = d.has_phrase(ws, col)
            for c in cs:
                if n.phrase and ok is not None and not has_cjk(c.label):
                    continue
                cm = _concept_in(c, d, col)
                ok = cm if ok is None else (ok and cm)
            return ok
        if isinstance(n, Q.Filter):
            p = d.paper
            if n.kind == "cat":
                key = str(n.value).strip().lower()
                cats = [c.lower() for c in p.categories]
                return key in cats if "." in key else any(_archive(c) == key for c in cats)
            if n.kind == "date":
                start, end = n.value  # type: ignore[misc]
                lo = int((start + "-01-01")[:10].replace("-", "")) if start else 1
                hi = int((end + "-12-31")[:10].replace("-", "")) if end else 99991231
                return lo <= d.date <= hi
            if n.kind == "id":
                return p.id == str(n.value)
            field = p.venue if n.kind == "venue" else p.venue_area
            return field is not None and _ascii_lower(str(n.value)) in _ascii_lower(field)
        if isinstance(n, Q.Not):
            inner = self._check(n.child, d)
            return None if inner is None else not inner
        got = [g for g in (self._check(c, d) for c in n.children) if g is not None]
        if not got:
            return None
        return all(got) if n.op == "AND" else any(got)

    # --- the dense side ---------------------------------------------------------------------------
    def embed_query(self, text: str, model: str | None) -> np.ndarray | None:
        if not model or not text:
            return None
        from ..embed import get_embedder

        if self._embedder is None or self._embedder.name != model:
            self._embedder = get_embedder(model)
        return self._embedder.embed_query(text)

    def _dense(self, qv: np.ndarray, expr: str | None, check) -> list[tuple[int, float]]:
        """The DENSE_DEPTH nearest papers with a vector within the constraints: Milvus's
        filter, then (when part of the constraints is decided in Python) a check of each hit,
        widening the window until enough pass or the candidates run out."""
        f = _and(["has_vec == true", expr])
        if f == FALSE:
            return []
        limit = DENSE_DEPTH
        data = [np.asarray(qv, dtype=np.float32)]
        while True:
            got = self.client.search(
                self.col,
                data=data,
                anns_field="dense",
                limit=limit,
                filter=f,
                search_params={"metric_type": "IP"},
                output_fields=["doc"] if check else [],
            )[0]
            hits = [(int(h["id"]), float(h["distance"]), h) for h in got]
            if check is None:
                return [(pk, s) for pk, s, _ in hits]
            ok = [(pk, s) for pk, s, h in hits if check(_Doc(pk, _decode_doc(h["entity"]["doc"])))]
            if len(ok) >= DENSE_DEPTH or len(hits) < limit or limit >= MAX_TOPK:
                return ok[:DENSE_DEPTH]
            limit = min(MAX_TOPK, limit * 8)

    # --- words through the BM25 index ------------------------------------------------------
    def _postings(
        self, stem_: str, flt: str | None, blocks: bool = True, window: int = MAX_TOPK
    ) -> dict[int, tuple[float, int]] | None:
        """Papers whose text holds the stem (within `flt`): pk -> (its BM25 score for this
        stem, date). One search lists at most `window` (MAX_TOPK at most); past that, with
        `blocks`, the papers are listed block by block of MAX_TOPK primary keys (each block
        complete by construction), up to MAX_BLOCKS blocks; None when not listed."""
        key = (stem_, flt)
        cache = self._post_cache
        if key in cache:
            return cache[key]
        if flt == FALSE:
            cache[key] = {}
            return cache[key]
        got = self._bm25_list(stem_, flt, window)
        if len(got) >= window:
            if window < MAX_TOPK or not blocks:
                return None
            top = int(self._meta("next_pk") or 1)
            starts = range(0, top + 1, MAX_TOPK)
            if len(starts) > MAX_BLOCKS:
                return None
            got = []
            for a in starts:
                got.extend(self._bm25_list(stem_, _and([flt, f"pk >= {a} and pk < {a + MAX_TOPK}"]), MAX_TOPK))
        out = {pk: (sc, dt) for pk, sc, dt in got}
        cache[key] = out
        return out

    def _bm25_list(self, stem_: str, flt: str | None, limit: int) -> list[tuple[int, float, int]]:
        """(pk, BM25 score, date) of the best `limit` papers for one stem within `flt`.

        Read straight from the response's arrays: pymilvus 2.5 makes a dict per hit
        (about 20 µs each), which was most of a query's time for common words."""
        try:
            return self._bm25_raw(stem_, flt, limit)
        except (AttributeError, ImportError, TypeError):  # another pymilvus: its own road
            got = self.client.search(
                self.col,
                data=[stem_],
                anns_field="sparse",
                limit=limit,
                filter=flt or "",
                search_params={"metric_type": "BM25"},
                output_fields=["date"],
            )[0]
            return [(int(h["id"]), float(h["distance"]), int(h["entity"]["date"])) for h in got]

    def _bm25_raw(self, stem_: str, flt: str | None, limit: int) -> list[tuple[int, float, int]]:
        from pymilvus.client.grpc_handler import _api_level_md
        from pymilvus.client.prepare import Prepare
        from pymilvus.client.utils import check_status

        handler = self.client._get_connection()
        req = Prepare.search_requests_with_expr(
            self.col, [stem_], "sparse", {"metric_type": "BM25"}, limit, flt or "", None, ["date"], -1
        )
        resp = handler._stub.Search(req, metadata=_api_level_md())
        check_status(resp.status)
        res = resp.results
        ids = list(res.ids.int_id.data)
        if not ids:
            return []
        dates = next(list(f.scalars.long_data.data) for f in res.fields_data if f.field_name == "date")
        return list(zip(ids, res.scores, dates, strict=True))

    def _adjacent(self, alt: tuple[str, ...], pks: Iterable[int]) -> set[int]:
        """The papers of `pks` in which the multi-word alternative's words stand together
        (search.alt_pairs): read from their `lex` rows, else from their own text; remembered
        for the query."""
        want = alt_pairs(alt)
        known = self._adj_cache.setdefault(alt, {})
        pks = list(pks)
        todo = sorted(pk for pk in pks if pk not in known)
        undecided = []
        for i in range(0, len(todo), 1000):
            chunk = todo[i : i + 1000]
            for pk in chunk:
                known[pk] = False  # deleted since listed
            for r in self._query(f"pk in {chunk}", ["pk", "lex", "ti_lex", "au_lex"]):
                got = _lex_adjacent(want, r["lex"], r["ti_lex"], r["au_lex"])
                if got is None:
                    undecided.append(int(r["pk"]))
                else:
                    known[int(r["pk"])] = got
        for pk, paper in self._docs(undecided).items():
            known[pk] = all(pr in _Doc(pk, paper).pairs(None) for pr in want)
        return {pk for pk in pks if known[pk]}

    def _concept_exists(self, c: Concept, expr: str, C: str | None) -> bool:
        """Whether any paper holds the concept (one of its alternatives, all of its words, a
        multi-word one with them together). With no constraints the postings the lexical side
        needs anyway answer it."""
        for alt in c.alts:
            if len(alt) == 1 and C is None:
                p = self._postings(alt[0], None, blocks=False, window=FIRST_WINDOW)
                if p is None or p:
                    return True
                continue
            if len(alt) == 1:
                got = self.client.search(
                    self.col, data=[alt[0]], anns_field="sparse", limit=1, search_params={"metric_type": "BM25"}
                )[0]
                if got:
                    return True
                continue
            sets = [self._postings(s_, None) for s_ in alt]
            if any(x is None for x in sets):  # words in more papers than are listed
                if not together(c, alt):  # its words anywhere in one paper: one row says so
                    if self._query(_alt_expr(alt, "lex"), ["pk"], limit=1):
                        return True
                    continue
                like = _and([_alt_expr(alt, "lex"), *(f"lex like {_lit(f'% {x} {y} %')}" for x, y in alt_pairs(alt))])
                try:
                    rows = self._rows(like, [], cap=MAX_SCAN)
                except _TooMany:
                    return True  # so many papers with the words together in `lex`: some in a field
                if self._adjacent(alt, (int(r["pk"]) for r in rows)):
                    return True
                continue
            both = sorted(set.intersection(*(set(x) for x in sets)))  # type: ignore[union-attr]
            for i in range(0, len(both), 1000):  # one paper is enough
                if not together(c, alt) or self._adjacent(alt, both[i : i + 1000]):
                    return True
        return False

    def _by_postings(self, present: list[Concept], rank_concepts: list[Concept], C: str | None):
        """(pk -> date of the papers holding enough of the concepts within C, pk -> BM25
        score summed as the embedded store sums it, the domain the scores cover or None for
        all), or None when a stem is too common to list.

        A stem in more than one window of papers is listed only among the candidates when the
        rarer concepts bound the matches: a paper with k of n concepts holds one of any
        n - k + 1 of them, so the union of the n - k + 1 smallest complete concepts holds
        every match. Else it is listed block by block."""
        need = {s_ for c in [*present, *rank_concepts] for alt in c.alts for s_ in alt}
        if len(need) > 64:
            return None
        k = required(len(present))
        # rare stems are listed whole in a small window; then, if they bound the matches, the
        # common ones only among those candidates; else a full window; else block by block
        post: dict[str, dict[int, tuple[float, int]] | None] = {
            s_: self._postings(s_, C, blocks=False, window=FIRST_WINDOW) for s_ in need
        }
        domain = _bound(present, post, k)
        if domain is None and any(p is None for p in post.values()):
            post = {s_: p if p is not None else self._postings(s_, C, blocks=False) for s_, p in post.items()}
            domain = _bound(present, post, k)
        self._restricted = set()
        for s_, p in list(post.items()):
            if p is None:
                if domain is not None:
                    p = self._postings_in(s_, C, sorted(domain))
                    self._restricted.add(s_)
                else:
                    p = self._postings(s_, C)
                if p is None:
                    return None
                post[s_] = p
        full: dict[str, dict[int, tuple[float, int]]] = post  # type: ignore[assignment]
        dates: dict[int, int] = {}
        for p in full.values():
            for pk, (_, dt) in p.items():
                dates[pk] = dt
        counts: dict[int, int] = {}
        for c in present:
            for pk in _concept_docs(c, full, self._adjacent):
                counts[pk] = counts.get(pk, 0) + 1
        L = {pk: dates[pk] for pk, n in counts.items() if n >= k}
        self._last_post, self._last_counts = full, counts
        return L, _acc_of(rank_concepts, full), domain

    def _with_all(self, present: list[Concept], exprs: dict, C: str | None, c_check, py_nodes) -> int:
        """How many papers within the constraints hold every concept (search.required), counted
        only as far as the rule asks: up to RELAX_BELOW. Milvus counts; where Python decides
        part (adjacent words, constraints Milvus cannot express), candidates are read until
        RELAX_BELOW pass."""
        expr = _and([C, *(exprs[id(c)] for c in present)])
        n = self._count(expr)
        if n < RELAX_BELOW or not (py_nodes or any(_multiword(c) for c in present)):
            return n
        got, last = 0, -1
        while True:
            rows = self._query(f"({expr}) and pk > {last}", ["pk", "doc"], limit=MAX_TOPK)
            if not rows:
                return got
            rows.sort(key=lambda r: r["pk"])
            for r in rows:
                d = _Doc(int(r["pk"]), _decode_doc(r["doc"]))
                if c_check(d) and all(_concept_in(c, d, None) for c in present):
                    got += 1
                    if got >= RELAX_BELOW:
                        return got
            last = int(rows[-1]["pk"])

    def _postings_in(self, stem_: str, C: str | None, pks: list[int]) -> dict[int, tuple[float, int]]:
        """The stem's papers among `pks` (at most MAX_TOPK of them: complete)."""
        if not pks:
            return {}
        got = self._bm25_list(stem_, _and([C, f"pk in {pks}"]), min(MAX_TOPK, len(pks)))
        return {pk: (sc, dt) for pk, sc, dt in got}

    def _score_outside(self, acc, rank_concepts, C, domain, pks: list[int]) -> None:
        """Scores of papers outside the domain the lexical side listed (dense matches)."""
        missing = [pk for pk in pks if pk not in domain]
        if not missing:
            return
        post = self._last_post
        extra = {
            s_: {**p, **self._postings_in(s_, C, missing)} if s_ in self._restricted else p for s_, p in post.items()
        }
        got = _acc_of(rank_concepts, extra)
        for pk in missing:
            if pk in got:
                acc[pk] = got[pk]

    def _phrase_bonus(self, acc: dict[int, float], concepts: list[Concept], L: dict[int, int]) -> None:
        """search._phrase_bonus on Milvus: among the best PHRASE_DEPTH lexical matches, a
        paper's score grows by up to PHRASE_BOOST with the share of the query's word pairs
        that stand together in its text (read from `lex`, paperdex's stems in order)."""
        units = phrase_units(concepts)
        if not units:
            return
        cand = sorted((pk for pk in L if acc.get(pk, 0.0) > 0), key=lambda pk: -acc[pk])[:PHRASE_DEPTH]
        if not cand:
            return
        rows = {int(r["pk"]): r for r in self._query(f"pk in {cand}", ["pk", "lex", "ti_lex", "au_lex"])}
        for pk in cand:
            r = rows.get(pk, {})
            text = r.get("lex", "")
            got = 0
            for unit in units:
                for alt in unit:
                    if len(alt) == 1:
                        ok = f" {alt[0]} " in text
                    else:  # the matching rule; where `lex` alone cannot say, its words in a row
                        ok = self._adj_cache.get(alt, {}).get(pk)
                        if ok is None:
                            ok = _lex_adjacent(alt_pairs(alt), text, r.get("ti_lex", ""), r.get("au_lex", ""))
                        if ok is None:
                            ok = all(f" {x} {y} " in text for x, y in alt_pairs(alt))
                    if ok:
                        got += 1
                        break
            acc[pk] *= 1 + PHRASE_BOOST * got / len(units)

    # --- search -------------------------------------------------------------------------------
    def search(
        self,
        q: str,
        *,
        mode: str = "hybrid",
        sort: str = "relevance",
        page: int = 1,
        per_page: int = 20,
        filters: Filters | None = None,
        facets: bool = True,
        literal: bool = False,
        query_vector: np.ndarray | None = None,
        highlight: bool = True,
        deadline: float | None = None,
    ) -> Result:
        t0 = time.perf_counter()
        p = plan(q, mode=mode, sort=sort, page=page, per_page=per_page, filters=filters, literal=literal)
        if p.ref is not None:
            return self._lookup(q, p.ref, sort, p.page, p.per_page, t0)
        page, per_page, offset = p.page, p.per_page, p.offset
        soft, hard, concepts, positives, notices = p.soft, p.hard, p.concepts, p.positives, p.notices

        # 1. constraints: a Milvus expression, and the nodes Python must decide
        cnotes: list[str] = []
        c_exprs: list[str | None] = []
        py_nodes: list[Q.Node] = []
        for n in hard:
            part = self._compile(n, cnotes)
            if part is None:
                continue
            c_exprs.append(part.expr)
            if not part.exact:
                py_nodes.append(n)
        C = _and(c_exprs)

        def c_check(d: _Doc) -> bool:
            return all(self._check(n, d) is not False for n in py_nodes)

        # 2. free words as concepts (a concept no paper contains is set aside)
        exprs = {id(c): concept_expr(c) for c in concepts}
        self._post_cache: dict = {}
        self._adj_cache: dict[tuple[str, ...], dict[int, bool]] = {}
        present = [c for c in concepts if self._concept_exists(c, exprs[id(c)], C if mode != "dense" else FALSE)]
        missing = [c.label for c in concepts if c not in present]
        if missing and present:
            notices.append("no paper contains " + ", ".join(f"“{w}”" for w in missing) + "; showing results without")
        rank_concepts = p.rank_concepts(present)

        # the fast road: every word's documents from the BM25 index (one search per stem,
        # complete while a stem is in at most MAX_TOPK papers within the constraints), the
        # rule and the BM25 sums counted here; else the ARRAY expressions below
        acc: dict[int, float] | None = None
        domain: set[int] | None = None
        L_rows: dict[int, tuple[int, list[str] | None]] | None = None
        k_fast: int | None = None  # search.required as the postings road decided it
        if present and mode != "dense":
            fast = self._by_postings(present, rank_concepts, C)
            if fast is not None:
                L_dates, acc, domain = fast
                if py_nodes:
                    if len(L_dates) > MAX_SCAN:
                        raise Q.QueryError(_too_many(len(L_dates)))
                    docs = self._docs(sorted(L_dates))
                    L_dates = {pk: dt for pk, dt in L_dates.items() if pk in docs and c_check(_Doc(pk, docs[pk]))}
                n_all, counts = len(present), self._last_counts
                if counts_all(n_all):
                    k_fast = required(n_all, sum(1 for pk in L_dates if counts[pk] >= n_all))
                    L_dates = {pk: dt for pk, dt in L_dates.items() if counts[pk] >= k_fast}
                self._phrase_bonus(acc, present, L_dates)
                L_rows = {pk: (dt, None) for pk, dt in L_dates.items()}

        words_exact = True
        k = 0
        if present:
            n_all = len(present)
            if k_fast is not None:
                k = k_fast
            elif L_rows is None and mode != "dense" and counts_all(n_all):
                k = required(n_all, self._with_all(present, exprs, C, c_check, py_nodes))
            else:  # the postings road listed L, or dense mode: the widest rule, a bound
                k = required(n_all)
            W = min_should([exprs[id(c)] for c in present], k)
            if W is None:  # too many combinations: any concept in Milvus, the count in Python
                W, words_exact = _or([exprs[id(c)] for c in present]), False
            elif any(_multiword(c) for c in present):  # the words in Milvus, their adjacency in Python
                words_exact = False
        elif concepts or p.cjk_words:
            W = FALSE
            if missing:
                notices.append("no paper contains " + ", ".join(f"“{w}”" for w in missing))
        else:
            W = None
            if soft and not hard:
                notices.append("only very common words; add a word that says what you are looking for")
        L_expr = _and([C, W])
        exact = not py_nodes and words_exact

        def l_check(d: _Doc) -> bool:
            if not c_check(d):
                return False
            if words_exact or not present:
                return True
            return sum(_concept_in(c, d, None) for c in present) >= k

        # L explicitly (pk -> date, categories) when Python decides part of it
        if L_rows is None and not exact and mode != "dense":  # dense mode: M is the close matches
            n_cand = self._count(L_expr)
            if n_cand > MAX_SCAN:
                raise Q.QueryError(_too_many(n_cand))
            L_rows = {}
            for r in self._rows(L_expr, ["doc", "date", "categories"]):
                d = _Doc(int(r["pk"]), _decode_doc(r["doc"]))
                if l_check(d):
                    L_rows[d.pk] = (int(r["date"]), list(r["categories"]))
        notices.extend(cnotes)

        # 3. the dense side
        dense_text = p.dense_text
        has_text = bool(dense_text)
        mode_eff = mode if has_text else "lexical"
        model, has_vectors = self._vector_state() if mode_eff != "lexical" else (None, False)
        if mode_eff != "lexical" and not has_vectors:
            notices.append(NOTICE_NO_VECTORS)
            mode_eff = "lexical"
        D: list[tuple[int, float]] = []
        if mode_eff != "lexical":
            qv = query_vector if query_vector is not None else self.embed_query(dense_text, model)
            got = self._dense(qv, C, c_check if py_nodes else None)
            D = close_matches(got, model, p.dense_lang)
            D.sort(key=lambda x: (-x[1], x[0]))
        d_pks = [pk for pk, _ in D]
        if acc is not None and domain is not None and d_pks:
            self._score_outside(acc, rank_concepts, C, domain, d_pks)

        # the matched set M = L (lexical), D (dense) or both
        if L_rows is not None:
            L_set = set(L_rows)
            n_L = len(L_set)
        else:
            L_set = None
            n_L = self._count(L_expr) if mode_eff != "dense" else 0
        if mode_eff == "hybrid" and d_pks:
            if L_set is not None:
                d_in_L = set(d_pks) & L_set
            else:
                d_in_L = set()
                if L_expr != FALSE:
                    got = self._query(_and([L_expr, f"pk in {d_pks}"]) or "", ["pk"])
                    d_in_L = {int(r["pk"]) for r in got}
        else:
            d_in_L = set()
        if mode_eff == "dense":
            total = len(D)
        elif mode_eff == "hybrid":
            total = n_L + len([p for p in d_pks if p not in d_in_L])
            if n_L == 0 and D and has_text:
                notices.append("no paper contains these words; showing semantic matches")
            elif n_L and not D and (concepts or positives):
                notices.append("no close semantic match; showing word matches only")
        else:
            total = n_L
        if total == 0 and has_text:
            notices.append("no close matches")

        # 4. one order of M, cut into pages
        key = "zh" if has_cjk(q) else "en"
        length = "short" if len(concepts) <= 3 else "long"
        k_rrf, w_lex, w_dense = self.fusion[(key, length)]
        want = offset + per_page
        use_L = mode_eff != "dense"
        dense_for_M = D if mode_eff != "lexical" else []
        info: dict[int, tuple] = {}
        if sort == "newest" or not (rank_concepts or D):
            order = self._newest(L_expr if use_L else FALSE, L_rows if use_L else {}, dense_for_M, want)
        else:
            order, info = self._fuse(
                rank_concepts,
                L_expr,
                L_rows,
                use_L,
                dense_for_M,
                d_in_L,
                want,
                total,
                k_rrf,
                w_lex,
                w_dense,
                mode_eff,
                acc,
            )
        page_pks = order[offset:want]
        papers = self._docs(page_pks)
        hl = frozenset(s for c in rank_concepts for alt in c.alts for s in alt) if highlight else frozenset()
        hits = []
        for pk in page_pks:
            p = papers.get(pk)
            if p is None:
                continue
            lr, ls, dr, ds, score = info.get(pk, (None, None, None, None, 0.0))
            hits.append(Hit(p, score, lr, ls, dr, ds, title_marked=mark(p.title, hl), snippet=snippet(p.abstract, hl)))
        fac = (
            self._facets(L_expr if use_L else FALSE, L_rows if use_L else {}, dense_for_M, d_in_L, n_L, notices)
            if facets
            else {}
        )
        took = (time.perf_counter() - t0) * 1000
        return Result(q, mode_eff, sort, hits, total, page, per_page, took, fac, notices)

    def _lookup(self, q, ref, sort, page, per_page, t0) -> Result:
        kind, value = ref
        if kind == "id":
            p = self.get(value)
        else:
            got = self._query(filter=f"doi == {_lit(value)}", output_fields=["doc"], limit=1)
            p = _decode_doc(got[0]["doc"]) if got else None
        notices = []
        if p is None:
            hint = f" (`paperdex ingest arxiv --id {value}` adds it)" if kind == "id" else ""
            notices.append(f"{value} is not in this store{hint}")
            hits = []
        else:
            hits = [Hit(p, 1.0, title_marked=[(p.title, False)], snippet=snippet(p.abstract, frozenset()))]
        took = (time.perf_counter() - t0) * 1000
        return Result(q, "lookup", sort, hits if page == 1 else [], len(hits), page, per_page, took, {}, notices)

    def _dates(self, pks: list[int]) -> dict[int, int]:
        out = {}
        for i in range(0, len(pks), 1000):
            for r in self._query(filter=f"pk in {pks[i : i + 1000]}", output_fields=["pk", "date"]):
                out[int(r["pk"])] = int(r["date"])
        return out

    def _newest(self, L_expr, L_rows, D, want: int, exclude: set[int] | None = None) -> list[int]:
        """M by date, newest first, ties by pk, newest first: its first `want`."""
        exclude = exclude or set()
        cand: dict[int, int] = {}
        if L_rows is not None and (L_rows or L_expr == FALSE):
            cand.update({pk: dt for pk, (dt, _) in L_rows.items()})
        elif L_expr != FALSE:
            cand.update(self._top_by_date(L_expr, want + len(exclude)))
        missing = [pk for pk, _ in D if pk not in cand]
        cand.update(self._dates(missing))
        keys = sorted((pk for pk in cand if pk not in exclude), key=lambda pk: (-cand[pk], -pk))
        return keys[:want]

    def _top_by_date(self, expr: str | None, want: int) -> dict[int, int]:
        """The `want` newest rows of expr (pk -> date): all of them when few, else those on or
        after the date threshold found by counting (Milvus queries have no ORDER BY)."""
        n = self._count(expr)
        if n <= MAX_TOPK:
            return {int(r["pk"]): int(r["date"]) for r in self._rows(expr, ["date"])}
        lo, hi = 0, 99991231
        while lo < hi:  # the largest t with count(date >= t) >= want
            mid = (lo + hi + 1) // 2
            if self._count(_and([expr, f"date >= {mid}"])) >= want:
                lo = mid
            else:
                hi = mid - 1
        return {int(r["pk"]): int(r["date"]) for r in self._rows(_and([expr, f"date >= {lo}"]), ["date"])}

    def _fuse(self, rank_concepts, L_expr, L_rows, use_L, D, d_in_L, want, total, k, w_lex, w_dense, mode, acc=None):
        """The relevance order of M (its first `want`) and, per paper, why; the embedded
        _fuse with lexical ranks from the summed per-stem BM25 scores (`acc`, every paper of
        M exactly) or else from one BM25 search to a fixed depth."""
        dense_rank = {pk: (i + 1, s) for i, (pk, s) in enumerate(D)}
        lex_rank: dict[int, tuple[int, float]] = {}
        complete = True
        if acc is not None and use_L:
            lst = [(pk, sc) for pk, sc in acc.items() if sc > 0 and (pk in L_rows or pk in dense_rank)]
            lst.sort(key=lambda x: (-x[1], x[0]))
            lex_rank = {pk: (r + 1, sc) for r, (pk, sc) in enumerate(lst)}
        elif use_L and rank_concepts and (L_expr != FALSE or D):
            text = " ".join(dict.fromkeys(s for c in rank_concepts for alt in c.alts for s in alt))
            depth = min(MAX_TOPK, max(FUSE_DEPTH, want + len(D)))
            # ranked over all of M: a dense match that holds some of the words ranks by them too
            d_pks = [pk for pk, _ in D]
            flt = _or([L_expr, f"pk in {d_pks}"]) if (d_pks and L_expr is not None) else L_expr
            got = self.client.search(
                self.col,
                data=[text],
                anns_field="sparse",
                limit=depth,
                filter=flt or "",
                search_params={"metric_type": "BM25"},
            )[0]
            lst = [(int(h["id"]), float(h["distance"])) for h in got]
            complete = len(lst) < depth
            if L_rows is not None:
                lst = [(pk, s) for pk, s in lst if pk in L_rows or pk in dense_rank]
            lst.sort(key=lambda x: (-x[1], x[0]))
            lex_rank = {pk: (r + 1, s) for r, (pk, s) in enumerate(lst)}
            for pk, _ in D:  # deeper than the window: ranked just past it
                if pk not in lex_rank and pk in d_in_L:
                    lex_rank[pk] = (depth + 1, 0.0)
        if mode == "dense":
            fused = {pk: dense_rank[pk][1] for pk, _ in D}
        else:
            fused = {}
            for d in set(lex_rank) | set(dense_rank):
                f = 0.0
                if d in lex_rank:
                    f += w_lex / (k + lex_rank[d][0])
                if d in dense_rank and mode == "hybrid":
                    f += w_dense / (k + dense_rank[d][0])
                fused[d] = f
        ranked = sorted(fused, key=lambda d: (-fused[d], d))
        # papers of M without a score (matched by constraints only) follow, newest first, once
        # every scored paper is ranked
        if len(ranked) < want and len(ranked) < total and complete:
            ranked += self._newest(L_expr if use_L else FALSE, L_rows if use_L else {}, D, want, set(ranked))[
                : want - len(ranked)
            ]
        info = {}
        for d in ranked[:want]:
            lr = lex_rank.get(d)
            dr = dense_rank.get(d)
            info[d] = (
                lr[0] if lr else None,
                lr[1] if lr and lr[1] else None,
                dr[0] if dr else None,
                dr[1] if dr else None,
                fused.get(d, 0.0),
            )
        return ranked[:want], info

    def _facets(self, L_expr, L_rows, D, d_in_L, n_L, notices) -> dict:
        """Counts by category (any of a paper's) and year over M: exact from the rows when M
        has at most MAX_TOPK papers; past that the categories listed are the most frequent of
        the first MAX_TOPK (by pk) and each listed count is counted exactly by Milvus."""
        rows: dict[int, tuple[int, list[str]]] = {}
        big = False
        if L_rows is not None:
            rows.update(L_rows)
            lacking = [pk for pk, (_, cats) in L_rows.items() if cats is None]
            for i in range(0, len(lacking), 4000):
                chunk = lacking[i : i + 4000]
                for r in self._query(f"pk in {chunk}", ["pk", "categories"]):
                    rows[int(r["pk"])] = (rows[int(r["pk"])][0], list(r["categories"]))
        elif L_expr != FALSE:
            if n_L <= MAX_TOPK:
                rows.update(
                    {
                        int(r["pk"]): (int(r["date"]), list(r["categories"]))
                        for r in self._rows(L_expr, ["date", "categories"])
                    }
                )
            else:
                big = True
                got = self._query(L_expr or "", ["pk", "date", "categories"], limit=MAX_TOPK)
                sample = {int(r["pk"]): (int(r["date"]), list(r["categories"])) for r in got}
        extra = [pk for pk, _ in D if pk not in rows and pk not in d_in_L]
        if extra:
            for r in self._query(filter=f"pk in {extra}", output_fields=["pk", "date", "categories"]):
                rows[int(r["pk"])] = (int(r["date"]), list(r["categories"]))
        cat_n: dict[str, int] = {}
        year_n: dict[int, int] = {}
        for dt, cats in rows.values():
            for c in dict.fromkeys(cats):
                cat_n[c] = cat_n.get(c, 0) + 1
            if dt > 0:
                year_n[dt // 10000] = year_n.get(dt // 10000, 0) + 1
        if big:
            s_cat: dict[str, int] = {}
            s_year: set[int] = set()
            for dt, cats in sample.values():
                for c in dict.fromkeys(cats):
                    s_cat[c] = s_cat.get(c, 0) + 1
                if dt > 0:
                    s_year.add(dt // 10000)
            top = sorted((c for c in s_cat if _REAL_CATEGORY.match(c)), key=lambda c: (-s_cat[c], c))[: FACET_LIMIT * 2]
            for c in top:
                cat_n[c] = cat_n.get(c, 0) + self._count(_and([L_expr, f"ARRAY_CONTAINS(categories, {_lit(c)})"]))
            for y in s_year:
                year_n[y] = year_n.get(y, 0) + self._count(_and([L_expr, f"date >= {y}0101 and date <= {y}1231"]))
            notices.append(
                f"facets list the categories most frequent among {MAX_TOPK:,} of the {n_L:,} word matches; "
                "each count is exact"
            )
        cats = sorted(((c, n) for c, n in cat_n.items() if _REAL_CATEGORY.match(c)), key=lambda x: (-x[1], x[0]))
        years = sorted(((str(y), n) for y, n in year_n.items()), reverse=True)
        return {"category": cats[:FACET_LIMIT], "year": years[:FACET_LIMIT]}


class _TooMany(Exception):
    pass


def _bound(present: list[Concept], post, k: int) -> set[int] | None:
    """A set holding every paper with k of the n concepts, from the concepts listed whole:
    such a paper holds one of any n - k + 1 of them. None if too few are listed or the set
    is larger than one window."""
    if all(p is not None for p in post.values()):
        return None  # nothing to bound: every stem is listed whole
    done = [c for c in present if all(post[s_] is not None for alt in c.alts for s_ in alt)]
    m = len(present) - k + 1
    if len(done) < m:
        return None
    domain = set().union(*sorted((_concept_docs(c, post) for c in done), key=len)[:m])
    return domain if len(domain) <= MAX_TOPK else None


def _concept_docs(c: Concept, post, adjacent=None) -> set[int]:
    """Papers (of the listed postings) holding the concept: any alternative, all its stems;
    with `adjacent` (MilvusBackend._adjacent), a multi-word one only with them together
    (without, a superset)."""
    docs: set[int] = set()
    for alt in c.alts:
        got = set.intersection(*(set(post[s_]) for s_ in alt))
        if adjacent is not None and together(c, alt) and got:
            got = adjacent(alt, got)
        docs |= got
    return docs


def _acc_of(rank_concepts: list[Concept], post) -> dict[int, float]:
    """BM25 summed as search._Eval.concept_score sums it: a concept's stems add up; a
    concept with several alternatives (a Chinese word, an acronym) scores its best one, each
    weighed by the concept's weight for it."""
    acc: dict[int, float] = {}
    for c in rank_concepts:
        if len(c.alts) == 1:
            for s_ in dict.fromkeys(c.alts[0]):
                for pk, (sc, _) in post[s_].items():
                    acc[pk] = acc.get(pk, 0.0) + sc
            continue
        best: dict[int, float] = {}
        for i, alt in enumerate(c.alts):
            a: dict[int, float] = {}
            for s_ in dict.fromkeys(alt):
                for pk, (sc, _) in post[s_].items():
                    a[pk] = a.get(pk, 0.0) + sc
            w = c.weight(i)
            for pk, v in a.items():
                v *= w
                if v > best.get(pk, 0.0):
                    best[pk] = v
        for pk, v in best.items():
            acc[pk] = acc.get(pk, 0.0) + v
    return acc


def _too_many(n: int) -> str:
    return (
        f"on the Milvus backend this query needs {n:,} candidates checked one by one "
        f"(exact phrases, abs:, prefixes and long free-word queries are; the limit is {MAX_SCAN:,}); "
        "add a filter or a word, or use the embedded store"
    )


def _vec_of(v) -> np.ndarray | None:
    """A vector as pymilvus returns it (a list of floats; bytes for f16)."""
    if v is None:
        return None
    if isinstance(v, list) and v and isinstance(v[0], bytes | bytearray):
        v = v[0]
    if isinstance(v, bytes | bytearray):
        return np.frombuffer(v, dtype=np.float16).astype(np.float32)
    return np.asarray(v, dtype=np.float32)


__all__ = ["MilvusBackend", "MAX_SCAN", "MAX_PREFIX_TERMS"]
