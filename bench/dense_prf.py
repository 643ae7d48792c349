"""Dense pseudo-relevance feedback into the words' side, replayed offline and cross-validated
(issue 35; docs/relevance.md, "Dense feedback into the words' side").

    python bench/dense_prf.py cache [--store /tmp/g34/s63k] [--out /tmp/prf63k]   # one pass per query
    python bench/dense_prf.py cv [--out /tmp/prf63k] [--folds 5] [--seeds 3]

The dense side's first k papers are taken as relevant (a relevance model, RM3-style):

1. each of the query's concepts counts in the words' score by how over-represented it is
   in those k papers against the corpus (`concept_weights`): a concept every one of them
   holds counts fully, one they hold no more often than any paper counts 1 - alpha;
2. the few stems most over-represented in their titles and abstracts that the query lacks
   (`expansion`) are added to the words' score, each with weight beta.

`cache` runs both sides of every English query once (the rule touches no other class) and
keeps, per query, over a pool of candidates (the best LEX_DEPTH by words, the dense side's
pool and the EXTRA_DENSE nearest): each concept's BM25F, each candidate expansion stem's, the
phrase bonus each candidate would get, the cosines and (for feedback's classes) the vectors.
`cv` replays the engine's order (bench/cv.py's `order` and `with_feedback`) for every knob
setting, chooses the setting on four folds (mean over classes of each class's mean: every
class counts the same) and scores it on the fifth, and prints per class the held-out mean ±
the spread of the per-fold means beside today's rules, and the paired difference.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import pickle
import time
from pathlib import Path

import cv
import numpy as np
import relevance

from paperdex.index import lexical
from paperdex.paper import index_text
from paperdex.search import masks, rank
from paperdex.search.planning import Concept
from paperdex.text import STOPWORDS, stem, tokens

SHARED = Path("/work/shared/data")
KS = (5, 10, 20, 30)  # feedback depths tried
TERMS_PER_K = 12  # expansion candidates kept per depth
LEX_DEPTH = 1500  # best word candidates kept (the engine scores LEX_POOL of them on both sides)
EXTRA_DENSE = 400
SETS = ("topics-63k-en", "known-en-63k", "q-en-question", "q-en-question-plain", "q-en-keywords")
ALPHAS = (0.0, 0.25, 0.5, 0.75)
MS = (0, 5, 10, 20)
BETAS = (0.03, 0.06, 0.1, 0.2, 0.3, 0.5)
GATES = (None, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)  # the rule only where `gate` is under this
SCOPES = ("sentence", "question", "sentence+keywords")


def point_shared() -> None:
    """bench/relevance.py reads ../shared/data beside the repository; a worktree has it elsewhere."""
    if not relevance.SHARED.exists() and SHARED.exists():
        relevance.SHARED = SHARED
        relevance.CORPUS = {k: SHARED / v.name for k, v in relevance.CORPUS.items()}


# --- the rule, as functions over arrays -------------------------------------------------


def topicality(held: np.ndarray, k: int, df: np.ndarray, n: int) -> np.ndarray:
    """How over-represented each term is in k feedback papers (`held` of them hold it)
    against a corpus of n (`df` hold it), on the term's own scale: log(P(t|R)/P(t)) / log(1/P(t)),
    0 for a term the feedback papers hold no more often than any paper, 1 for one all of them
    hold. P(t|R) is smoothed toward P(t) by one pseudo-paper."""
    p = np.maximum(df, 1) / n
    pr = (held + p) / (k + 1)
    return np.clip(np.log(pr / p) / np.maximum(np.log(1 / p), 1e-9), 0.0, 1.0)


def concept_weights(held: np.ndarray, k: int, df: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """Each query concept's weight in the words' score: 1 - alpha + alpha x topicality."""
    return (1 - alpha) + alpha * topicality(held, k, df, n)


def gate(held: np.ndarray, k: int, df: np.ndarray, n: int) -> float:
    """The mean topicality of the query's own concepts in the k feedback papers: high when
    the query names its topic's words (the words' side can be trusted as it is), low when
    its words are incidental to the papers that answer it (a plain-worded question)."""
    return float(topicality(held, k, df, n).mean()) if len(held) else 1.0


def expansion_scores(held: np.ndarray, k: int, df: np.ndarray, n: int) -> np.ndarray:
    """Which feedback stems to add, best first: P(t|R) x log(P(t|R)/P(t)), the term's part of
    the feedback set's divergence from the corpus; stems fewer than two papers hold score 0."""
    pr = held / k
    p = np.maximum(df, 1) / n
    return np.where(held >= 2, pr * np.log(np.maximum(pr, 1e-9) / p), 0.0)


