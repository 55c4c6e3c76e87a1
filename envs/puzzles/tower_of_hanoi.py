"""Tower of Hanoi: move every disk onto peg C, one disk at a time, never a larger disk on a smaller one.

One player, ``player_0``. Three pegs, ``A``, ``B`` and ``C``, and ``disks``
disks numbered by size, 1 the smallest. The start is drawn from the seed:
every disk on a random peg, each peg's disks stacked largest at the bottom
(the only way they can stand), and never the solved position. With
``classic=True`` (default ``False``) the start is the textbook one, every
disk on peg A. The goal is every disk on peg C.

A move takes the top disk of one peg to another: ``A->C`` (also ``A to C``,
``A - C``, ``A → C``; the last one written counts, so reasoning around it is
fine). Moving from an empty peg, or onto a smaller disk, is an invalid action
that says why.

``difficulty`` (1 to 5, default 2) sets the disks: 3, 4, 5, 6 or 7. The move
limit is twice ``2**disks - 1``, the longest that any start needs (the
classic one), so a solver always has room and a random walker rarely does.

Rewards: 1 when every disk is on peg C (the player wins), 0 when the move
limit runs out first. A player that exceeds the invalid-action allowance
gets -1. Outcome details: ``difficulty``, ``success``, ``disks``, ``moves``,
``max_moves`` and ``optimal`` (the fewest moves that solve the start).

Vector observation: for each disk, smallest first, a one-hot of its peg
(three values), then the fraction of the move limit used.

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

#: difficulty -> disks
LEVELS = {1: 3, 2: 4, 3: 5, 4: 6, 5: 7}
#: The move limit is this many times the moves the classic start needs, the most any start needs.
LIMIT_FACTOR = 2
PEGS = "ABC"
GOAL = 2
MOVES = [f"{PEGS[i]}->{PEGS[j]}" for i in range(3) for j in range(3) if i != j]
MOVE_PATTERN = re.compile(r"\b([ABC])\s*(?:->|=>|→|-|>|\bto\b)\s*([ABC])\b", re.IGNORECASE)

RULES = """You are {player}, solving the Tower of Hanoi with {disks} disks, numbered by size (1 is the smallest), on three pegs A, B and C.
Each peg is shown from bottom to top, so the last number on a peg is its top disk.
A move takes the top disk of one peg and puts it on top of another peg: "A->C" moves the top disk of A onto C. You may never put a disk on a smaller disk.
You win when every disk is on peg C. You have {limit} moves at most.
Reply with one move, for example: A->C"""


def solution(pegs: list[int] | tuple[int, ...], target: int = GOAL) -> list[tuple[int, int]]:
    """The shortest sequence of ``(from, to)`` peg moves that puts every disk on ``target``.

    ``pegs[d]`` is the peg of disk ``d`` (0 the smallest). The largest disk
    not yet on ``target`` moves once, straight there: first every smaller
    disk goes, by the same rule, to the third peg, and afterwards that tower
    goes from the third peg onto ``target`` as in the classic puzzle. This is
    the known optimal strategy towards a single tower.
    """

    def classic(count: int, source: int, dest: int) -> list[tuple[int, int]]:
        if count == 0:
            return []
        spare = 3 - source - dest
        return classic(count - 1, source, spare) + [(source, dest)] + classic(count - 1, spare, dest)

    def gather(count: int, dest: int) -> list[tuple[int, int]]:
        if count == 0:
            return []
        largest = count - 1
        if pegs[largest] == dest:
            return gather(count - 1, dest)
        spare = 3 - pegs[largest] - dest
        return gather(count - 1, spare) + [(pegs[largest], dest)] + classic(count - 1, spare, dest)

    return gather(len(pegs), target)


class TowerOfHanoi(SoloPuzzle, Game):
    """The Tower of Hanoi from a start drawn from the seed (or the classic one); see the module docstring."""

    name = "TowerOfHanoi"
    description = (
        "Move every disk onto peg C, one at a time, never a larger on a smaller, from a start drawn from the "
        "seed (classic=True: all on A); difficulty 1-5 (default 2) sets the disks (3 to 7) and the move limit."
    )

    def __init__(self, *, difficulty: int = 2, classic: bool = False):
        self.difficulty = int_option("difficulty", difficulty, 1, len(LEVELS))
        if not isinstance(classic, bool):
            raise ValueError(f"classic must be True or False, got {classic!r}")
        self.classic = classic
        self.disks = LEVELS[self.difficulty]
        self.max_moves = LIMIT_FACTOR * (2**self.disks - 1)
        self.players = ["player_0"]
        self.moves = list(MOVES)
        self.vector_size = 3 * self.disks + 1
        self.pegs: list[int] = [0] * self.disks
        self.moves_made = 0
        self.optimal = 0

    def start(self, ctx: Context) -> None:
        """Put every disk on a random peg (drawn again while that is already solved), or on A for the classic start."""
        if self.classic:
            pegs = [0] * self.disks
        else:
            pegs = [GOAL] * self.disks
            while all(peg == GOAL for peg in pegs):
                pegs = [int(peg) for peg in ctx.rng.integers(0, 3, self.disks)]
        self.pegs = pegs
        self.moves_made = 0
        self.optimal = len(solution(pegs))

    def rules(self, player: str) -> str:
        """The rules, the disks and the move limit."""
        return RULES.format(player=player, disks=self.disks, limit=self.max_moves)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The pegs, the moves left and the legal moves."""
        return f"{self.pegs_text()}\nMoves left: {self.max_moves - self.moves_made}. Legal moves: {', '.join(legal or [])}."

    def stack(self, peg: int) -> list[int]:
        """The disks on ``peg`` (numbered from 1), bottom to top."""
        return [disk + 1 for disk in range(self.disks - 1, -1, -1) if self.pegs[disk] == peg]

    def top(self, peg: int) -> int | None:
        """The index (0 the smallest) of the top disk of ``peg``, or ``None`` when it is empty."""
        return next((disk for disk in range(self.disks) if self.pegs[disk] == peg), None)

    def refusal(self, source: int, dest: int) -> str | None:
        """Why moving the top disk of ``source`` onto ``dest`` is not allowed now, or ``None`` when it is."""
        moving, below = self.top(source), self.top(dest)
        if moving is None:
            return f"Peg {PEGS[source]} is empty."
        if below is not None and below < moving:
            return f"Disk {moving + 1} cannot go on the smaller disk {below + 1} on peg {PEGS[dest]}."
        return None

    def legal_actions(self, player: str) -> list[int]:
        """The moves of a top disk onto an empty peg or a larger disk."""
        return [k for k, move in enumerate(MOVES) if self.refusal(PEGS.index(move[0]), PEGS.index(move[-1])) is None]

    def parse(self, player: str, text: str) -> str:
        """The last ``X->Y`` in the text (``X to Y``, ``X - Y`` and ``X → Y`` too), if that move is allowed."""
        found = MOVE_PATTERN.findall(text)
        if not found:
            raise InvalidMove("No move found. Reply with a move such as A->C (top disk of peg A onto peg C).")
        source, dest = (PEGS.index(peg.upper()) for peg in found[-1])
        if source == dest:
            raise InvalidMove("Move a disk to a different peg.")
        reason = self.refusal(source, dest)
        if reason is not None:
            raise InvalidMove(f"{reason} Legal moves: {', '.join(self.legal_moves(player))}.")
        return f"{PEGS[source]}->{PEGS[dest]}"

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Move the disk; win when every disk is on C, fail when the move limit runs out."""
        ((player, move),) = moves.items()
        source, dest = PEGS.index(move[0]), PEGS.index(move[-1])
        disk = self.top(source)
        assert disk is not None
        self.pegs[disk] = dest
        self.moves_made += 1
        ctx.tell(f"{player} moves disk {disk + 1} from {PEGS[source]} to {PEGS[dest]}.", kind="move", sender=player)
        if all(peg == GOAL for peg in self.pegs):
            self.solved(ctx, "every disk is on peg C")
        elif self.moves_made >= self.max_moves:
            self.failed(ctx, "the move limit ran out")

    def report(self, success: bool) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        return {
            "difficulty": self.difficulty,
            "success": success,
            "disks": self.disks,
            "moves": self.moves_made,
            "max_moves": self.max_moves,
            "optimal": self.optimal,
        }

    def view(self, player: str) -> dict[str, Any]:
        """Each peg's disks bottom to top, each disk's peg (smallest first, 0 for A), and the moves used and allowed."""
        return {
            "difficulty": self.difficulty,
            "disks": self.disks,
            "pegs": {PEGS[p]: self.stack(p) for p in range(3)},
            "positions": list(self.pegs),
            "moves": self.moves_made,
            "max_moves": self.max_moves,
        }

    def vector(self, player: str) -> np.ndarray:
        """Each disk's peg as a one-hot, smallest disk first, then the share of the move limit used."""
        values = np.zeros(self.vector_size, dtype=np.float32)
        values[[3 * disk + peg for disk, peg in enumerate(self.pegs)]] = 1.0
        values[-1] = self.moves_made / self.max_moves
        return values

    def pegs_text(self) -> str:
        """One line per peg, its disks bottom to top."""
        return "\n".join(f"{PEGS[p]}: {' '.join(map(str, self.stack(p))) or '(empty)'}" for p in range(3))

    def render(self) -> str:
        """The pegs and the moves used."""
        return f"{self.pegs_text()}\nmoves {self.moves_made}/{self.max_moves}"
