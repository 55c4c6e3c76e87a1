"""Every benchmark module imports: `make bench` must not die on a helper another benchmark renamed.

Benchmarks are never timed in tests; importing each one (their ``main`` does
the measuring) catches a broken import between them, as ``aec_floor.py``'s
import of a loop ``env_throughput.py`` no longer had went unnoticed.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.parametrize("module", sorted(path.stem for path in BENCHMARKS.glob("*.py")))
def test_benchmark_imports(module: str, monkeypatch) -> None:
    # Benchmarks import each other by bare name, as they do when run as scripts from the checkout.
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    imported = importlib.import_module(module)
    assert callable(getattr(imported, "main", None)), f"benchmarks/{module}.py has no main()"
    sys.modules.pop(module, None)
