"""Serving concerns: reads while an ingest holds the write lock, and the click commands."""

from __future__ import annotations

import shutil
import sqlite3
import threading

from click.testing import CliRunner
from fastapi.testclient import TestClient

from paperdex.web.app import create_app
from paperdex.web.commands import mcp, serve


def test_reads_do_not_wait_on_an_ingest(web_dir, tmp_path):
    d = tmp_path / "copy"
    shutil.copytree(web_dir, d)
    client = TestClient(create_app(d, pool_size=1), base_url="http://127.0.0.1:8000")
    writer = sqlite3.connect(d / "paperdex.db", check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")  # an ingest batch in flight holds the write lock
    writer.execute("UPDATE papers SET title = 'Rewritten' WHERE id = '2599.00002'")
    done = threading.Event()
    result = {}

    def read():
        result["search"] = client.get("/api/search", params={"q": "zebrafinch", "mode": "lexical"})
        result["paper"] = client.get("/api/papers/2599.00002")
        done.set()

    threading.Thread(target=read, daemon=True).start()
    assert done.wait(15), "a read blocked behind the writer"
    writer.rollback()
    writer.close()
    assert result["search"].status_code == 200 and result["search"].json()["total"] == 2
    assert result["paper"].json()["title"] == "Zebrafinch Chorus: a second hostile record"  # last committed state


def test_commands_report_a_missing_data_dir(tmp_path):
    for cmd in (serve, mcp):
        r = CliRunner().invoke(cmd, [], obj={"data_dir": tmp_path / "nothing"})
        assert r.exit_code == 1 and "no paperdex data" in r.output
