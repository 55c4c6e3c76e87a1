"""Scripted agents of the Services game.

* ``expert``: a **planner over the goal state**, privileged and marked so (``privileged = True``). The view holds
  only an opaque ``task_id``; the expert reads the world behind it through
  :func:`parlour.envs.agentic.services_world.goal_channel` (which knows the tasks of the episodes running in its own
  process). Each turn it compares the state the turn starts from (the previous turn's goal, which a turn carried out
  has reached) with the turn's goal state, service by service, and makes the calls that turn one into the other:
  removals first (files, received messages, events), then creations in the goal's id order (folders, files, messages
  sent, events at their final date and time, tickets, transfers in the goal's order, so that every balance is there
  when a transfer needs it), then changes (events moved, tickets updated, a new ticket under the id it was given). It sends them all in one action, as parallel OpenAI ``tool_calls``, then
  ``finish`` with the values asked for and ``impossible`` where no tool can do the request. It is the upper bound
  of the scale, measured locally; the leaderboard refuses privileged agents.
* ``literal``: an honest weak agent that reads only its observation. It carries out the requests whose every
  argument the instruction states (create a file with given content, make a folder and move a file into it, add an
  event, open a ticket), skips every request that needs a lookup or an answer, never says ``impossible``, and
  finishes each turn.
* ``random``: random calls of the offered tools with arguments drawn from each schema and from the words it was
  shown, and a random ``finish``.

The menu, :func:`candidate_calls`, is no agent: it is the honest, bounded, enumerable action set a policy can learn
over (``tests/test_learnability.py`` trains one). It is built from what the player was shown (the request, the tools'
schemas, the tool results: :class:`Transcript` reads them from the observations), never from the view's task handle
or the goal. Uniform play over it carries out 0.057 of 300 difficulty-1 test tasks (``random``: 0.023) and none at
difficulty 3 (nor does ``random``), so it is not registered as an agent; picking the right calls from it carries out
0.97 of them at difficulty 1 (the rest need arithmetic: the part of a balance above an amount to keep).
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.baselines.seeded import SeededAgent
from parlour.envs.agentic.services import ANSWER_CHARS
from parlour.envs.agentic.services_world import GoalChannel, goal_channel

ENV_ID = "parlour/Services-v0"

Call = tuple[str, dict[str, Any]]


def openai_message(calls: list[Call]) -> str:
    """Calls as the JSON text of an OpenAI assistant message with parallel ``tool_calls``."""
    return json.dumps(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
                for i, (name, args) in enumerate(calls)
            ],
        },
        ensure_ascii=False,
    )


def call(tool: str, **arguments: Any) -> str:
    """One call as the JSON text ``{"tool": ..., "arguments": {...}}``."""
    return json.dumps({"tool": tool, "arguments": arguments}, ensure_ascii=False)


# ----------------------------------------------------------------------------- expert (planner over the goal state)


def plan(current: Mapping[str, Any], goal: Mapping[str, Any]) -> list[Call]:
    """The calls that turn the services' ``current`` state into ``goal``: removals, then creations, then changes."""
    removals: list[Call] = []
    changes: list[Call] = []
    creations: list[Call] = []
    if "files" in goal:
        now, then = current["files"], goal["files"]
        creations += [("make_dir", {"path": d}) for d in sorted(set(then["dirs"]) - set(now["dirs"]), key=lambda d: (d.count("/"), d))]
        creations += [("write_file", {"path": p, "content": c}) for p, c in then["files"].items() if now["files"].get(p) != c]
        removals += [("delete_file", {"path": p}) for p in now["files"] if p not in then["files"]]
    if "messages" in goal:
        now, then = current["messages"], goal["messages"]
        kept = {m["id"] for m in then["inbox"]}
        removals += [("delete_message", {"message_id": m["id"]}) for m in now["inbox"] if m["id"] not in kept]
        creations += [("send_message", {"to": m["to"], "text": m["text"]}) for m in then["sent"][len(now["sent"]) :]]
    if "calendar" in goal:
        now_events = {e["id"]: e for e in current["calendar"]["events"]}
        goal_events = {e["id"]: e for e in goal["calendar"]["events"]}
        removals += [("cancel_event", {"event_id": i}) for i in now_events if i not in goal_events]
        for i, event in sorted(goal_events.items()):
            if i not in now_events:
                creations.append(("create_event", {"title": event["title"], "date": event["date"], "time": event["time"]}))
            elif (event["date"], event["time"]) != (now_events[i]["date"], now_events[i]["time"]):
                changes.append(("reschedule_event", {"event_id": i, "date": event["date"], "time": event["time"]}))
    if "bank" in goal:
        creations += [
            ("transfer", {"from_account": t["from"], "to_account": t["to"], "amount": t["amount"] / 100})
            for t in goal["bank"]["transactions"][len(current["bank"]["transactions"]) :]
        ]
    if "tickets" in goal:
        now_tickets = {t["id"]: t for t in current["tickets"]["tickets"]}
        next_id = current["tickets"]["next_id"]
        for ticket in sorted(goal["tickets"]["tickets"], key=lambda t: t["id"]):
            before = now_tickets.get(ticket["id"])
            if before is None:
                # A new ticket opens with status open; the id the service will give it is the next one, so a ticket the
                # goal has closed (opened and closed in one turn) is updated under that id.
                creations.append(("create_ticket", {"title": ticket["title"], "priority": ticket["priority"], "description": ticket["description"]}))
                if ticket["status"] != "open":
                    changes.append(("update_ticket", {"ticket_id": next_id, "status": ticket["status"]}))
                next_id += 1
                continue
            changed = {key: ticket[key] for key in ("status", "priority") if ticket[key] != before[key]}
            if changed:
                changes.append(("update_ticket", {"ticket_id": ticket["id"], **changed}))
    return removals + creations + changes


