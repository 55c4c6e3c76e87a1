"""Mancala (Kalah), with OpenSpiel's ``mancala`` rules.

Each player, ``player_0`` (moves first) and ``player_1``, owns a row of six
pits and a store to its right; every pit starts with ``seeds`` seeds
(default 4, OpenSpiel's game; Kalah is also played with 3 to 6). A move
takes all the seeds of one of the mover's non-empty pits and sows them one
by one counter-clockwise: along its own row towards its store, into its
store, then along the opponent's row, skipping the opponent's store. If the
last seed lands in the mover's store, the mover moves again. If it lands in
an empty pit of the mover's own row and the opposite pit holds seeds, both
that seed and the opposite pit's seeds go to the mover's store. The game
ends as soon as either row is empty (or after 1001 moves, as in OpenSpiel);
the seeds left on each side go to that side's owner, and the player with
more seeds wins (equal: a draw).

Moves are ``pit 1`` .. ``pit 6``, the mover's own pits counted in sowing
order (pit 6 is next to its store); the ``Discrete`` index is the pit number
minus 1 (OpenSpiel's action is the pit's index on its 14-place board:
``pit k`` is ``k`` for ``player_0`` and ``7 + k`` for ``player_1``).
Vector observation: 14 values, the mover's view: own pits 1-6, own store,
opponent's pits 1-6, opponent's store, each over the seeds in play.

Rewards (zero-sum): +1 to the winner and -1 to the loser at the last move, 0
each for a draw. A player who exceeds the invalid-action allowance gets -1 and
the opponent +1.

Batched: :class:`MancalaBatch` plays N boards at once for the batched vector
face (``gymnasium.make_vec(..., obs_mode="vector")``, see
:mod:`parlour.envs.core.vector`).

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, int_option
from parlour.envs.core.vector import GameBatch, Streams
from parlour.envs.games.boards import count_rewards, finish_on_counts

PITS = 6
#: Board places as OpenSpiel lays them out: 0 is player_1's store, 1-6 player_0's pits, 7 player_0's store, 8-13 player_1's pits.
PLACES = 2 * PITS + 2
STORES = (PITS + 1, 0)
#: Moves played when the game is cut off: OpenSpiel's state is terminal once its move number passes 1000.
MAX_MOVES = 1001

RULES = """You are playing Mancala (Kalah) as {player}; {first}.
Each player has a row of 6 pits and a store at the right end of its row; every pit starts with {seeds} seeds.
On your turn take all the seeds from one of your non-empty pits and sow them one at a time, counter-clockwise: along your row towards your store, into your store, then along your opponent's row (skipping your opponent's store) and back round.
If your last seed lands in your store, you move again. If it lands in an empty pit on your side and the pit opposite holds seeds, that seed and all the seeds opposite go into your store.
The game ends when either row is empty; the seeds left on each side go to that side's owner. More seeds wins.
Your pits are numbered 1 to 6 in sowing order (pit 6 is next to your store). Reply with the pit to sow, for example: pit 3"""


def first_pit(seat: int) -> int:
    """The board place of ``pit 1`` of the player in ``seat``."""
    return 1 + seat * (PITS + 1)


#: The places a sowing passes, per seat and pit: the 13 places after the pit, the opponent's store left out (the
#: pit itself last), so that ``seeds`` seeds give ``seeds // 13`` to each and one more to the first ``seeds % 13``.
SOWN = np.array(
    [
        [
            [place % PLACES for place in range(first_pit(seat) + k + 1, first_pit(seat) + k + PLACES + 1) if place % PLACES != STORES[1 - seat]]
            for k in range(PITS)
        ]
        for seat in (0, 1)
    ],
    dtype=np.int64,
)
LAP = PLACES - 1
#: Each seat's pits, and its places in vector order: own pits and store, then the opponent's.
PITS_OF = np.array([[first_pit(seat) + k for k in range(PITS)] for seat in (0, 1)])
VECTOR_ORDER = np.array([[*PITS_OF[seat], STORES[seat], *PITS_OF[1 - seat], STORES[1 - seat]] for seat in (0, 1)])


class MancalaBatch(GameBatch):
    """Mancala's rules on N boards at once (see :class:`parlour.envs.core.vector.GameBatch`).

    ``board`` is ``(N, 14)`` in OpenSpiel's layout as in :class:`Mancala`, and
    ``played`` the moves so far. A sowing is one addition over the 13 places it
    passes (:data:`SOWN`), however many laps it makes.
    """

    def __init__(self, game: Mancala, n: int):
        super().__init__(game, n)
        self.opening = np.array(game.initial_board(), dtype=np.int64)
        self.scale = np.float32(2 * PITS * game.seeds)
        self.board = np.zeros((n, PLACES), dtype=np.int64)
        self.played = np.zeros(n, dtype=np.int64)
        self._board = self.board.reshape(-1)
        self._laps = np.arange(LAP)

    def reset(self, rows: np.ndarray, rng: Streams) -> None:
        """Full pits, empty stores, ``player_0`` to move."""
        self.board[rows] = self.opening
        self.played[rows] = 0
        self.turn[rows] = 0

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """The mover's non-empty pits."""
        return self._board[(rows * PLACES)[:, None] + PITS_OF[self.turn[rows]]] > 0

    def step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sow, capture, give another move on a last seed in the store; the game ends when a row is empty."""
        seats = self.turn[rows]
        k = len(rows)
        base = rows * PLACES
        pit = base + first_pit(0) + seats * (PITS + 1) + actions
        seeds = self._board[pit]
        self._board[pit] = 0
        sown = SOWN[seats, actions]
        laps, rest = np.divmod(seeds, LAP)
        self._board[base[:, None] + sown] += laps[:, None] + (self._laps < rest[:, None])
        last = sown[np.arange(k), (seeds - 1) % LAP]
        # A last seed alone in an own pit takes the opposite pit's seeds with it, if there are any.
        own_pit = (last >= first_pit(0) + seats * (PITS + 1)) & (last < first_pit(0) + seats * (PITS + 1) + PITS)
        # Taken modulo the board only so that a last seed in a store (never an own pit) indexes it too.
        opposite = base + (PLACES - last) % PLACES
        taken = own_pit & (self._board[base + last] == 1) & (self._board[opposite] > 0)
        store = base + np.where(seats == 0, STORES[0], STORES[1])
        hit = taken.nonzero()[0]
        self._board[store[hit]] += self._board[opposite[hit]] + 1
        self._board[base[hit] + last[hit]] = 0
        self._board[opposite[hit]] = 0
        again = last == store - base
        self.turn[rows] = np.where(again, seats, 1 - seats)
        played = self.played[rows] + 1
        self.played[rows] = played
        boards = np.take(self.board, rows, axis=0)
        sides = boards[:, PITS_OF].sum(axis=2)
        ended = (sides == 0).any(axis=1) | (played >= MAX_MOVES)
        rewards = np.zeros((k, 2))
        over = ended.nonzero()[0]
        if over.size:
            totals = boards[over][:, list(STORES)] + sides[over]
            rewards[over] = count_rewards(totals[:, 0], totals[:, 1])
        return rewards, ended

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Own pits and store, then the opponent's, over the seeds in play, as :meth:`Mancala.vector`."""
        return self._board[(rows * PLACES)[:, None] + VECTOR_ORDER[seats]].astype(np.float32) / self.scale


