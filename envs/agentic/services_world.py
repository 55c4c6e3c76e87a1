"""The Services world: five small stateful services, their tools, and multi-turn tasks with goal states, from a seed.

This module defines no game (the registry takes every game a module of this
package defines); :mod:`parlour.envs.agentic.services` plays the worlds it
generates. The services take after the shapes of BFCL's multi-turn API classes
(a file system, a messaging app, a ticket queue, an account), written anew and
kept small:

========== ===================================================================================================
service    tools
========== ===================================================================================================
files      ``list_dir(path)``, ``read_file(path)``, ``write_file(path, content)``, ``make_dir(path)``,
           ``move_file(source, destination)``, ``delete_file(path)``
messages   ``list_contacts()``, ``list_inbox()``, ``send_message(to, text)``, ``delete_message(message_id)``
calendar   ``list_events(date?)``, ``create_event(title, date, time)``, ``reschedule_event(event_id, date, time)``,
           ``cancel_event(event_id)``
bank       ``list_accounts()``, ``list_payees()``, ``transfer(from_account, to_account, amount)``,
           ``list_transactions(account)``
tickets    ``list_tickets(status?)``, ``get_ticket(ticket_id)``, ``create_ticket(title, priority, description)``,
           ``update_ticket(ticket_id, status?, priority?)``
========== ===================================================================================================

A world's state is one JSON-ready dict per service (:func:`execute` answers a
call and changes the state; a refused call changes nothing and answers
``{"error": ...}`` with what to do). A task is a list of turns, each an
instruction from the user; its goal state is made by running, on a copy of the
state, the calls that carry the instruction out (:class:`Sub` holds them), with
the very :func:`execute` the player's calls go through, so a goal is always
reachable. Instructions state every name, amount, date and text exactly; what
they do not state (a contact's user id, an account number, an event's id, a
balance) is looked up with the tools, so later calls take their arguments from
earlier results. Some turns ask for something no tool does (booking a flight,
ordering food): BFCL's irrelevance category, whose goal is the state unchanged.

:func:`same_state` compares states as the reward does: the order of a list and
the ids given to items created in the episode do not matter.

The goal states are the world's hidden part: observations carry an opaque
``task_id``; :func:`goal_channel` hands the goals behind it to privileged
agents (the ``expert``), which the leaderboard refuses.
"""

from __future__ import annotations

import calendar
import copy
import hashlib
import json
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

SERVICES = ("files", "messages", "calendar", "bank", "tickets")


@dataclass(frozen=True)
class Level:
    """What a difficulty sets: services offered, user turns, requests per turn, and whether requests span two services."""

    services: int
    turns: int
    per_turn: int
    cross: bool


LEVELS = {1: Level(1, 1, 1, False), 2: Level(2, 1, 2, False), 3: Level(3, 2, 2, True), 4: Level(4, 2, 2, True), 5: Level(5, 3, 2, True)}
#: Chance that a turn (never every turn of a task longer than one) asks for something no tool can do.
IRRELEVANT_CHANCE = 0.2
#: The most tool calls an honest player needs for one turn (lookups included): below the engine's default budget of 8.
TURN_CALLS = 7
#: Ticket statuses.
STATUSES = ("open", "in_progress", "closed")

# ----------------------------------------------------------------------------------------------- tools