class Expert(SeededAgent):
    """The privileged planner over the goal state; see the module docstring."""

    name = "expert"
    #: Reads the hidden goal states through the privileged channel: the leaderboard refuses it.
    privileged = True

    def __init__(self, env_id: str | None = None, seed: int | None = None, channel: GoalChannel | None = None):
        super().__init__(env_id, seed)
        self.channel = channel or goal_channel()

    def act(self, observation: Mapping[str, Any]) -> str:
        """The turn's planned calls, all in one action; then ``finish``."""
        view = observation["view"]
        world = self.channel.world(view["task_id"])
        index = view["turn"] - 1
        turn = world.turns[index]
        start = world.turns[index - 1].goal if index else world.initial
        calls = plan(start, turn.goal)
        if calls and view["turn_calls"] == 0:
            return openai_message(calls)
        return call("finish", answer=" ".join(value for _, value in turn.answers), impossible=turn.impossible)


# ----------------------------------------------------------------------------- literal (weak, honest)

_LITERAL = (
    (
        re.compile(r'Create the file (?P<path>\S+) with exactly this content: "(?P<content>[^"]*)"\.'),
        lambda m: [("write_file", {"path": m["path"], "content": m["content"]})],
    ),
    (
        re.compile(r"Make a new folder (?P<folder>\S+) and move (?P<source>\S+) into it"),
        lambda m: [("make_dir", {"path": m["folder"]}), ("move_file", {"source": m["source"], "destination": m["folder"]})],
    ),
    (
        re.compile(r'Add the event "(?P<title>[^"]+)" on (?P<date>\d{4}-\d{2}-\d{2}) at (?P<time>\d{2}:\d{2})\.'),
        lambda m: [("create_event", {"title": m["title"], "date": m["date"], "time": m["time"]})],
    ),
    (
        re.compile(r'Open a ticket titled "(?P<title>[^"]+)" with priority (?P<priority>\d) and the description "(?P<description>[^"]*)"\.'),
        lambda m: [("create_ticket", {"title": m["title"], "priority": int(m["priority"]), "description": m["description"]})],
    ),
)


def literal_calls(instruction: str) -> list[Call]:
    """The calls of the requests in ``instruction`` whose every argument it states, in the order they appear."""
    found = [(match.start(), calls) for pattern, build in _LITERAL for match in pattern.finditer(instruction) for calls in [build(match)]]
    return [c for _, calls in sorted(found, key=lambda pair: pair[0]) for c in calls]


class Literal(SeededAgent):
    """Carries out only what the instruction states in full, then finishes the turn; see the module docstring."""

    name = "literal"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The stated requests' calls in one action, then ``finish`` with no answer."""
        view = observation["view"]
        calls = literal_calls(view.get("instruction") or "")
        if calls and view["turn_calls"] == 0:
            return openai_message(calls)
        return call("finish", answer="")


# ----------------------------------------------------------------------------- the menu (what an honest agent can call)

