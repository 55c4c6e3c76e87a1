"""Household: an ALFWorld-style house in text; find things, treat them and put them where the task says.

One player, ``player_0``. Each episode's house is generated from the seed
(:mod:`parlour.envs.agentic.household_world`): one to five rooms (kitchen,
livingroom, bedroom, bathroom, office) joined by doors, each with its
furniture (``countertop 1``, ``cabinet 3``, ``fridge 1``, ...), objects kept
where such objects are kept (``mug 2`` in a cabinet, ``book 1`` on a
sidetable), desk lamps in the living rooms, bedrooms and offices, and a task
of one of ALFWorld's six families:

============== ============================================= =====================================================
family         task text                                     done when
============== ============================================= =====================================================
pick_and_place ``put a mug in cabinet.``                     a mug is in any cabinet
pick_two       ``find two pencil and put them on desk.``     two pencils are in or on receptacles of that kind
clean          ``put a clean apple in fridge.``              a cleaned apple is in any fridge
heat           ``put a hot potato on countertop.``           a heated potato is on any countertop
cool           ``put a cool mug on shelf.``                  a cooled mug is on any shelf
examine        ``examine the book with the desklamp.``       the player holds a book where a switched-on desklamp is
============== ============================================= =====================================================

Commands (ALFWorld's): ``go to <receptacle or room>``, ``open``/``close <receptacle>``, ``take <object> from
<receptacle>``, ``put <object> in/on <receptacle>``, ``clean <object> with <sinkbasin or bathtubbasin>``,
``heat <object> with <microwave>``, ``cool <object> with <fridge>``, ``use <desklamp>``, ``examine <object or
receptacle>``, ``inventory``, ``look``. ``go to`` reaches any receptacle of the room the player is in and the
rooms through its doors; the player carries one object at a time; a receptacle that opens (cabinet, drawer,
fridge, microwave, safe) starts closed, and what it holds is seen only once it is opened. What a receptacle holds
is shown on arriving at it, so nothing of a room is known but its furniture and doors until it is explored.

Every turn lists the admissible commands (``legal_moves``), so ``score_legal`` agents and vector-mode RL work.
Free text is read too: articles and politeness are ignored, ``put X in Y`` and ``put X in/on Y`` and ``move X to
Y`` are the same command, ``take X`` takes from where the player stands, a kind without a number (``go to fridge``)
names the one such thing in reach, and reasoning before the command is tolerated (the last admissible command in
the text counts). Anything else is an invalid action with the reason and, where one is close, ``did you mean``:
the reason speaks only of what the player can see, so "You see no apple 1 here." is all a player learns about an
apple elsewhere. Every command, admissible or not, that is played costs one step; invalid actions cost none but
count against ``error_allowance`` (5 by default).

Options:

* ``difficulty`` (1 to 5, default 2): rooms (one to five), distractor objects (6, 10, 16, 22, 28) and the
  step limit (30, 50, 70, 90, 110).
* ``split`` (``"train"`` or ``"test"``, default ``"test"``): which half of the worlds the episode is drawn from.
  A world is in the test half when the last hex digit of its fingerprint (blake2b of every fact of the house and
  task) is odd. The episode's generator draws worlds until one falls in the split, so every seed is valid under
  both splits and no world (no episode at all) is ever in both: train on ``split="train"``; evaluation and the
  leaderboard use the default, ``"test"``.
* ``reward`` (``"success"`` default, or ``"shaped"``): success pays 1 when the task is done and 0 when the step
  limit runs out first. ``shaped`` adds 0.1, paid once each, the first time the player holds an object of the
  task's kind, the first time such an object gets the task's treatment (clean, heat, cool tasks) and, for
  pick_two, the first time one of the two is put in place: at most 1.2 in all.
  Exceeding the invalid-action allowance pays -1 (on top of any shaping already paid).

Outcome details: ``difficulty``, ``split``, ``family``, ``task``, ``success``, ``steps``, ``max_steps``,
``milestones`` (the shaping events reached) and ``world`` (the world's fingerprint, shown only once the episode
is over: with the public generator it would let a player compute the hidden contents).

Why not TextWorld: Microsoft's ``textworld`` builds a game by compiling Inform 7 and runs it in an interpreter;
the compile alone takes far more than this environment's reset budget (20 ms at the median on one core), and the
admissible-command, partial-observability and hidden-state rules here would sit behind its interpreter's text.
The house is written on parlour's core instead, as a plain state machine.

Vector observation (:data:`VECTOR_SIZE` floats in [0, 1]): the family, the task's object and destination kinds,
where the player is (room, and receptacle), what it holds and its treatments, whether the held object is the
task's kind and treated as asked, whether the receptacle here is open, the kinds of objects in sight, the
receptacles where an object of the task's kind has been seen, the receptacles whose contents have been seen, the
rooms visited, whether a lamp is here and on, how many task objects are in place (pick_two), and the share of
steps used. The ``Discrete`` action indexes :data:`MOVES`, every command over the catalogue's names, with a mask
of the admissible ones.

Version history: v0, first release.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

import numpy as np

from parlour.envs.agentic.household_world import (
    APPLIANCES,
    CONTAINERS,
    FAMILIES,
    LAMPS,
    LEVELS,
    OBJECT_KINDS,
    OBJECT_NAMES,
    OPENABLE,
    RECEPTACLE_KINDS,
    RECEPTACLES,
    ROOMS,
    STATE_BITS,
    STATE_WORDS,
    draw,
    kind_of,
    preposition,
)
from parlour.envs.core.context import Context
from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.game import Game, int_option
from parlour.envs.puzzles.solo import SoloPuzzle

SPLITS = ("train", "test")
REWARDS = ("success", "shaped")
#: What each shaping milestone pays under ``reward="shaped"``.
SHAPING = 0.1


def _commands() -> list[str]:
    """Every command over the catalogue's names: the ``Discrete`` action space of vector mode."""
    places = ROOMS + RECEPTACLES
    moves = ["look", "inventory"]
    moves += [f"go to {place}" for place in places]
    openable = [rec for rec in RECEPTACLES if kind_of(rec) in OPENABLE]
    moves += [f"open {rec}" for rec in openable] + [f"close {rec}" for rec in openable]
    moves += [f"take {obj} from {rec}" for obj in OBJECT_NAMES for rec in RECEPTACLES]
    moves += [f"put {obj} {preposition(rec)} {rec}" for obj in OBJECT_NAMES for rec in RECEPTACLES]
    for verb, kinds in APPLIANCES.items():
        moves += [f"{verb} {obj} with {rec}" for obj in OBJECT_NAMES for rec in RECEPTACLES if kind_of(rec) in kinds]
    moves += [f"use {lamp}" for lamp in LAMPS]
    moves += [f"examine {name}" for name in OBJECT_NAMES + RECEPTACLES + LAMPS]
    return moves


