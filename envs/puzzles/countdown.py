"""Countdown, the numbers game: combine numbers with + - * / to reach a target.

One player, ``player_0``. The numbers are held in slots named ``A``, ``B``,
``C``, ...: drawn from the seed out of the small numbers 1 to 10 (two of each)
and the large ones 25, 50, 75 and 100 (up to two). The target is the value of
a random expression over some of the numbers, so it can always be reached,
and is never one of the numbers drawn.

A move combines two slots: ``A * C`` replaces ``A`` with ``A * C`` and
empties ``C``. Every intermediate result must be a positive whole number:
``-`` only from a larger number, ``/`` only when it divides exactly; ``+``
and ``*`` are written with the earlier slot first. Not every number has to be
used. Anything else is an invalid action that says why. The last move written
counts, so reasoning around it is fine.

``difficulty`` (1 to 5, default 2): numbers and target range, 3 numbers and a
target from 10 to 100, 4 and 20 to 200, 5 and 100 to 500, 6 and 100 to
999, 6 and 500 to 999.

Rewards: 1 as soon as a slot holds the target (the player wins), 0 when one
number is left and it is not the target. A player that exceeds the
invalid-action allowance gets -1. Outcome details: ``difficulty``,
``success``, ``target``, ``numbers`` (as drawn), ``steps`` and ``closest``
(the nearest any slot came to the target).

Vector observation: per slot, its value over 1000 (0 when empty), then the
target over 1000.

Version history: v0, first release.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.game import Game, int_option
from parlour.envs.puzzles.solo import SoloPuzzle

#: difficulty -> (numbers, lowest target, highest target)
LEVELS = {1: (3, 10, 100), 2: (4, 20, 200), 3: (5, 100, 500), 4: (6, 100, 999), 5: (6, 500, 999)}
SMALL = [n for n in range(1, 11) for _ in range(2)]
LARGE = [25, 50, 75, 100]
OPS = ["+", "-", "*", "/"]
SLOTS = "ABCDEF"
SCALE = 1000.0
MOVE_PATTERN = re.compile(r"\b([A-F])\s*([-+*/x×÷])\s*([A-F])\b")
SPELLING = {"x": "*", "×": "*", "÷": "/"}

RULES = """You are {player}, playing the Countdown numbers game. Reach the target by combining the numbers with + - * /.
The numbers sit in slots named by letters. A move combines two slots: "A * C" puts A * C into slot A and empties slot C.
Every result must be a positive whole number: subtract only a smaller number from a larger one, divide only when it divides exactly; for + and * write the earlier slot first. You need not use every number.
You win as soon as a slot holds the target; you lose when one number is left and it is not the target.
Reply with one move, for example: B * D"""


def combine(a: int, op: str, b: int) -> int | None:
    """The rule of one step: ``a op b`` when it is a positive whole number, else ``None``."""
    if op == "+":
        return a + b
    if op == "*":
        return a * b
    if op == "-":
        return a - b if a > b else None
    return a // b if a % b == 0 else None


class Countdown(SoloPuzzle, Game):
    """The Countdown numbers game on numbers and a reachable target drawn from the seed; see the module docstring."""

    name = "Countdown"
    description = (
        "Reach a target by combining numbers with + - * / (positive whole results only), as in Countdown; "
        "difficulty 1-5 (default 2) sets how many numbers (3 to 6) and how large the target (10 to 999)."
    )

    def __init__(self, *, difficulty: int = 2):
        self.difficulty = int_option("difficulty", difficulty, 1, len(LEVELS))
        self.count, self.low, self.high = LEVELS[self.difficulty]
        self.players = ["player_0"]
        self.actions = [(i, op, j) for i in range(self.count) for op in OPS for j in range(self.count) if i != j]
        self.moves = [f"{SLOTS[i]} {op} {SLOTS[j]}" for i, op, j in self.actions]
        self.vector_size = self.count + 1
        self.slots: list[int | None] = [None] * self.count
        self.numbers: list[int] = []
        self.target = 0
        self.steps = 0
        self.closest = 0

    def start(self, ctx: Context) -> None:
        """Draw the numbers, then targets from random expressions until one is in range and not a number drawn."""
        while True:
            large = int(ctx.rng.integers(0, min(2, self.count - 2) + 1))
            numbers = [LARGE[int(i)] for i in ctx.rng.choice(len(LARGE), large, replace=False)]
            numbers += [SMALL[int(i)] for i in ctx.rng.choice(len(SMALL), self.count - large, replace=False)]
            pool = list(numbers)
            value = None
            while len(pool) > 1:
                a, b = (pool.pop(int(ctx.rng.integers(len(pool)))) for _ in range(2))
                result = combine(max(a, b), OPS[int(ctx.rng.integers(4))], min(a, b))
                if result is None:
                    pool.append(max(a, b))
                    continue
                pool.append(result)
                if self.low <= result <= self.high and result not in numbers:
                    value = result
                    break
            if value is not None:
                break
        self.numbers, self.slots, self.target = numbers, list(numbers), value
        self.steps = 0
        self.closest = min(abs(n - value) for n in numbers)

    def rules(self, player: str) -> str:
        """The rules."""
        return RULES.format(player=player)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The slots and the target."""
        return f"Target: {self.target}\nNumbers: {self.slots_text()}\nYour move, for example: {legal[0] if legal else 'A + B'}"

    def slots_text(self) -> str:
        """The filled slots as ``A=25, B=7, ...``."""
        return ", ".join(f"{SLOTS[i]}={value}" for i, value in enumerate(self.slots) if value is not None)

    def legal_actions(self, player: str) -> list[int]:
        """Every step on two filled slots with a positive whole result (+ and * with the earlier slot first)."""
        return [k for k, (i, op, j) in enumerate(self.actions) if self.allowed(i, op, j) is None]

    def allowed(self, i: int, op: str, j: int) -> str | None:
        """Why the step ``i op j`` is not allowed now, or ``None`` if it is."""
        a = self.slots[i] if i < self.count else None
        b = self.slots[j] if j < self.count else None
        if a is None or b is None:
            return f"Slots {SLOTS[i]} and {SLOTS[j]} must both hold numbers; now: {self.slots_text()}."
        if op in "+*" and i > j:
            return f"Write {op} with the earlier slot first: {SLOTS[j]} {op} {SLOTS[i]}."
        if combine(a, op, b) is None:
            return f"{a} {op} {b} is not a positive whole number."
        return None

    def parse(self, player: str, text: str) -> str:
        """The last ``<slot> <op> <slot>`` in the text (``x`` and ``×`` for *, ``÷`` for /), if the step is allowed."""
        found = MOVE_PATTERN.findall(text)
        if not found:
            raise InvalidMove("No move found. Reply with two slot letters and an operation, for example: A + B")
        left, op, right = found[-1]
        i, op, j = SLOTS.index(left), SPELLING.get(op, op), SLOTS.index(right)
        if i == j:
            raise InvalidMove("Combine two different slots.")
        reason = self.allowed(i, op, j)
        if reason is not None:
            raise InvalidMove(reason)
        return f"{SLOTS[i]} {op} {SLOTS[j]}"

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Combine; the target in any slot wins, one wrong number left loses."""
        ((player, move),) = moves.items()
        i, op, j = self.actions[self.move_index(move)]
        a, b = self.slots[i], self.slots[j]
        assert a is not None and b is not None  # a legal step combines two filled slots
        result = combine(a, op, b)
        assert result is not None  # into a positive whole number
        self.slots[i], self.slots[j] = result, None
        self.steps += 1
        self.closest = min(self.closest, abs(result - self.target))
        ctx.tell(f"{player} computes {a} {op} {b} = {result} into {SLOTS[i]}.", kind="move", sender=player)
        if result == self.target:
            self.solved(ctx, "reached the target")
        elif sum(value is not None for value in self.slots) == 1:
            self.failed(ctx, "one number is left and it is not the target")

    def report(self, success: bool) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        return {
            "difficulty": self.difficulty,
            "success": success,
            "target": self.target,
            "numbers": list(self.numbers),
            "steps": self.steps,
            "closest": self.closest,
        }

    def view(self, player: str) -> dict[str, Any]:
        """The slots (``None`` when empty), the target and the difficulty."""
        return {"difficulty": self.difficulty, "slots": list(self.slots), "target": self.target}

    def vector(self, player: str) -> np.ndarray:
        """Each slot's value over 1000 (0 when empty, capped at 1), then the target over 1000."""
        values = [min((value or 0) / SCALE, 1.0) for value in self.slots] + [self.target / SCALE]
        return np.asarray(values, dtype=np.float32)

    def render(self) -> str:
        """The target and the slots."""
        return f"target {self.target}: {self.slots_text()}"