class Mancala(Game):
    """Two-player Kalah; see the module docstring for moves and rewards.

    ``board`` holds the seeds of the 14 places in OpenSpiel's layout; ``turn``
    is the seat to move and ``played`` the number of moves so far.
    """

    name = "Mancala"
    reference_agents = ("minimax", "random")
    mutable_state = ("board",)
    description = "Kalah: sow seeds round six pits a side, capture opposite, last seed in your store moves again."
    zero_sum = True
    fixed_rules = True
    batch = MancalaBatch

    def __init__(self, *, seeds: int = 4):
        self.seeds = int_option("seeds", seeds, 1, 12)
        self.players = ["player_0", "player_1"]
        self.moves = [f"pit {k}" for k in range(1, PITS + 1)]
        self.vector_size = PLACES
        self.board = self.initial_board()
        self.turn = 0
        self.played = 0

    def initial_board(self) -> list[int]:
        """``seeds`` in every pit, both stores empty."""
        return [0 if place in STORES else self.seeds for place in range(PLACES)]

    @classmethod
    def from_view(cls, view: dict[str, Any]) -> Mancala:
        """A game in the position a player's :meth:`view` shows (nothing is hidden), for lookahead on ``clone()`` copies."""
        game = cls(seeds=view["seeds"])
        game.board = list(view["board"])
        game.turn = view["to_move"]
        game.played = view["moves_played"]
        return game

    def start(self, ctx: Context) -> None:
        """Full pits, empty stores, ``player_0`` to move."""
        self.board = self.initial_board()
        self.turn = 0
        self.played = 0

    def rules(self, player: str) -> str:
        """Rules, the seeds per pit and the player's seat."""
        first = "you move first" if player == self.players[0] else "your opponent moves first"
        return RULES.format(player=player, first=first, seeds=self.seeds)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The board from the player's side and its legal pits."""
        return f"{self.board_text(self.players.index(player))}\nLegal moves: {', '.join(legal or [])}."

    def legal_actions(self, player: str) -> list[int]:
        """The player's non-empty pits."""
        base = first_pit(self.players.index(player))
        return [k for k in range(PITS) if self.board[base + k]]

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Sow the pit, capture, give another move on a last seed in the store; end when a row is empty."""
        ((player, move),) = moves.items()
        seat = self.turn
        board = self.board
        place = first_pit(seat) + self.move_index(move)
        store, skipped = STORES[seat], STORES[1 - seat]
        seeds, board[place] = board[place], 0
        for _ in range(seeds):
            place = (place + 1) % PLACES
            if place == skipped:
                place = (place + 1) % PLACES
            board[place] += 1
        opposite = PLACES - place
        event = ""
        if board[place] == 1 and first_pit(seat) <= place < first_pit(seat) + PITS and board[opposite]:
            captured = board[opposite]
            board[store] += captured + 1
            board[place] = board[opposite] = 0
            event = f", capturing {captured} seed{'s' if captured != 1 else ''}"
        again = place == store
        self.played += 1
        ctx.tell(
            f"{player} sows {move} ({seeds} seed{'s' if seeds != 1 else ''}){event}{' and moves again' if again else ''}.", kind="move", sender=player
        )
        if not again:
            self.turn = 1 - seat
        rows = [sum(board[first_pit(s) : first_pit(s) + PITS]) for s in (0, 1)]
        if all(rows) and self.played < MAX_MOVES:
            return
        totals = [board[STORES[s]] + rows[s] for s in (0, 1)]
        why = "a row is empty" if not all(rows) else f"{MAX_MOVES} moves were played"
        score = f"seeds: {self.players[0]} {totals[0]}, {self.players[1]} {totals[1]}"
        finish_on_counts(ctx, self.players, totals, f"{why}; {score}")

    def view(self, player: str) -> dict:
        """The whole board in OpenSpiel's layout, the player's seat, whose turn it is, the moves played and the seeds per pit."""
        return {"board": list(self.board), "seat": self.players.index(player), "to_move": self.turn, "moves_played": self.played, "seeds": self.seeds}

    def vector(self, player: str) -> np.ndarray:
        """Own pits and store, then the opponent's, over the seeds in play."""
        seat = self.players.index(player)
        order = [first_pit(seat) + k for k in range(PITS)] + [STORES[seat]]
        order += [first_pit(1 - seat) + k for k in range(PITS)] + [STORES[1 - seat]]
        return np.asarray([self.board[place] for place in order], dtype=np.float32) / (2 * PITS * self.seeds)

    def board_text(self, seat: int) -> str:
        """The board seen from ``seat``'s side: the opponent's row on top (its pit 6 to pit 1), stores at the ends."""
        own, other = first_pit(seat), first_pit(1 - seat)
        top = " ".join(f"{self.board[other + k]:>2}" for k in reversed(range(PITS)))
        bottom = " ".join(f"{self.board[own + k]:>2}" for k in range(PITS))
        return (
            f"Opponent's pits (6 to 1): {top}\n"
            f"Opponent's store: {self.board[STORES[1 - seat]]}    Your store: {self.board[STORES[seat]]}\n"
            f"Your pits (1 to 6):       {bottom}"
        )

    def render(self) -> str:
        """The board from ``player_0``'s side, player_1's row on top."""
        return self.board_text(0).replace("Opponent's", "player_1's").replace("Your", "player_0's")
