"""A league of opponents for self-play, drawn by prioritised fictitious self-play (PFSP).

Members are scripted agents (fixed anchors) and frozen snapshots of the
learner. The league keeps, for each member, the learner's recent results
against it: the mean score over the last ``window`` games (win 1, draw 1/2,
loss 0), starting from a prior of 1/2. PFSP (AlphaStar, Vinyals et al. 2019)
draws member ``i`` with probability proportional to

    w_i = max((1 - p_i) ** power, floor)

where ``p_i`` is that mean score: opponents the learner still loses to are
played most, ones it beats every time rarely, but never not at all (``floor``).
Snapshots beyond ``max_snapshots`` are dropped oldest first, except the first,
which stays as the reference the learner must keep beating.
"""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Member:
    """One opponent of the league: its name, kind, agent template, and the learner's recent scores against it."""

    name: str
    #: ``"scripted"`` or ``"snapshot"``.
    kind: str
    #: The agent, copied (``copy.deepcopy``) for each episode it plays.
    agent: Any
    scores: deque = field(default_factory=deque)
    games: int = 0
    #: The sum of ``scores``, kept as they come and go (a draw happens every episode).
    total: float = 0.0

    def score(self) -> float:
        """The learner's mean score against this member over the window (1/2 before any game)."""
        return self.total / len(self.scores) if self.scores else 0.5


class League:
    """PFSP over scripted anchors and learner snapshots (see the module docstring)."""

    def __init__(self, power: float = 2.0, floor: float = 0.05, window: int = 200, max_snapshots: int = 20):
        if power < 0 or not 0 < floor <= 1 or window < 1 or max_snapshots < 1:
            raise ValueError("League needs power >= 0, 0 < floor <= 1, window >= 1 and max_snapshots >= 1")
        self.power = power
        self.floor = floor
        self.window = window
        self.max_snapshots = max_snapshots
        self.members: list[Member] = []

    def add(self, name: str, agent: Any, kind: str = "scripted") -> Member:
        """Add a member; adding a snapshot beyond ``max_snapshots`` drops the oldest but the first."""
        if any(member.name == name for member in self.members):
            raise ValueError(f"the league already has a member named {name!r}")
        member = Member(name, kind, agent, deque(maxlen=self.window))
        self.members.append(member)
        snapshots = [m for m in self.members if m.kind == "snapshot"]
        if len(snapshots) > self.max_snapshots:
            self.members.remove(snapshots[1])
        return member

    def weights(self) -> np.ndarray:
        """The PFSP sampling probabilities of the members, in order."""
        if not self.members:
            raise ValueError("the league is empty: add scripted agents or a snapshot first")
        raw = np.array([max((1.0 - m.score()) ** self.power, self.floor) for m in self.members])
        return raw / raw.sum()

    def draw(self, rng: np.random.Generator) -> Member:
        """A member drawn by PFSP."""
        cumulative = np.cumsum(self.weights())
        return self.members[min(int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right")), len(self.members) - 1)]

    def report(self, member: Member, score: float) -> None:
        """The learner scored ``score`` (1 win, 1/2 draw, 0 loss) in a game against ``member``."""
        if len(member.scores) == member.scores.maxlen:
            member.total -= member.scores[0]
        member.scores.append(float(score))
        member.total += float(score)
        member.games += 1

    def opponent(self, member: Member) -> Any:
        """A fresh copy of ``member``'s agent for one seat of one episode."""
        return copy.deepcopy(member.agent)

    def table(self) -> list[dict[str, Any]]:
        """Per member: name, kind, games played, the learner's mean score and the sampling probability."""
        return [
            {"name": m.name, "kind": m.kind, "games": m.games, "score": m.score(), "probability": float(p)}
            for m, p in zip(self.members, self.weights())
        ]
