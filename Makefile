# Two entry points, each doing its own set-up in .venv:
#   make demo   compile and run an example end to end, showing each level
#   make test   lint, type check and the whole test suite
#   make test-quick   the tutorial, the exercises and the dialect's tests (under a minute;
#               the exercises' solutions run in `make test`)
# and `make docs`, which rewrites the op tables in docs/ from the op table
# (dialects/elementwise.py) and the ISA table (vm/isa.py).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# A strict editable install links each module into build/, so the type
# checker sees dvm.dialects etc.; adding a module means reinstalling, hence
# the dependency on the package folders (their mtime changes on add/remove).
PACKAGES := dvm dvm/lazy dvm/torch dvm/tools dialects passes lowering vm

.PHONY: demo test test-quick docs lint typecheck pytest install clean

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/activate pyproject.toml $(PACKAGES)
	$(BIN)/pip install -q -e '.[dev,torch]' --config-settings editable_mode=strict
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/python -m dvm.demo

docs: install
	$(BIN)/python -m dvm.tools.gendocs

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/pyright

pytest: install
	$(BIN)/pytest -q -n 2 --dist worksteal

test: lint typecheck pytest

QUICK_TESTS := tests/test_tutorial.py tests/tutorial tests/test_dialect.py tests/test_diagnostics.py

test-quick: install
	$(BIN)/pytest -q -n 2 -p no:randomly $(QUICK_TESTS) -k "not solution_solves"

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

# Benchmarks against the peers (numpy, torch eager, numexpr, TorchInductor,
# ONNX Runtime, IREE); see docs/benchmarks.md. The bench extra pulls torch
# 2.13.0 (CPU), numexpr, onnx, onnxruntime, IREE, matplotlib and tqdm into .venv.
.PHONY: bench bench-quick bench-report bench-install

$(VENV)/.bench-installed: $(VENV)/.installed
	$(BIN)/pip install -q -e '.[dev,bench]' --config-settings editable_mode=strict
	touch $@

bench-install: $(VENV)/.bench-installed

bench: bench-install
	$(BIN)/python benchmarks/run.py

bench-quick: bench-install
	$(BIN)/python benchmarks/run.py --quick

bench-report: bench-install
	$(BIN)/python benchmarks/run.py --report-only
