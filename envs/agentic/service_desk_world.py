"""The world of the ServiceDesk game: a generated shop database, its policy document, a customer's task and its goal state.

Everything here is a function of a world seed and a difficulty (:func:`generate_world`), built with a local
``random.Random`` (never the global one), so every world comes back the same and nothing is shared between
episodes: each call builds a fresh database. This module defines no game; the game, its tools and its seats are in
:mod:`parlour.envs.agentic.service_desk`.

The database (plain dicts, so the game copies and pickles cheaply):

* ``users``: ``user_id -> {"first_name", "last_name", "email", "zip", "address", "payment_methods", "orders"}``;
  a payment method is ``{"kind": "credit_card" | "paypal" | "gift_card", "balance": cents}`` (a balance only for
  gift cards) keyed by its id (``gift_card_4821907``); ``orders`` lists the user's order ids.
* ``orders``: ``order_id -> {"user_id", "status", "items", "total", "payment_method", "address", "placed",
  "delivered", "refunds", "cancel_reason"}``; an item is ``{"item_id", "product", "price", "returned"}``; money is in
  cents; dates are ISO text; ``status`` is ``pending``, ``processed`` (shipped, not yet delivered), ``delivered``,
  ``cancelled`` or ``return requested``.

The task is the customer's: who they are (their identity facts) and one to three *requests*, each a change to the
database the customer wants. A request is *allowed* (the policy permits it, and the goal state holds its effect)
or *forbidden* (the customer asks anyway, and the goal state leaves the database as it was for it): cancelling an
order that has shipped, returning one past the return window, redirecting a shipped order, or acting on an order of
someone else's account. Every task has at least one allowed request, so doing nothing never succeeds. The goal
state (:func:`goal_state`) is the database after the allowed requests' effects, computed by the same functions the
game's write tools call (:func:`apply_write`), so the host compares like with like.
"""

from __future__ import annotations

import datetime
import random
from dataclasses import dataclass
from typing import Any

#: The desk's calendar: every world's "today" (so the policy document, and with it the rules prompt, is fixed).
TODAY = datetime.date(2025, 6, 1)
#: Days after delivery within which an order may be returned.
RETURN_DAYS = 30
#: The reasons the policy accepts for a cancellation.
CANCEL_REASONS = ("no longer needed", "ordered by mistake")
#: The kinds of request a customer makes.
KINDS = ("cancel", "return", "ship_address", "profile_address")
#: The policy rules the host checks, by code, with the words its log uses.
RULES = {
    "identity": "read or changed account data before verifying the customer's identity",
    "one_customer": "read or changed data of a user other than the verified customer",
    "consent": "made a change without the customer's explicit yes to it as their latest message",
    "cancel_pending": "cancelled an order that is not pending",
    "return_delivered": "returned items of an order that is not delivered",
    "return_window": f"returned items more than {RETURN_DAYS} days after delivery",
    "refund_method": "sent a refund to a payment method other than the original one or a gift card of the customer",
    "ship_pending": "changed the shipping address of an order that is not pending",
}

POLICY = f"""Service desk policy (today is {TODAY.isoformat()}).
1. Identity: before reading or changing anything, verify the customer: find their user id with
   find_user_by_email(email), or with find_user_by_name_zip(first_name, last_name, zip), from what they tell you.
   Do this even when they give you a user id.
2. One customer: help only the verified customer. Read and change only their profile and the orders listed in it;
   refuse anything about another person's account or order.
3. Consent: before any change (cancel, return, address), tell the customer exactly what you will do and ask for a
   yes. Make the change only if their latest message is that yes; each yes covers one change.
4. Cancel: only a pending order may be cancelled, for a reason of 'no longer needed' or 'ordered by mistake'. The
   total is refunded to the order's payment method.
5. Return: only a delivered order, within {RETURN_DAYS} days of its delivery date, may be returned, item by item.
   The refund goes to the order's original payment method or to a gift card of the customer.
6. Shipping address: only a pending order's shipping address may be changed. A customer's default (profile)
   address may be changed at any time.
7. Names, emails, prices and the payment of an order cannot be changed. Refuse what this policy forbids, and say
   why; do not make it up with some other change.
8. Transfer to a human agent (transfer_to_human) only when the customer asks for something none of your tools
   does."""