# --- cache -------------------------------------------------------------------------------


def feedback_stems(e: relevance.Engine, docs: np.ndarray, own: set[str]) -> tuple[list[set[str]], dict[str, int]]:
    """The stems of each feedback paper's title and abstract (as the index reads them), and
    each stem's term id; the query's own stems, stopwords, digits and one-letter words out."""
    ix = e.s.lex
    rowids = [int(r) for r in ix.rowids[docs]]
    titles = e.s.corpus.field_texts(rowids, "title")
    abstracts = e.s.corpus.field_texts(rowids, "abstract")
    per, ids = [], {}
    for r in rowids:
        words = tokens(index_text(titles.get(r, "")) + " " + index_text(abstracts.get(r, "")))
        got = set()
        for w in words:
            if w in STOPWORDS or len(w) < 2 or w.isdigit():
                continue
            s = stem(w)
            if s in own:
                continue
            if s not in ids:
                t = ix.term(s)
                ids[s] = -1 if t is None else int(t)
            if ids[s] >= 0:
                got.add(s)
        per.append(got)
    return per, ids


def expansion_candidates(ix, per: list[set[str]], tids: dict[str, int]) -> dict[str, int]:
    """The TERMS_PER_K best stems to add (`expansion_scores`) at each feedback depth of KS."""
    cands: dict[str, int] = {}
    for k in KS:
        held: dict[str, int] = {}
        for got in per[:k]:
            for st in got:
                held[st] = held.get(st, 0) + 1
        st_list = list(held)
        if not st_list:
            continue
        df = ix.df[[tids[x] for x in st_list]].astype(np.float64)
        sc = expansion_scores(np.array([held[x] for x in st_list], float), k, df, ix.n)
        for i in np.argsort(-sc)[:TERMS_PER_K]:
            if sc[i] > 0:
                cands[st_list[i]] = tids[st_list[i]]
    return cands


def word_arrays(ev: masks.Eval, concepts: list[Concept], dense_docs, per, cands, pool) -> dict:
    """Per concept: its BM25F over the pool, how many of the first k dense papers hold it
    (each k of KS) and its document frequency; the same for each candidate stem to add."""
    ix = ev.ix
    S = np.zeros((len(concepts), len(pool)), dtype=np.float32)
    held_c = np.zeros((len(concepts), len(KS)), dtype=np.float64)
    df_c = np.zeros(len(concepts), dtype=np.float64)
    for i, c in enumerate(concepts):
        a = np.zeros(ix.n, dtype=np.float32)
        ev.concept_score(c, a)
        S[i] = a[pool]
        m = ev.concept_mask(c)
        df_c[i] = m.sum()
        held_c[i] = [m[dense_docs[:k]].sum() for k in KS]
    stems = list(cands)
    E = np.zeros((len(stems), len(pool)), dtype=np.float32)
    held_t = np.zeros((len(stems), len(KS)), dtype=np.float64)
    for i, st in enumerate(stems):
        d, sc = ix.term_scores(cands[st])
        pos, ok = lexical.find_sorted(pool, d.astype(np.int64))
        E[i, pos[ok]] = sc[ok]
        held_t[i] = [sum(st in got for got in per[:k]) for k in KS]
    df_t = ix.df[[cands[x] for x in stems]].astype(np.float64) if stems else np.zeros(0)
    return {"S": S, "held_c": held_c, "df_c": df_c, "E": E, "held_t": held_t, "stems": stems, "df_t": df_t}


