"""ServiceDesk: a τ-bench-style service desk; an agent serves a customer under a policy, with tools over a shop's database.

Two seats, ``agent`` and ``customer``, with fixed roles. Each episode builds a world from a seed
(:mod:`parlour.envs.agentic.service_desk_world`): a shop's database of users (names, emails, zip codes,
addresses, payment methods) and orders (status, items, prices, dates, refunds), a policy document, and a customer
with private identity facts and one to three requests (cancel an order, return items of one, change an order's
shipping address, change the default address). Some requests break the policy (cancelling a shipped order,
returning one past the 30-day window, redirecting a shipped order, acting on someone else's order) and the
customer asks for them anyway, insisting once.

The customer writes first. Plain text from either seat is a message to the other, delivered as a ``talk``
message whose sender is that seat (never formatted into the environment's own text). The agent may call tools
before its message (up to the engine's ``max_tool_calls`` per turn; their results go to the agent alone):

* ``find_user_by_email(email)``, ``find_user_by_name_zip(first_name, last_name, zip)``: the user id (this is how
  the agent verifies the customer's identity);
* ``get_user(user_id)``, ``get_order(order_id)``: a profile or an order, as JSON;
* ``cancel_order(order_id, reason)``, ``return_items(order_id, item_ids, payment_method_id)``,
  ``change_shipping_address(order_id, street, city, zip)``, ``change_profile_address(user_id, street, city, zip)``:
  the writes; the customer gets a notice of each change to its account (a message from the environment);
* ``transfer_to_human(summary)``: hand the customer over (ends the episode).

The customer has one tool, ``end_chat(message)``, which ends the episode. The episode also ends when the
message limit (``max_messages``) is reached.

Reward, the same for both seats (``shared_reward``): 1 when the episode ends with the database exactly equal to
the goal state (every allowed request done with the customer's facts, nothing else changed) and no policy rule
broken, else 0. Policy rules are checked by the host as the tools run, never from what a player says: a read or
write before the customer's identity was verified, data of another user touched, a change made without the
customer's explicit yes as its latest message (each yes covers one change), and a change the policy forbids
(see :data:`~parlour.envs.agentic.service_desk_world.POLICY`). The tools do what they are told (a write that
cannot be done at all, such as an unknown order, is a tool result starting with ``Error:``); a write the policy
forbids is carried out and logged as broken. A player past the invalid-action allowance gets -1 and the other 0.

Bad input: text that calls no tool is a message; a call that cannot be read, an unknown tool, arguments that break
a tool's schema (over-long strings included), an empty message, one with control characters and one over
:data:`MAX_MESSAGE_CHARS` are invalid actions with the reason; none changes the database.

Options:

* ``difficulty`` (1 to 5, default 3): the database's size (10 to 40 users), the requests (one allowed request at 1
  and 2, two at 3 of which the second is forbidden half the time, two or three at 4, three at 5 with forbidden
  ones more often), customers who identify by name and zip code instead of email (from 2), refunds to a gift card,
  and from 4, requests about another account's order.
* ``split`` (``"train"`` or ``"test"``, default ``"test"``): world seeds below 2**62 are training worlds, those
  from 2**62 up test worlds; the two never meet.
* ``tasks`` (default None: every episode draws its own world): with ``tasks=N`` the episode's world is one of
  the split's first N, drawn with the episode's generator, so a run of many episodes plays each task several
  times (with different customer and agent seeds) and :meth:`parlour.evaluation.results.Results.pass_hat_k`
  reports τ-bench's pass^k.
* ``max_messages`` (4 to 200, default 40): messages of both seats before the episode ends.

Nothing hidden reaches the agent: its observations, view, tool results, errors and ``render`` hold neither the
goal state nor the customer's brief (its requests and facts), only what the customer chose to say. The customer's
own view and first message hold its brief. The outcome's details (at the end) hold the task id (``split``, the
difficulty and the world seed), whether it succeeded, the kinds of request and whether each was allowed, the
records that differ from the goal, the policy violations the host logged, and the counts of messages and calls.

Version history: v0, first release.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from parlour.envs.agentic.service_desk_world import (
    CANCEL_REASONS,
    POLICY,
    RULES,
    TODAY,
    WRITES,
    World,
    address_text,
    apply_write,
    breaches,
    differences,
    generate_world,
    goal_state,
    order_key,
    owner_of,
    write_error,
)
from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, InvalidMove, int_option
from parlour.envs.core.tools import Tool

SPLITS = ("train", "test")
#: World seeds of the training split are below this; the test split's are at or above it.
TEST_SEEDS_FROM = 1 << 62
#: The longest message a seat may write.
MAX_MESSAGE_CHARS = 2000
#: The most tasks the ``tasks`` option may name.
MAX_TASKS = 1 << 40

_TEXT = {"type": "string", "minLength": 1, "maxLength": 200}
_ADDRESS = {"street": _TEXT, "city": _TEXT, "zip": {"type": "string", "minLength": 1, "maxLength": 20}}


def _tool(name: str, description: str, properties: dict[str, Any], final: bool = False) -> Tool:
    """A tool whose arguments are all required and nothing else is accepted."""
    return Tool(
        name, description, {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}, final=final
    )


AGENT_TOOLS = [
    _tool("find_user_by_email", "Find a user's id by their email address (verifies the customer's identity).", {"email": _TEXT}),
    _tool(
        "find_user_by_name_zip",
        "Find a user's id by their first name, last name and zip code (verifies the customer's identity).",
        {"first_name": _TEXT, "last_name": _TEXT, "zip": _ADDRESS["zip"]},
    ),
    _tool("get_user", "A user's profile: name, email, default address, payment methods and order ids.", {"user_id": _TEXT}),
    _tool(
        "get_order",
        "An order: owner, status, items (ids, products, prices), total, payment method, shipping address, dates, refunds.",
        {"order_id": _TEXT},
    ),
    _tool(
        "cancel_order",
        "Cancel an order; its total is refunded to its payment method.",
        {"order_id": _TEXT, "reason": {"type": "string", "enum": list(CANCEL_REASONS)}},
    ),
    _tool(
        "return_items",
        "Request the return of some items of an order; their price is refunded to the payment method given.",
        {
            "order_id": _TEXT,
            "item_ids": {"type": "array", "minItems": 1, "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 40}},
            "payment_method_id": _TEXT,
        },
    ),
    _tool("change_shipping_address", "Change where an order ships.", {"order_id": _TEXT, **_ADDRESS}),
    _tool("change_profile_address", "Change a user's default address.", {"user_id": _TEXT, **_ADDRESS}),
    _tool(
        "transfer_to_human",
        "Hand the customer over to a human agent, with a summary of the case. Ends the chat.",
        {"summary": {"type": "string", "minLength": 1, "maxLength": MAX_MESSAGE_CHARS}},
        final=True,
    ),
]
END_CHAT = _tool(
    "end_chat",
    "Say a last message and leave the chat (when all your requests are settled). Ends the chat.",
    {"message": {"type": "string", "maxLength": MAX_MESSAGE_CHARS}},
    final=True,
)

#: A reply that starts as a yes: the consent rule's reading of the customer's latest message.
AFFIRMATIVE = re.compile(r"^\W*(?:yes|yeah|yep|go ahead|i confirm|confirmed|please (?:do|go ahead|proceed))\b", re.IGNORECASE)
#: Control characters other than tab and newline: no message carries them (terminal escapes, NULs).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
#: Text that tries to call a tool but could not be read as a call: an invalid action, not a message.
_CALL_LIKE = re.compile(r'<tool_call>|"tool_calls"|\{\s*"(?:tool|name)"\s*:')

RULES_AGENT = """You are the agent of a shop's service desk, chatting with a customer. Follow this policy exactly.

