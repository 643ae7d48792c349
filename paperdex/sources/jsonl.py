"""JSON Lines / JSON files of paper records (arXiv metadata dumps and paperdex's own exports),
read by :func:`paperdex.ingest.ingest_file`: here the record source ``file`` with its merge ranks,
and the arXiv metadata snapshot's records (:func:`from_snapshot`).
"""

from __future__ import annotations

from typing import Any

from paperdex.sources.registry import Source, register, trust


def is_snapshot(rec: Any) -> bool:
    """A record of the arXiv metadata snapshot (``authors`` one string, ``versions`` with RFC 822
    dates), not paperdex's own record format."""
    return (
        isinstance(rec, dict)
        and isinstance(rec.get("authors"), str)
        and any(k in rec for k in ("versions", "update_date", "authors_parsed", "submitter"))
    )


def from_snapshot(rec: dict[str, Any]) -> dict[str, Any]:
    """A snapshot record as a paperdex record, read as docs/sources.md ("arXiv") says; fields of
    the wrong type are left for :func:`paperdex.paper.paper_from_dict` to refuse by name."""
    from paperdex.paper import RecordError
    from paperdex.sources.arxiv import META_FIELDS, _rfc_day, abstract_text, read_authors, title_text

    title, abstract, authors, cats, comment = (
        rec.get(k) for k in ("title", "abstract", "authors", "categories", "comments")
    )
    out: dict[str, Any] = {
        "id": rec.get("id"),
        "title": title_text(title) if isinstance(title, str) else title,
        "abstract": abstract_text(abstract) if isinstance(abstract, str) else abstract,
        "authors": authors,
        "categories": cats.split() if isinstance(cats, str) else cats,
        "comment": " ".join(comment.split()) if isinstance(comment, str) else comment,
    }
    extra: dict[str, Any] = {}
    if isinstance(authors, str):
        out["authors"], out["authors_truncated"], who = read_authors(authors)
        extra.update((k, v) for k, v in who.items() if v)
    versions = rec.get("versions") or []
    if not isinstance(versions, list):
        raise RecordError(f"'versions' must be a list of {{version, created}}, got {type(versions).__name__}")
    days = []
    for i, v in enumerate(versions):
        created = v.get("created") if isinstance(v, dict) else None
        if not isinstance(created, str):
            raise RecordError(f"'versions[{i}].created' must be a date string")
        try:
            days.append(_rfc_day(created))
        except ValueError as e:
            raise RecordError(f"'versions[{i}].created': {e}") from None
    if days:
        out["published"], out["updated"] = days[0], days[-1]
        last = versions[-1].get("version")
        if isinstance(last, str):
            extra["version"] = last
    elif isinstance(rec.get("update_date"), str):
        out["updated"] = rec["update_date"]
    for key, name in META_FIELDS.items():
        v = rec.get(key)
        if isinstance(v, str) and v.strip():
            extra[name] = " ".join(v.split())
    if isinstance(rec.get("submitter"), str):
        extra["submitter"] = rec["submitter"]
    if extra:
        out["extra"] = {"arxiv": extra}
    return out


SOURCE = "file"

register(
    Source(
        name=SOURCE,
        ranks={SOURCE: trust(title=45, abstract=45, authors=45, venue=10, dates=45, links=45, code=40, categories=45)},
    )
)