#: The most calls a menu holds, ``finish``'s included: the menu is a policy's action set, so it stays bounded.
MENU_CAP = 300
#: The most ``finish`` calls with an answer a menu holds (they come first, so the tools' calls never crowd them out).
ANSWER_CAP = 60
#: The most values of one argument a menu tries (the request's come first).
FILLER_CAP = 16
#: A request's literal values: paths, identifier codes, dates, times and numbers (quoted texts are read apart).
_REQUEST_TOKEN = re.compile(r"/[\w./-]*\w|[A-Z]{2,}-\d+|\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}|\d+(?:\.\d+)?")
_REQUEST_QUOTE = re.compile(r'"([^"\n]+)"')
_SHAPES = (
    ("date", re.compile(r"\d{4}-\d{2}-\d{2}")),
    ("time", re.compile(r"\d{1,2}:\d{2}")),
    ("path", re.compile(r"/\S*")),
    ("code", re.compile(r"[A-Z]{2,}-\d+")),
)
#: Parts of an argument's name (split at ``_``) that ask for a path, and those that ask for an identifier code: a
#: string schema says no more than "string", so the name is what tells a path from a user id or a text.
_PATH_PARTS = frozenset({"path", "source", "destination", "folder", "dir", "directory"})
_CODE_PARTS = frozenset({"account", "to", "from", "user", "recipient"})
#: How the instruction message of a turn opens: ``User (turn 1 of 2): ...``.
_TURN = re.compile(r"User \(turn \d+ of \d+\): (?P<instruction>.*)", re.DOTALL)

Scalar = str | int | float


@dataclass(frozen=True)
class Sighting:
    """A literal value a player was shown: the value; its shape (``text``, ``path``, ``code``, ``date``, ``time``,
    ``integer``, ``number``, or ``count`` for the length of a list a result returned); whether the request stated it
    (else a tool result showed it); the JSON key it was found under (``""`` in the request or at a result's top); and
    its record, the other scalar values of the JSON object it was found in (what tells a contact's user id from
    another's: the name beside it)."""

    value: Scalar
    shape: str
    from_request: bool = False
    key: str = ""
    record: tuple[Scalar, ...] = ()


def shape_of(value: Scalar) -> str:
    """The shape of a scalar: ``integer`` or ``number`` for numbers, else the string's (``date``, ``time``, ``path``,
    ``code``, or ``text``)."""
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return next((shape for shape, pattern in _SHAPES if pattern.fullmatch(value)), "text")


def _scalar(value: Any) -> bool:
    """Whether a JSON value is a string or a number (booleans and nulls are not values a call takes from a result)."""
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _walk(node: Any, key: str, out: list[Sighting]) -> None:
    """Every scalar of a JSON result as a sighting, with its key and record; a list also gives its length, and the
    names a listing gives relative to its ``path`` are joined to it (``list_dir`` names its files so)."""
    if isinstance(node, dict):
        scalars = [(k, v) for k, v in node.items() if _scalar(v)]
        base = node.get("path") if isinstance(node.get("path"), str) else None
        for k, v in node.items():
            if _scalar(v):
                out.append(Sighting(v, shape_of(v), key=k, record=tuple(other for name, other in scalars if name != k)))
                continue
            if base is not None and isinstance(v, list):
                for name in v:
                    if isinstance(name, str) and not name.startswith("/"):
                        out.append(Sighting(f"{base.rstrip('/')}/{name}", "path", key=k, record=(base,)))
            _walk(v, k, out)
    elif isinstance(node, list):
        out.append(Sighting(len(node), "count", key=key))
        for item in node:
            if _scalar(item):
                out.append(Sighting(item, shape_of(item), key=key))
            else:
                _walk(item, key, out)


def sightings(instruction: str, results: list[str]) -> list[Sighting]:
    """The literal values a player of Services has seen: the request's quoted texts, paths, codes, dates, times and
    numbers, then every scalar of every JSON tool result (a refusal, ``{"error": ...}``, holds none), in the order shown."""
    out = [Sighting(text, "text", from_request=True) for text in _REQUEST_QUOTE.findall(instruction)]
    for token in _REQUEST_TOKEN.findall(instruction):
        value: Scalar = token
        if re.fullmatch(r"\d+(?:\.\d+)?", token):
            value = float(token) if "." in token else int(token)
        out.append(Sighting(value, shape_of(value), from_request=True))
    for text in results:
        try:
            result = json.loads(text)
        except ValueError:
            continue
        if isinstance(result, dict) and "error" in result:
            continue
        _walk(result, "", out)
    return out


