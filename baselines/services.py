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
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.baselines.seeded import SeededAgent
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
