"""Files into the store: JSON Lines (plain or .gz) and JSON arrays of paper records, and
precomputed vectors aligned to ids. A bad record is reported as ``FILE:LINE: reason`` and
skipped; every good one lands, whatever went wrong around it (an invalid UTF-8 byte costs its
line, a corrupt gzip member that member, and a JSON array is read element by element).
"""

from __future__ import annotations

import itertools
import json
import pickle
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from paperdex.index.publish import publish
from paperdex.messages import message
from paperdex.paper import Paper, RecordError, paper_from_dict
from paperdex.sources.jsonl import from_snapshot, is_snapshot
from paperdex.sources.merge import ingest_with_merge
from paperdex.store import IngestSummary, Store, StoreError

Progress = Callable[[int], None]

MAX_LINE = 4 << 20  # a record over 4 MiB is refused before it is parsed
_CHUNK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b\x08"


def _raw_chunks(path: Path, progress: Progress | None) -> Iterator[bytes]:
    """The file's bytes, chunk by chunk, each counted for a progress bar."""
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            if progress:
                progress(len(chunk))
            yield chunk


def _gunzip(path: Path, problems: list[str], progress: Progress | None) -> Iterator[bytes]:
    """Decompressed data member by member; a corrupt member is skipped to the next gzip
    header, so the members after it are still read (and the loss goes to ``problems``)."""
    d = zlib.decompressobj(wbits=31)
    in_member = False  # fed a member that has not ended yet
    skipping = False
    pending = b""
    for chunk in _raw_chunks(path, progress):
        pending += chunk
        while pending:
            if skipping:
                at = pending.find(_GZIP_MAGIC, 1)
                if at < 0:
                    pending = pending[-2:]  # a header may straddle two chunks
                    break
                pending, skipping, d = pending[at:], False, zlib.decompressobj(wbits=31)
            if not in_member and not pending.lstrip(b"\x00"):
                pending = b""  # zero padding after the last member
                break
            data, pending = pending, b""
            try:
                out = d.decompress(data)
            except zlib.error as e:
                problems.append(
                    f"{path}: corrupt gzip data ({e}); skipped to the next gzip member, the records in between are lost"
                )
                yield b"\n"  # never glue the head of a lost line to the next member's data
                skipping, in_member, pending = True, False, data
                continue
            in_member = not d.eof
            if out:
                yield out
            if d.eof:
                pending, d = d.unused_data, zlib.decompressobj(wbits=31)
    if in_member:
        problems.append(f"{path}: the gzip data ends early (a truncated file?)")


def _lines(path: Path, problems: list[str], progress: Progress | None) -> Iterator[bytes]:
    """Lines of bytes from a plain or gzip file (corrupt gzip data reported to ``problems``)."""
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    chunks = _gunzip(path, problems, progress) if gz else _raw_chunks(path, progress)
    buf = b""
    for chunk in chunks:
        buf += chunk
        if b"\n" not in chunk:
            if len(buf) > MAX_LINE * 2:  # an endless line: keep its head to report it
                buf = buf[: MAX_LINE + 1]
            continue
        *complete, buf = buf.split(b"\n")
        yield from complete
    if buf:
        yield buf


def _paper(rec, notes: list[str]) -> Paper:
    """A parsed JSON value as a Paper, read as what its shape means: an arXiv metadata snapshot
    record, a CSL-JSON item (a Zotero export: read by the tag import's reader, not stored with
    its authors and date lost in ``extra``), else paperdex's own record. An object wrapping a
    list (``{"papers": [...]}``) is refused as that, not for its missing id."""
    from paperdex.sources.zotero import csl_to_paper, is_csl_item

    if is_snapshot(rec):
        rec = from_snapshot(rec)
    elif is_csl_item(rec):
        return csl_to_paper(rec)
    elif isinstance(rec, dict) and "id" not in rec:
        if key := next((k for k, v in rec.items() if isinstance(v, list) and v and isinstance(v[0], dict)), None):
            raise RecordError(message("records_wrapped", key=key[:40]))
    return paper_from_dict(rec, notes=notes)


def _checked(rec, where: str, errors: list[str], notes: list[str] | None, seen: dict[str, str]) -> Iterator[Paper]:
    """The record's paper, if it is one; else its problem, at `where`, in `errors`."""
    got: list[str] = []
    try:
        p = _paper(rec, got)
    except RecordError as e:
        errors.append(f"{where}: {e}")
        return
    if p.id in seen:  # merged as two sources' records are (merge_papers' `again`): said, not silent
        slot = p.sources[0].split(":", 1)[0] if p.sources else "file"
        got.append(message("ingest_repeated_id", id=p.id, line=seen[p.id].rsplit(":", 1)[-1], slot=slot))
    seen.setdefault(p.id, where)
    if notes is not None:
        notes.extend(f"{where}: note: {n}" for n in got)
    yield p


