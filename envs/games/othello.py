"""Othello (Reversi).

Players ``player_0`` (X, black, moves first) and ``player_1`` (O, white) take
turns placing a disc on an 8x8 board that starts with two discs each in the
centre (O on d4 and e5, X on e4 and d5). A disc must outflank: in at least one
of the eight directions it closes a straight, unbroken run of opponent discs
with another disc of the mover's, and every run it closes this way flips to
the mover's colour. A player with no such move must pass (``pass`` is then
its only legal move); the game ends when neither player can move, and the
player with more discs wins (equal counts: a draw).

Moves are cell names ``a1`` .. ``h8`` (column letter, row number, row 1 on
top) and ``pass``; the ``Discrete`` index of cell (row r, column c) is
``8 * r + c`` and ``pass`` is 64, as in OpenSpiel's ``othello``. Vector
observation: 128 values, the player's own discs then the opponent's,
row-major.

Rewards (zero-sum): +1 to the winner and -1 to the loser at the last move, 0
each for a draw. A player who exceeds the invalid-action allowance gets -1 and
the opponent +1.

The state is two 64-bit bitboards (bit ``8 * r + c`` is the cell), so a copy
for search costs two ints.

Batched: :class:`OthelloBatch` plays N boards at once for the batched vector
face (``gymnasium.make_vec(..., obs_mode="vector")``, see
:mod:`parlour.envs.core.vector`), on the same bitboards as ``uint64`` arrays.

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game
from parlour.envs.core.vector import GameBatch, Streams
from parlour.envs.games.boards import unpack_bits

SIZE = 8
CELLS = [f"{'abcdefgh'[i % SIZE]}{i // SIZE + 1}" for i in range(SIZE * SIZE)]
PASS = SIZE * SIZE
MARKS = ("X", "O")
COLOURS = ("black", "white")
FULL = (1 << 64) - 1
NOT_A = FULL & ~sum(1 << (r * SIZE) for r in range(SIZE))  # no disc in column a
NOT_H = FULL & ~sum(1 << (r * SIZE + SIZE - 1) for r in range(SIZE))  # no disc in column h
#: (shift, mask) per direction: a positive shift moves a bitboard left by that many bits, a negative one right; the
#: mask clears what wrapped round from one edge column to the other.
DIRECTIONS = ((1, NOT_A), (-1, NOT_H), (SIZE, FULL), (-SIZE, FULL), (SIZE + 1, NOT_A), (SIZE - 1, NOT_H), (-SIZE + 1, NOT_A), (-SIZE - 1, NOT_H))
#: The opening position: X on e4 and d5, O on d4 and e5.
START = (1 << 28 | 1 << 35, 1 << 27 | 1 << 36)

RULES = """You are playing Othello as {mark} ({colour}, {player}); {first}.
The board has 8 rows and 8 columns and starts with two discs each in the centre. On your turn place one of your discs on an empty cell so that it outflanks: in at least one of the eight directions (horizontal, vertical, diagonal) it closes a straight, unbroken line of your opponent's discs with another of your own discs. Every line it closes this way flips to your colour.
If you have no such move you must pass; the only legal move is then: pass. The game ends when neither player can move. The player with more discs wins; equal counts are a draw.
Cells are named by column letter and row number: a1 is the top-left cell, h8 the bottom-right.
Reply with the cell you choose, for example: d3"""


def shift(bits: int, step: int, mask: int) -> int:
    """``bits`` moved one step in a direction (see :data:`DIRECTIONS`), without wrapping round the board."""
    return ((bits << step) if step > 0 else (bits >> -step)) & mask


def legal_bits(own: int, opponent: int) -> int:
    """The empty cells where a disc of ``own`` outflanks ``opponent``, as a bitboard."""
    empty = FULL & ~(own | opponent)
    legal = 0
    for step, mask in DIRECTIONS:
        run = shift(own, step, mask) & opponent
        # A run of opponent discs is at most six long on an 8-wide board.
        for _ in range(SIZE - 3):
            run |= shift(run, step, mask) & opponent
        legal |= shift(run, step, mask) & empty
    return legal


def flips(own: int, opponent: int, cell: int) -> int:
    """The opponent discs that a disc of ``own`` on ``cell`` flips, as a bitboard."""
    flipped = 0
    start = 1 << cell
    for step, mask in DIRECTIONS:
        run = 0
        bit = shift(start, step, mask)
        while bit & opponent:
            run |= bit
            bit = shift(bit, step, mask)
        if bit & own:
            flipped |= run
    return flipped


def cells_of(bits: int) -> list[int]:
    """The cells of a bitboard, in index order."""
    cells = []
    while bits:
        low = bits & -bits
        cells.append(low.bit_length() - 1)
        bits ^= low
    return cells


#: :data:`DIRECTIONS` as numpy columns for many boards at once: the four that shift left (to higher cells) and the
#: four that shift right, each with the mask of what may land, so that one ``(8, k)`` array steps every direction.
LEFT_SHIFTS = np.array([1, SIZE, SIZE + 1, SIZE - 1], dtype=np.uint64)[:, None]
LEFT_MASKS = np.array([NOT_A, FULL, NOT_A, NOT_H], dtype=np.uint64)[:, None]
RIGHT_SHIFTS = np.array([1, SIZE, SIZE - 1, SIZE + 1], dtype=np.uint64)[:, None]
RIGHT_MASKS = np.array([NOT_H, FULL, NOT_A, NOT_H], dtype=np.uint64)[:, None]
#: Each move index's bit (``pass`` has none).
MOVE_BITS = np.array([1 << cell for cell in range(SIZE * SIZE)] + [0], dtype=np.uint64)


def step_all(bits: np.ndarray) -> np.ndarray:
    """``bits`` moved one step in every direction: ``(8, k)`` from ``(k,)`` (one row per direction) or from ``(8, k)``."""
    moved = np.empty((8, bits.shape[-1]), dtype=np.uint64)
    left, right = (bits[:4], bits[4:]) if bits.ndim == 2 else (bits, bits)
    np.bitwise_and(left << LEFT_SHIFTS, LEFT_MASKS, out=moved[:4])
    np.bitwise_and(right >> RIGHT_SHIFTS, RIGHT_MASKS, out=moved[4:])
    return moved


def runs_from(start: np.ndarray, opponent: np.ndarray) -> np.ndarray:
    """``(8, k)``: per direction, the unbroken run of ``opponent`` discs next to each ``start`` disc, going that way."""
    run = step_all(start) & opponent
    # A run of opponent discs is at most six long on an 8-wide board.
    for _ in range(SIZE - 3):
        run |= step_all(run) & opponent
    return run


def batch_legal_bits(own: np.ndarray, opponent: np.ndarray) -> np.ndarray:
    """:func:`legal_bits` of many positions: ``(k,)`` uint64 bitboards in, ``(k,)`` out."""
    empty = ~(own | opponent)
    return np.bitwise_or.reduce(step_all(runs_from(own, opponent)) & empty, axis=0)


class OthelloBatch(GameBatch):
    """Othello's rules on N boards at once (see :class:`parlour.envs.core.vector.GameBatch`).

    ``discs`` is ``(N, 2)`` uint64, X's and O's bitboards as in :class:`Othello`,
    and ``legal_cells`` ``(N,)`` the bitboard of the legal cells of the seat to
    act (0: it must pass), worked out once per move as the game does. Every
    direction is stepped at once as the rows of an ``(8, k)`` array.
    """

    def __init__(self, game: Othello, n: int):
        super().__init__(game, n)
        self.discs = np.zeros((n, 2), dtype=np.uint64)
        self.legal_cells = np.zeros(n, dtype=np.uint64)
        self._discs = self.discs.reshape(-1)
        self._start = np.array(START, dtype=np.uint64)
        self._start_legal = np.uint64(legal_bits(*START))

    def reset(self, rows: np.ndarray, rng: Streams) -> None:
        """The opening position, X to move."""
        self.discs[rows] = self._start
        self.legal_cells[rows] = self._start_legal
        self.turn[rows] = 0

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """The outflanking cells, or ``pass`` alone where there are none."""
        cells = self.legal_cells[rows]
        legal = np.empty((len(rows), PASS + 1), dtype=bool)
        legal[:, :PASS] = unpack_bits(cells[:, None]).view(bool)
        legal[:, PASS] = cells == 0
        return legal

    def step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Place and flip (or pass); the game ends when neither seat can move, more discs winning."""
        marks = self.turn[rows]
        mine, theirs = 2 * rows + marks, 2 * rows + 1 - marks
        own, opponent = self._discs[mine], self._discs[theirs]
        placed = MOVE_BITS[actions]
        # The run in a direction flips where the disc after it is the mover's; a pass places nothing and flips nothing.
        run = runs_from(placed, opponent)
        flipped = np.bitwise_or.reduce(np.where((step_all(run) & own) != 0, run, np.uint64(0)), axis=0)
        own = own | flipped | placed
        opponent = opponent & ~flipped
        self._discs[mine] = own
        self._discs[theirs] = opponent
        self.turn[rows] = 1 - marks
        following = batch_legal_bits(opponent, own)
        self.legal_cells[rows] = following
        ended = following == 0
        stuck = ended.nonzero()[0]
        if stuck.size:
            ended[stuck] = batch_legal_bits(own[stuck], opponent[stuck]) == 0
        rewards = np.zeros((len(rows), 2))
        over = ended.nonzero()[0]
        if over.size:
            # The mover's count against the other's, turned to X's and O's.
            lead = np.sign(np.bitwise_count(own[over]).astype(np.int64) - np.bitwise_count(opponent[over]).astype(np.int64))
            first = np.where(marks[over] == 0, lead, -lead)
            rewards[over, 0] = first
            rewards[over, 1] = -first
        return rewards, ended

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Own discs then opponent discs, row-major, as :meth:`Othello.vector`."""
        pairs = np.stack([self._discs[2 * rows + seats], self._discs[2 * rows + 1 - seats]], axis=1)
        return unpack_bits(pairs).astype(np.float32)


class Othello(Game):
    """Othello for two players; see the module docstring for moves and rewards.

    ``discs`` holds X's and O's bitboards; ``turn`` is the mark to move and
    ``legal`` the bitboard of its legal cells (0: it must pass), worked out
    once per position by :meth:`apply`.
    """

    name = "Othello"
    reference_agents = ("minimax", "random")
    description = "Reversi on 8x8: outflank and flip the opponent's discs; more discs at the end wins."
    zero_sum = True
    fixed_rules = True
    batch = OthelloBatch

    def __init__(self) -> None:
        self.players = ["player_0", "player_1"]
        self.moves = CELLS + ["pass"]
        self.vector_size = 2 * SIZE * SIZE
        self.discs = list(START)
        self.turn = 0
        self.legal = legal_bits(*START)

    @classmethod
    def from_view(cls, view: dict[str, Any]) -> Othello:
        """A game in the position a player's :meth:`view` shows (nothing is hidden), for lookahead on ``clone()`` copies."""
        game = cls()
        discs = [0, 0]
        for row, cells in enumerate(view["board"]):
            for column, mark in enumerate(cells):
                if mark != -1:
                    discs[mark] |= 1 << (row * SIZE + column)
        game.discs = discs
        game.turn = view["to_move"]
        game.legal = legal_bits(discs[game.turn], discs[1 - game.turn])
        return game

    def clone(self) -> Self:
        """An independent copy: the position is copied, the move names (never changed after ``__init__``) shared."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.discs = list(self.discs)
        return copy

    def start(self, ctx: Context) -> None:
        """The opening position, X to move."""
        self.discs = list(START)
        self.turn = 0
        self.legal = legal_bits(*START)

    def rules(self, player: str) -> str:
        """Rules and the player's colour."""
        index = self.players.index(player)
        first = "you move first" if index == 0 else "your opponent moves first"
        return RULES.format(mark=MARKS[index], colour=COLOURS[index], player=player, first=first)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The board, the disc counts and the legal moves."""
        me = self.players.index(player)
        x, o = (bits.bit_count() for bits in self.discs)
        return f"Board:\n{self.board_text()}\nDiscs: X {x}, O {o}. You are {MARKS[me]}. Legal moves: {', '.join(legal or [])}."

    def legal_actions(self, player: str) -> list[int]:
        """The outflanking cells, or ``pass`` when there are none."""
        return cells_of(self.legal) if self.legal else [PASS]

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Place the disc and flip what it outflanks (or pass); end the game when neither player can move."""
        ((player, move),) = moves.items()
        mark = self.turn
        index = self.move_index(move)
        if index == PASS:
            ctx.tell(f"{player} ({MARKS[mark]}) has no legal move and passes.", kind="move", sender=player)
        else:
            own, opponent = self.discs[mark], self.discs[1 - mark]
            flipped = flips(own, opponent, index)
            self.discs[mark] = own | flipped | 1 << index
            self.discs[1 - mark] = opponent & ~flipped
            count = flipped.bit_count()
            ctx.tell(f"{player} ({MARKS[mark]}) plays {move}, flipping {count} disc{'s' if count != 1 else ''}.", kind="move", sender=player)
        self.turn = 1 - mark
        self.legal = legal_bits(self.discs[self.turn], self.discs[mark])
        if self.legal or legal_bits(self.discs[mark], self.discs[self.turn]):
            return
        x, o = (bits.bit_count() for bits in self.discs)
        score = f"X {x}, O {o}"
        if x == o:
            ctx.finish(reason=f"neither player can move; {score}: a draw")
        else:
            winner = self.players[0 if x > o else 1]
            ctx.finish({winner: 1.0, self.other(winner): -1.0}, winners=[winner], reason=f"neither player can move; {score}")

    @property
    def board(self) -> list[list[int]]:
        """The board as rows of marks (``board[r][c]``: -1 empty, 0 X, 1 O; row 0 is row 1, on top), built afresh."""
        x, o = self.discs
        return [[0 if x >> (r * SIZE + c) & 1 else 1 if o >> (r * SIZE + c) & 1 else -1 for c in range(SIZE)] for r in range(SIZE)]

    def view(self, player: str) -> dict:
        """The board (-1 empty, 0 X, 1 O; row 0 on top), the player's mark and whose turn it is."""
        return {"board": self.board, "mark": self.players.index(player), "to_move": self.turn}

    def vector(self, player: str) -> np.ndarray:
        """Own discs then opponent discs, row-major."""
        me = self.players.index(player)
        raw = self.discs[me].to_bytes(8, "little") + self.discs[1 - me].to_bytes(8, "little")
        return np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little").astype(np.float32)

    def board_text(self) -> str:
        """The board with coordinates, ``.`` for an empty cell."""
        x, o = self.discs
        lines = ["  a b c d e f g h"]
        for r in range(SIZE):
            cells = ("X" if x >> (r * SIZE + c) & 1 else "O" if o >> (r * SIZE + c) & 1 else "." for c in range(SIZE))
            lines.append(f"{r + 1} {' '.join(cells)}")
        return "\n".join(lines)

    def render(self) -> str:
        """The board."""
        return self.board_text()
