"""Nim.

Players ``player_0`` (moves first) and ``player_1`` take turns removing objects
from heaps: each move takes one or more objects from a single heap. Options:
``heaps`` (the initial heap sizes, default ``[3, 5, 7]``) and ``misere``
(default ``False``). In normal play whoever takes the last object wins; in
misère play whoever takes the last object loses.

Moves are ``take <count> from heap <heap>`` with heaps numbered from 1, for
example ``take 2 from heap 3``; ``remove`` is accepted for ``take`` and a
noun may follow the count (``take 2 objects from heap 3``). Reasoning around
the move is tolerated: the last well-formed move in the text counts. The
``Discrete`` actions are every (heap, count) pair up to the initial heap
sizes, heap by heap, counts ascending. Vector observation: each heap's current
size divided by its initial size.

Rewards (zero-sum): +1 to the winner and -1 to the loser at the last move. A
player who exceeds the invalid-action allowance gets -1 and the opponent +1.

Batched: :class:`NimBatch` plays N games at once for the batched vector face
(``gymnasium.make_vec(..., obs_mode="vector")``, see :mod:`parlour.envs.core.vector`).

Version history: v0, first release.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.game import Game, int_option
from parlour.envs.core.vector import GameBatch, Streams

#: Largest heap accepted, so that the move list stays small.
MAX_HEAP = 100
MAX_HEAPS = 20

MOVE_PATTERN = re.compile(r"\b(?:take|remove)\s+(\d+)\s+(?:[a-z]+\s+)?from\s+heap\s+(\d+)\b", re.IGNORECASE)

RULES = """You are playing Nim as {player}; {first}.
There are {count} heaps of objects, numbered 1 to {count}, with sizes {sizes}. Players take turns; on your turn you take one or more objects from a single heap.
{goal}
Reply with your move as "take <count> from heap <heap>", for example: take 2 from heap 3"""

GOALS = {
    False: "Whoever takes the last object wins.",
    True: "Misère rules: whoever takes the last object LOSES.",
}


def move_name(heap: int, count: int) -> str:
    """The move text for taking ``count`` objects from the 0-based ``heap``."""
    return f"take {count} from heap {heap + 1}"


class NimBatch(GameBatch):
    """Nim's rules on N games at once (see :class:`parlour.envs.core.vector.GameBatch`); ``heaps`` is ``(N, number of heaps)``."""

    def __init__(self, game: Nim, n: int):
        super().__init__(game, n)
        self.misere = game.misere
        self.initial = np.array(game.initial, dtype=np.int64)
        self.initial_sizes = self.initial.astype(np.float32)
        self.action_heaps = np.array([heap for heap, _ in game.actions], dtype=np.int64)
        self.action_counts = np.array([count for _, count in game.actions], dtype=np.int64)
        self.heaps = np.tile(self.initial, (n, 1))

    def reset(self, rows: np.ndarray, rng: Streams) -> None:
        """Full heaps, ``player_0`` to move."""
        self.heaps[rows] = self.initial
        self.turn[rows] = 0

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """Every (heap, count) with count at most the heap's current size."""
        return self.heaps[rows][:, self.action_heaps] >= self.action_counts

    def step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Remove the objects; the game ends when every heap is empty."""
        movers = self.turn[rows]
        self.heaps[rows, self.action_heaps[actions]] -= self.action_counts[actions]
        ended = ~self.heaps[rows].any(axis=1)
        self.turn[rows] = 1 - movers
        return self.wins(movers ^ int(self.misere), ended), ended

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Each heap's current size over its initial size, as :meth:`Nim.vector`."""
        return self.heaps[rows].astype(np.float32) / self.initial_sizes