MOVES = _commands()
INDEX = {move: index for index, move in enumerate(MOVES)}

# Vector layout: offsets of each block (see the module docstring).
_BLOCKS = [
    ("family", len(FAMILIES)),
    ("target", len(OBJECT_KINDS)),
    ("destination", len(RECEPTACLE_KINDS)),
    ("room", len(ROOMS)),
    ("at", len(RECEPTACLES)),
    ("held", len(OBJECT_KINDS)),
    ("held_state", len(STATE_BITS)),
    ("held_fit", 2),
    ("open_here", 1),
    ("in_sight", len(OBJECT_KINDS)),
    ("target_seen", len(RECEPTACLES)),
    ("known", len(RECEPTACLES)),
    ("visited", len(ROOMS)),
    ("lamp", 2),
    ("placed", 1),
    ("steps", 1),
]
OFFSET: dict[str, int] = {}
VECTOR_SIZE = 0
for _name, _width in _BLOCKS:
    OFFSET[_name], VECTOR_SIZE = VECTOR_SIZE, VECTOR_SIZE + _width
KIND_INDEX = {kind: i for i, kind in enumerate(OBJECT_KINDS)}
RECEPTACLE_KIND_INDEX = {kind: i for i, kind in enumerate(RECEPTACLE_KINDS)}
RECEPTACLE_INDEX = {rec: i for i, rec in enumerate(RECEPTACLES)}
ROOM_INDEX = {room: i for i, room in enumerate(ROOMS)}

RULES = """You are {player}, in a house: carry out the task you are given.
Commands:
  go to <receptacle or room>: receptacles of the room you are in, or a room through one of its doors
  open <receptacle> / close <receptacle>: cabinets, drawers, the fridge, the microwave and safes start closed; you see inside only once open
  take <object> from <receptacle>: you carry one object at a time
  put <object> in/on <receptacle>
  clean <object> with <sinkbasin or bathtubbasin> / heat <object> with <microwave> / cool <object> with <fridge>
  use <desklamp>: switch a lamp on or off
  examine <object or receptacle> / inventory / look
You see what a receptacle holds when you arrive at it (or open it). Every command costs a step; you have {limit} steps.
Reward: 1 when the task is done, 0 if the steps run out first{shaping}. Each turn lists the admissible commands: reply with one of them."""