_PATH = {"type": "string", "minLength": 1, "maxLength": 200}
_DATE = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$", "description": "YYYY-MM-DD"}
_TIME = {"type": "string", "pattern": r"^\d{2}:\d{2}$", "description": "HH:MM, 24-hour"}
_ACCOUNT = {"type": "string", "minLength": 1, "maxLength": 40}
_ID = {"type": "integer", "minimum": 0, "maximum": 10**9}


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A parameters schema: these properties, these required, nothing else."""
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


#: Every tool: (service, name, description, parameters schema).
TOOL_SPECS: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    ("files", "list_dir", "List the folders and files directly inside a folder (absolute path, e.g. /home).", _object({"path": _PATH}, ("path",))),
    ("files", "read_file", "Read a file's content.", _object({"path": _PATH}, ("path",))),
    (
        "files",
        "write_file",
        "Create a file, or replace its content; its folder must exist.",
        _object({"path": _PATH, "content": {"type": "string", "maxLength": 2000}}, ("path", "content")),
    ),
    ("files", "make_dir", "Create a folder; its parent folder must exist.", _object({"path": _PATH}, ("path",))),
    (
        "files",
        "move_file",
        "Move a file to another path, or into a folder (keeping its name); nothing may be there already.",
        _object({"source": _PATH, "destination": _PATH}, ("source", "destination")),
    ),
    ("files", "delete_file", "Delete a file.", _object({"path": _PATH}, ("path",))),
    ("messages", "list_contacts", "List the contacts: each name with its user id.", _object({})),
    ("messages", "list_inbox", "List the received messages: id, sender's user id and text, oldest first.", _object({})),
    (
        "messages",
        "send_message",
        "Send a text message to a user id.",
        _object(
            {"to": {"type": "string", "minLength": 1, "maxLength": 40}, "text": {"type": "string", "minLength": 1, "maxLength": 1000}}, ("to", "text")
        ),
    ),
    ("messages", "delete_message", "Delete a received message by its id.", _object({"message_id": _ID}, ("message_id",))),
    ("calendar", "list_events", "List the calendar's events (id, title, date, time), of one date if given.", _object({"date": _DATE})),
    (
        "calendar",
        "create_event",
        "Add an event.",
        _object({"title": {"type": "string", "minLength": 1, "maxLength": 200}, "date": _DATE, "time": _TIME}, ("title", "date", "time")),
    ),
    (
        "calendar",
        "reschedule_event",
        "Move an event to another date and time.",
        _object({"event_id": _ID, "date": _DATE, "time": _TIME}, ("event_id", "date", "time")),
    ),
    ("calendar", "cancel_event", "Remove an event.", _object({"event_id": _ID}, ("event_id",))),
    ("bank", "list_accounts", "List your own accounts: number, name and balance.", _object({})),
    ("bank", "list_payees", "List the saved payees: name and account number.", _object({})),
    (
        "bank",
        "transfer",
        "Transfer an amount (at most 2 decimals) from one of your accounts to an account number.",
        _object(
            {"from_account": _ACCOUNT, "to_account": _ACCOUNT, "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 1_000_000_000}},
            ("from_account", "to_account", "amount"),
        ),
    ),
    ("bank", "list_transactions", "List the transfers made from or to one of your accounts.", _object({"account": _ACCOUNT}, ("account",))),
    (
        "tickets",
        "list_tickets",
        "List the support tickets (id, title, status, priority), of one status if given.",
        _object({"status": {"type": "string", "enum": list(STATUSES)}}),
    ),
    ("tickets", "get_ticket", "Show one ticket, its description included.", _object({"ticket_id": _ID}, ("ticket_id",))),
    (
        "tickets",
        "create_ticket",
        "Open a new ticket (status open).",
        _object(
            {
                "title": {"type": "string", "minLength": 1, "maxLength": 200},
                "priority": {"type": "integer", "minimum": 1, "maximum": 5},
                "description": {"type": "string", "maxLength": 1000},
            },
            ("title", "priority", "description"),
        ),
    ),
    (
        "tickets",
        "update_ticket",
        "Change a ticket's status and/or priority.",
        _object(
            {"ticket_id": _ID, "status": {"type": "string", "enum": list(STATUSES)}, "priority": {"type": "integer", "minimum": 1, "maximum": 5}},
            ("ticket_id",),
        ),
    ),
)
SERVICE_OF = {name: service for service, name, _, _ in TOOL_SPECS}

# ----------------------------------------------------------------------------------------------- vocabulary

FIRST = (
    "Ana",
    "Ben",
    "Carla",
    "Dev",
    "Elif",
    "Femi",
    "Greta",
    "Hugo",
    "Iris",
    "Jonas",
    "Kira",
    "Luis",
    "Maya",
    "Nils",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
    "Umar",
    "Vera",
    "Wen",
    "Yusuf",
)
LAST = (
    "Lopez",
    "Ortiz",
    "Diaz",
    "Nair",
    "Kaya",
    "Adeyemi",
    "Berg",
    "Moreau",
    "Costa",
    "Weber",
    "Sato",
    "Silva",
    "Okafor",
    "Lind",
    "Haddad",
    "Rao",
    "Novak",
    "Reyes",
    "Holm",
    "Iyer",
)
FOLDERS = ("docs", "notes", "projects", "photos", "recipes", "travel")
STEMS = ("report", "budget", "todo", "draft", "invoice", "summary", "minutes", "plan", "letter", "checklist", "ideas", "log")
EXTENSIONS = (".txt", ".md", ".csv", ".log")
LINES = (
    "Quarterly numbers are in.",
    "Call the plumber on Monday.",
    "Buy oat milk and rice.",
    "Slides need one more chart.",
    "Renew the passport before May.",
    "The garden hose leaks.",
    "Ask about the parking permit.",
    "Book the hall for June.",
    "Water the ferns twice a week.",
    "Send the signed lease back.",
    "Keep receipts for the repairs.",
    "Pick a paint colour.",
)
MESSAGES = (
    "Can you send me the slides?",
    "Running late, start without me.",
    "Lunch on Friday?",
    "The keys are under the mat.",
    "Thanks for yesterday!",
    "Did you get my invoice?",
    "Meeting moved to the small room.",
    "Call me when you land.",
    "Happy birthday!",
    "Please review my draft.",
    "The package arrived.",
    "Are we still on for tonight?",
)
REPLIES = (
    "Thanks, got it.",
    "On my way.",
    "Sounds good to me.",
    "I will call you tonight.",
    "Done, see you soon.",
    "Sorry, I cannot make it.",
    "Yes, Friday works.",
    "I sent it this morning.",
)
EVENTS = (
    "Dentist",
    "Team sync",
    "Budget review",
    "Yoga class",
    "Car service",
    "Parent meeting",
    "Piano lesson",
    "Haircut",
    "Book club",
    "Tax advisor",
    "Gym session",
    "Vet visit",
    "Design review",
    "Flat viewing",
)
TICKETS = (
    "Printer jam",
    "VPN drops",
    "Laptop battery",
    "Password reset",
    "Email sync",
    "Monitor flicker",
    "Slow wifi",
    "Broken chair",
    "Projector bulb",
    "Access badge",
    "Disk full",
    "Phone headset",
    "Calendar invites",
    "Door sensor",
)
DESCRIPTIONS = (
    "Happens every morning.",
    "Started after the update.",
    "Affects the whole floor.",
    "Urgent before Friday.",
    "Spare part ordered.",
    "Only on the third floor.",
)
ACCOUNT_NAMES = ("checking", "savings", "travel")
IMPOSSIBLE = (
    "Book me a flight from {city} to {city2} on {date}.",
    "Order a large pizza to be delivered to {street} {number} at {time}.",
    "Set the living-room thermostat to {degrees} degrees.",
    "What will the weather be in {city} on {date}?",
    "Call a taxi to {street} {number} for {time} today.",
    "Play the song '{song}' on the kitchen speaker.",
)
CITIES = ("Oslo", "Lima", "Porto", "Quito", "Hanoi", "Accra", "Perth", "Riga", "Cusco", "Tunis")
STREETS = ("Elm Street", "Harbour Road", "Mill Lane", "Station Square", "Birch Avenue")
SONGS = ("Blue Hour", "Paper Boats", "Northern Lines", "Slow Tide")

# ----------------------------------------------------------------------------------------------- the services


class CallError(Exception):
    """A call the service refuses: its message, which says what to do, is the tool's ``{"error": ...}`` answer."""