class Nim(Game):
    """Nim for two players, normal or misère; see the module docstring for moves and rewards."""

    name = "Nim"
    reference_agents = ("nim_sum", "random")
    description = "Take objects from heaps in turn; whoever takes the last object wins (or loses, in misère)."
    zero_sum = True
    fixed_rules = True
    batch = NimBatch

    def __init__(self, *, heaps: Sequence[int] = (3, 5, 7), misere: bool = False):
        if isinstance(heaps, (str, bytes)) or not isinstance(heaps, Sequence) or not 1 <= len(heaps) <= MAX_HEAPS:
            raise ValueError(f"heaps must be a list of 1 to {MAX_HEAPS} heap sizes, got {heaps!r}")
        for size in heaps:
            int_option("each heap size", size, 1, MAX_HEAP)
        if not isinstance(misere, bool):
            raise ValueError(f"misere must be True or False, got {misere!r}")
        self.initial = [int(size) for size in heaps]
        self.misere = misere
        self.players = ["player_0", "player_1"]
        self.actions = [(h, c) for h, size in enumerate(self.initial) for c in range(1, size + 1)]
        self.moves: list[str] = [move_name(h, c) for h, c in self.actions]
        #: The index of each heap's first action (taking 1); the heap's action taking ``c`` is ``c - 1`` further.
        self._first_action = [self.actions.index((h, 1)) for h in range(len(self.initial))]
        width = max(self.initial)
        #: ``_heap_lines[h][size]``: heap ``h``'s line of :meth:`heaps_text` at that size, drawn once, since a text
        #: episode shows the heaps every move.
        self._heap_lines = [
            [f"heap {h + 1}: {'|' * size:<{width}} ({size})" for size in range(initial + 1)] for h, initial in enumerate(self.initial)
        ]
        self.vector_size = len(self.initial)
        self.heaps = list(self.initial)
        self.turn = 0

    def start(self, ctx: Context) -> None:
        """Full heaps, ``player_0`` to move."""
        self.heaps = list(self.initial)
        self.turn = 0

    def rules(self, player: str) -> str:
        """Rules, heap sizes and the player's seat."""
        first = "you move first" if player == self.players[0] else "your opponent moves first"
        sizes = ", ".join(str(size) for size in self.initial)
        return RULES.format(player=player, first=first, count=len(self.initial), sizes=sizes, goal=GOALS[self.misere])

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The heaps now."""
        return f"Heaps now:\n{self.heaps_text()}\nYour move (take <count> from heap <heap>)."

    def legal_actions(self, player: str) -> list[int]:
        """Every (heap, count) with count at most the heap's current size."""
        return self.legal_indexed_moves(player)[0]

    def legal_indexed_moves(self, player: str) -> tuple[list[int], list[str]]:
        """The legal moves (see :meth:`legal_actions`) and their names: each heap's are one run of indices, their names a slice."""
        first, moves = self._first_action, self.moves
        actions: list[int] = []
        names: list[str] = []
        for start, size in zip(first, self.heaps):
            if size:
                actions += range(start, start + size)
                names += moves[start : start + size]
        return actions, names

    def parse(self, player: str, text: str) -> str:
        """The last ``take <count> from heap <heap>`` in the text, if it is legal now."""
        found = MOVE_PATTERN.findall(text)
        if not found:
            raise InvalidMove('No move found. Reply with "take <count> from heap <heap>", for example: take 1 from heap 1.')
        count, heap = (int(value) for value in found[-1])
        if not 1 <= heap <= len(self.heaps):
            raise InvalidMove(f"There is no heap {heap}; heaps are numbered 1 to {len(self.heaps)}.")
        if self.heaps[heap - 1] == 0:
            raise InvalidMove(f"Heap {heap} is empty; take from a heap that has objects.")
        if not 1 <= count <= self.heaps[heap - 1]:
            raise InvalidMove(f"Heap {heap} has {self.heaps[heap - 1]} object(s); take between 1 and {self.heaps[heap - 1]}.")
        return move_name(heap - 1, count)

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Remove the objects; the game ends when every heap is empty."""
        ((player, move),) = moves.items()
        heap, count = self.actions[self.move_index(move)]
        self.heaps[heap] -= count
        ctx.tell(f"{player} takes {count} from heap {heap + 1}.", kind="move", sender=player)
        if any(self.heaps):
            self.turn = 1 - self.turn
            return
        other = self.other(player)
        winner, loser = (other, player) if self.misere else (player, other)
        ctx.finish({winner: 1.0, loser: -1.0}, winners=[winner], reason=f"{player} took the last object")

    def view(self, player: str) -> dict:
        """Heap sizes, the rule variant, the player's seat and whose turn it is."""
        return {"heaps": list(self.heaps), "misere": self.misere, "seat": self.players.index(player), "to_move": self.turn}

    def vector(self, player: str) -> np.ndarray:
        """Each heap's current size over its initial size."""
        return (np.asarray(self.heaps, dtype=np.float32) / np.asarray(self.initial, dtype=np.float32)).astype(np.float32)

    def heaps_text(self) -> str:
        """One line per heap: its number, its objects drawn as bars, and its size."""
        lines = self._heap_lines
        return "\n".join([lines[h][size] for h, size in enumerate(self.heaps)])

    def render(self) -> str:
        """The heaps and the rule variant."""
        variant = "misère" if self.misere else "normal play"
        return f"{self.heaps_text()}\n({variant})"
