"""Learn what the field's acronyms stand for, so that `GNN recommendation` also finds papers
that write "graph neural networks".

Papers define their acronyms as they introduce them: "graph neural networks (GNNs)". The
Schwartz-Hearst algorithm (Schwartz & Hearst, PSB 2003; the `abbreviations` package) finds
these pairs in the titles and abstracts of the shared corpus (63,104 arXiv papers). For each
acronym (a trailing plural "s" folded: GNNs -> gnn) we count its long forms (lowercased,
plural folded by Porter stems) and keep:

- acronyms defined in at least MIN_PAPERS papers, two to eight characters, not a stopword;
- their long forms defined in at least MIN_SHARE of the acronym's definitions (most
  frequent first, at most MAX_FORMS), so SR keeps "super resolution" and "speech
  recognition" but not a one-off expansion;
- whether the acronym is also an ordinary lowercase word of the corpus (map, sam, clip):
  then a query must type it in capitals (`MAP`) for it to expand.

    python bench/train_acronyms.py     # writes paperdex/data/acronyms.tsv (~1 min)
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from abbreviations import schwartz_hearst

from paperdex.text import STOPWORDS, stem, tokens

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "data" / "arxiv-2025-2026.jsonl.gz"
OUT = ROOT / "paperdex" / "data" / "acronyms.tsv"
MIN_PAPERS = 5
MIN_SHARE = 0.2
MAX_FORMS = 3
LOWERCASE_SHARE = 0.2  # lowercase uses over all uses above which the word must be typed in capitals


def acronym_key(short: str) -> str | None:
    s = short.strip()
    if s.endswith("s") and len(s) > 2 and any(c.isupper() for c in s[:-1]):
        s = s[:-1]
    if not 2 <= len(s) <= 8 or not s[0].isalpha() or not re.fullmatch(r"[A-Za-z0-9\-]+", s):
        return None
    if sum(c.isupper() for c in s) < 2:  # "Transformers (ViT)" is fine, "models (Mod)" is not
        return None
    key = s.lower()
    return None if key in STOPWORDS else key


def _subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(c in it for c in small)


def spelled_out(short: str, long: str) -> bool:
    """Whether the long form spells the acronym out: its capitals (all its letters when it is
    all capitals; ViT -> vt, CoT -> ct) are the initials of the long form's words, with or
    without its stopwords, or nearly (CLIP, "contrastive language-image pre-training": clip in
    clipt). Schwartz-Hearst alone also accepts "supervised learning (SSL)" for a sentence
    that said "self-supervised learning (SSL)"."""
    s = short[:-1] if short.endswith("s") and any(c.isupper() for c in short[:-1]) else short
    letters = [c for c in s if c.isalpha()]
    caps = "".join(c for c in letters if c.isupper()).lower() if not s.isupper() else "".join(letters).lower()
    words = [w for w in re.split(r"[\s\-/]+", long.lower()) if w and w[0].isalnum()]
    initials = "".join(w[0] for w in words)
    content = "".join(w[0] for w in words if w not in STOPWORDS)
    if caps in (initials, content):
        return True
    return bool(caps) and caps[0] == initials[:1] and _subsequence(caps, initials) and len(caps) >= len(initials) - 1


def main() -> None:
    forms: dict[str, Counter] = defaultdict(Counter)  # acronym -> stems of the long form -> papers
    surface: dict[tuple[str, tuple[str, ...]], Counter] = defaultdict(Counter)
    lower_uses: Counter = Counter()
    upper_uses: Counter = Counter()
    with gzip.open(CORPUS, "rt") as f:
        for line in f:
            r = json.loads(line)
            text = f"{r['title']}. {r['abstract']}"
            for w in re.findall(r"\b[A-Za-z][A-Za-z0-9\-]{1,8}\b", text):
                (upper_uses if any(c.isupper() for c in w[1:]) or w.isupper() else lower_uses)[w.lower()] += 1
            try:
                pairs = schwartz_hearst.extract_abbreviation_definition_pairs(doc_text=text)
            except Exception:  # a malformed abstract: skip it
                continue
            seen = set()
            for short, long in pairs.items():
                key = acronym_key(short)
                words = [w for w in tokens(long) if w not in STOPWORDS]
                if key is None or len(words) < 2 or len(words) > 8 or not spelled_out(short, long):
                    continue
                st = tuple(stem(w) for w in words)
                if (key, st) in seen:
                    continue
                seen.add((key, st))
                forms[key][st] += 1
                surface[(key, st)][" ".join(tokens(long))] += 1
    rows = []
    for key, c in forms.items():
        total = sum(c.values())
        if total < MIN_PAPERS:
            continue
        best = [st for st, n in c.most_common() if n >= max(2, MIN_SHARE * total)][:MAX_FORMS]
        if not best:
            continue
        shown = [surface[(key, st)].most_common(1)[0][0] for st in best]
        uses = lower_uses[key] + upper_uses[key]
        capitals = "caps" if uses and lower_uses[key] / uses > LOWERCASE_SHARE else "any"
        rows.append((key, total, capitals, shown))
    rows.sort(key=lambda r: (-r[1], r[0]))
    with open(OUT, "w") as out:
        out.write("# acronym -> papers defining it -> 'caps' (expand only when typed in capitals) or 'any'\n")
        out.write("# -> long forms, most frequent first. Learned by bench/train_acronyms.py (Schwartz-Hearst)\n")
        out.write("# from the titles and abstracts of 63,104 arXiv papers (CC0 metadata).\n")
        for key, total, capitals, shown in rows:
            out.write(f"{key}\t{total}\t{capitals}\t{' | '.join(shown)}\n")
    print(f"{len(rows)} acronyms -> {OUT}")


if __name__ == "__main__":
    main()
