"""The shop's catalogue, its search, its instructions and WebShop's reward: what every face of the shop shares.

This module defines no game (the registry takes every game a module of this
package defines); :mod:`parlour.envs.agentic.shop` plays it in text, and a web
face can serve the same catalogue, search and reward as pages.

Everything here is public, like a shop's shelves: the product types and their
attribute vocabulary (each attribute with the one paraphrase a vague
instruction may use instead), the option names and values, the generator and
the instruction grammar. What a given episode asks for is in its instruction;
which product the instruction was written from (its *target*) is the episode's
only secret, and the reward never looks at it: any product that matches what
the instruction states earns the same.

The catalogue is fixed per difficulty and :data:`CATALOGUE_VERSION` (generated
from :data:`CATALOGUE_SEED`), as WebShop's catalogue is fixed and its
instructions vary: an episode's seed draws only the instruction, so a reset
never rebuilds the BM25 index (bm25s, as in :mod:`parlour.envs.search.retriever`,
cached on disk by content hash and in memory per process).

Reward (WebShop's ``get_reward``, ``web_agent_site/engine/goal.py``), with exact
matching where WebShop matches text fuzzily, since the generated products state
their attributes and options exactly::

    reward = r_type * (attributes_matched + options_matched + price_ok) / (attributes_asked + options_asked + 1)

* ``attributes_matched``: the instruction's attributes the bought product has;
* ``options_matched``: the instruction's options (``size: 12 fl oz``) chosen on the item page before buying;
* ``price_ok``: 1 when the product's price is at most the instruction's cap;
* ``r_type`` (WebShop's ``get_type_reward``): 1 when the bought product is of the asked type, shares two levels of
  its category path with it, or shares more than 0.2 of the asked type's nouns; else 0.5; then 0.1 when the noun
  share is under 0.1, and 0 when it is 0 (so a conditioner bought for a shampoo scores 0, as in WebShop).

Success is a reward of exactly 1.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Bumped whenever the vocabulary or the generator changes what a catalogue holds.
CATALOGUE_VERSION = 0
#: The seed of every difficulty's catalogue (issue 33).
CATALOGUE_SEED = 33
#: Results a search returns (WebShop's ``SEARCH_RETURN_N``) and results shown per page.
SEARCH_RETURN = 50
PAGE_SIZE = 10
#: Attributes a product's title names; the rest are only in its description.
TITLE_ATTRIBUTES = 2

# ----------------------------------------------------------------------------------------------- vocabulary

#: Every attribute with the paraphrase a vague instruction uses for it. Descriptions and titles use only the
#: canonical phrase, so a search with the paraphrase's words finds less.
ATTRIBUTES: dict[str, str] = {
    "sulfate free": "made without sulfates",
    "paraben free": "without parabens",
    "for dry hair": "suited to parched brittle hair",
    "color safe": "gentle on dyed hair",
    "cruelty free": "never tested on animals",
    "anti dandruff": "made to fight scalp flakes",
    "volumizing": "giving body to thin hair",
    "natural ingredients": "made from plant extracts",
    "detangling": "good at smoothing out knots",
    "lightweight": "barely heavier than air",
    "heat protection": "shielding against styling heat",
    "frizz control": "taming flyaways",
    "fragrance free": "unscented",
    "for sensitive skin": "kind to easily irritated skin",
    "non greasy": "absorbed without an oily feel",
    "hypoallergenic": "unlikely to trigger allergies",
    "dermatologist tested": "checked by skin doctors",
    "oil free": "made with no oils",
    "vegan": "free of animal products",
    "water resistant": "fine with splashes and rain",
    "reef safe": "harmless to coral",
    "gluten free": "safe for celiacs",
    "non gmo": "made without genetically modified crops",
    "low sugar": "barely sweetened",
    "high protein": "packed with protein",
    "keto friendly": "suitable for a ketogenic diet",
    "organic": "grown without synthetic pesticides",
    "kosher": "prepared under jewish dietary law",
    "individually wrapped": "packed one by one",
    "whole grain": "made with unrefined grains",
    "caffeine free": "decaffeinated",
    "sugar free": "without any added sweetener",
    "fair trade": "ethically sourced from growers",
    "low calorie": "light on calories",
    "resealable bag": "sold in a pouch that closes again",
    "dark roast": "roasted until nearly black",
    "single origin": "from one farm region",
    "natural flavors": "tasting of real fruit",
    "bpa free": "canned without bisphenol",
    "waterproof": "keeping water out",
    "non slip": "gripping wet floors",
    "arch support": "supporting high arches",
    "breathable": "letting air flow through",
    "memory foam": "cushioned with foam that molds to you",
    "wide fit": "roomy through the toes",
    "faux leather": "made of synthetic leather",
    "reflective": "visible in headlights",
    "ankle support": "holding the ankle steady",
    "adjustable straps": "fastened to fit any foot",
    "machine washable": "safe in the washer",
    "moisture wicking": "pulling sweat away from the body",
    "relaxed fit": "loosely cut",
    "long sleeve": "with full length arms",
    "quick dry": "dry within minutes",
    "wrinkle free": "resistant to creases",
    "uv protection": "blocking the sun's rays",
    "organic cotton": "woven from pesticide free fibre",
    "with pockets": "with places to stash your keys",
    "fleece lined": "soft and fuzzy inside",
    "zip up": "closing with a zipper",
    "packable": "squashing into its own pouch",
    "adjustable hood": "with a hood that cinches tight",
    "easy assembly": "quick to put together",
    "solid wood": "made of real timber",
    "mid century modern": "in a retro fifties style",
    "space saving": "made to fit small rooms",
    "metal frame": "built on a steel base",
    "stain resistant": "shrugging off spills",
    "storage shelf": "with room underneath to store things",
    "tufted": "button stitched",
    "round top": "with a circular surface",
    "with armrests": "with places to rest your elbows",
    "swivel": "turning all the way around",
    "adjustable shelves": "with shelves that move up or down",
    "wall anchored": "secured to the wall",
    "deep pocket": "fitting thick mattresses",
    "cooling": "sleeping cool at night",
    "fade resistant": "keeping its colour wash after wash",
    "adjustable loft": "letting you add or remove filling",
    "for side sleepers": "made for people who sleep on their side",
    "firm support": "holding its shape all night",
    "with drawers": "with pull out compartments",
    "usb charging port": "able to power a phone overnight",
    "open shelf": "with an uncovered cubby",
    "noise cancelling": "shutting out background sound",
    "long battery life": "running for hours on one charge",
    "built in microphone": "with a mic for calls",
    "fast charging": "refilling its power quickly",
    "deep bass": "with a punchy low end",
    "touch control": "operated by tapping",
    "wireless charging case": "whose case refills on a charging mat",
    "foldable": "collapsing flat for storage",
    "shockproof": "surviving hard drops",
    "stereo pairing": "linking with a second unit",
    "travel friendly": "easy to pack for trips",
    "slim design": "with a thin profile",
    "wireless charging compatible": "working with charging pads",
    "kickstand": "propping up for videos",
    "raised edges": "with a lip guarding the screen",
    "clear back": "see through at the rear",
    "grip texture": "ridged so it won't slip",
    "dual port": "charging two devices at once",
    "compact": "small enough for a pocket",
    "led indicator": "showing its charge with lights",
    "foldable plug": "with prongs that tuck away",
    "overheat protection": "shutting off before it runs hot",
    "type c port": "with a reversible connector",
}


@dataclass(frozen=True)
class ProductType:
    """A kind of product: the name it is searched and asked for by, its category path (category, subcategory,
    type), its nouns (WebShop's title score), the synonym a vague instruction uses, its attribute vocabulary, its
    options (name and values, in display order) and its price range in dollars."""

    name: str
    path: tuple[str, str, str]
    nouns: tuple[str, ...]
    synonym: str
    attributes: tuple[str, ...]
    options: tuple[tuple[str, tuple[str, ...]], ...]
    price: tuple[float, float]

    @property
    def title(self) -> str:
        """The name as a title shows it: ``Hair Oil``."""
        return self.name.title()


def _type(
    name: str, path: tuple[str, str], nouns: str, synonym: str, attributes: str, options: dict[str, str], price: tuple[float, float]
) -> ProductType:
    """A :class:`ProductType` from compact spellings: attributes and option values separated by ``;``."""
    return ProductType(
        name,
        (*path, name),
        tuple(nouns.split()),
        synonym,
        tuple(a.strip() for a in attributes.split(";")),
        tuple((option, tuple(v.strip() for v in values.split(";"))) for option, values in options.items()),
        price,
    )


_HAIR, _SKIN = ("beauty", "hair care"), ("beauty", "skin care")
_SNACKS, _DRINKS = ("grocery", "snacks"), ("grocery", "beverages")
_SHOES, _TOPS = ("fashion", "shoes"), ("fashion", "clothing")
_LIVING, _BEDROOM = ("home", "living room furniture"), ("home", "bedroom")
_AUDIO, _GADGETS = ("electronics", "audio"), ("electronics", "phone accessories")
_HAIR_SIZES = "8 fl oz; 12 fl oz; 16.9 fl oz; 33.8 fl oz"
_SCENTS = "lavender; citrus; coconut; eucalyptus"
_SHOE_SIZES = "us 6; us 7; us 8; us 9; us 10; us 11; us 12"
_CLOTHES = "small; medium; large; x-large; xx-large"

#: The catalogue's product types.
TYPES: tuple[ProductType, ...] = (
    _type(
        "shampoo",
        _HAIR,
        "shampoo",
        "hair cleanser",
        "sulfate free; paraben free; for dry hair; color safe; cruelty free; anti dandruff; volumizing; natural ingredients",
        {"size": _HAIR_SIZES, "scent": _SCENTS},
        (6, 30),
    ),
    _type(
        "conditioner",
        _HAIR,
        "conditioner",
        "hair softening rinse",
        "sulfate free; paraben free; for dry hair; color safe; cruelty free; detangling; volumizing; natural ingredients",
        {"size": _HAIR_SIZES, "scent": _SCENTS},
        (6, 30),
    ),
    _type(
        "hair oil",
        _HAIR,
        "hair oil",
        "scalp serum",
        "for dry hair; color safe; cruelty free; natural ingredients; paraben free; heat protection; frizz control; lightweight",
        {"size": "1 fl oz; 2 fl oz; 4 fl oz"},
        (8, 40),
    ),
    _type(
        "face moisturizer",
        _SKIN,
        "moisturizer",
        "facial cream",
        "fragrance free; for sensitive skin; non greasy; hypoallergenic; dermatologist tested; oil free; cruelty free; vegan",
        {"size": "1.7 fl oz; 2.5 fl oz; 4 fl oz"},
        (10, 60),
    ),
    _type(
        "sunscreen",
        _SKIN,
        "sunscreen",
        "sun protection lotion",
        "fragrance free; for sensitive skin; non greasy; water resistant; hypoallergenic; dermatologist tested; oil free; reef safe",
        {"size": "3 fl oz; 6 fl oz; 8 fl oz", "protection": "spf 30; spf 50; spf 70"},
        (8, 35),
    ),
    _type(
        "body wash",
        _SKIN,
        "body wash",
        "shower gel",
        "fragrance free; for sensitive skin; hypoallergenic; cruelty free; vegan; sulfate free; paraben free; natural ingredients",
        {"size": "12 fl oz; 16.9 fl oz; 33.8 fl oz", "scent": _SCENTS},
        (5, 25),
    ),
    _type(
        "protein bar",
        _SNACKS,
        "protein bar",
        "energy bar",
        "gluten free; non gmo; low sugar; high protein; keto friendly; organic; kosher; individually wrapped",
        {"flavor": "chocolate; peanut butter; vanilla; mixed berry", "count": "12 count; 24 count"},
        (12, 45),
    ),
    _type(
        "trail mix",
        _SNACKS,
        "trail mix",
        "nut and fruit medley",
        "gluten free; non gmo; low sugar; organic; kosher; individually wrapped; vegan; high protein",
        {"flavor": "sweet and salty; tropical; dark chocolate", "size": "10 oz; 26 oz; 40 oz"},
        (6, 25),
    ),
    _type(
        "granola",
        _SNACKS,
        "granola",
        "baked oat clusters",
        "gluten free; non gmo; low sugar; high protein; organic; kosher; vegan; whole grain",
        {"flavor": "honey almond; cinnamon; dark chocolate; mixed berry", "size": "11 oz; 24 oz"},
        (4, 18),
    ),
    _type(
        "green tea",
        _DRINKS,
        "tea",
        "unfermented leaf brew",
        "caffeine free; organic; non gmo; sugar free; fair trade; low calorie; kosher; resealable bag",
        {"flavor": "jasmine; mint; lemon; original", "count": "20 count; 50 count; 100 count"},
        (5, 25),
    ),
    _type(
        "ground coffee",
        _DRINKS,
        "coffee",
        "filter coffee",
        "caffeine free; organic; non gmo; fair trade; kosher; resealable bag; dark roast; single origin",
        {"size": "12 oz; 24 oz; 32 oz", "flavor": "original; hazelnut; vanilla; mocha"},
        (7, 30),
    ),
    _type(
        "sparkling water",
        _DRINKS,
        "water",
        "fizzy seltzer",
        "caffeine free; sugar free; low calorie; non gmo; kosher; organic; natural flavors; bpa free",
        {"flavor": "lime; grapefruit; mixed berry; original", "count": "8 count; 12 count; 24 count"},
        (4, 20),
    ),
    _type(
        "running shoes",
        _SHOES,
        "shoes",
        "jogging sneakers",
        "non slip; lightweight; arch support; breathable; memory foam; wide fit; waterproof; reflective",
        {"size": _SHOE_SIZES, "color": "black; white; grey; navy; red; blue"},
        (35, 140),
    ),
    _type(
        "hiking boots",
        _SHOES,
        "boots",
        "trail footwear",
        "waterproof; non slip; lightweight; arch support; breathable; wide fit; faux leather; ankle support",
        {"size": _SHOE_SIZES, "color": "brown; black; olive; grey"},
        (45, 180),
    ),
    _type(
        "sandals",
        _SHOES,
        "sandals",
        "open toe summer footwear",
        "non slip; lightweight; arch support; waterproof; wide fit; faux leather; memory foam; adjustable straps",
        {"size": _SHOE_SIZES, "color": "brown; black; white; navy"},
        (15, 70),
    ),
    _type(
        "polo shirt",
        _TOPS,
        "polo shirt",
        "collared knit top",
        "machine washable; moisture wicking; relaxed fit; quick dry; wrinkle free; uv protection; long sleeve; organic cotton",
        {"size": _CLOTHES, "color": "black; white; navy; grey; red; green"},
        (12, 50),
    ),
    _type(
        "hoodie",
        _TOPS,
        "hoodie",
        "hooded sweatshirt",
        "machine washable; relaxed fit; with pockets; organic cotton; moisture wicking; fleece lined; zip up; wrinkle free",
        {"size": _CLOTHES, "color": "black; grey; navy; green; beige"},
        (20, 70),
    ),
    _type(
        "rain jacket",
        _TOPS,
        "jacket",
        "wet weather coat",
        "waterproof; lightweight; with pockets; breathable; machine washable; packable; adjustable hood; uv protection",
        {"size": _CLOTHES, "color": "yellow; navy; black; olive; red"},
        (30, 120),
    ),
    _type(
        "coffee table",
        _LIVING,
        "table",
        "low lounge centerpiece",
        "easy assembly; solid wood; mid century modern; space saving; metal frame; stain resistant; storage shelf; round top",
        {"color": "walnut; oak; black; white; grey", "size": "small; medium; large"},
        (60, 300),
    ),
    _type(
        "accent chair",
        _LIVING,
        "chair",
        "occasional seat",
        "easy assembly; solid wood; mid century modern; tufted; stain resistant; metal frame; with armrests; swivel",
        {"color": "grey; navy; green; beige; black"},
        (80, 350),
    ),
    _type(
        "bookshelf",
        _LIVING,
        "bookshelf",
        "shelving unit for books",
        "easy assembly; solid wood; space saving; metal frame; mid century modern; adjustable shelves; wall anchored; stain resistant",
        {"color": "walnut; oak; black; white", "size": "3 tier; 5 tier"},
        (40, 220),
    ),
    _type(
        "bed sheets",
        _BEDROOM,
        "sheets",
        "bedding set",
        "hypoallergenic; deep pocket; machine washable; cooling; organic cotton; wrinkle free; breathable; fade resistant",
        {"size": "twin; full; queen; king", "color": "white; grey; navy; beige; sage"},
        (20, 110),
    ),
    _type(
        "pillow",
        _BEDROOM,
        "pillow",
        "sleeping cushion",
        "hypoallergenic; cooling; memory foam; machine washable; adjustable loft; organic cotton; for side sleepers; firm support",
        {"size": "standard; queen; king", "count": "1 pack; 2 pack"},
        (15, 80),
    ),
    _type(
        "nightstand",
        _BEDROOM,
        "nightstand",
        "bedside table",
        "easy assembly; solid wood; with drawers; space saving; mid century modern; metal frame; usb charging port; open shelf",
        {"color": "walnut; oak; black; white; grey"},
        (35, 200),
    ),
    _type(
        "wireless earbuds",
        _AUDIO,
        "earbuds",
        "cordless in ear headphones",
        "noise cancelling; long battery life; water resistant; built in microphone; fast charging; deep bass; touch control; wireless charging case",
        {"color": "black; white; blue; pink"},
        (20, 200),
    ),
    _type(
        "over ear headphones",
        _AUDIO,
        "headphones",
        "full size headset",
        "noise cancelling; long battery life; built in microphone; deep bass; foldable; touch control; fast charging; memory foam",
        {"color": "black; silver; blue; white"},
        (30, 350),
    ),
    _type(
        "bluetooth speaker",
        _AUDIO,
        "speaker",
        "portable wireless speaker",
        "water resistant; long battery life; deep bass; built in microphone; fast charging; shockproof; stereo pairing; travel friendly",
        {"color": "black; blue; red; grey"},
        (20, 180),
    ),
    _type(
        "phone case",
        _GADGETS,
        "case",
        "protective phone cover",
        "shockproof; slim design; wireless charging compatible; kickstand; raised edges; clear back; grip texture; travel friendly",
        {"model": "iphone 15; iphone 15 pro; galaxy s24; pixel 8", "color": "black; clear; blue; pink"},
        (8, 45),
    ),
    _type(
        "usb charger",
        _GADGETS,
        "charger",
        "wall power adapter",
        "fast charging; dual port; compact; led indicator; travel friendly; foldable plug; overheat protection; type c port",
        {"wattage": "20w; 30w; 65w", "color": "black; white"},
        (10, 60),
    ),
    _type(
        "power bank",
        _GADGETS,
        "power bank",
        "portable battery pack",
        "fast charging; dual port; compact; led indicator; travel friendly; slim design; wireless charging compatible; overheat protection",
        {"capacity": "10000mah; 20000mah; 26800mah", "color": "black; white; blue"},
        (15, 80),
    ),
)
TYPE_BY_NAME = {ptype.name: ptype for ptype in TYPES}
#: Every attribute and every option value, in a fixed order (the vector face's multi-hot blocks).
ATTRIBUTE_NAMES = sorted(ATTRIBUTES)
OPTION_VALUES = sorted({value for ptype in TYPES for _, values in ptype.options for value in values})
#: The option name each value belongs to (a value names one option only, so a click on it is unambiguous).
OPTION_OF = {value: name for ptype in TYPES for name, values in ptype.options for value in values}

BRANDS = (
    "Lumora",
    "Velstra",
    "Norvik",
    "Quillon",
    "Aurelle",
    "Brightwell",
    "Calderon",
    "Duskwood",
    "Everpine",
    "Fennick",
    "Glimmora",
    "Harlowe",
    "Istra",
    "Jorvane",
    "Kestrel",
    "Lindqvist",
    "Marrow",
    "Nettleby",
    "Oakhurst",
    "Pemberly",
    "Quartzly",
    "Rovena",
    "Solvane",
    "Tamsin",
    "Umberlane",
    "Vantor",
    "Wrenfield",
    "Xandria",
    "Yarrowby",
    "Zephra",
)
#: Sentences a description may add about the product in general: they name no attribute of any type.
_PRAISE = (
    "A customer favourite for everyday use.",
    "Backed by a thirty day return policy.",
    "Ships in recyclable packaging.",
    "Designed and tested by our in-house team.",
    "Made to last through daily use.",
    "Rated highly by repeat buyers.",
)
_REVIEWS = {
    5: ("Exactly what I wanted.", "Great {type}, would buy again.", "Really {attribute}, as the listing says."),
    4: ("Good {type} for the price.", "Nice and {attribute}.", "Works well, arrived on time."),
    3: ("It is fine, nothing special.", "Decent {type}, a bit overpriced.", "Took a while to arrive, but it works."),
    2: ("Not what I expected.", "The {type} feels cheaper than pictured.", "Had to contact support twice."),
    1: ("Would not buy again.", "Arrived damaged.", "Returned it after a week."),
}


# ---------------------------------------------------------------------------------------------- difficulty


@dataclass(frozen=True)
class Level:
    """What a difficulty sets: products in the catalogue, look-alikes made from each product (each shares all but
    one attribute, or all attributes at another price or with fewer options), attributes an instruction names,
    the share of attributes it names by their paraphrase and the chance it names the type by its synonym, and the
    step limit."""

    products: int
    lookalikes: tuple[int, int]
    asked: tuple[int, int]
    paraphrased: float
    synonym: float
    max_steps: int


LEVELS = {
    1: Level(150, (0, 1), (1, 2), 0.0, 0.0, 15),
    2: Level(300, (1, 2), (2, 2), 0.25, 0.0, 20),
    3: Level(600, (2, 3), (2, 3), 0.5, 0.25, 25),
    4: Level(1200, (3, 4), (3, 3), 0.75, 0.5, 30),
    5: Level(2000, (4, 6), (3, 4), 1.0, 1.0, 40),
}


# -------------------------------------------------------------------------------------------------- products


@dataclass(frozen=True)
class Product:
    """One product: its id (ASIN-like), type, brand, attributes (the title names the first two), options offered,
    price, rating and reviews (stars, text), title and description; ``group`` numbers the products generated
    together as look-alikes."""

    id: str
    type: str
    brand: str
    attributes: tuple[str, ...]
    options: tuple[tuple[str, tuple[str, ...]], ...]
    price: float
    rating: float
    reviews: tuple[tuple[int, str], ...]
    title: str
    description: str
    group: int

    @property
    def features(self) -> list[str]:
        """The attributes as the description page lists them."""
        return [attribute.capitalize() for attribute in self.attributes]

    @property
    def category(self) -> str:
        """The category path as the item page shows it: ``beauty › hair care › shampoo``."""
        return " › ".join(TYPE_BY_NAME[self.type].path)

    def offers(self, option: str, value: str) -> bool:
        """Whether ``value`` of ``option`` can be chosen on this product's page."""
        return value in dict(self.options).get(option, ())


def _title(brand: str, ptype: ProductType, attributes: tuple[str, ...]) -> str:
    """``Lumora Shampoo, Sulfate Free, Color Safe``."""
    return ", ".join([f"{brand} {ptype.title}", *(attribute.title() for attribute in attributes[:TITLE_ATTRIBUTES])])


def _description(rng: np.random.Generator, brand: str, ptype: ProductType, attributes: tuple[str, ...]) -> str:
    """The product's own words: its attributes (canonical phrases only) and a sentence of general praise."""
    listed = ", ".join(attributes[:-1]) + f" and {attributes[-1]}" if len(attributes) > 1 else attributes[0]
    return f"The {brand} {ptype.name} is {listed}. {_PRAISE[int(rng.integers(len(_PRAISE)))]}"


def _reviews(rng: np.random.Generator, ptype: ProductType, attributes: tuple[str, ...], rating: float) -> tuple[tuple[int, str], ...]:
    """Two to four reviews whose stars scatter around ``rating``; they mention only the product's own attributes."""
    reviews = []
    for _ in range(int(rng.integers(2, 5))):
        stars = int(np.clip(round(rating + rng.normal(0, 0.8)), 1, 5))
        template = _REVIEWS[stars][int(rng.integers(3))]
        reviews.append((stars, template.format(type=ptype.name, attribute=attributes[int(rng.integers(len(attributes)))])))
    return tuple(reviews)


def _offered(rng: np.random.Generator, ptype: ProductType) -> list[list[str]]:
    """For each option of ``ptype``: two or more of its values, in display order."""
    offered = []
    for _, values in ptype.options:
        count = int(rng.integers(2, len(values) + 1))
        keep = set(rng.choice(len(values), size=count, replace=False).tolist())
        offered.append([value for i, value in enumerate(values) if i in keep])
    return offered


def _product_id(rng: np.random.Generator, taken: set[str]) -> str:
    """A fresh ASIN-like id: ``B0`` and eight capitals or digits."""
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
    while True:
        candidate = "B0" + "".join(alphabet[i] for i in rng.integers(len(alphabet), size=8))
        if candidate not in taken:
            taken.add(candidate)
            return candidate


def _group(rng: np.random.Generator, ptype: ProductType, level: Level, number: int, taken: set[str]) -> list[Product]:
    """A product and its look-alikes: each swaps one attribute for another of the type (most), or keeps every
    attribute at a higher price, or keeps every attribute with fewer options to choose from."""
    pool = ptype.attributes
    base = [pool[i] for i in rng.choice(len(pool), size=int(rng.integers(3, 6)), replace=False)]
    base_price = float(rng.uniform(*ptype.price))
    base_offered = _offered(rng, ptype)
    members = [(base, base_price, base_offered)]
    for _ in range(int(rng.integers(level.lookalikes[0], level.lookalikes[1] + 1))):
        kind = rng.random()
        attributes, price, offered = list(base), base_price * float(rng.uniform(0.85, 1.15)), [list(v) for v in base_offered]
        if kind < 0.6:
            spare = [a for a in pool if a not in base]
            attributes[int(rng.integers(len(attributes)))] = spare[int(rng.integers(len(spare)))]
        elif kind < 0.8:
            price = base_price * float(rng.uniform(1.6, 2.5))
        else:
            widest = max(range(len(offered)), key=lambda i: len(offered[i]))
            offered[widest].pop(int(rng.integers(len(offered[widest]))))
        members.append((attributes, price, offered))
    products = []
    for attributes, price, offered in members:
        order = tuple(attributes[i] for i in rng.permutation(len(attributes)))
        brand = BRANDS[int(rng.integers(len(BRANDS)))]
        rating = round(float(rng.uniform(2.5, 5.0)), 1)
        options = tuple((name, tuple(values)) for (name, _), values in zip(ptype.options, offered))
        products.append(
            Product(
                id=_product_id(rng, taken),
                type=ptype.name,
                brand=brand,
                attributes=order,
                options=options,
                price=round(price, 2),
                rating=rating,
                reviews=_reviews(rng, ptype, order, rating),
                title=_title(brand, ptype, order),
                description=_description(rng, brand, ptype, order),
                group=number,
            )
        )
    return products


class Catalogue:
    """A difficulty's products and their BM25 index (a :class:`parlour.envs.search.retriever.Retriever`, which
    caches it on disk by content hash, built on the first search). ``digest`` fingerprints every product."""

    def __init__(self, difficulty: int, items: tuple[Product, ...]):
        self.difficulty = difficulty
        self.products = items
        self.by_id = {product.id: product for product in items}
        self.groups: dict[int, list[Product]] = {}
        for product in items:
            self.groups.setdefault(product.group, []).append(product)
        self.digest = hashlib.blake2b("\n".join(map(repr, items)).encode(), digest_size=16).hexdigest()
        self._retriever: Any = None

    @staticmethod
    def indexed_text(product: Product) -> str:
        """What search reads besides the title: the description, the features, the option values and the category."""
        values = " ".join(value for _, values in product.options for value in values)
        return f"{product.description} {' '.join(product.attributes)} {values} {' '.join(TYPE_BY_NAME[product.type].path)}"

    @property
    def retriever(self) -> Any:
        """The BM25 index over every product's title and :meth:`indexed_text`."""
        if self._retriever is None:
            from parlour.envs.search.retriever import Retriever

            self._retriever = Retriever([{"id": p.id, "title": p.title, "text": self.indexed_text(p)} for p in self.products])
        return self._retriever

    def search(self, query: str) -> tuple[str, ...]:
        """The ids of the :data:`SEARCH_RETURN` best products for ``query`` by BM25 (ties by id), best first."""
        return tuple(hit.doc_id for hit in self.retriever.search(query, SEARCH_RETURN))


@functools.cache
def products(difficulty: int) -> tuple[Product, ...]:
    """The products of ``difficulty``'s catalogue (generated once per process, from :data:`CATALOGUE_SEED`)."""
    level = LEVELS[difficulty]
    rng = np.random.default_rng([CATALOGUE_SEED, CATALOGUE_VERSION, difficulty])
    taken: set[str] = set()
    made: list[Product] = []
    while len(made) < level.products:
        made += _group(rng, TYPES[int(rng.integers(len(TYPES)))], level, len(made), taken)
    return tuple(made[: level.products])


@functools.cache
def catalogue(difficulty: int) -> Catalogue:
    """The catalogue of ``difficulty``: its products and their index, one per process."""
    return Catalogue(difficulty, products(difficulty))


# ------------------------------------------------------------------------------------------------ instructions


@dataclass(frozen=True)
class Request:
    """What an instruction asks for, exactly as its text states it: a type, attributes (in the type's order),
    options (name, value; in the type's order) and a price cap in dollars."""

    type: str
    attributes: tuple[str, ...]
    options: tuple[tuple[str, str], ...]
    price_upper: float


@dataclass(frozen=True)
class Goal:
    """An episode's goal: the instruction, what it states (:class:`Request`), the product it was written from (the
    episode's only secret; the reward never reads it) and the fingerprint that decides its split."""

    instruction: str
    request: Request
    target: str
    digest: str


_OPENERS = ("i am looking for", "i need", "i want to buy", "please find me", "i would like", "help me find", "i'm shopping for")
#: WebShop's price caps: multiples of ten.
PRICE_RANGE = [10.0 * i for i in range(1, 100)]


def price_cap(rng: np.random.Generator, price: float) -> float:
    """WebShop's cap above ``price``: of the next four multiples of ten, the larger of two drawn; 1000000 when fewer than two are left."""
    above = [cap for cap in PRICE_RANGE if cap > price][:4]
    if len(above) < 2:
        return 1000000.0
    return float(max(above[i] for i in rng.choice(len(above), size=2, replace=False)))


def request_digest(difficulty: int, request: Request) -> str:
    """The fingerprint of what an instruction asks (its wording aside), which decides its split."""
    text = (
        f"{CATALOGUE_VERSION}|{difficulty}|{request.type}|{','.join(request.attributes)}|"
        f"{','.join(f'{k}={v}' for k, v in request.options)}|{request.price_upper:.2f}"
    )
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def in_split(fingerprint: str, split: str) -> bool:
    """Whether a goal with ``fingerprint`` belongs to ``split``: ``test`` when its last hex digit is odd."""
    return (int(fingerprint[-1], 16) & 1) == (split == "test")


def _ask(rng: np.random.Generator, shop: Catalogue, target: Product) -> Request:
    """What to ask of ``target``: attributes its look-alikes lack first (ties at random), one offered value of each
    option, and WebShop's price cap."""
    level = LEVELS[shop.difficulty]
    ptype = TYPE_BY_NAME[target.type]
    count = min(int(rng.integers(level.asked[0], level.asked[1] + 1)), len(target.attributes))
    others = [p for p in shop.groups[target.group] if p.id != target.id]
    shuffled = [target.attributes[i] for i in rng.permutation(len(target.attributes))]
    ranked = sorted(shuffled, key=lambda a: -sum(a not in p.attributes for p in others))
    chosen = set(ranked[:count])
    options = tuple((name, values[int(rng.integers(len(values)))]) for name, values in target.options)
    return Request(target.type, tuple(a for a in ptype.attributes if a in chosen), options, price_cap(rng, target.price))


def phrase(rng: np.random.Generator, request: Request, level: Level) -> str:
    """The instruction's words for ``request``: attributes in random order, some by their paraphrase, the type
    perhaps by its synonym (as the level says), then the options and the price cap, as WebShop writes them."""
    ptype = TYPE_BY_NAME[request.type]
    name = ptype.synonym if rng.random() < level.synonym else ptype.name
    words = [ATTRIBUTES[a] if rng.random() < level.paraphrased else a for a in request.attributes]
    words = [words[i] for i in rng.permutation(len(words))]
    listed = ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else words[0]
    options = ", and ".join(f"{option}: {value}" for option, value in request.options)
    return f"{_OPENERS[int(rng.integers(len(_OPENERS)))]} {name} that is {listed}, with {options}, and price lower than {request.price_upper:.2f} dollars"


def draw_goal(rng: np.random.Generator, difficulty: int, split: str) -> Goal:
    """The first goal of ``split`` that ``rng`` draws at ``difficulty``: goals are drawn until one's fingerprint falls in the split."""
    shop = catalogue(difficulty)
    while True:
        target = shop.products[int(rng.integers(len(shop.products)))]
        request = _ask(rng, shop, target)
        digest = request_digest(difficulty, request)
        if in_split(digest, split):
            return Goal(phrase(rng, request, LEVELS[difficulty]), request, target.id, digest)


def _phrases(phrases: list[str]) -> re.Pattern[str]:
    """A pattern matching any of ``phrases`` as whole words, longest first."""
    return re.compile(r"(?<![\w])(" + "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True)) + r")(?![\w])")


_TYPE_WORDS = {ptype.name: ptype.name for ptype in TYPES} | {ptype.synonym: ptype.name for ptype in TYPES}
_TYPE_PATTERN = _phrases(list(_TYPE_WORDS))
_ATTRIBUTE_PATTERNS = {ptype.name: _phrases([*ptype.attributes, *(ATTRIBUTES[a] for a in ptype.attributes)]) for ptype in TYPES}
_CANONICAL = {phrase: canonical for canonical, phrase in ATTRIBUTES.items()} | {canonical: canonical for canonical in ATTRIBUTES}
_CAP = re.compile(r"price lower than (\d+(?:\.\d+)?) dollars")


def read_instruction(text: str) -> Request | None:
    """What an instruction states, read back from its words with the public vocabulary (the expert reads it so,
    and so does the vector face); ``None`` when the text is not an instruction of this grammar."""
    found = _TYPE_PATTERN.search(text)
    cap = _CAP.search(text)
    if found is None or cap is None:
        return None
    ptype = TYPE_BY_NAME[_TYPE_WORDS[found.group(1)]]
    head, _, tail = text.rpartition(", with ")
    named = {_CANONICAL[m] for m in _ATTRIBUTE_PATTERNS[ptype.name].findall(head or text)}
    options = []
    for option, values in ptype.options:
        value = re.search(rf"(?<![\w]){re.escape(option)}: ({'|'.join(re.escape(v) for v in sorted(values, key=len, reverse=True))})(?=,|$)", tail)
        if value is not None:
            options.append((option, value.group(1)))
    return Request(ptype.name, tuple(a for a in ptype.attributes if a in named), tuple(options), float(cap.group(1)))


# -------------------------------------------------------------------------------------------------------- reward


def type_reward(bought: ProductType, asked: ProductType) -> dict[str, Any]:
    """WebShop's ``get_type_reward`` on the catalogue's exact types: ``r_type`` and the three tests it rests on."""
    query_match = bought.name == asked.name
    category_match = len(set(bought.path) & set(asked.path)) >= 2
    title_score = len(set(bought.nouns) & set(asked.nouns)) / len(asked.nouns)
    r_type = 1.0 if (query_match or category_match or title_score > 0.2) else 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return {"r_type": r_type, "query_match": query_match, "category_match": category_match, "title_score": title_score}


def reward_terms(product: Product, chosen: Mapping[str, str], request: Request) -> dict[str, Any]:
    """Every term of WebShop's reward for buying ``product`` with the options ``chosen`` (see the module docstring)."""
    terms = type_reward(TYPE_BY_NAME[product.type], TYPE_BY_NAME[request.type])
    attributes = sum(attribute in product.attributes for attribute in request.attributes)
    options = sum(chosen.get(option) == value for option, value in request.options)
    price_ok = product.price <= request.price_upper
    asked = len(request.attributes) + len(request.options) + 1
    reward = (attributes + options + int(price_ok)) / asked * terms["r_type"]
    return {
        "reward": reward,
        **terms,
        "attributes_matched": attributes,
        "attributes_asked": len(request.attributes),
        "options_matched": options,
        "options_asked": len(request.options),
        "price_ok": price_ok,
    }
