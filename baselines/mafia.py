"""Scripted agents for Mafia: ``reasoner`` (plays every role), ``random``, and :class:`TeamMix` for mixed line-ups.

``reasoner`` reads only its view: its role, the public talk, votes and
deaths (with the revealed roles), and its private results. Claims are read
from the talk in the phrasing it uses itself: "I am the detective." with
results "player_3 is mafia." / "player_4 is innocent."; accusations are
"player_3 is mafia", "I suspect player_3" or "vote player_3".

* Village (villagers, and the detective and doctor by day) follow confirmed
  information. A detective claim is believed while it is the only one and no
  revealed role contradicts it; a claimant revealed as the detective at death
  is believed for good; a claim whose results a revealed role contradicts is a
  lie. They vote for a player known to be mafia, else, when two claims
  contest, for the later claimant (one of them lies, and a vote reveals
  which), else for the day's most accused player, else (the day's first
  speakers) for a random player not publicly cleared; they say so in the
  talk, so that the village votes together. Each names the player it votes
  for as its suspect.
* The detective is truthful and open: it checks a random unchecked player
  each night and, from day 1, says it is the detective with all its results
  (claiming at once wins the village more games than waiting for a mafia
  find, though it draws the mafia's knife; the doctor then guards it).
* The doctor protects the believed detective claimant, else itself, never the
  same player two nights running.
* The mafia coordinate and lie: every member computes the same victim (a
  detective claimant, else the villager who accused the mafia most, else a
  pick salted with the team's names) and the same village scapegoat to vote
  out; a member accused by a detective claim counter-claims to be the
  detective and accuses the claimant; otherwise they push the scapegoat in
  the talk.

:class:`TeamMix` plays the village with one agent and the mafia with another,
so a village win rate can be measured per line-up (see the tests).
"""

from __future__ import annotations

import re
import zlib
from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.baselines.seeded import SeededAgent

ENV_ID = "parlour/Mafia-v0"

_CLAIM = re.compile(r"\bI am the detective\b", re.IGNORECASE)
_RESULT = re.compile(r"\b(player_\d+) is (mafia|innocent)\b", re.IGNORECASE)
_ACCUSE = re.compile(r"\b(?:I suspect|vote(?: for)?)\s+(player_\d+)\b|\b(player_\d+) is mafia\b", re.IGNORECASE)

RANDOM_LINES = ("I am just a villager.", "Something is off about this.", "Let us vote carefully.", "I have nothing to add.")


def seat(player: str) -> int:
    """A player's seat number."""
    return int(player.rsplit("_", 1)[1])


def shared_pick(candidates: list[str], *salt: Any) -> str:
    """A choice among ``candidates`` that looks random but that every agent with the same inputs makes alike.

    It is how the mafia agree on a victim or a scapegoat without a message: the
    pick is salted with the team's names, so it differs from game to game.
    """
    ordered = sorted(candidates, key=seat)
    return ordered[zlib.crc32(repr(salt).encode()) % len(ordered)]


