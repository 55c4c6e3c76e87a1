# The two commands of the README: `make demo` and `make test`. Both install first
# when .venv is missing, and both install the Debian packages they use (as root;
# otherwise they print the apt-get line to run and which tests will skip), so a
# fresh clone needs nothing beforehand.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install system check test test-fast demo bench clean

$(BIN)/parlour: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, pinned: that CPU wheel is local; an unpinned torch pulls a multi-GB CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[all,dev]'
	# The browser face's BrowserGym (parlour[browser]): browsergym-core 0.14.3 pins playwright==1.44, which would
	# downgrade the Playwright the page tests run on; it works on the newer one (tests/test_shop_browser.py), so it is
	# installed without its pins and its other needs are named here.
	$(BIN)/pip install --quiet --no-deps 'browsergym-core==0.14.3'
	$(BIN)/pip install --quiet 'beautifulsoup4>=4.12' 'lxml>=4.9,<6'
	touch $(BIN)/parlour

install: $(BIN)/parlour

# bubblewrap (the code sandbox), PostgreSQL and Chromium from Debian.
system:
	bash scripts/system_packages.sh

# Lint, format and types first (a minute), then every test tier.
test: install system check
	$(BIN)/python -m pytest -q --durations=25

# ruff's lint and format rules and mypy on the package as installed and on benchmarks/ (scripts/typecheck.py), as pyproject.toml sets them.
check: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python scripts/typecheck.py

# The contract tier alone (API conformance, rules, fuzzing, attribution, records): every test not marked slow, in two
# pytest-xdist workers (4,240 tests: 3 min 53 s on 2 idle cores, against 5 min 51 s in one process).
test-fast: install system
	$(BIN)/python -m pytest -q -m "not slow" -n 2

# `make demo PORT=8001 HOST=0.0.0.0` serves elsewhere than 127.0.0.1:8000.
PORT ?= 8000
HOST ?= 127.0.0.1
demo: install system
	$(BIN)/parlour demo --host $(HOST) --port $(PORT)

# Each benchmark prints its ratios beside their targets; the GPU figures come from benchmarks/gpu_trainer.sh on a GPU.
# PUFFERLIB=path/to/pufferlib-3.0.0.tar.gz (PyPI's sdist) adds PufferLib's C Connect Four to vector_throughput.py.
bench: install system
	$(BIN)/python benchmarks/env_throughput.py
	$(BIN)/python benchmarks/chess_speed.py
	$(BIN)/python benchmarks/aec_floor.py
	$(BIN)/python benchmarks/vector_throughput.py $(if $(PUFFERLIB),--pufferlib $(PUFFERLIB))
	$(BIN)/python benchmarks/rollout_throughput.py
	$(BIN)/python benchmarks/gc_pauses.py
	$(BIN)/python benchmarks/workers.py
	$(BIN)/python benchmarks/ray_scaling.py
	$(BIN)/python benchmarks/trainer_throughput.py --llm
	$(BIN)/python benchmarks/observation_cost.py
	$(BIN)/python benchmarks/sandbox_latency.py
	$(BIN)/python benchmarks/leaderboard_scale.py --skip-verify
	$(BIN)/python benchmarks/rating_coverage.py
	$(BIN)/python benchmarks/serve_throughput.py
	$(BIN)/python benchmarks/extraction_speed.py
	$(BIN)/python benchmarks/demo_time.py
	$(BIN)/python benchmarks/agentic_worlds.py
	$(BIN)/python benchmarks/shop_browser_speed.py

clean:
	rm -rf $(VENV) build *.egg-info
