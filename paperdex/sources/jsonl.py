"""JSON Lines / JSON files of paper records (arXiv metadata dumps and paperdex's own exports).

They are read by :func:`paperdex.ingest.ingest_file`, which streams big files with progress
and strict checks; this module only registers the record source name ``file`` with its merge
ranks: trusted nearly as much as arXiv itself (they are copies of its metadata), more than
arXiv's RSS listing.
"""

from __future__ import annotations

from .registry import Source, register

SOURCE = "file"

register(
    Source(
        name=SOURCE,
        ranks={
            SOURCE: {
                "title": 45,
                "abstract": 45,
                "authors": 45,
                "venue": 10,
                "dates": 45,
                "links": 45,
                "code": 40,
                "categories": 45,
            }
        },
    )
)
