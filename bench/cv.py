"""Cross-validation of the fusion's rules over query folds, on the graded development sets and
the silver ones of the 63k store (docs/relevance.md, "Cross-validated").

    python bench/cv.py cache [--store bench/out/s63k] [--kind 63k|21k] [--out /tmp/h11]   # one pass per query
    python bench/cv.py cv [--out /tmp/h11] [--folds 5] [--seeds 3]       # every rule, offline

`cache` runs both sides of every query once and keeps, per query, the candidates' word scores
(with and without the statement's phrase bonus), their cosines, the dense side's order, the
trust features (`trust_features`) and, for the classes feedback may touch, the candidates'
vectors. `cv` replays the fusion over those arrays (the candidates do not depend on the
weights) for each rule: a rule's knob is chosen on K-1 folds (stratified by class) and scored
on the held-out fold; per class it prints the mean over queries of the held-out scores and the
spread (standard deviation) of the per-fold means across folds and seeds, then each rule's
difference from today's rules, query by query (mean and paired standard error). The replay is
the engine's order exactly (81 of 81 queries checked against `Searcher.search`, feedback
included); a class is the question sets' class (bench/questions/ and dev-*/ together) or a
silver set of bench/relevance.py.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import random
import time
from pathlib import Path

import judge
import numpy as np
import relevance

from paperdex.index import lexical
from paperdex.search import engine as S
from paperdex.search import masks, rank
from paperdex.search.planning import PrefixCounts, split_cjk
from paperdex.text import zh

ROOT = Path(__file__).resolve().parents[1]
WGRID = np.round(np.arange(0, 1.0001, 0.05), 2)
EXTRA_DENSE = 400  # nearest papers kept beside the word candidates (feedback moves the dense side)


def query_sets(kind: str) -> dict[str, list[dict]]:
    """The graded questions (bench/questions/ and its dev-*/, by class) and the silver sets of
    bench/relevance.py, on the 63k store or the 21k sub-corpus (the grades of its papers)."""
    return {k: v[1] for k, v in relevance.classes([kind]).items()}


def sides(e: relevance.Engine, q: str):
    """The plan, the words' side and the dense side of one query, as a hybrid search makes them."""
    ix = e.s.lex
    p = S.plan(q, mode="hybrid", per_page=100, literal=True)
    ev = masks.Eval(ix, e.s.corpus)
    C = masks.constraints(ev, p.hard)
    words = masks.find_words(ev, p, C, [])
    return p, C, words, e.s._dense_side(ix, p, C, e.qv(q), [], bool(words.A.any()))


# --- per-query trust: evidence about one query (query-performance prediction) -------------

TRUST_FEATURES = ("spec", "agree", "lexcos", "cover", "cos1", "lgap", "zhread", "zhword", "zh")


def zh_read(q: str) -> float:
    """The share of a query's Chinese characters the dictionary reads (1 with none): the rest
    reaches the dense side alone, so where little is read the words rank a fragment."""
    runs = [run.strip() for run, cjk in split_cjk(q) if cjk and run.strip()]
    if not runs:
        return 1.0
    return sum(sum(len(w) for w in zh.segment(r, PrefixCounts)) for r in runs) / sum(len(r) for r in runs)


def zh_word_read(q: str) -> float:
    """`zh_read` over the segmenter's words of two or more characters only (one character is
    mostly a function word: 的, 让, 用): the share of them the dictionary reads, in characters."""
    d, counts = zh.dictionary()
    have = total = 0
    for run in zh._IDEOGRAPH_RUN.findall(q):
        for w in zh._tokenizer(zh.DICT, PrefixCounts).cut(run):
            if len(w) < 2:
                continue
            total += len(w)
            have += len(w) if w in d else sum(len(x) for x in zh._back_off(w, d, counts))
    return have / total if total else 1.0