def _money(cents: int) -> float:
    """Cents as the amount a tool shows."""
    return round(cents / 100, 2)


def money_text(cents: int) -> str:
    """Cents as an instruction states an amount: ``120.50``."""
    return f"{cents // 100}.{cents % 100:02d}"


def _quote(value: str) -> str:
    """A value the player gave, quoted in an error: JSON-escaped and cut, so it cannot pass for the service's own words."""
    return json.dumps(value[:80], ensure_ascii=False)


def _valid_date(text: str) -> bool:
    """Whether ``text`` (already ``YYYY-MM-DD`` in form) is a real date."""
    year, month, day = int(text[:4]), int(text[5:7]), int(text[8:10])
    return 1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1] if 1 <= year <= 9999 else False


def _valid_time(text: str) -> bool:
    """Whether ``text`` (already ``HH:MM`` in form) is a time of day."""
    return int(text[:2]) < 24 and int(text[3:]) < 60


def _parent(path: str) -> str:
    """The folder a path is in (``/`` for a top-level one)."""
    return path.rsplit("/", 1)[0] or "/"


def _norm_path(path: str) -> str:
    """An absolute path without a trailing slash; ``CallError`` for a relative one or one with ``.``/``..`` parts."""
    if not path.startswith("/"):
        raise CallError(f"paths are absolute: {_quote(path)} does not start with '/'. List a folder with list_dir, e.g. /home.")
    parts = [part for part in path.split("/") if part]
    if any(part in (".", "..") for part in parts):
        raise CallError("paths may not contain '.' or '..' parts: write the full absolute path.")
    return "/" + "/".join(parts)


def _files(state: dict[str, Any], name: str, args: dict[str, Any]) -> Any:
    """The file system: folders (a sorted list) and files (path -> content)."""
    dirs, files = state["dirs"], state["files"]
    if name == "list_dir":
        path = _norm_path(args["path"])
        if path not in dirs and path != "/":
            raise CallError(f"there is no folder {_quote(path)}. Start from list_dir('/').")
        prefix = path.rstrip("/") + "/"
        return {
            "path": path,
            "folders": sorted(d for d in dirs if _parent(d) == path and d != path),
            "files": sorted(f[len(prefix) :] for f in files if _parent(f) == path),
        }
    if name == "read_file":
        path = _norm_path(args["path"])
        if path not in files:
            raise CallError(f"there is no file {_quote(path)}. See the files of a folder with list_dir.")
        return {"path": path, "content": files[path]}
    if name == "write_file":
        path = _norm_path(args["path"])
        if path in dirs or path == "/":
            raise CallError(f"{_quote(path)} is a folder; write to a file path inside it.")
        if _parent(path) not in dirs and _parent(path) != "/":
            raise CallError(f"the folder {_quote(_parent(path))} does not exist; create it first with make_dir.")
        existed = path in files
        files[path] = args["content"]
        return {"path": path, "replaced" if existed else "created": True}
    if name == "make_dir":
        path = _norm_path(args["path"])
        if path in dirs or path in files or path == "/":
            raise CallError(f"{_quote(path)} already exists.")
        if _parent(path) not in dirs and _parent(path) != "/":
            raise CallError(f"the folder {_quote(_parent(path))} does not exist; create it first.")
        dirs.append(path)
        dirs.sort()
        return {"path": path, "created": True}
    if name == "move_file":
        source, destination = _norm_path(args["source"]), _norm_path(args["destination"])
        if source not in files:
            raise CallError(f"there is no file {_quote(source)}. See the files of a folder with list_dir.")
        if destination in dirs or destination == "/":
            destination = destination.rstrip("/") + "/" + source.rsplit("/", 1)[1]
        if destination in files or destination in dirs:
            raise CallError(f"{_quote(destination)} already exists; delete it first or choose another path.")
        if _parent(destination) not in dirs and _parent(destination) != "/":
            raise CallError(f"the folder {_quote(_parent(destination))} does not exist; create it first with make_dir.")
        files[destination] = files.pop(source)
        return {"moved": source, "to": destination}
    path = _norm_path(args["path"])
    if path not in files:
        raise CallError(f"there is no file {_quote(path)}. See the files of a folder with list_dir.")
    del files[path]
    return {"deleted": path}


def _messages(state: dict[str, Any], name: str, args: dict[str, Any]) -> Any:
    """The messaging app: contacts (name -> user id), the inbox, the messages sent, and the next message id."""
    if name == "list_contacts":
        return [{"name": person, "user_id": uid} for person, uid in state["contacts"].items()]
    if name == "list_inbox":
        return list(state["inbox"])
    if name == "send_message":
        if args["to"] not in state["contacts"].values():
            raise CallError(f"there is no user id {_quote(args['to'])}. Find a contact's user id with list_contacts.")
        message = {"id": state["next_id"], "to": args["to"], "text": args["text"]}
        state["next_id"] += 1
        state["sent"].append(message)
        return {"sent": True, "message_id": message["id"]}
    found = [m for m in state["inbox"] if m["id"] == args["message_id"]]
    if not found:
        raise CallError(f"there is no received message {args['message_id']}. See the ids with list_inbox.")
    state["inbox"].remove(found[0])
    return {"deleted": args["message_id"]}