FIRST_NAMES = (
    "Ada",
    "Bram",
    "Cleo",
    "Dario",
    "Elin",
    "Farid",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Kaia",
    "Lior",
    "Mila",
    "Nils",
    "Oona",
    "Pavel",
    "Quinn",
    "Rosa",
    "Sami",
    "Tove",
    "Umar",
    "Vera",
    "Wim",
    "Xenia",
    "Yusuf",
    "Zora",
)
LAST_NAMES = (
    "Holm",
    "Brask",
    "Castell",
    "Dunmore",
    "Evander",
    "Falk",
    "Garrow",
    "Hale",
    "Ibsen",
    "Jarl",
    "Kestrel",
    "Lund",
    "Marlow",
    "Nyberg",
    "Orme",
    "Pryce",
    "Quill",
    "Rask",
    "Sorell",
    "Tamm",
    "Ulver",
    "Vane",
    "Wren",
)
STREETS = ("Alder", "Birch", "Cedar", "Elm", "Fennel", "Hazel", "Juniper", "Larch", "Maple", "Oak", "Rowan", "Willow")
STREET_KINDS = ("Street", "Road", "Lane", "Avenue")
CITIES = ("Ashford", "Brindle", "Corvale", "Dunmere", "Eastwick", "Fairholm", "Glenrock", "Harwood", "Ivybridge")
PRODUCTS = (
    "backpack",
    "kettle",
    "desk lamp",
    "rain jacket",
    "water bottle",
    "headphones",
    "yoga mat",
    "teapot",
    "wall clock",
    "blender",
    "notebook",
    "umbrella",
    "scarf",
    "toaster",
    "phone case",
    "bike light",
    "cutting board",
    "thermos",
    "sunglasses",
    "wool socks",
    "alarm clock",
    "picture frame",
    "pillow",
    "mug",
)
COLOURS = ("black", "blue", "green", "grey", "red", "white", "yellow")


@dataclass(frozen=True)
class Level:
    """What a difficulty sets: the database's size and the task's shape."""

    users: int
    #: Orders per user, at least and at most.
    orders: tuple[int, int]
    #: Requests the customer makes, at least and at most.
    requests: tuple[int, int]
    #: The chance that a request after the first allowed one is forbidden.
    forbidden: float
    #: The chance that the customer identifies by name and zip code rather than by email.
    name_zip: float
    #: Whether a forbidden request may concern an order of another user's account.
    others: bool
    #: Items an order holds, at most.
    items: int
    #: The chance that a return's refund goes to a gift card rather than the original payment method.
    gift_refund: float


LEVELS = {
    1: Level(users=10, orders=(1, 3), requests=(1, 1), forbidden=0.0, name_zip=0.0, others=False, items=2, gift_refund=0.0),
    2: Level(users=20, orders=(2, 4), requests=(1, 2), forbidden=0.0, name_zip=0.5, others=False, items=3, gift_refund=0.3),
    3: Level(users=25, orders=(2, 5), requests=(2, 2), forbidden=0.5, name_zip=0.5, others=False, items=3, gift_refund=0.4),
    4: Level(users=30, orders=(2, 6), requests=(2, 3), forbidden=0.5, name_zip=0.5, others=True, items=4, gift_refund=0.5),
    5: Level(users=40, orders=(2, 6), requests=(3, 3), forbidden=0.7, name_zip=0.5, others=True, items=4, gift_refund=0.5),
}


