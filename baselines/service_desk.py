"""Scripted agents of the ServiceDesk game: the customer simulator, the policy-following ``expert``, the weak
``compliant`` agent, and ``random``.

* ``customer`` (the customer seat only): the scripted simulator that plays the customer by default. It reads its
  own view (its brief: identity facts and requests; the dialogue; the shop's notices of changes to its account)
  and nothing else. It states one request at a time without its facts, and answers what the agent's latest
  message asks, by keywords, in this order: its identity (``email``, ``name``); a confirmation (``confirm``,
  ``yes or no``: yes only when the message names the request's order id, or for a default-address change its new
  street); facts (``order id``, ``reason``, ``item``, ``refund`` / ``payment``, ``address``); a refusal
  (``cannot``, ``unable``, ``not allowed``, ...: it insists once where its brief says so, then accepts). A notice
  that its current request was carried out settles it; when every request is settled it calls ``end_chat``.
  Its wording is drawn from its seed (so several trials of one task differ), its facts never.
* ``expert`` (the agent seat only): follows the policy from its observation alone (the customer's words and its
  own tool results, never the customer's brief or the goal). It asks for the customer's identity and verifies it,
  reads the profile, takes the requests in the order the customer makes them, asks for each one's order id,
  refuses (with the reason, and again when the customer insists) an order not in the profile or one the policy
  forbids acting on, asks for the facts it needs, reads the change back for a yes, and then makes it.
* ``compliant`` (the agent seat only): an honest weak agent. It talks like ``expert`` and verifies identity and asks
  for consent as it does, but it never checks a request against the policy (an order's owner, status or age): it
  does whatever the customer asks, so it fails every task with a forbidden request.
* ``random``: in the agent seat, random tool calls (with ids it has seen in its observation, or made-up values) and
  random messages; in the customer seat, random messages and, now and then, ``end_chat``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from parlour.baselines import register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.baselines.seeded import SeededAgent
from parlour.envs.agentic.service_desk_world import (
    CANCEL_REASONS,
    RETURN_DAYS,
    address_text,
    days_since,
)

ENV_ID = "parlour/ServiceDesk-v0"


def call(tool: str, **arguments: Any) -> str:
    """A tool call as the JSON text ``{"tool": ..., "arguments": {...}}``."""
    return json.dumps({"tool": tool, "arguments": arguments}, ensure_ascii=False)


def _seat(observation: Mapping[str, Any], role: str, name: str) -> Mapping[str, Any]:
    """The observation's view, after checking that the agent sits in ``role`` (a usage error naming the seat otherwise)."""
    view = observation["view"]
    if view.get("role") != role:
        raise ValueError(f"{name} plays the {role} seat of ServiceDesk only, not {view.get('role')!r}: seat it as {role}")
    return view


# ----------------------------------------------------------------------------- the customer simulator

#: How the customer states each kind of request (no facts: those wait until asked). Each keeps the words the
#: ``expert`` reads the kind from: "default address", "ship", "cancel", "return".
STATEMENTS = {
    "cancel": ("I'd like to cancel an order.", "Could you cancel one of my orders, please?", "Please cancel an order of mine."),
    "return": (
        "I want to return some items from an order.",
        "I'd like to return part of an order I received.",
        "Can I return a few things from one of my orders?",
    ),
    "ship_address": (
        "I need an order of mine to ship to a different place.",
        "Can you change where one of my orders will ship?",
        "One of my orders should ship somewhere else.",
    ),
    "profile_address": (
        "Please update the default address on my account.",
        "I moved, so my default address needs to change.",
        "I'd like to change the default address of my profile.",
    ),
}
OPENINGS = ("Hi!", "Hello.", "Good morning.")
NEXT = ("Thank you. Next,", "Great, thanks. Also,", "Thanks! One more thing:")
PUSHES = ("Are you sure? Please make an exception this once.", "Really? I was hoping you could still do it for me.")
ACCEPTS = ("Alright, I understand.", "Fine, I see.")
GOODBYES = ("Thank you, that's all I needed.", "Thanks for your help, goodbye.")
EMAIL_REPLIES = ("My email is {email}.", "Sure, it's {email}.")
NAME_REPLIES = ("I don't remember which email I used. I'm {first} {last}, zip code {zip}.", "My name is {first} {last}, and my zip code is {zip}.")