def trust_features(e: relevance.Engine, p, words, dense) -> dict[str, float]:
    """How specific the query's words are (`spec`: the mean over its matched concepts of
    log(N/df) / log N), how much the two sides' first ten agree (`agree`), how near in
    meaning the words' first ten are (`lexcos`: their mean cosine between the dense pool's
    deepest and its best), the largest share of the concepts one paper holds (`cover`), how
    far the dense side's best hit is over the model's close-match floor (`cos1`), how far the
    words' best paper leads the next (`lgap`), and whether the query is Chinese (`zh`)."""
    ix = e.s.lex
    n = max(ix.n, 2)
    ev = masks.Eval(ix, e.s.corpus)
    cms = [m for m in (ev.concept_mask(c) for c in p.concepts) if m.any()]
    df = np.array([int(m.sum()) for m in cms], dtype=np.float64)
    spec = float(np.mean(np.log(n / df)) / np.log(n)) if len(df) else 0.0
    cover = float(np.sum(cms, axis=0).max()) / len(cms) if cms else 0.0
    lex10 = rank.top_k(words.acc, np.flatnonzero(words.A & (words.acc > 0)), 10)
    s = words.acc[lex10]
    lgap = float((s[0] - s[1]) / s[0]) if len(s) > 1 and s[0] > 0 else 1.0
    agree = lexcos = cos1 = 0.0
    if dense is not None and len(dense.cos) > 1 and len(lex10):
        agree = len(np.intersect1d(lex10, dense.docs[:10])) / 10
        c = np.nan_to_num(dense.index.cosines_of(dense.every, ix.rowids[lex10]), nan=float(dense.cos[-1]))
        lexcos = float((c.mean() - dense.cos[-1]) / max(float(dense.cos[0] - dense.cos[-1]), 1e-6))
        cos1 = float(dense.cos[0]) - rank.floors(dense.index.model, p.dense_lang)[0]
    feats = {"spec": spec, "agree": agree, "lexcos": lexcos, "cover": cover, "cos1": cos1, "lgap": lgap}
    far = 0.0  # the engine's own test (`rank.words_far`), on what the engine gives it
    if dense is not None and p.query_class[1] == "sentence":
        far = float(rank.words_far(dense.index.cosines_of(dense.every, ix.rowids[words.best(10)[0]]), dense.cos))
    return feats | {"far": far, "zhread": zh_read(p.q), "zhword": zh_word_read(p.q), "zh": float(p.lang != "en")}


def trust_weight(X: np.ndarray, theta) -> np.ndarray:
    """The dense weight of queries with features X (rows in TRUST_FEATURES order): a logistic
    map, theta's first entry the constant."""
    th = np.asarray(theta, dtype=np.float64)
    return 1 / (1 + np.exp(-(th[0] + np.asarray(X, dtype=np.float64) @ th[1:])))


def dense_arrays(ix, p, dense, pool: np.ndarray) -> dict:
    """The pool's cosines and the dense pool's places in it; for feedback's classes the
    pool's vectors and the query's (`replay`'s of `Searcher._feedback`); bench/dense_prf.py caches them too."""
    vi = dense.index
    cos = vi.cosines_of(dense.every, ix.rowids[pool])
    dense_idx = np.searchsorted(pool, dense.docs)
    cos[dense_idx] = dense.cos
    out = {"cos": cos, "dense_idx": dense_idx, "n": ix.n}
    if p.query_class in rank.FEEDBACK:
        pos, ok = lexical.find_sorted(vi.keys, ix.rowids[pool])
        vecs = np.zeros((len(pool), vi.vecs.shape[1]), dtype=np.float16)
        v = vi.vecs[pos[ok]].astype(np.float32)
        v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)
        vecs[ok] = v
        out |= {"vecs": vecs, "qv": np.asarray(dense.qv, dtype=np.float32)}
    return out


