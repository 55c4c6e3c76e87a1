# The two commands of the README: `make demo` and `make test`. Both install first
# when .venv is missing, so a fresh clone needs nothing beforehand.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install test demo bench clean

$(BIN)/parlour: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, pinned: that CPU wheel is local; an unpinned torch pulls a multi-GB CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[all,dev]'
	touch $(BIN)/parlour

install: $(BIN)/parlour

test: install
	$(BIN)/python -m pytest -q

demo: install
	$(BIN)/parlour demo

bench: install
	$(BIN)/python benchmarks/env_throughput.py
	$(BIN)/python benchmarks/aec_floor.py
	$(BIN)/python benchmarks/vector_throughput.py
	$(BIN)/python benchmarks/rollout_throughput.py

clean:
	rm -rf $(VENV) build *.egg-info
