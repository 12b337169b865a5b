# hudilite developer commands. `make install` creates .venv in the repo root.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?= --durations=30

.PHONY: install test test-unit test-spark lint demo bench clean

install: $(BIN)/hudilite

$(BIN)/hudilite: pyproject.toml
	@command -v $(PY) >/dev/null 2>&1 || { echo "need $(PY) (Python 3.11) and Java 17 on PATH"; exit 1; }
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-unit: install
	$(BIN)/python -m pytest -m "not spark" $(PYTEST_ARGS)

test-spark: install
	$(BIN)/python -m pytest -m spark $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check hudilite sqlext catalog procedures tests benchmarks
	$(BIN)/ruff format --check hudilite sqlext catalog procedures tests benchmarks
	$(BIN)/mypy hudilite sqlext catalog procedures

demo: install
	$(BIN)/hudilite demo --warehouse ./hudilite-warehouse
	$(BIN)/hudilite sql --warehouse ./hudilite-warehouse -f examples/runbook.sql

bench: install
	$(BIN)/python benchmarks/bench_cow.py $(BENCH_ARGS)
	$(BIN)/python benchmarks/bench_mor.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache hudilite-warehouse spark-warehouse
