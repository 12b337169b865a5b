# hudilite developer commands. `make install` creates .venv in the repo root.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?= -n 4 --durations=30

# bash for `set -o pipefail` in the typecheck recipe.
SHELL := /bin/bash

.PHONY: FORCE install test test-unit test-spark lint ruff typecheck demo bench clean

install: $(BIN)/hudilite

# The package is installed in setuptools' strict editable mode: a tree of links under
# build/__editable__.* laid out like the installed package (hudilite/ with sqlext/, catalog/
# and procedures/ mapped in by pyproject's package-dir), put on sys.path by a .pth file, so
# mypy and other type checkers see hudilite.sqlext & co. -- in this repo and in a user's
# project alike (the default editable mode uses an import hook they cannot follow). The tree
# links files, not folders: adding or removing a file needs a reinstall, which $(LINKED)
# triggers (rewritten only when the set of package files changes). Code run from the repo
# root imports the source folders directly (see hudilite/__init__.py).
PACKAGE_FILES := $(sort $(shell find hudilite sqlext catalog procedures -type f \
  -not -path '*/__pycache__/*' 2>/dev/null))
LINKED := build/package-files.txt

$(LINKED): FORCE
	@mkdir -p $(@D)
	@printf '%s\n' $(PACKAGE_FILES) > $@.new
	@if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

$(BIN)/hudilite: pyproject.toml $(LINKED)
	@command -v $(PY) >/dev/null 2>&1 || { echo "need $(PY) (Python 3.11) and Java 17 on PATH"; exit 1; }
	@if [ ! -x $(BIN)/python ]; then \
	  echo "[1/3] creating $(VENV) with $(PY)" && $(PY) -m venv $(VENV) && \
	  echo "[2/3] upgrading pip" && $(BIN)/python -m pip install --quiet --upgrade pip; fi
	@echo "[3/3] installing hudilite and its dependencies (pyspark is about 400 MB: a few minutes)"
	$(BIN)/python -m pip install --progress-bar on -e '.[dev]' --config-settings editable_mode=strict
	@touch $@

FORCE:

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-unit: install
	$(BIN)/python -m pytest -m "not spark" $(PYTEST_ARGS)

test-spark: install
	$(BIN)/python -m pytest -m spark $(PYTEST_ARGS)

lint: ruff typecheck

ruff: install
	$(BIN)/ruff check hudilite sqlext catalog procedures tests benchmarks
	$(BIN)/ruff format --check hudilite sqlext catalog procedures tests benchmarks

# mypy checks the package as it is installed: it searches this folder first, so `hudilite`
# is the source folder, and it finds hudilite.sqlext, hudilite.catalog and hudilite.procedures
# (sqlext/, catalog/, procedures/ by pyproject's package-dir) in the strict editable install's
# link tree (see install); each is named with -p so all of its modules are checked. sed turns
# the link paths in mypy's messages back into source paths (build/__editable__.*/hudilite/
# sqlext/x.py -> sqlext/x.py). Third-party modules without types are listed in pyproject's
# [[tool.mypy.overrides]].
EDITABLE := build/__editable__[^/]*

typecheck: install
	set -o pipefail; $(BIN)/mypy -p hudilite -p hudilite.sqlext -p hudilite.catalog \
	  -p hudilite.procedures 2>&1 \
	  | sed -E 's#^$(EDITABLE)/hudilite/(sqlext|catalog|procedures)/#\1/#; s#^$(EDITABLE)/##'

demo: install
	$(BIN)/hudilite demo --dir ./hudilite-demo
	$(BIN)/hudilite sql --warehouse ./hudilite-demo -f examples/runbook.sql

bench: install
	$(BIN)/python benchmarks/bench_targets.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache hudilite-warehouse hudilite-demo spark-warehouse