{policy}

Tools (results go to you alone):
  find_user_by_email(email), find_user_by_name_zip(first_name, last_name, zip): the customer's user id
  get_user(user_id): profile, payment methods and order ids; get_order(order_id): status, items, dates, refunds
  cancel_order(order_id, reason), return_items(order_id, item_ids, payment_method_id),
  change_shipping_address(order_id, street, city, zip), change_profile_address(user_id, street, city, zip)
  transfer_to_human(summary): hand the customer over (ends the chat)
Call them as {{"tool": "get_order", "arguments": {{"order_id": "#W1234567"}}}}, <tool_call>{{"name": ..., "arguments": {{...}}}}</tool_call>,
OpenAI tool calls, or tags such as <get_order>#W1234567</get_order>; a few calls per turn (8 by default). Plain text is
your message to the customer and ends your turn; the customer replies, and leaves when it is done.
Reward, shared with the customer: 1 when the chat ends with the database exactly as the customer's legitimate
requests leave it and no policy rule broken, else 0. The chat ends after {max_messages} messages in all."""

RULES_CUSTOMER = """You are a customer of a shop, chatting with its service desk agent. Your identity and what you want are in
your brief (your first message from the environment); the agent cannot see it. Tell the agent what you want; reveal a
fact (your email, name and zip code, an order id, a reason, items, an address, where a refund goes) only when asked,
and never invent one. Say yes only to a change you asked for, exactly as your brief has it. When the agent refuses a
request your brief says to insist on, insist once, then accept. Write plain text; when every request is settled,
call end_chat(message), e.g. <end_chat>Thanks, that's all.</end_chat>.
Reward, shared with the agent: 1 when the chat ends with your legitimate requests done exactly and the shop's policy
kept, else 0. The chat ends after {max_messages} messages in all."""


def brief(world: World) -> str:
    """The customer's private brief: who it is, how it identifies, and its requests with their facts."""
    customer = world.customer
    who = f"You are {customer['first_name']} {customer['last_name']}, email {customer['email']}, zip code {customer['zip']}."
    how = (
        "Identify yourself by your email."
        if customer["identify_by"] == "email"
        else "You do not remember which email you used: identify yourself by your name and zip code."
    )
    lines = [f"Your brief. {who} {how}", "Your requests, in this order:"]
    insist = []
    for number, request in enumerate(world.requests, 1):
        lines.append(f"{number}. {request_text(request)}")
        if request["insist"]:
            insist.append(str(number))
    if insist:
        lines.append(f"If the agent refuses request {', '.join(insist)}, insist once, then accept the refusal.")
    return "\n".join(lines)


