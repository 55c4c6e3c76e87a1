"""SplitMaze: two players walk one token through a maze that each of them only half sees ("the collaboration gap").

A ``size`` x ``size`` grid (option ``size``, 4 to 12, default 6) holds a maze
of open cells and walls, drawn from the seed: a randomized depth-first carve
from the start ``a1`` (the top-left corner) that never opens a cell touching two
open cells, so the open cells form a tree of one-cell-wide corridors. The goal
is the open cell farthest from the start (ties: the one furthest down and
right). Cells are named by column letter and row number: ``a1`` is the
top-left corner, ``north`` is up (row 1), ``east`` is right.

Modes (option ``mode``):

* ``"pair"`` (default): ``player_0`` and ``player_1``. The cells other than the
  start and the goal are dealt at random into two disjoint halves; each player
  sees only its own half (and the start and goal, which both know). Every turn
  both players reply at once with free talk and one proposed step:
  ``[step] north`` (``east``, ``south``, ``west`` or ``stay``). The last
  ``[step]`` tag counts; everything else in the reply is talk, delivered
  verbatim to the partner alone (at most 2000 characters). Moves are not
  enumerable (text only).
* ``"silent"``: the same split, with no talk: a reply is one step name
  (``north``, ..., ``stay``; reasoning around it is tolerated, the last step
  name counts). Moves are enumerable, so the vector face exists; the players
  coordinate only through the proposals they see each other make.
* ``"solo"``: one player, ``player_0``, sees the whole maze and steps alone
  (enumerable moves as in ``"silent"``). Comparing solo and pair success of the
  same agent measures its collaboration gap.

A step happens only when both players propose the same one (in solo, every
proposal is a step). A step into a wall is a bump: the token stays, the wall is
shown to both players, and the step still counts. Proposing a step off the
grid is an invalid action. Cells the token has stood on are known to both.
After every turn both players are told both proposals and what happened.

Episodes: the token starts on ``a1``; the game ends when it reaches the goal
(success) or after ``turn_limit`` turns (default: three times the length of
the shortest path). A turn is one round of proposals, agreed or not.

Rewards (cooperative, shared): on success every player gets the path
efficiency, ``shortest path / steps taken`` (at most 1; bumps count as steps,
``stay`` does not), and all players win as the team ``pair`` (or ``solo``);
on failure everyone gets 0 and nobody wins. A player who exceeds the
invalid-action allowance gets -1 and its partner 0.

Outcome details: ``success``, ``turns``, ``steps``, ``bumps``,
``disagreements`` (turns whose proposals differed), ``shortest`` (the
shortest path length), ``path_efficiency`` and ``turn_efficiency``
(``shortest / turns``; 0 on failure), and ``mode``.

Vector face (``silent`` and ``solo``): four planes of ``size * size`` cells as
this player knows them (known open, known wall, the token, the goal), then the
fraction of turns used, then the partner's last proposal one-hot (five
entries, zero in solo and before the first turn).

Version history: v0, first release.
"""

from __future__ import annotations

import re
import string
from collections import deque
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, InvalidMove, int_option

MODES = ("pair", "silent", "solo")
STEPS = ("north", "east", "south", "west", "stay")
#: Row and column change of each step.
DELTAS = {"north": (-1, 0), "east": (0, 1), "south": (1, 0), "west": (0, -1), "stay": (0, 0)}
MAX_SIZE = 12
MAX_TALK = 2000
OPEN, WALL, UNKNOWN = ".", "#", "?"

STEP_PATTERN = re.compile(r"\[\s*+step\s*+\]\s*+(north|east|south|west|stay)(?![\w])", re.IGNORECASE)

RULES = """You are {player} in SplitMaze, a cooperative maze game{partner_clause}.
The maze is a {size}x{size} grid of open cells (.) and walls (#). Cells are named by column letter and row number: a1 is the top-left corner, {last} the bottom-right; north is up, east is right.
You walk one shared token from the start {start} to the goal {goal}. Steps: north, east, south, west, or stay.
{view_clause}
{turn_clause}
A step into a wall is a bump: the token stays put, the wall is revealed, and the step still counts. A step off the grid is not allowed.
You have {limit} turns. If the token reaches the goal, {scoring}
{reply}"""