def cache_one(e: relevance.Engine, ids: np.ndarray, q: str) -> dict:
    ix = e.s.lex
    p, _, words, dense = cv.sides(e, q)
    ev = masks.Eval(ix, e.s.corpus)
    present = [c for c in p.concepts if ev.concept_mask(c).any()]
    concepts = words.rank_concepts
    out: dict = {"query": q, "qclass": p.query_class, "quoted": words.quoted, "statement": p.statement}
    A = words.A & (words.acc > 0)
    pool = rank.top_k(words.acc, np.flatnonzero(A), LEX_DEPTH)
    out["skip"] = dense is None or len(dense.docs) == 0 or not concepts  # nothing to feed back
    if not out["skip"]:
        own = {st for c in concepts for alt in c.alts for st in alt}
        per, tids = feedback_stems(e, dense.docs[: max(KS)], own)
        cands = expansion_candidates(ix, per, tids)
        every_pos = np.argpartition(-dense.index.cosines_of(dense.every, dense.index.keys), EXTRA_DENSE)[:EXTRA_DENSE]
        extra = ix.docs_of_rowids(dense.index.keys[every_pos].astype(np.int64))
        term_top = []
        for t in cands.values():  # the papers an added stem could lift into the words' best
            d, sc = ix.term_scores(t)
            keep = A[d]
            term_top.append(d[keep][np.argsort(-sc[keep])[:50]])
        pool = np.unique(np.concatenate([pool, dense.docs, extra, *term_top]).astype(np.int64))
        out |= word_arrays(ev, concepts, dense.docs, per, cands, pool) | cv.dense_arrays(ix, p, dense, pool)
        out["bonus"] = bonus_factor(ix, pool, present, p.statement)
        cov = np.zeros(len(pool), dtype=np.float32)
        for c in present:
            cov += ev.concept_mask(c)[pool]
        out["coord"] = cov / len(present) if len(present) > 1 and p.query_class[1] == "keywords" else None
    out["inA"] = A[pool]
    out["ids"] = ids[ix.rowids[pool]]
    out["acc"] = words.acc[pool]
    return out


def bonus_factor(ix, pool: np.ndarray, present: list[Concept], statement: bool) -> np.ndarray:
    """The factor `rank.phrase_bonus` would multiply each pool paper's score by, were it
    among the bonus's candidates."""
    units = rank.phrase_units(present)
    if not units:
        return np.ones(len(pool), dtype=np.float32)
    got = np.zeros(len(pool), dtype=np.float32)
    for unit in units:
        ok = np.zeros(len(pool), dtype=bool)
        for alt in unit:
            if len(alt) == 1:
                t = ix.term(alt[0])
                if t is not None:
                    ok |= np.isin(pool, ix.term_docs(t))
            else:
                ok |= rank.together_mask(ix, alt)[pool]
        got += ok
    boost = rank.PHRASE_BOOST_STATEMENT if statement else rank.PHRASE_BOOST
    return (1 + boost * got / len(units)).astype(np.float32)


def cmd_cache(args) -> None:
    point_shared()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    e, ids = cv.engine_with_ids(args.store)
    sets = cv.query_sets(args.kind)
    for name in SETS:
        if args.kind != "63k":  # the sub-corpus's names (bench/relevance.py `classes`)
            name = name.replace("63k", args.kind).replace("q-", "q21-", 1)
        f = out / (name + ".pkl")
        if f.exists() or name not in sets:
            continue
        t0 = time.time()
        got = []
        for q in sets[name][: args.limit]:
            c = cache_one(e, ids, q["query"])
            c["grades"], c["relevant"] = q.get("grades"), q.get("relevant")
            if args.check or c["skip"]:
                c["engine"] = e.run(q["query"], "hybrid")[:10]
            got.append(c)
        f.write_bytes(pickle.dumps(got))
        print(f"{name}: {len(got)} queries, {time.time() - t0:.0f} s", flush=True)


# --- replay ------------------------------------------------------------------------------