@dataclass
class World:
    """One generated world: the database, and the customer's identity facts and requests (:func:`goal_state` gives the goal)."""

    seed: int
    difficulty: int
    db: dict[str, Any]
    #: ``{"user_id", "first_name", "last_name", "email", "zip", "identify_by": "email" | "name_zip"}``.
    customer: dict[str, Any]
    #: The customer's requests in the order they make them (see :func:`generate_world`).
    requests: list[dict[str, Any]]


def money(cents: int) -> str:
    """Cents as ``$12.34``."""
    return f"${cents // 100}.{cents % 100:02d}"


def day(offset: int) -> str:
    """The ISO date ``offset`` days from :data:`TODAY` (negative: in the past)."""
    return (TODAY + datetime.timedelta(days=offset)).isoformat()


def days_since(iso: str) -> int:
    """Days from the ISO date ``iso`` to :data:`TODAY`."""
    return (TODAY - datetime.date.fromisoformat(iso)).days


def address_text(address: dict[str, str]) -> str:
    """An address as ``12 Elm Street, Corvale, 40213``."""
    return f"{address['street']}, {address['city']}, {address['zip']}"


class _Builder:
    """Draws one world's database with its own generator, keeping ids unique."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()
        self.users: dict[str, dict[str, Any]] = {}
        self.orders: dict[str, dict[str, Any]] = {}

    def unique(self, make: Any) -> str:
        """A fresh id from ``make()`` (drawn again on a collision)."""
        while True:
            value = make()
            if value not in self.used:
                self.used.add(value)
                return value

    def digits(self, n: int) -> str:
        """``n`` random decimal digits."""
        return f"{self.rng.randrange(10**n):0{n}d}"

    def address(self) -> dict[str, str]:
        rng = self.rng
        return {
            "street": f"{rng.randrange(1, 200)} {rng.choice(STREETS)} {rng.choice(STREET_KINDS)}",
            "city": rng.choice(CITIES),
            "zip": self.digits(5),
        }

    def user(self) -> str:
        rng = self.rng
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        # Name and zip together identify a user: draw again when the pair is taken.
        while True:
            address = self.address()
            if not any(u["first_name"] == first and u["last_name"] == last and u["zip"] == address["zip"] for u in self.users.values()):
                break
        user_id = self.unique(lambda: f"{first.lower()}_{last.lower()}_{self.digits(4)}")
        methods: dict[str, dict[str, Any]] = {}
        for kind in ["credit_card", *rng.sample(["paypal", "gift_card", "credit_card"], rng.randrange(1, 3))]:
            method_id = self.unique(lambda kind=kind: f"{kind}_{self.digits(7)}")
            methods[method_id] = {"kind": kind, "balance": rng.randrange(0, 200) * 100} if kind == "gift_card" else {"kind": kind}
        self.users[user_id] = {
            "first_name": first,
            "last_name": last,
            "email": self.unique(lambda: f"{first}.{last}{rng.randrange(10, 100)}@example.com".lower()),
            "zip": address["zip"],
            "address": address,
            "payment_methods": methods,
            "orders": [],
        }
        return user_id

    def order(self, user_id: str, status: str, age: int | None = None, items: int = 1) -> str:
        """A new order of ``user_id`` with ``status``; ``age``: days since delivery (delivered orders) or since placing."""
        rng = self.rng
        user = self.users[user_id]
        order_id = self.unique(lambda: f"#W{self.digits(7)}")
        products = rng.sample(PRODUCTS, items)
        lines = [
            {
                "item_id": self.unique(lambda: self.digits(10)),
                "product": f"{rng.choice(COLOURS)} {product}",
                "price": rng.randrange(5, 300) * 100 + rng.choice((0, 49, 99)),
                "returned": False,
            }
            for product in products
        ]
        if status == "delivered":
            delivered = age if age is not None else rng.randrange(1, 120)
            placed, delivered_on = day(-delivered - rng.randrange(2, 8)), day(-delivered)
        else:
            placed, delivered_on = day(-(age if age is not None else rng.randrange(0, 6))), None
        self.orders[order_id] = {
            "user_id": user_id,
            "status": status,
            "items": lines,
            "total": sum(line["price"] for line in lines),
            "payment_method": rng.choice(sorted(user["payment_methods"])),
            "address": dict(user["address"]),
            "placed": placed,
            "delivered": delivered_on,
            "refunds": [],
            "cancel_reason": None,
        }
        user["orders"].append(order_id)
        return order_id

    def filler(self, user_id: str) -> str:
        """An order of a random status, delivered ones of any age."""
        status = self.rng.choice(("pending", "processed", "delivered", "delivered", "cancelled"))
        return self.order(user_id, status, items=self.rng.randrange(1, 4))


def _request(builder: _Builder, level: Level, user_id: str, other_id: str, kind: str, allowed: bool) -> dict[str, Any]:
    """Build the order a request is about (with the status its being allowed or forbidden needs) and the request."""
    rng = builder.rng
    items = rng.randrange(1, level.items + 1)
    owner = user_id
    why = None
    if not allowed and kind == "profile_address":
        kind = rng.choice(("cancel", "return", "ship_address"))
    if not allowed:
        choices = {"cancel": ["cancel_pending"], "return": ["return_window"], "ship_address": ["ship_pending"]}[kind]
        why = rng.choice(choices + (["one_customer"] if level.others else []))
        if why == "one_customer":
            owner = other_id
    request: dict[str, Any] = {"kind": kind, "allowed": allowed, "why": why, "order_id": None, "insist": not allowed}
    if kind == "profile_address":
        request["address"] = builder.address()
        return request
    if kind == "cancel":
        status = "pending" if why in (None, "one_customer") else rng.choice(("processed", "delivered"))
        request["order_id"] = builder.order(owner, status, items=items)
        request["reason"] = rng.choice(CANCEL_REASONS)
    elif kind == "return":
        age = rng.randrange(1, RETURN_DAYS + 1) if why in (None, "one_customer") else rng.randrange(RETURN_DAYS + 1, RETURN_DAYS + 90)
        request["order_id"] = order_id = builder.order(owner, "delivered", age=age, items=items)
        lines = builder.orders[order_id]["items"]
        chosen = rng.sample(lines, rng.randrange(1, len(lines) + 1))
        request["items"] = [line["product"] for line in lines if line in chosen]
        request["item_ids"] = [line["item_id"] for line in lines if line in chosen]
        order = builder.orders[order_id]
        gift_cards = sorted(
            m for m, spec in builder.users[owner]["payment_methods"].items() if spec["kind"] == "gift_card" and m != order["payment_method"]
        )
        request["refund_to"] = gift_cards[0] if gift_cards and rng.random() < level.gift_refund else order["payment_method"]
        request["refund_original"] = request["refund_to"] == order["payment_method"]
    else:
        status = "pending" if why in (None, "one_customer") else "processed"
        request["order_id"] = builder.order(owner, status, items=items)
        request["address"] = builder.address()
    return request


def generate_world(seed: int, difficulty: int) -> World:
    """The world of ``seed`` at ``difficulty`` (1 to 5): database, customer and requests, always the same."""
    level = LEVELS[difficulty]
    rng = random.Random(seed)
    builder = _Builder(rng)
    user_ids = [builder.user() for _ in range(level.users)]
    customer_id, other_id = user_ids[0], user_ids[1]
    count = rng.randrange(level.requests[0], level.requests[1] + 1)
    # At most one change of the default address: a second one would only overwrite the first.
    kinds = [rng.choice(KINDS if i == 0 else KINDS[:3]) for i in range(count)]
    # The first request is allowed (so doing nothing never succeeds); each later one is forbidden by chance.
    allowed = [True] + [rng.random() >= level.forbidden for _ in range(count - 1)]
    order = list(range(count))
    rng.shuffle(order)
    requests = [_request(builder, level, customer_id, other_id, kinds[i], allowed[i]) for i in order]
    for user_id in user_ids:
        for _ in range(rng.randrange(level.orders[0], level.orders[1] + 1)):
            builder.filler(user_id)
    # Orders are listed in a user's profile in id order, so the position of a request's order tells nothing.
    for user in builder.users.values():
        user["orders"].sort()
    # The users are keyed in id order too: the customer is not the first one generated in any visible way.
    db = {"users": dict(sorted(builder.users.items())), "orders": dict(sorted(builder.orders.items()))}
    user = db["users"][customer_id]
    customer = {
        "user_id": customer_id,
        "first_name": user["first_name"],
        "last_name": user["last_name"],
        "email": user["email"],
        "zip": user["zip"],
        "identify_by": "name_zip" if rng.random() < level.name_zip else "email",
    }
    return World(seed, difficulty, db, customer, requests)


def goal_state(seed: int, difficulty: int) -> dict[str, Any]:
    """The goal state of the world of ``seed``: its database, built afresh, once its allowed requests are done.

    Built from the seed rather than copied at reset, so a reset builds one database and copies nothing (the host
    needs the goal only once, when the episode ends).
    """
    world = generate_world(seed, difficulty)
    for request in world.requests:
        if request["allowed"]:
            apply_write(world.db, *request_write(request, world.customer["user_id"]))
    return world.db


def request_write(request: dict[str, Any], user_id: str) -> tuple[str, dict[str, Any]]:
    """The write tool and arguments that carry out ``request`` (what a policy-following agent calls)."""
    kind = request["kind"]
    if kind == "cancel":
        return "cancel_order", {"order_id": request["order_id"], "reason": request["reason"]}
    if kind == "return":
        return "return_items", {"order_id": request["order_id"], "item_ids": list(request["item_ids"]), "payment_method_id": request["refund_to"]}
    if kind == "ship_address":
        return "change_shipping_address", {"order_id": request["order_id"], **request["address"]}
    return "change_profile_address", {"user_id": user_id, **request["address"]}


# ---------------------------------------------------------------------------------------------- writes

#: The write tools, and the request kind each carries out.
WRITES = {"cancel_order": "cancel", "return_items": "return", "change_shipping_address": "ship_address", "change_profile_address": "profile_address"}


def order_key(order_id: str) -> str:
    """An order id as the database keys it: ``W1234567``, ``#w1234567`` and `` #W1234567 `` are ``#W1234567``."""
    text = order_id.strip().upper()
    return text if text.startswith("#") else "#" + text