SHAPED_NOTE = (
    ", plus 0.1 (once each) when you first hold an object of the task's kind, first give it the task's "
    "treatment, and (two-object tasks) first put one in place"
)

TASKS = {
    "pick_and_place": "put {article} {target} {prep} {destination}.",
    "pick_two": "find two {target} and put them {prep} {destination}.",
    "clean": "put a clean {target} {prep} {destination}.",
    "heat": "put a hot {target} {prep} {destination}.",
    "cool": "put a cool {target} {prep} {destination}.",
    "examine": "examine the {target} with the desklamp.",
}

# ---------------------------------------------------------------------------------------------- reading text

#: Two-word spellings of the catalogue's one-word names.
_SPELLINGS = {
    "living room": "livingroom",
    "bed room": "bedroom",
    "bath room": "bathroom",
    "dining table": "diningtable",
    "side table": "sidetable",
    "coffee table": "coffeetable",
    "sink basin": "sinkbasin",
    "bathtub basin": "bathtubbasin",
    "bath tub": "bathtubbasin",
    "stove burner": "stoveburner",
    "garbage can": "garbagecan",
    "desk lamp": "desklamp",
    "tv stand": "tvstand",
    "arm chair": "armchair",
    "laundry hamper": "laundryhamper",
    "towel holder": "towelholder",
    "counter top": "countertop",
    "wine bottle": "winebottle",
    "salt shaker": "saltshaker",
    "pepper shaker": "peppershaker",
    "dish sponge": "dishsponge",
    "cell phone": "cellphone",
    "credit card": "creditcard",
    "key chain": "keychain",
    "alarm clock": "alarmclock",
    "remote control": "remotecontrol",
    "tissue box": "tissuebox",
    "soap bar": "soapbar",
    "toilet paper": "toiletpaper",
    "spray bottle": "spraybottle",
    "soap bottle": "soapbottle",
}
_SPELLING = re.compile(r"\b(" + "|".join(re.escape(s).replace(r"\ ", r"\s+") for s in _SPELLINGS) + r")\b")
_TOKEN = re.compile(r"[a-z]+|\d+")
#: Words that carry nothing for the command.
_FILLER = frozenset({"the", "a", "an", "some", "please", "now", "then", "i", "will", "lets", "let", "us", "me", "my", "your"})
_VERBS = {
    "go": "go",
    "goto": "go",
    "walk": "go",
    "enter": "go",
    "visit": "go",
    "navigate": "go",
    "open": "open",
    "close": "close",
    "shut": "close",
    "take": "take",
    "pick": "take",
    "get": "take",
    "grab": "take",
    "put": "put",
    "place": "put",
    "move": "put",
    "drop": "put",
    "insert": "put",
    "clean": "clean",
    "wash": "clean",
    "rinse": "clean",
    "heat": "heat",
    "warm": "heat",
    "cool": "cool",
    "chill": "cool",
    "use": "use",
    "turn": "use",
    "switch": "use",
    "toggle": "use",
    "examine": "examine",
    "x": "examine",
    "inspect": "examine",
    "check": "examine",
    "inventory": "inventory",
    "inv": "inventory",
    "look": "look",
    "l": "look",
}
#: The words that part a command's object from its place, per verb.
_SEPARATORS = {
    "take": ("from", "off", "out"),
    "put": ("in", "on", "into", "onto", "to", "inside", "at"),
    "clean": ("with", "using", "in", "at"),
    "heat": ("with", "using", "in", "at"),
    "cool": ("with", "using", "in", "at"),
}
_KINDS = frozenset(OBJECT_KINDS) | frozenset(RECEPTACLE_KINDS) | frozenset(ROOMS) | {"desklamp"}
_OBJECT_KINDS = frozenset(OBJECT_KINDS)
_NAMES = frozenset(OBJECT_NAMES) | frozenset(RECEPTACLES) | frozenset(LAMPS) | frozenset(ROOMS)
#: The longest text read as one command (longer lines are searched for admissible commands only).
_COMMAND_CHARS = 300
_ACTION_MARK = re.compile(r"^\s*(?:>+|action\s*:|command\s*:|answer\s*:)\s*", re.IGNORECASE)


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _listing(names: list[str] | tuple[str, ...]) -> str:
    """``a mug 1, an apple 2 and a cd 1``; ``nothing`` for none."""
    items = [f"{_article(name)} {name}" for name in names]
    if not items:
        return "nothing"
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _names(tokens: list[str]) -> list[str]:
    """The names in ``tokens``: a kind with its number (``cabinet 3``), or a bare kind (``fridge``); other words split them."""
    names: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token in _KINDS:
            if index + 1 < len(tokens) and tokens[index + 1].isdigit() and token not in ROOMS:
                names.append(f"{token} {int(tokens[index + 1][:6])}")
                index += 2
                continue
            names.append(token)
        index += 1
    return names