class Reading:
    """What a player can conclude from its view: claims, who is believed, who is known mafia or innocent."""

    def __init__(self, view: Mapping[str, Any]):
        self.view = view
        self.me = view["player"]
        self.role = view["role"]
        self.alive = list(view["alive"])
        self.revealed = {death["player"]: death["role"] for death in view["deaths"]}
        # Claimants in the order they first claimed, with their latest statement about each player.
        self.claims: dict[str, dict[str, str]] = {}
        for entry in view["talk"]:
            text = entry["text"]
            if _CLAIM.search(text):
                results = self.claims.setdefault(entry["player"], {})
                for target, verdict in _RESULT.findall(text):
                    results[target.lower()] = verdict.lower()
        self.known_mafia: set[str] = set()
        self.known_town: set[str] = {self.me} if self.role != "mafia" else set()
        if self.role == "mafia":
            self.known_mafia = set(view["mafia"])
        self.known_town |= {p for p, role in self.revealed.items() if role != "mafia"}
        self.known_mafia |= {p for p, role in self.revealed.items() if role == "mafia"}
        if self.role == "detective":
            for check in view["checks"]:
                (self.known_mafia if check["mafia"] else self.known_town).add(check["target"])
            self.known_mafia |= {p for p in self.claims if p != self.me}
            self.believed: str | None = self.me
        else:
            self.believed = self._believed()
            if self.believed is not None:
                self.known_town.add(self.believed)
                for target, verdict in self.claims[self.believed].items():
                    (self.known_mafia if verdict == "mafia" else self.known_town).add(target)
        self.contested = [p for p in self._credible() if p in self.alive and p != self.me] if self.believed is None else []

    def _credible(self) -> list[str]:
        """Claimants no revealed role contradicts."""
        credible = []
        for claimant, results in self.claims.items():
            if claimant in self.revealed and self.revealed[claimant] != "detective":
                continue
            if any(target in self.revealed and (self.revealed[target] == "mafia") != (verdict == "mafia") for target, verdict in results.items()):
                continue
            credible.append(claimant)
        return credible

    def _believed(self) -> str | None:
        """The claimant to believe: one revealed as the detective, else the only credible claimant."""
        for claimant in self.claims:
            if self.revealed.get(claimant) == "detective":
                return claimant
        credible = self._credible()
        return credible[0] if len(credible) == 1 else None

    def accusations(self, day: int | None = None) -> dict[str, int]:
        """How often each living player was accused in the talk (of one day, or of the whole game)."""
        counts: dict[str, int] = {}
        for entry in self.view["talk"]:
            if day is not None and entry["day"] != day:
                continue
            for first, second in _ACCUSE.findall(entry["text"]):
                target = (first or second).lower()
                if target in self.alive:
                    counts[target] = counts.get(target, 0) + 1
        return counts

    def most_accused(self, exclude: set[str]) -> str | None:
        """Today's most accused living player outside ``exclude`` (ties: the lowest seat)."""
        counts = {p: c for p, c in self.accusations(self.view["day"]).items() if p not in exclude}
        if not counts:
            return None
        return min(counts, key=lambda p: (-counts[p], seat(p)))

    def village_target(self, rng: Any) -> str:
        """Whom a villager votes for: known mafia, the later of contested claimants, the most accused, else a random
        player not publicly cleared (drawn from ``rng``, a ``numpy`` generator)."""
        others = [p for p in self.alive if p != self.me]
        mafia = [p for p in others if p in self.known_mafia]
        if mafia:
            return min(mafia, key=seat)
        if self.contested:
            return self.contested[-1]
        accused = self.most_accused(self.known_town | {self.me})
        if accused is not None:
            return accused
        # Nobody is accused yet (the day's first speakers): a random player not publicly cleared, whom the
        # speakers after it then follow as the day's most accused.
        public = [p for p in others if p not in self.public_town()] or others
        return public[int(rng.integers(len(public)))]

    def public_town(self) -> set[str]:
        """Players everyone can tell are in the village: revealed at death, or cleared by the believed claimant."""
        town = {p for p, role in self.revealed.items() if role != "mafia"}
        believed = self._believed()
        if believed is not None:
            town.add(believed)
            town |= {t for t, verdict in self.claims[believed].items() if verdict == "innocent"}
        return town


class ReasonerAgent(SeededAgent):
    """The ``reasoner`` agent for every role; see the module docstring."""

    name = "reasoner"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The move for the phase, by role."""
        view = observation["view"]
        reading = Reading(view)
        if view["phase"] == "night":
            return self._night(view, reading)
        if view["role"] == "mafia":
            return self._mafia_day(view, reading)
        target = reading.village_target(self.rng)
        if view["phase"] == "vote":
            return f"vote {target} suspect {target}"
        if view["role"] == "detective":
            results = " ".join(f"{c['target']} is {'mafia' if c['mafia'] else 'innocent'}." for c in view["checks"])
            return f"[say] I am the detective. {results} Vote {target}."
        if target in reading.known_mafia:
            return f"[say] {target} is mafia: vote {target}."
        return f"[say] I suspect {target}."

    def _night(self, view: Mapping[str, Any], reading: Reading) -> str:
        """Kill, check or protect."""
        targets = view["night_targets"]
        if view["role"] == "mafia":
            victim = mafia_victim(reading)
            return f"kill {victim} [say] We all take {victim} tonight."
        if view["role"] == "detective":
            checked = {c["target"] for c in view["checks"]}
            fresh = [p for p in targets if p not in checked] or targets
            return f"check {fresh[int(self.rng.integers(len(fresh)))]}"
        for choice in (reading.believed, reading.me):
            if choice in targets:
                return f"protect {choice}"
        return f"protect {targets[int(self.rng.integers(len(targets)))]}"

    def _mafia_day(self, view: Mapping[str, Any], reading: Reading) -> str:
        """Push the team's scapegoat; counter-claim when a detective claim accuses us."""
        mafia = set(view["mafia"])
        scapegoat = mafia_scapegoat(reading)
        if view["phase"] == "vote":
            return f"vote {scapegoat} suspect {scapegoat}"
        accuser, accused = detective_accusing(reading, mafia)
        if accuser is not None and (reading.me == accused or reading.me in reading.claims):
            cleared = [f"{p} is innocent." for p in sorted(mafia & set(reading.alive), key=seat) if p != reading.me]
            return " ".join(["[say] I am the detective.", f"{accuser} is mafia.", *cleared, f"Vote {accuser}."])
        return f"[say] I suspect {scapegoat}."


