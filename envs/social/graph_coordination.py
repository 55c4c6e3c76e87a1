"""GraphCoordination: one agent per node of a graph, talking only to its neighbours, solves a distributed problem (AgentsNet).

After AgentsNet (Grötschla et al., 2025, "AgentsNet: Coordination and
Collaborative Reasoning in Multi-Agent LLMs"): the players are the nodes of a
seeded connected graph; each knows only its own name, its neighbours' names
and how many agents there are. Play runs in synchronous rounds of messages
to neighbours, then every agent gives an answer, and the answers are scored
as AgentsNet scores them.

Options:

* ``num_players`` (4..32, default 8): the nodes, ``player_0`` ..
* ``task`` (default ``"coloring"``):

  - ``coloring``: answer ``Group k`` for k in 1..``num_colors`` (default: the
    graph's largest degree plus one, as AgentsNet). Score: the share of edges
    whose ends are in different groups.
  - ``leader_election``: answer ``Yes`` (I am the leader) or ``No``. Score 1
    if exactly one agent says Yes, else 0.
  - ``matching``: answer a neighbour's name (my partner) or ``None``. Score:
    the share of agents that are consistent: a named partner names them back,
    and an agent answering None has no neighbour that also answered None.
  - ``vertex_cover``: answer ``Yes`` (I am a coordinator) or ``No``; every
    edge should have a coordinator at one end, and no coordinator should be
    removable. Score: the share of edges covered, times the share of
    coordinators that cannot be removed without uncovering an edge.
  - ``consensus``: answer ``0`` or ``1``. Score 1 if all agree, else 0.

* ``graph`` (default ``"any"``): the graph family, ``"ws"`` (connected
  Watts–Strogatz small world, 4 neighbours, rewiring 0.4), ``"ba"``
  (Barabási–Albert, 2 edges per new node), ``"dt"`` (Delaunay triangulation of
  uniform random points in the unit square), or ``"any"``: one of the three
  drawn per episode. These are AgentsNet's families and parameters; the
  generators follow networkx's algorithms but draw from the episode's
  generator, so a record replays whatever networkx version is installed.
* ``rounds`` (1..100, default ``None``: AgentsNet's choice): rounds of
  messages before the answer. AgentsNet gives consensus and leader election,
  and every graph of more than 16 nodes, ``2 * diameter + 1`` rounds; the
  other tasks 4 rounds up to 4 nodes, 5 up to 8 and 6 up to 16.
* ``num_colors`` (coloring only, 1..32, default ``None``: largest degree + 1).

Moves (simultaneous: every agent acts in every round). In a message round, a
JSON object from neighbour names to messages, as in AgentsNet (``{"player_2":
"hello", "player_5": "I pick group 1"}``; neighbours left out get nothing;
the last such top-level object in the reply counts), or ``[all] message`` (the same
message to every neighbour), or ``[pass]`` (or ``{}``) to send nothing.
Messages are delivered to their recipients alone once every agent has
acted. In the answer round: ``[answer] X`` (or AgentsNet's ``### Final Answer
### X``), where X is one of the task's answers above (case does not matter;
``3`` means ``Group 3``).

Rewards (cooperative, ``zero_sum = False``): every agent gets the score (0
to 1) at the end. An agent that exceeds the invalid-action allowance ends the
game: it gets -1, the others 0. Nobody "wins"; the outcome details hold the
``task``, ``family``, ``score``, ``solved`` (score 1), every ``answers``, the
graph's ``edges``, ``diameter`` and ``max_degree``, the ``rounds``, and
``num_colors`` for coloring.

Version history: v0, first release.
"""

from __future__ import annotations

import json
import re
from collections import deque
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import FrozenDict
from parlour.envs.core.game import Game, InvalidMove, int_option
from parlour.envs.core.tools import object_spans, read_json

TASKS = ("coloring", "leader_election", "matching", "vertex_cover", "consensus")
FAMILIES = ("ws", "ba", "dt")

