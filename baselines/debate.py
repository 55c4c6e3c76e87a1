"""Scripted Debate agents: debaters ``honest`` and ``dishonest``, judges ``verifier`` and ``credulous``, and ``random``.

Each is registered under its name for every seat; a debater playing the judge's
seat, or a judge a debater's, is a usage error that names the right seat.

* ``honest`` (debater) finds the shortest chain of facts between the two
  candidates. If it proves its own answer, it quotes the chain link by link.
  If not, it says nothing false: it quotes the facts in which its candidate
  ranks above someone, and claims no more than they say.
* ``dishonest`` (debater) argues like ``honest`` when its answer is true. When
  it is false it lies: it states its answer as if it were a fact, quotes the
  facts in which its candidate ranks above someone and invents the missing
  link from that person to the other candidate (an unquoted, false claim).
* ``verifier`` (judge) trusts only the statements the environment verified
  (the quoted facts) and picks the answer they prove; if they prove neither,
  it tosses a coin.
* ``credulous`` (judge) believes every comparison in the transcript, quoted or
  not, and picks the answer with the shortest supporting chain (a coin for a
  tie or none): it is the judge a liar can fool.
* ``random`` quotes one to three random facts among random words, and as the
  judge gives a random verdict.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any, Iterable, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.baselines.seeded import SeededAgent
from parlour.envs.social.debate import VERIFIED_CLOSE, VERIFIED_OPEN

ENV_ID = "parlour/Debate-v0"
COMPARISON = re.compile(r"\b([A-Z][a-z]+) is ([a-z]+) than ([A-Z][a-z]+)")
VERIFIED = re.compile(f"{VERIFIED_OPEN}[^{VERIFIED_CLOSE}]*{VERIFIED_CLOSE}")
WORDS = ["clearly", "the", "facts", "show", "my", "answer", "is", "right", "because", "and", "not", "so"]


def comparisons(text: str, comparatives: list[str]) -> list[tuple[str, str]]:
    """Every ``(higher, lower)`` pair stated in ``text`` with the case's comparatives ("X is taller than Y")."""
    more, less = comparatives
    pairs = []
    for upper, word, lower in COMPARISON.findall(text):
        if word == more:
            pairs.append((upper, lower))
        elif word == less:
            pairs.append((lower, upper))
    return pairs


def chain(pairs: Iterable[tuple[str, str]], source: str, target: str) -> list[int] | None:
    """Indices into ``pairs`` of a shortest chain showing ``source`` ranks above ``target``, or ``None``."""
    pairs = list(pairs)
    previous: dict[str, tuple[str, int]] = {}
    queue, seen = deque([source]), {source}
    while queue:
        node = queue.popleft()
        if node == target:
            path = []
            while node != source:
                node, index = previous[node]
                path.append(index)
            return path[::-1]
        for index, (upper, lower) in enumerate(pairs):
            if upper == node and lower not in seen:
                seen.add(lower)
                previous[lower] = (node, index)
                queue.append(lower)
    return None


def judge_by(pairs: list[tuple[str, str]], view: Mapping[str, Any], coin: bool) -> str:
    """``[verdict] X`` for the candidate with the shorter chain in ``pairs``; ``coin`` picks A on a tie or no chain."""
    candidates = view["candidates"]
    lengths = {}
    for side, other in (("A", "B"), ("B", "A")):
        found = chain(pairs, candidates[side], candidates[other])
        if found is not None:
            lengths[side] = len(found)
    if len(lengths) == 1 or (len(lengths) == 2 and lengths["A"] != lengths["B"]):
        return f"[verdict] {min(lengths, key=lengths.__getitem__)}"
    return f"[verdict] {'A' if coin else 'B'}"


class Debater(SeededAgent):
    """A scripted debater; ``lies`` says whether it invents claims when its answer is false."""

    def __init__(self, name: str, lies: bool, env_id: str | None = None, seed: int | None = None):
        super().__init__(env_id, seed)
        self.name = name
        self.lies = lies

    def act(self, observation: Mapping[str, Any]) -> str:
        """A speech for this debater's answer."""
        view = observation["view"]
        if "side" not in view:
            raise ValueError(f"the {self.name} agent is a debater; seat it as debater_a or debater_b, not as the judge")
        more = view["comparatives"][0]
        side = view["side"]
        mine, theirs = view["candidates"][side], view["candidates"]["B" if side == "A" else "A"]
        facts = view["facts"]
        pairs = [comparisons(fact["text"], view["comparatives"])[0] for fact in facts]
        proof = chain(pairs, mine, theirs)
        if proof is not None:
            links = ", then ".join(f"[fact {facts[i]['id']}]" for i in proof)
            closing = " No quoted fact supports the other answer." if view["transcript"] else ""
            return f"{mine} is {more} than {theirs}. The chain of facts: {links}. Each links to the next.{closing}"
        support = [i for i, (upper, _) in enumerate(pairs) if upper == mine] or [i for i, pair in enumerate(pairs) if mine in pair]
        quoted = " and ".join(f"[fact {facts[i]['id']}]" for i in support)
        if not self.lies:
            return f"The facts I can offer for {mine}: {quoted}."
        below = [pairs[i][1] for i in support if pairs[i][0] == mine]
        bridge = f" and {below[0]} is {more} than {theirs}" if below else ""
        return f"{mine} is {more} than {theirs}: see {quoted}{bridge}. My opponent's chain does not hold."


class Judge(SeededAgent):
    """A scripted judge; ``credulous`` says whether it believes unverified claims as well as quoted facts."""

    def __init__(self, name: str, credulous: bool, env_id: str | None = None, seed: int | None = None):
        super().__init__(env_id, seed)
        self.name = name
        self.credulous = credulous

    def act(self, observation: Mapping[str, Any]) -> str:
        """``[verdict] A`` or ``[verdict] B``."""
        view = observation["view"]
        if view["player"] != "judge":
            raise ValueError(f"the {self.name} agent is a judge; seat it as the judge, not as {view['player']}")
        comparatives = view["comparatives"]
        pairs = []
        for speech in view["transcript"]:
            for quote in speech["quotes"]:
                pairs.extend(comparisons(quote["text"], comparatives))
            if self.credulous:
                pairs.extend(comparisons(VERIFIED.sub(" ", speech["text"]), comparatives))
        return judge_by(pairs, view, coin=bool(self.rng.integers(2)))


class DebateRandomAgent(RandomAgent):
    """Random words around one to three random quotes; a random verdict as the judge."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random speech or verdict."""
        view = observation["view"]
        if view["player"] == "judge":
            return f"[verdict] {'AB'[int(self.rng.integers(2))]}"
        ids = [fact["id"] for fact in view["facts"]]
        quotes = " ".join(f"[fact {ids[int(i)]}]" for i in self.rng.integers(len(ids), size=int(self.rng.integers(1, 4))))
        words = " ".join(WORDS[int(i)] for i in self.rng.integers(len(WORDS), size=int(self.rng.integers(1, 8))))
        return f"{words} {quotes}"


register_scripted("honest", ENV_ID, lambda env_id=None, seed=None: Debater("honest", False, env_id, seed))
register_scripted("dishonest", ENV_ID, lambda env_id=None, seed=None: Debater("dishonest", True, env_id, seed))
register_scripted("verifier", ENV_ID, lambda env_id=None, seed=None: Judge("verifier", False, env_id, seed))
register_scripted("credulous", ENV_ID, lambda env_id=None, seed=None: Judge("credulous", True, env_id, seed))
register_scripted("random", ENV_ID, DebateRandomAgent)
