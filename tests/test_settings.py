"""paperdex.settings: the one place PAPERDEX_* variables are read, flags over environment, a bad
value refused in one line, and the settings reaching what a user sees."""

import ast
import gzip
import json
import pickle
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from paperdex.cli import cli
from paperdex.index import embed
from paperdex.settings import VARIABLES, Settings, SettingsError, read_env

ROOT = Path(__file__).parent.parent
SAMPLE = ROOT / "paperdex" / "data" / "sample.jsonl.gz"


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory) -> Path:
    """A small store: the first 200 papers of the bundled sample, words only (no vectors)."""
    d = tmp_path_factory.mktemp("settings")
    src = d / "sample.jsonl"
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        src.write_text("".join(line for _, line in zip(range(200), f, strict=False)), encoding="utf-8")
    r = CliRunner().invoke(cli, ["--data-dir", str(d / "data"), "ingest", "-q", str(src)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return d / "data"


def test_defaults_without_environment():
    s = Settings.from_env({})
    assert (s.model, s.zh_dict, s.zh_adapter, s.embed_threads) == (
        "multilingual-e5-small+all-MiniLM-L6-v2",
        True,
        True,
        None,
    )
    assert (s.time_budget, s.pool_wait, s.allowed_hosts, s.backend) == (2.0, 10.0, (), None)
    assert s.data_dir.name == "paperdex"


def test_environment_is_parsed():
    s = Settings.from_env(
        {
            "PAPERDEX_HOME": "~/papers",
            "PAPERDEX_MODEL": "all-MiniLM-L6-v2",
            "PAPERDEX_ZH_DICT": "0",
            "PAPERDEX_ZH_ADAPTER": "off",
            "PAPERDEX_EMBED_THREADS": "3",
            "PAPERDEX_TIME_BUDGET": "0.5",
            "PAPERDEX_POOL_WAIT": "0",
            "PAPERDEX_ALLOWED_HOSTS": "papers.lan, Other.Example,",
            "PAPERDEX_BACKEND": "milvus://papers.db",
            "PAPERDEX_SMTP_USER": "me",
            "PAPERDEX_SMTP_PASSWORD": "secret",
        }
    )
    assert s.data_dir == Path("~/papers").expanduser()
    assert (s.model, s.zh_dict, s.zh_adapter, s.embed_threads) == ("all-MiniLM-L6-v2", False, False, 3)
    assert (s.time_budget, s.pool_wait) == (0.5, 0.0)
    assert s.allowed_hosts == ("papers.lan", "other.example")
    assert (s.backend, s.smtp_user, s.smtp_password) == ("milvus://papers.db", "me", "secret")
    assert "secret" not in repr(s)
    assert pickle.loads(pickle.dumps(s)) == s  # what a serve worker is started with
    assert Settings.from_env({"PAPERDEX_EMBED_THREADS": "0", "PAPERDEX_MODEL": " "}).embed_threads is None
    assert read_env("time_budget", {"PAPERDEX_TIME_BUDGET": "7"}) == 7.0 and read_env("backend", {}) is None


def test_a_flag_overrides_the_environment():
    env = {"PAPERDEX_MODEL": "all-MiniLM-L6-v2", "PAPERDEX_HOME": "/from/env", "PAPERDEX_TIME_BUDGET": "5"}
    s = Settings.from_env(env, model="multilingual-e5-small", data_dir=Path("/from/flag"), time_budget=None)
    assert (s.model, s.data_dir, s.time_budget) == ("multilingual-e5-small", Path("/from/flag"), 5.0)
    again = Settings.from_env(env, model="multilingual-e5-small", data_dir="/from/flag", time_budget=1.5)
    assert s.replace(time_budget=1.5, model=None) == again  # None: a flag not given
    with pytest.raises(TypeError, match="colour"):
        Settings.from_env({}, colour="blue")


def test_data_dir_flag_overrides_paperdex_home(sample_dir, tmp_path):
    r = run("--data-dir", str(sample_dir), "stats", "--json", env={"PAPERDEX_HOME": str(tmp_path / "nothing")})
    assert r.exit_code == 0 and json.loads(r.output)["papers"] == 200
    r = run("stats", env={"PAPERDEX_HOME": str(tmp_path / "nothing")})
    assert r.exit_code == 1 and str(tmp_path / "nothing") in r.output


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("PAPERDEX_ZH_DICT", "maybe", "expected 1 or 0"),
        ("PAPERDEX_ZH_ADAPTER", "2", "expected 1 or 0"),
        (
            "PAPERDEX_MODEL",
            "bert-huge",
            "unknown model; known: multilingual-e5-small, all-MiniLM-L6-v2, bge-small-en-v1.5, multilingual-e5-small+",
        ),
        ("PAPERDEX_EMBED_THREADS", "four", "whole number of threads"),
        ("PAPERDEX_EMBED_THREADS", "-1", "whole number of threads"),
        ("PAPERDEX_TIME_BUDGET", "0", "seconds > 0"),
        ("PAPERDEX_TIME_BUDGET", "inf", "seconds > 0"),
        ("PAPERDEX_POOL_WAIT", "soon", "seconds >= 0"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_variable(name, value, says):
    with pytest.raises(SettingsError) as e:
        Settings.from_env({name: value})
    assert str(e.value).startswith(f"{name}={value!r}: ") and says in str(e.value)
    assert "\n" not in str(e.value)


def test_the_cli_refuses_a_bad_value_before_any_command(tmp_path):
    r = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "stats"], env={"PAPERDEX_TIME_BUDGET": "soon"})
    assert r.exit_code == 1
    assert r.output.strip().splitlines() == ["Error: PAPERDEX_TIME_BUDGET='soon': expected a number of seconds > 0"]


def test_zh_dict_0_turns_off_chinese_translation_in_search(sample_dir):
    """What a user sees: 扩散模型 (diffusion model) finds English papers, unless the
    dictionary is switched off."""
    args = ("--data-dir", str(sample_dir), "search", "扩散模型", "--mode", "lexical", "--json")
    on = json.loads(run(*args, env={"PAPERDEX_ZH_DICT": "1"}).output)["hits"]
    assert on and any("diffusion" in h["title"].lower() for h in on)
    off = run(*args, env={"PAPERDEX_ZH_DICT": "0"})
    assert off.exit_code == 0 and json.loads(off.output)["hits"] == []


def test_embed_model_flag_overrides_paperdex_model(sample_dir, tmp_path, monkeypatch):
    """`embed --model` wins over PAPERDEX_MODEL, which wins over the built-in default (a fake
    engine records which model it was asked for)."""
    import shutil

    import numpy as np

    asked: list[str] = []

    class Fake:
        dim = 384

        def __init__(self, name: str) -> None:
            self.name = name

        def embed_docs(self, texts):
            return np.ones((len(texts), 384), dtype=np.float32) / np.sqrt(384)

    def fake(name, threads=None, **kw):  # kw: device, allow_download
        asked.append(name)
        return Fake(name)

    monkeypatch.setattr(embed, "get_embedder", fake)
    for flag, env, want in [
        ((), {}, "multilingual-e5-small+all-MiniLM-L6-v2"),
        ((), {"PAPERDEX_MODEL": "all-MiniLM-L6-v2"}, "all-MiniLM-L6-v2"),
        (("--model", "multilingual-e5-small"), {"PAPERDEX_MODEL": "all-MiniLM-L6-v2"}, "multilingual-e5-small"),
    ]:
        d = tmp_path / f"d{len(asked)}"
        shutil.copytree(sample_dir, d)
        r = run("--data-dir", str(d), "embed", "-q", "--limit", "2", *flag, env=env)
        assert r.exit_code == 0, r.output
        assert asked[-1] == want and f"with {want}" in r.output


def test_create_app_settings_reach_the_pool(sample_dir):
    pytest.importorskip("fastapi")
    from paperdex.web.app import create_app

    st = Settings.from_env(
        {}, data_dir=sample_dir, time_budget=0.7, pool_wait=0.2, allowed_hosts=("papers.lan",), zh_adapter=False
    )
    app = create_app(sample_dir, pool_size=1, settings=st)
    assert (app.state.pool.budget, app.state.pool.wait) == (0.7, 0.2)
    with app.state.pool.searcher() as s:  # how its searchers embed queries: as the settings say
        assert s.embed_options == st.embedding and s.embed_options.zh_adapter is False
    assert app.guard_hosts == ["localhost", "127.0.0.1", "::1", "papers.lan"]


def test_a_serve_worker_runs_with_the_settings_it_is_handed(sample_dir, monkeypatch):
    """A worker is built from the pickled ServeOptions, whatever its environment says."""
    pytest.importorskip("fastapi")
    from paperdex.web.serving import ServeOptions, build_app

    monkeypatch.setenv("PAPERDEX_TIME_BUDGET", "9")
    monkeypatch.setenv("PAPERDEX_ZH_DICT", "1")
    st = Settings.from_env({}, data_dir=sample_dir, time_budget=0.7, zh_dict=False, allowed_hosts=("papers.lan",))
    opts = pickle.loads(pickle.dumps(ServeOptions(settings=st, pool=1, warm=False)))
    app = build_app(opts)
    try:
        assert app.state.pool.budget == 0.7 and "papers.lan" in app.guard_hosts
        assert app.state.pool.zh_dict is False
    finally:
        app.state.pool.close()


def test_readme_lists_every_variable():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.split(r"\n#+ ", text.split("### Settings\n", 1)[1], maxsplit=1)[0]
    for var in VARIABLES:
        assert f"`{var.name}`" in section, var.name


# The modules besides settings.py that touch os.environ, each for a reason: the commands that
# hand a source the variables it names (OpenReview's credentials, Source.env; the Zotero key's
# variable), `serve`, which sets OMP_NUM_THREADS and the like for its workers' native
# libraries. Exactly these: a module that stops touching it leaves the list, one that starts
# fails this test.
TOUCHING_ENVIRON = {
    "settings.py",
    "cli/data.py",
    "cli/discover.py",
    "cli/sources.py",
    "web/serving.py",
}
ENVIRON = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}