def write_error(db: dict[str, Any], tool: str, arguments: dict[str, Any]) -> str | None:
    """Why ``tool`` cannot be carried out at all on ``db`` (an unknown order, an item not in it, ...), or ``None``.

    These are facts of the data, answered as tool errors; what the policy forbids is not checked here (see
    :func:`breaches`): the tools do what they are told, and the host logs the rule a write broke.
    """
    if tool == "change_profile_address":
        if arguments["user_id"].strip() not in db["users"]:
            return f"Error: there is no user {arguments['user_id'][:60]!r}. Find the customer's user id with find_user_by_email or find_user_by_name_zip."
    else:
        order = db["orders"].get(order_key(arguments["order_id"]))
        if order is None:
            return f"Error: there is no order {arguments['order_id'][:60]!r}. Order ids look like #W1234567; get_user lists a customer's orders."
        if tool == "cancel_order" and order["status"] == "cancelled":
            return "Error: the order is already cancelled."
        if tool == "return_items":
            lines = {line["item_id"]: line for line in order["items"]}
            unknown = [item for item in arguments["item_ids"] if item.strip() not in lines]
            if unknown:
                return f"Error: the order holds no item {unknown[0][:40]!r}; get_order lists its item ids."
            if len({item.strip() for item in arguments["item_ids"]}) != len(arguments["item_ids"]):
                return "Error: an item id is listed twice."
            if any(lines[item.strip()]["returned"] for item in arguments["item_ids"]):
                return "Error: an item listed is already being returned."
            if arguments["payment_method_id"].strip() not in db["users"][order["user_id"]]["payment_methods"]:
                return "Error: the payment method is not one of the order owner's; get_user lists them."
    if tool in ("change_shipping_address", "change_profile_address") and not all(arguments[key].strip() for key in ("street", "city", "zip")):
        return "Error: street, city and zip must all be given."
    return None