def _calendar(state: dict[str, Any], name: str, args: dict[str, Any]) -> Any:
    """The calendar: events (id, title, date, time) and the next event id."""
    events = state["events"]
    if name == "list_events":
        date = args.get("date")
        return sorted((e for e in events if date is None or e["date"] == date), key=lambda e: (e["date"], e["time"], e["id"]))
    if "date" in args and not _valid_date(args["date"]):
        raise CallError(f"{_quote(args['date'])} is not a date: write YYYY-MM-DD, e.g. 2025-03-14.")
    if "time" in args and not _valid_time(args["time"]):
        raise CallError(f"{_quote(args['time'])} is not a time: write HH:MM from 00:00 to 23:59.")
    if name == "create_event":
        event = {"id": state["next_id"], "title": args["title"], "date": args["date"], "time": args["time"]}
        state["next_id"] += 1
        events.append(event)
        return {"created": True, "event_id": event["id"]}
    found = [e for e in events if e["id"] == args["event_id"]]
    if not found:
        raise CallError(f"there is no event {args['event_id']}. See the ids with list_events.")
    if name == "reschedule_event":
        found[0]["date"], found[0]["time"] = args["date"], args["time"]
        return {"event_id": args["event_id"], "date": args["date"], "time": args["time"]}
    events.remove(found[0])
    return {"cancelled": args["event_id"]}


def _bank(state: dict[str, Any], name: str, args: dict[str, Any]) -> Any:
    """The bank: own accounts (number, name, balance in cents), payees, transfers made, and the next transfer id."""
    accounts = {a["account"]: a for a in state["accounts"]}
    if name == "list_accounts":
        return [{"account": a["account"], "name": a["name"], "balance": _money(a["balance"])} for a in state["accounts"]]
    if name == "list_payees":
        return list(state["payees"])
    if name == "list_transactions":
        if args["account"] not in accounts:
            raise CallError(f"{_quote(args['account'])} is not one of your accounts. See them with list_accounts.")
        return [{**t, "amount": _money(t["amount"])} for t in state["transactions"] if args["account"] in (t["from"], t["to"])]
    source, target, amount = args["from_account"], args["to_account"], args["amount"]
    cents = round(amount * 100)
    if abs(cents - amount * 100) > 1e-6:
        raise CallError(f"an amount has at most 2 decimals, e.g. 120.50 (got {amount!r}).")
    if source not in accounts:
        raise CallError(f"{_quote(source)} is not one of your accounts: transfer from an account number that list_accounts shows.")
    known = set(accounts) | {p["account"] for p in state["payees"]}
    if target not in known:
        raise CallError(f"there is no account {_quote(target)}: transfer to your own accounts (list_accounts) or a payee's (list_payees).")
    if target == source:
        raise CallError("the two accounts are the same: transfer to another account.")
    if accounts[source]["balance"] < cents:
        raise CallError(f"the balance of {source} is {money_text(accounts[source]['balance'])}, less than {money_text(cents)}.")
    accounts[source]["balance"] -= cents
    if target in accounts:
        accounts[target]["balance"] += cents
    transaction = {"id": state["next_id"], "from": source, "to": target, "amount": cents}
    state["next_id"] += 1
    state["transactions"].append(transaction)
    return {
        "transferred": _money(cents),
        "from": source,
        "to": target,
        "transaction_id": transaction["id"],
        "balance": _money(accounts[source]["balance"]),
    }


def _tickets(state: dict[str, Any], name: str, args: dict[str, Any]) -> Any:
    """The ticket queue: tickets (id, title, status, priority, description) and the next ticket id."""
    tickets = state["tickets"]
    if name == "list_tickets":
        status = args.get("status")
        return [{key: t[key] for key in ("id", "title", "status", "priority")} for t in tickets if status is None or t["status"] == status]
    if name == "create_ticket":
        ticket = {"id": state["next_id"], "title": args["title"], "status": "open", "priority": args["priority"], "description": args["description"]}
        state["next_id"] += 1
        tickets.append(ticket)
        return {"created": True, "ticket_id": ticket["id"]}
    found = [t for t in tickets if t["id"] == args["ticket_id"]]
    if not found:
        raise CallError(f"there is no ticket {args['ticket_id']}. See the ids with list_tickets.")
    if name == "get_ticket":
        return dict(found[0])
    if "status" not in args and "priority" not in args:
        raise CallError("give a new status, a new priority, or both.")
    for key in ("status", "priority"):
        if key in args:
            found[0][key] = args[key]
    return {"ticket_id": args["ticket_id"], "status": found[0]["status"], "priority": found[0]["priority"]}


_HANDLERS: dict[str, Callable[[dict[str, Any], str, dict[str, Any]], Any]] = {
    "files": _files,
    "messages": _messages,
    "calendar": _calendar,
    "bank": _bank,
    "tickets": _tickets,
}


def execute(state: dict[str, dict[str, Any]], name: str, args: dict[str, Any]) -> Any:
    """Answer the call ``name(**args)`` (arguments valid under the tool's schema) on ``state``, changing it.

    A refused call leaves ``state`` as it was and answers ``{"error": ...}``; calls check everything before they change
    anything.
    """
    service = SERVICE_OF[name]
    try:
        return _HANDLERS[service](state[service], name, args)
    except CallError as error:
        return {"error": str(error)}