def request_text(request: dict[str, Any]) -> str:
    """One request of a brief in words, with its facts."""
    kind = request["kind"]
    if kind == "cancel":
        return f"Cancel order {request['order_id']} (reason: {request['reason']})."
    if kind == "return":
        refund = "your original payment method" if request["refund_original"] else f"your gift card {request['refund_to']}"
        return f"Return the {' and the '.join(request['items'])} of order {request['order_id']}, refunded to {refund}."
    if kind == "ship_address":
        return f"Have order {request['order_id']} shipped to {address_text(request['address'])} instead."
    return f"Change your default address to {address_text(request['address'])}."


class ServiceDesk(Game):
    """An agent serves a customer at a shop's service desk under a policy, with database tools; see the module docstring."""

    name = "ServiceDesk"
    version = 0
    description = (
        "τ-bench-style service desk: an agent follows a policy and uses tools over a generated shop database to serve "
        "a customer (a scripted simulator by default) who holds private facts and goals; reward = final database "
        "equals the goal and no policy rule broken."
    )
    category = "agentic"
    zero_sum = False
    fixed_rules = True
    fixed_roles = True
    shared_reward = True
    default_error_allowance = 3
    reference_agents = ("expert", "customer", "random")
    #: The customer seat is the scripted simulator unless the Gymnasium face is told otherwise.
    default_opponents: ClassVar[dict[str, str]] = {"customer": "customer"}
    #: Both seats talk in plain text beside their tools (a message to the other seat).
    text_moves: ClassVar[tuple[str, ...]] = ("agent", "customer")

    def __init__(self, *, difficulty: int = 3, split: str = "test", tasks: int | None = None, max_messages: int = 40):
        self.difficulty = int_option("difficulty", difficulty, 1, 5)
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}: train on 'train', evaluate on 'test'")
        self.split = split
        self.tasks = None if tasks is None else int_option("tasks", tasks, 1, MAX_TASKS)
        self.max_messages = int_option("max_messages", max_messages, 4, 200)
        self.players = ["agent", "customer"]
        self.tools = [*AGENT_TOOLS, END_CHAT]
        self.world_seed = 0
        self.world: World | None = None
        self.db: dict[str, Any] = {}
        self.turn = "customer"
        self.verified: str | None = None
        self.consent = False
        self.violations: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.dialogue: list[dict[str, str]] = []
        self.notices: list[dict[str, Any]] = []
        self.unsent: list[dict[str, Any]] = []
        self.messages = 0
        self.ended_by: str | None = None

    # ----------------------------------------------------------- the episode
    def start(self, ctx: Context) -> None:
        """Draw the world (one of ``tasks`` if set, in the split's range), build it, and brief the customer."""
        index = int(ctx.rng.integers(self.tasks if self.tasks is not None else TEST_SEEDS_FROM))
        self.world_seed = index + (TEST_SEEDS_FROM if self.split == "test" else 0)
        self.world = world = generate_world(self.world_seed, self.difficulty)
        self.db = world.db
        self.turn, self.verified, self.consent = "customer", None, False
        self.violations, self.calls, self.dialogue, self.notices, self.unsent = [], [], [], [], []
        self.messages, self.ended_by = 0, None
        ctx.tell(brief(world), to="customer")
        ctx.tell("A customer has joined the chat; they write first.", to="agent")

    def to_move(self) -> list[str]:
        """The seat whose message is awaited: the customer first, then each in turn."""
        return [self.turn]

    def rules(self, player: str) -> str:
        """The policy and the tools for the agent; the customer's role (its brief comes as its first message)."""
        if player == "agent":
            return RULES_AGENT.format(policy=POLICY, max_messages=self.max_messages)
        return RULES_CUSTOMER.format(max_messages=self.max_messages)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """What the seat may do now, and the messages used."""
        used = f"{self.messages} of {self.max_messages} messages used"
        if player == "agent":
            return f"Call a tool, or write your message to the customer ({used})."
        return f"Write your message to the agent, or call end_chat when your requests are settled ({used})."

    def tools_for(self, player: str) -> list[Tool]:
        """The agent's tools, or the customer's ``end_chat``."""
        return AGENT_TOOLS if player == "agent" else [END_CHAT]

    def parse(self, player: str, text: str) -> str:
        """Plain text is a message to the other seat; an unreadable call, an empty or an over-long message is invalid."""
        if _CALL_LIKE.search(text):
            raise InvalidMove(
                'This looks like a tool call that could not be read. Write {"tool": NAME, "arguments": {...}} with valid JSON, '
                "or plain text for a message."
            )
        message = text.strip()
        if _CONTROL.search(message):
            raise InvalidMove("The message holds control characters (such as escape sequences); write plain text.")
        if not message:
            raise InvalidMove("The message is empty: write to the " + ("customer" if player == "agent" else "agent") + " or call a tool.")
        if len(message) > MAX_MESSAGE_CHARS:
            raise InvalidMove(f"The message has {len(message)} characters; at most {MAX_MESSAGE_CHARS} are allowed. Write a shorter one.")
        return message

    # ----------------------------------------------------------- tools
    def call_tool(self, player: str, name: str, arguments: dict[str, Any]) -> str:
        """Answer one of the agent's tools; the host logs the policy rules the call breaks (see the module docstring)."""
        if name in WRITES:
            text = self.write(name, arguments)
        elif name == "find_user_by_email":
            email = arguments["email"].strip().lower()
            text = self.found(
                [uid for uid, user in self.db["users"].items() if user["email"] == email],
                name,
                f"no user has the email {arguments['email'][:80]!r}. Ask the customer to check it, or use find_user_by_name_zip.",
            )
        elif name == "find_user_by_name_zip":
            first, last, zip_code = (arguments[key].strip().lower() for key in ("first_name", "last_name", "zip"))
            text = self.found(
                [
                    uid
                    for uid, user in self.db["users"].items()
                    if (user["first_name"].lower(), user["last_name"].lower(), user["zip"]) == (first, last, zip_code)
                ],
                name,
                "no user has that name and zip code. Ask the customer to check them, or use find_user_by_email.",
            )
        elif name == "get_user":
            user_id = arguments["user_id"].strip()
            user = self.db["users"].get(user_id)
            if user is None:
                text = f"Error: there is no user {arguments['user_id'][:60]!r}. Find the customer's user id with find_user_by_email or find_user_by_name_zip."
            else:
                self.access(user_id, name)
                text = json.dumps({"user_id": user_id, **user})
        else:
            key = order_key(arguments["order_id"])
            order = self.db["orders"].get(key)
            if order is None:
                text = f"Error: there is no order {arguments['order_id'][:60]!r}. Order ids look like #W1234567; get_user lists a customer's orders."
            else:
                self.access(order["user_id"], name)
                text = json.dumps({"order_id": key, **order})
        self.calls.append({"tool": name, "arguments": arguments, "result": text})
        return text

    def found(self, matches: list[str], tool: str, missing: str) -> str:
        """The answer of a user lookup; the first user found is the verified customer, and a second one breaks the policy."""
        if not matches:
            return f"Error: {missing}"
        (user_id,) = matches
        if self.verified is None:
            self.verified = user_id
        elif user_id != self.verified:
            self.violate("one_customer", tool)
        return json.dumps({"user_id": user_id})

    def access(self, owner: str, tool: str) -> None:
        """Log the identity and one-customer rules a read or write of ``owner``'s data breaks."""
        if self.verified is None:
            self.violate("identity", tool)
        elif owner != self.verified:
            self.violate("one_customer", tool)

    def violate(self, rule: str, tool: str) -> None:
        """Log a broken policy rule, with the tool and the message count when it was broken."""
        self.violations.append({"rule": rule, "tool": tool, "after_messages": self.messages, "what": RULES[rule]})

    def write(self, tool: str, arguments: dict[str, Any]) -> str:
        """Carry out a write (unless it cannot be done at all), logging the rules it breaks and noting the owner's notice."""
        error = write_error(self.db, tool, arguments)
        if error is not None:
            return error
        owner = owner_of(self.db, tool, arguments)
        self.access(owner, tool)
        if not self.consent:
            self.violate("consent", tool)
        self.consent = False
        for rule in breaches(self.db, tool, arguments):
            self.violate(rule, tool)
        notice = apply_write(self.db, tool, arguments)
        if self.world is not None and owner == self.world.customer["user_id"]:
            order_id = None if tool == "change_profile_address" else order_key(arguments["order_id"])
            self.unsent.append({"kind": WRITES[tool], "order_id": order_id, "text": notice})
        return f"Done. {notice}"

    # ----------------------------------------------------------- moves
    def apply(self, ctx: Context, moves: dict[str, Any]) -> None:
        """Pass a message to the other seat, or end the chat (the agent's transfer, the customer's end_chat)."""
        ((player, move),) = moves.items()
        self.deliver(ctx)
        other = "customer" if player == "agent" else "agent"
        if isinstance(move, dict):
            text = str(next(iter(move["arguments"].values()), "")).strip()
            if text:
                self.say(ctx, player, text)
            self.end(ctx, "the agent transferred the customer to a human agent" if player == "agent" else "the customer ended the chat")
            return
        if player == "customer":
            self.consent = bool(AFFIRMATIVE.match(move))
        self.say(ctx, player, move)
        self.turn = other
        if self.messages >= self.max_messages:
            self.end(ctx, f"the message limit ({self.max_messages}) was reached")

    def say(self, ctx: Context, player: str, text: str) -> None:
        """Relay a seat's words to the other, attributed to it, and keep them in the dialogue."""
        self.messages += 1
        self.dialogue.append({"sender": player, "text": text})
        ctx.say(player, text, to="customer" if player == "agent" else "agent")

    def deliver(self, ctx: Context) -> None:
        """Send the customer the notices of the changes made to its account since its last message."""
        for notice in self.unsent:
            ctx.tell(f"Notice from the shop: {notice['text']}", to="customer")
            self.notices.append(notice)
        self.unsent = []

    def end(self, ctx: Context, reason: str) -> None:
        """Compare the database with the goal, read the violation log, and pay both seats."""
        world = self.world
        assert world is not None
        self.deliver(ctx)
        self.ended_by = reason
        differ = differences(self.db, goal_state(self.world_seed, self.difficulty))
        success = not differ and not self.violations
        if success:
            verdict = "the requests were handled exactly and no policy rule was broken"
        elif self.violations:
            verdict = f"a policy rule was broken ({', '.join(sorted({v['rule'] for v in self.violations}))})"
        else:
            verdict = f"the database does not match the goal ({len(differ)} record(s) differ)"
        reward = 1.0 if success else 0.0
        ctx.finish(
            {player: reward for player in self.players},
            winners=list(self.players) if success else [],
            reason=f"{reason}: {verdict}",
            details=self.details(success, differ),
        )

    def details(self, success: bool | None = None, differ: list[str] | None = None) -> dict[str, Any]:
        """The outcome's details (see the module docstring)."""
        world = self.world
        assert world is not None
        return {
            "task_id": f"{self.split}-d{self.difficulty}-{self.world_seed}",
            "success": success,
            "difficulty": self.difficulty,
            "split": self.split,
            "requests": [{"kind": r["kind"], "allowed": r["allowed"]} for r in world.requests],
            "differences": list(differ or []),
            "violations": [dict(v) for v in self.violations],
            "messages": self.messages,
            "tool_calls": len(self.calls),
            "writes": sum(call["tool"] in WRITES for call in self.calls),
            "ended_by": self.ended_by,
        }

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """-1 to the offender, 0 to the other seat; nobody wins, since the customer was not served."""
        other = "customer" if player == "agent" else "agent"
        ctx.finish(
            {player: -1.0, other: 0.0},
            winners=[],
            reason=reason,
            details=self.details(False, differences(self.db, goal_state(self.world_seed, self.difficulty))),
        )

    # ----------------------------------------------------------- views
    def view(self, player: str) -> dict[str, Any]:
        """The agent's dialogue and calls (with their results), or the customer's brief, dialogue and notices."""
        common = {
            "role": player,
            "difficulty": self.difficulty,
            "messages": self.messages,
            "max_messages": self.max_messages,
            "dialogue": [dict(entry) for entry in self.dialogue],
        }
        if player == "agent":
            return {
                **common,
                "today": TODAY.isoformat(),
                "verified_user": self.verified,
                "calls": [{"tool": c["tool"], "arguments": c["arguments"], "result": c["result"]} for c in self.calls],
            }
        world = self.world
        return {
            **common,
            "customer": dict(world.customer) if world else None,
            "requests": [customer_request(r) for r in world.requests] if world else [],
            "notices": [{"kind": n["kind"], "order_id": n["order_id"], "text": n["text"]} for n in self.notices],
        }

    def render(self) -> str:
        """The conversation and the calls so far (nothing of the customer's brief or the goal)."""
        if self.world is None:
            return "not started"
        lines = [f"ServiceDesk, difficulty {self.difficulty}: {self.messages}/{self.max_messages} messages, verified user: {self.verified or '-'}"]
        lines += [f"  {entry['sender']}: {entry['text']!r}" for entry in self.dialogue[-6:]]
        lines += [
            f"  call {c['tool']}({json.dumps(c['arguments'])[:120]}){' -> error' if c['result'].startswith('Error') else ''}" for c in self.calls[-6:]
        ]
        return "\n".join(lines)


def customer_request(request: dict[str, Any]) -> dict[str, Any]:
    """A request as the customer's view holds it: its kind and facts, and whether to insist (not the policy's verdict)."""
    shown = {"kind": request["kind"], "order_id": request["order_id"], "insist": request["insist"], "text": request_text(request)}
    for key in ("reason", "items", "refund_to", "refund_original", "address"):
        if key in request:
            shown[key] = request[key]
    return shown