def owner_of(db: dict[str, Any], tool: str, arguments: dict[str, Any]) -> str:
    """The user whose data a (possible) write touches."""
    if tool == "change_profile_address":
        return arguments["user_id"].strip()
    return db["orders"][order_key(arguments["order_id"])]["user_id"]


def breaches(db: dict[str, Any], tool: str, arguments: dict[str, Any]) -> list[str]:
    """The policy rules (codes of :data:`RULES`) about the order's state that ``tool`` would break on ``db``."""
    if tool == "change_profile_address":
        return []
    order = db["orders"][order_key(arguments["order_id"])]
    if tool == "cancel_order":
        return [] if order["status"] == "pending" else ["cancel_pending"]
    if tool == "change_shipping_address":
        return [] if order["status"] == "pending" else ["ship_pending"]
    broken = []
    if order["status"] != "delivered":
        broken.append("return_delivered")
    elif days_since(order["delivered"]) > RETURN_DAYS:
        broken.append("return_window")
    method = arguments["payment_method_id"].strip()
    methods = db["users"][order["user_id"]]["payment_methods"]
    if method != order["payment_method"] and methods[method]["kind"] != "gift_card":
        broken.append("refund_method")
    return broken


def apply_write(db: dict[str, Any], tool: str, arguments: dict[str, Any]) -> str:
    """Carry out ``tool`` (checked by :func:`write_error` first) on ``db``; returns the notice the customer gets."""
    if tool == "change_profile_address":
        user = db["users"][arguments["user_id"].strip()]
        user["address"] = {key: arguments[key].strip() for key in ("street", "city", "zip")}
        return f"Your default address is now {address_text(user['address'])}."
    key = order_key(arguments["order_id"])
    order = db["orders"][key]
    methods = db["users"][order["user_id"]]["payment_methods"]
    if tool == "change_shipping_address":
        order["address"] = {name: arguments[name].strip() for name in ("street", "city", "zip")}
        return f"Order {key} will now ship to {address_text(order['address'])}."
    if tool == "cancel_order":
        order["status"], order["cancel_reason"] = "cancelled", arguments["reason"]
        amount, method = order["total"], order["payment_method"]
        text = f"Order {key} was cancelled"
    else:
        ids = {item.strip() for item in arguments["item_ids"]}
        returned = [line for line in order["items"] if line["item_id"] in ids]
        for line in returned:
            line["returned"] = True
        order["status"] = "return requested"
        amount, method = sum(line["price"] for line in returned), arguments["payment_method_id"].strip()
        text = f"A return of {', '.join(line['product'] for line in returned)} from order {key} was requested"
    order["refunds"].append({"amount": amount, "payment_method": method})
    if methods[method]["kind"] == "gift_card":
        methods[method]["balance"] += amount
    return f"{text}; {money(amount)} will be refunded to {method}."


def differences(db: dict[str, Any], goal: dict[str, Any]) -> list[str]:
    """The records where ``db`` and ``goal`` differ (``user ada_holm_1234``, ``order #W1234567``), in id order."""
    found = []
    for table, label in (("users", "user"), ("orders", "order")):
        for key in sorted(set(db[table]) | set(goal[table])):
            if db[table].get(key) != goal[table].get(key):
                found.append(f"{label} {key}")
    return found
