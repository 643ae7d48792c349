"""Recommendations for a tag, measured: build tags from a known topic, hold out the rest of the
topic, and see how much of it each recommender ranks first.

Topics: papers whose categories include cs.RO (1,734 of the 63k shared corpus) and papers with
"speculative decoding" in the title (108). For each topic and tag size, TRIALS random tags are
drawn; each recommender ranks every paper outside the tag, and the held-out part of the topic
is the relevant set: precision@20, recall@100 (held-out papers in the first 100 / all held-out
papers; with 1,500 held-out cs.RO papers it can be at most 0.065) and the time to train and
score once.

Recommenders: random; nearest centroid (cosine to the mean embedding of the tag, and to the
mean tf-idf vector); scikit-learn's LinearSVC (arxiv-sanity-lite's model, when scikit-learn is
installed: `pip install -e '.[bench]'`) on the same features; and paperdex.discover.recommend's SVM on
dense, tf-idf and both, the last also fused with the centroid; and the default, the model
chosen per tag on the tag's own papers (recommend.fit: the SVM on dense+tf-idf or the tf-idf
centroid), its picks per draw printed. `--grid` adds the
levers tried to make the SVM beat the tf-idf centroid on the phrase-defined topic too
(negatives, class weights, C, a prior toward the centroid, shared words only, fusions,
reranking); `--topics` runs some topics only. `--calibrate NPZ` measures the daily page's "for
TAG" chip instead (docs/recommendations.md: 18 topics, tags of 1, 3, 10 and 30 papers, every
paper on its day's page; the scores are kept in NPZ for a second run).

    python bench/recommend.py [--store bench/out/full] [--trials 5] [--markdown] [--grid]
    python bench/recommend.py --store /tmp/recbench/full --trials 3 --calibrate /tmp/cal.npz

The store is opened read-only. A store whose lexical snapshot is of an older format is indexed
in memory first (about a minute and a half for 63k papers).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from paperdex.discover import recommend as R  # noqa: E402
from paperdex.store import Store  # noqa: E402


def topics(store: Store, c: R.Corpus) -> dict[str, np.ndarray]:
    ro = c.ix.category_docs("cs.RO")
    rows = store.conn.execute("SELECT rowid FROM papers WHERE lower(title) LIKE '%speculative decoding%'").fetchall()
    sd = c.docs([r[0] for r in rows])
    return {"cs.RO": np.sort(ro).astype(np.int64), "speculative decoding": np.sort(sd).astype(np.int64)}


def broad_topics(store: Store, c: R.Corpus) -> dict[str, np.ndarray]:
    """What a reader would also call on topic: for speculative decoding, any paper that says
    "speculative" in its title or abstract (speculative sampling, speculative decoders, ...)."""
    rows = store.conn.execute(
        "SELECT rowid FROM papers WHERE lower(title) LIKE '%speculative%' OR lower(abstract) LIKE '%speculative%'"
    ).fetchall()
    return {"speculative decoding": np.sort(c.docs([r[0] for r in rows])).astype(np.int64)}


def metrics(s: np.ndarray, tag: np.ndarray, held: np.ndarray, broad: np.ndarray | None) -> tuple[float, float, float]:
    """precision@20 and recall@100 against the held-out part; precision@20 against the held-out
    part plus the broad topic."""
    s = s.astype(np.float64, copy=True)
    s[tag] = -np.inf
    top = np.argpartition(-s, 100)[:100]
    top = top[np.lexsort((top, -s[top]))]
    rel = np.zeros(len(s), dtype=bool)
    rel[held] = True
    wide = rel.copy()
    if broad is not None:
        wide[broad] = True
    return float(rel[top[:20]].mean()), float(rel[top].sum() / len(held)), float(wide[top[:20]].mean())


def sklearn_svm(c: R.Corpus, features: str, Cval: float):
    from scipy import sparse
    from sklearn.svm import LinearSVC

    def fit_score(tag: np.ndarray, seed: str) -> np.ndarray:
        neg = R._negatives(c, seed, tag, R.NEGATIVES)
        idx = np.concatenate([tag, neg])
        y = np.r_[np.ones(len(tag)), -np.ones(len(neg))]
        parts = []
        if features in ("tfidf", "both"):
            A = c.rows(idx, np.arange(c.n_terms))
            parts.append(sparse.csr_matrix((A.val, A.idx, A.ptr), shape=(len(idx), A.ncols)))
        if features in ("dense", "both"):
            parts.append(sparse.csr_matrix(c.D[idx]))
        Z = sparse.hstack(parts).tocsr()
        clf = LinearSVC(class_weight="balanced", C=Cval, max_iter=10000, tol=1e-6).fit(Z, y)
        w = clf.coef_.ravel()
        s = np.full(c.n, clf.intercept_[0], dtype=np.float32)
        V = c.n_terms if features in ("tfidf", "both") else 0
        if V:
            s += c.score_terms(np.arange(V), w[:V].astype(np.float32))
        if features in ("dense", "both"):
            s += c.D @ w[V:].astype(np.float32)
        return s

    return fit_score


@dataclass(frozen=True)
class Fit:
    """How the SVM is fitted: paperdex's defaults (recommend.C, recommend.NEGATIVES, balanced
    class weights, dense and tf-idf features), and the levers --grid tried against the tf-idf
    centroid (none won overall, so paperdex has none of them)."""

    C: float = R.C  # regularisation
    negatives: int = R.NEGATIVES  # random papers taken as negatives
    dense: bool = True  # the embeddings as features
    tfidf: bool = True  # the tf-idf vectors as features
    tfidf_scale: float = 1.0  # length of a paper's tf-idf vector beside its unit-length embedding
    balanced: bool = True  # class weights balanced (else 1 per paper)
    near_share: float = 0.0  # share of the corpus nearest the tag's centroid never sampled as negatives
    prior: float = 0.0  # the weights are pulled toward this multiple of the positives' mean features
    min_pos_df: int = 1  # words weighed: those in at least this many of the tag's papers


MIN_POS_DF_TAG = 5  # Fit.min_pos_df applies to tags of at least this many papers


class LeverSvm(R._Svm):
    """recommend's SVM problem with the levers: C, the features, their scale, the class
    weights and a prior `w0` the weights are pulled toward."""

    def __init__(self, c: R.Corpus, pos: np.ndarray, neg: np.ndarray, terms: np.ndarray, opts: Fit) -> None:
        super().__init__(c, pos, neg, 0, terms)
        self.C, self.alpha = opts.C, opts.tfidf_scale
        if not opts.balanced:
            self.cw = np.ones(len(pos) + len(neg))
        if self.Zs is not None and self.alpha != 1.0:
            self.Zs = self.Zs._replace(val=self.Zs.val * self.alpha)
            self.ZsT = R.transpose(self.Zs)
        if not opts.dense:
            self.D = self.Zd = None
            self.dd = 0
        dk, dd = self.dk, self.dd
        self.w0 = np.zeros(dk + dd)
        if opts.prior:
            if self.P is not None:
                self.w0[:dk] = opts.prior * self.alpha * R.column_sums(self.P) / len(pos)
            if self.Zd is not None:
                self.w0[dk:] = opts.prior * self.Zd[: len(pos)].mean(axis=0)

    def objective(self, wb: np.ndarray) -> tuple[float, np.ndarray]:
        dk, dd, C_, y, cw, w0 = self.dk, self.dd, self.C, self.y, self.cw, self.w0
        ws, wd, b = wb[:dk], wb[dk : dk + dd], wb[-1]
        s = np.full(len(y), b)
        if self.Zs is not None:
            s += R.matvec(self.Zs, ws)
        if self.Zd is not None:
            s += self.Zd @ wd
        h = np.maximum(0.0, 1.0 - y * s)
        g = -2.0 * C_ * cw * h * y
        grad = np.empty_like(wb)
        grad[:dk] = ws - w0[:dk] + (R.matvec(self.ZsT, g) if self.ZsT is not None else 0.0)
        grad[dk : dk + dd] = wd - w0[dk:] + (self.Zd.T @ g if self.Zd is not None else 0.0)
        grad[-1] = g.sum()
        dw = wb[:-1] - w0
        return 0.5 * float(dw @ dw) + C_ * float(np.sum(cw * h * h)), grad


def train(c: R.Corpus, pos: np.ndarray, opts: Fit, seed: str) -> R.Model:
    """recommend.train (no dismissals, no warm start) with the levers of `opts`."""
    from threadpoolctl import threadpool_limits

    pos = np.unique(np.asarray(pos, dtype=np.int64))
    exclude = pos
    if opts.near_share > 0 and c.D is not None:  # the papers nearest the tag are likely on its topic
        cs = c.D @ np.asarray(c.D[pos], dtype=np.float32).mean(axis=0)
        kk = int(opts.near_share * c.n)
        if kk > 0:
            exclude = np.union1d(exclude, np.argpartition(-cs, kk - 1)[:kk])
    neg = R._negatives(c, seed, exclude, opts.negatives).astype(np.int64)
    terms = R._terms_of(c, pos) if opts.tfidf else np.zeros(0, dtype=np.int64)
    if opts.tfidf and opts.min_pos_df > 1 and len(pos) >= MIN_POS_DF_TAG:  # a word of one saved paper
        df = np.bincount(c.terms_in(pos), minlength=c.n_terms)[terms]  # lets the fit single it out
        terms = terms[df >= opts.min_pos_df]
    svm = LeverSvm(c, pos, neg, terms, opts)
    with threadpool_limits(limits=1, user_api="blas"):
        x = R.lbfgs(svm.objective, np.r_[svm.w0, 0.0])
    dk, dd, P = svm.dk, svm.dd, svm.P
    return R.Model(
        terms=terms,
        w_terms=(x[:dk] * svm.alpha).astype(np.float32),  # weights of the unscaled tf-idf
        w_dense=x[dk : dk + dd].astype(np.float32) if dd else None,
        bias=float(x[-1]),
        c_terms=(R.column_sums(P) / len(pos)).astype(np.float32) if P is not None else np.zeros(0, np.float32),
        pos_df=np.bincount(P.idx, minlength=dk).astype(np.int32) if P is not None else np.zeros(0, np.int32),
        positives=pos,
        negatives=len(neg),
    )


def with_centroids(c: R.Corpus, m: R.Model, weight: float) -> np.ndarray:
    """The SVM's z-score plus `weight` x the mean z-score of its two centroids."""
    out = R.scores(c, m)
    # the tag's dense centroid (paperdex's Model keeps none: no user can choose it)
    parts = [] if not weight or c.D is None else [R._z(c.D @ np.asarray(c.D[m.positives], np.float32).mean(axis=0))]
    if weight and len(m.terms):
        parts.append(R._z(c.score_terms(m.terms, m.c_terms)))
    if parts:
        out += weight * sum(parts) / len(parts)
    return out


