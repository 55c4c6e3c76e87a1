"""Dots and Boxes.

Players ``player_0`` (moves first) and ``player_1`` take turns drawing one
line between two neighbouring dots of a grid of ``num_rows`` x ``num_cols``
boxes (default 3x3, so 4x4 dots; OpenSpiel's ``dots_and_boxes`` options of
the same names, whose default is 2x2). A player who draws the fourth side of
a box wins that box and must draw again; otherwise the turn passes. When
every line is drawn, the player with more boxes wins (equal counts: a draw).

Dots are named by column letter and row number (``a1`` top-left). A move
names the two dots of a line, left to right or top to bottom: ``a1-b1``
(horizontal), ``a1-a2`` (vertical); the dots may come in either order and
with a space or nothing between them. The ``Discrete`` actions follow
OpenSpiel: the horizontal lines row by row (``(num_cols) * r + c`` for the
line from dot (r, c) to (r, c+1)), then the vertical lines row by row.
Vector observation: one value per line (drawn or not), then one per box for
the player's own boxes and one per box for the opponent's.

Rewards (zero-sum): +1 to the winner and -1 to the loser at the last line, 0
each for a draw (OpenSpiel's ``utility_margin=False``). A player who exceeds
the invalid-action allowance gets -1 and the opponent +1.

Batched: :class:`DotsAndBoxesBatch` plays N grids at once for the batched
vector face (``gymnasium.make_vec(..., obs_mode="vector")``, see
:mod:`parlour.envs.core.vector`).

Version history: v0, first release.
"""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple, Self

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.game import Game, int_option
from parlour.envs.core.vector import GameBatch, Streams
from parlour.envs.games.boards import count_rewards, finish_on_counts

MAX_SIDE = 10
DOT = r"[a-z]\d{1,2}"
LINE = re.compile(rf"(?<![\w])({DOT})\s*(?:-|–|to)?\s*({DOT})(?![\w])", re.IGNORECASE)

RULES = """You are playing Dots and Boxes as {player}; {first}.
The grid has {rows} rows and {columns} columns of boxes, so {dot_rows} rows and {dot_columns} columns of dots. Dots are named by column letter and row number: a1 is the top-left dot, {corner} the bottom-right.
Players take turns drawing one line between two neighbouring dots, horizontally or vertically. Whoever draws the fourth side of a box wins that box and must draw another line; otherwise the turn passes. When every line is drawn, the player with more boxes wins; equal counts are a draw.
Reply with the two dots of the line you draw, for example: a1-b1"""


def dot_name(row: int, column: int) -> str:
    """The name of the dot in ``row`` and ``column`` (0-based, row 0 on top)."""
    return f"{chr(ord('a') + column)}{row + 1}"


class Layout(NamedTuple):
    """What a grid fixes (:func:`layout`): the line names, the boxes beside each line, and the four lines of each box."""

    names: tuple[str, ...]
    beside: tuple[tuple[int, ...], ...]
    sides: tuple[tuple[int, ...], ...]


@functools.cache
def layout(rows: int, columns: int) -> Layout:
    """What a grid fixes, worked out once per size: the line names in OpenSpiel's order, the boxes beside each line,
    and the four lines of each box."""
    horizontal = (rows + 1) * columns
    names = [f"{dot_name(r, c)}-{dot_name(r, c + 1)}" for r in range(rows + 1) for c in range(columns)]
    names += [f"{dot_name(r, c)}-{dot_name(r + 1, c)}" for r in range(rows) for c in range(columns + 1)]
    sides = tuple(
        (r * columns + c, (r + 1) * columns + c, horizontal + r * (columns + 1) + c, horizontal + r * (columns + 1) + c + 1)
        for r in range(rows)
        for c in range(columns)
    )
    beside: list[list[int]] = [[] for _ in names]
    for box, lines in enumerate(sides):
        for line in lines:
            beside[line].append(box)
    return Layout(tuple(names), tuple(tuple(boxes) for boxes in beside), sides)


