"""Long runs keep the cyclic garbage collector off the objects that existed before them.

CPython's full collections walk every tracked object in the process. With torch
and transformers imported and a model loaded that is several hundred thousand
objects, about a quarter of a second of CPU per full collection on this
project's machines, and a rollout that keeps its episodes' records triggers one
whenever it has made a quarter as many long-lived objects again: on a CPU run of
32 TicTacToe episodes with a tiny model, one such pause was a third of the run
(``benchmarks/rollout_throughput.py``; ``benchmarks/gc_pauses.py`` counts the collections with and without
the freeze; the host stalls the same on a GPU).

:func:`frozen_heap` moves the objects alive when a run starts into the
collector's permanent generation (``gc.freeze()``) for the length of the run and
back at its end (``gc.unfreeze()``). Nothing is lost: reference counting still
frees frozen objects, a cycle that was already garbage at the start is
collected after the run, and everything the run makes is collected as usual.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
#: Runs in progress that froze the heap (nested runs, or runs on several threads, share one freeze).
_depth = 0
#: Whether the outermost run froze the heap itself (it leaves one frozen by someone else as it is).
_owner = False


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Freeze the objects alive now for the garbage collector until the block ends (see the module docstring).

    Reentrant and safe across threads: the first run to enter freezes, the last to leave unfreezes. A heap the
    program froze itself (``gc.get_freeze_count() > 0`` at the start, a pre-forking server's) is left as it is.
    """
    global _depth, _owner
    with _lock:
        if _depth == 0:
            _owner = gc.get_freeze_count() == 0
            if _owner:
                gc.freeze()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _owner:
                gc.unfreeze()
                _owner = False
