"""Battleship, with OpenSpiel's ``battleship`` rules on a small board by default.

Two players, ``player_0`` and ``player_1``, each hide a fleet on their own
grid of ``board_width`` x ``board_height`` cells (default 6 x 6, OpenSpiel
allows up to 10 x 10), then take turns firing at the opponent's grid. Ships
are placed one at a time, the players alternating (``player_0``'s first
ship, ``player_1``'s first ship, ``player_0``'s second, ...), in the order of
``ship_sizes`` (default ``[2, 3, 4]``). A ship lies across (to the right of
its top-left cell) or down, inside the grid and clear of the player's other
ships, and only where the rest of the fleet still fits. Then ``player_0``
fires first; each shot is told to both players as a miss, a hit, or a hit
that sinks a ship (which ship is not said). The game ends when a fleet is
sunk (at once: the other player does not fire back) or when both have fired
``num_shots`` shots (default: half the cells, 18 on 6 x 6, as OpenSpiel's
50 on 10 x 10). With ``allow_repeated_shots`` (OpenSpiel's
default, off here) a player may fire at a cell again, which only repeats
what it learnt.

Information: a player sees its own fleet, where the opponent fired, and the
result of its own shots; the opponent's placements never reach it (it learns
only that a ship was placed) until the game ends, when both fleets are shown.

Moves are cell names ``a1`` .. (column letter, row number, row 1 on top) for
shots, and ``a1 across`` / ``a1 down`` (the ship's top-left cell) for
placements; the ``Discrete`` indices are OpenSpiel's: the shot at (row r,
column c) is ``r * W + c``, an across placement ``W * H + r * W + c``, a down
placement ``2 * W * H + r * W + c`` (a one-cell ship is placed across only).
Vector observation (5 planes of W * H cells, row-major, then the rest): own
ship cells, cells the opponent fired at, own misses, own hits (sinking ones
included), own shots answered "sunk", a one-hot of the ship being placed
(zero while firing), and the fraction of own shots fired.

Rewards (zero-sum: OpenSpiel's returns with every ship worth 1 and
``loss_multiplier`` 1), paid when a ship sinks: +1 to the player who sank it,
-1 to its owner. The player who sank more ships wins; equal counts are a
draw. A player who exceeds the invalid-action allowance forfeits: its return
becomes minus the number of ships, the opponent's plus that number, as if
its fleet had been sunk and it had sunk nothing.

Version history: v0, first release.
"""

from __future__ import annotations

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, int_option

MAX_SIDE = 10
MAX_SHIPS = 26
DIRECTIONS = ("across", "down")
RESULTS = {"miss": "a miss", "hit": "a hit", "sunk": "a hit, and it sinks a ship"}

RULES = """You are playing Battleship as {player}; {first}.
Each player hides ships on its own grid of {width} columns ({columns}) and {height} rows (1-{height}), then both take turns firing at the other's grid. Your ships, placed in this order and alternating with your opponent's: {ships} cells long.
To place a ship, name its top-left cell and a direction: "b2 across" covers b2, c2, d2 for a 3-cell ship; "b2 down" covers b2, b3, b4. Ships stay inside the grid and may not overlap (nor block the rest of your fleet from fitting).
Then name a cell to fire at, for example: c4. Each shot is a miss, a hit, or a hit that sinks a ship; you are not told which ship. You see where your opponent fires, never its ships.
The game ends when a fleet is sunk or when both players have fired {shots} shots{repeats}. Each ship you sink is worth +1 to you and -1 to its owner; whoever sank more ships wins."""


def placement_mask(width: int, cell: int, length: int, direction: str) -> int:
    """The cells of a ship of ``length`` whose top-left cell is ``cell``, as a bitmask (bit ``i``: cell ``i``)."""
    step = 1 if direction == "across" else width
    return sum(1 << (cell + i * step) for i in range(length))