TASK_TEXT = {
    "coloring": (
        "Your task is to partition yourselves into groups such that agents who are neighbors are never in the same group.",
        "you state which group you assign yourself to. There are exactly {k} groups: Group 1, ..., Group {k}. "
        "Any two agents who are neighbors should be in different groups. Score: the share of neighbor pairs in different groups.",
    ),
    "leader_election": (
        "Your task is to collaboratively solve the problem of electing a single leader.",
        "you state whether or not you are the leader: Yes or No. Exactly one agent should answer Yes and all others No. "
        "Score: 1 if there is exactly one leader, else 0.",
    ),
    "matching": (
        "Your task is to build groups of two agents each who can communicate with each other.",
        "you name the neighbor you build a group with, or None if all your neighbors are already in other groups. "
        "Every agent should be in at most one group, and the two agents of a group must name each other. "
        "Score: the share of agents whose answer is consistent (a named partner names you back; if you say None, no neighbor of yours says None).",
    ),
    "vertex_cover": (
        "Your task is to select, among all agents, a group of coordinators such that whenever two neighbors communicate at least one of them is a coordinator. "
        "Every coordinator should have at least one neighbor who is not a coordinator.",
        "you state whether you are a coordinator: Yes or No. "
        "Score: the share of neighbor pairs with a coordinator, times the share of coordinators who could not stop being one without leaving a pair uncovered.",
    ),
    "consensus": (
        "Your goal is to agree on a single value with the other agents. The possible values are 0 and 1.",
        "you state the value you agreed on: 0 or 1. Score: 1 if every agent gives the same value, else 0.",
    ),
}

RULES = """You are {player}, an agent connected with other agents (your neighbors), with whom you communicate. Your neighbors can in turn communicate with their neighbors and so forth. {short}
1. There are {n} agents in total. Everybody has a unique name. Your name is {player}.
2. You can only communicate with your immediate neighbors ({neighbors}). You cannot see or directly communicate with anyone else, unless information is relayed by intermediate agents.
3. You exchange text messages with your neighbors in {rounds} rounds. The process is synchronous: in each round every agent decides what to send at the same time, and sees its neighbors' messages only in the next round.
4. Send your messages as a JSON object from neighbor names to messages, e.g. {example}. A neighbor you leave out gets nothing that round. You may also reply "[all] your message" to send the same message to every neighbor, or "[pass]" to send nothing.
5. After the {rounds} rounds of messages, {long}
Give the answer as: [answer] {answer_example}
Every agent's reward is the team's score."""


# ------------------------------------------------------------------------ graphs