def cache_one(e: relevance.Engine, ids: np.ndarray, q: str) -> dict:
    s = e.s
    ix = s.lex
    p, C, words, dense = sides(e, q)
    lex0 = None
    if p.statement:
        keep = masks.PHRASE_BOOST_STATEMENT
        masks.PHRASE_BOOST_STATEMENT = 0.0
        lex0 = masks.find_words(masks.Eval(ix, s.corpus), p, C, []).acc
        masks.PHRASE_BOOST_STATEMENT = keep
    acc = words.acc
    A = words.A & (acc > 0)
    lex_cand = np.flatnonzero(A)
    tops = [rank.top_k(acc, lex_cand, rank.LEX_POOL)]
    if lex0 is not None:
        tops.append(rank.top_k(lex0, np.flatnonzero(words.A & (lex0 > 0)), rank.LEX_POOL))
    feats = trust_features(e, p, words, dense)
    out: dict = {"query": q, "qclass": p.query_class, "statement": p.statement, "quoted": words.quoted}
    out["feats"] = feats
    if dense is None or len(dense.docs) == 0:
        pool = np.unique(np.concatenate(tops)) if tops else np.zeros(0, dtype=np.int64)
        cos = np.full(len(pool), np.nan, dtype=np.float32)
        dense_idx = np.zeros(0, dtype=np.int64)
    else:
        vi = dense.index
        every_pos = np.argpartition(-vi.cosines_of(dense.every, vi.keys), EXTRA_DENSE)[:EXTRA_DENSE]
        extra = ix.docs_of_rowids(vi.keys[every_pos].astype(np.int64))
        pool = np.unique(np.concatenate([*tops, dense.docs, extra]))
        d = dense_arrays(ix, p, dense, pool)
        cos, dense_idx = d["cos"], d["dense_idx"]
        out |= {k: d[k] for k in ("vecs", "qv") if k in d}
    in_lex = [np.isin(pool, t) for t in tops]
    out.update(
        ids=ids[ix.rowids[pool]],
        lex=acc[pool].astype(np.float32),
        lex0=None if lex0 is None else lex0[pool].astype(np.float32),
        in_lex=in_lex[0],
        in_lex0=in_lex[-1],
        cos=cos,
        dense_idx=dense_idx,
    )
    return out


def cmd_feats(args) -> None:
    """The trust features again (`trust_features` changed), into the replay's tables."""
    out = Path(args.out)
    names, rows, T = load_all(out)
    e = relevance.Engine(args.store)
    for r in rows:
        p, _, words, dense = sides(e, r["query"])
        r["feats"] = trust_features(e, p, words, dense)
    (out / "tables.pkl").write_bytes(pickle.dumps((names, rows, T)))


def engine_with_ids(store: str) -> tuple[relevance.Engine, np.ndarray]:
    """The store's engine and its papers' ids by rowid (what `cache_one` reports hits by)."""
    e = relevance.Engine(store)
    ix = e.s.lex
    papers = e.s.store.get_many([int(r) for r in ix.rowids])
    ids = np.array([""] * (int(ix.rowids.max()) + 1), dtype=object)
    for r, paper in papers.items():
        ids[r] = paper.id
    return e, ids


def cmd_cache(args) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    e, ids = engine_with_ids(args.store)
    sets = query_sets(args.kind)
    for name, qs in sets.items():
        if args.only and name not in args.only:
            continue
        f = out / (name.replace("/", "_") + ".pkl")
        if f.exists():
            continue
        t0 = time.time()
        got = []
        for q in qs:
            c = cache_one(e, ids, q["query"])
            c["grades"] = q.get("grades")
            c["relevant"] = q.get("relevant")
            got.append(c)
        f.write_bytes(pickle.dumps(got))
        print(f"{name}: {len(qs)} queries, {time.time() - t0:.0f} s", flush=True)


# --- offline replay -----------------------------------------------------------------------


