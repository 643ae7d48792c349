#!/bin/bash
# The default model's evaluation stores, built from ../shared (about 1.5 hours on 2 cores; run it
# in the background, e.g. `nohup setsid bench/stores.sh /work > /work/stores.log 2>&1 &`).
# Resumable: each step is skipped once done, and e5's embedding continues from its last chunk.
#   OUT/claims-pair  SciFact's 5,183 abstracts, `paperdex ingest` + `paperdex embed` as a user runs them
#   OUT/s63k-pair    the 63,104 arXiv papers: e5's half by bench/embed_corpus.py, joined with the
#                    shared all-MiniLM-L6-v2 vectors (bench/pair_vectors.py), ingested with --vectors
# Then: python bench/relevance.py --store 63k=OUT/s63k-pair --store claims=OUT/claims-pair --folds 5
set -euo pipefail
OUT=${1:?usage: bench/stores.sh OUT_DIR}
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
S=../shared/data
PAIR=multilingual-e5-small+all-MiniLM-L6-v2
say() { echo "$(date -u +%H:%M:%S) $*"; }
mkdir -p "$OUT/vecs"
if [ ! -e "$OUT/claims-pair/.built" ]; then
  say "claims: ingest, embed"
  $PY -m paperdex --data-dir "$OUT/claims-pair" ingest -q "$S/claims-corpus.jsonl.gz"
  $PY -m paperdex --data-dir "$OUT/claims-pair" embed -q
  touch "$OUT/claims-pair/.built"
fi
if [ ! -e "$OUT/vecs/e5-63k.npy" ]; then
  say "63k: e5's half (progress in $OUT/vecs/e5-63k.progress.0)"
  $PY bench/embed_corpus.py "$S/arxiv-2025-2026.jsonl.gz" "$OUT/vecs/e5-63k" --model multilingual-e5-small
fi
if [ ! -e "$OUT/vecs/pair-63k.npy" ]; then
  $PY bench/pair_vectors.py "$OUT/vecs/e5-63k.npy" "$OUT/vecs/e5-63k.ids.txt" \
    "$S/arxiv-2025-2026.all-MiniLM-L6-v2.f16.npy" "$S/arxiv-2025-2026.ids.txt" "$OUT/vecs/pair-63k"
fi
if [ ! -e "$OUT/s63k-pair/.built" ]; then
  say "63k: ingest with the pair's vectors"
  $PY -m paperdex --data-dir "$OUT/s63k-pair" ingest -q "$S/arxiv-2025-2026.jsonl.gz" \
    --vectors "$OUT/vecs/pair-63k.npy" --ids "$OUT/vecs/pair-63k.ids.txt" --model "$PAIR"
  touch "$OUT/s63k-pair/.built"
fi
say "done"
