"""What the two-player board games share: cells and boards on a grid, groups of stones, and an ending on counts.

The boards here are flat lists of cells, row by row from the top, each cell
-1 (empty) or the seat (0 or 1) whose stone or piece stands on it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from parlour.envs.core.context import Context


def cell_name(cell: int, rows: int, columns: int) -> str:
    """The name of a cell (row-major from the top row): column letter, then row number counted from the bottom."""
    return f"{chr(ord('a') + cell % columns)}{rows - cell // columns}"


class StepMoves(NamedTuple):
    """The one-step moves of a board (:func:`step_moves`): their names, each one's ``(source, destination)`` cells,
    and per cell its on-board moves as ``(direction, destination, move index)``."""

    names: tuple[str, ...]
    ends: tuple[tuple[int, int], ...]
    steps: tuple[tuple[tuple[int, int, int], ...], ...]


@functools.cache
def step_moves(rows: int, columns: int, directions: tuple[tuple[int, int], ...]) -> StepMoves:
    """The moves of a piece one step in one of ``directions`` (row and column steps), worked out once per board size.

    Moves are every on-board ``(cell, direction)`` pair, cells row-major from
    the top row and then directions in their order (OpenSpiel's order for such
    games); a move is named by its two cells, as ``c5c4``. Returns the move
    names, each move's ``(source, destination)`` cells, and per cell its
    on-board moves as ``(direction, destination, move index)``.
    """
    names: list[str] = []
    ends: list[tuple[int, int]] = []
    steps: list[tuple[tuple[int, int, int], ...]] = []
    for cell in range(rows * columns):
        row, column = divmod(cell, columns)
        here = []
        for direction, (d_row, d_column) in enumerate(directions):
            to_row, to_column = row + d_row, column + d_column
            if 0 <= to_row < rows and 0 <= to_column < columns:
                destination = to_row * columns + to_column
                ends.append((cell, destination))
                here.append((direction, destination, len(names)))
                names.append(cell_name(cell, rows, columns) + cell_name(destination, rows, columns))
        steps.append(tuple(here))
    return StepMoves(tuple(names), tuple(ends), tuple(steps))


def board_rows(board: list[int], rows: int, columns: int) -> list[list[int]]:
    """A row-major board as its rows, top row first (as views show it)."""
    return [board[r * columns : (r + 1) * columns] for r in range(rows)]


def board_from_rows(view_rows: list[list[Any]], rows: int, columns: int) -> list[Any]:
    """The row-major board that a view's rows (top row first) show; ``ValueError`` unless it has ``rows * columns`` cells."""
    board = [mark for row in view_rows for mark in row]
    if len(board) != rows * columns:
        raise ValueError(f"the view's board is not {rows} rows of {columns} cells")
    return board


def stone_planes(board: list[int], seat: int, *, empty: bool = False) -> np.ndarray:
    """A vector observation: the stones of ``seat``, then the opponent's, then (with ``empty``) the empty cells,
    each as 0/1 values over the board's cells in its order."""
    cells = np.asarray(board)
    planes = [cells == seat, cells == 1 - seat]
    if empty:
        planes.append(cells == -1)
    return np.concatenate(planes).astype(np.float32)


def stone_group(board: list[int], neighbours: Sequence[Sequence[int]], cell: int) -> Iterator[int]:
    """The cells of the group of touching stones, of one mark, that holds the stone on ``cell`` (``cell`` first).

    ``neighbours`` lists, for each cell, the cells that touch it.
    """
    mark = board[cell]
    seen, frontier = {cell}, [cell]
    while frontier:
        here = frontier.pop()
        yield here
        for near in neighbours[here]:
            if near not in seen and board[near] == mark:
                seen.add(near)
                frontier.append(near)


def shifted_board_text(view_rows: list[list[int]], symbols: dict[int, str]) -> str:
    """A board of hexagonal cells as text: columns lettered on top, then each row numbered from 1 and shifted one
    space further right than the row above, so each cell sits between the two it touches in the next row.

    ``view_rows`` are the rows from the top, the first the widest; ``symbols`` maps each cell value to its character.
    """
    width = len(str(len(view_rows)))
    lines = [" " * (width + 1) + " ".join(chr(ord("a") + c) for c in range(len(view_rows[0])))]
    for r, row in enumerate(view_rows):
        lines.append(f"{' ' * r}{str(r + 1).rjust(width)} {' '.join(symbols[mark] for mark in row)}")
    return "\n".join(lines)


def finish_on_counts(ctx: Context, players: Sequence[str], counts: Sequence[int], reason: str) -> None:
    """End a two-player game on one count per seat (seeds, boxes): the higher count wins, +1 to it and -1 to the
    other; equal counts are a draw, which ``reason`` then says after a colon."""
    first, second = counts
    if first == second:
        ctx.finish(reason=f"{reason}: a draw")
    else:
        winner, loser = (players[0], players[1]) if first > second else (players[1], players[0])
        ctx.finish({winner: 1.0, loser: -1.0}, winners=[winner], reason=reason)


# ---------------------------------------------------------------- batched boards (the games' GameBatch classes)
def unpack_bits(words: np.ndarray) -> np.ndarray:
    """The bits of ``words`` ``(k, w)`` uint64 as ``(k, 64 w)`` 0/1 uint8, bit ``j`` of word ``i`` at ``64 i + j``.

    ``int.to_bytes(8, "little")`` then ``np.unpackbits(bitorder="little")`` gives
    the same order, so a one-episode game's vector of bitboards matches this.
    """
    words = np.ascontiguousarray(words, dtype="<u8")
    return np.unpackbits(words.view(np.uint8).reshape(len(words), -1), axis=1, bitorder="little")


def cell_planes(boards: np.ndarray, seats: np.ndarray, *, empty: bool = False) -> np.ndarray:
    """:func:`stone_planes` of many boards: ``boards`` ``(k, cells)`` (-1 empty, else the seat), each seen by ``seats[j]``.

    Returns ``(k, 2 cells)`` float32, or ``(k, 3 cells)`` with ``empty``.
    """
    seats = seats[:, None]
    planes = [boards == seats, boards == 1 - seats]
    if empty:
        planes.append(boards == -1)
    return np.concatenate(planes, axis=1).astype(np.float32)


def count_rewards(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """What :func:`finish_on_counts` pays for each pair of counts, as ``(k, 2)`` rewards: +1 to the higher, -1 to the other, 0 each if equal."""
    won = np.sign(first - second).astype(np.float64)
    return np.stack([won, -won], axis=1)