def quality(c: dict, top: list[str]) -> float:
    if c["grades"] is not None:
        return judge.ndcg(top, c["grades"])
    rel = set(c["relevant"])
    if len(c["relevant"]) == 1:  # known item: Recall@1
        return float(bool(top) and top[0] in rel)
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(top[:10]) if d in rel)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(10, len(rel))))
    return dcg / idcg


def order(c: dict, w: float, bonus: bool, gap: bool, cos=None, dense_idx=None, k: int = 10) -> np.ndarray:
    """Indices into the cached pool of the first k of the hybrid order (rank.relevance_order)."""
    lex = c["lex"] if bonus or c["lex0"] is None else c["lex0"]
    in_lex = c["in_lex"] if bonus or c["lex0"] is None else c["in_lex0"]
    cos = c["cos"] if cos is None else cos
    dense_idx = c["dense_idx"] if dense_idx is None else dense_idx
    if len(dense_idx) == 0:
        cand = np.flatnonzero(in_lex)
        fused = lex[cand]
    else:
        mark = in_lex.copy()
        mark[dense_idx] = True
        cand = np.flatnonzero(mark)
        floor = float(cos[dense_idx[-1]])
        fused = fuse(lex[cand], cos[cand], w, floor, gap)
    return cand[np.lexsort((cand, -fused))][:k]


def fuse(lex: np.ndarray, cos: np.ndarray, w: float, floor: float, gap: bool) -> np.ndarray:
    """rank.fuse, or without its shrinking of the dense weight by the words' lead (`gap` False:
    the weight it would shrink is grown by as much first)."""
    if not gap and len(lex) > 1 and lex.max() > 0:
        second, first = np.partition(lex / lex.max(), len(lex) - 2)[-2:]
        w = w / max(1 - float(first - second), 1e-9)
    return rank.fuse(lex, cos, w, floor)


def with_feedback(c: dict, w: float, bonus: bool, gap: bool) -> np.ndarray:
    first = order(c, w, bonus, gap)
    vecs = c["v32"][first]
    cen = vecs.mean(axis=0)
    nrm = float(np.linalg.norm(cen))
    if nrm == 0:
        return first
    qv = c["qv"] + rank.FEEDBACK_BETA * cen / nrm
    qv /= max(float(np.linalg.norm(qv)), 1e-9)
    cos = (c["v32"] @ qv).astype(np.float32)
    cos[c["novec"]] = np.nan
    dense_idx = np.argsort(-np.nan_to_num(cos, nan=-9), kind="stable")[: rank.DENSE_POOL]
    return order(c, w, bonus, gap, cos, dense_idx)


def table(c: dict) -> np.ndarray:
    """quality[w, feedback, bonus, gap] of one query."""
    t = np.zeros((len(WGRID), 2, 2, 2), dtype=np.float32)
    fb_ok = "vecs" in c
    if fb_ok:
        c["v32"] = c["vecs"].astype(np.float32)
        c["novec"] = ~c["v32"].any(axis=1)
    for i, w in enumerate(WGRID):
        for b in (0, 1):
            if b == 0 and c["lex0"] is None:
                t[i, :, 0] = t[i, :, 1]
                continue
            for g in (0, 1):
                top = order(c, float(w), bool(b), bool(g))
                t[i, 0, b, g] = quality(c, list(c["ids"][top]))
                if fb_ok and w > 0:
                    top = with_feedback(c, float(w), bool(b), bool(g))
                    t[i, 1, b, g] = quality(c, list(c["ids"][top]))
                else:
                    t[i, 1, b, g] = t[i, 0, b, g]
        if b == 0 and c["lex0"] is None:
            pass
    return t


def stratified_folds(names: np.ndarray, folds: int, seed: int) -> np.ndarray:
    """Each query's fold: every class's queries shuffled (by `seed`) and dealt round the folds,
    so each fold holds its share of every class."""
    rng = random.Random(seed)
    fold = np.zeros(len(names), dtype=int)
    for s in sorted(set(names)):
        ix = list(np.flatnonzero(names == s))
        rng.shuffle(ix)
        for j, i in enumerate(ix):
            fold[i] = j % folds
    return fold