class DotsAndBoxesBatch(GameBatch):
    """Dots and Boxes' rules on N grids at once (see :class:`parlour.envs.core.vector.GameBatch`).

    ``lines`` ``(N, lines + 1)`` bool and ``owners`` ``(N, boxes + 1)`` int8 as
    in :class:`DotsAndBoxes`, each with one more entry that stands for "none":
    a line on the grid's edge has that box on its outer side, whose sides
    include that line, never drawn, so it never closes. ``drawn`` counts
    each grid's lines.
    """

    def __init__(self, game: DotsAndBoxes, n: int):
        super().__init__(game, n)
        self.n_lines, self.n_boxes = len(game.moves), len(game._sides)
        #: The (one or two) boxes beside each line, then each box's four sides; the extra box has the extra line's.
        self.beside = np.array([list(boxes) + [self.n_boxes] * (2 - len(boxes)) for boxes in game._beside], dtype=np.int64)
        self.sides = np.array(list(game._sides) + [(self.n_lines,) * 4], dtype=np.int64)
        self.lines = np.zeros((n, self.n_lines + 1), dtype=bool)
        self.owners = np.full((n, self.n_boxes + 1), -1, dtype=np.int8)
        self.drawn = np.zeros(n, dtype=np.int64)
        self._lines = self.lines.reshape(-1)
        self._owners = self.owners.reshape(-1)

    def reset(self, rows: np.ndarray, rng: Streams) -> None:
        """No line drawn, ``player_0`` to move."""
        self.lines[rows] = False
        self.owners[rows] = -1
        self.drawn[rows] = 0
        self.turn[rows] = 0

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """Lines not yet drawn."""
        return ~np.take(self.lines, rows, axis=0)[:, : self.n_lines]

    def step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Draw the lines; a closed box scores and its closer draws again; the last line ends the game."""
        marks = self.turn[rows]
        self._lines[rows * (self.n_lines + 1) + actions] = True
        boxes = self.beside[actions]
        closed = self._lines[(rows * (self.n_lines + 1))[:, None, None] + self.sides[boxes]].all(axis=2)
        owned = (rows * (self.n_boxes + 1))[:, None] + boxes
        self._owners[owned[closed]] = np.broadcast_to(marks[:, None], closed.shape)[closed]
        self.turn[rows] = np.where(closed.any(axis=1), marks, 1 - marks)
        drawn = self.drawn[rows] + 1
        self.drawn[rows] = drawn
        ended = drawn == self.n_lines
        rewards = np.zeros((len(rows), 2))
        over = ended.nonzero()[0]
        if over.size:
            owners = self.owners[rows[over]]
            rewards[over] = count_rewards((owners == 0).sum(axis=1), (owners == 1).sum(axis=1))
        return rewards, ended

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Lines drawn, then the seat's boxes, then the opponent's, as :meth:`DotsAndBoxes.vector`."""
        owners = np.take(self.owners, rows, axis=0)[:, : self.n_boxes]
        seats = seats[:, None]
        lines = np.take(self.lines, rows, axis=0)[:, : self.n_lines]
        return np.concatenate([lines, owners == seats, owners == 1 - seats], axis=1).astype(np.float32)


