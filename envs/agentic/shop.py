"""Shop: WebShop in text; find the product an instruction describes in a generated catalogue, choose its options, buy it.

One player, ``player_0``. Each episode draws an instruction from the seed
(:mod:`parlour.envs.agentic.shop_catalogue`): a product type, some of its
attributes, one value of each of its options and a price cap, as WebShop writes
them (``i am looking for shampoo that is sulfate free and color safe, with size:
12 fl oz, and scent: lavender, and price lower than 30.00 dollars``). The
catalogue (30 product types in 5 categories, each product with a brand,
attributes, options, a price, a rating, a description and reviews) is fixed
per difficulty; every product comes with look-alikes that share all but one of
its attributes, or all of them at another price or with fewer options.

Pages and actions (WebShop's):

============ ============================================================== ===========================================
page         shows                                                          actions
============ ============================================================== ===========================================
search       the search box                                                 ``search[keywords]``
results      ten results of up to fifty (BM25), each id, title and price   ``click[<id>]``, ``click[next >]``,
                                                                            ``click[< prev]``, ``click[back to search]``
item         title, category, price, rating, options with the choices made  ``click[<option value>]``,
                                                                            ``click[description]``, ``click[reviews]``,
                                                                            ``click[buy now]``, ``click[< prev]``,
                                                                            ``click[back to search]``
description  the description and the features (every attribute)            ``click[< prev]``, ``click[back to search]``
reviews      the reviews                                                    ``click[< prev]``, ``click[back to search]``
============ ============================================================== ===========================================

A title names only two of a product's attributes; the description lists them
all. ``< prev`` goes back one page (from an item to its results page). Clicks
are read case-insensitively, an item also by its title, and reasoning before
the action is tolerated (the last ``search[...]`` or ``click[...]`` in the
reply counts; a bare clickable name is a click). Anything else is an invalid
action with the reason and what can be clicked: unknown actions, clicks on
what the page does not show, a search off the search page, an empty search or
one over :data:`MAX_QUERY_CHARS` characters. A refusal never repeats the
player's words, and no page repeats the player's query: the words a player
searches with reach no frame of the environment's. Every action played costs
one step; invalid actions cost none but count against ``error_allowance``
(5 by default).

Reward, paid on ``buy now`` (WebShop's ``get_reward``, exact on the generated
catalogue; see :mod:`parlour.envs.agentic.shop_catalogue`)::

    r_type * (attributes matched + options chosen as asked + [price <= cap]) / (attributes asked + options asked + 1)

``r_type`` is 1 for the asked type (or one sharing its subcategory and nouns)
and 0 for an unrelated one. Success is a reward of 1. The step limit running
out pays 0; exceeding the invalid-action allowance pays -1.

Options:

* ``difficulty`` (1 to 5, default 2): catalogue size (150, 300, 600, 1200, 2000 products), look-alikes per product
  (0-1, 1-2, 2-3, 3-4, 4-6), attributes asked (1-2, 2, 2-3, 3, 3-4), instruction vagueness (the share of attributes
  named by a paraphrase, 0 to 1, and the chance the type is named by a synonym, 0 to 1) and the step limit (15, 20,
  25, 30, 40).
* ``split`` (``"train"`` or ``"test"``, default ``"test"``): which half of the goals the episode is drawn from. A
  goal is in the test half when the last hex digit of its fingerprint (blake2b of what the instruction asks, its
  wording aside) is odd; goals are drawn until one falls in the split, so every seed is valid under both splits and
  no request is ever in both: train on ``split="train"``; evaluation and the leaderboard use ``"test"``.

Why a fixed catalogue: WebShop's is fixed too, and its index is the cost (bm25s builds 2000 products in about a
second; a reset has 20 ms). The catalogue of each difficulty is generated once from a constant seed and
:data:`~parlour.envs.agentic.shop_catalogue.CATALOGUE_VERSION`, its index cached on disk and in memory; the
episode's seed draws the instruction.

Hidden state: the product an instruction was written from is never named in an observation, view, render, info or
error (unless the player finds it in a search), nor in the outcome; the reward does not depend on it. Outcome
details: ``difficulty``, ``split``, ``success``, ``reward`` and its terms (``r_type``, ``attributes_matched`` of
``attributes_asked``, ``options_matched`` of ``options_asked``, ``price_ok``), ``bought`` and ``chosen`` (the
options), ``steps``, ``max_steps``, ``searches``, and ``goal`` (the goal's fingerprint).

Legal moves are the page's clickables; on the search page, whose only action is free text, they are one search per
product type (``search[shampoo]``): the searches of the vector face. Any other query is read from text.

Vector observation (:data:`VECTOR_SIZE` floats in [0, 1]): the page, the results page and whether a next one
exists, the instruction as the public vocabulary reads it (type, attributes, option values, price cap / 1000), the
item in view (its type, the attributes seen of it: its title's, or all once its description was shown; the option
values it offers and those chosen; its price / 1000 and whether it is under the cap; whether its description was
shown) and the share of steps used. The ``Discrete`` action indexes the moves: the type searches, the buttons,
every option value and every product of the difficulty's catalogue, masked to the page's.

Version history: v0, first release.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from typing import Any

import numpy as np

from parlour.envs.agentic.shop_catalogue import (
    ATTRIBUTE_NAMES,
    LEVELS,
    OPTION_OF,
    OPTION_VALUES,
    PAGE_SIZE,
    TITLE_ATTRIBUTES,
    TYPES,
    Goal,
    Product,
    Request,
    catalogue,
    draw_goal,
    products,
    read_instruction,
    reward_terms,
)
from parlour.envs.core.context import Context
from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.game import Game, int_option
from parlour.envs.puzzles.solo import SoloPuzzle

SPLITS = ("train", "test")
PAGES = ("search", "results", "item", "description", "reviews")
BUTTONS = ("back to search", "next >", "< prev", "description", "reviews", "buy now")
#: The longest query read; a longer one is an invalid action.
MAX_QUERY_CHARS = 300
#: The search page's legal moves: one search per product type.
TYPE_SEARCHES = tuple(f"search[{ptype.name}]" for ptype in TYPES)
_ALIASES = {
    "next": "next >",
    "next page": "next >",
    "prev": "< prev",
    "previous": "< prev",
    "< previous": "< prev",
    "buy": "buy now",
    "back": "< prev",
}
_ACTION = re.compile(r"\b(search|click)\s*\[([^\[\]\r\n]*)\]", re.IGNORECASE)
_PRODUCT_ID = re.compile(r"b0[a-z0-9]{8}")

# Vector layout: offsets of each block (see the module docstring).
_TYPE_INDEX = {ptype.name: i for i, ptype in enumerate(TYPES)}
_ATTRIBUTE_INDEX = {name: i for i, name in enumerate(ATTRIBUTE_NAMES)}
_VALUE_INDEX = {value: i for i, value in enumerate(OPTION_VALUES)}
_BLOCKS = [
    ("page", len(PAGES)),
    ("results", 2),
    ("goal_type", len(TYPES)),
    ("goal_attributes", len(ATTRIBUTE_NAMES)),
    ("goal_values", len(OPTION_VALUES)),
    ("cap", 1),
    ("item_type", len(TYPES)),
    ("item_attributes", len(ATTRIBUTE_NAMES)),
    ("item_offered", len(OPTION_VALUES)),
    ("item_chosen", len(OPTION_VALUES)),
    ("item_price", 2),
    ("described", 1),
    ("steps", 1),
]
OFFSET: dict[str, int] = {}
VECTOR_SIZE = 0
for _name, _width in _BLOCKS:
    OFFSET[_name], VECTOR_SIZE = VECTOR_SIZE, VECTOR_SIZE + _width
#: Prices are scaled by this in the vector observation.
PRICE_SCALE = 1000.0

RULES = """You are {player}, shopping in an online store. Find and buy the product your instruction describes.
Pages: search -> results (ten a page, up to fifty) -> an item (price, options) -> its description or its reviews.
Actions:
  search[keywords]: on the search page, search the catalogue (keyword matching)
  click[name]: click anything shown in [brackets] on the page: an item's id, an option value, [next >], [< prev],
    [back to search], [description], [reviews], [buy now]