def canonical(state: dict[str, dict[str, Any]], first_new: dict[str, int]) -> dict[str, Any]:
    """``state`` as the reward compares it: lists in a fixed order, and no ids on items created in the episode (ids from
    ``first_new[service]`` up) or next-id counters: the order of calls and the ids they drew do not matter."""
    out: dict[str, Any] = {}
    for service, data in state.items():
        first = first_new.get(service)
        shown: dict[str, Any] = {}
        for key, value in data.items():
            if key == "next_id":
                continue
            if isinstance(value, list) and value and isinstance(value[0], dict):
                items = [{k: v for k, v in item.items() if not (k == "id" and first is not None and v >= first)} for item in value]
                shown[key] = sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
            else:
                shown[key] = value
        out[service] = shown
    return out


def same_state(state: dict[str, Any], goal: dict[str, Any], first_new: dict[str, int]) -> bool:
    """Whether ``state`` equals ``goal`` as the reward compares them (see :func:`canonical`)."""
    return canonical(state, first_new) == canonical(goal, first_new)


# ----------------------------------------------------------------------------------------------- answers

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\b")


def answer_holds(answer: str, kind: str, value: str) -> bool:
    """Whether ``answer`` states ``value``: a number (``kind`` ``"number"``: any number in the answer equal to it to the
    cent, thousands commas allowed), a time (``"time"``: ``9:30`` or ``09:30``) or a word or code (``"text"``: it occurs,
    case aside, not inside a longer word)."""
    if kind == "number":
        wanted = round(float(value) * 100)
        for token in _NUMBER.findall(answer):
            try:
                if round(float(token.replace(",", "")) * 100) == wanted:
                    return True
            except (ValueError, OverflowError):
                continue
        return False
    if kind == "time":
        return any(f"{int(h):02d}:{m}" == value for h, m in _CLOCK.findall(answer))
    return re.search(rf"(?<![\w-]){re.escape(value.lower())}(?![\w-])", answer.lower()) is not None


# ----------------------------------------------------------------------------------------------- tasks


@dataclass
class Sub:
    """One request of a turn: its sentence, the calls that carry it out, the values the answer must state, the services
    it needs, and how many calls an honest player needs for it (lookups included)."""

    text: str
    calls: list[tuple[str, dict[str, Any]]]
    answers: list[tuple[str, str]] = field(default_factory=list)
    cost: int = 1


@dataclass
class Turn:
    """A user turn: the instruction, the state it asks for, the values its answer must state, and whether no tool can do it."""

    instruction: str
    goal: dict[str, Any]
    answers: list[tuple[str, str]]
    impossible: bool
    families: list[str]


@dataclass
class World:
    """A generated episode: its services, their first state, the first new id of each, and the turns."""

    seed: int
    difficulty: int
    services: tuple[str, ...]
    initial: dict[str, Any]
    first_new: dict[str, int]
    turns: list[Turn]


