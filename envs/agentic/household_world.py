"""The household's catalogue and its world generator: rooms, receptacles, objects and a task, drawn from a generator.

This module defines no game (the registry takes every game a module of this
package defines); :mod:`parlour.envs.agentic.household` plays the worlds it
draws. Everything here is public knowledge of the world's kind, like a
house's floor plan in general: which rooms exist, what furniture each may
hold, where each kind of object is kept. The expert
(:mod:`parlour.baselines.household`) reads the catalogue to know where to
look; what a given world holds is revealed only by playing it.

Names follow ALFWorld: receptacles and objects are a kind and a number
(``cabinet 3``, ``mug 1``), numbered per kind across the house; rooms are
single words (``kitchen``, ``livingroom``, ``bedroom``, ``bathroom``,
``office``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# ------------------------------------------------------------------------------------------------ catalogue

#: Room kinds and the receptacles each holds: kind -> (fewest, most).
ROOM_TEMPLATES: dict[str, dict[str, tuple[int, int]]] = {
    "kitchen": {
        "countertop": (1, 3),
        "cabinet": (2, 5),
        "drawer": (1, 3),
        "fridge": (1, 1),
        "microwave": (1, 1),
        "sinkbasin": (1, 1),
        "stoveburner": (1, 2),
        "diningtable": (0, 1),
        "shelf": (0, 2),
        "garbagecan": (1, 1),
    },
    "livingroom": {
        "sofa": (1, 1),
        "coffeetable": (1, 1),
        "sidetable": (1, 2),
        "armchair": (0, 1),
        "tvstand": (0, 1),
        "cabinet": (0, 2),
        "drawer": (0, 2),
        "shelf": (0, 2),
        "garbagecan": (0, 1),
    },
    "bedroom": {
        "bed": (1, 1),
        "dresser": (1, 1),
        "sidetable": (1, 2),
        "desk": (0, 1),
        "drawer": (1, 3),
        "shelf": (0, 2),
        "safe": (0, 1),
        "laundryhamper": (0, 1),
        "garbagecan": (0, 1),
    },
    "bathroom": {
        "sinkbasin": (1, 1),
        "bathtubbasin": (0, 1),
        "toilet": (1, 1),
        "countertop": (0, 1),
        "cabinet": (1, 3),
        "drawer": (0, 2),
        "towelholder": (1, 1),
        "garbagecan": (1, 1),
    },
    "office": {
        "desk": (1, 1),
        "shelf": (1, 2),
        "drawer": (1, 3),
        "sidetable": (0, 1),
        "armchair": (0, 1),
        "safe": (0, 1),
        "cabinet": (0, 2),
        "garbagecan": (1, 1),
    },
}
ROOMS = list(ROOM_TEMPLATES)
#: Receptacles that open and close; they start closed and hide what they hold until opened.
OPENABLE = frozenset({"cabinet", "drawer", "fridge", "microwave", "safe"})
#: Receptacles things go *in* (the rest are surfaces things go *on*).
CONTAINERS = OPENABLE | {"sinkbasin", "bathtubbasin", "garbagecan", "laundryhamper"}
#: The surfaces a room's desk lamp stands on (every room that has one of them has one lamp).
LAMP_SURFACES = ("desk", "sidetable", "dresser")
LAMP_ROOMS = ("livingroom", "bedroom", "office")
LAMP = "desklamp"
#: What each task family's treatment uses: clean with a basin, heat with the microwave, cool with the fridge.
APPLIANCES = {"clean": ("sinkbasin", "bathtubbasin"), "heat": ("microwave",), "cool": ("fridge",)}

_FOOD = ("fridge", "countertop", "diningtable", "microwave", "garbagecan")
_DISHES = ("cabinet", "countertop", "diningtable", "shelf", "sinkbasin", "microwave", "fridge")
_COOKWARE = ("stoveburner", "cabinet", "countertop", "sinkbasin")
_CUTLERY = ("drawer", "countertop", "diningtable", "sinkbasin")
_PANTRY = ("countertop", "cabinet", "shelf", "diningtable", "drawer")
_SMALL = ("sidetable", "desk", "dresser", "shelf", "drawer", "coffeetable", "safe")
_DECOR = ("shelf", "coffeetable", "sidetable", "dresser", "tvstand", "desk")
_BATH = ("countertop", "cabinet", "toilet", "shelf")
#: Portable objects: kind -> (receptacle kinds it is kept in, treatments a task may ask of it: clean, heat, cool).
OBJECTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "apple": (_FOOD, ("clean", "heat", "cool")),
    "bread": (_FOOD, ("heat", "cool")),
    "egg": (_FOOD, ("clean", "heat", "cool")),
    "lettuce": (_FOOD, ("clean", "cool")),
    "potato": (_FOOD, ("clean", "heat", "cool")),
    "tomato": (_FOOD, ("clean", "heat", "cool")),
    "mug": (_DISHES, ("clean", "heat", "cool")),
    "cup": (_DISHES, ("clean", "heat", "cool")),
    "plate": (_DISHES, ("clean", "heat", "cool")),
    "bowl": (_DISHES, ("clean", "heat", "cool")),
    "pan": (_COOKWARE, ("clean", "cool")),
    "pot": (_COOKWARE, ("clean", "cool")),
    "knife": (_CUTLERY, ("clean",)),
    "fork": (_CUTLERY, ("clean",)),
    "spoon": (_CUTLERY, ("clean",)),
    "spatula": (_CUTLERY, ("clean",)),
    "saltshaker": (_PANTRY, ()),
    "peppershaker": (_PANTRY, ()),
    "winebottle": (_PANTRY, ("cool",)),
    "dishsponge": (_PANTRY, ("clean",)),
    "book": (_SMALL + ("bed",), ()),
    "cellphone": (_SMALL + ("bed", "sofa"), ()),
    "creditcard": (_SMALL, ()),
    "keychain": (_SMALL, ()),
    "pen": (_SMALL, ()),
    "pencil": (_SMALL, ()),
    "cd": (_SMALL, ()),
    "alarmclock": (_SMALL, ()),
    "watch": (_SMALL, ()),
    "remotecontrol": (("sofa", "coffeetable", "armchair", "tvstand", "sidetable"), ()),
    "vase": (_DECOR, ()),
    "statue": (_DECOR, ()),
    "candle": (_DECOR + ("countertop", "toilet"), ()),
    "pillow": (("bed", "sofa", "armchair"), ()),
    "laptop": (("desk", "bed", "sofa", "coffeetable"), ()),
    "newspaper": (("sofa", "coffeetable", "armchair", "sidetable"), ()),
    "tissuebox": (("sidetable", "dresser", "toilet", "shelf", "desk"), ()),
    "soapbar": (("sinkbasin", "bathtubbasin") + _BATH, ("clean",)),
    "cloth": (("bathtubbasin", "laundryhamper", "drawer") + _BATH, ("clean",)),
    "toiletpaper": (_BATH, ()),
    "spraybottle": (_BATH + ("garbagecan",), ()),
    "soapbottle": (_BATH + ("sinkbasin",), ()),
}
#: What an examine-in-light task may ask to look at: the small things of the lamp rooms.
EXAMINABLE = (
    "book",
    "cellphone",
    "creditcard",
    "keychain",
    "pen",
    "pencil",
    "cd",
    "alarmclock",
    "watch",
    "remotecontrol",
    "vase",
    "statue",
    "candle",
    "pillow",
    "laptop",
    "newspaper",
    "tissuebox",
)
#: The most objects of one kind in a house (names run from ``mug 1`` to ``mug 3``).
MAX_COPIES = 3
#: The task families, as ALFWorld names them.
FAMILIES = ("pick_and_place", "pick_two", "clean", "heat", "cool", "examine")
#: The state a treatment leaves on an object (bit flags).
STATE_BITS = {"clean": 1, "heat": 2, "cool": 4}
STATE_WORDS = {"clean": "clean", "heat": "hot", "cool": "cool"}


def max_receptacles(kind: str) -> int:
    """The most receptacles of ``kind`` one house can hold (each room kind appears at most once)."""
    return sum(template.get(kind, (0, 0))[1] for template in ROOM_TEMPLATES.values())


RECEPTACLE_KINDS = sorted({kind for template in ROOM_TEMPLATES.values() for kind in template})
RECEPTACLES = [f"{kind} {n}" for kind in RECEPTACLE_KINDS for n in range(1, max_receptacles(kind) + 1)]
OBJECT_KINDS = sorted(OBJECTS)
OBJECT_NAMES = [f"{kind} {n}" for kind in OBJECT_KINDS for n in range(1, MAX_COPIES + 1)]
LAMPS = [f"{LAMP} {n}" for n in range(1, len(LAMP_ROOMS) + 1)]


def kind_of(name: str) -> str:
    """The kind of a receptacle or object name: ``cabinet 3`` -> ``cabinet``."""
    return name.rpartition(" ")[0]


def preposition(receptacle: str) -> str:
    """``in`` for a container, ``on`` for a surface."""
    return "in" if kind_of(receptacle) in CONTAINERS else "on"


# ---------------------------------------------------------------------------------------------- difficulty


@dataclass(frozen=True)
class Level:
    """What a difficulty sets: rooms in the house, distractor objects, and the step limit."""

    rooms: int
    distractors: int
    max_steps: int


LEVELS = {1: Level(1, 6, 30), 2: Level(2, 10, 50), 3: Level(3, 16, 70), 4: Level(4, 22, 90), 5: Level(5, 28, 110)}


# ------------------------------------------------------------------------------------------------- a world


@dataclass
class World:
    """One generated house and task. ``contents`` maps each receptacle to what it holds; everything else is fixed."""

    rooms: list[str]
    doors: dict[str, list[str]]
    receptacles: dict[str, list[str]]
    contents: dict[str, tuple[str, ...]]
    lamps: dict[str, str]
    family: str
    target: str
    destination: str
    start: str
    digest: str = field(default="")

    def canonical(self) -> str:
        """Every fact of the world in a fixed order: two worlds are the same episode exactly when these match."""
        parts = [self.family, self.target, self.destination, self.start]
        for room in self.rooms:
            parts.append(f"{room}>{','.join(self.doors[room])}:{','.join(self.receptacles[room])}")
        parts += [f"{rec}={','.join(held)}" for rec, held in sorted(self.contents.items())]
        parts += [f"{lamp}@{rec}" for lamp, rec in sorted(self.lamps.items())]
        return "|".join(parts)

    def room_of(self) -> dict[str, str]:
        """Each receptacle's room."""
        return {rec: room for room, recs in self.receptacles.items() for rec in recs}