def paperdex_svm(
    c: R.Corpus,
    dense: bool,
    tfidf: bool,
    centroid_weight: float = 0.0,
    **fit,
):
    opts = Fit(dense=dense, tfidf=tfidf, **fit)  # C, tfidf_scale and the levers of --grid

    def fit_score(tag: np.ndarray, seed: str) -> np.ndarray:
        return with_centroids(c, train(c, tag, opts, seed), centroid_weight)

    return fit_score


def svm_plus_tfidf_centroid(c: R.Corpus, w: float):
    """The SVM's z-score plus w x the tf-idf centroid's (the centroid that reproduces a phrase)."""

    def fit_score(tag: np.ndarray, seed: str) -> np.ndarray:
        m = R.train(c, tag, None, seed=seed)
        s = R.scores(c, m)
        return s + w * R._z(c.score_terms(m.terms, m.c_terms))

    return fit_score


def svm_reranked(c: R.Corpus, depth: int, w: float):
    """The SVM's first `depth` papers reordered by SVM z + w x tf-idf centroid z (within them)."""

    def fit_score(tag: np.ndarray, seed: str) -> np.ndarray:
        m = R.train(c, tag, None, seed=seed)
        s = R.scores(c, m).astype(np.float64)
        s[tag] = -np.inf
        top = np.argpartition(-s, depth)[:depth]
        cen = c.score_terms(m.terms, m.c_terms)[top]
        out = np.full(c.n, -1e9)
        out[top] = 1e6 + R._z(s[top]) + w * R._z(cen)
        return out

    return fit_score


