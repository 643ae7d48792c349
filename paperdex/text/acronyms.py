"""What the field's acronyms stand for: `GNN` also means "graph neural networks", `RAG`
"retrieval augmented generation". Learned from the papers' own definitions ("graph neural
networks (GNNs)") by bench/train_acronyms.py into data/acronyms.tsv. An acronym that is also
an ordinary word of the corpus (map, em, cat) expands only when typed in capitals."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_DATA = Path(__file__).parents[1] / "data" / "acronyms.tsv"


@lru_cache(maxsize=1)
def table() -> dict[str, tuple[bool, tuple[str, ...]]]:
    """acronym (lowercase, singular) -> (only when typed in capitals, long forms best first)."""
    out: dict[str, tuple[bool, tuple[str, ...]]] = {}
    if not _DATA.exists():
        return out
    for line in _DATA.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        key, _count, caps, forms = line.split("\t")
        out[key] = (caps == "caps", tuple(f.strip() for f in forms.split("|") if f.strip()))
    return out


def expand(word: str) -> tuple[str, ...]:
    """The long forms of `word` as typed (`GNNs`, `gnn`, `ViT`), or () when it is not a known
    acronym (or is one only in capitals and was not typed so)."""
    w = word.strip()
    key = w.lower()
    got = table().get(key)
    if got is None and key.endswith("s") and len(key) > 2:
        w, key = w[:-1], key[:-1]
        got = table().get(key)
    if got is None:
        return ()
    caps_only, forms = got
    if caps_only and sum(c.isupper() for c in w) < 2:
        return ()
    return forms