PAIR_VIEW = "You see only your half of the cells (unknown cells show as ?); {partner} sees the other half. Both of you know the start and the goal, and every cell the token has stood on."
SOLO_VIEW = "You see the whole maze."
PAIR_TURN = "Each turn you and {partner} both propose a step at the same time; the token moves only when both proposals are the same. You then see both proposals."
SOLO_TURN = "Each turn you make one step."
SCORING_PAIR = "you both win and each score shortest path / steps taken (1.0 for a perfect walk); otherwise you both score 0."
SCORING_SOLO = "you win and score shortest path / steps taken (1.0 for a perfect walk); otherwise you score 0."
TALK_REPLY = """Each reply is free talk plus one step tag, for example:
  I see walls at c2 and c3; open: b1 b2. Let's go east. [step] east
The last [step] tag counts; all other text is sent word for word to {partner} (at most {limit} characters). To share cells, a form such as "open: b1 b2; walls: c3" is easy for any partner to read."""
STEP_REPLY = "Reply with one step: north, east, south, west or stay."


def cell_name(row: int, col: int) -> str:
    """``a1`` for the top-left cell: column letter, then row number from 1."""
    return f"{string.ascii_lowercase[col]}{row + 1}"


def parse_cell(name: str, size: int) -> tuple[int, int] | None:
    """``(row, col)`` of a cell name such as ``c4`` on a ``size`` grid, or ``None`` if it is not one."""
    name = name.strip().lower()
    if len(name) < 2 or name[0] not in string.ascii_lowercase[:size] or not name[1:].isdigit():
        return None
    row = int(name[1:]) - 1
    return (row, string.ascii_lowercase.index(name[0])) if 0 <= row < size else None


def generate_maze(rng: np.random.Generator, size: int) -> np.ndarray:
    """A ``size`` x ``size`` bool array, True for walls: a randomized depth-first carve from (0, 0).

    A wall cell is opened only if the cell being extended is its sole open
    neighbour, so corridors are one cell wide and the open cells form a tree.
    """
    walls = np.ones((size, size), dtype=bool)
    walls[0, 0] = False
    stack = [(0, 0)]
    while stack:
        row, col = stack[-1]
        candidates = []
        for dr, dc in ((-1, 0), (0, 1), (1, 0), (0, -1)):
            r, c = row + dr, col + dc
            if 0 <= r < size and 0 <= c < size and walls[r, c] and open_neighbours(walls, r, c) == 1:
                candidates.append((r, c))
        if not candidates:
            stack.pop()
            continue
        r, c = candidates[int(rng.integers(len(candidates)))]
        walls[r, c] = False
        stack.append((r, c))
    return walls


def open_neighbours(walls: np.ndarray, row: int, col: int) -> int:
    """How many of the four neighbours of (row, col) are open."""
    size = walls.shape[0]
    return sum(1 for dr, dc in ((-1, 0), (0, 1), (1, 0), (0, -1)) if 0 <= row + dr < size and 0 <= col + dc < size and not walls[row + dr, col + dc])


def distances(walls: np.ndarray, source: tuple[int, int]) -> dict[tuple[int, int], int]:
    """Breadth-first distances from ``source`` to every open cell reachable from it."""
    size = walls.shape[0]
    seen = {source: 0}
    queue = deque([source])
    while queue:
        row, col = queue.popleft()
        for dr, dc in ((-1, 0), (0, 1), (1, 0), (0, -1)):
            cell = (row + dr, col + dc)
            if 0 <= cell[0] < size and 0 <= cell[1] < size and not walls[cell] and cell not in seen:
                seen[cell] = seen[(row, col)] + 1
                queue.append(cell)
    return seen


