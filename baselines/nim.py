"""Optimal ``nim_sum`` play for Nim, normal and misère."""

from __future__ import annotations

import functools
import operator
from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.games.nim import move_name


def winning_move(heaps: list[int], misere: bool) -> tuple[int, int] | None:
    """A (0-based heap, count) that leaves the opponent a lost position, or ``None`` if the position is lost.

    Normal play: leave a nim-sum (xor of the heaps) of zero. Misère play is the
    same while at least two heaps hold more than one object; once a move would
    leave only heaps of size 0 or 1, leave an odd number of 1-heaps instead.
    """
    big = [h for h, size in enumerate(heaps) if size > 1]
    if misere and len(big) <= 1:
        ones = sum(1 for size in heaps if size == 1)
        if not big:
            # Only 1-heaps: the mover wins exactly when their count is even.
            return (heaps.index(1), 1) if ones % 2 == 0 else None
        # One big heap: cut it to 0 or 1 so that an odd number of 1-heaps remain.
        (heap,) = big
        keep = 1 if ones % 2 == 0 else 0
        return heap, heaps[heap] - keep
    total = functools.reduce(operator.xor, heaps, 0)
    if total == 0:
        return None
    for heap, size in enumerate(heaps):
        if size ^ total < size:
            return heap, size - (size ^ total)
    raise AssertionError("a non-zero nim-sum always has a reducing heap")


class NimSumAgent(SeededAgent):
    """Plays a winning move whenever one exists; from a lost position takes one object from a random heap."""

    name = "nim_sum"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The move for the heaps in ``observation["view"]``."""
        view = observation["view"]
        heaps = list(view["heaps"])
        move = winning_move(heaps, view["misere"])
        if move is None:
            nonempty = [h for h, size in enumerate(heaps) if size > 0]
            move = (nonempty[int(self.rng.integers(len(nonempty)))], 1)
        return move_name(*move)


register_scripted("nim_sum", "parlour/Nim-v0", NimSumAgent)
register_ladder("parlour/Nim-v0", ["random", "nim_sum"])
