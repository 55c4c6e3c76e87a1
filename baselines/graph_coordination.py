"""Scripted agents for GraphCoordination: ``textbook`` (the classic distributed algorithms) and ``random``.

``textbook`` runs, per task, a textbook algorithm of the synchronous
message-passing (LOCAL) model, broadcasting one short line per round to its
neighbours with ``[all]``:

* leader election: flood the largest name seen (``max player_7``); the agent
  whose own name it is says Yes. Correct once the rounds reach the diameter.
* consensus: flood the largest name seen with that agent's random bit
  (``max player_7 value 1``); everyone answers the bit of the largest name.
* coloring: random colour trials (``try 3`` / ``fixed 3``): an uncoloured agent
  tries a colour no neighbour has fixed; a try no neighbour shared in the same
  round becomes fixed. With largest degree + 1 colours a palette colour is
  always left; an agent still unfixed at the end picks the colour fewest
  neighbours hold.
* matching: locally heaviest edges (``free pick player_4`` / ``matched
  player_4``): every free agent points at the free neighbour across its
  heaviest edge, under weights that are a hash of the two names and the
  round (both ends compute them without a message); two agents pointing at
  each other are matched. An edge heavier than every other edge at its two
  free ends is taken, so the matching grows until it is maximal (an agent
  learns one round late that a neighbour was matched).
* vertex cover: Luby's maximal independent set (``undecided 48213`` / ``in`` /
  ``out``): an undecided agent whose random priority beats its undecided
  neighbours' joins the set, and neighbours of a member leave; the cover is
  everyone outside the set, which is a minimal vertex cover (every member of
  the cover has a neighbour in the set). Agents still undecided at the end say Yes.

The agent keeps no memory: each turn it replays the rounds so far from its
view (its own messages, with the random values it sent, and those it
received), so it works from any observation, snapshots included.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Protocol

import numpy as np

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.baselines.seeded import SeededAgent

ENV_ID = "parlour/GraphCoordination-v0"

_NAME = re.compile(r"player_(\d+)")
_MAX = re.compile(r"max player_(\d+)(?: value ([01]))?")
_COLOR = re.compile(r"(try|fixed) (\d+)")
_POINTER = re.compile(r"(free pick|matched) (player_\d+|none)")
_STATUS = re.compile(r"\s*(?:(undecided) (\d+)|(in|out))\s*")

RANDOM_MESSAGES = ("hello", "I am here.", "Which group are you in?", "Let us pick the agent with the largest name.")


def seat(name: str) -> int:
    """The number in a player's name, by which names are compared."""
    return int(name.rsplit("_", 1)[1])


class Algorithm(Protocol):
    """One player's side of a task's distributed algorithm, as :class:`TextbookAgent` drives it round by round."""

    def observe(self, own: str, received: Mapping[str, str]) -> None:
        """Take in a past round: the message this player sent and those it received, by sender."""
        ...

    def compose(self, rng: np.random.Generator) -> str:
        """This round's message to everyone."""
        ...

    def answer(self) -> str:
        """The player's final answer."""
        ...


class TextbookAgent(SeededAgent):
    """The textbook distributed algorithm for the task in the view; see the module docstring."""

    name = "textbook"

    def act(self, observation: Mapping[str, Any]) -> str:
        """This round's ``[all]`` message, or the ``[answer]``."""
        view = observation["view"]
        algorithm = ALGORITHMS[view["task"]](view)
        sent = {entry["round"]: next(iter(entry["to"].values()), "") for entry in view["sent"]}
        received: dict[int, dict[str, str]] = {}
        for message in view["received"]:
            received.setdefault(message["round"], {})[message["from"]] = message["text"]
        for past in range(1, view["round"]):
            algorithm.observe(sent.get(past, ""), received.get(past, {}))
        if view["phase"] == "answer":
            return f"[answer] {algorithm.answer()}"
        return f"[all] {algorithm.compose(self.rng)}"


class Flooding:
    """Leader election and consensus: flood the largest name seen, with its owner's bit for consensus."""

    def __init__(self, view: Mapping[str, Any]):
        self.me = seat(view["player"])
        self.consensus = view["task"] == "consensus"
        self.best = self.me
        self.value: int | None = None

    def observe(self, own: str, received: Mapping[str, str]) -> None:
        """Keep the largest name (and its bit) among this round's messages, own included."""
        for text in [own, *received.values()]:
            for match in _MAX.finditer(text):
                name = int(match.group(1))
                if name > self.best or (name == self.best and self.value is None and match.group(2) is not None):
                    self.best = name
                    self.value = None if match.group(2) is None else int(match.group(2))

    def compose(self, rng) -> str:
        """``max player_N`` (with ``value B`` for consensus; an agent's own bit is drawn when it first speaks)."""
        if not self.consensus:
            return f"max player_{self.best}"
        if self.value is None:
            self.value = int(rng.integers(2))
        return f"max player_{self.best} value {self.value}"

    def answer(self) -> str:
        """Yes for the leader (consensus: the bit of the largest name)."""
        if self.consensus:
            return str(self.value if self.value is not None else 0)
        return "Yes" if self.best == self.me else "No"


