"""Venue from the arXiv comment (paperdex.sources.venues) on the shared corpus: how many
comments name a venue, and the precision of a hand-checked sample.

    python bench/venues.py                       # = recheck dev: today's rules on the judged sample
    python bench/venues.py recheck dev           # corpus counts; judged lines whose venue changed
    python bench/venues.py sample dev 2121       # bench/venues_dev.tsv: 200 parsed comments
    python bench/venues.py sample heldout 2122   # bench/venues_heldout.tsv: 200 others
    python bench/venues.py score heldout         # precision once the verdict column is filled

`score` reads the verdicts as written (of the venues the rules gave when the sample was drawn);
`recheck` parses the judged comments again with today's rules: a line whose venue is unchanged
keeps its verdict, a changed one is listed to be judged again. `sample` never overwrites a file
that holds verdicts.

The verdict column is filled by a person reading each comment: "ok" when the stored venue
(name, year, main conference or workshop/findings/demo track, presentation) is what the comment
says the paper was accepted at or published in; "partial" when it is right but leaves out a
presentation or sub-track the comment states; "wrong" otherwise. The rules were tuned on the
dev sample; the held-out sample, drawn after, measures them. Reads ../shared (not needed by the
product or its tests).
"""

from __future__ import annotations

import collections
import csv
import gzip
import json
import random
import sys
import time
from pathlib import Path

from paperdex.sources.venues import parse_paper

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arxiv-2025-2026.jsonl.gz"
HERE = Path(__file__).parent


def scan() -> tuple[int, int, list[tuple[str, str, str]]]:
    rows, n, with_comment = [], 0, 0
    for line in gzip.open(CORPUS, "rt", encoding="utf-8"):
        d = json.loads(line)
        n += 1
        if not d.get("comment"):
            continue
        with_comment += 1
        v = parse_paper(d["comment"], None, int(d["listed"][:4]))
        if v:
            rows.append((d["id"], v.label, " ".join(d["comment"].split())))
    return n, with_comment, rows


def recheck(sample_file: Path) -> None:
    """Today's rules on a judged sample: corpus counts, then every line whose venue changed."""
    with sample_file.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    wanted = {r["id"] for r in rows}
    t = time.perf_counter()
    n, with_comment, found = scan()
    took = time.perf_counter() - t
    print(f"{n:,} papers, {with_comment:,} with a comment, {len(found):,} with a venue ({took:.1f} s)")
    now = {pid: label for pid, label, _ in found if pid in wanted}
    same = [r for r in rows if now.get(r["id"], "") == r["venue"]]
    verdicts = collections.Counter(r["verdict"] or "unjudged" for r in same)
    changed = len(rows) - len(same)
    print(f"{sample_file.name}: {len(rows)} lines, {len(same)} unchanged ({dict(verdicts)}), {changed} changed")
    for r in rows:
        if now.get(r["id"], "") != r["venue"]:
            print(f"  {r['id']} {r['venue']!r} ({r['verdict']}) -> {now.get(r['id'])!r} <- {r['comment'][:160]}")


def main() -> None:
    what = sys.argv[1] if len(sys.argv) > 1 else "recheck"
    name = sys.argv[2] if len(sys.argv) > 2 else "dev"
    sample_file = HERE / f"venues_{name}.tsv"
    if what == "recheck":
        recheck(sample_file)
    elif what == "sample":
        if sample_file.exists() and any(
            line.split("\t")[2:3] not in ([""], ["verdict"]) for line in sample_file.read_text().splitlines()
        ):
            sys.exit(f"{sample_file} holds verdicts; move it away to draw a new sample")
        t = time.perf_counter()
        n, with_comment, rows = scan()
        took = time.perf_counter() - t
        print(f"{n:,} papers, {with_comment:,} with a comment, {len(rows):,} with a venue ({took:.1f} s)")
        names = collections.Counter(label.split(" 20")[0] for _, label, _ in rows)
        print("most named:", ", ".join(f"{k} {v}" for k, v in names.most_common(10)))
        seed = int(sys.argv[3]) if len(sys.argv) > 3 else 2121
        taken = set()
        for other in HERE.glob("venues_*.tsv"):  # a new sample holds none of an earlier one's papers
            if other != sample_file:
                taken |= {line.split("\t", 1)[0] for line in other.read_text(encoding="utf-8").splitlines()}
        sample = random.Random(seed).sample([r for r in rows if r[0] not in taken], 200)
        with sample_file.open("w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, delimiter="\t", lineterminator="\n")
            w.writerow(["id", "venue", "verdict", "comment"])
            for pid, label, comment in sample:
                w.writerow([pid, label, "", comment])
        print(f"wrote {sample_file}")
    else:
        with sample_file.open(encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        judged = [r for r in rows if r["verdict"] in ("ok", "partial", "wrong")]
        n = max(len(judged), 1)
        ok = sum(r["verdict"] == "ok" for r in judged)
        partial = sum(r["verdict"] == "partial" for r in judged)
        print(f"{len(judged)} judged: {ok} ok, {partial} partial, {len(judged) - ok - partial} wrong")
        print(f"precision {(ok + partial) / n:.3f} (partial counted right), {ok / n:.3f} (strict)")
        for r in judged:
            if r["verdict"] != "ok":
                print(f"  {r['verdict']}: {r['id']} {r['venue']!r} <- {r['comment'][:160]}")


if __name__ == "__main__":
    main()