def load_tables(out: Path, entry, name_of=lambda stem: stem) -> tuple[list[str], list[dict], np.ndarray]:
    """Every cached query's (row, table) by `entry(c)`, stacked, and its class (`name_of` the
    cache file's stem); kept in out/tables.pkl once made. bench/dense_prf.py reads its own
    caches through it too."""
    tabf = out / "tables.pkl"
    if tabf.exists():
        return pickle.loads(tabf.read_bytes())
    names, rows, tabs = [], [], []
    for f in sorted(out.glob("*.pkl")):
        if f.name.startswith("tables"):
            continue
        t0 = time.time()
        for c in pickle.loads(f.read_bytes()):
            row, t = entry(c)
            rows.append(row)
            tabs.append(t)
            names.append(name_of(f.stem))
        print(f"{f.stem}: tables in {time.time() - t0:.0f} s", flush=True)
    got = (names, rows, np.stack(tabs))
    tabf.write_bytes(pickle.dumps(got))
    return got


def load_all(out: Path) -> tuple[list[str], list[dict], np.ndarray]:
    """The fusion's tables (`table`) of `cache`'s queries; q/ and dev-*/ of one class together."""
    keys = ("query", "qclass", "statement", "quoted", "feats")
    return load_tables(out, lambda c: ({k: c[k] for k in keys}, table(c)), lambda stem: stem.split("_")[-1])


# --- the rules, each a function of a few knobs chosen on the training folds ----------------


def wi(w: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(np.asarray(w) / 0.05), 0, len(WGRID) - 1).astype(int)


class Rule:
    """`weights(idx, knobs)`: each query's dense weight and whether feedback, the statement's
    phrase bonus and the gap shrink apply; `grid`: the knob settings tried on the training
    folds (a list), or "walk" (a logistic map's coefficients, by a random walk)."""

    def __init__(self, weights, grid, feats: tuple[str, ...] = ()) -> None:
        self.weights, self.grid, self.feats = weights, grid, feats