def _parse(raw: str):
    try:
        return json.loads(raw), None
    except json.JSONDecodeError as e:
        return None, f"invalid JSON: {e.msg} (column {e.colno})"
    except RecursionError:
        return None, "invalid record: JSON nested too deeply"
    except ValueError as e:  # an integer of more than 4,300 digits
        if "digits" in str(e):
            return None, "invalid record: a number with more than 4,300 digits"
        return None, f"invalid JSON: {str(e).splitlines()[0][:120]}"


def read_records(
    path: str | Path, errors: list[str], notes: list[str] | None = None, progress: Progress | None = None
) -> Iterator[Paper]:
    """Papers from a .jsonl/.jsonl.gz/.json file: problems to `errors`, cut fields to `notes`."""
    path = Path(path)
    if path.is_dir():
        errors.append(f"{path}: is a directory, not a file of records")
        return
    try:
        lines = _lines(path, errors, progress)
        head: list[bytes] = []  # up to the first line that is not blank
        for line in lines:
            head.append(line.removeprefix(b"\xef\xbb\xbf") if not head else line)  # a UTF-8 byte-order mark
            if head[-1].strip():
                break
        if not head or not head[-1].strip():
            if notes is not None:
                notes.append(message("file_no_records", file=str(path)))
            return
        read = _read_array if head[-1].lstrip().removeprefix(b"\xef\xbb\xbf").startswith(b"[") else _read_lines
        yield from read(path, head, lines, errors, notes, {})
    except OSError as e:
        errors.append(f"{path}: cannot read: {e.strerror or e}")


def _read_lines(
    path: Path, head: list[bytes], rest: Iterator[bytes], errors: list[str], notes, seen: dict[str, str]
) -> Iterator[Paper]:
    for lineno, raw in enumerate(itertools.chain(head, rest), start=1):
        if not raw.strip():
            continue
        where = f"{path}:{lineno}"
        if len(raw) > MAX_LINE:
            errors.append(f"{where}: the record is {len(raw):,} bytes; the limit is {MAX_LINE:,}")
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            errors.append(f"{where}: invalid UTF-8 (byte {raw[e.start]:#04x} at column {e.start + 1})")
            continue
        rec, problem = _parse(text)
        if problem:
            errors.append(f"{where}: {problem}")
            continue
        yield from _checked(rec, where, errors, notes, seen)


def _read_array(
    path: Path, head: list[bytes], rest: Iterator[bytes], errors: list[str], notes, seen: dict[str, str]
) -> Iterator[Paper]:
    """A JSON array, element by element, each reported at the line it starts on."""
    data = b"\n".join([*head, *rest])
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        errors.append(f"{path}:{line}: invalid UTF-8 (byte {data[e.start]:#04x}); a JSON array is read whole")
        return
    dec = json.JSONDecoder()
    pos = text.index("[") + 1
    if notes is not None and text[pos:].strip(" \t\r\n,").startswith("]"):
        notes.append(message("file_no_records", file=str(path)))  # `[]`: a list of no records
    n = len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n:
            errors.append(f"{path}:{text.count(chr(10)) + 1}: invalid JSON: the array is not closed")
            return
        if text[pos] == "]":
            return
        where = f"{path}:{text.count(chr(10), 0, pos) + 1}"
        try:
            rec, pos = dec.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            errors.append(f"{path}:{e.lineno}: invalid JSON: {e.msg} (column {e.colno}); the rest of the array is lost")
            return
        except (RecursionError, ValueError) as e:
            msg = "nested too deeply" if isinstance(e, RecursionError) else str(e).splitlines()[0][:120]
            errors.append(f"{where}: invalid JSON: {msg}; the rest of the array is lost")
            return
        yield from _checked(rec, where, errors, notes, seen)


def ingest_file(
    store: Store, path: str | Path, progress: Progress | None = None, notes: list[str] | None = None
) -> IngestSummary:
    """A file merged into the papers it belongs to, as every source is: `progress` gets bytes read."""
    errors: list[str] = []
    return ingest_with_merge(store, read_records(path, errors, notes, progress), errors=errors)