class Battleship(Game):
    """Two-player Battleship; see the module docstring for phases, moves, information and rewards.

    ``fleets[p]`` holds player ``p``'s placed ships as ``(cell, direction)``
    in ``ship_sizes`` order and ``owner[p]`` which of them covers each cell
    (-1 water); ``shots[p]`` is every shot ``p`` fired, ``(cell, result)``;
    ``damage[p]`` counts the distinct cells of each of ``p``'s ships hit and
    ``sunk[p]`` how many of them sank.
    """

    name = "Battleship"
    reference_agents = ("hunter", "random")
    description = "Hide ships on a grid, then fire at the opponent's; sink more ships to win (6x6, ships 2, 3, 4 by default)."
    zero_sum = True
    fixed_rules = True

    def __init__(
        self,
        *,
        board_width: int = 6,
        board_height: int = 6,
        ship_sizes: list[int] | tuple[int, ...] = (2, 3, 4),
        num_shots: int | None = None,
        allow_repeated_shots: bool = False,
    ):
        self.width = int_option("board_width", board_width, 1, MAX_SIDE)
        self.height = int_option("board_height", board_height, 1, MAX_SIDE)
        if not isinstance(ship_sizes, (list, tuple)) or not 1 <= len(ship_sizes) <= MAX_SHIPS:
            raise ValueError(f"ship_sizes must be a list of 1 to {MAX_SHIPS} ship lengths, got {ship_sizes!r}")
        for size in ship_sizes:
            int_option("each of ship_sizes", size, 1, max(board_width, board_height))
        self.ship_sizes = [int(size) for size in ship_sizes]
        if not isinstance(allow_repeated_shots, bool):
            raise ValueError(f"allow_repeated_shots must be True or False, got {allow_repeated_shots!r}")
        self.allow_repeated_shots = allow_repeated_shots
        cells = board_width * board_height
        # Half the cells by default, OpenSpiel's proportion (50 shots on its 10x10 board).
        shots = max(1, cells // 2) if num_shots is None else num_shots
        self.num_shots = int_option("num_shots", shots, 1, None if allow_repeated_shots else cells)
        self.cell_names = [f"{'abcdefghij'[i % board_width]}{i // board_width + 1}" for i in range(cells)]
        self.moves = self.cell_names + [f"{name} {direction}" for direction in DIRECTIONS for name in self.cell_names]
        #: Every placement of a ship of each length, in OpenSpiel's order (across by rows, then down): (action, mask).
        self.placements = {length: self.all_placements(length) for length in set(self.ship_sizes)}
        if not self.fits(0, self.ship_sizes):
            raise ValueError(f"ships of lengths {self.ship_sizes} do not all fit on a {board_width}x{board_height} board")
        self.players = ["player_0", "player_1"]
        self.vector_size = 5 * cells + len(self.ship_sizes) + 1
        self.reset_state()

    def reset_state(self) -> None:
        """Empty grids, no ship placed, no shot fired."""
        cells = self.width * self.height
        self.fleets: list[list[tuple[int, str]]] = [[], []]
        self.owner = [[-1] * cells, [-1] * cells]
        self.occupied = [0, 0]
        self.shots: list[list[tuple[int, str]]] = [[], []]
        self.damage = [[0] * len(self.ship_sizes), [0] * len(self.ship_sizes)]
        self.hit_cells: list[set[int]] = [set(), set()]
        self.sunk = [0, 0]

    def all_placements(self, length: int) -> list[tuple[int, int]]:
        """``(action, mask)`` of every placement of a ship of ``length`` on an empty grid, in action order."""
        w, h = self.width, self.height
        result = []
        if length <= w:
            result += [(w * h + r * w + c, placement_mask(w, r * w + c, length, "across")) for r in range(h) for c in range(w - length + 1)]
        # A one-cell ship down would duplicate its placement across, so it has none (as in OpenSpiel).
        if 1 < length <= h:
            result += [(2 * w * h + r * w + c, placement_mask(w, r * w + c, length, "down")) for r in range(h - length + 1) for c in range(w)]
        return result

    def fits(self, occupied: int, lengths: list[int]) -> bool:
        """Whether ships of ``lengths`` can all still be placed on a grid whose ``occupied`` cells are taken."""
        if not lengths:
            return True
        return any(not mask & occupied and self.fits(occupied | mask, lengths[1:]) for _, mask in self.placements[lengths[0]])

    def start(self, ctx: Context) -> None:
        """Empty grids; ``player_0`` places its first ship."""
        self.reset_state()

    @property
    def placing(self) -> bool:
        """Whether ships are still being placed."""
        return len(self.fleets[1]) < len(self.ship_sizes)

    def to_move(self) -> list[str]:
        """Placements and shots alternate, ``player_0`` first in each phase."""
        if self.placing:
            return [self.players[len(self.fleets[0]) > len(self.fleets[1])]]
        return [self.players[len(self.shots[0]) > len(self.shots[1])]]

    def rules(self, player: str) -> str:
        """Rules, the grid, the fleet and the number of shots."""
        first = "you place and fire first" if player == self.players[0] else "your opponent places and fires first"
        repeats = " (you may fire at a cell again)" if self.allow_repeated_shots else " (each cell at most once)"
        return RULES.format(
            player=player,
            first=first,
            width=self.width,
            height=self.height,
            columns=f"a-{'abcdefghij'[self.width - 1]}",
            ships=", ".join(map(str, self.ship_sizes)),
            shots=self.num_shots,
            repeats=repeats,
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """Both grids as the player knows them, and what to do now."""
        me = self.players.index(player)
        boards = (
            f"Your grid (letters: your ships, capital when hit; *: opponent's misses):\n{self.own_text(me)}\n"
            f"Your shots (o: miss, x: hit, #: the hit that sank a ship):\n{self.shots_text(me)}\n"
        )
        if self.placing:
            length = self.ship_sizes[len(self.fleets[me])]
            return f"{boards}Place your {length}-cell ship. Legal placements: {', '.join(legal or [])}."
        left = self.num_shots - len(self.shots[me])
        return f"{boards}Ships sunk: by you {self.sunk[1 - me]}, by your opponent {self.sunk[me]}. Shots left: {left}. Fire at a cell:"

    def legal_actions(self, player: str) -> list[int]:
        """Placements of the next ship that leave room for the rest; while firing, every cell (or those not yet fired at)."""
        me = self.players.index(player)
        if self.placing:
            placed = len(self.fleets[me])
            rest, occupied = self.ship_sizes[placed + 1 :], self.occupied[me]
            return [action for action, mask in self.placements[self.ship_sizes[placed]] if not mask & occupied and self.fits(occupied | mask, rest)]
        cells = range(self.width * self.height)
        if self.allow_repeated_shots:
            return list(cells)
        fired = {cell for cell, _ in self.shots[me]}
        return [cell for cell in cells if cell not in fired]

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Place the ship or fire the shot; end the game when a fleet is sunk or every shot is fired."""
        ((player, move),) = moves.items()
        me = self.players.index(player)
        action = self.move_index(move)
        if self.placing:
            self.place(ctx, me, action)
        else:
            self.fire(ctx, me, action)

    def place(self, ctx: Context, me: int, action: int) -> None:
        """Put player ``me``'s next ship where ``action`` says; only the placer is told where."""
        cells = self.width * self.height
        ship = len(self.fleets[me])
        length = self.ship_sizes[ship]
        cell, direction = action % cells, DIRECTIONS[action // cells - 1]
        mask = placement_mask(self.width, cell, length, direction)
        self.fleets[me].append((cell, direction))
        self.occupied[me] |= mask
        covered = [i for i in range(cells) if mask >> i & 1]
        for i in covered:
            self.owner[me][i] = ship
        player = self.players[me]
        ctx.tell(f"You place your {length}-cell ship on {', '.join(self.cell_names[i] for i in covered)}.", to=player, kind="move", sender=player)
        ctx.tell(f"{player} has placed its {length}-cell ship.", to=self.other(player))

    def fire(self, ctx: Context, me: int, cell: int) -> None:
        """Fire player ``me``'s shot at ``cell``; pay for a ship it sinks, and end the game if it is over."""
        them = 1 - me
        ship = self.owner[them][cell]
        result = "miss"
        if ship != -1:
            if cell not in self.hit_cells[them]:
                self.hit_cells[them].add(cell)
                self.damage[them][ship] += 1
                if self.damage[them][ship] == self.ship_sizes[ship]:
                    self.sunk[them] += 1
                    ctx.reward(self.players[me], 1.0)
                    ctx.reward(self.players[them], -1.0)
            result = "sunk" if self.damage[them][ship] == self.ship_sizes[ship] else "hit"
        self.shots[me].append((cell, result))
        player = self.players[me]
        ctx.tell(f"{player} fires at {self.cell_names[cell]}: {RESULTS[result]}.", kind="move", sender=player)
        fleet = len(self.ship_sizes)
        if self.sunk[them] < fleet and len(self.shots[1]) < self.num_shots:
            return
        for seat, viewer in enumerate(self.players):
            ctx.tell(f"Your opponent's ships were:\n{self.own_text(1 - seat)}", to=viewer)
        score = f"ships sunk: {self.players[0]} {self.sunk[1]}, {self.players[1]} {self.sunk[0]}"
        why = f"{player} sank the last ship" if self.sunk[them] == fleet else f"all {self.num_shots} shots each were fired"
        if self.sunk[0] == self.sunk[1]:
            ctx.finish(reason=f"{why}; {score}: a draw")
        else:
            winner = self.players[0 if self.sunk[1] > self.sunk[0] else 1]
            ctx.finish(winners=[winner], reason=f"{why}; {score}")

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The offender's return becomes minus the number of ships and the opponent's plus it."""
        me = self.players.index(player)
        penalty = -len(self.ship_sizes) - (self.sunk[1 - me] - self.sunk[me])
        ctx.finish({player: penalty, self.other(player): -penalty}, winners=[self.other(player)], reason=reason)

    def view(self, player: str) -> dict:
        """The player's own fleet and grid, where the opponent fired, its own shots and their results; never the opponent's ships."""
        me = self.players.index(player)
        return {
            "width": self.width,
            "height": self.height,
            "ship_sizes": list(self.ship_sizes),
            "seat": me,
            "placing": self.placing,
            "fleet": [{"length": self.ship_sizes[i], "cell": cell, "direction": d} for i, (cell, d) in enumerate(self.fleets[me])],
            "own_board": list(self.owner[me]),
            "opponent_shots": [cell for cell, _ in self.shots[1 - me]],
            "shots": [{"cell": cell, "result": result} for cell, result in self.shots[me]],
            "sunk": {"by_you": self.sunk[1 - me], "by_opponent": self.sunk[me]},
            "shots_left": self.num_shots - len(self.shots[me]),
            "allow_repeated_shots": self.allow_repeated_shots,
        }

    def vector(self, player: str) -> np.ndarray:
        """Own ships, opponent's shots, own misses, hits and shots answered "sunk" (one plane each), the ship being placed, shots fired."""
        me = self.players.index(player)
        cells = self.width * self.height
        values = np.zeros(self.vector_size, dtype=np.float32)
        values[:cells] = np.asarray(self.owner[me]) >= 0
        for cell, _ in self.shots[1 - me]:
            values[cells + cell] = 1.0
        plane = {"miss": 2, "hit": 3, "sunk": 4}
        for cell, result in self.shots[me]:
            values[plane[result] * cells + cell] = 1.0
            if result == "sunk":
                values[3 * cells + cell] = 1.0
        if self.placing:
            values[5 * cells + len(self.fleets[me])] = 1.0
        values[-1] = len(self.shots[me]) / self.num_shots
        return values

    def grid(self, marks: list[str]) -> str:
        """Rows of ``marks`` (one per cell) under column letters, with row numbers."""
        header = "   " + " ".join("abcdefghij"[: self.width])
        rows = [f"{r + 1:>2} " + " ".join(marks[r * self.width : (r + 1) * self.width]) for r in range(self.height)]
        return "\n".join([header, *rows])

    def own_text(self, seat: int) -> str:
        """Player ``seat``'s grid: ship letters (capital when hit), ``*`` for the opponent's misses, ``.`` water."""
        marks = ["." if ship == -1 else "abcdefghijklmnopqrstuvwxyz"[ship] for ship in self.owner[seat]]
        for cell, _ in self.shots[1 - seat]:
            marks[cell] = "*" if self.owner[seat][cell] == -1 else marks[cell].upper()
        return self.grid(marks)

    def shots_text(self, seat: int) -> str:
        """What player ``seat`` knows of the opponent's grid: ``o`` miss, ``x`` hit, ``#`` a sinking shot, ``.`` not fired at."""
        marks = ["."] * (self.width * self.height)
        for cell, result in self.shots[seat]:
            marks[cell] = {"miss": "o", "hit": "x", "sunk": "#"}[result] if marks[cell] != "#" else "#"
        return self.grid(marks)

    def render(self) -> str:
        """Both grids, the ships sunk, and the phase."""
        phase = "placing ships" if self.placing else f"shots fired: {len(self.shots[0])} and {len(self.shots[1])} of {self.num_shots}"
        return "\n".join(
            [f"{p}'s grid:\n{self.own_text(i)}" for i, p in enumerate(self.players)]
            + [f"ships sunk: {self.players[0]} {self.sunk[1]}, {self.players[1]} {self.sunk[0]}; {phase}"]
        )