def make_rules(rows: list[dict]) -> dict[str, Rule]:
    """Today's rules, each without one of them, each side alone, the per-class weights chosen
    again on the folds, and the per-query trust rules (docs/relevance.md)."""
    qc = [tuple(r["qclass"]) for r in rows]
    stmt = np.array([r["statement"] for r in rows])
    quoted = np.array([r["quoted"] for r in rows])
    fbcls = np.array([c in rank.FEEDBACK for c in qc])
    ens = np.array([c == ("en", "sentence") for c in qc])
    F = {k: np.array([r["feats"][k] for r in rows]) for k in (*TRUST_FEATURES, "far")}
    F |= {"sentence": np.array([c[1] == "sentence" for c in qc], float)}
    today = np.array([rank.far_weight(rank.FUSION[c], bool(far)) for c, far in zip(qc, F["far"], strict=True)])
    F |= {"mixed": np.array([c[0] == "mixed" for c in qc], float), "zh": np.array([c[0] == "zh" for c in qc], float)}

    def fixed(idx, w=None, fb=True, bonus=True, gap=True):
        ww = (today[idx] if w is None else w) * ~quoted[idx]
        return ww, (fbcls[idx] & fb & (ww > 0)).astype(int), np.where(stmt[idx], int(bonus), 1), int(gap)

    def matrix(feats):
        X = np.stack([F[k] for k in feats], 1)
        return (X - X.mean(0)) / np.maximum(X.std(0), 1e-9)

    def logistic(feats):
        X = matrix(feats)
        return Rule(lambda idx, th: fixed(idx, trust_weight(X[idx], th)), "walk", feats)

    def split(feat):  # English sentences: one weight under a threshold of the feature, one over
        f = F[feat]
        ts = np.quantile(f[ens] if ens.any() else f, QUANTS)  # a cache of Chinese classes has no English sentence
        grid = [(a, b, t) for a in WGRID[4:17:2] for b in WGRID[4:17:2] for t in ts]

        def two(idx, th):
            return np.where(ens[idx], np.where(f[idx] < th[2], th[0], th[1]), today[idx])

        return Rule(lambda idx, th: fixed(idx, two(idx, th)), grid)

    def shift(feat):  # every class: today's weight, plus d where the feature is under t
        f = F[feat]
        grid = [(d, t) for d in WGRID[:13:2] for t in np.quantile(f, QUANTS)]
        return Rule(lambda idx, th: fixed(idx, np.clip(today[idx] + th[0] * (f[idx] < th[1]), 0, 1)), grid)

    def shift_sentences(feat):  # `shift` for sentences only (questions, claims; keywords keep today's)
        f, sent = F[feat], F["sentence"] > 0
        grid = [(d, t) for d in WGRID[:13:2] for t in np.quantile(f, QUANTS)]

        def far(idx, t):
            return (f[idx] < t) & sent[idx]

        return Rule(lambda idx, th: fixed(idx, np.clip(today[idx] + th[0] * far(idx, th[1]), 0, 1)), grid)

    def unread(feat, linear=False):  # more dense weight where the dictionary reads little of the Chinese
        f = F[feat]
        if linear:  # today's weight + d × the share unread
            grid = [(d,) for d in WGRID[:17]]
            return Rule(lambda idx, th: fixed(idx, np.clip(today[idx] + th[0] * (1 - f[idx]), 0, 1)), grid)
        return Rule(lambda idx, th: fixed(idx, np.clip(today[idx] + th[0] * (f[idx] < th[1]), 0, 1)), ZH_GRID)

    return {
        "today": Rule(lambda idx, th: fixed(idx), [None]),
        "no-feedback": Rule(lambda idx, th: fixed(idx, fb=False), [None]),
        "no-stmt-bonus": Rule(lambda idx, th: fixed(idx, bonus=False), [None]),
        "no-gap-shrink": Rule(lambda idx, th: fixed(idx, gap=False), [None]),
        "lexical": Rule(lambda idx, th: fixed(idx, np.zeros(len(idx))), [None]),
        "dense": Rule(lambda idx, th: fixed(idx, np.ones(len(idx)), fb=False, gap=False), [None]),
        "per-class": Rule(lambda idx, th: fixed(idx, np.array([th[qc[i]] for i in idx])), "per-class"),
        "trust-all": logistic(("sentence", "zh", "mixed", *TRUST_FEATURES[:-1])),
        "trust-few": logistic(("sentence", "zh", "mixed", "lexcos", "cover")),
        "split-spec": split("spec"),
        "split-lexcos": split("lexcos"),
        "shift-cover": shift("cover"),
        "shift-lexcos": shift("lexcos"),
        "shift-lexcos-sentences": shift_sentences("lexcos"),
        "shift-zhread": unread("zhread"),
        "shift-zhword": unread("zhword"),
        "linear-zhread": unread("zhread", linear=True),
    }


QUANTS = np.linspace(0.05, 0.95, 10)
ZH_GRID = [(d, t) for d in WGRID[:13:2] for t in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)]


def objective(T, names, idx, rule, th) -> float:
    """Mean over classes of the class's mean quality: each class counts the same."""
    w, fb, b, g = rule.weights(idx, th)
    s = T[idx, wi(w), fb, b, g]
    nm = names[idx]
    return float(np.mean([s[nm == k].mean() for k in np.unique(nm)]))