def words_side(c: dict, k_i: int, alpha: float, m: int, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """The words' scores over the pool and which of them the engine scores on both sides
    (the best LEX_POOL of the word candidates), with the rule's knobs."""
    k = KS[k_i]
    n = c["n"]
    w = concept_weights(c["held_c"][:, k_i], k, c["df_c"], n, alpha).astype(np.float32)
    pre = np.zeros(len(c["acc"]), dtype=np.float32)
    for i in range(len(w)):
        pre += c["S"][i] if w[i] == 1 else w[i] * c["S"][i]
    if m and len(c["stems"]):
        sc = expansion_scores(c["held_t"][:, k_i], k, c["df_t"], n)
        for i in [i for i in np.argsort(-sc, kind="stable")[:m] if sc[i] > 0]:
            pre += np.float32(beta) * c["E"][i]
    lex = pre.copy()
    inA = c["inA"]
    cand = np.flatnonzero(inA & (pre > 0))
    if len(cand) > rank.PHRASE_DEPTH:
        cand = cand[np.argpartition(-pre[cand], rank.PHRASE_DEPTH - 1)[: rank.PHRASE_DEPTH]]
    lex[cand] *= c["bonus"][cand]
    if c["coord"] is not None:
        lex *= c["coord"]
    ok = np.flatnonzero(inA & (lex > 0))
    in_lex = np.zeros(len(lex), dtype=bool)
    in_lex[rank.top_k(lex, ok, rank.LEX_POOL)] = True
    return lex, in_lex


def replay(c: dict, setting: tuple | None) -> float:
    """The quality of one query's hybrid order with the rule at `setting` (k index, alpha,
    m, beta), or as today (None)."""
    w = 0.0 if c["quoted"] else rank.FUSION[tuple(c["qclass"])]
    if setting is None:
        lex, in_lex = words_side(c, 0, 0.0, 0, 0.0)
    else:
        lex, in_lex = words_side(c, *setting)
    r = {"lex": lex, "lex0": None, "in_lex": in_lex, "in_lex0": in_lex} | {
        k: c[k] for k in ("cos", "dense_idx", "v32", "novec", "qv", "ids") if k in c
    }
    if "v32" in r and w > 0:
        top = cv.with_feedback(r, w, True, True)
    else:
        top = cv.order(r, w, True, True)
    return cv.quality(c, list(c["ids"][top]))


SETTINGS = [None] + [
    (ki, a, m, b)
    for ki, a, m in itertools.product(range(len(KS)), ALPHAS, MS)
    for b in (BETAS if m else (0.0,))
    if a > 0 or m > 0
]


def tables(out: Path) -> tuple[list[str], list[dict], np.ndarray]:
    """quality[query, setting] (setting 0: today), from the cache."""
    return cv.load_tables(out, _entry)


def _entry(c: dict) -> tuple[dict, np.ndarray]:
    """One cached query's row (its class, form and gates) and its quality at every setting."""
    t = np.zeros(len(SETTINGS), dtype=np.float32)
    if c["skip"]:
        t[:] = cv.quality(c, c["engine"])
    else:
        if "vecs" in c:
            c["v32"] = c["vecs"].astype(np.float32)
            c["novec"] = ~c["v32"].any(axis=1)
        t[0] = replay(c, None)
        t[1:] = [replay(c, s) for s in SETTINGS[1:]]
    row = {k: c[k] for k in ("query", "qclass", "quoted", "statement", "skip")}
    row["gate"] = [1.0 if c["skip"] else gate(c["held_c"][:, i], k, c["df_c"], c["n"]) for i, k in enumerate(KS)]
    if "engine" in c:
        row["engine"] = cv.quality(c, c["engine"])
    return row, t


class Choice:
    """A setting of the rule: where it applies (`scope`, and `tau`: only where the query's
    `gate` at the setting's depth is under it; None: everywhere) and its knobs (SETTINGS)."""

    def __init__(self, T: np.ndarray, names: np.ndarray, rows: list[dict]) -> None:
        self.T, self.names = T, names
        qcls = [tuple(r["qclass"]) for r in rows]
        self.scope = {
            "sentence": np.array([c == ("en", "sentence") for c in qcls]),
            "sentence+keywords": np.array([c[0] == "en" for c in qcls]),
        }
        self.scope["question"] = self.scope["sentence"] & ~np.array([r["statement"] for r in rows])
        self.G = np.array([r["gate"] for r in rows])

    def scores(self, ch: tuple, idx: np.ndarray) -> np.ndarray:
        """Each query's quality with the rule where it applies, today's elsewhere."""
        scope, si, tau = ch
        ok = self.scope[scope][idx]
        if si and tau is not None:
            ok = ok & (self.G[idx, SETTINGS[si][0]] < tau)
        return np.where(ok, self.T[idx, si], self.T[idx, 0])

    def objective(self, ch: tuple, idx: np.ndarray) -> float:
        """Mean over classes of the class's mean quality: each class counts the same."""
        sc, nm = self.scores(ch, idx), self.names[idx]
        return float(np.mean([sc[nm == k].mean() for k in np.unique(nm)]))

    def every(self, variant: str = "gated") -> list[tuple]:
        """The choices a variant of the rule picks among: `reweight` (the query's concepts
        reweighted only, everywhere in scope), `expand` (reweighting and added stems,
        everywhere in scope) or `gated` (both, and the gate)."""
        got = [(sc, si, tau) for sc in SCOPES for si in range(len(SETTINGS)) for tau in (GATES if si else (None,))]
        if variant == "reweight":
            return [x for x in got if x[2] is None and (not x[1] or SETTINGS[x[1]][2] == 0)]
        return [x for x in got if x[2] is None] if variant == "expand" else got


def show(ch: tuple) -> str:
    scope, si, tau = ch
    if not si:
        return "today"
    ki, a, m, b = SETTINGS[si]
    gate_s = "always" if tau is None else f"gate < {tau}"
    return f"{scope}, k {KS[ki]}, alpha {a}, {m} words x {b}, {gate_s}"


def cmd_cv(args) -> None:
    out = Path(args.out)
    names, rows, T = tables(out)
    names_a = np.array(names)
    if any("engine" in r for r in rows):
        chk = [(r["engine"], T[i, 0]) for i, r in enumerate(rows) if "engine" in r and not r["skip"]]
        same = sum(abs(a - b) < 1e-6 for a, b in chk)
        print(f"replay of today against Searcher.search: {same} of {len(chk)} queries score the same")
    ch = Choice(np.nan_to_num(T), names_a, rows)
    every = ch.every(args.variant)
    sets = sorted(set(names))
    for s in sets:
        g = ch.G[names_a == s, KS.index(10)]
        print(f"gate at k 10, {s}: quartiles " + " / ".join(f"{v:.2f}" for v in np.quantile(g, [0.25, 0.5, 0.75])))
    per_q = {r: np.zeros((args.seeds, len(rows))) for r in ("today", "prf")}
    folds_mean: dict[str, dict[str, list]] = {r: {s: [] for s in sets} for r in per_q}
    chosen = []
    for seed in range(args.seeds):
        fold = cv.stratified_folds(names_a, args.folds, seed)
        for k in range(args.folds):
            train, test = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
            best = max(every, key=lambda x: ch.objective(x, train))
            chosen.append(best)
            got = {"today": ch.T[test, 0], "prf": ch.scores(best, test)}
            for r, sc in got.items():
                per_q[r][seed, test] = sc
                for s in sets:
                    m = names_a[test] == s
                    if m.any():
                        folds_mean[r][s].append(float(sc[m].mean()))
    print("| class (n) | today | dense feedback into the words, on folds | paired difference |")
    print("| --- | --- | --- | --- |")
    report = {}
    for s in sets:
        m = names_a == s
        cells = [f"{per_q[r][:, m].mean():.3f} ± {np.std(folds_mean[r][s]):.3f}" for r in per_q]
        d = per_q["prf"][:, m].mean(0) - per_q["today"][:, m].mean(0)
        diff = f"{d.mean():+.3f} ± {d.std() / math.sqrt(len(d)):.3f}"
        report[s] = cells + [diff]
        print(f"| {s} ({int(m.sum())}) | " + " | ".join(cells) + f" | {diff} |")
    print("chosen on the training folds:")
    counts: dict[str, int] = {}
    for x in chosen:
        counts[show(x)] = counts.get(show(x), 0) + 1
    for name, n in sorted(counts.items(), key=lambda x: -x[1]):
        print(f"  {n} x {name}")
    allq = np.arange(len(rows))
    print("in-sample (every query), the best:")
    for x in sorted(every, key=lambda x: -ch.objective(x, allq))[: args.show]:
        per = {s: ch.scores(x, np.flatnonzero(names_a == s)).mean() for s in sets}
        print(f"  {show(x)}: " + ", ".join(f"{s} {v:.3f}" for s, v in per.items()))
    (out / f"cv-{args.variant}.json").write_text(json.dumps({"report": report, "chosen": [show(x) for x in chosen]}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=["cache", "cv"])
    ap.add_argument("--store", default="/tmp/g34/s63k")
    ap.add_argument("--kind", default="63k", choices=["63k", "21k"], help="the store's corpus")
    ap.add_argument("--out", default="/tmp/prf63k")
    ap.add_argument("--check", action="store_true", help="keep Searcher.search's first ten of every query")
    ap.add_argument("--limit", type=int, help="the first queries of each set only (a trial)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--variant", default="gated", choices=["reweight", "expand", "gated"])
    ap.add_argument("--show", type=int, default=8, help="in-sample best settings shown")
    args = ap.parse_args()
    {"cache": cmd_cache, "cv": cmd_cv}[args.cmd](args)


if __name__ == "__main__":
    main()