def _distinct(values: Any) -> list[Scalar]:
    """``values`` without repeats (``5`` and ``5.0`` are one), in their first order."""
    out: list[Scalar] = []
    for value in values:
        if value not in out:
            out.append(value)
    return out


def fillers(name: str, schema: Mapping[str, Any], seen: list[Sighting]) -> list[Any]:
    """The values seen that fit argument ``name`` of ``schema``, the request's first: an enum's values, ``true`` for a
    boolean, the integers or numbers within bounds, the strings that match a pattern, and for a plain string the paths,
    codes or texts as its name asks (see :data:`_PATH_PARTS`)."""
    if "enum" in schema:
        return list(schema["enum"])
    kind = schema.get("type")
    if kind == "boolean":
        return [True]
    if kind in ("integer", "number"):
        shapes = ("integer",) if kind == "integer" else ("integer", "number")
        low, high = schema.get("minimum", float("-inf")), schema.get("maximum", float("inf"))
        above = schema.get("exclusiveMinimum", float("-inf"))
        numbers = [s.value for s in seen if s.shape in shapes and isinstance(s.value, (int, float))]
        return _distinct(n for n in numbers if low <= n <= high and n > above)
    if kind != "string":
        return []
    shortest, longest = schema.get("minLength", 0), schema.get("maxLength", 10**9)
    strings = [(s.value, s.shape) for s in seen if isinstance(s.value, str) and shortest <= len(s.value) <= longest]
    if "pattern" in schema:
        return _distinct(text for text, _ in strings if re.search(schema["pattern"], text))
    parts = set(name.split("_"))
    wanted = "path" if parts & _PATH_PARTS else "code" if parts & _CODE_PARTS else "text"
    return _distinct(text for text, shape in strings if shape == wanted)


def _tool_calls(function: Mapping[str, Any], seen: list[Sighting]) -> list[Call]:
    """The calls of one tool: every required argument filled from :func:`fillers` (the first :data:`FILLER_CAP` of
    each), with no optional argument or with one of them; the calls whose values come earliest among their fillers
    (the request's first) come first."""
    schema = function.get("parameters") or {}
    properties = schema.get("properties") or {}
    required = [name for name in properties if name in schema.get("required", [])]
    options = {name: fillers(name, spec, seen)[:FILLER_CAP] for name, spec in properties.items()}
    if any(not options[name] for name in required):
        return []
    ranked: list[tuple[int, int, tuple[int, ...], list[str]]] = []
    for form, extra in enumerate([[]] + [[name] for name in properties if name not in required and options[name]]):
        names = required + extra
        for indices in itertools.product(*(range(len(options[name])) for name in names)):
            ranked.append((sum(indices), form, indices, names))
    ranked.sort(key=lambda entry: entry[:3])
    return [(function["name"], {name: options[name][i] for name, i in zip(names, indices)}) for _, _, indices, names in ranked]


def candidate_calls(instruction: str, tools: list[Mapping[str, Any]], results: list[str], calls_left: int = 1) -> list[Call]:
    """The menu of calls an honest Services player can make, built from what it was shown and nothing else: the
    current ``instruction``, the ``tools`` offered (OpenAI function specs) and the tool ``results`` so far (JSON texts).

    First ``finish``: plain, with ``impossible: true``, and with an answer made of each value the results showed
    (lengths of lists included, for "how many"; at most :data:`ANSWER_CAP`). Then, while ``calls_left`` is positive,
    the calls of each offered tool whose arguments are values seen that fit its schema (:func:`fillers`), the
    request's values first, in the tools' order, up to :data:`MENU_CAP` in all, each tool an equal share of the room
    first. The menu is a function of these arguments alone: it reads no view, no task handle and no goal.
    """
    seen = sightings(instruction, results)
    menu: list[Call] = [("finish", {}), ("finish", {"impossible": True})]
    answers = dict.fromkeys(s.value if isinstance(s.value, str) else json.dumps(s.value) for s in seen if not s.from_request)
    menu += [("finish", {"answer": answer}) for answer in answers if len(answer) <= ANSWER_CHARS][:ANSWER_CAP]
    if calls_left <= 0:
        return menu
    functions = [spec.get("function") or {} for spec in tools]
    offered = [_tool_calls(function, seen) for function in functions if function.get("name") != "finish"]
    # Each tool has an equal share of the room first, so that one with many arguments cannot crowd out the others;
    # what the short ones leave goes to the rest in the tools' order.
    room = MENU_CAP - len(menu)
    share = room // max(len(offered), 1)
    taken = [calls[:share] for calls in offered]
    left = room - sum(map(len, taken))
    for index, calls in enumerate(offered):
        more = calls[share : share + left]
        taken[index] += more
        left -= len(more)
    return menu + [c for calls in taken for c in calls]