class Household(SoloPuzzle, Game):
    """An ALFWorld-style household generated from the seed; see the module docstring for the rules and rewards."""

    name = "Household"
    description = (
        "An ALFWorld-style house generated from the seed: find, treat (clean, heat, cool) and place objects, or examine "
        "one under a lamp; admissible commands listed each turn; difficulty 1-5 (rooms, distractors), train/test split."
    )
    category = "agentic"
    reference_agents = ("expert", "random")
    default_error_allowance = 5
    moves = MOVES
    vector_size = VECTOR_SIZE
    mutable_state = ("contents", "opened", "states", "seen", "visited", "lamps_on", "milestones")

    def __init__(self, *, difficulty: int = 2, split: str = "test", reward: str = "success"):
        self.difficulty = int_option("difficulty", difficulty, 1, len(LEVELS))
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}: train on 'train', evaluate on 'test'")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
        self.split, self.reward_mode = split, reward
        self.max_steps = LEVELS[self.difficulty].max_steps
        self.players = ["player_0"]
        self.rooms: list[str] = []
        self.doors: dict[str, list[str]] = {}
        self.receptacles: dict[str, list[str]] = {}
        self.room_of: dict[str, str] = {}
        self.lamps: dict[str, str] = {}
        self.family, self.target, self.destination, self.fingerprint = "", "", "", ""
        self.contents: dict[str, tuple[str, ...]] = {}
        self.opened: set[str] = set()
        self.states: dict[str, int] = {}
        self.seen: set[str] = set()
        self.visited: set[str] = set()
        self.lamps_on: set[str] = set()
        self.milestones: set[str] = set()
        self.room = ""
        self.at: str | None = None
        self.holding: str | None = None
        self.steps = 0

    # ------------------------------------------------------------------------------------------ episode
    def start(self, ctx: Context) -> None:
        """Draw the episode's world of the split, put the player in the middle of its start room and tell it the task."""
        world = draw(ctx.rng, self.difficulty, self.split)
        self.rooms, self.doors, self.receptacles, self.lamps = world.rooms, world.doors, world.receptacles, world.lamps
        self.room_of = world.room_of()
        self.family, self.target, self.destination, self.fingerprint = world.family, world.target, world.destination, world.digest
        self.contents = dict(world.contents)
        self.opened, self.states, self.seen, self.lamps_on, self.milestones = set(), {}, set(), set(), set()
        self.room, self.at, self.holding, self.steps = world.start, None, None, 0
        self.visited = {world.start}
        ctx.tell(f"{self.room_text()}\n\nYour task is to: {self.task()}", to=self.players[0])

    def task(self) -> str:
        """The task in words."""
        prep = "in" if self.destination in CONTAINERS else "on"
        return TASKS[self.family].format(article=_article(self.target), target=self.target, prep=prep, destination=self.destination)

    def rules(self, player: str) -> str:
        """The commands, the step limit and the reward."""
        return RULES.format(player=player, limit=self.max_steps, shaping=SHAPED_NOTE if self.reward_mode == "shaped" else "")

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The task, where the player is, what it carries, the steps left and the admissible commands."""
        where = f"at the {self.at} in the {self.room}" if self.at else f"in the middle of the {self.room}"
        carrying = f"carrying the {self.holding}" if self.holding else "carrying nothing"
        return (
            f"Your task is to: {self.task()}\nYou are {where}, {carrying}. Steps left: {self.max_steps - self.steps}.\n"
            f"Admissible commands: {', '.join(legal or [])}."
        )

    # ------------------------------------------------------------------------------------------ what is in reach
    def visible(self) -> tuple[str, ...]:
        """The objects the player sees where it stands: what the receptacle there holds, if it is not closed."""
        at = self.at
        if at is None or (kind_of(at) in OPENABLE and at not in self.opened):
            return ()
        return self.contents[at]

    def lamps_here(self) -> list[str]:
        """The desk lamps on the receptacle where the player stands."""
        return [lamp for lamp, rec in self.lamps.items() if rec == self.at] if self.at else []

    def admissible(self) -> list[str]:
        """The commands that do something now, in a fixed order: moving, the receptacle here, objects, lamps, looking."""
        at, holding = self.at, self.holding
        commands = [f"go to {rec}" for rec in self.receptacles[self.room] if rec != at]
        commands += [f"go to {room}" for room in self.doors[self.room]]
        visible = self.visible()
        if at is not None:
            kind = kind_of(at)
            if kind in OPENABLE:
                commands.append(f"close {at}" if at in self.opened else f"open {at}")
            if holding is None:
                commands += [f"take {obj} from {at}" for obj in visible]
            elif kind not in OPENABLE or at in self.opened:
                commands.append(f"put {holding} {preposition(at)} {at}")
            if holding is not None:
                commands += [f"{verb} {holding} with {at}" for verb, kinds in APPLIANCES.items() if kind in kinds]
            commands += [f"use {lamp}" for lamp in self.lamps_here()]
            commands.append(f"examine {at}")
        commands += [f"examine {obj}" for obj in visible]
        commands += [f"examine {lamp}" for lamp in self.lamps_here()]
        if holding is not None:
            commands.append(f"examine {holding}")
        commands += ["inventory", "look"]
        return commands

    def legal_actions(self, player: str) -> list[int]:
        """Indices of the admissible commands."""
        return [INDEX[command] for command in self.admissible()]

    # ------------------------------------------------------------------------------------------ parsing
    def parse(self, player: str, text: str) -> str:
        """An admissible command from free text (see the module docstring), or an :class:`InvalidMove` saying why."""
        legal = self.admissible()
        lowered = text.lower()
        flat = " ".join(lowered.split())
        if flat in legal:
            return flat
        lines = [line for line in lowered.splitlines() if line.strip()]
        line = _ACTION_MARK.sub("", lines[-1]) if lines else ""
        # The last line is read as a command first: reasoning before it may mention other commands ("look").
        command = self.read(line) if len(line) <= _COMMAND_CHARS else ""
        if command in legal:
            return command
        if command:
            raise InvalidMove(f"{self.why_not(command, line)} {self.hint(command)}")
        mentioned = re.findall(r"(?<![\w])(" + "|".join(re.escape(c) for c in sorted(legal, key=len, reverse=True)) + r")(?![\w])", flat)
        if mentioned:
            return mentioned[-1]
        if len(line) > _COMMAND_CHARS:
            raise InvalidMove(f"No admissible command found, and the last line is too long to be one. {self.hint('')}")
        raise InvalidMove(f"{self.why_not(command, line)} {self.hint(line)}")

    def read(self, line: str) -> str:
        """The command ``line`` spells, in the catalogue's form (``put mug 1 on countertop 1``), or ``""`` when it names none.

        A thing the catalogue has no name for reads as ``?``, so the reason given is about that thing, not the command.
        """
        line = _SPELLING.sub(lambda m: _SPELLINGS[" ".join(m.group(1).split())], line)
        tokens = _TOKEN.findall(line)
        if tokens == ["i"]:
            return "inventory"
        tokens = [t for t in tokens if t not in _FILLER]
        if not tokens or tokens[0] not in _VERBS:
            return ""
        word, rest = tokens[0], tokens[1:]
        verb = _VERBS[word]
        if verb == "look" and rest[:1] == ["at"]:
            verb = "examine"
        elif word == "move" and rest[:1] == ["to"]:
            verb = "go"
        elif verb in ("look", "inventory"):
            return verb
        if rest[:1] in (["at"], ["to"], ["up"], ["on"], ["off"]):
            rest = rest[1:]
        split = next((i for i, token in enumerate(rest) if token in _SEPARATORS.get(verb, ())), len(rest))
        thing, place = self.name_in(rest[:split]), self.name_in(rest[split + 1 :])
        if not thing:
            return verb
        if verb in ("go", "open", "close", "use", "examine"):
            return f"go to {thing}" if verb == "go" else f"{verb} {thing}"
        place = place or self.at or ""
        if verb == "take":
            return f"take {thing} from {place}".rstrip()
        if verb == "put":
            return f"put {thing} {preposition(place) if place in _NAMES else 'in'} {place}".rstrip()
        return f"{verb} {thing} with {place}".rstrip()

    def name_in(self, tokens: list[str]) -> str:
        """The first name in ``tokens`` (resolved, see :meth:`resolve`), ``?`` for words that name nothing known, ``""`` for none."""
        names = _names(tokens)
        if names:
            return self.resolve(names[0])
        return "?" if tokens else ""

    def resolve(self, name: str) -> str:
        """A bare kind (``fridge``) as the one such thing in reach, if exactly one is; numbered names as they are."""
        if name in _NAMES or " " in name:
            return name
        if name == "desklamp":
            candidates = self.lamps_here()
        elif name in _OBJECT_KINDS:
            candidates = [obj for obj in (*self.visible(), *([self.holding] if self.holding else [])) if kind_of(obj) == name]
        else:
            candidates = [rec for rec in self.receptacles[self.room] if kind_of(rec) == name]
        return candidates[0] if len(candidates) == 1 else name

    def why_not(self, command: str, line: str) -> str:
        """Why ``command`` (read from the player's ``line``) cannot be done, in terms of what the player sees only."""
        if not command:
            return "That is not a command." if line.strip() else "The reply is empty."
        verb, _, rest = command.partition(" ")
        if verb in ("go", "open", "close", "use", "examine", "take", "put", "clean", "heat", "cool") and not rest:
            return f"Say what to {verb}{' to' if verb == 'go' else ''}."
        words = rest.split()
        if any(word in _KINDS and (i + 1 == len(words) or not words[i + 1].isdigit()) and word not in ROOMS for i, word in enumerate(words)):
            return "Name things with their number, as listed (cabinet 1, not cabinet): more than one, or none, is in reach."
        if verb == "go":
            return "You cannot get there from here: go to a receptacle of this room, or to a room through one of its doors."
        if verb in ("open", "close", "examine", "use"):
            target = command.split(" ", 1)[1]
            if verb == "examine" or (verb == "use" and kind_of(target) == "desklamp"):
                return self.unseen(target)
            if verb == "use":
                return "Only a desklamp can be used."
            return self.at_check(target) or (
                f"The {target} does not open."
                if kind_of(target) not in OPENABLE
                else f"The {target} is already {'open' if verb == 'open' else 'closed'}."
            )
        if verb == "take":
            thing, _, place = rest.partition(" from ")
        elif verb in APPLIANCES:
            thing, _, place = rest.partition(" with ")
        else:
            thing, _, place = re.sub(r" (?:in|on) ", " | ", rest, count=1).partition(" | ")
        if verb == "take":
            return (
                self.at_check(place)
                or self.closed_check(place)
                or (f"You are already carrying the {self.holding}: put it somewhere first." if self.holding else self.unseen(thing))
            )
        if self.holding is None:
            return "You are not carrying anything."
        if thing != self.holding:
            return f"You are not carrying {'the ' + thing if thing in _NAMES else 'that'}; you carry the {self.holding}."
        if verb in APPLIANCES and kind_of(place) not in APPLIANCES[verb]:
            return f"You can {verb} things only with a {' or a '.join(APPLIANCES[verb])}."
        return self.at_check(place) or self.closed_check(place) or "That cannot be done."

    def at_check(self, place: str) -> str:
        """Why the player cannot act on ``place`` from where it stands, or ``""`` when it stands there."""
        if place and place == self.at:
            return ""
        here = f"You are at the {self.at}" if self.at else f"You are in the middle of the {self.room}"
        return f"{here}, not at {'the ' + place if place in _NAMES else 'that'}: go to it first."

    def closed_check(self, place: str) -> str:
        """``The fridge 1 is closed: open it first.`` when it is, else ``""``."""
        return f"The {place} is closed: open it first." if kind_of(place) in OPENABLE and place not in self.opened else ""

    def unseen(self, thing: str) -> str:
        """The same words whether ``thing`` is elsewhere or nowhere: the player learns only that it is not in sight."""
        return f"You see no {thing if thing in _NAMES else 'such thing'} here."

    def hint(self, command: str) -> str:
        """``Did you mean 'open fridge 1'?`` for the closest admissible command, if one is close."""
        close = difflib.get_close_matches(command[:80], self.admissible(), n=1, cutoff=0.75) if command else []
        return f"Did you mean '{close[0]}'?" if close else "Reply with one of the admissible commands."

    # ------------------------------------------------------------------------------------------ rules
    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Carry out an admissible command, tell the player what happened, then check the task and the step limit."""
        ((player, command),) = moves.items()
        self.steps += 1
        ctx.tell(self.perform(command), to=player)
        self.shape(ctx, player)
        if self.done():
            self.solved(ctx, "the task is done")
        elif self.steps >= self.max_steps:
            self.failed(ctx, "the step limit ran out")

    def perform(self, command: str) -> str:
        """Change the state as ``command`` (admissible) says; returns what the player is told."""
        verb, _, rest = command.partition(" ")
        if verb == "go":
            place = rest[3:]
            if place in self.doors:
                self.room, self.at = place, None
                self.visited.add(place)
                return self.room_text()
            self.at = place
            return f"You arrive at the {place}. {self.receptacle_text(place)}"
        if verb == "open":
            self.opened.add(rest)
            return f"You open the {rest}. {self.receptacle_text(rest)}"
        if verb == "close":
            self.opened.discard(rest)
            return f"You close the {rest}."
        if verb == "take":
            obj, _, rec = rest.partition(" from ")
            self.contents[rec] = tuple(o for o in self.contents[rec] if o != obj)
            self.holding = obj
            return f"You pick up the {obj} from the {rec}."
        if verb == "put":
            words = rest.split(" ")
            obj, prep, rec = " ".join(words[:2]), words[2], " ".join(words[3:])
            self.contents[rec] = tuple(sorted((*self.contents[rec], obj), key=lambda name: (kind_of(name), name)))
            self.holding = None
            return f"You put the {obj} {prep} the {rec}."
        if verb in APPLIANCES:
            obj, _, rec = rest.partition(" with ")
            self.states[obj] = self.states.get(obj, 0) | STATE_BITS[verb]
            return f"You {verb} the {obj} using the {rec}."
        if verb == "use":
            on = rest not in self.lamps_on
            (self.lamps_on.add if on else self.lamps_on.discard)(rest)
            return f"You turn {'on' if on else 'off'} the {rest}."
        if verb == "examine":
            return self.examine(rest)
        if verb == "inventory":
            return f"You are carrying: {_article(self.holding)} {self.describe(self.holding)}." if self.holding else "You are not carrying anything."
        return self.look()

    def examine(self, name: str) -> str:
        """What examining a receptacle, a lamp or an object in sight shows."""
        if name in self.room_of:
            return self.receptacle_text(name)
        if name in self.lamps:
            return f"This is a {name}. It is {'on' if name in self.lamps_on else 'off'}."
        return f"This is a {self.describe(name)}."

    def describe(self, obj: str) -> str:
        """An object's name with its treatments: ``mug 1 (clean, hot)``."""
        bits = self.states.get(obj, 0)
        words = [STATE_WORDS[verb] for verb, bit in STATE_BITS.items() if bits & bit]
        return f"{obj} ({', '.join(words)})" if words else obj

    def receptacle_text(self, rec: str) -> str:
        """What the player sees of ``rec``: closed, or what it holds (and marks its contents as seen)."""
        if kind_of(rec) in OPENABLE and rec not in self.opened:
            return f"The {rec} is closed."
        self.seen.add(rec)
        things = [*self.contents[rec], *(lamp for lamp, where in self.lamps.items() if where == rec)]
        opened = f"The {rec} is open. " if kind_of(rec) in OPENABLE else ""
        return f"{opened}{preposition(rec).capitalize()} the {rec}, you see {_listing(things)}."

    def room_text(self) -> str:
        """The room's furniture and doors, as on entering it."""
        doors = self.doors[self.room]
        leads = (
            f"A door leads to the {doors[0]}."
            if len(doors) == 1
            else (f"Doors lead to the {', the '.join(doors[:-1])} and the {doors[-1]}." if doors else "There are no other rooms.")
        )
        return f"You are in the middle of the {self.room}. Looking quickly around you, you see {_listing(self.receptacles[self.room])}. {leads}"

    def look(self) -> str:
        """Where the player is and what is around."""
        if self.at is None:
            return self.room_text()
        return f"You are at the {self.at} in the {self.room}. {self.receptacle_text(self.at)}"

    # ------------------------------------------------------------------------------------------ the task
    def done(self) -> bool:
        """Whether the final state meets the task (see the module docstring's table)."""
        if self.family == "examine":
            held = self.holding
            return held is not None and kind_of(held) == self.target and any(lamp in self.lamps_on for lamp in self.lamps_here())
        placed = self.placed()
        return placed >= 2 if self.family == "pick_two" else placed >= 1

    def treated(self, obj: str) -> bool:
        """Whether ``obj`` has the task's treatment (always, for tasks without one)."""
        return self.family not in APPLIANCES or bool(self.states.get(obj, 0) & STATE_BITS[self.family])

    def placed(self) -> int:
        """How many objects of the task's kind, treated as asked, are in or on receptacles of the destination kind."""
        return sum(
            1
            for rec, held in self.contents.items()
            if kind_of(rec) == self.destination
            for obj in held
            if kind_of(obj) == self.target and self.treated(obj)
        )

    def shape(self, ctx: Context, player: str) -> None:
        """Note the shaping milestones reached (and pay them under ``reward="shaped"``)."""
        held = self.holding
        reached = []
        if held is not None and kind_of(held) == self.target:
            reached.append("holding")
            if self.family in APPLIANCES and self.treated(held):
                reached.append("treated")
        if self.family == "pick_two" and self.placed() >= 1:
            reached.append("placed_one")
        for milestone in reached:
            if milestone not in self.milestones:
                self.milestones.add(milestone)
                if self.reward_mode == "shaped":
                    ctx.reward(player, SHAPING)

    def report(self, success: bool) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        return {
            "difficulty": self.difficulty,
            "split": self.split,
            "family": self.family,
            "task": self.task(),
            "success": success,
            "steps": self.steps,
            "max_steps": self.max_steps,
            "milestones": sorted(self.milestones),
            "world": self.fingerprint,
        }

    # ------------------------------------------------------------------------------------------ views
    def view(self, player: str) -> dict[str, Any]:
        """What the player knows: the task, where it is, what it carries, the rooms it has entered (furniture and doors),
        the contents it has seen (up to date: only the player moves things), open receptacles, lamps seen, treatments
        given, and the steps used. Nothing it has not been shown."""
        visited = [room for room in self.rooms if room in self.visited]
        lamps = {lamp: {"at": rec, "on": lamp in self.lamps_on} for lamp, rec in self.lamps.items() if rec in self.seen}
        return {
            "difficulty": self.difficulty,
            "task": self.task(),
            "goal": {"family": self.family, "object": self.target, "receptacle": self.destination},
            "room": self.room,
            "at": self.at,
            "holding": self.holding,
            "rooms": {room: {"receptacles": list(self.receptacles[room]), "doors": list(self.doors[room])} for room in visited},
            "seen": {rec: list(self.contents[rec]) for rec in sorted(self.seen)},
            "open": sorted(self.opened),
            "lamps": lamps,
            "states": {obj: [STATE_WORDS[v] for v, bit in STATE_BITS.items() if bits & bit] for obj, bits in sorted(self.states.items())},
            "steps": self.steps,
            "max_steps": self.max_steps,
        }

    def render(self) -> str:
        """The player's knowledge as text (no spectator sees more: the closed receptacles' contents stay hidden)."""
        lines = [f"task: {self.task()}", f"room: {self.room}, at: {self.at or '-'}, holding: {self.describe(self.holding) if self.holding else '-'}"]
        lines += [f"  {rec}: {', '.join(self.describe(o) for o in self.contents[rec]) or 'empty'}" for rec in sorted(self.seen)]
        lines.append(f"steps {self.steps}/{self.max_steps}")
        return "\n".join(lines)

    def vector(self, player: str) -> np.ndarray:
        """The vector observation (see the module docstring)."""
        values = np.zeros(VECTOR_SIZE, dtype=np.float32)
        values[OFFSET["family"] + FAMILIES.index(self.family)] = 1.0
        values[OFFSET["target"] + KIND_INDEX[self.target]] = 1.0
        if self.destination:
            values[OFFSET["destination"] + RECEPTACLE_KIND_INDEX[self.destination]] = 1.0
        values[OFFSET["room"] + ROOM_INDEX[self.room]] = 1.0
        if self.at is not None:
            values[OFFSET["at"] + RECEPTACLE_INDEX[self.at]] = 1.0
            values[OFFSET["open_here"]] = float(kind_of(self.at) not in OPENABLE or self.at in self.opened)
        held = self.holding
        if held is not None:
            values[OFFSET["held"] + KIND_INDEX[kind_of(held)]] = 1.0
            bits = self.states.get(held, 0)
            for i, bit in enumerate(STATE_BITS.values()):
                values[OFFSET["held_state"] + i] = float(bool(bits & bit))
            if kind_of(held) == self.target:
                values[OFFSET["held_fit"]] = 1.0
                values[OFFSET["held_fit"] + 1] = float(self.treated(held))
        for obj in self.visible():
            values[OFFSET["in_sight"] + KIND_INDEX[kind_of(obj)]] = 1.0
        for rec in self.seen:
            values[OFFSET["known"] + RECEPTACLE_INDEX[rec]] = 1.0
            if any(kind_of(obj) == self.target for obj in self.contents[rec]):
                values[OFFSET["target_seen"] + RECEPTACLE_INDEX[rec]] = 1.0
        for room in self.visited:
            values[OFFSET["visited"] + ROOM_INDEX[room]] = 1.0
        here = self.lamps_here()
        values[OFFSET["lamp"]] = float(bool(here))
        values[OFFSET["lamp"] + 1] = float(any(lamp in self.lamps_on for lamp in here))
        values[OFFSET["placed"]] = min(self.placed(), 2) / 2 if self.family != "examine" else 0.0
        values[OFFSET["steps"]] = self.steps / self.max_steps
        return values