class DotsAndBoxes(Game):
    """Dots and Boxes for two players; see the module docstring for moves and rewards.

    ``lines`` holds one flag per line (OpenSpiel's order) and ``owners`` one
    entry per box, row-major (-1 open, else the seat that closed it).
    """

    name = "DotsAndBoxes"
    reference_agents = ("minimax", "random")
    description = (
        "Draw lines between dots; close a box to score it and draw again; more boxes wins "
        "(difficulty: options num_rows and num_cols, 1-10 boxes, default 3x3, as OpenSpiel's dots_and_boxes)."
    )
    zero_sum = True
    fixed_rules = True
    batch = DotsAndBoxesBatch

    def __init__(self, *, num_rows: int = 3, num_cols: int = 3):
        self.rows = int_option("num_rows", num_rows, 1, MAX_SIDE)
        self.columns = int_option("num_cols", num_cols, 1, MAX_SIDE)
        self.players = ["player_0", "player_1"]
        names, self._beside, self._sides = layout(num_rows, num_cols)
        self.moves: list[str] = list(names)
        self._names = frozenset(names)
        self.vector_size = len(names) + 2 * num_rows * num_cols
        self.lines = [False] * len(names)
        self.owners = [-1] * (num_rows * num_cols)
        self.turn = 0

    @classmethod
    def from_view(cls, view: dict[str, Any]) -> DotsAndBoxes:
        """A game in the position a player's :meth:`view` shows (nothing is hidden), for lookahead on ``clone()`` copies."""
        game = cls(num_rows=view["num_rows"], num_cols=view["num_cols"])
        game.lines = [bool(drawn) for drawn in view["lines"]]
        game.owners = list(view["owners"])
        game.turn = view["to_move"]
        return game

    def clone(self) -> Self:
        """An independent copy: lines and boxes are copied; the options and tables, never changed, are shared."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.lines = list(self.lines)
        copy.owners = list(self.owners)
        return copy

    def start(self, ctx: Context) -> None:
        """No line drawn, ``player_0`` to move."""
        self.lines = [False] * len(self.lines)
        self.owners = [-1] * len(self.owners)
        self.turn = 0

    def rules(self, player: str) -> str:
        """Rules and the grid's size."""
        first = "you move first" if player == self.players[0] else "your opponent moves first"
        return RULES.format(
            player=player,
            first=first,
            rows=self.rows,
            columns=self.columns,
            dot_rows=self.rows + 1,
            dot_columns=self.columns + 1,
            corner=dot_name(self.rows, self.columns),
        )

    def scores(self) -> list[int]:
        """Boxes won by each seat."""
        return [self.owners.count(0), self.owners.count(1)]

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The grid, the boxes won and the lines still open."""
        me = self.players.index(player)
        mine, theirs = self.scores()[me], self.scores()[1 - me]
        return f"Grid:\n{self.board_text()}\nBoxes: you {mine}, opponent {theirs}. Open lines: {', '.join(legal or [])}."

    def legal_actions(self, player: str) -> list[int]:
        """Lines not yet drawn."""
        return [line for line, drawn in enumerate(self.lines) if not drawn]

    def parse(self, player: str, text: str) -> str:
        """The last pair of neighbouring dots named in the text, in either order, as the line's name."""
        found = LINE.findall(text)
        if not found:
            raise InvalidMove(f"No line found. Name the two dots of a line, for example: {self.moves[0]}")
        first, second = (name.lower() for name in found[-1])
        for name in (f"{first}-{second}", f"{second}-{first}"):
            if name in self._names:
                if self.lines[self.move_index(name)]:
                    raise InvalidMove(f"The line {name} is already drawn. Open lines: {', '.join(self.legal_moves(player))}.")
                return name
        raise InvalidMove(f"{first} and {second} are not neighbouring dots of this grid; a line joins two dots next to each other.")

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Draw the line; a closed box scores and the mover draws again; the last line ends the game."""
        ((player, move),) = moves.items()
        line = self.move_index(move)
        mark = self.turn
        self.lines[line] = True
        closed = [box for box in self._beside[line] if all(self.lines[side] for side in self._sides[box])]
        for box in closed:
            self.owners[box] = mark
        if closed:
            ctx.tell(
                f"{player} draws {move} and closes {len(closed)} box{'es' if len(closed) > 1 else ''}; it draws again.", kind="move", sender=player
            )
        else:
            ctx.tell(f"{player} draws {move}.", kind="move", sender=player)
            self.turn = 1 - mark
        if all(self.lines):
            first, second = self.scores()
            finish_on_counts(ctx, self.players, (first, second), f"every line is drawn; boxes {first} to {second}")

    def view(self, player: str) -> dict:
        """The lines drawn (OpenSpiel's order), the box owners (-1 open, else the seat), the player's seat, the size."""
        return {
            "lines": list(self.lines),
            "owners": list(self.owners),
            "mark": self.players.index(player),
            "to_move": self.turn,
            "num_rows": self.rows,
            "num_cols": self.columns,
        }

    def vector(self, player: str) -> np.ndarray:
        """Lines drawn, then the player's boxes, then the opponent's."""
        me = self.players.index(player)
        owners = np.asarray(self.owners)
        return np.concatenate([np.asarray(self.lines), owners == me, owners == 1 - me]).astype(np.float32)

    def board_text(self) -> str:
        """The grid: dots ``+``, lines ``---`` and ``|``, a closed box marked with its owner's seat number."""
        columns, horizontal = self.columns, (self.rows + 1) * self.columns
        lines = ["   " + "   ".join(chr(ord("a") + c) for c in range(columns + 1))]
        for r in range(self.rows + 1):
            dots = "+".join("---" if self.lines[r * columns + c] else "   " for c in range(columns))
            lines.append(f"{r + 1:>2} +{dots}+")
            if r < self.rows:
                cells = ""
                for c in range(columns + 1):
                    cells += "|" if self.lines[horizontal + r * (columns + 1) + c] else " "
                    if c < columns:
                        owner = self.owners[r * columns + c]
                        cells += f" {owner} " if owner != -1 else "   "
                lines.append(f"   {cells}")
        return "\n".join(lines)

    def render(self) -> str:
        """The grid."""
        return self.board_text()