class SplitMaze(Game):
    """Two players who each see half a maze agree on every step of one token; see the module docstring."""

    name = "SplitMaze"
    reference_agents = ("bfs", "random")
    description = "Cooperative maze: each of two players sees half the cells; a step happens only when both propose it."
    category = "cooperation"
    zero_sum = False
    simultaneous = True

    def __init__(self, *, size: int = 6, mode: str = "pair", turn_limit: int | None = None):
        self.size = int_option("size", size, 4, MAX_SIZE)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(repr(m) for m in MODES)}, got {mode!r}")
        self.mode = mode
        self.turn_option = None if turn_limit is None else int_option("turn_limit", turn_limit, 1, 10_000)
        self.players = ["player_0"] if mode == "solo" else ["player_0", "player_1"]
        self.moves = None if mode == "pair" else list(STEPS)
        self.vector_size = 4 * size * size + 1 + len(STEPS)
        self.walls = np.zeros((size, size), dtype=bool)
        self.known = {p: np.zeros((size, size), dtype=bool) for p in self.players}
        self.start_cell = (0, 0)
        self.goal = (0, 0)
        self.position = (0, 0)
        self.shortest = 0
        self.turn_limit = 0
        self.turn = 0
        self.steps = 0
        self.bumps = 0
        self.disagreements = 0
        self.last: dict[str, str] = {}
        # Tuples that only grow: every view shares its player's messages instead of copying them.
        self.heard: dict[str, tuple[str, ...]] = {p: () for p in self.players}

    # ------------------------------------------------------------------ setup
    def start(self, ctx: Context) -> None:
        """Draw the maze, the goal, and (for pairs) the split of the cells."""
        size = self.size
        self.walls = generate_maze(ctx.rng, size)
        dist = distances(self.walls, (0, 0))
        self.goal = max(dist, key=lambda cell: (dist[cell], cell[0] + cell[1], cell[0]))
        self.shortest = dist[self.goal]
        self.turn_limit = self.turn_option if self.turn_option is not None else 3 * self.shortest
        self.start_cell = self.position = (0, 0)
        self.turn = self.steps = self.bumps = self.disagreements = 0
        self.last = {}
        self.heard = {p: () for p in self.players}
        self.known = {p: np.zeros((size, size), dtype=bool) for p in self.players}
        if self.mode == "solo":
            self.known["player_0"][:] = True
            return
        cells = [(r, c) for r in range(size) for c in range(size) if (r, c) not in (self.start_cell, self.goal)]
        order = ctx.rng.permutation(len(cells))
        half = len(cells) // 2
        for rank, index in enumerate(order):
            self.known[self.players[0] if rank < half else self.players[1]][cells[int(index)]] = True
        for player in self.players:
            self.known[player][self.start_cell] = self.known[player][self.goal] = True

    # ------------------------------------------------------------------- text
    def partner(self, player: str) -> str | None:
        """The other player of a pair; ``None`` in solo."""
        return None if self.mode == "solo" else self.other(player)

    def rules(self, player: str) -> str:
        """Rules, this player's view of the maze and the reply format of the mode."""
        partner = self.partner(player)
        if partner is None:
            partner_clause, view, turn, scoring, reply = "", SOLO_VIEW, SOLO_TURN, SCORING_SOLO, STEP_REPLY
        else:
            partner_clause = f" with {partner}"
            view, turn, scoring = PAIR_VIEW.format(partner=partner), PAIR_TURN.format(partner=partner), SCORING_PAIR
            reply = TALK_REPLY.format(partner=partner, limit=MAX_TALK) if self.mode == "pair" else STEP_REPLY
        return RULES.format(
            player=player,
            partner_clause=partner_clause,
            size=self.size,
            last=cell_name(self.size - 1, self.size - 1),
            start=cell_name(*self.start_cell),
            goal=cell_name(*self.goal),
            view_clause=view,
            turn_clause=turn,
            limit=self.turn_limit,
            scoring=scoring,
            reply=reply,
        )

    def picture(self, player: str) -> str:
        """The maze as ``player`` knows it: ``@`` the token, ``S`` the start, ``G`` the goal, ``?`` unknown."""
        letters = " ".join(string.ascii_lowercase[: self.size])
        lines = [f"    {letters}"]
        for row in range(self.size):
            cells = []
            for col in range(self.size):
                cell = (row, col)
                if cell == self.position:
                    cells.append("@")
                elif cell == self.goal:
                    cells.append("G")
                elif cell == self.start_cell:
                    cells.append("S")
                else:
                    cells.append(self.symbol(player, cell))
            lines.append(f"{row + 1:>3} {' '.join(cells)}")
        return "\n".join(lines)

    def symbol(self, player: str, cell: tuple[int, int]) -> str:
        """``#``, ``.`` or ``?``: what ``player`` knows of ``cell``."""
        if not self.known[player][cell]:
            return UNKNOWN
        return WALL if self.walls[cell] else OPEN

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The turn, the token's cell, this player's map and the reply asked for."""
        head = (
            f"Turn {self.turn + 1} of {self.turn_limit}. The token is on {cell_name(*self.position)}; "
            f"the goal is {cell_name(*self.goal)}. Steps taken: {self.steps}."
        )
        ask = "Write your message and end with [step] <direction>." if self.mode == "pair" else f"Reply with one of: {', '.join(self.legal_steps())}."
        return f"{head}\nYour map:\n{self.picture(player)}\n{ask}"

    def legal_steps(self) -> list[str]:
        """The steps that keep the token on the grid."""
        row, col = self.position
        return [s for s in STEPS if 0 <= row + DELTAS[s][0] < self.size and 0 <= col + DELTAS[s][1] < self.size]

    def legal_actions(self, player: str) -> list[int]:
        """Indices of the steps that stay on the grid (``silent`` and ``solo``)."""
        return [STEPS.index(s) for s in self.legal_steps()]

    def parse(self, player: str, text: str) -> Any:
        """``pair``: ``{"step": ..., "talk": ...}`` from the last ``[step]`` tag; otherwise the last step name."""
        if self.mode != "pair":
            return super().parse(player, text)
        found = list(STEP_PATTERN.finditer(text))
        if not found:
            raise InvalidMove("No step found. End your reply with [step] north, east, south, west or stay.")
        last = found[-1]
        step = last.group(1).lower()
        if step not in self.legal_steps():
            raise InvalidMove(f"[step] {step} would leave the grid. Steps allowed here: {', '.join(self.legal_steps())}.")
        talk = (text[: last.start()] + text[last.end() :]).strip()
        if len(talk) > MAX_TALK:
            raise InvalidMove(f"Your message has {len(talk)} characters; the limit is {MAX_TALK}.")
        return {"step": step, "talk": talk}

    # ------------------------------------------------------------------ rules
    def apply(self, ctx: Context, moves: dict[str, Any]) -> None:
        """Deliver the talk, then move the token if the proposals agree; end at the goal or the turn limit."""
        proposals = {}
        for player in self.players:
            move = moves[player]
            if isinstance(move, dict):
                proposals[player] = move["step"]
                partner = self.other(player)
                if move["talk"]:
                    self.heard[partner] += (move["talk"],)
                    ctx.say(player, move["talk"], to=partner)
            else:
                proposals[player] = move
        self.last = proposals
        self.turn += 1
        steps = set(proposals.values())
        said = ", ".join(f"{p} proposed {s}" for p, s in proposals.items())
        if len(steps) > 1:
            self.disagreements += 1
            ctx.tell(f"Turn {self.turn}: {said}. The proposals differ: the token stays on {cell_name(*self.position)}.")
        else:
            ctx.tell(f"Turn {self.turn}: {said}. {self.take(steps.pop())}")
        if self.position == self.goal:
            self.finish(ctx, success=True)
        elif self.turn >= self.turn_limit:
            self.finish(ctx, success=False)

    def take(self, step: str) -> str:
        """Take an agreed step; what happened, in words."""
        if step == "stay":
            return f"The token stays on {cell_name(*self.position)}."
        row, col = self.position
        target = (row + DELTAS[step][0], col + DELTAS[step][1])
        self.steps += 1
        for known in self.known.values():
            known[target] = True
        if self.walls[target]:
            self.bumps += 1
            return f"The token bumps into a wall at {cell_name(*target)} and stays on {cell_name(*self.position)}."
        self.position = target
        return f"The token moves {step} to {cell_name(*target)}."

    def finish(self, ctx: Context, *, success: bool) -> None:
        """End the episode: the path efficiency to everyone on success, 0 otherwise."""
        details = self.report(success)
        score = details["path_efficiency"]
        team = "solo" if self.mode == "solo" else "pair"
        if success:
            reason = f"the token reached the goal in {self.turn} turns and {self.steps} steps (shortest path {self.shortest})"
            ctx.finish({p: score for p in self.players}, reason=reason, teams={team: list(self.players)}, winning_team=team, details=details)
        else:
            reason = f"the turn limit ({self.turn_limit}) was reached before the goal"
            ctx.finish({p: 0.0 for p in self.players}, reason=reason, teams={team: list(self.players)}, details=details)

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The offender gets -1, its partner 0; nobody wins."""
        team = "solo" if self.mode == "solo" else "pair"
        rewards = {p: -1.0 if p == player else 0.0 for p in self.players}
        ctx.finish(rewards, reason=reason, teams={team: list(self.players)}, details=self.report(False))

    def report(self, success: bool) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        return {
            "mode": self.mode,
            "success": success,
            "turns": self.turn,
            "steps": self.steps,
            "bumps": self.bumps,
            "disagreements": self.disagreements,
            "shortest": self.shortest,
            "path_efficiency": self.shortest / self.steps if success else 0.0,
            "turn_efficiency": self.shortest / self.turn if success else 0.0,
        }

    # ------------------------------------------------------------------ views
    def view(self, player: str) -> dict[str, Any]:
        """What ``player`` knows: its map (rows of ``.``, ``#``, ``?``), the token, start, goal, turn, the last
        proposals and every message its partner sent it (a shared, read-only tuple)."""
        return {
            "player": player,
            "mode": self.mode,
            "size": self.size,
            "map": ["".join(self.symbol(player, (r, c)) for c in range(self.size)) for r in range(self.size)],
            "position": cell_name(*self.position),
            "start": cell_name(*self.start_cell),
            "goal": cell_name(*self.goal),
            "turn": self.turn,
            "turn_limit": self.turn_limit,
            "steps": self.steps,
            "legal_steps": self.legal_steps(),
            "last_proposals": dict(self.last),
            "heard": self.heard[player],
        }

    def vector(self, player: str) -> np.ndarray:
        """Known open, known wall, token and goal planes, the turn fraction, and the partner's last proposal."""
        cells = self.size * self.size
        values = np.zeros(self.vector_size, dtype=np.float32)
        known = self.known[player]
        values[:cells] = (known & ~self.walls).ravel()
        values[cells : 2 * cells] = (known & self.walls).ravel()
        values[2 * cells + self.position[0] * self.size + self.position[1]] = 1.0
        values[3 * cells + self.goal[0] * self.size + self.goal[1]] = 1.0
        values[4 * cells] = min(self.turn / max(self.turn_limit, 1), 1.0)
        partner = self.partner(player)
        if partner is not None and partner in self.last:
            values[4 * cells + 1 + STEPS.index(self.last[partner])] = 1.0
        return values

    def render(self) -> str:
        """The whole maze, the token, and the turn and step counts."""
        rows = []
        for row in range(self.size):
            line = []
            for col in range(self.size):
                cell = (row, col)
                line.append("@" if cell == self.position else "G" if cell == self.goal else WALL if self.walls[cell] else OPEN)
            rows.append("".join(line))
        return "\n".join(rows) + f"\nturn {self.turn}/{self.turn_limit}, steps {self.steps}, mode {self.mode}"
