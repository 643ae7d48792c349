"""Where papers come from: arXiv, OpenReview, Hugging Face Daily Papers and BibTeX, all merged
into one record per paper on the way into the store."""

from __future__ import annotations

from paperdex.sources.http import SourceError

__all__ = ["SourceError"]