class ColorTrials:
    """Random colour trials: a try no neighbour shares, on a colour no neighbour fixed, becomes fixed."""

    def __init__(self, view: Mapping[str, Any]):
        self.colors = view["num_colors"]
        self.fixed: int | None = None
        self.neighbours_fixed: dict[str, int] = {}
        self.neighbours_tried: dict[str, int] = {}

    def observe(self, own: str, received: Mapping[str, str]) -> None:
        """Fix our try if it clashed with nobody; learn the neighbours' fixed colours and tries."""
        self.neighbours_tried = {}
        for sender, text in received.items():
            match = _COLOR.search(text)
            if match:
                color = int(match.group(2))
                (self.neighbours_fixed if match.group(1) == "fixed" else self.neighbours_tried)[sender] = color
        mine = _COLOR.search(own)
        if mine and self.fixed is None:
            color = int(mine.group(2))
            if mine.group(1) == "fixed" or (color not in self.neighbours_tried.values() and color not in self.neighbours_fixed.values()):
                self.fixed = color

    def compose(self, rng) -> str:
        """``fixed C``, or ``try C`` for a random colour no neighbour fixed."""
        if self.fixed is not None:
            return f"fixed {self.fixed}"
        taken = set(self.neighbours_fixed.values())
        palette = [c for c in range(1, self.colors + 1) if c not in taken] or list(range(1, self.colors + 1))
        return f"try {palette[int(rng.integers(len(palette)))]}"

    def answer(self) -> str:
        """The fixed colour, else the colour fewest neighbours hold or last tried."""
        if self.fixed is not None:
            return f"Group {self.fixed}"
        held = [*self.neighbours_fixed.values(), *self.neighbours_tried.values()]
        return f"Group {min(range(1, self.colors + 1), key=held.count)}"


class PointerMatching:
    """Every free agent points at the free neighbour across its heaviest edge this round; mutual pointers are matched.

    Edge weights are a hash of the two names and the round, which both ends
    compute alike without a message: the heaviest edge of the graph is always
    taken, and random-like weights let many edges be locally heaviest at once.
    """

    def __init__(self, view: Mapping[str, Any]):
        self.me = view["player"]
        self.free = set(view["neighbors"])
        self.partner: str | None = None
        self.round = 0

    def observe(self, own: str, received: Mapping[str, str]) -> None:
        """Drop neighbours that are matched; match if our pick picked us."""
        self.round += 1
        picks = {}
        for sender, text in received.items():
            match = _POINTER.search(text)
            if match is None:
                continue
            if match.group(1) == "matched":
                self.free.discard(sender)
            else:
                picks[sender] = match.group(2)
        mine = _POINTER.search(own)
        if mine and self.partner is None:
            target = mine.group(2)
            if mine.group(1) == "matched" or picks.get(target) == self.me:
                self.partner = target

    def compose(self, rng) -> str:
        """``matched P``, or ``free pick P`` (``none`` when no neighbour is free)."""
        if self.partner is not None:
            return f"matched {self.partner}"
        pick = max(self.free, key=lambda other: edge_weight(self.me, other, self.round + 1), default="none")
        return f"free pick {pick}"

    def answer(self) -> str:
        """The partner, or None."""
        return self.partner or "None"


def edge_weight(a: str, b: str, round_: int) -> tuple[int, int]:
    """A pseudo-random weight of the edge between ``a`` and ``b`` in a round, the same at both ends (ties broken by the names)."""
    low, high = sorted((seat(a), seat(b)))
    x = (low * 0x9E3779B1 + high * 0x85EBCA77 + round_ * 0xC2B2AE3D) & 0xFFFFFFFF
    for shift in (16, 13, 16):
        x ^= x >> shift
        x = (x * 0x7FEB352D) & 0xFFFFFFFF
    return x, low * 64 + high


class LubyCover:
    """The complement of Luby's maximal independent set: a minimal vertex cover."""

    def __init__(self, view: Mapping[str, Any]):
        self.me = seat(view["player"])
        self.status = "undecided"
        self.priority = 0

    def observe(self, own: str, received: Mapping[str, str]) -> None:
        """Leave if a neighbour joined; join if our priority beat every undecided neighbour's."""
        mine = _STATUS.fullmatch(own)
        if mine and mine.group(3):
            self.status = mine.group(3)
        elif mine:
            self.priority = int(mine.group(2))
        if self.status != "undecided":
            return
        rivals = []
        for sender, text in received.items():
            match = _STATUS.fullmatch(text)
            if match is None:
                continue
            if match.group(3) == "in":
                self.status = "out"
                return
            if match.group(1):
                rivals.append((int(match.group(2)), seat(sender)))
        if all((self.priority, self.me) > rival for rival in rivals):
            self.status = "in"

    def compose(self, rng) -> str:
        """``in``, ``out``, or ``undecided P`` with a fresh random priority."""
        if self.status != "undecided":
            return self.status
        return f"undecided {int(rng.integers(1_000_000))}"

    def answer(self) -> str:
        """Members of the independent set are not coordinators; everyone else is."""
        return "No" if self.status == "in" else "Yes"


ALGORITHMS: dict[str, Callable[[Mapping[str, Any]], Algorithm]] = {
    "leader_election": Flooding,
    "consensus": Flooding,
    "coloring": ColorTrials,
    "matching": PointerMatching,
    "vertex_cover": LubyCover,
}


class GraphRandomAgent(RandomAgent):
    """Sends a random line to everyone, to one random neighbour, or nothing; then gives a random valid answer."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random message move or answer."""
        view = observation["view"]
        if view["phase"] == "answer":
            answers = view["answers"]
            return f"[answer] {answers[int(self.rng.integers(len(answers)))]}"
        choice = int(self.rng.integers(3))
        line = RANDOM_MESSAGES[int(self.rng.integers(len(RANDOM_MESSAGES)))]
        if choice == 0:
            return "[pass]"
        if choice == 1:
            return f"[all] {line}"
        neighbours = view["neighbors"]
        return '{"%s": "%s"}' % (neighbours[int(self.rng.integers(len(neighbours)))], line)


register_scripted("textbook", ENV_ID, TextbookAgent)
register_scripted("random", ENV_ID, GraphRandomAgent)
# A cooperative game: the easiest neighbours (who follow the textbook algorithm) first, random ones last.
register_ladder(ENV_ID, ["textbook", "random"])
