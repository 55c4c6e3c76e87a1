"""The ``solver`` for Countdown: exhaustive depth-first search over steps, with the game's own
:func:`parlour.envs.puzzles.countdown.combine`, skipping multisets of numbers already explored.

The target is reachable by construction, so the search always finds a way; the agent plans once
per position it did not expect and then plays the plan step by step."""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.puzzles.countdown import OPS, SLOTS, combine


def plan(slots: list[int | None], target: int) -> list[tuple[int, str, int]] | None:
    """Steps ``(slot, op, slot)`` that put ``target`` in a slot, or ``None`` if no steps can."""
    seen: set[tuple[int, ...]] = set()

    def search(state: list[int | None]) -> list[tuple[int, str, int]] | None:
        key = tuple(sorted(v for v in state if v is not None))
        if key in seen:
            return None
        seen.add(key)
        filled = {i: v for i, v in enumerate(state) if v is not None}
        for i, left in filled.items():
            for j, right in filled.items():
                if i == j:
                    continue
                for op in OPS:
                    if op in "+*" and i > j:
                        continue
                    result = combine(left, op, right)
                    if result is None:
                        continue
                    if result == target:
                        return [(i, op, j)]
                    nxt = list(state)
                    nxt[i], nxt[j] = result, None
                    rest = search(nxt)
                    if rest is not None:
                        return [(i, op, j)] + rest
        return None

    return search(list(slots))


class CountdownSolver(SeededAgent):
    """Finds steps that reach the target and plays them in order."""

    name = "solver"

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        super().__init__(env_id, seed)
        self.steps: list[tuple[int, str, int]] = []
        self.expected: list[int | None] | None = None

    def reset(self, seed: int | None = None) -> None:
        """Reseed and forget the plan."""
        super().reset(seed)
        self.steps, self.expected = [], None

    def act(self, observation: Mapping[str, Any]) -> str:
        """The next step of a plan for the shown slots (a random legal step if none reaches the target)."""
        view = observation["view"]
        slots = list(view["slots"])
        if not self.steps or slots != self.expected:
            self.steps = plan(slots, view["target"]) or []
        if not self.steps:
            legal = observation["legal_moves"]
            return legal[int(self.rng.integers(len(legal)))]
        i, op, j = self.steps.pop(0)
        self.expected = list(slots)
        self.expected[i], self.expected[j] = combine(slots[i], op, slots[j]), None
        return f"{SLOTS[i]} {op} {SLOTS[j]}"


register_scripted("solver", "parlour/Countdown-v0", CountdownSolver)