def chosen_per_tag(c: R.Corpus, picks: dict[str, list[str]]):
    """paperdex.discover.recommend.fit: the model chosen on the tag's own papers (recorded in `picks`)."""

    def fit_score(tag: np.ndarray, seed: str) -> np.ndarray:
        m = R.fit(c, tag, None, seed=seed)
        picks.setdefault(seed.rsplit(":", 1)[0], []).append(m.kind)
        return R.scores(c, m)

    return fit_score


def centroid_dense(c: R.Corpus):
    def fit_score(tag, seed):
        return c.D @ c.D[tag].mean(axis=0)

    return fit_score


def centroid_tfidf(c: R.Corpus):
    def fit_score(tag, seed):
        terms = R._terms_of(c, tag)
        w = R.column_sums(c.rows(tag, terms)) / len(tag)
        return c.score_terms(terms, w)

    return fit_score


def centroid_both(c: R.Corpus):
    def fit_score(tag, seed):
        terms = R._terms_of(c, tag)
        w = R.column_sums(c.rows(tag, terms)) / len(tag)
        return R._z(c.D @ c.D[tag].mean(axis=0)) + R._z(c.score_terms(terms, w))

    return fit_score


def random_scores(c: R.Corpus):
    def fit_score(tag, seed):
        return np.random.default_rng(abs(hash(seed)) % 2**32).random(c.n)

    return fit_score