def watts_strogatz(n: int, k: int, p: float, rng: np.random.Generator) -> set[tuple[int, int]]:
    """A Watts–Strogatz small world, as ``networkx.watts_strogatz_graph``: a ring lattice with ``k`` neighbours, edges rewired with probability ``p``."""
    if k >= n:
        return {(u, v) for u in range(n) for v in range(u + 1, n)}
    adjacency: list[set[int]] = [set() for _ in range(n)]
    for j in range(1, k // 2 + 1):
        for u in range(n):
            v = (u + j) % n
            adjacency[u].add(v)
            adjacency[v].add(u)
    for j in range(1, k // 2 + 1):
        for u in range(n):
            v = (u + j) % n
            if rng.random() < p:
                w = int(rng.integers(n))
                rewire = True
                while w == u or w in adjacency[u]:
                    w = int(rng.integers(n))
                    if len(adjacency[u]) >= n - 1:
                        rewire = False
                        break
                if rewire and v in adjacency[u]:
                    adjacency[u].discard(v)
                    adjacency[v].discard(u)
                    adjacency[u].add(w)
                    adjacency[w].add(u)
    return {(min(u, v), max(u, v)) for u in range(n) for v in adjacency[u]}


def barabasi_albert(n: int, m: int, rng: np.random.Generator) -> set[tuple[int, int]]:
    """A Barabási–Albert graph, as ``networkx.barabasi_albert_graph``: a star on ``m + 1`` nodes, then each new node links to ``m`` nodes chosen by degree."""
    edges = {(0, leaf) for leaf in range(1, m + 1)}
    repeated = [0] * m + list(range(1, m + 1))
    for source in range(m + 1, n):
        targets: set[int] = set()
        while len(targets) < m:
            targets.add(repeated[int(rng.integers(len(repeated)))])
        for target in sorted(targets):
            edges.add((target, source))
        repeated.extend(sorted(targets))
        repeated.extend([source] * m)
    return edges


def delaunay(points: np.ndarray) -> set[tuple[int, int]]:
    """The edges of the Delaunay triangulation of ``points`` (Bowyer–Watson; points in general position).

    A finite enclosing triangle can leave out an edge of the convex hull (its
    corners fall inside a circle they should not), and every hull edge is a
    Delaunay edge, so the hull's edges are added at the end.
    """
    n = len(points)
    pts = [(float(x), float(y)) for x, y in points]
    # A triangle far around the unit square holds every point; its corners are indices n, n+1, n+2.
    pts += [(-1e4, -1e4), (1e4, -1e4), (0.0, 1e4)]
    triangles = [(n, n + 1, n + 2)]
    for index in range(n):
        x, y = pts[index]
        bad = [t for t in triangles if _in_circumcircle(pts, t, x, y)]
        boundary: dict[tuple[int, int], int] = {}
        for a, b, c in bad:
            for edge in ((a, b), (b, c), (c, a)):
                key = (min(edge), max(edge))
                boundary[key] = boundary.get(key, 0) + 1
        triangles = [t for t in triangles if t not in bad]
        triangles += [(u, v, index) for (u, v), count in boundary.items() if count == 1]
    edges = set()
    for triangle in triangles:
        for u, v in ((triangle[0], triangle[1]), (triangle[1], triangle[2]), (triangle[0], triangle[2])):
            if u < n and v < n:
                edges.add((min(u, v), max(u, v)))
    hull = convex_hull(pts[:n])
    edges.update((min(u, v), max(u, v)) for u, v in zip(hull, hull[1:] + hull[:1]))
    return edges


def convex_hull(pts: list[tuple[float, float]]) -> list[int]:
    """The indices of the convex hull's corners in order (Andrew's monotone chain)."""
    order = sorted(range(len(pts)), key=lambda i: pts[i])

    def turn(o: int, a: int, b: int) -> float:
        """Twice the signed area of the triangle o, a, b: positive for a left turn."""
        return (pts[a][0] - pts[o][0]) * (pts[b][1] - pts[o][1]) - (pts[a][1] - pts[o][1]) * (pts[b][0] - pts[o][0])

    chains = []
    for sequence in (order, order[::-1]):
        chain: list[int] = []
        for i in sequence:
            while len(chain) >= 2 and turn(chain[-2], chain[-1], i) <= 0:
                chain.pop()
            chain.append(i)
        chains.append(chain[:-1])
    return chains[0] + chains[1]


def _in_circumcircle(pts: list[tuple[float, float]], triangle: tuple[int, int, int], x: float, y: float) -> bool:
    """Whether (x, y) lies strictly inside the circle through the triangle's corners."""
    (ax, ay), (bx, by), (cx, cy) = (pts[i] for i in triangle)
    if (bx - ax) * (cy - ay) - (by - ay) * (cx - ax) < 0:  # make the corners counter-clockwise
        (bx, by), (cx, cy) = (cx, cy), (bx, by)
    ax, ay, bx, by, cx, cy = ax - x, ay - y, bx - x, by - y, cx - x, cy - y
    return (ax * ax + ay * ay) * (bx * cy - cx * by) - (bx * bx + by * by) * (ax * cy - cx * ay) + (cx * cx + cy * cy) * (ax * by - bx * ay) > 0


def distances_from(adjacency: list[list[int]], source: int) -> list[int]:
    """Hop distances from ``source`` (-1 for unreachable nodes)."""
    dist = [-1] * len(adjacency)
    dist[source] = 0
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for v in adjacency[u]:
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


def generate(family: str, n: int, rng: np.random.Generator) -> list[list[int]]:
    """A connected graph of ``family`` on ``n`` nodes as sorted adjacency lists (AgentsNet's parameters)."""
    for _ in range(100):
        if family == "ws":
            edges = watts_strogatz(n, 4, 0.4, rng)
        elif family == "ba":
            edges = barabasi_albert(n, 2, rng)
        else:
            edges = delaunay(rng.random((n, 2)))
        adjacency: list[list[int]] = [[] for _ in range(n)]
        for u, v in edges:
            adjacency[u].append(v)
            adjacency[v].append(u)
        adjacency = [sorted(neighbours) for neighbours in adjacency]
        if min(distances_from(adjacency, 0)) >= 0:
            return adjacency
    raise RuntimeError(f"no connected {family} graph on {n} nodes in 100 tries")


# ---------------------------------------------------------------------- scoring


def score_answers(task: str, adjacency: list[list[int]], answers: list[str], names: list[str], num_colors: int = 0) -> float:
    """AgentsNet's score of valid ``answers`` (one per node, canonical spelling) for ``task``."""
    edges = [(u, v) for u, neighbours in enumerate(adjacency) for v in neighbours if u < v]
    n = len(adjacency)
    if task == "coloring":
        return sum(answers[u] != answers[v] for u, v in edges) / len(edges)
    if task == "leader_election":
        return float(answers.count("Yes") == 1)
    if task == "consensus":
        return float(len(set(answers)) == 1)
    if task == "matching":
        inconsistent = 0
        index = {name: i for i, name in enumerate(names)}
        for u in range(n):
            partner = answers[u]
            if partner != "None":
                if index[partner] not in adjacency[u] or answers[index[partner]] != names[u]:
                    inconsistent += 1
            elif any(answers[v] == "None" for v in adjacency[u]):
                inconsistent += 1
        return (n - inconsistent) / n

    def coverage(chosen: list[str]) -> float:
        """The share of edges with a coordinator at one end."""
        return sum(chosen[u] == "Yes" or chosen[v] == "Yes" for u, v in edges) / len(edges)

    cover = [u for u in range(n) if answers[u] == "Yes"]
    if not cover:
        return 0.0
    necessary = sum(coverage(answers[:u] + ["No"] + answers[u + 1 :]) < 1.0 for u in cover)
    return coverage(answers) * necessary / len(cover)


# ------------------------------------------------------------------------- game

_ALL = re.compile(r"\[all\]", re.IGNORECASE)
_PASS = re.compile(r"\[pass\]", re.IGNORECASE)
_ANSWER = re.compile(r"(?:\[answer\]|###\s*final\s+answer\s*###)\s*:?\s*", re.IGNORECASE)
_ANSWER_TOKEN = re.compile(r"(group\s*\d+|\d+|yes|no|none|player_\d+)(?![\w])", re.IGNORECASE)


class GraphCoordination(Game):
    """AgentsNet's distributed problems on a seeded graph; see the module docstring."""

    name = "GraphCoordination"
    reference_agents = ("textbook", "random")
    description = "Agents on a graph message only their neighbours, then solve colouring, leader election, matching, vertex cover or consensus."
    category = "cooperation"
    zero_sum = False
    simultaneous = True

    def __init__(
        self,
        *,
        num_players: int = 8,
        task: str = "coloring",
        graph: str = "any",
        rounds: int | None = None,
        num_colors: int | None = None,
    ):
        self.num_players = int_option("num_players", num_players, 4, 32)
        if task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}, got {task!r}")
        if graph not in FAMILIES + ("any",):
            raise ValueError(f"graph must be one of {', '.join(FAMILIES)} or 'any', got {graph!r}")
        self.task = task
        self.graph = graph
        self.rounds_option = None if rounds is None else int_option("rounds", rounds, 1, 100)
        if num_colors is not None:
            if task != "coloring":
                raise ValueError(f"num_colors applies only to task='coloring', not {task!r}")
            int_option("num_colors", num_colors, 1, 32)
        self.colors_option = num_colors
        self.players = [f"player_{i}" for i in range(num_players)]
        self.family = graph
        self.adjacency: list[list[int]] = [[] for _ in self.players]
        self.diameter = 0
        self.rounds = 0
        self.num_colors = 0
        self.round = 0
        self.answers: dict[str, str] = {}
        # Tuples that only grow, of read-only entries: every view shares them instead of copying them.
        self.received: dict[str, tuple[FrozenDict, ...]] = {p: () for p in self.players}
        self.sent: dict[str, tuple[FrozenDict, ...]] = {p: () for p in self.players}

    # ----------------------------------------------------------------- episode
    def start(self, ctx: Context) -> None:
        """Draw the graph, fix the rounds and the colours, open round 1."""
        self.family = self.graph if self.graph != "any" else FAMILIES[int(ctx.rng.integers(len(FAMILIES)))]
        self.adjacency = generate(self.family, self.num_players, ctx.rng)
        self.diameter = max(max(distances_from(self.adjacency, u)) for u in range(self.num_players))
        self.rounds = self.rounds_option or self._agentsnet_rounds()
        self.num_colors = (self.colors_option or self.max_degree + 1) if self.task == "coloring" else 0
        self.round = 1
        self.answers = {}
        self.received = {p: () for p in self.players}
        self.sent = {p: () for p in self.players}

    def _agentsnet_rounds(self) -> int:
        """AgentsNet's rounds: 2 * diameter + 1 for consensus, leader election and graphs over 16 nodes; else 4, 5 or 6 by size."""
        if self.task in ("consensus", "leader_election") or self.num_players > 16:
            return 2 * self.diameter + 1
        return 4 if self.num_players <= 4 else 5 if self.num_players <= 8 else 6

    @property
    def max_degree(self) -> int:
        """The largest number of neighbours of a node."""
        return max(len(neighbours) for neighbours in self.adjacency)

    @property
    def answering(self) -> bool:
        """Whether the message rounds are over and the agents give their answers."""
        return self.round > self.rounds

    def neighbours(self, player: str) -> list[str]:
        """The names of ``player``'s neighbours, in seat order."""
        return [self.players[v] for v in self.adjacency[self.players.index(player)]]

    def valid_answers(self, player: str) -> list[str]:
        """The answers ``player`` may give, spelled as scored."""
        if self.task == "coloring":
            return [f"Group {k}" for k in range(1, self.num_colors + 1)]
        if self.task == "matching":
            return self.neighbours(player) + ["None"]
        if self.task == "consensus":
            return ["0", "1"]
        return ["Yes", "No"]

    # ------------------------------------------------------------------- rules
    def rules(self, player: str) -> str:
        """AgentsNet's instructions with this graph's numbers, and the reply formats."""
        neighbours = self.neighbours(player)
        short, long = TASK_TEXT[self.task]
        example = json.dumps({name: f"Message to {name}." for name in neighbours[:2]})
        return RULES.format(
            player=player,
            short=short,
            n=self.num_players,
            neighbors=", ".join(neighbours),
            rounds=self.rounds,
            example=example,
            long=long.format(k=self.num_colors),
            answer_example=self.valid_answers(player)[0],
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The round and what to send, or the request for the answer."""
        neighbours = ", ".join(self.neighbours(player))
        if self.answering:
            return f"Message passing has finished. Give your answer: [answer] followed by one of: {', '.join(self.valid_answers(player))}."
        left = self.rounds - self.round
        last = " These are the last messages your neighbors will receive from you." if left == 0 else ""
        return (
            f"Round {self.round} of {self.rounds} ({left} more after this one before you answer).{last} Your neighbors: {neighbours}. "
            'Reply with a JSON object from neighbor names to messages, "[all] message", or "[pass]".'
        )

    def parse(self, player: str, text: str) -> dict[str, Any]:
        """A message round: ``{"to": {neighbour: text}}``; the answer round: ``{"answer": X}`` (grammar in the module docstring)."""
        if self.answering:
            return {"answer": self._parse_answer(player, text)}
        return {"to": self._parse_messages(player, text)}

    def _parse_messages(self, player: str, text: str) -> dict[str, str]:
        """The messages of a reply: the last JSON object keyed by names, else ``[all]``, else ``[pass]``."""
        neighbours = self.neighbours(player)
        if text.strip() == "{}":
            return {}
        found: dict[str, Any] | None = None
        # Each outermost object is decoded once: retrying the decoder at every brace of an unclosed object is quadratic.
        for start, end in object_spans(text):
            try:
                value = read_json(text[start:end])
            except ValueError:
                continue
            if isinstance(value, dict) and value and all(re.fullmatch(r"player_\d+", str(key)) for key in value):
                found = value
        if found is not None:
            strangers = [key for key in found if key not in neighbours]
            if strangers:
                raise InvalidMove(
                    f"{', '.join(strangers)} {'is' if len(strangers) == 1 else 'are'} not your neighbor(s); you can only message {', '.join(neighbours)}."
                )
            bad = [key for key, value in found.items() if not isinstance(value, (str, int, float)) or isinstance(value, bool)]
            if bad:
                raise InvalidMove(f"The message to {bad[0]} must be text.")
            return {key: str(found[key]) for key in neighbours if key in found}
        tags = list(_ALL.finditer(text))
        if tags:
            message = text[tags[-1].end() :].strip()
            return {name: message for name in neighbours} if message else {}
        if _PASS.search(text):
            return {}
        raise InvalidMove(
            f'No messages found. Reply with a JSON object such as {{"{neighbours[0]}": "hello"}}, with "[all] your message", or with "[pass]".'
        )

    def _parse_answer(self, player: str, text: str) -> str:
        """The answer after the last ``[answer]`` (or ``### Final Answer ###``) marker, spelled as scored."""
        markers = list(_ANSWER.finditer(text))
        valid = self.valid_answers(player)
        if not markers:
            raise InvalidMove(f"No answer found. Reply with: [answer] followed by one of: {', '.join(valid)}.")
        token = _ANSWER_TOKEN.match(text, markers[-1].end())
        if token is None:
            raise InvalidMove(f"'[answer]' must be followed by one of: {', '.join(valid)}.")
        word = token.group(1).lower()
        if self.task == "coloring":
            word = "group " + re.sub(r"\D", "", word)
        by_key = {answer.lower(): answer for answer in valid}
        if word not in by_key:
            raise InvalidMove(f"'{token.group(1)}' is not an answer here. Answer one of: {', '.join(valid)}.")
        return by_key[word]

    def apply(self, ctx: Context, moves: dict[str, Any]) -> None:
        """Deliver a round's messages to their recipients, or score the answers."""
        if self.answering:
            self.answers = {player: moves[player]["answer"] for player in self.players}
            answers = [self.answers[p] for p in self.players]
            score = score_answers(self.task, self.adjacency, answers, self.players, self.num_colors)
            for player in self.players:
                ctx.reward(player, score)
            summary = ", ".join(f"{p}: {a}" for p, a in zip(self.players, answers))
            ctx.tell(f"Answers: {summary}. Score: {score:.3f}.")
            ctx.finish(reason=f"{self.task} answered with score {score:.3f}", details=self.report(score))
            return
        # A round's messages join each reader's history at once: one longer tuple per reader, not one per message.
        arrived: dict[str, list[FrozenDict]] = {p: [] for p in self.players}
        for sender in self.players:
            messages = moves[sender]["to"]
            self.sent[sender] += (FrozenDict(round=self.round, to=FrozenDict(messages)),)
            for recipient, text in messages.items():
                arrived[recipient].append(FrozenDict({"round": self.round, "from": sender, "text": text}))
                ctx.say(sender, text, to=recipient)
        for player, entries in arrived.items():
            self.received[player] += tuple(entries)
        for player in self.players:
            silent = [n for n in self.neighbours(player) if player not in moves[n]["to"]]
            if silent:
                ctx.tell(f"In round {self.round} these neighbors sent you nothing: {', '.join(silent)}.", to=player)
        self.round += 1

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The offender gets -1, the others 0; the task counts as failed."""
        ctx.finish({player: -1.0}, reason=reason, details={**self.report(0.0), "forfeited": player})

    def report(self, score: float) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        details = {
            "task": self.task,
            "family": self.family,
            "score": score,
            "solved": score == 1.0,
            "answers": dict(self.answers),
            "edges": [[u, v] for u, neighbours in enumerate(self.adjacency) for v in neighbours if u < v],
            "diameter": self.diameter,
            "max_degree": self.max_degree,
            "rounds": self.rounds,
        }
        if self.task == "coloring":
            details["num_colors"] = self.num_colors
        return details

    # ------------------------------------------------------------ observations
    def view(self, player: str) -> dict[str, Any]:
        """What the agent knows: its name and neighbours, the task, the round, the answers it may give, and its messages so far
        (shared, read-only tuples)."""
        return {
            "player": player,
            "neighbors": self.neighbours(player),
            "num_players": self.num_players,
            "task": self.task,
            "round": self.round,
            "rounds": self.rounds,
            "phase": "answer" if self.answering else "message",
            "answers": self.valid_answers(player),
            "num_colors": self.num_colors,
            "received": self.received[player],
            "sent": self.sent[player],
        }

    def render(self) -> str:
        """The graph, the round and the answers given."""
        lines = [
            f"{self.task} on a {self.family} graph of {self.num_players} nodes (diameter {self.diameter}); round {min(self.round, self.rounds)} of {self.rounds}"
        ]
        for u, player in enumerate(self.players):
            answer = f" -> {self.answers[player]}" if player in self.answers else ""
            lines.append(f"{player}: {', '.join(self.players[v] for v in self.adjacency[u])}{answer}")
        return "\n".join(lines)
