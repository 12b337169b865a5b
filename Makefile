# hudilite developer commands. `make install` creates .venv in the repo root.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?= -n 4 --durations=30

# bash for `set -o pipefail` in the typecheck recipe.
SHELL := /bin/bash

.PHONY: install test test-unit test-spark lint ruff typecheck demo bench clean

install: $(BIN)/hudilite

$(BIN)/hudilite: pyproject.toml
	@command -v $(PY) >/dev/null 2>&1 || { echo "need $(PY) (Python 3.11) and Java 17 on PATH"; exit 1; }
	@echo "[1/3] creating $(VENV) with $(PY)"
	$(PY) -m venv $(VENV)
	@echo "[2/3] upgrading pip"
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "[3/3] installing hudilite and its dependencies (pyspark is about 400 MB: a few minutes)"
	$(BIN)/python -m pip install --progress-bar on -e '.[dev]'
	@touch $@

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

# mypy checks the package as it is installed: `hudilite`, with sqlext/, catalog/ and
# procedures/ as hudilite.sqlext, hudilite.catalog and hudilite.procedures (pyproject's
# package-dir). mypy knows no package-dir mapping and cannot follow the editable install's
# import hook, so build/typecheck/hudilite is rebuilt on each run as a tree of symlinks laid out
# like the installed package (every entry of hudilite/ plus the three mapped folders) and
# mypy runs on it with `-p hudilite`. sed turns the link paths in mypy's messages back into
# source paths (build/typecheck/hudilite/sqlext/x.py -> sqlext/x.py). Third-party modules
# without types are listed in pyproject's [[tool.mypy.overrides]].
TYPECHECK := build/typecheck

typecheck: install
	@rm -rf $(TYPECHECK) && mkdir -p $(TYPECHECK)/hudilite
	@for f in hudilite/*; do case $$f in */__pycache__) ;; \
	  *) ln -s ../../../$$f $(TYPECHECK)/hudilite/ ;; esac; done
	@for d in sqlext catalog procedures; do ln -s ../../../$$d $(TYPECHECK)/hudilite/$$d; done
	set -o pipefail; MYPYPATH=$(TYPECHECK) $(BIN)/mypy -p hudilite 2>&1 \
	  | sed -E 's#^$(TYPECHECK)/hudilite/(sqlext|catalog|procedures)/#\1/#; s#^$(TYPECHECK)/##'

demo: install
	$(BIN)/hudilite demo --dir ./hudilite-demo
	$(BIN)/hudilite sql --warehouse ./hudilite-demo -f examples/runbook.sql

bench: install
	$(BIN)/python benchmarks/bench_targets.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache hudilite-warehouse hudilite-demo spark-warehouse
