"""The ``expert`` for Household: a planner over what the player has seen of the generated house.

It reads only its observation's ``view`` (the rooms entered, the contents
seen, what it holds, the task) and the public catalogue of
:mod:`parlour.envs.agentic.household_world` (which kinds of receptacle hold
which kinds of object, which rooms have which furniture), never the world's
hidden contents, so it is a fair reference for the leaderboard. Each turn it
plans afresh from the view, so it can take over an episode at any point:

* find an object of the task's kind: take the nearest one seen (not one
  already in place), else go to the nearest receptacle not yet seen whose kind
  keeps such objects (opening it if it is closed), else enter the nearest room
  not yet entered whose kind has such receptacles;
* treat it (clean, heat, cool tasks) at the nearest appliance of the family;
* put it in or on the nearest receptacle of the destination kind (opening it
  first), or, for examine tasks, carry it to the nearest desk lamp seen (or
  search the lamp surfaces) and switch the lamp on.

Distances count steps: ``go to`` a receptacle of the room is one, each room
passed through is one more. Exploration finishes the room it is in before it
leaves, since a receptacle here costs less than anything behind a door. Ties
go to the name first in the room's listing, so the agent is deterministic. The
random-admissible baseline is the generic ``random`` agent, uniform over the
admissible commands listed each turn.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.agentic.household_world import APPLIANCES, LAMP_SURFACES, OBJECTS, OPENABLE, ROOM_TEMPLATES, kind_of, preposition

ENV_ID = "parlour/Household-v0"


class Plan:
    """One turn's reading of the view: where the player stands, the rooms it knows and how far each is."""

    def __init__(self, view: Mapping[str, Any]):
        self.view = view
        self.room, self.at, self.holding = view["room"], view["at"], view["holding"]
        self.rooms: dict[str, dict[str, list[str]]] = view["rooms"]
        self.seen: dict[str, list[str]] = view["seen"]
        self.opened = set(view["open"])
        goal = view["goal"]
        self.family, self.target, self.destination = goal["family"], goal["object"], goal["receptacle"]
        self.hops, self.first_door = self.doors_from(self.room)

    def doors_from(self, start: str) -> tuple[dict[str, int], dict[str, str]]:
        """Rooms reachable through the doors of entered rooms: hops from ``start``, and the first door to take."""
        hops: dict[str, int] = {start: 0}
        first: dict[str, str] = {}
        frontier = deque([start])
        while frontier:
            room = frontier.popleft()
            for other in self.rooms.get(room, {}).get("doors", []):
                if other not in hops:
                    hops[other] = hops[room] + 1
                    first[other] = first.get(room, other)
                    frontier.append(other)
        return hops, first

    def places(self) -> list[tuple[str, str]]:
        """Every receptacle known, with its room, in listing order."""
        return [(rec, room) for room, known in self.rooms.items() for rec in known["receptacles"] if room in self.hops]

    def cost(self, rec: str, room: str) -> int:
        """Steps to stand at ``rec``."""
        return self.hops[room] + (rec != self.at)

    def go(self, rec: str, room: str) -> str:
        """The first command towards ``rec``."""
        return f"go to {rec}" if room == self.room else f"go to {self.first_door[room]}"

    def reach(self, rec: str, room: str, then: str) -> str:
        """Go to ``rec``, open it if it is closed, then ``then``."""
        if rec != self.at:
            return self.go(rec, room)
        if kind_of(rec) in OPENABLE and rec not in self.opened:
            return f"open {rec}"
        return then

    def nearest(self, candidates: list[tuple[str, str]]) -> tuple[str, str] | None:
        """The candidate (receptacle, room) fewest steps away; the first listed on a tie."""
        return min(candidates, key=lambda c: self.cost(*c), default=None)

    def explore(self, kinds: set[str] | None) -> str:
        """Towards the nearest unseen receptacle of ``kinds`` (any kind: ``None``), or the nearest room not entered that may
        have one (a room one door away costs its door and a step inside, so the room here is finished first)."""
        unseen = [(rec, room) for rec, room in self.places() if rec not in self.seen and (kinds is None or kind_of(rec) in kinds)]
        rooms = [room for room in self.hops if room not in self.rooms and (kinds is None or kinds & set(ROOM_TEMPLATES[room]))]
        rooms = rooms or [room for room in self.hops if room not in self.rooms]
        best = self.nearest(unseen)
        door = min(rooms, key=lambda room: self.hops[room], default=None)
        if best is not None and (door is None or self.cost(*best) <= self.hops[door] + 1):
            rec, room = best
            return self.reach(rec, room, f"examine {rec}")
        if door is not None:
            return f"go to {self.first_door[door]}"
        rec, room = self.nearest(self.places()) or (self.at, self.room)
        return "look" if rec is None else self.go(rec, room)

    def goto_kind(self, kinds: set[str], then: str) -> str:
        """Do ``then`` (``{rec}`` is filled in) at the nearest known receptacle of ``kinds``, or look for one."""
        best = self.nearest([(rec, room) for rec, room in self.places() if kind_of(rec) in kinds])
        if best is None:
            return self.explore(kinds)
        rec, room = best
        return self.reach(rec, room, then.format(rec=rec, prep=preposition(rec)))

    def treated(self, obj: str) -> bool:
        """Whether ``obj`` has the task's treatment (always, for tasks without one)."""
        word = {"clean": "clean", "heat": "hot", "cool": "cool"}.get(self.family)
        return word is None or word in self.view["states"].get(obj, [])

    def fetch(self) -> str:
        """Take the nearest object of the task's kind not yet in place, or look where such objects are kept."""
        found = [
            (rec, room, obj)
            for rec, room in self.places()
            for obj in self.seen.get(rec, [])
            if kind_of(obj) == self.target and kind_of(rec) != self.destination
        ]
        if found:
            rec, room, obj = min(found, key=lambda f: self.cost(f[0], f[1]))
            return self.reach(rec, room, f"take {obj} from {rec}")
        return self.explore(set(OBJECTS[self.target][0]))

    def command(self) -> str:
        """The next command of the plan."""
        held = self.holding
        if held is None:
            return self.fetch()
        if kind_of(held) != self.target:
            return self.goto_kind({kind_of(rec) for rec, _ in self.places()}, f"put {held} {{prep}} {{rec}}")
        if self.family == "examine":
            lamps = [(info["at"], self.room_of(info["at"]), lamp) for lamp, info in self.view["lamps"].items()]
            lamps = [lamp for lamp in lamps if lamp[1] in self.hops]
            if not lamps:
                return self.explore(set(LAMP_SURFACES))
            rec, room, lamp = min(lamps, key=lambda f: self.cost(f[0], f[1]))
            return self.reach(rec, room, f"use {lamp}")
        if not self.treated(held):
            return self.goto_kind(set(APPLIANCES[self.family]), f"{self.family} {held} with {{rec}}")
        return self.goto_kind({self.destination}, f"put {held} {{prep}} {{rec}}")

    def room_of(self, rec: str) -> str:
        """The entered room ``rec`` is in."""
        return next(room for room, known in self.rooms.items() if rec in known["receptacles"])


class HouseholdExpert(SeededAgent):
    """Plans from the view each turn (see the module docstring); a random admissible command if the plan's is not admissible."""

    name = "expert"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The plan's next command."""
        command = Plan(observation["view"]).command()
        legal = observation["legal_moves"] or []
        if command in legal or not legal:
            return command
        return legal[int(self.rng.integers(len(legal)))]


register_scripted("expert", ENV_ID, HouseholdExpert)