def related_bench(store: Store, n: int = 40) -> None:
    """Paste an abstract: for papers of a topic, paste one's abstract and count how many of the
    first 10 results (the paper itself excluded) are on the topic; recommend.related against the
    plain search box (the text as a query, cut at 1,000 characters)."""
    from paperdex.search import Searcher

    s = Searcher(store)
    topics_sql = {
        "speculative decoding (title)": "lower(title) LIKE '%speculative decoding%'",
        "cs.RO": "rowid IN (SELECT paper FROM paper_categories WHERE category = 'cs.RO')",
    }
    print(
        "\n| topic | pasted abstracts | related(): topic papers in top 10 | search box: topic papers in top 10 "
        "| related() ms (median) |"
    )
    print("| --- | --- | --- | --- | --- |")
    for name, where in topics_sql.items():
        ids = {r[0] for r in store.conn.execute(f"SELECT id FROM papers WHERE {where}")}
        sample = sorted(ids)[:: max(1, len(ids) // n)][:n]
        a, b, ms = [], [], []
        for pid in sample:
            p = store.get(pid)
            t = time.perf_counter()
            rel = R.related(s, p.abstract, 11)
            ms.append((time.perf_counter() - t) * 1000)
            got = [h.paper.id for h in rel.hits if h.paper.id != pid][:10]
            a.append(sum(g in ids for g in got))
            res = s.search(p.abstract[:1000], per_page=11, facets=False, literal=True)
            got = [h.paper.id for h in res.hits if h.paper.id != pid][:10]
            b.append(sum(g in ids for g in got))
        print(f"| {name} | {len(sample)} | {np.mean(a):.2f} | {np.mean(b):.2f} | {np.median(ms):.0f} |", flush=True)


# --calibrate: the "for TAG" chip (issue 34). Topics a tag is drawn from (papers with the phrase in
# the title, or of the category) and what counts as on topic for it (the phrase in the title or
# abstract, or the category); tags of CAL_SIZES papers, every other paper scored as the page does
CAL_PHRASES = (
    "speculative decoding", "graph neural network", "federated learning", "knowledge distillation",
    "mixture of experts", "point cloud", "sparse autoencoder", "neural radiance", "state space model",
    "kv cache", "jailbreak", "retrieval-augmented",
)  # fmt: skip
CAL_CATEGORIES = ("cs.RO", "cs.SD", "cs.GT", "cs.CR", "cs.IR", "cs.HC")
CAL_SIZES = (1, 3, 10, 30)


def cal_topics(store: Store, c: R.Corpus) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """topic -> (papers a tag is drawn from, papers on topic), as docs."""
    out = {}
    for ph in CAL_PHRASES:
        like = f"%{ph}%"
        q = "SELECT rowid FROM papers WHERE lower(title) LIKE ?"
        tag = c.docs([r[0] for r in store.conn.execute(q, (like,))])
        rel = c.docs([r[0] for r in store.conn.execute(q + " OR lower(abstract) LIKE ?", (like, like))])
        out[ph] = (np.sort(tag).astype(np.int64), np.sort(rel).astype(np.int64))
    for cat in CAL_CATEGORIES:
        d = np.sort(c.ix.category_docs(cat)).astype(np.int64)
        out[cat] = (d, d)
    return out


def cal_scores(store: Store, c: R.Corpus, trials: int, path: Path) -> dict[str, np.ndarray]:
    """Fit the page's model (recommend.fit: chosen per tag) for `trials` random tags of each size
    per topic and keep every paper's z-score (recommend.scores); cached in `path` (.npz)."""
    if path.exists():
        return dict(np.load(path))
    z, rel, size, topic = [], [], [], []
    for ti, (name, (pool, on)) in enumerate(cal_topics(store, c).items()):
        rng = np.random.default_rng(ti)
        for n in CAL_SIZES:
            for i in range(trials):
                tag = np.sort(rng.choice(pool, n, replace=False))
                t = time.perf_counter()
                s = R.scores(c, R.fit(c, tag, None, seed=f"cal:{name}:{n}:{i}"))
                s = s.astype(np.float32)
                s[tag] = np.nan  # the tag's own papers are not shown a chip
                z.append(s)
                rel.append(np.isin(np.arange(c.n), on))
                size.append(n)
                topic.append(ti)
                print(f"# {name} {n} #{i}: {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
    out = {"z": np.stack(z), "rel": np.stack(rel), "size": np.array(size), "topic": np.array(topic)}
    np.savez(path, **out)
    return out


def logistic(X: np.ndarray, y: np.ndarray, iters: int = 30) -> np.ndarray:
    """Weights of a logistic regression of y on the columns of X (Newton's method)."""
    w = np.zeros(X.shape[1])
    for _ in range(iters):
        p = 1 / (1 + np.exp(-X @ w))
        H = X.T @ (X * (p * (1 - p))[:, None]) + 1e-6 * np.eye(len(w))
        w += np.linalg.solve(H, X.T @ (y - p) - 1e-6 * w)
    return w


def cal_row(hit: np.ndarray, on: np.ndarray, topic: np.ndarray, relevant: int, tags: int, days: int) -> str:
    """precision (pooled, and the mean over topics), recall, chips a day per tag."""
    per = [on[hit & (topic == t)].mean() for t in np.unique(topic) if (hit & (topic == t)).any()]
    prec = on[hit].mean() if hit.any() else float("nan")
    macro = np.mean(per) if per else float("nan")
    return f"{prec:.2f} | {macro:.2f} | {on[hit].sum() / relevant:.3f} | {hit.sum() / tags / days:.2f}"


def calibrate(store: Store, c: R.Corpus, got: dict[str, np.ndarray]) -> None:
    """The "for TAG" chip, measured: over the corpus's days (all of them: every paper is on its
    day's page), how many of the chips a tag's model gives are on the tag's topic (precision),
    how much of the topic they find (recall), and how many cards a day carry one; first by the
    z-score (recommend.scores), then by the probability recommend.on_topic makes of it, its
    weights fitted on the other topics (leave one topic out), never on the topic measured."""
    z, rel, size, topic = got["z"], got["rel"], got["size"], got["topic"]
    days = store.conn.execute("SELECT count(DISTINCT date) FROM papers").fetchone()[0]
    print(f"# {len(z)} tags, {days} days, {c.n / days:.0f} papers a day on average")
    relevant = {n: int((rel[size == n] & ~np.isnan(z[size == n])).sum()) for n in CAL_SIZES}
    keep = np.nan_to_num(z, nan=-np.inf) >= 2  # below z 2 no rule gives a chip: fitted on the rest
    Z, Y = z[keep].astype(np.float64), rel[keep].astype(np.float64)
    N, T = np.broadcast_to(size[:, None], z.shape)[keep], np.broadcast_to(topic[:, None], z.shape)[keep]
    print("\n| tag papers | rule | precision | precision, mean over topics | recall | chips a day |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in CAL_SIZES:
        for th in (3, 4, 5, 6, 7):
            s = N == n
            print(f"| {n} | z ≥ {th} | {cal_row(Z[s] >= th, Y[s], T[s], relevant[n], (size == n).sum(), days)} |")
    with_n = logistic(np.c_[np.ones_like(Z), Z, np.log(N)], Y)
    print(f"\n# logistic on z and ln(tag papers): {np.round(with_n, 3).tolist()}")
    P = np.zeros(len(Z))
    big = N >= R.MIN_CHIP_PAPERS  # fitted on the tags that may show chips
    for t in np.unique(T):
        w = logistic(np.c_[np.ones_like(Z), Z][big & (T != t)], Y[big & (T != t)])
        P[T == t] = 1 / (1 + np.exp(-(w[0] + w[1] * Z[T == t])))
    w = logistic(np.c_[np.ones_like(Z), Z][big], Y[big])
    print(f"# logistic on z, tags of {R.MIN_CHIP_PAPERS}+ papers of all topics: a = {w[0]:.3f}, b = {w[1]:.3f}")
    print("\n| tag papers | rule (left-out topic) | precision | precision, mean over topics | recall | chips a day |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in CAL_SIZES:
        for th in (0.5, 0.7, 0.8, 0.9):
            s = N == n
            print(f"| {n} | p ≥ {th} | {cal_row(P[s] >= th, Y[s], T[s], relevant[n], (size == n).sum(), days)} |")
    s = R.on_topic(Z) >= R.CHIP_P
    print(f"\n# the shipped rule, p >= {R.CHIP_P} (z >= {R.chip_z():.2f}):")
    for n in CAL_SIZES:
        print(f"| {n} | {cal_row(s & (N == n), Y, T, relevant[n], (size == n).sum(), days)} |")
    for_you_days(store, c, z, rel, size)


def for_you_days(store: Store, c: R.Corpus, z: np.ndarray, rel: np.ndarray, size: np.ndarray) -> None:
    """For you, as a day's first papers: each tag's model orders every day's papers (the tag's
    own left out); how many of the first 1 and 5 are on the topic (and at best: the day's papers
    on the topic, up to 1 and 5), and how many carry a chip."""
    date = dict(store.conn.execute("SELECT rowid, date FROM papers").fetchall())
    _, day = np.unique([str(date.get(int(r))) for r in c.rowids], return_inverse=True)
    head = "first paper on topic (at best) | first 5 on topic (at best) | first 5 with a chip | of those on topic"
    print(f"\n| tag papers | {head} |")
    print("| --- | --- | --- | --- | --- |")
    for n in CAL_SIZES:
        top1, top5, chip5, right, best1, best5 = [], [], [], [], [], []
        for i in np.flatnonzero(size == n):
            zi = np.nan_to_num(z[i], nan=-np.inf)
            order = np.lexsort((-zi, day))  # by day, best first within it
            at = np.arange(len(order)) - np.searchsorted(day[order], day[order])  # place within the day
            first, five = order[at == 0], order[(at < 5) & np.isfinite(zi[order])]
            top1.append(rel[i][first].mean())
            top5.append(rel[i][five].mean())
            k = np.bincount(day, weights=rel[i] & np.isfinite(zi), minlength=len(first))
            best1.append(np.mean(k > 0))
            best5.append(np.minimum(k, 5).sum() / np.minimum(np.bincount(day), 5).sum())
            chips = five[R.on_topic(zi[five]) >= R.CHIP_P]
            chip5.append(len(chips) / len(five))
            right += rel[i][chips].tolist()
        print(
            f"| {n} | {np.mean(top1):.2f} ({np.mean(best1):.2f}) | {np.mean(top5):.2f} ({np.mean(best5):.2f}) | "
            f"{np.mean(chip5):.3f} | {np.mean(right):.2f} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", default=str(ROOT / "bench/out/full"))
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--only", help="comma-separated recommender names")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--related", action="store_true", help="only the paste-an-abstract comparison")
    ap.add_argument("--variants", action="store_true", help="also other tf-idf scales and C values")
    ap.add_argument(
        "--grid",
        action="store_true",
        help="also the levers tried against the centroid (C, class weights, negatives, prior, fusion)",
    )
    ap.add_argument("--topics", help="comma-separated topics to run (default: all)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--calibrate", metavar="NPZ", help="the 'for TAG' chip's calibration (scores cached in NPZ)")
    a = ap.parse_args()

    store = Store(a.store, readonly=True)
    t = time.perf_counter()
    c = R.corpus(store)
    print(
        f"# {c.n} papers, {c.n_terms} terms, dense {None if c.D is None else c.D.shape}; "
        f"features in {time.perf_counter() - t:.1f} s",
        file=sys.stderr,
    )
    if a.related:
        related_bench(store)
        return
    if a.calibrate:
        calibrate(store, c, cal_scores(store, c, a.trials, Path(a.calibrate)))
        return
    T = topics(store, c)
    B = broad_topics(store, c)
    recs = {
        "random": random_scores(c),
        "centroid (dense)": centroid_dense(c),
        "centroid (tf-idf)": centroid_tfidf(c),
    }
    try:
        import sklearn  # noqa: F401

        recs["LinearSVC tf-idf (sklearn)"] = sklearn_svm(c, "tfidf", 1.0)
        recs["LinearSVC dense+tf-idf (sklearn)"] = sklearn_svm(c, "both", 0.1)
    except ImportError:
        print("# scikit-learn not installed: LinearSVC rows skipped", file=sys.stderr)
    recs["SVM dense"] = paperdex_svm(c, True, False)
    recs["SVM tf-idf"] = paperdex_svm(c, False, True)
    recs["SVM dense+tf-idf"] = paperdex_svm(c, True, True)
    picks: dict[str, list[str]] = {}
    recs["chosen per tag (default)"] = chosen_per_tag(c, picks)
    recs["centroid (dense+tf-idf)"] = centroid_both(c)
    recs["SVM dense+tf-idf + centroid"] = paperdex_svm(c, True, True, 1.0)
    if a.variants:
        for scale in (1.5, 2.0):
            recs[f"SVM dense+tf-idf x{scale:g}"] = paperdex_svm(c, True, True, 0.0, tfidf_scale=scale)
        for Cval in (0.1, 1.0):
            recs[f"SVM dense+tf-idf C={Cval:g}"] = paperdex_svm(c, True, True, 0.0, C=Cval)
    if a.grid:
        # the levers tried against the tf-idf centroid on the phrase-defined topic, one at a time
        # (docs/recommendations.md, "Trying to beat the centroid on every topic")
        for near in (0.005, 0.01, 0.02):
            recs[f"SVM near-excluded {near:g}"] = paperdex_svm(c, True, True, near_share=near)
        for lam in (0.5, 1.0, 2.0, 4.0, 8.0, 16.0):
            recs[f"SVM prior {lam:g}"] = paperdex_svm(c, True, True, prior=lam)
        recs["SVM tf-idf x2 prior 4"] = paperdex_svm(c, True, True, tfidf_scale=2.0, prior=4.0)
        for Cval in (0.03, 0.1):
            recs[f"SVM C={Cval:g}"] = paperdex_svm(c, True, True, C=Cval)
        recs["SVM unbalanced"] = paperdex_svm(c, True, True, balanced=False)
        recs["SVM 10k negatives"] = paperdex_svm(c, True, True, negatives=10000)
        for k in (2, 3):
            recs[f"SVM words of {k}+ saved"] = paperdex_svm(c, True, True, min_pos_df=k)
        for w in (0.25, 0.5):
            recs[f"SVM + centroid x{w:g}"] = paperdex_svm(c, True, True, w)
        for w in (0.5, 1.0, 2.0):
            recs[f"SVM + tf-idf centroid x{w:g}"] = svm_plus_tfidf_centroid(c, w)
        for w in (0.5, 1.0):
            recs[f"SVM top 100 reranked + tf-idf centroid x{w:g}"] = svm_reranked(c, 100, w)
    if a.only:
        keep = [x.strip() for x in a.only.split(",")]
        recs = {k: v for k, v in recs.items() if any(x in k for x in keep)}

    settings = [("cs.RO", 20), ("cs.RO", 200), ("speculative decoding", 20), ("speculative decoding", 50)]
    if a.topics:
        settings = [x for x in settings if x[0] in a.topics.split(",")]
    out = []
    for topic, size in settings:
        docs = T[topic]
        rng = np.random.default_rng(7)
        trials = []
        for _ in range(a.trials):
            perm = rng.permutation(docs)
            trials.append((np.sort(perm[:size]), perm[size:]))
        for name, fit_score in recs.items():
            P, Rc, PB, secs = [], [], [], []
            for i, (tag, held) in enumerate(trials):
                t = time.perf_counter()
                s = fit_score(tag, f"{topic}:{size}:{i}")
                secs.append(time.perf_counter() - t)
                p, r, pb = metrics(s, tag, held, B.get(topic))
                P.append(p)
                Rc.append(r)
                PB.append(pb)
            row = {
                "topic": topic,
                "tag": size,
                "held_out": len(docs) - size,
                "recommender": name,
                "p@20": float(np.mean(P)),
                "p@20_sd": float(np.std(P)),
                "r@100": float(np.mean(Rc)),
                "p@20_broad": float(np.mean(PB)) if topic in B else None,
                "seconds": float(np.median(secs)),
            }
            out.append(row)
            if name.startswith("chosen per tag"):
                row["picks"] = picks.pop(f"{topic}:{size}", [])
            print(
                f"{topic:22s} {size:4d} {name:34s} P@20 {row['p@20']:.3f} ±{row['p@20_sd']:.3f}  "
                f"R@100 {row['r@100']:.3f}  P@20 broad {np.mean(PB):.3f}  {row['seconds'] * 1000:6.0f} ms"
                + (f"  picks {row['picks']}" if "picks" in row else ""),
                flush=True,
            )
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))
    if a.markdown:
        print("\n| topic | tag / held out | recommender | P@20 | R@100 | P@20 broad | train + score |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for r in out:
            broad = "" if r["p@20_broad"] is None else f"{r['p@20_broad']:.3f}"
            print(
                f"| {r['topic']} | {r['tag']} / {r['held_out']} | {r['recommender']} | {r['p@20']:.3f} | "
                f"{r['r@100']:.3f} | {broad} | {r['seconds'] * 1000:.0f} ms |"
            )


if __name__ == "__main__":
    main()