_CONFIRM = re.compile(r"\bconfirm|\byes or no\b|\byes/no\b|\bshall i\b|\bshould i\b|\bproceed\b")
_REFUSAL = re.compile(r"\bcannot\b|\bcan't\b|\bcan not\b|\bunable\b|\bnot able to\b|\bnot allowed\b|\bnot permitted\b|\bnot eligible\b")
_FACTS = {
    "order_id": re.compile(r"\border (?:id|number)|\bwhich order\b"),
    "reason": re.compile(r"\breason\b|\bwhy\b"),
    "items": re.compile(r"\bitems?\b"),
    "refund": re.compile(r"\brefund|\bpayment\b"),
    "address": re.compile(r"\baddress\b"),
}


class Customer(SeededAgent):
    """The scripted customer simulator (see the module docstring); deterministic given its seed."""

    name = "customer"

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        super().__init__(env_id, seed)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Forget the last episode: no request settled, none pushed, no notice read."""
        super().reset(seed)
        self.settled: set[int] = set()
        self.pushed: set[int] = set()
        self.notices_read = 0

    def pick(self, options: tuple[str, ...]) -> str:
        """One wording, drawn from the seed."""
        return options[int(self.rng.integers(len(options)))]

    def current(self, requests: list[dict[str, Any]]) -> int | None:
        """The index of the first request not yet settled, or None."""
        return next((i for i in range(len(requests)) if i not in self.settled), None)

    def act(self, observation: Mapping[str, Any]) -> str:
        """The customer's next message, or ``end_chat`` once every request is settled."""
        view = _seat(observation, "customer", "the customer simulator")
        requests = view["requests"]
        before = len(self.settled)
        for notice in view["notices"][self.notices_read :]:
            for number, request in enumerate(requests):
                if request["kind"] == notice["kind"] and request["order_id"] == notice["order_id"]:
                    self.settled.add(number)
        self.notices_read = len(view["notices"])
        agent_lines = [entry["text"] for entry in view["dialogue"] if entry["sender"] == "agent"]
        index = self.current(requests)
        if not agent_lines:
            return f"{self.pick(OPENINGS)} {self.state(requests, index)}"
        if len(self.settled) > before:
            # A notice says a request was carried out: thank the agent and go on to the next one.
            return self.next(requests)
        text = agent_lines[-1].lower()
        if index is None:
            return self.goodbye()
        request = requests[index]
        if re.search(r"\bemail\b|\bname\b", text):
            return self.identity(view["customer"])
        if _CONFIRM.search(text):
            wanted = request["order_id"] or request["address"]["street"]
            return "Yes, please go ahead." if wanted.lower() in text else "No, that is not what I asked for."
        answers = [answer for fact, pattern in _FACTS.items() if pattern.search(text) and (answer := self.fact(request, fact))]
        if answers:
            return " ".join(answers)
        if _REFUSAL.search(text):
            if request["insist"] and index not in self.pushed:
                self.pushed.add(index)
                return self.pick(PUSHES)
            self.settled.add(index)
            following = self.next(requests)
            return following if following.startswith("{") else f"{self.pick(ACCEPTS)} {following}"
        return self.state(requests, index)

    def state(self, requests: list[dict[str, Any]], index: int | None) -> str:
        """The request at ``index`` in words (without its facts); the goodbye when there is none."""
        return self.goodbye() if index is None else self.pick(STATEMENTS[requests[index]["kind"]])

    def next(self, requests: list[dict[str, Any]]) -> str:
        """The next request to make, or the goodbye (an ``end_chat`` call) when none is left."""
        index = self.current(requests)
        if index is None:
            return self.goodbye()
        statement = self.state(requests, index)
        return f"{self.pick(NEXT)} {statement[0].lower()}{statement[1:]}"

    def goodbye(self) -> str:
        """Leave the chat."""
        return call("end_chat", message=self.pick(GOODBYES))

    def identity(self, customer: Mapping[str, Any]) -> str:
        """The identity facts the brief says to give."""
        if customer["identify_by"] == "email":
            return self.pick(EMAIL_REPLIES).format(email=customer["email"])
        return self.pick(NAME_REPLIES).format(first=customer["first_name"], last=customer["last_name"], zip=customer["zip"])

    def fact(self, request: Mapping[str, Any], fact: str) -> str:
        """One asked fact of the current request, or a plain "not applicable"."""
        if fact == "order_id" and request["order_id"]:
            return f"It's order {request['order_id']}."
        if fact == "reason" and request["kind"] == "cancel":
            return f"The reason is: {request['reason']}."
        if fact == "items" and request["kind"] == "return":
            return f"I'd like to return the {' and the '.join(request['items'])}."
        if fact == "refund" and request["kind"] == "return":
            return (
                "Please refund it to my original payment method."
                if request["refund_original"]
                else f"Please put the refund on my gift card {request['refund_to']}."
            )
        if fact == "address" and "address" in request:
            return f"The new address is {address_text(request['address'])}."
        return ""


