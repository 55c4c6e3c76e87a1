"""How long action extraction takes on a megabyte built against it: the timings the tests no longer assert.

``tests/test_extraction.py`` checks that extraction's work grows linearly by
counting it (lines of Python plus characters decoded), which no machine or load
changes. This script times the same replies at full size, in CPU time, the
better of ``--tries`` runs, for every extractor with and without a move list,
and prints the slowest per reply; for the dense-JSON replies it also prints
the ratio between 1 MB and 250 kB (linear: about 4; quadratic: about 16).
Target: under a second per adversarial megabyte.

Run: ``.venv/bin/python benchmarks/extraction_speed.py [--tries 3]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parlour.wrappers.extraction import EXTRACTORS, extract_action  # noqa: E402
from tests.test_extraction import ADVERSARIAL, CELLS, DENSE, MEGABYTE  # noqa: E402


def slowest(reply: str, tries: int) -> float:
    """The longest CPU time, over every extractor and with or without a move list, of the best of ``tries`` runs."""
    worst = 0.0
    for extraction in EXTRACTORS:
        for legal in (CELLS, None):
            runs = []
            for _ in range(tries):
                started = time.process_time()
                extract_action(reply, legal, extraction)
                runs.append(time.process_time() - started)
            worst = max(worst, min(runs))
    return worst


def main() -> None:
    """Print the slowest extraction time of each adversarial reply, then the dense replies' growth."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=3, help="runs per extractor; the best counts")
    args = parser.parse_args()
    print(f"{'reply (1 MB)':36} {'slowest s':>10}")
    for name, build in ADVERSARIAL.items():
        print(f"{name:36} {slowest(build(MEGABYTE), args.tries):10.3f}")
    print(f"\n{'dense reply':36} {'250 kB s':>10} {'1 MB s':>10} {'ratio':>6}")
    for name, build in DENSE.items():
        small, large = slowest(build(MEGABYTE // 4), args.tries), slowest(build(MEGABYTE), args.tries)
        print(f"{name:36} {small:10.3f} {large:10.3f} {large / small:6.1f}")


if __name__ == "__main__":
    main()
