"""Oware (Abapa), with OpenSpiel's ``oware`` rules.

Each player, ``player_0`` (moves first) and ``player_1``, owns a row of
``houses`` houses (default 6), each starting with ``seeds`` seeds (default
4); OpenSpiel's options ``num_houses_per_player`` and ``num_seeds_per_house``.
A move takes all the seeds of one of the mover's houses and sows them one by
one counter-clockwise, along its own row and on round the opponent's, never
into the house they came from (so a big house laps the board). If the last
seed lands in an opponent's house that then holds 2 or 3 seeds, the mover
captures them, and the seeds of each house before it in the opponent's row,
going back, while that house also holds 2 or 3. A capture that would take
every seed of the opponent (a grand slam) captures nothing; the move stands.

When the opponent's row is empty, the mover must sow into it if it can. The
game ends as soon as a player has captured more than half the seeds (or both
exactly half); when the player to move has no legal move; when a position
(board and player to move) recurs since the last capture; or, where OpenSpiel
stops (its longest game), after 1000 moves. Then each side adds the seeds
left in its own row to those it captured. More seeds wins; equal is a draw.

Moves are ``house 1`` .. ``house N``, the mover's own houses counted in
sowing order; the ``Discrete`` index is the house number minus 1, which is
OpenSpiel's action (it writes them ``A``-``F`` for ``player_0``, ``a``-``f``
for ``player_1``). Vector observation: OpenSpiel's observation tensor turned
to the player's side, ``2 * houses + 2`` values: the player's houses, the
opponent's, the player's captured seeds, the opponent's, each over all the
seeds (for ``player_0`` exactly OpenSpiel's tensor).

Rewards (zero-sum): +1 to the winner and -1 to the loser at the last move, 0
each for a draw. A player who exceeds the invalid-action allowance gets -1 and
the opponent +1.

Batched: :class:`OwareBatch` plays N boards at once for the batched vector
face (``gymnasium.make_vec(..., obs_mode="vector")``, see
:mod:`parlour.envs.core.vector`).

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, int_option
from parlour.envs.core.vector import GameBatch, Streams
from parlour.envs.games.boards import count_rewards, finish_on_counts

#: Moves after which the game ends: OpenSpiel plays no move past its history of 1000.
MAX_MOVES = 1000
#: Seed counts an opponent's house must reach, with the last seed or behind it, to be captured.
CAPTURED = (2, 3)

RULES = """You are playing Oware (Abapa) as {player}; {first}.
Each player has a row of {houses} houses; every house starts with {seeds} seeds. Seeds move counter-clockwise: along your row from house 1 to house {houses}, then along your opponent's row and back.
On your turn take all the seeds from one of your non-empty houses and sow them one at a time into the following houses, skipping the house you emptied.
If your last seed lands in an opponent's house and brings it to 2 or 3 seeds, you capture them, and also the seeds of the opponent's houses just before it, going back, as long as each holds 2 or 3. A move that would capture all your opponent's seeds captures nothing.
If your opponent has no seeds, you must sow into its row if you can.
The game ends when a player has captured more than {half} seeds, when the player to move has no legal move, when a position repeats since the last capture, or after {limit} moves; then each player keeps the seeds left in its own row. More seeds captured wins.
Reply with the house to sow, for example: house 3"""


#: An odd 64-bit multiplier (the golden ratio's) for hashing packed positions.
HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


class OwareBatch(GameBatch):
    """Oware's rules on N boards at once (see :class:`parlour.envs.core.vector.GameBatch`).

    ``board`` ``(N, 2 houses)``, ``scores`` ``(N, 2)`` and ``played`` as in
    :class:`Oware`, and ``moves_of`` the legal houses of the seat to act,
    worked out once per move since the end needs them anyway. A sowing is one addition over the ``2 houses - 1`` places
    it passes (the emptied house left out), however many laps it makes.

    The positions since the last capture, the game's ``seen``, are kept
    exactly, each packed into a few ``uint64`` words (every house's seeds and
    the seat to move, in as many bits as the seed total needs), in a hash
    table per board: ``keys`` ``(N, slots, words)``, open addressing with
    linear probing, more than twice as many slots as a game has positions. A
    slot holds a position of the board's current ``generation`` only if its
    ``stamps`` entry says so, so that a capture or a new game empties the
    table by taking a new generation, without clearing it. A lookup then costs
    a probe or two, however long the history.
    """

    def __init__(self, game: Oware, n: int):
        super().__init__(game, n)
        houses = self.houses = game.houses
        places = self.places = 2 * houses
        self.total = game.total
        self.scale = np.float32(game.total)
        self.lap = places - 1
        #: The places sown from each house, in order: every other place, the house itself left out.
        self.sown = np.array([[(house + j) % places for j in range(1, places)] for house in range(places)], dtype=np.int64)
        #: Each seat's houses, and in vector order: own houses, then the opponent's.
        self.rows_of = np.array([[seat * houses + k for k in range(houses)] for seat in (0, 1)])
        self.vector_order = np.array([[*self.rows_of[seat], *self.rows_of[1 - seat]] for seat in (0, 1)])
        #: From the last house: a seed on it would need more than this many seeds to reach the opponent's row.
        self.reach = houses - 1 - np.arange(houses)
        bits = game.total.bit_length()
        per_word = 64 // bits
        words = -(-(places + 1) // per_word)
        self.pack_shifts = (np.arange(words * per_word) % per_word * bits).astype(np.uint64).reshape(words, per_word)
        self.opening = np.full(places, game.seeds, dtype=np.int64)
        self.board = np.zeros((n, places), dtype=np.int64)
        self.scores = np.zeros((n, 2), dtype=np.int64)
        self.played = np.zeros(n, dtype=np.int64)
        self.moves_of = np.zeros((n, houses), dtype=bool)
        # A game holds at most MAX_MOVES + 1 positions: at most half the slots are ever taken.
        self.slots = 1 << (2 * (MAX_MOVES + 1) - 1).bit_length()
        self.keys = np.zeros((n, self.slots, words), dtype=np.uint64)
        self.stamps = np.zeros((n, self.slots), dtype=np.int64)
        self.generation = np.zeros(n, dtype=np.int64)
        self._generations = 0
        self._keys = self.keys.reshape(-1, words)
        self._stamps = self.stamps.reshape(-1)
        self._slot_shift = np.uint64(64 - (self.slots.bit_length() - 1))
        self._board = self.board.reshape(-1)
        self._scores = self.scores.reshape(-1)
        self._laps = np.arange(self.lap)
        self._houses = np.arange(houses)

    def pack(self, boards: np.ndarray, turns: np.ndarray) -> np.ndarray:
        """Each position (board and seat to move) as ``(k, words)`` uint64, exactly: equal words, equal positions."""
        values = np.zeros((len(boards), self.pack_shifts.size), dtype=np.uint64)
        values[:, : self.places] = boards
        values[:, self.places] = turns
        return np.bitwise_or.reduce(values.reshape(len(boards), *self.pack_shifts.shape) << self.pack_shifts, axis=2)

    def reset(self, rows: np.ndarray, rng: Streams) -> None:
        """Every house full, nothing captured, ``player_0`` to move."""
        self.board[rows] = self.opening
        self.scores[rows] = 0
        self.played[rows] = 0
        self.turn[rows] = 0
        self.moves_of[rows] = True  # every house is full
        self.forget(rows)
        opening = np.repeat(self.pack(self.opening[None, :], np.zeros(1, dtype=np.int64)), len(rows), axis=0)
        self.remember(rows, opening, self.lookup(rows, opening)[1])

    def forget(self, rows: np.ndarray) -> None:
        """Empty the position tables of ``rows``: each takes a generation no slot holds yet."""
        self.generation[rows] = self._generations + 1 + np.arange(len(rows))
        self._generations += len(rows)

    def lookup(self, rows: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Whether each of ``positions`` ``(k, words)`` is in its board's table, and the free slot where it would go."""
        words = positions.shape[1]
        # A multiply-xorshift hash of the words; its top bits pick the first slot.
        mixed = np.zeros(len(rows), dtype=np.uint64)
        for w in range(words):
            mixed = (mixed ^ positions[:, w]) * HASH_MULTIPLIER
            mixed ^= mixed >> np.uint64(29)
        slot = (mixed * HASH_MULTIPLIER >> self._slot_shift).astype(np.int64)
        found = np.zeros(len(rows), dtype=bool)
        free = np.zeros(len(rows), dtype=np.int64)
        probing = np.arange(len(rows))
        while probing.size:
            here = rows[probing] * self.slots + slot[probing]
            taken = self._stamps[here] == self.generation[rows[probing]]
            same = taken & (self._keys[here] == positions[probing]).all(axis=1)
            found[probing[same]] = True
            free[probing[~taken]] = slot[probing[~taken]]
            probing = probing[taken & ~same]
            slot[probing] = (slot[probing] + 1) & (self.slots - 1)
        return found, free

    def remember(self, rows: np.ndarray, positions: np.ndarray, free: np.ndarray) -> None:
        """Put ``positions`` into their boards' tables, at the free slots :meth:`lookup` found."""
        here = rows * self.slots + free
        self._keys[here] = positions
        self._stamps[here] = self.generation[rows]

    def moves_for(self, boards: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """``(k, houses)``: the non-empty houses of ``seats[j]``; those that reach the opponent's row when it is empty."""
        halves = boards.reshape(len(boards), 2, self.houses)
        index = np.arange(len(boards))
        own = halves[index, seats]
        starving = (halves[index, 1 - seats] == 0).all(axis=1)
        return (own > 0) & (~starving[:, None] | (own > self.reach))

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """The mover's non-empty houses; those that reach the opponent's row when that row is empty."""
        return np.take(self.moves_of, rows, axis=0)

    def step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sow, capture, and end the game when it is decided, stuck, repeating or too long."""
        seats = self.turn[rows]
        k = len(rows)
        houses, places = self.houses, self.places
        base = rows * places
        house = seats * houses + actions
        seeds = self._board[base + house]
        self._board[base + house] = 0
        sown = self.sown[house]
        laps, rest = np.divmod(seeds, self.lap)
        self._board[base[:, None] + sown] += laps[:, None] + (self._laps < rest[:, None])
        last = sown[np.arange(k), (seeds - 1) % self.lap]
        captured = np.zeros(k, dtype=np.int64)
        there = (last // houses != seats).nonzero()[0]
        if there.size:
            # The opponent's row, and the last seed's house in it.
            cells = (base[there] + (1 - seats[there]) * houses)[:, None] + self._houses
            row = self._board[cells]
            at = (last[there] % houses)[:, None]
            upto = self._houses <= at
            # The run of 2s and 3s ends, going back from the last house, at the first house before it that breaks it.
            breaks = np.where(upto & (row != CAPTURED[0]) & (row != CAPTURED[1]), self._houses, -1).max(axis=1)
            taken = upto & (self._houses > breaks[:, None])
            # A grand slam, the whole row with nothing left beyond the last house, captures nothing.
            slam = (breaks == -1) & ~((self._houses > at) & (row > 0)).any(axis=1)
            taken &= ~slam[:, None]
            captured[there] = (row * taken).sum(axis=1)
            self._board[cells[taken]] = 0
        self._scores[2 * rows + seats] += captured
        following = 1 - seats
        self.turn[rows] = following
        played = self.played[rows] + 1
        self.played[rows] = played
        # Captured seeds never come back, so no position before a capture can recur.
        self.forget(rows[captured > 0])
        boards = np.take(self.board, rows, axis=0)
        scores = np.take(self.scores, rows, axis=0)
        position = self.pack(boards, following)
        repeated, free = self.lookup(rows, position)
        # The next seat's moves, which the end needs, are kept for legal().
        moves = self.moves_for(boards, following)
        self.moves_of[rows] = moves
        half = self.total // 2
        ended = (
            (scores.max(axis=1) > half) | ((scores[:, 0] == half) & (scores[:, 1] == half)) | repeated | ~moves.any(axis=1) | (played >= MAX_MOVES)
        )
        going = (~ended).nonzero()[0]
        self.remember(rows[going], position[going], free[going])
        rewards = np.zeros((k, 2))
        over = ended.nonzero()[0]
        if over.size:
            # Each side keeps the seeds left in its own row (as in OpenSpiel, also once the result is decided).
            final = scores[over] + boards[over][:, self.rows_of].sum(axis=2)
            self.scores[rows[over]] = final
            self.board[rows[over]] = 0
            rewards[over] = count_rewards(final[:, 0], final[:, 1])
        return rewards, ended

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Own houses, the opponent's, own captured seeds, the opponent's, over all the seeds, as :meth:`Oware.vector`."""
        values = np.empty((len(rows), self.places + 2), dtype=np.int64)
        values[:, : self.places] = self._board[(rows * self.places)[:, None] + self.vector_order[seats]]
        values[:, self.places] = self._scores[2 * rows + seats]
        values[:, self.places + 1] = self._scores[2 * rows + 1 - seats]
        return values.astype(np.float32) / self.scale


class Oware(Game):
    """Two-player Oware; see the module docstring for moves and rewards.

    ``board`` holds the seeds of the houses in OpenSpiel's order (``player_0``'s
    row, then ``player_1``'s, both in sowing order); ``scores`` the seeds each
    player captured; ``turn`` the seat to move; ``played`` the moves so far;
    ``seen`` the positions since the last capture, as ``(*board, turn)``.
    """

    name = "Oware"
    reference_agents = ("minimax", "random")
    description = (
        "Oware Abapa: sow round two rows, capture houses brought to 2 or 3, feed an empty opponent "
        "(difficulty: houses per row 2-12, seeds per house 1-12, as OpenSpiel's oware)."
    )
    zero_sum = True
    fixed_rules = True
    batch = OwareBatch

    def __init__(self, *, houses: int = 6, seeds: int = 4):
        self.houses = int_option("houses", houses, 2, 12)
        self.seeds = int_option("seeds", seeds, 1, 12)
        self.total = 2 * self.houses * self.seeds
        self.players = ["player_0", "player_1"]
        self.moves = [f"house {k}" for k in range(1, self.houses + 1)]
        self.vector_size = 2 * self.houses + 2
        self.board = [self.seeds] * (2 * self.houses)
        self.scores = [0, 0]
        self.turn = 0
        self.played = 0
        self.seen = {(*self.board, 0)}

    @classmethod
    def from_view(cls, view: dict[str, Any]) -> Oware:
        """A game in the position a player's :meth:`view` shows (nothing is hidden), for lookahead on ``clone()`` copies."""
        game = cls(houses=view["houses"], seeds=view["seeds"])
        game.board = list(view["board"])
        game.scores = list(view["scores"])
        game.turn = view["to_move"]
        game.played = view["moves_played"]
        game.seen = {tuple(position) for position in view["since_capture"]}
        return game

    def clone(self) -> Self:
        """An independent copy: the position and its history are copied; the options and move names shared."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.board = list(self.board)
        copy.scores = list(self.scores)
        copy.seen = set(self.seen)
        return copy

    def start(self, ctx: Context) -> None:
        """Every house full, nothing captured, ``player_0`` to move."""
        self.board = [self.seeds] * (2 * self.houses)
        self.scores = [0, 0]
        self.turn = 0
        self.played = 0
        self.seen = {(*self.board, 0)}

    def rules(self, player: str) -> str:
        """Rules, the board's size and the player's seat."""
        first = "you move first" if player == self.players[0] else "your opponent moves first"
        return RULES.format(player=player, first=first, houses=self.houses, seeds=self.seeds, half=self.total // 2, limit=MAX_MOVES)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The board from the player's side, the seeds captured and the legal houses."""
        return f"{self.board_text(self.players.index(player))}\nLegal moves: {', '.join(legal or [])}."

    def row(self, seat: int) -> list[int]:
        """The seeds in ``seat``'s houses, in sowing order."""
        return self.board[seat * self.houses : (seat + 1) * self.houses]

    def legal_actions(self, player: str) -> list[int]:
        """The player's non-empty houses; those that reach the opponent's row when that row is empty."""
        seat = self.players.index(player)
        own = self.row(seat)
        if any(self.row(1 - seat)):
            return [k for k, seeds in enumerate(own) if seeds]
        return [k for k, seeds in enumerate(own) if seeds > self.houses - 1 - k]

    def sow(self, house: int) -> int:
        """Sow the seeds of board place ``house`` round the board, skipping it; the place the last seed landed in."""
        board = self.board
        seeds, board[house] = board[house], 0
        place = house
        while seeds:
            place = (place + 1) % len(board)
            if place != house:
                board[place] += 1
                seeds -= 1
        return place

    def capture(self, last: int) -> int:
        """Take the run of 2s and 3s ending at ``last`` (an opponent's house), unless it is all the opponent has."""
        board = self.board
        low = last - last % self.houses
        run = last
        while run >= low and board[run] in CAPTURED:
            run -= 1
        beyond = board[last + 1 : low + self.houses]
        if run < low and not any(beyond):
            return 0  # a grand slam: the whole row would go
        captured = sum(board[run + 1 : last + 1])
        board[run + 1 : last + 1] = [0] * (last - run)
        self.scores[self.turn] += captured
        return captured

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Sow the house, capture, and end the game when it is decided, stuck, repeating or too long."""
        ((player, move),) = moves.items()
        seat = self.turn
        house = seat * self.houses + self.move_index(move)
        seeds = self.board[house]
        last = self.sow(house)
        captured = self.capture(last) if last // self.houses != seat else 0
        self.played += 1
        ctx.tell(
            f"{player} sows {move} ({seeds} seed{'s' if seeds != 1 else ''}){f', capturing {captured} seeds' if captured else ''}.",
            kind="move",
            sender=player,
        )
        self.turn = 1 - seat
        if captured:
            # Captured seeds never come back, so no position before a capture can recur.
            self.seen = set()
        position = (*self.board, self.turn)
        half = self.total // 2
        if max(self.scores) > half or self.scores == [half, half]:
            leader = self.players[self.scores.index(max(self.scores))]
            why = f"{leader} has captured more than half the seeds" if max(self.scores) > half else "both have captured half the seeds"
        elif position in self.seen:
            why = "the position repeated"
        elif not self.legal_actions(self.players[self.turn]):
            why = f"{self.players[self.turn]} has no legal move"
        elif self.played >= MAX_MOVES:
            why = f"{MAX_MOVES} moves were played"
        else:
            self.seen.add(position)
            return
        # Each side keeps the seeds left in its own row (as in OpenSpiel, also once the result is decided).
        self.scores = [self.scores[s] + sum(self.row(s)) for s in (0, 1)]
        self.board = [0] * len(self.board)
        score = f"seeds captured: {self.players[0]} {self.scores[0]}, {self.players[1]} {self.scores[1]}"
        finish_on_counts(ctx, self.players, self.scores, f"{why}; {score}")

    def view(self, player: str) -> dict:
        """The whole board in OpenSpiel's order, the seeds captured, the player's seat, whose turn it is, the moves
        played, the options and the positions since the last capture (a repeat ends the game)."""
        return {
            "board": list(self.board),
            "scores": list(self.scores),
            "seat": self.players.index(player),
            "to_move": self.turn,
            "moves_played": self.played,
            "houses": self.houses,
            "seeds": self.seeds,
            "since_capture": sorted(list(position) for position in self.seen),
        }

    def vector(self, player: str) -> np.ndarray:
        """Own houses, the opponent's, own captured seeds, the opponent's, over all the seeds."""
        seat = self.players.index(player)
        values = self.row(seat) + self.row(1 - seat) + [self.scores[seat], self.scores[1 - seat]]
        return np.asarray(values, dtype=np.float32) / self.total

    def board_text(self, seat: int) -> str:
        """The board seen from ``seat``'s side: the opponent's row on top (its last house first), the seeds captured."""
        width = len(str(self.total))
        top = " ".join(f"{seeds:>{width}}" for seeds in reversed(self.row(1 - seat)))
        bottom = " ".join(f"{seeds:>{width}}" for seeds in self.row(seat))
        return (
            f"Opponent's houses ({self.houses} to 1): {top}\n"
            f"Your houses (1 to {self.houses}):       {bottom}\n"
            f"Captured: you {self.scores[seat]}, opponent {self.scores[1 - seat]} (of {self.total} seeds)."
        )

    def render(self) -> str:
        """The board from ``player_0``'s side, player_1's row on top."""
        return (
            self.board_text(0)
            .replace("Opponent's", "player_1's")
            .replace("Your", "player_0's")
            .replace("you ", "player_0 ")
            .replace("opponent ", "player_1 ")
        )