class _Draw:
    """The generator's helpers over one random generator: picks and distinct picks."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def pick(self, items: Any) -> Any:
        """One item, uniformly."""
        items = list(items)
        return items[int(self.rng.integers(len(items)))]

    def some(self, items: Any, count: int) -> list[Any]:
        """``count`` distinct items, in the order drawn."""
        items = list(items)
        return [items[int(i)] for i in self.rng.choice(len(items), size=min(count, len(items)), replace=False)]

    def int(self, low: int, high: int) -> int:
        """An integer in ``[low, high]``."""
        return int(self.rng.integers(low, high + 1))


def _initial(draw: _Draw, services: tuple[str, ...], month: str) -> dict[str, Any]:
    """The first state of each service."""
    state: dict[str, Any] = {}
    people = [f"{first} {last}" for first, last in zip(draw.some(FIRST, 6), draw.some(LAST, 6))]
    for service in services:
        if service == "files":
            folders = ["/home"] + [f"/home/{name}" for name in draw.some(FOLDERS, draw.int(2, 4))]
            files = {}
            for _ in range(draw.int(4, 7)):
                path = f"{draw.pick(folders[1:])}/{draw.pick(STEMS)}{draw.pick(EXTENSIONS)}"
                files[path] = (
                    draw.pick(LINES) if draw.rng.random() < 0.6 else f"Access code: {draw.pick('ABCDEFGHJKMNPQRSTUVWXYZ')}{draw.int(1000, 9999)}"
                )
            state["files"] = {"dirs": sorted(folders), "files": dict(sorted(files.items()))}
        elif service == "messages":
            contacts = {person: f"USR-{draw.int(1000, 9999)}" for person in people[: draw.int(4, 6)]}
            while len(set(contacts.values())) < len(contacts):
                contacts = {person: f"USR-{draw.int(1000, 9999)}" for person in contacts}
            inbox = [{"id": i + 1, "from": contacts[draw.pick(contacts)], "text": draw.pick(MESSAGES)} for i in range(draw.int(3, 6))]
            state["messages"] = {"contacts": contacts, "inbox": inbox, "sent": [], "next_id": len(inbox) + 1}
        elif service == "calendar":
            titles = draw.some(EVENTS, draw.int(3, 6))
            events = [
                {
                    "id": i + 1,
                    "title": title,
                    "date": f"{month}-{draw.int(1, 28):02d}",
                    "time": f"{draw.int(8, 19):02d}:{draw.pick(('00', '15', '30', '45'))}",
                }
                for i, title in enumerate(titles)
            ]
            state["calendar"] = {"events": events, "next_id": len(events) + 1}
        elif service == "bank":
            names = ACCOUNT_NAMES[: draw.int(2, 3)]
            accounts = [{"account": f"ACC-{draw.int(10_000_000, 99_999_999)}", "name": name, "balance": draw.int(20_000, 900_000)} for name in names]
            payees = [{"name": person, "account": f"ACC-{draw.int(10_000_000, 99_999_999)}"} for person in draw.some(people, 3)]
            state["bank"] = {"accounts": accounts, "payees": payees, "transactions": [], "next_id": 1}
        else:
            titles = draw.some(TICKETS, draw.int(3, 6))
            tickets = [
                {"id": 100 + i, "title": title, "status": draw.pick(STATUSES), "priority": draw.int(1, 5), "description": draw.pick(DESCRIPTIONS)}
                for i, title in enumerate(titles)
            ]
            state["tickets"] = {"tickets": tickets, "next_id": 100 + len(tickets)}
    return state


# Each family: (services it needs, function(draw, state, month) -> Sub or None when the state does not allow it).


def _f_write(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    folder = draw.pick(s["files"]["dirs"][1:])
    path = f"{folder}/{draw.pick(STEMS)}-{draw.int(2, 99)}.txt"
    if path in s["files"]["files"]:
        return None
    content = draw.pick(LINES)
    return Sub(f'Create the file {path} with exactly this content: "{content}".', [("write_file", {"path": path, "content": content})])


def _f_move(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    source = draw.pick(s["files"]["files"])
    folder = f"/home/{draw.pick(('archive', 'old', 'backup', 'shared'))}"
    if folder in s["files"]["dirs"] or f"{folder}/{source.rsplit('/', 1)[1]}" in s["files"]["files"]:
        return None
    return Sub(
        f"Make a new folder {folder} and move {source} into it, keeping the file's name.",
        [("make_dir", {"path": folder}), ("move_file", {"source": source, "destination": folder})],
        cost=2,
    )


def _f_clean(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    files = s["files"]["files"]
    folder = draw.pick(s["files"]["dirs"][1:])
    extension = draw.pick(EXTENSIONS)
    doomed = [path for path in files if _parent(path) == folder and path.endswith(extension)]
    if not 1 <= len(doomed) <= 3:
        return None
    return Sub(
        f"Delete every file in the folder {folder} whose name ends with {extension} (and nothing else).",
        [("delete_file", {"path": path}) for path in doomed],
        cost=1 + len(doomed),
    )


def _f_code(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    coded = [(path, text) for path, text in s["files"]["files"].items() if text.startswith("Access code: ")]
    if not coded:
        return None
    path, text = draw.pick(coded)
    return Sub(f"Tell me the access code written in {path}.", [], [("text", text.split(": ", 1)[1])])


def _m_send(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    people = draw.some(s["messages"]["contacts"], draw.int(1, 2))
    text = draw.pick(REPLIES)
    who = " and ".join(people)
    calls = [("send_message", {"to": s["messages"]["contacts"][person], "text": text}) for person in people]
    return Sub(f'Send {who} the message "{text}"{" (one message to each)" if len(people) > 1 else ""}.', calls, cost=1 + len(people))


def _m_reply(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    ids = {uid: person for person, uid in s["messages"]["contacts"].items()}
    senders = [ids[m["from"]] for m in s["messages"]["inbox"] if m["from"] in ids]
    if not senders:
        return None
    person = draw.pick(senders)
    text = draw.pick(REPLIES)
    return Sub(
        f'Reply to {person}, who wrote to me, with the message "{text}".',
        [("send_message", {"to": s["messages"]["contacts"][person], "text": text})],
        cost=2,
    )


def _m_purge(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    ids = {uid: person for person, uid in s["messages"]["contacts"].items()}
    person = draw.pick(sorted({ids[m["from"]] for m in s["messages"]["inbox"]}) or [None])
    if person is None:
        return None
    doomed = [m["id"] for m in s["messages"]["inbox"] if m["from"] == s["messages"]["contacts"][person]]
    if len(doomed) > 3:
        return None
    return Sub(f"Delete every message {person} sent me.", [("delete_message", {"message_id": i}) for i in doomed], cost=2 + len(doomed))


def _c_create(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    title = draw.pick(EVENTS)
    if any(e["title"] == title for e in s["calendar"]["events"]):
        return None
    date, time = f"{month}-{draw.int(1, 28):02d}", f"{draw.int(7, 20):02d}:{draw.pick(('00', '30'))}"
    return Sub(f'Add the event "{title}" on {date} at {time}.', [("create_event", {"title": title, "date": date, "time": time})])


def _named_event(draw: _Draw, s: dict[str, Any]) -> dict[str, Any] | None:
    """An event whose title no other event has (so that its title names it), or None."""
    titles = [e["title"] for e in s["calendar"]["events"]]
    return draw.pick([e for e in s["calendar"]["events"] if titles.count(e["title"]) == 1] or [None])


def _c_cancel(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    event = _named_event(draw, s)
    if event is None:
        return None
    return Sub(f'Cancel the event "{event["title"]}" on {event["date"]}.', [("cancel_event", {"event_id": event["id"]})], cost=2)


def _c_move(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    event = _named_event(draw, s)
    if event is None:
        return None
    date, time = f"{month}-{draw.int(1, 28):02d}", f"{draw.int(7, 20):02d}:{draw.pick(('00', '30'))}"
    if (date, time) == (event["date"], event["time"]):
        return None
    return Sub(
        f'Move the event "{event["title"]}" to {date} at {time}.',
        [("reschedule_event", {"event_id": event["id"], "date": date, "time": time})],
        cost=2,
    )


def _c_when(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    event = _named_event(draw, s)
    if event is None:
        return None
    return Sub(f'Tell me at what time the event "{event["title"]}" on {event["date"]} starts.', [], [("time", event["time"])])


def _account(s: dict[str, Any], name: str) -> dict[str, Any]:
    return next(a for a in s["bank"]["accounts"] if a["name"] == name)


def _b_move(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    source, target = draw.some([a["name"] for a in s["bank"]["accounts"]], 2)
    cents = draw.int(1, min(_account(s, source)["balance"], 200_000) // 100) * 100 + draw.pick((0, 0, 25, 50, 99))
    if cents > _account(s, source)["balance"]:
        return None
    return Sub(
        f"Transfer {money_text(cents)} from my {source} account to my {target} account.",
        [("transfer", {"from_account": _account(s, source)["account"], "to_account": _account(s, target)["account"], "amount": cents / 100})],
        cost=2,
    )


def _b_pay(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    payee = draw.pick(s["bank"]["payees"])
    source = draw.pick([a["name"] for a in s["bank"]["accounts"]])
    cents = draw.int(5, 300) * 100 + draw.pick((0, 50))
    if cents > _account(s, source)["balance"]:
        return None
    return Sub(
        f"Pay {payee['name']} {money_text(cents)} from my {source} account.",
        [("transfer", {"from_account": _account(s, source)["account"], "to_account": payee["account"], "amount": cents / 100})],
        cost=3,
    )


def _b_sweep(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    source, target = draw.some([a["name"] for a in s["bank"]["accounts"]], 2)
    keep = draw.int(1, 20) * 10_000
    extra = _account(s, source)["balance"] - keep
    if extra <= 0:
        return None
    return Sub(
        f"Leave exactly {money_text(keep)} in my {source} account and transfer all the rest of it to my {target} account.",
        [("transfer", {"from_account": _account(s, source)["account"], "to_account": _account(s, target)["account"], "amount": extra / 100})],
        cost=2,
    )


def _b_balance(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    account = draw.pick(s["bank"]["accounts"])
    return Sub(f"Tell me the balance of my {account['name']} account.", [], [("number", money_text(account["balance"]))])


def _t_open(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    title = draw.pick(TICKETS)
    if any(t["title"] == title for t in s["tickets"]["tickets"]):
        return None
    priority, description = draw.int(1, 5), draw.pick(DESCRIPTIONS)
    return Sub(
        f'Open a ticket titled "{title}" with priority {priority} and the description "{description}".',
        [("create_ticket", {"title": title, "priority": priority, "description": description})],
    )


def _t_close(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    ticket = draw.pick([t for t in s["tickets"]["tickets"] if t["status"] != "closed"] or [None])
    if ticket is None:
        return None
    return Sub(f'Close the ticket titled "{ticket["title"]}".', [("update_ticket", {"ticket_id": ticket["id"], "status": "closed"})], cost=2)


def _t_raise(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    level = draw.int(1, 4)
    raised = [t["id"] for t in s["tickets"]["tickets"] if t["status"] == "open" and t["priority"] == level]
    if not 1 <= len(raised) <= 3:
        return None
    return Sub(
        f"Set the priority of every open ticket that has priority {level} to 5.",
        [("update_ticket", {"ticket_id": i, "priority": 5}) for i in raised],
        cost=1 + len(raised),
    )


def _t_count(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    status = draw.pick(STATUSES)
    count = sum(1 for t in s["tickets"]["tickets"] if t["status"] == status)
    return Sub(f"Tell me how many tickets have the status {status}.", [], [("number", str(count))])


def _x_forward(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    plain = [(path, text) for path, text in s["files"]["files"].items() if 0 < len(text) <= 200]
    if not plain:
        return None
    path, text = draw.pick(plain)
    person = draw.pick(s["messages"]["contacts"])
    return Sub(
        f"Send {person} a message whose text is exactly the content of the file {path}.",
        [("send_message", {"to": s["messages"]["contacts"][person], "text": text})],
        cost=3,
    )


def _x_save(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    inbox = s["messages"]["inbox"]
    if not inbox:
        return None
    ids = {uid: person for person, uid in s["messages"]["contacts"].items()}
    message = inbox[-1]
    folder = draw.pick(s["files"]["dirs"][1:])
    path = f"{folder}/from-{ids[message['from']].split()[0].lower()}.txt"
    if path in s["files"]["files"]:
        return None
    return Sub(
        f"Save the text of the most recent message in my inbox (the one with the highest id) as the file {path}.",
        [("write_file", {"path": path, "content": message["text"]})],
        cost=2,
    )


def _x_ticket_event(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    ticket = draw.pick([t for t in s["tickets"]["tickets"] if t["status"] == "open"] or [None])
    if ticket is None:
        return None
    date, time = f"{month}-{draw.int(1, 28):02d}", f"{draw.int(8, 17):02d}:00"
    return Sub(
        f'Add a calendar event on {date} at {time} whose title is "Fix ticket N", where N is the id of the ticket titled "{ticket["title"]}".',
        [("create_event", {"title": f"Fix ticket {ticket['id']}", "date": date, "time": time})],
        cost=2,
    )


def _x_refund(draw: _Draw, s: dict[str, Any], month: str) -> Sub | None:
    payee = draw.pick(s["bank"]["payees"])
    person = payee["name"]
    if person not in s["messages"]["contacts"]:
        return None
    source = _account(s, "checking")
    cents = draw.int(5, 150) * 100
    if cents > source["balance"]:
        return None
    return Sub(
        f'Pay {person} {money_text(cents)} from my checking account, then send {person} the message "Paid {money_text(cents)}".',
        [
            ("transfer", {"from_account": source["account"], "to_account": payee["account"], "amount": cents / 100}),
            ("send_message", {"to": s["messages"]["contacts"][person], "text": f"Paid {money_text(cents)}"}),
        ],
        cost=4,
    )


FAMILIES: dict[str, tuple[tuple[str, ...], Callable[[_Draw, dict[str, Any], str], Sub | None]]] = {
    "write_file": (("files",), _f_write),
    "move_file": (("files",), _f_move),
    "delete_files": (("files",), _f_clean),
    "read_code": (("files",), _f_code),
    "send": (("messages",), _m_send),
    "reply": (("messages",), _m_reply),
    "delete_messages": (("messages",), _m_purge),
    "add_event": (("calendar",), _c_create),
    "cancel_event": (("calendar",), _c_cancel),
    "move_event": (("calendar",), _c_move),
    "event_time": (("calendar",), _c_when),
    "transfer": (("bank",), _b_move),
    "pay": (("bank",), _b_pay),
    "sweep": (("bank",), _b_sweep),
    "balance": (("bank",), _b_balance),
    "open_ticket": (("tickets",), _t_open),
    "close_ticket": (("tickets",), _t_close),
    "raise_tickets": (("tickets",), _t_raise),
    "count_tickets": (("tickets",), _t_count),
    "forward_file": (("files", "messages"), _x_forward),
    "save_message": (("files", "messages"), _x_save),
    "ticket_event": (("tickets", "calendar"), _x_ticket_event),
    "pay_and_tell": (("bank", "messages"), _x_refund),
}


def _impossible(draw: _Draw, month: str) -> str:
    """A request none of the services can carry out."""
    return draw.pick(IMPOSSIBLE).format(
        city=(cities := draw.some(CITIES, 2))[0],
        city2=cities[1],
        date=f"{month}-{draw.int(1, 28):02d}",
        street=draw.pick(STREETS),
        number=draw.int(1, 99),
        time=f"{draw.int(11, 22):02d}:00",
        degrees=draw.int(17, 24),
        song=draw.pick(SONGS),
    )


def generate(seed: int, difficulty: int) -> World:
    """The world of ``seed`` at ``difficulty``: services, first state and turns (each with its goal state)."""
    level = LEVELS[difficulty]
    draw = _Draw(np.random.default_rng(seed))
    services = tuple(sorted(draw.some(SERVICES, level.services), key=SERVICES.index))
    month = f"2025-{draw.int(1, 12):02d}"
    initial = _initial(draw, services, month)
    first_new = {service: data["next_id"] for service, data in initial.items() if "next_id" in data}
    families = [name for name, (needs, _) in FAMILIES.items() if set(needs) <= set(services) and (level.cross or len(needs) == 1)]
    state = copy.deepcopy(initial)
    irrelevant = [bool(draw.rng.random() < IRRELEVANT_CHANCE) for _ in range(level.turns)]
    if level.turns > 1 and all(irrelevant):
        irrelevant[draw.int(0, level.turns - 1)] = False
    turns = []
    for impossible in irrelevant:
        if impossible:
            turns.append(Turn(_impossible(draw, month), copy.deepcopy(state), [], True, ["impossible"]))
            continue
        subs: list[tuple[str, Sub]] = []
        cost = 0
        for _ in range(40):
            if len(subs) == level.per_turn:
                break
            name = draw.pick(families)
            if any(name == done for done, _ in subs):
                continue
            trial = copy.deepcopy(state)
            sub = FAMILIES[name][1](draw, trial, month)
            if sub is None or cost + sub.cost > TURN_CALLS or (sub.answers and any(s.answers for _, s in subs)):
                continue
            results = [execute(trial, tool, args) for tool, args in sub.calls]
            # A request whose calls a service refuses, or that undoes nothing new, is drawn again.
            if any(isinstance(r, dict) and "error" in r for r in results) or (sub.calls and trial == state):
                continue
            subs.append((name, sub))
            state, cost = trial, cost + sub.cost
            if sub.answers:
                # A question closes its turn, so that what it asks about is the state after every change asked before it.
                break
        assert subs, f"no request could be drawn for seed {seed}"
        answers = [answer for _, sub in subs for answer in sub.answers]
        turns.append(Turn(" ".join(sub.text for _, sub in subs), copy.deepcopy(state), answers, False, [name for name, _ in subs]))
    return World(seed, difficulty, services, initial, first_new, turns)


# ----------------------------------------------------------------------------------------------- the goal channel


class GoalChannel:
    """The worlds behind recent episodes' task handles, in this process: how the ``expert`` baseline, a privileged
    planner (``privileged = True``, refused by the leaderboard), reads the goal states. Observations carry only the
    opaque handle (see :func:`task_handle`)."""

    REMEMBERED = 4096

    def __init__(self) -> None:
        self._worlds: OrderedDict[str, World] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, handle: str, world: World) -> None:
        """Keep ``world`` under ``handle``, forgetting the oldest beyond :attr:`REMEMBERED`."""
        with self._lock:
            self._worlds[handle] = world
            self._worlds.move_to_end(handle)
            while len(self._worlds) > self.REMEMBERED:
                self._worlds.popitem(last=False)

    def world(self, handle: str) -> World:
        """The world behind ``handle``; ``LookupError`` if no recent episode of this process has it."""
        with self._lock:
            found = self._worlds.get(handle)
        if found is None:
            raise LookupError(
                f"no Services episode of this process has the task handle {handle!r}: the channel knows only "
                "the tasks of games running in the privileged agent's own process"
            )
        return found

    def __deepcopy__(self, memo: dict) -> GoalChannel:
        return self

    def __reduce__(self) -> tuple:
        return goal_channel, ()


_CHANNEL = GoalChannel()


def goal_channel() -> GoalChannel:
    """The goal channel of this process: for privileged agents only."""
    return _CHANNEL


def task_handle(secret: bytes, world: World) -> str:
    """An opaque handle of an episode's task (a keyed hash under a secret the episode drew), remembered with its world
    in :func:`goal_channel`."""
    handle = "t-" + hashlib.blake2b(f"{world.seed}:{world.difficulty}".encode(), key=secret, digest_size=12).hexdigest()
    _CHANNEL.remember(handle, world)
    return handle
