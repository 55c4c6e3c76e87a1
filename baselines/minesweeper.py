"""The ``solver`` for Minesweeper: constraint propagation, then exact mine probabilities.

Every revealed number is a constraint: its hidden neighbours hold exactly that
many mines. The agent splits the hidden cells next to numbers (the frontier)
into groups that share constraints, enumerates every mine layout of each group
that meets its constraints (backtracking, most-constrained cell first), and
weighs each layout by the ways the remaining mines fit in the hidden cells
away from every number, so the chances are exact for the whole board. A cell
that is a mine in no layout is safe and is revealed first; otherwise the
agent reveals the cell least likely to hold a mine (a frontier cell before
an unconstrained one on a tie, which tells more). A group too large to
enumerate (over :data:`MAX_GROUP` cells) gets each cell's chance from its
constraints alone. The first reveal is the centre, which the game keeps safe
and most likely to open an area.
"""

from __future__ import annotations

from math import comb
from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.puzzles.minesweeper import HIDDEN, cell_name, neighbours

#: Frontier groups larger than this are not enumerated (the layouts can grow as 2^cells).
MAX_GROUP = 40


def constraints_of(board: list[str]) -> tuple[list[tuple[list[int], int]], set[int]]:
    """The constraints ``(hidden neighbours, mines among them)`` of every revealed number, and the hidden cells."""
    size = len(board)
    symbols = "".join(board)
    hidden = {cell for cell, symbol in enumerate(symbols) if symbol == HIDDEN}
    constraints = []
    for cell, symbol in enumerate(symbols):
        if symbol.isdigit():
            around = [n for n in neighbours(size, cell) if n in hidden]
            if around:
                constraints.append((around, int(symbol)))
    return constraints, hidden


def groups(constraints: list[tuple[list[int], int]]) -> list[tuple[list[int], list[tuple[list[int], int]]]]:
    """The frontier split into groups of cells linked by shared constraints, each with its constraints."""
    parent: dict[int, int] = {}

    def root(cell: int) -> int:
        while parent.setdefault(cell, cell) != cell:
            parent[cell] = parent[parent[cell]]
            cell = parent[cell]
        return cell

    for cells, _ in constraints:
        for cell in cells[1:]:
            parent[root(cell)] = root(cells[0])
    members: dict[int, list[int]] = {}
    for cell in parent:
        members.setdefault(root(cell), []).append(cell)
    rules: dict[int, list[tuple[list[int], int]]] = {}
    for constraint in constraints:
        rules.setdefault(root(constraint[0][0]), []).append(constraint)
    return [(sorted(members[key]), rules[key]) for key in sorted(members)]


def layouts(cells: list[int], rules: list[tuple[list[int], int]]) -> dict[int, tuple[int, dict[int, int]]]:
    """For each mine count, the number of layouts of ``cells`` meeting ``rules`` and how many of them mine each cell."""
    order = sorted(cells, key=lambda cell: -sum(cell in constraint for constraint, _ in rules))
    watching = {cell: [i for i, (constraint, _) in enumerate(rules) if cell in constraint] for cell in cells}
    placed = [0] * len(rules)
    open_cells = [len(constraint) for constraint, _ in rules]
    mine: dict[int, bool] = {}
    result: dict[int, tuple[int, dict[int, int]]] = {}

    def search(depth: int, mines: int) -> None:
        if depth == len(order):
            count, per_cell = result.get(mines, (0, {}))
            for cell, is_mine in mine.items():
                if is_mine:
                    per_cell[cell] = per_cell.get(cell, 0) + 1
            result[mines] = (count + 1, per_cell)
            return
        cell = order[depth]
        for is_mine in (False, True):
            fits = all(placed[i] + is_mine <= rules[i][1] and placed[i] + is_mine + open_cells[i] - 1 >= rules[i][1] for i in watching[cell])
            if not fits:
                continue
            for i in watching[cell]:
                placed[i] += is_mine
                open_cells[i] -= 1
            mine[cell] = is_mine
            search(depth + 1, mines + is_mine)
            for i in watching[cell]:
                placed[i] -= is_mine
                open_cells[i] += 1
        mine.pop(cell, None)

    search(0, 0)
    return result


def convolve(left: dict[int, int], right: dict[int, int]) -> dict[int, int]:
    """The distribution of a sum of mine counts from two independent count tables."""
    out: dict[int, int] = {}
    for a, x in left.items():
        for b, y in right.items():
            out[a + b] = out.get(a + b, 0) + x * y
    return out


def mine_chances(board: list[str], mines: int) -> dict[int, float]:
    """The chance that each hidden cell holds a mine, given the revealed numbers and the mine count."""
    constraints, hidden = constraints_of(board)
    frontier_groups = groups(constraints)
    frontier = {cell for cells, _ in frontier_groups for cell in cells}
    others = sorted(hidden - frontier)
    chances: dict[int, float] = {}
    tables = []
    for cells, rules in frontier_groups:
        if len(cells) > MAX_GROUP:
            for cell in cells:
                chances[cell] = max(count / len(constraint) for constraint, count in rules if cell in constraint)
            continue
        tables.append((cells, layouts(cells, rules)))
    counts = [{k: n for k, (n, _) in table.items()} for _, table in tables]
    unknown = len(others) + sum(len(cells) for cells, _ in frontier_groups if len(cells) > MAX_GROUP)
    # Mines left for the unconstrained cells: the large groups' cells count as unconstrained here.
    total = 0.0
    spread = 0.0
    everything: dict[int, int] = {0: 1}
    for count in counts:
        everything = convolve(everything, count)
    for k, ways in everything.items():
        if 0 <= mines - k <= unknown:
            weight = ways * comb(unknown, mines - k)
            total += weight
            spread += weight * (mines - k)
    for index, (cells, table) in enumerate(tables):
        rest: dict[int, int] = {0: 1}
        for j, other in enumerate(counts):
            if j != index:
                rest = convolve(rest, other)
        mined = dict.fromkeys(cells, 0.0)
        for k, (_, per_cell) in table.items():
            weight = sum(ways * comb(unknown, mines - k - r) for r, ways in rest.items() if 0 <= mines - k - r <= unknown)
            for cell, n in per_cell.items():
                mined[cell] += n * weight
        for cell in cells:
            chances[cell] = mined[cell] / total if total else 0.5
    for cell in others:
        chances[cell] = spread / total / unknown if total and unknown else 0.5
    return chances


class MinesweeperSolver(SeededAgent):
    """Reveals a cell proved safe if there is one, else the cell least likely to hold a mine."""

    name = "solver"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The reveal for the grid in ``observation["view"]``."""
        view = observation["view"]
        board, size = view["board"], view["size"]
        if all(symbol == HIDDEN for row in board for symbol in row):
            return f"reveal {cell_name(size // 2, size // 2)}"
        chances = mine_chances(board, view["mines"])
        constrained = {cell for cells, _ in constraints_of(board)[0] for cell in cells}
        best = min(chances, key=lambda cell: (round(chances[cell], 12), cell not in constrained, cell))
        return f"reveal {cell_name(*divmod(best, size))}"


register_scripted("solver", "parlour/Minesweeper-v0", MinesweeperSolver)