A title names only some of a product's attributes; its description lists them all. On the item page, click each
option value the instruction asks for before [buy now]. Every action costs a step; you have {limit} steps.
Reward when you buy: r_type x (attributes the product has + options chosen as asked + 1 if the price is under the cap)
/ (attributes asked + options asked + 1), where r_type is 1 for the type of product asked and 0 for an unrelated one;
1 is a success. If the steps run out first, the reward is 0."""


@functools.cache
def move_table(difficulty: int) -> tuple[list[str], dict[str, int]]:
    """Every move of ``difficulty`` (the ``Discrete`` action of vector mode) and each move's index."""
    moves = [
        *TYPE_SEARCHES,
        *(f"click[{button}]" for button in BUTTONS),
        *(f"click[{value}]" for value in OPTION_VALUES),
        *(f"click[{product.id}]" for product in products(difficulty)),
    ]
    return moves, {move: index for index, move in enumerate(moves)}


def _spaced(text: str) -> str:
    """Lower case, runs of white space as one space."""
    return " ".join(text.lower().split())


def _money(price: float) -> str:
    return f"${price:.2f}"


class Shop(SoloPuzzle, Game):
    """WebShop in text over a generated catalogue; see the module docstring for the pages, the actions and the reward."""

    name = "Shop"
    description = (
        "WebShop in text: search a generated catalogue (BM25), open items, read descriptions and reviews, choose "
        "options and buy what the instruction asks; WebShop's reward; difficulty 1-5 (catalogue size, look-alikes, "
        "vagueness), train/test split."
    )
    category = "agentic"
    reference_agents = ("expert", "first_result", "random")
    default_error_allowance = 5
    vector_size = VECTOR_SIZE
    mutable_state = ("selected", "opened", "described")

    def __init__(self, *, difficulty: int = 2, split: str = "test"):
        self.difficulty = int_option("difficulty", difficulty, 1, len(LEVELS))
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}: train on 'train', evaluate on 'test'")
        self.split = split
        self.max_steps = LEVELS[self.difficulty].max_steps
        self.moves, self.index = move_table(self.difficulty)
        self.players = ["player_0"]
        self.goal: Goal | None = None
        self.asked: Request | None = None
        self.page = "search"
        self.results: tuple[str, ...] = ()
        self.result_page = 0
        self.product: str | None = None
        self.selected: dict[str, str] = {}
        self.opened: set[str] = set()
        self.described: set[str] = set()
        self.steps = 0
        self.searches = 0
        self.bought: str | None = None
        self.terms: dict[str, Any] = {}

    # ------------------------------------------------------------------------------------------ episode
    def start(self, ctx: Context) -> None:
        """Draw the episode's goal of the split and show the search page with the instruction."""
        self.goal = draw_goal(ctx.rng, self.difficulty, self.split)
        self.asked = read_instruction(self.goal.instruction)
        self.page, self.results, self.result_page, self.product = "search", (), 0, None
        self.selected, self.opened, self.described = {}, set(), set()
        self.steps, self.searches, self.bought, self.terms = 0, 0, None, {}
        ctx.tell(f"Instruction: {self.goal.instruction}\n\n{self.page_text()}", to=self.players[0])

    @property
    def instruction(self) -> str:
        """The episode's instruction."""
        return self.goal.instruction if self.goal else ""

    def rules(self, player: str) -> str:
        """The pages, the actions, the step limit and the reward."""
        return RULES.format(player=player, limit=self.max_steps)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The instruction, the steps left and what can be done on this page."""
        if self.page == "search":
            actions = "Search with search[your keywords]."
        else:
            actions = f"Click with click[name]: {' '.join(f'[{name}]' for name in self.clickables())}."
        return f"Instruction: {self.instruction}\nSteps left: {self.max_steps - self.steps}. {actions}"

    # ------------------------------------------------------------------------------------------ pages
    def item(self) -> Product:
        """The product whose item, description or reviews page is shown."""
        assert self.product is not None
        return catalogue(self.difficulty).by_id[self.product]

    def pages(self) -> int:
        """How many results pages the last search filled."""
        return math.ceil(len(self.results) / PAGE_SIZE)

    def listed(self) -> tuple[str, ...]:
        """The ids on the results page shown."""
        return self.results[self.result_page * PAGE_SIZE : (self.result_page + 1) * PAGE_SIZE]

    def clickables(self) -> list[str]:
        """What can be clicked on this page, in the order the page shows it."""
        if self.page == "search":
            return []
        if self.page == "results":
            names = ["back to search"] + (["< prev"] if self.result_page > 0 else []) + (["next >"] if self.result_page + 1 < self.pages() else [])
            return names + list(self.listed())
        if self.page == "item":
            values = [value for _, values in self.item().options for value in values]
            return ["back to search", "< prev", *values, "description", "reviews", "buy now"]
        return ["back to search", "< prev"]

    def page_model(self) -> dict[str, Any]:
        """The page shown, as data (what a web face renders and the text face writes out): its kind, what can be
        clicked, and its contents."""
        model: dict[str, Any] = {"kind": self.page, "clickable": self.clickables()}
        if self.page == "results":
            shop = catalogue(self.difficulty)
            items = [{"id": pid, "title": shop.by_id[pid].title, "price": shop.by_id[pid].price} for pid in self.listed()]
            model.update(page=self.result_page + 1, pages=self.pages(), total=len(self.results), items=items)
        elif self.page != "search":
            product = self.item()
            model.update(id=product.id, title=product.title)
            if self.page == "item":
                model.update(
                    category=product.category,
                    price=product.price,
                    rating=product.rating,
                    selected=dict(self.selected),
                    options=[{"name": name, "values": list(values)} for name, values in product.options],
                )
            elif self.page == "description":
                model.update(description=product.description, features=product.features)
            else:
                model.update(reviews=[{"stars": stars, "text": text} for stars, text in product.reviews])
        return model

    def page_text(self) -> str:
        """The page shown, in text; anything in [brackets] can be clicked."""
        model = self.page_model()
        kind = model["kind"]
        if kind == "search":
            return "[Search page] Search the catalogue with search[your keywords]."
        buttons = " ".join(f"[{name}]" for name in model["clickable"] if name in BUTTONS)
        if kind == "results":
            if not model["items"]:
                return f"[Results] No product matches that search.\n{buttons}"
            lines = [f"[Results page {model['page']} of {model['pages']}: {model['total']} results] {buttons}"]
            lines += [f"[{item['id']}] {item['title']} | {_money(item['price'])}" for item in model["items"]]
            return "\n".join(lines)
        if kind == "item":
            lines = [
                f"[Item {model['id']}] {model['title']}",
                f"Category: {model['category']}",
                f"Price: {_money(model['price'])} | Rating: {model['rating']} out of 5",
            ]
            lines += [f"{option['name']}: {' '.join(f'[{value}]' for value in option['values'])}" for option in model["options"]]
            chosen = ", ".join(f"{name} {value}" for name, value in model["selected"].items())
            lines.append(f"Chosen: {chosen or 'nothing yet'}")
            lines.append(buttons)
            return "\n".join(lines)
        if kind == "description":
            return "\n".join(
                [f"[Description of {model['id']}] {model['title']}", model["description"], "Features: " + "; ".join(model["features"]), buttons]
            )
        return "\n".join(
            [
                f"[Reviews of {model['id']}] {model['title']}",
                *(f"{review['stars']} out of 5 stars: {review['text']}" for review in model["reviews"]),
                buttons,
            ]
        )

    # ------------------------------------------------------------------------------------------ moves
    def legal_actions(self, player: str) -> list[int]:
        """Indices of the page's clicks, or of the type searches on the search page."""
        if self.page == "search":
            return [self.index[move] for move in TYPE_SEARCHES]
        return [self.index[f"click[{name}]"] for name in self.clickables()]

    def parse(self, player: str, text: str) -> str:
        """``search[query]`` or ``click[name]`` from free text (see the module docstring), or an :class:`InvalidMove` saying why."""
        if not text.strip():
            raise InvalidMove(f"The reply is empty. {self.hint('')}")
        # The last action named counts, so that reasoning before it is tolerated.
        actions = list(_ACTION.finditer(text))
        found = actions[-1] if actions else None
        if found is None:
            name = self.clickable(text)
            if name is not None:
                return f"click[{name}]"
            raise InvalidMove(f"No action found: reply with search[keywords] or click[name]. {self.hint('')}")
        verb, argument = found.group(1).lower(), found.group(2)
        if verb == "search":
            if self.page != "search":
                raise InvalidMove("You can search only on the search page: click[back to search] first.")
            query = " ".join(argument.split())
            if not query:
                raise InvalidMove("The search is empty: search[a few keywords].")
            if len(query) > MAX_QUERY_CHARS:
                raise InvalidMove(f"The search is longer than {MAX_QUERY_CHARS} characters: search with a few keywords.")
            return f"search[{query}]"
        name = self.clickable(argument)
        if name is None:
            raise InvalidMove(f"{self.why_not(argument)} {self.hint(argument)}")
        return f"click[{name}]"

    def clickable(self, text: str) -> str | None:
        """The clickable of this page that ``text`` names (its name, an item's id or title, any case), else ``None``."""
        wanted = _spaced(text)
        wanted = _ALIASES.get(wanted, wanted)
        names = self.clickables()
        for name in names:
            if name.lower() == wanted:
                return name
        if self.page == "results":
            shop = catalogue(self.difficulty)
            for pid in self.listed():
                if shop.by_id[pid].title.lower() == wanted:
                    return pid
        return None

    def why_not(self, argument: str) -> str:
        """Why ``click[argument]`` is refused, in words of the catalogue's own: the player's are never repeated."""
        wanted = _spaced(argument)
        wanted = _ALIASES.get(wanted, wanted)
        if self.page == "search":
            return "There is nothing to click on the search page: search[keywords] first."
        if wanted in BUTTONS:
            return f"There is no [{wanted}] on this page."
        if _PRODUCT_ID.fullmatch(wanted):
            return "That item is not on this page: click one of the items listed."
        if wanted in OPTION_OF:
            return "That option value is not offered on this page." if self.page == "item" else "Options are chosen on an item's page."
        return "There is nothing by that name to click on this page." if wanted else "Say what to click: click[name]."

    def hint(self, argument: str) -> str:
        """``Did you mean click[...]?`` for a close clickable, else what can be done here."""
        names = self.clickables()
        if not names:
            return "Search with search[your keywords]."
        close = difflib.get_close_matches(_spaced(argument)[:80], [name.lower() for name in names], n=1, cutoff=0.75) if argument else []
        if close:
            return f"Did you mean click[{next(name for name in names if name.lower() == close[0])}]?"
        return f"Clickable: {' '.join(f'[{name}]' for name in names)}."

    # ------------------------------------------------------------------------------------------ rules
    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Carry out a search or a click; a purchase ends the episode with its reward, the step limit with 0."""
        ((player, move),) = moves.items()
        self.steps += 1
        bracket = move.index("[")
        verb, argument = move[:bracket], move[bracket + 1 : -1]
        if verb == "search":
            self.results, self.result_page, self.page, self.product = catalogue(self.difficulty).search(argument), 0, "results", None
            self.searches += 1
        elif argument == "buy now":
            self.buy(ctx, player)
            return
        else:
            self.click(argument)
        ctx.tell(self.page_text(), to=player)
        if self.steps >= self.max_steps:
            self.failed(ctx, "the step limit ran out")

    def click(self, name: str) -> None:
        """Follow a click on ``name`` (a clickable of this page)."""
        if name == "back to search":
            self.page, self.results, self.result_page, self.product = "search", (), 0, None
        elif name == "next >":
            self.result_page += 1
        elif name == "< prev":
            if self.page == "results":
                self.result_page -= 1
            elif self.page == "item":
                self.page, self.product = "results", None
            else:
                self.page = "item"
        elif name in ("description", "reviews"):
            self.page = name
            if name == "description":
                self.described.add(self.item().id)
        elif name in OPTION_OF and self.page == "item":
            self.selected[OPTION_OF[name]] = name
        else:
            self.page, self.product, self.selected = "item", name, {}
            self.opened.add(name)

    def buy(self, ctx: Context, player: str) -> None:
        """Pay WebShop's reward for the product on the page with the options chosen, and end the episode."""
        assert self.goal is not None
        product = self.item()
        self.bought, self.terms = product.id, reward_terms(product, self.selected, self.goal.request)
        reward = self.terms["reward"]
        success = reward == 1.0
        ctx.finish(
            {player: reward},
            winners=[player] if success else [],
            reason=f"{player} bought {product.id} (reward {reward:.3f})",
            details=self.report(success),
        )

    def report(self, success: bool) -> dict[str, Any]:
        """The outcome details (see the module docstring); the reward terms are 0 when nothing was bought."""
        terms = self.terms or {"reward": 0.0}
        return {
            "difficulty": self.difficulty,
            "split": self.split,
            "success": success,
            **terms,
            "bought": self.bought,
            "chosen": dict(self.selected) if self.bought else {},
            "steps": self.steps,
            "max_steps": self.max_steps,
            "searches": self.searches,
            "goal": self.goal.digest if self.goal else "",
        }

    # ------------------------------------------------------------------------------------------ views
    def known(self, pid: str) -> dict[str, Any]:
        """What the player has seen of a product it opened: its title, category, price, rating and options, and its
        features once its description was shown (``None`` before)."""
        product = catalogue(self.difficulty).by_id[pid]
        return {
            "title": product.title,
            "category": product.category,
            "price": product.price,
            "rating": product.rating,
            "options": {name: list(values) for name, values in product.options},
            "features": product.features if pid in self.described else None,
        }

    def view(self, player: str) -> dict[str, Any]:
        """What the player knows: the instruction, the page (as data), the products it opened (as seen), the options
        chosen, the searches made and the steps used. Nothing it has not been shown, and not its own query's words."""
        return {
            "difficulty": self.difficulty,
            "instruction": self.instruction,
            "page": self.page_model(),
            "known": {pid: self.known(pid) for pid in sorted(self.opened)},
            "selected": dict(self.selected),
            "searches": self.searches,
            "steps": self.steps,
            "max_steps": self.max_steps,
        }

    def render(self) -> str:
        """The instruction, the page and the steps: what the player sees, no more."""
        return f"instruction: {self.instruction}\n{self.page_text()}\nsteps {self.steps}/{self.max_steps}"

    def vector(self, player: str) -> np.ndarray:
        """The vector observation (see the module docstring)."""
        values = np.zeros(VECTOR_SIZE, dtype=np.float32)
        values[OFFSET["page"] + PAGES.index(self.page)] = 1.0
        if self.page == "results":
            values[OFFSET["results"]] = (self.result_page + 1) / 5
            values[OFFSET["results"] + 1] = float(self.result_page + 1 < self.pages())
        asked = self.asked
        if asked is not None:
            values[OFFSET["goal_type"] + _TYPE_INDEX[asked.type]] = 1.0
            for attribute in asked.attributes:
                values[OFFSET["goal_attributes"] + _ATTRIBUTE_INDEX[attribute]] = 1.0
            for _, value in asked.options:
                values[OFFSET["goal_values"] + _VALUE_INDEX[value]] = 1.0
            values[OFFSET["cap"]] = min(asked.price_upper / PRICE_SCALE, 1.0)
        if self.product is not None:
            product = self.item()
            values[OFFSET["item_type"] + _TYPE_INDEX[product.type]] = 1.0
            described = product.id in self.described
            for attribute in product.attributes if described else product.attributes[:TITLE_ATTRIBUTES]:
                values[OFFSET["item_attributes"] + _ATTRIBUTE_INDEX[attribute]] = 1.0
            for _, offered in product.options:
                for value in offered:
                    values[OFFSET["item_offered"] + _VALUE_INDEX[value]] = 1.0
            for value in self.selected.values():
                values[OFFSET["item_chosen"] + _VALUE_INDEX[value]] = 1.0
            values[OFFSET["item_price"]] = min(product.price / PRICE_SCALE, 1.0)
            values[OFFSET["item_price"] + 1] = float(asked is not None and product.price <= asked.price_upper)
            values[OFFSET["described"]] = float(described)
        values[OFFSET["steps"]] = self.steps / self.max_steps
        return values