def detective_accusing(reading: Reading, mafia: set[str]) -> tuple[str | None, str | None]:
    """A living village claimant who accused a living mafia member, and the lowest-seated member accused (or ``None``s)."""
    for claimant, results in reading.claims.items():
        if claimant in mafia or claimant not in reading.alive:
            continue
        accused = sorted((t for t, v in results.items() if v == "mafia" and t in mafia and t in reading.alive), key=seat)
        if accused:
            return claimant, accused[0]
    return None, None


def mafia_victim(reading: Reading) -> str:
    """The victim every mafia member computes alike: a village claimant, the loudest accuser of the mafia, a shared pick."""
    mafia = reading.known_mafia
    town = [p for p in reading.alive if p not in mafia]
    claimants = [p for p in reading.claims if p in town]
    if claimants:
        return claimants[0]
    blame: dict[str, int] = {}
    for entry in reading.view["talk"]:
        if entry["player"] in town:
            for first, second in _ACCUSE.findall(entry["text"]):
                if (first or second).lower() in mafia:
                    blame[entry["player"]] = blame.get(entry["player"], 0) + 1
    if blame:
        return min(blame, key=lambda p: (-blame[p], seat(p)))
    return shared_pick(town, "victim", reading.view["night"], sorted(mafia))


def mafia_scapegoat(reading: Reading) -> str:
    """The villager every mafia member pushes alike: a claimant accusing the mafia, the most accused villager, a shared pick."""
    mafia = reading.known_mafia
    accuser, _ = detective_accusing(reading, mafia)
    if accuser is not None:
        return accuser
    town = [p for p in reading.alive if p not in mafia]
    accused = reading.most_accused(mafia)
    return accused if accused is not None else shared_pick(town, "scapegoat", reading.view["day"], sorted(mafia))


class MafiaRandomAgent(RandomAgent):
    """Random targets at night, a random line or a pass by day, a random vote."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random well-formed move for the phase."""
        view = observation["view"]
        if view["phase"] == "night":
            verb = {"mafia": "kill", "detective": "check", "doctor": "protect"}[view["role"]]
            targets = view["night_targets"]
            return f"{verb} {targets[int(self.rng.integers(len(targets)))]}"
        if view["phase"] == "discussion":
            choice = int(self.rng.integers(len(RANDOM_LINES) + 1))
            return "[pass]" if choice == len(RANDOM_LINES) else f"[say] {RANDOM_LINES[choice]}"
        others = [p for p in view["alive"] if p != view["player"]]
        return f"vote {others[int(self.rng.integers(len(others)))]}"


class TeamMix:
    """Plays the village with one agent and the mafia with another, by the role in each observation.

    Args:
        village: the agent for village roles (villager, detective, doctor).
        mafia: the agent for the mafia.
    """

    def __init__(self, village: Any, mafia: Any):
        self.village = village
        self.mafia = mafia
        self.name = f"{getattr(village, 'name', 'agent')}/{getattr(mafia, 'name', 'agent')}"

    def reset(self, seed: int | None = None) -> None:
        """Reset both agents for a new episode."""
        for agent in (self.village, self.mafia):
            if hasattr(agent, "reset"):
                agent.reset(seed=seed)

    def act(self, observation: Mapping[str, Any]) -> str:
        """The move of the agent playing this player's team."""
        agent = self.mafia if observation["view"]["team"] == "mafia" else self.village
        return agent.act(observation)


register_scripted("reasoner", ENV_ID, ReasonerAgent)
register_scripted("random", ENV_ID, MafiaRandomAgent)