def ingest_files(
    store: Store, paths: list[Path], progress: Progress | None = None, notes: list[str] | None = None
) -> IngestSummary:
    """Files one after another, each read by the file source that takes it (.bib), else as JSON."""
    from paperdex.sources.sync import import_file

    total = IngestSummary()
    for p in paths:
        if p.is_dir():
            total = total + IngestSummary(rejected=1, errors=[f"{p}: is a directory, not a file of records"])
        elif (s := import_file(store, p, notes)) is not None:
            total = total + s
            if progress:
                progress(p.stat().st_size)
        else:
            total = total + ingest_file(store, p, progress=progress, notes=notes)
    return total


def check_file(path: str | Path) -> list[str]:
    """A file's first problem, without writing anything (``ingest --strict`` reads first), found
    by the reader that would ingest it: BibTeX's for a .bib (whose entries are refused, not
    skipped, in a strict run), else the JSON reader's."""
    from paperdex.sources.sync import read_file

    if (parsed := read_file(path)) is not None:
        return [e.removesuffix("; skipped") for e in parsed.errors[:1]]
    errors: list[str] = []
    for _ in read_records(path, errors):
        if errors:
            break
    return errors[:1]


def load_vectors_file(vectors: str | Path) -> np.ndarray:
    """A 2-D float .npy array, memory-mapped; anything else is a StoreError saying what it is."""
    try:
        arr = np.load(vectors, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError, pickle.UnpicklingError) as e:
        raise StoreError(f"{vectors} is not a .npy array file ({str(e).splitlines()[0][:100]})") from None
    if not isinstance(arr, np.ndarray) or arr.ndim != 2 or arr.dtype.kind != "f":
        raise StoreError(f"{vectors} must hold a 2-D float array (one row per paper)")
    return arr


def import_vectors(store: Store, vectors: str | Path | np.ndarray, ids: str | Path, model: str) -> int:
    """Attach precomputed vectors (row k: line k of the ids file) to the papers in the store;
    how many were attached (ids not in the store are skipped)."""
    arr = vectors if isinstance(vectors, np.ndarray) else load_vectors_file(vectors)
    try:
        id_list = [line.strip() for line in Path(ids).read_text(encoding="utf-8-sig").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError) as e:
        raise StoreError(f"cannot read the ids file {ids}: {e}") from None
    if arr.shape[0] != len(id_list):
        raise StoreError(
            f"{vectors} has {arr.shape[0]} rows but {ids} lists {len(id_list)} ids: they must be aligned row for line"
        )
    rows = store.rowids_and_hashes_of()
    items = []
    for k, pid in enumerate(id_list):
        hit = rows.get(pid)
        if hit is None:
            continue
        v = np.asarray(arr[k], dtype=np.float32)
        norm = float(np.linalg.norm(v))
        if not np.isfinite(norm) or norm == 0:
            raise StoreError(f"{vectors}: row {k} (id {pid}) is not a usable vector")
        items.append((hit[0], hit[1], v / norm))
    for i in range(0, len(items), 5000):
        store.add_vectors(model, items[i : i + 5000])
    publish(store)
    return len(items)


SAMPLE = Path(__file__).parent / "data"  # the bundled sample of `paperdex demo` and the tests


def sample_vectors(model: str) -> np.ndarray:
    """The bundled sample's vectors of a pair of models, joined from its two halves' files."""
    from paperdex.index.embed import MODELS
    from paperdex.index.vectors import unit

    pair = MODELS[model]
    first, second = (load_vectors_file(SAMPLE / f"sample.{m}.f16.npy") for m in model.split("+"))
    return pair.join(unit(first), unit(second))  # type: ignore[union-attr]


def sample_model(store: Store) -> str | None:
    """The model whose vectors the bundled sample brings to this store: the store's, if the sample
    has both its halves' files (a store of the previous default keeps its model), else the
    default for a store without vectors; None otherwise."""
    from paperdex.index.embed import DEFAULT_MODEL, MODELS, Pair

    model = store.model or DEFAULT_MODEL
    pair = MODELS.get(model)
    halves = model.split("+")
    if not (isinstance(pair, type) and issubclass(pair, Pair)) or len(halves) != 2:
        return None
    return model if all((SAMPLE / f"sample.{m}.f16.npy").exists() for m in halves) else None


def load_sample(store: Store) -> tuple[IngestSummary, int | None]:
    """The bundled sample's papers, and their vectors unless the store has a model the sample has
    no vectors of (how many were attached; None: not tried)."""
    s = ingest_file(store, SAMPLE / "sample.jsonl.gz")
    n = None
    model = sample_model(store)
    if model is not None and store.vector_count() < store.count():
        n = import_vectors(store, sample_vectors(model), SAMPLE / "sample.ids.txt", model)
    return s, n