# ----------------------------------------------------------------------------- the policy-following agent

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NAME_ZIP = re.compile(r"\b([A-Z][a-z]+) ([A-Z][a-z]+),? (?:and )?(?:my )?zip code (?:is )?(\d{5})\b")
_ORDER = re.compile(r"#?\b(W\d{7})\b")
_ADDRESS = re.compile(r"(\d+ [A-Z][a-z]+ (?:Street|Road|Lane|Avenue)), ([A-Z][a-z]+), (\d{5})")
_GIFT_CARD = re.compile(r"\bgift_card_\d{7}\b")
_INTENTS = (
    ("profile_address", re.compile(r"default address")),
    ("ship_address", re.compile(r"\bship")),
    ("cancel", re.compile(r"\bcancel")),
    ("return", re.compile(r"\breturn")),
)
IDENTITY_QUESTION = "To verify your identity, please tell me your email address, or your full name and zip code."


class Expert(SeededAgent):
    """The policy-following agent (see the module docstring); ``checks=False`` makes the weak ``compliant`` agent."""

    name = "expert"
    #: Whether requests are checked against the policy (owner, status, age) before acting.
    checks = True

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        super().__init__(env_id, seed)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Forget the last episode."""
        super().reset(seed)
        self.identity: dict[str, str] | None = None
        self.looked_up: list[dict[str, str]] = []
        self.user_id: str | None = None
        self.profile: dict[str, Any] | None = None
        self.orders: dict[str, dict[str, Any]] = {}
        self.queue: list[dict[str, Any]] = []
        self.request: dict[str, Any] | None = None
        self.heard = 0
        self.read = 0
        self.confirming = False
        self.consented = False

    # -------------------------------------------------------------- reading
    def listen(self, view: Mapping[str, Any]) -> None:
        """Read the tool results and the customer's messages that arrived since the last turn."""
        for entry in view["calls"][self.read :]:
            self.result(entry)
        self.read = len(view["calls"])
        customer = [entry["text"] for entry in view["dialogue"] if entry["sender"] == "customer"]
        for text in customer[self.heard :]:
            self.hear(text)
        self.heard = len(customer)

    def result(self, entry: Mapping[str, Any]) -> None:
        """Take in one tool result."""
        if entry["result"].startswith("Error"):
            if entry["tool"].startswith("find_user"):
                self.identity = None
            return
        if entry["tool"].startswith("find_user"):
            self.user_id = json.loads(entry["result"])["user_id"]
        elif entry["tool"] == "get_user":
            self.profile = json.loads(entry["result"])
        elif entry["tool"] == "get_order":
            order = json.loads(entry["result"])
            self.orders[order["order_id"]] = order
        elif entry["result"].startswith("Done") and self.request is not None:
            self.request["done"] = entry["result"][len("Done. ") :]

    def hear(self, text: str) -> None:
        """Take in one customer message: identity facts, new requests, and the facts of the current request."""
        email = _EMAIL.search(text)
        name_zip = _NAME_ZIP.search(text)
        if self.user_id is None and email:
            self.identity = {"email": email[0].lower()}
        elif self.user_id is None and name_zip:
            self.identity = {"first_name": name_zip[1], "last_name": name_zip[2], "zip": name_zip[3]}
        lower = text.lower()
        self.consented = self.confirming and lower.startswith("yes")
        self.confirming = False
        request = self.request
        if request is not None and request.get("refused"):
            if not lower.startswith(("alright", "fine", "ok")):
                return  # the customer insists: the refusal stands, and is said again
            self.request = request = None
        if request is None:
            # A new request is heard only between requests, so "I'd like to return the kettle" is no new one.
            for kind, pattern in _INTENTS:
                if pattern.search(lower):
                    self.queue.append({"kind": kind})
                    break
            return
        order = _ORDER.search(text)
        if order and "order_id" not in request:
            request["order_id"] = "#" + order[1]
        reason = next((r for r in CANCEL_REASONS if r in lower), None)
        if reason and request["kind"] == "cancel":
            request["reason"] = reason
        address = _ADDRESS.search(text)
        if address and request["kind"] in ("ship_address", "profile_address"):
            request["address"] = {"street": address[1], "city": address[2], "zip": address[3]}
        if request["kind"] == "return":
            order_data = self.orders.get(request.get("order_id", ""))
            if order_data and re.search(r"\breturn the\b", lower):
                request["item_ids"] = [line["item_id"] for line in order_data["items"] if line["product"] in lower and not line["returned"]]
            gift = _GIFT_CARD.search(text)
            if gift:
                request["refund_to"] = gift[0]
            elif "original payment method" in lower and order_data:
                request["refund_to"] = order_data["payment_method"]

    # -------------------------------------------------------------- acting
    def act(self, observation: Mapping[str, Any]) -> str:
        """One tool call, or the next message to the customer."""
        view = _seat(observation, "agent", self.name)
        self.listen(view)
        if self.user_id is None:
            if self.identity is not None and self.identity not in self.looked_up:
                self.looked_up.append(self.identity)
                tool = "find_user_by_email" if "email" in self.identity else "find_user_by_name_zip"
                return call(tool, **self.identity)
            return IDENTITY_QUESTION
        if self.profile is None:
            return call("get_user", user_id=self.user_id)
        request = self.request
        if request is not None and "done" in request:
            self.request = None
            return f"Done: {request['done']} Is there anything else I can help you with?"
        if request is None:
            if not self.queue:
                return "How can I help you today?"
            self.request = request = self.queue.pop(0)
        if request.get("refused"):
            return request["refused"]
        return self.serve(request)

    def serve(self, request: dict[str, Any]) -> str:
        """The next step of the current request: ask, look up, refuse, confirm, or make the change."""
        kind = request["kind"]
        order = None
        if kind != "profile_address":
            order_id = request.get("order_id")
            if order_id is None:
                return "Which order is this about? Please give me the order id."
            if self.checks and self.profile is not None and order_id not in self.profile["orders"]:
                return self.refuse(
                    request,
                    f"I'm sorry, I cannot help with order {order_id}: it is not on your account, and I may only "
                    "act on the orders of the verified customer.",
                )
            order = self.orders.get(order_id)
            if order is None:
                return call("get_order", order_id=order_id)
            if self.checks:
                refusal = self.forbidden(kind, order)
                if refusal:
                    return self.refuse(request, refusal)
        missing = self.missing(request)
        if missing:
            return missing
        if self.consented:
            self.consented = False
            return self.write(request)
        self.confirming = True
        return f"{self.summary(request, order)} Do you confirm? Please answer yes or no."

    def refuse(self, request: dict[str, Any], text: str) -> str:
        """Refuse the current request (and say so again whenever the customer insists)."""
        request["refused"] = text
        return text

    def forbidden(self, kind: str, order: Mapping[str, Any]) -> str | None:
        """Why the policy forbids ``kind`` on ``order``, in words for the customer, or None."""
        key, status = order["order_id"], order["status"]
        if kind == "cancel" and status != "pending":
            return f"I'm sorry, I cannot cancel order {key}: its status is {status}, and only pending orders can be cancelled."
        if kind == "ship_address" and status != "pending":
            return f"I'm sorry, I cannot change where order {key} goes: its status is {status}, and only pending orders can be redirected."
        if kind == "return":
            if status != "delivered":
                return f"I'm sorry, I cannot take back order {key}: its status is {status}, and only delivered orders can be returned."
            if days_since(order["delivered"]) > RETURN_DAYS:
                return (
                    f"I'm sorry, I cannot take back order {key}: it was delivered on {order['delivered']}, more than "
                    f"{RETURN_DAYS} days ago, and the policy allows returns within {RETURN_DAYS} days of delivery only."
                )
        return None

    def missing(self, request: Mapping[str, Any]) -> str | None:
        """The question for the facts the request still lacks, or None."""
        kind = request["kind"]
        if kind == "cancel" and "reason" not in request:
            return "What is the reason for the cancellation: 'no longer needed' or 'ordered by mistake'?"
        if kind == "return" and not request.get("item_ids"):
            return "Which items of the order would you like to return, and should the refund go to the original payment method or to a gift card?"
        if kind == "return" and "refund_to" not in request:
            return "Should the refund go to the original payment method or to a gift card?"
        if kind in ("ship_address", "profile_address") and "address" not in request:
            return "What is the new address (street, city and zip code)?"
        return None

    def summary(self, request: Mapping[str, Any], order: Mapping[str, Any] | None) -> str:
        """The change, read back to the customer before its yes."""
        kind = request["kind"]
        if kind == "ship_address":
            return f"I will have order {request['order_id']} shipped to {address_text(request['address'])}."
        if kind == "profile_address":
            return f"I will change your default address to {address_text(request['address'])}."
        assert order is not None, "a cancel or a return is read back only once its order is read"
        if kind == "cancel":
            return f"I will cancel order {request['order_id']} (reason: {request['reason']}); its total is refunded to {order['payment_method']}."
        products = [line["product"] for line in order["items"] if line["item_id"] in request["item_ids"]]
        return f"I will request the return of the {', '.join(products)} of order {request['order_id']}, refunded to {request['refund_to']}."

    def write(self, request: Mapping[str, Any]) -> str:
        """The write tool call that carries the request out."""
        kind = request["kind"]
        if kind == "cancel":
            return call("cancel_order", order_id=request["order_id"], reason=request["reason"])
        if kind == "return":
            return call("return_items", order_id=request["order_id"], item_ids=request["item_ids"], payment_method_id=request["refund_to"])
        if kind == "ship_address":
            return call("change_shipping_address", order_id=request["order_id"], **request["address"])
        return call("change_profile_address", user_id=self.user_id, **request["address"])