def fit(T, names, idx, rule, rng) -> object:
    if rule.grid == "per-class":  # the classes share no query: each its own best weight
        best = {c: rank.FUSION[c] for c in rank.FUSION}
        for c in best:
            best[c] = max(WGRID[:17], key=lambda w: objective(T, names, idx, rule, best | {c: float(w)}))
        return best
    if rule.grid != "walk":
        return max(rule.grid, key=lambda th: objective(T, names, idx, rule, th))
    best_th, best = None, -1.0
    for _ in range(3):
        theta = np.zeros(len(rule.feats) + 1)
        theta[0] = -1.0
        cur = objective(T, names, idx, rule, theta)
        for step in range(500):
            cand = theta + rng.normal(0, 0.7 * 0.993**step, len(theta))
            v = objective(T, names, idx, rule, cand)
            if v >= cur:
                theta, cur = cand, v
        if cur > best:
            best_th, best = theta, cur
    return best_th


def cmd_cv(args) -> None:
    out = Path(args.out)
    names, rows, T = load_all(out)
    names_a = np.array(names)
    rules = {k: v for k, v in make_rules(rows).items() if not args.rules or k in args.rules}
    sets = sorted(set(names))
    res: dict[str, dict[str, list]] = {r: {s: [] for s in sets} for r in rules}  # per-fold means
    per_q: dict[str, np.ndarray] = {r: np.zeros((args.seeds, len(rows))) for r in rules}
    chosen: dict[str, list] = {r: [] for r in rules}
    for seed in range(args.seeds):
        fold = stratified_folds(names_a, args.folds, seed)
        for k in range(args.folds):
            train, test = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
            for rname, rule in rules.items():
                th = fit(T, names_a, train, rule, np.random.default_rng(seed * 100 + k))
                chosen[rname].append(th)
                w, fb, b, g = rule.weights(test, th)
                sc = T[test, wi(w), fb, b, g]
                per_q[rname][seed, test] = sc
                for s in sets:
                    m = names_a[test] == s
                    if m.any():
                        res[rname][s].append(float(sc[m].mean()))
        print(f"seed {seed} done", flush=True)
    shown = list(rules)
    print("| set | n | " + " | ".join(shown) + " |")
    print("| --- | --- |" + " --- |" * len(shown))
    report = {}
    for s in sets:
        m = names_a == s
        cells = []
        for r in shown:
            mean = float(per_q[r][:, m].mean())
            sd = float(np.std(res[r][s]))
            cells.append(f"{mean:.3f} ± {sd:.3f}")
            report.setdefault(r, {})[s] = (mean, sd)
        print(f"| {s} | {int(m.sum())} | " + " | ".join(cells) + " |")
    if "today" in per_q:
        print("\nheld-out difference from today's rules, mean over queries (paired standard error):")
        print("| set | " + " | ".join(shown) + " |")
        for s in sets:
            m = names_a == s
            d = {r: per_q[r][:, m].mean(0) - per_q["today"][:, m].mean(0) for r in shown}
            cells = [f"{v.mean():+.3f} ({v.std() / np.sqrt(len(v)):.3f})" for v in d.values()]
            print(f"| {s} | " + " | ".join(cells) + " |")
    (out / "cv.json").write_text(json.dumps({"report": report, "chosen": {r: repr(v) for r, v in chosen.items()}}))
    for r in shown:
        if rules[r].grid == "walk":
            print(r, rules[r].feats, "mean coefficients:", np.round(np.mean(chosen[r], axis=0), 2))
        elif rules[r].grid != [None]:
            print(r, "chosen:", chosen[r][:5])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=["cache", "feats", "cv"])
    ap.add_argument("--store", default=str(ROOT / "bench" / "out" / "s63k"))
    ap.add_argument("--kind", default="63k", choices=["63k", "21k"], help="the store's corpus")
    ap.add_argument("--out", default="/tmp/h11")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--rules", nargs="*")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    {"cache": cmd_cache, "feats": cmd_feats, "cv": cmd_cv}[args.cmd](args)


if __name__ == "__main__":
    main()