def digest(world: World) -> str:
    """The world's fingerprint: blake2b of :meth:`World.canonical`, which also decides its split."""
    return hashlib.blake2b(world.canonical().encode(), digest_size=16).hexdigest()


def in_split(fingerprint: str, split: str) -> bool:
    """Whether a world with ``fingerprint`` belongs to ``split``: ``test`` when the fingerprint's last hex digit is odd."""
    return (int(fingerprint[-1], 16) & 1) == (split == "test")


def pick(rng: np.random.Generator, options: list[Any] | tuple[Any, ...]) -> Any:
    """One of ``options``, uniformly."""
    return options[int(rng.integers(len(options)))]


def choose_rooms(rng: np.random.Generator, family: str, count: int) -> list[str]:
    """``count`` distinct room kinds, the first one able to host ``family``'s treatment or lamp."""
    if family == "examine":
        first = pick(rng, LAMP_ROOMS)
    elif family == "clean":
        first = pick(rng, ("kitchen", "bathroom"))
    elif family in ("heat", "cool"):
        first = "kitchen"
    else:
        first = pick(rng, ROOMS)
    others = [room for room in ROOMS if room != first]
    return [first] + [others[int(i)] for i in rng.permutation(len(others))[: count - 1]]


def furnish(rng: np.random.Generator, rooms: list[str]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The doors (each room after the first opens onto a random earlier one: a tree) and each room's receptacles, numbered per kind."""
    doors: dict[str, list[str]] = {room: [] for room in rooms}
    for index in range(1, len(rooms)):
        other = rooms[int(rng.integers(index))]
        doors[rooms[index]].append(other)
        doors[other].append(rooms[index])
    numbers: dict[str, int] = {}
    receptacles: dict[str, list[str]] = {}
    for room in rooms:
        names = []
        for kind, (low, high) in ROOM_TEMPLATES[room].items():
            for _ in range(int(rng.integers(low, high + 1))):
                numbers[kind] = numbers.get(kind, 0) + 1
                names.append(f"{kind} {numbers[kind]}")
        receptacles[room] = names
    return doors, receptacles


def tasks(family: str, kinds: set[str]) -> list[tuple[str, str]]:
    """The (object kind, destination kind) pairs ``family`` may ask for in a house with receptacle ``kinds``.

    The destination is a place the object is kept, other than the family's appliance, and some other kept place
    must exist in the house for the object to start in.
    """
    if family == "examine":
        return [(target, "") for target in EXAMINABLE if set(OBJECTS[target][0]) & kinds]
    if family in APPLIANCES and not set(APPLIANCES[family]) & kinds:
        return []
    pairs = []
    for target, (places, treatments) in OBJECTS.items():
        if family in APPLIANCES and family not in treatments:
            continue
        present = [place for place in places if place in kinds]
        for destination in present:
            if destination not in APPLIANCES.get(family, ()) and any(place != destination for place in present):
                pairs.append((target, destination))
    return pairs


def generate(rng: np.random.Generator, difficulty: int) -> World:
    """Draw one world of ``difficulty``: family, rooms, furniture, task, the task's objects, distractors, lamps, start."""
    level = LEVELS[difficulty]
    while True:
        family = pick(rng, FAMILIES)
        rooms = choose_rooms(rng, family, level.rooms)
        doors, receptacles = furnish(rng, rooms)
        by_kind: dict[str, list[str]] = {}
        for room in rooms:
            for rec in receptacles[room]:
                by_kind.setdefault(kind_of(rec), []).append(rec)
        pairs = tasks(family, set(by_kind))
        if pairs:
            break
    target, destination = pick(rng, pairs)
    contents: dict[str, list[str]] = {rec: [] for recs in receptacles.values() for rec in recs}
    copies: dict[str, int] = {}

    def place(kind: str, avoid: str) -> None:
        spots = [rec for place_kind in OBJECTS[kind][0] if place_kind != avoid for rec in by_kind.get(place_kind, ())]
        if spots and copies.get(kind, 0) < MAX_COPIES:
            copies[kind] = copies.get(kind, 0) + 1
            contents[pick(rng, spots)].append(f"{kind} {copies[kind]}")

    wanted = 2 + int(rng.integers(2)) if family == "pick_two" else 1 + int(rng.integers(2))
    for _ in range(wanted):
        place(target, destination)
    others = [kind for kind in OBJECT_KINDS if kind != target]
    for _ in range(level.distractors):
        place(pick(rng, others), "")
    lamps: dict[str, str] = {}
    for room in rooms:
        if room in LAMP_ROOMS:
            surfaces = [rec for rec in receptacles[room] if kind_of(rec) in LAMP_SURFACES]
            lamps[f"{LAMP} {len(lamps) + 1}"] = pick(rng, surfaces)
    held = {rec: tuple(sorted(items, key=lambda name: (kind_of(name), name))) for rec, items in contents.items()}
    world = World(rooms, doors, receptacles, held, lamps, family, target, destination, start=pick(rng, rooms))
    world.digest = digest(world)
    return world


def draw(rng: np.random.Generator, difficulty: int, split: str) -> World:
    """The first world of ``split`` that ``rng`` generates: worlds are drawn until one's fingerprint falls in the split."""
    while True:
        world = generate(rng, difficulty)
        if in_split(world.digest, split):
            return world
