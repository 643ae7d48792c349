"""Switching a store's model: `embed --model OTHER` re-embeds every paper while the old
vectors keep answering searches, and the new ones take over in one transaction."""

import json

from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.index import embed
from paperdex.index.vectors import VectorIndex, unit
from paperdex.paper import Paper
from paperdex.search import Searcher
from paperdex.store import Store
from tests.conftest import PAPERS

OLD, NEW = "all-MiniLM-L6-v2", "multilingual-e5-small"


def _fill(store, n=20):
    recs = [json.loads(line) for line in PAPERS.read_text().splitlines()[:n]]
    store.upsert([Paper(id=r["id"], title=r["title"], abstract=r["abstract"][:300]) for r in recs])
    assert embed.embed_store(store, OLD) == n
    return recs


def test_a_switch_serves_the_old_vectors_until_the_new_ones_are_all_there(empty_store):
    recs = _fill(empty_store)
    target = recs[3]
    assert embed.embed_store(empty_store, NEW, batch_size=4, limit=8) == 8
    # half-way: the store, its published vectors and its searches are still the old model's
    assert empty_store.model == OLD and empty_store.vector_count() == 20
    assert embed.pending_count(empty_store, NEW) == 12
    reader = Store(empty_store.data_dir, readonly=True)
    assert VectorIndex.current(reader).model == OLD
    hits = Searcher(reader).search(target["title"], mode="dense", per_page=3, literal=True).hits
    assert hits[0].paper.id == target["id"]
    # a paper edited mid-switch, after its new vector was made, is embedded again before the swap
    p0 = empty_store.get(recs[0]["id"])
    p0.abstract = "About ducks, rewritten while the switch ran."
    empty_store.upsert([p0])
    assert embed.embed_store(empty_store) == 13  # no --model: the switch goes on (12 + the edited one)
    assert empty_store.model == NEW and empty_store.vector_count() == 20
    assert embed.pending_count(empty_store) == 0 and empty_store.get_state("model_next") is None
    assert VectorIndex.current(reader).model == NEW
    hits = Searcher(reader).search(target["title"], mode="dense", per_page=3, literal=True).hits
    assert hits[0].paper.id == target["id"]
    row = empty_store.conn.execute(
        "SELECT v.vec FROM vectors v JOIN papers p ON p.rowid = v.paper WHERE p.id = ?", (recs[0]["id"],)
    ).fetchone()
    want = embed.get_embedder(NEW).embed_docs([embed.doc_text(p0.title, p0.abstract)])[0]
    assert float(unit(empty_store.vectors_from_blobs([row[0]])[0]) @ want) > 0.99
    reader.close()


def test_the_cli_says_which_model_searches_use_during_a_switch(empty_store):
    _fill(empty_store, 6)
    d = str(empty_store.data_dir)
    r = CliRunner().invoke(cli, ["--data-dir", d, "embed", "--model", NEW, "--limit", "2", "-q"])
    assert r.exit_code == 0, r.output
    assert f"2/6 have its vectors, searches use {OLD} until all do" in r.output
    r = CliRunner().invoke(cli, ["--data-dir", d, "embed", "-q"])
    assert r.exit_code == 0 and f"embedded 4 papers with {NEW}; 6/6 have vectors" in r.output


def test_switching_to_a_third_model_mid_switch_starts_afresh(empty_store):
    third = "hf:sentence-transformers/all-MiniLM-L6-v2"
    _fill(empty_store, 6)
    embed.embed_store(empty_store, NEW, limit=3)
    assert embed.pending_count(empty_store, NEW) == 3
    empty_store.start_vector_switch(third)
    assert embed.pending_count(empty_store, third) == 6
    assert embed.pending_count(empty_store, NEW) == 6  # the abandoned switch's vectors are gone
    assert empty_store.model == OLD and empty_store.vector_count() == 6


def test_a_reset_mid_switch_leaves_no_switch_behind(empty_store):
    _fill(empty_store, 4)
    embed.embed_store(empty_store, NEW, limit=2)
    empty_store.reset_vectors()
    assert embed.embed_store(empty_store) == 4  # the model it was switching to, straight into place
    assert empty_store.model == NEW and empty_store.get_state("model_next") is None
    assert not empty_store.has_vector_switch()