class Transcript:
    """What a Services player has been shown in an episode, read from its observations' messages: the current turn's
    request, the tools offered, every tool result, and the calls left this turn. The menu an agent builds from it
    (:meth:`menu`) is the :func:`candidate_calls` of those."""

    def __init__(self) -> None:
        self.instruction = ""
        self.tools: list[Mapping[str, Any]] = []
        self.results: list[str] = []
        self.calls_left = 0

    def read(self, observation: Mapping[str, Any]) -> None:
        """Take in an observation's new messages (the rules start an episode afresh) and its tools and budget."""
        for message in observation.get("messages") or []:
            if message["kind"] == "rules":
                self.instruction, self.results = "", []
            elif message["kind"] == "tool_result":
                self.results.append(message["text"])
            elif message["kind"] == "event" and (turn := _TURN.match(message["text"])):
                self.instruction = turn["instruction"]
        self.tools = list(observation.get("tools") or self.tools)
        self.calls_left = int(observation.get("tool_calls_left", 0))

    def menu(self) -> list[Call]:
        """The calls the player can make now (:func:`candidate_calls`)."""
        return candidate_calls(self.instruction, self.tools, self.results, self.calls_left)


# ----------------------------------------------------------------------------- random

_WORD = re.compile(r'/[\w./-]+|USR-\d+|ACC-\d+|\d{4}-\d{2}-\d{2}|\d{2}:\d{2}|-?\d+(?:\.\d+)?|"[^"\n]{1,60}"')


class RandomServices(RandomAgent):
    """Random calls of the offered tools, arguments drawn from each schema and from the words shown; see the module docstring."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random call, or ``finish`` with a random answer (always once the turn's calls are spent)."""
        rng = self.rng
        words = [w.strip('"') for w in _WORD.findall(observation.get("text") or "")] or ["/home"]
        tools = [spec["function"] for spec in observation.get("tools") or []]
        finish = next(t for t in tools if t["name"] == "finish")
        others = [t for t in tools if t["name"] != "finish"]
        if not others or observation.get("tool_calls_left", 0) <= 0 or rng.random() < 0.2:
            tool = finish
        else:
            tool = others[int(rng.integers(len(others)))]
        schema = tool["parameters"]
        arguments = {
            name: self.value(spec, words) for name, spec in schema["properties"].items() if name in schema.get("required", []) or rng.random() < 0.5
        }
        return call(tool["name"], **arguments)

    def value(self, spec: Mapping[str, Any], words: list[str]) -> Any:
        """A random value that fits ``spec``: mostly a word shown, sometimes a fresh one."""
        rng = self.rng
        kind = spec.get("type")
        if "enum" in spec:
            return spec["enum"][int(rng.integers(len(spec["enum"])))]
        if kind == "boolean":
            return bool(rng.random() < 0.5)
        numbers = [float(w) for w in words if re.fullmatch(r"-?\d+(?:\.\d+)?", w)]
        if kind in ("integer", "number"):
            low, high = spec.get("minimum", 0), min(spec.get("maximum", 1000), 1000)
            fits = [n for n in numbers if low <= n <= high and (kind == "number" or n.is_integer())]
            if fits and rng.random() < 0.7:
                value = fits[int(rng.integers(len(fits)))]
            else:
                value = float(rng.integers(max(low, 1), max(high, 2)))
            return int(value) if kind == "integer" else value
        pattern = spec.get("pattern")
        fitting = [w for w in words if (pattern is None or re.fullmatch(pattern, w)) and len(w) <= spec.get("maxLength", 1000)]
        if fitting and rng.random() < 0.8:
            return fitting[int(rng.integers(len(fitting)))]
        if pattern == r"^\d{2}:\d{2}$":
            return f"{int(rng.integers(24)):02d}:{int(rng.integers(60)):02d}"
        if pattern == r"^\d{4}-\d{2}-\d{2}$":
            return f"2025-{int(rng.integers(1, 13)):02d}-{int(rng.integers(1, 29)):02d}"
        return f"item{int(rng.integers(100))}"


register_scripted("expert", ENV_ID, Expert)
register_scripted("literal", ENV_ID, Literal)
register_scripted("random", ENV_ID, RandomServices)
