"""The ``hunter`` agent for Battleship: hunt by placement density, then target the hits until the ship sinks.

It places its ships uniformly at random among the legal placements (a
placement pattern gains nothing against a shooter that does not learn). When
firing it reads only its own shots: a shot that sank a ship closes the
longest straight run of hits through it (those cells are spent); hits outside
such runs belong to ships still afloat. With such hits it *targets*: it fires
where the most placements of the ships still afloat cross those hits (so a
line of two hits is extended along its axis). Without them it *hunts*: it
fires at the cell covered by the most placements that avoid its misses and
spent cells, which favours the open middle of large empty regions.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.seeded import SeededAgent


def spent_cells(width: int, height: int, shots: list[dict]) -> tuple[set[int], list[int]]:
    """The cells of sunk ships as far as the shots show them, and the lengths of those runs (one per sinking)."""
    hits = {shot["cell"] for shot in shots if shot["result"] != "miss"}
    spent: set[int] = set()
    runs: list[int] = []
    done: set[int] = set()
    for shot in shots:
        cell = shot["cell"]
        if shot["result"] != "sunk" or cell in done:
            continue
        done.add(cell)
        best: list[int] = []
        for dr, dc in ((0, 1), (1, 0)):
            run = [cell]
            for sign in (1, -1):
                r, c = divmod(cell, width)
                while True:
                    r, c = r + sign * dr, c + sign * dc
                    nxt = r * width + c
                    if not (0 <= r < height and 0 <= c < width) or nxt not in hits or nxt in spent:
                        break
                    run.append(nxt)
            if len(run) > len(best):
                best = run
        spent |= set(best)
        runs.append(len(best))
    return spent, runs


def placements(width: int, height: int, length: int) -> list[list[int]]:
    """The cells of every placement of a ship of ``length`` on the grid."""
    result = [[r * width + c + i for i in range(length)] for r in range(height) for c in range(width - length + 1)]
    if length > 1:
        result += [[(r + i) * width + c for i in range(length)] for r in range(height - length + 1) for c in range(width)]
    return result


class HunterAgent(SeededAgent):
    """Random legal placements; shots by hunt-and-target on placement counts, ties broken at random."""

    name = "hunter"

    def act(self, observation: Mapping[str, Any]) -> str:
        """A placement while placing, else the cell to fire at."""
        legal = observation["legal_moves"]
        view = observation["view"]
        if view["placing"]:
            return legal[int(self.rng.integers(len(legal)))]
        width, height, shots = view["width"], view["height"], view["shots"]
        spent, runs = spent_cells(width, height, shots)
        afloat = list(view["ship_sizes"])
        for length in runs:
            if length in afloat:
                afloat.remove(length)
        misses = {shot["cell"] for shot in shots if shot["result"] == "miss"}
        hits = {shot["cell"] for shot in shots if shot["result"] != "miss"} - spent
        fired = {shot["cell"] for shot in shots}
        counts = [0] * (width * height)
        for length in afloat or view["ship_sizes"]:
            for cells in placements(width, height, length):
                if any(cell in misses or cell in spent for cell in cells):
                    continue
                crossed = sum(cell in hits for cell in cells)
                if hits and not crossed:
                    continue
                # Targeting: placements through more of the open hits are likelier (two hits in a line fix the axis).
                weight = (1 + crossed) ** 2
                for cell in cells:
                    counts[cell] += weight
        names = {name: i for i, name in enumerate(_cell_names(width, height))}
        candidates = [names[move] for move in legal if move in names and names[move] not in fired] or [names[m] for m in legal if m in names]
        best = max(counts[cell] for cell in candidates)
        choices = [cell for cell in candidates if counts[cell] == best]
        return _cell_names(width, height)[choices[int(self.rng.integers(len(choices)))]]


def _cell_names(width: int, height: int) -> list[str]:
    """Cell names in index order, as the game names them."""
    return [f"{'abcdefghij'[i % width]}{i // width + 1}" for i in range(width * height)]


register_scripted("hunter", "parlour/Battleship-v0", HunterAgent)
register_ladder("parlour/Battleship-v0", ["random", "hunter"])