class Compliant(Expert):
    """The weak honest agent: ``expert`` without the policy checks (see the module docstring)."""

    name = "compliant"
    checks = False


# ----------------------------------------------------------------------------- random

_WORDS = ("please", "order", "yes", "help", "email", "cancel", "return", "address", "confirm", "thanks", "refund", "item", "no")
_IDS = re.compile(r"#W\d{7}|\b[a-z]+_[a-z]+_\d{4}\b|\b(?:credit_card|paypal|gift_card)_\d{7}\b|\b\d{10}\b|[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


class RandomServiceDesk(RandomAgent):
    """Random tool calls and messages (see the module docstring)."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random call or message for the agent seat; a random message or ``end_chat`` for the customer seat."""
        rng = self.rng
        if observation["view"].get("role") == "customer":
            if rng.random() < 0.1:
                return call("end_chat", message="bye")
            return self.words()
        seen = sorted(set(_IDS.findall(" ".join(m["text"] for m in observation.get("messages", [])))))
        if observation.get("tool_calls_left", 0) > 0 and rng.random() < 0.6:
            tools = observation["tools"]
            spec = tools[int(rng.integers(len(tools)))]["function"]
            arguments = {}
            for key, schema in spec["parameters"]["properties"].items():
                if "enum" in schema:
                    arguments[key] = schema["enum"][int(rng.integers(len(schema["enum"])))]
                elif schema["type"] == "array":
                    arguments[key] = [self.value(seen)]
                else:
                    arguments[key] = self.value(seen)
            return call(spec["name"], **arguments)
        return self.words()

    def value(self, seen: list[str]) -> str:
        """An id seen in the observation, or a made-up word."""
        if seen and self.rng.random() < 0.8:
            return seen[int(self.rng.integers(len(seen)))]
        return _WORDS[int(self.rng.integers(len(_WORDS)))]

    def words(self) -> str:
        """A few random words."""
        return " ".join(_WORDS[int(i)] for i in self.rng.integers(len(_WORDS), size=int(self.rng.integers(1, 6))))


register_scripted("customer", ENV_ID, Customer)
register_scripted("expert", ENV_ID, Expert)
register_scripted("compliant", ENV_ID, Compliant)
register_scripted("random", ENV_ID, RandomServiceDesk)