def touches_environ(source: str) -> bool:
    """Whether code reads or changes the process environment: os.environ in any use (get, [],
    pop, setdefault, passed on), os.getenv/putenv/unsetenv, `from os import environ`, or a
    click option's envvar=."""
    tree = ast.parse(source)
    os_names = {"os"} | {
        a.asname for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names if a.name == "os" and a.asname
    }
    for n in ast.walk(tree):
        if (
            isinstance(n, ast.Attribute)
            and n.attr in ENVIRON
            and isinstance(n.value, ast.Name)
            and n.value.id in os_names
        ):
            return True
        if isinstance(n, ast.ImportFrom) and n.module == "os" and any(a.name in ENVIRON for a in n.names):
            return True
        if isinstance(n, ast.keyword) and n.arg in ("envvar", "auto_envvar_prefix"):
            return True
    return False


@pytest.mark.parametrize(
    ("code", "touches"),
    [
        ('os.environ.get("X")', True),
        ('os.environ["X"]', True),
        ('os.environ.pop("X", None)', True),
        ('os.environ.setdefault("X", "1")', True),
        ("f(environ=os.environ)", True),
        ('os.getenv("X")', True),
        ("import os as o\no.environ", True),
        ("from os import environ", True),
        ('click.option("--key", envvar="KEY")', True),
        ('"""Settings come from the os.environ of the process."""', False),
        ("environ.get(var)", False),
        ("os.path.join(a, b)", False),
    ],
)
def test_touches_environ_finds_every_use(code, touches):
    assert touches_environ(code) is touches


def test_no_other_module_reads_or_changes_the_environment():
    pkg = ROOT / "paperdex"
    touching = {
        p.relative_to(pkg).as_posix() for p in pkg.rglob("*.py") if touches_environ(p.read_text(encoding="utf-8"))
    }
    assert touching == TOUCHING_ENVIRON


def test_an_smtp_password_keeps_its_spaces():
    s = Settings.from_env({"PAPERDEX_SMTP_PASSWORD": " secret ", "PAPERDEX_SMTP_USER": " me "})
    assert (s.smtp_password, s.smtp_user) == (" secret ", "me")
