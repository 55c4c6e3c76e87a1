"""The database world of the SQL game: schemas, rows and questions generated from a seed, and a read-only SQLite.

:func:`generate_world` draws, from one world seed, a schema of 3 to 8 tables of one theme (a shop, a school,
a library) with integer primary keys and foreign keys, rows for every table, and one question: a *query
program* (filters, joins, grouping, nesting, ordering) written both as SQL (the gold program) and as an
English question that determines its result: it names the columns asked for, in order, says when the order
of rows matters and how ties are broken, and is drawn again until its result is non-empty, small enough to
read, and free of ties that a ``LIMIT`` would cut arbitrarily.

:class:`Database` holds the world in an in-memory SQLite connection and answers a player's SQL read-only:
an authorizer allows only ``SELECT``, reads, recursive CTEs and functions outside a deny-list (extension
loading, randomness, the clock: they would also make replays differ), ``PRAGMA query_only`` refuses writes a
second time, ``setlimit`` caps the length of values, of the SQL and of its parts, and a progress handler stops
a query past a budget of virtual-machine instructions (deterministic, so replays agree), of time, or of memory
growth. Results are capped in rows and in text. Everything is a pure function of the world seed, so a copy of
the game rebuilds its connection from the rows when it is first needed.

:func:`result_match` is the reward's comparison: rows as sets (duplicates ignored), in order when the question
orders them (compared on the sort key, so rows that tie may come in any order), numbers rounded to 2 decimals.
"""

from __future__ import annotations

import hashlib
import math
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

# --------------------------------------------------------------------------- the themes

PEOPLE_GIVEN = (
    "Ada",
    "Bram",
    "Cleo",
    "Dara",
    "Emil",
    "Fenna",
    "Goran",
    "Hedda",
    "Ines",
    "Jory",
    "Kaia",
    "Lior",
    "Mira",
    "Nils",
    "Odile",
    "Piet",
    "Quinn",
    "Rosa",
    "Sven",
    "Tove",
    "Ugo",
    "Vera",
    "Wim",
    "Xena",
    "Yuki",
    "Zora",
)
PEOPLE_FAMILY = (
    "Alder",
    "Brook",
    "Castell",
    "Dunmore",
    "Everly",
    "Falk",
    "Greer",
    "Holm",
    "Ivers",
    "Jansen",
    "Kettle",
    "Lund",
    "Marsh",
    "Norrow",
    "Oakes",
    "Pell",
    "Quist",
    "Rowan",
    "Strand",
    "Thorne",
    "Ulver",
    "Vance",
)
CITIES = ("Arden", "Belmor", "Corvik", "Dunhal", "Estwick", "Farrow", "Galen", "Harwick", "Isel", "Jorvale")
COUNTRIES = ("Avaria", "Brenland", "Cortesia", "Dovenia", "Estmark", "Falvoria")
COMPANY_WORDS = (
    "Acme",
    "Bright",
    "Copper",
    "Delta",
    "Ember",
    "Fable",
    "Granite",
    "Harbor",
    "Iris",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Maple",
    "Nimbus",
    "Orbit",
    "Pioneer",
)
COMPANY_KINDS = ("Works", "Traders", "Supply", "Goods", "Partners", "Foundry")
ADJECTIVES = (
    "Amber",
    "Brisk",
    "Calm",
    "Dusky",
    "Eager",
    "Fleet",
    "Grand",
    "Hollow",
    "Ivory",
    "Jolly",
    "Keen",
    "Lucid",
    "Mellow",
    "Noble",
    "Opal",
    "Prime",
    "Quiet",
    "Rustic",
    "Silver",
    "Tidy",
)
PRODUCT_NOUNS = (
    "Lamp",
    "Kettle",
    "Chair",
    "Blanket",
    "Mug",
    "Clock",
    "Satchel",
    "Lantern",
    "Teapot",
    "Scarf",
    "Basket",
    "Candle",
    "Notebook",
    "Umbrella",
    "Vase",
    "Whistle",
)
CATEGORIES = ("Home", "Garden", "Kitchen", "Outdoor", "Office", "Toys", "Travel", "Crafts", "Music", "Sports")
SUBJECTS = ("Algebra", "Botany", "Chemistry", "Drama", "Economics", "Geology", "History", "Logic", "Optics", "Poetry", "Statistics", "Zoology")
COURSE_LEVELS = ("I", "II", "III", "Seminar", "Workshop")
DEPARTMENTS = ("Sciences", "Humanities", "Arts", "Mathematics", "Languages", "Engineering", "Medicine", "Law")
BUILDINGS = ("North Hall", "South Hall", "East Wing", "West Wing", "Tower")
TITLE_NOUNS = (
    "River",
    "Garden",
    "Winter",
    "Lantern",
    "Harbor",
    "Mirror",
    "Orchard",
    "Signal",
    "Meadow",
    "Compass",
    "Ember",
    "Falcon",
    "Glacier",
    "Island",
)
TITLE_FRAMES = ("The {} Keeper", "Beyond the {}", "A {} in Spring", "The Last {}", "{} of Ash", "Songs of the {}")
GENRES = ("mystery", "fantasy", "history", "poetry", "science", "travel")
STATUSES = ("paid", "shipped", "cancelled")
ROLES = ("clerk", "manager", "buyer", "courier")


@dataclass(frozen=True)
class Column:
    """A column: its name, SQL type and how its values are drawn.

    ``kind`` is ``id`` (the integer primary key), ``name`` (unique text naming the row), ``label`` (text from
    ``pool``), ``int`` or ``real`` (in ``low``..``high``), ``date`` (ISO text in the years ``low``..``high``) or
    ``fk`` (an id of the table ``ref``).
    """

    name: str
    kind: str
    pool: tuple[str, ...] = ()
    low: float = 0
    high: float = 0
    ref: str = ""

    @property
    def sql_type(self) -> str:
        """The column's SQLite type."""
        return {"id": "INTEGER", "fk": "INTEGER", "int": "INTEGER", "real": "REAL"}.get(self.kind, "TEXT")

    @property
    def phrase(self) -> str:
        """The column in words: ``order_date`` is "order date", a foreign key ``customer_id`` "customer"."""
        return (self.name[:-3] if self.kind == "fk" else self.name).replace("_", " ")

    @property
    def numeric(self) -> bool:
        """Whether the column holds numbers a question may compare or aggregate (not keys)."""
        return self.kind in ("int", "real")


@dataclass(frozen=True)
class TableSpec:
    """A table of a theme: its name, the singular noun of one row, how names are made, row counts and columns."""

    name: str
    noun: str
    namer: str
    rows: tuple[int, int]
    columns: tuple[Column, ...]

    def column(self, name: str) -> Column:
        """The column called ``name``."""
        return next(column for column in self.columns if column.name == name)

    @property
    def label(self) -> str:
        """The column that names a row in results: its unique name column, or its id."""
        return (
            "name"
            if any(c.kind == "name" and c.name == "name" for c in self.columns)
            else (next((c.name for c in self.columns if c.kind == "name"), "id"))
        )

    @property
    def refs(self) -> tuple[str, ...]:
        """The tables this table's foreign keys point to."""
        return tuple(column.ref for column in self.columns if column.kind == "fk")


def _id() -> Column:
    return Column("id", "id")


#: The themes, each a list of tables in an order where every foreign key points to an earlier table.
THEMES: dict[str, tuple[TableSpec, ...]] = {
    "shop": (
        TableSpec("categories", "category", "category", (5, 8), (_id(), Column("name", "name"))),
        TableSpec("suppliers", "supplier", "company", (4, 8), (_id(), Column("name", "name"), Column("country", "label", COUNTRIES))),
        TableSpec(
            "products",
            "product",
            "product",
            (15, 30),
            (
                _id(),
                Column("name", "name"),
                Column("category_id", "fk", ref="categories"),
                Column("supplier_id", "fk", ref="suppliers"),
                Column("price", "real", low=2, high=150),
                Column("stock", "int", low=0, high=400),
            ),
        ),
        TableSpec(
            "customers",
            "customer",
            "person",
            (12, 25),
            (_id(), Column("name", "name"), Column("city", "label", CITIES), Column("join_date", "date", low=2018, high=2024)),
        ),
        TableSpec(
            "orders",
            "order",
            "",
            (20, 40),
            (
                _id(),
                Column("customer_id", "fk", ref="customers"),
                Column("order_date", "date", low=2023, high=2024),
                Column("status", "label", STATUSES),
            ),
        ),
        TableSpec(
            "order_items",
            "order item",
            "",
            (30, 70),
            (_id(), Column("order_id", "fk", ref="orders"), Column("product_id", "fk", ref="products"), Column("quantity", "int", low=1, high=12)),
        ),
        TableSpec(
            "employees",
            "employee",
            "person",
            (6, 14),
            (_id(), Column("name", "name"), Column("role", "label", ROLES), Column("salary", "int", low=28000, high=95000)),
        ),
        TableSpec(
            "reviews",
            "review",
            "",
            (15, 40),
            (_id(), Column("product_id", "fk", ref="products"), Column("customer_id", "fk", ref="customers"), Column("rating", "int", low=1, high=5)),
        ),
    ),
    "school": (
        TableSpec(
            "departments",
            "department",
            "department",
            (4, 7),
            (_id(), Column("name", "name"), Column("building", "label", BUILDINGS), Column("budget", "int", low=50000, high=400000)),
        ),
        TableSpec(
            "teachers",
            "teacher",
            "person",
            (6, 14),
            (
                _id(),
                Column("name", "name"),
                Column("department_id", "fk", ref="departments"),
                Column("salary", "int", low=35000, high=90000),
                Column("hired", "date", low=2005, high=2023),
            ),
        ),
        TableSpec(
            "courses",
            "course",
            "course",
            (8, 18),
            (
                _id(),
                Column("name", "name"),
                Column("department_id", "fk", ref="departments"),
                Column("teacher_id", "fk", ref="teachers"),
                Column("credits", "int", low=1, high=6),
            ),
        ),
        TableSpec(
            "students",
            "student",
            "person",
            (15, 30),
            (_id(), Column("name", "name"), Column("city", "label", CITIES), Column("year", "int", low=1, high=4)),
        ),
        TableSpec(
            "enrollments",
            "enrollment",
            "",
            (30, 70),
            (_id(), Column("student_id", "fk", ref="students"), Column("course_id", "fk", ref="courses"), Column("grade", "int", low=40, high=100)),
        ),
        TableSpec("rooms", "room", "room", (4, 10), (_id(), Column("name", "name"), Column("capacity", "int", low=10, high=120))),
        TableSpec(
            "clubs",
            "club",
            "club",
            (3, 8),
            (_id(), Column("name", "name"), Column("room_id", "fk", ref="rooms"), Column("fee", "real", low=0, high=60)),
        ),
        TableSpec(
            "memberships",
            "membership",
            "",
            (15, 40),
            (
                _id(),
                Column("student_id", "fk", ref="students"),
                Column("club_id", "fk", ref="clubs"),
                Column("join_date", "date", low=2021, high=2024),
            ),
        ),
    ),
    "library": (
        TableSpec("branches", "branch", "branch", (3, 6), (_id(), Column("name", "name"), Column("city", "label", CITIES))),
        TableSpec("publishers", "publisher", "company", (4, 8), (_id(), Column("name", "name"), Column("country", "label", COUNTRIES))),
        TableSpec(
            "authors",
            "author",
            "person",
            (8, 16),
            (_id(), Column("name", "name"), Column("country", "label", COUNTRIES), Column("birth_year", "int", low=1920, high=1995)),
        ),
        TableSpec(
            "books",
            "book",
            "title",
            (15, 30),
            (
                _id(),
                Column("title", "name"),
                Column("author_id", "fk", ref="authors"),
                Column("publisher_id", "fk", ref="publishers"),
                Column("genre", "label", GENRES),
                Column("pages", "int", low=80, high=900),
                Column("year", "int", low=1950, high=2024),
            ),
        ),
        TableSpec(
            "members",
            "member",
            "person",
            (12, 25),
            (_id(), Column("name", "name"), Column("city", "label", CITIES), Column("join_date", "date", low=2015, high=2024)),
        ),
        TableSpec(
            "loans",
            "loan",
            "",
            (30, 70),
            (
                _id(),
                Column("book_id", "fk", ref="books"),
                Column("member_id", "fk", ref="members"),
                Column("branch_id", "fk", ref="branches"),
                Column("loan_date", "date", low=2023, high=2024),
                Column("days", "int", low=1, high=60),
            ),
        ),
        TableSpec(
            "events",
            "event",
            "event",
            (4, 10),
            (_id(), Column("name", "name"), Column("branch_id", "fk", ref="branches"), Column("seats", "int", low=10, high=200)),
        ),
    ),
}

#: Tables in a world, by difficulty: (fewest, most); within 3 to 8.
TABLE_COUNTS = {1: (3, 4), 2: (3, 5), 3: (4, 6), 4: (5, 7), 5: (6, 8)}
#: Most rows a question's gold result may have (a longer answer is drawn again).
MAX_GOLD_ROWS = 20
#: Programs drawn for one question before the world is drawn again (never reached in practice).
QUESTION_TRIES = 200


def _names(namer: str, count: int, rng: np.random.Generator) -> list[str]:
    """``count`` distinct names of the kind ``namer``, drawn from the combinations of its word pools."""
    if namer == "person":
        pools: tuple[tuple[str, ...], ...] = (PEOPLE_GIVEN, PEOPLE_FAMILY)
        frame = "{} {}"
    elif namer == "company":
        pools, frame = (COMPANY_WORDS, COMPANY_KINDS), "{} {}"
    elif namer == "product":
        pools, frame = (ADJECTIVES, PRODUCT_NOUNS), "{} {}"
    elif namer == "course":
        pools, frame = (SUBJECTS, COURSE_LEVELS), "{} {}"
    elif namer == "title":
        pools, frame = (TITLE_FRAMES, TITLE_NOUNS), ""
    elif namer == "category":
        return [CATEGORIES[i] for i in rng.permutation(len(CATEGORIES))[:count]]
    elif namer == "department":
        return [DEPARTMENTS[i] for i in rng.permutation(len(DEPARTMENTS))[:count]]
    elif namer == "branch":
        return [f"{CITIES[i]} Branch" for i in rng.permutation(len(CITIES))[:count]]
    elif namer == "room":
        return [f"Room {n}" for n in sorted(rng.choice(np.arange(100, 400), size=count, replace=False).tolist())]
    elif namer == "club":
        return [f"{SUBJECTS[i]} Club" for i in rng.permutation(len(SUBJECTS))[:count]]
    elif namer == "event":
        return [f"{ADJECTIVES[i]} Evening" for i in rng.permutation(len(ADJECTIVES))[:count]]
    else:
        raise ValueError(f"unknown namer {namer!r}")
    first, second = pools
    picks = rng.choice(len(first) * len(second), size=count, replace=False).tolist()
    if namer == "title":
        return [first[p // len(second)].format(second[p % len(second)]) for p in picks]
    return [frame.format(first[p // len(second)], second[p % len(second)]) for p in picks]


def _values(column: Column, count: int, rng: np.random.Generator, rows: dict[str, list[tuple]]) -> list[Any]:
    """``count`` values of a non-key, non-name column (``rows``: the rows of the tables drawn before)."""
    if column.kind == "label":
        return [column.pool[i] for i in rng.integers(len(column.pool), size=count).tolist()]
    if column.kind == "int":
        return rng.integers(int(column.low), int(column.high) + 1, size=count).tolist()
    if column.kind == "real":
        return [round(float(v), 2) for v in rng.uniform(column.low, column.high, size=count)]
    if column.kind == "date":
        years = rng.integers(int(column.low), int(column.high) + 1, size=count).tolist()
        months = rng.integers(1, 13, size=count).tolist()
        days = rng.integers(1, 29, size=count).tolist()
        return [f"{y:04d}-{m:02d}-{d:02d}" for y, m, d in zip(years, months, days)]
    if column.kind == "fk":
        # Skewed towards some parents, so that counts per parent differ and some parents may have none.
        parents = len(rows[column.ref])
        weights = rng.uniform(0.2, 1.0, size=parents) ** 2
        return (rng.choice(parents, size=count, p=weights / weights.sum()) + 1).tolist()
    raise ValueError(f"no values for a column of kind {column.kind!r}")


def _pick_tables(theme: tuple[TableSpec, ...], count: int, rng: np.random.Generator) -> list[TableSpec]:
    """``count`` tables of ``theme`` closed under foreign keys, in the theme's order: tables with foreign keys are
    preferred as the starting points, so that joins exist."""
    by_name = {spec.name: spec for spec in theme}

    def closure(name: str, into: set[str]) -> set[str]:
        into.add(name)
        for ref in by_name[name].refs:
            if ref not in into:
                closure(ref, into)
        return into

    chosen: set[str] = set()
    for index in rng.permutation(len(theme)).tolist():
        spec = theme[index]
        grown = closure(spec.name, set(chosen))
        if len(grown) <= count:
            chosen = grown
        if len(chosen) == count:
            break
    return [spec for spec in theme if spec.name in chosen]


# --------------------------------------------------------------------------- questions


@dataclass(frozen=True)
class Program:
    """A question's query program: the gold SQL, the question in English, and how its result is compared.

    ``ordered`` is true when the question asks for an order; ``order_key`` holds the indices of the result's
    columns the order is on (rows equal on them may come in any order). ``family`` names the program's shape.
    """

    sql: str
    question: str
    family: str
    ordered: bool = False
    order_key: tuple[int, ...] = ()


OPS = {">": "greater than", "<": "less than", ">=": "at least", "<=": "at most"}
DATE_OPS = {">": "after", "<": "before", ">=": "on or after", "<=": "on or before"}
AGGREGATES = {"AVG": "average", "MAX": "largest", "MIN": "smallest", "SUM": "total"}


def _quote(value: Any) -> str:
    """A value as an SQL literal."""
    return "'" + value.replace("'", "''") + "'" if isinstance(value, str) else repr(value)


def _shown(value: Any) -> str:
    """A value as a question states it: text in single quotes, numbers plain."""
    return f"'{value}'" if isinstance(value, str) else f"{value:g}" if isinstance(value, float) else str(value)


def _plural(noun: str) -> str:
    """The plural of a table's noun."""
    if noun.endswith("y") and noun[-2:] != "ey":
        return noun[:-1] + "ies"
    if noun.endswith(("s", "ch", "sh")):
        return noun + "es"
    return noun + "s"


class Drafter:
    """Draws query programs over one world's tables and rows; each family returns a :class:`Program` or ``None``
    when the world has no tables of the shape it needs."""

    def __init__(self, tables: list[TableSpec], rows: dict[str, list[tuple]], rng: np.random.Generator):
        self.tables = tables
        self.rows = rows
        self.rng = rng
        self.by_name = {spec.name: spec for spec in tables}

    # ---------------------------------------------------------------- picking
    def pick(self, items: Sequence[Any]) -> Any:
        """One of ``items``, uniformly."""
        return items[int(self.rng.integers(len(items)))]

    def values(self, spec: TableSpec, column: Column) -> list[Any]:
        """The values of ``column`` in ``spec``'s rows."""
        index = spec.columns.index(column)
        return [row[index] for row in self.rows[spec.name]]

    def condition(self, spec: TableSpec, alias: str = "") -> tuple[str, str] | None:
        """A condition on one of ``spec``'s value columns as (SQL, words), its value taken from the rows."""
        candidates = [c for c in spec.columns if c.kind in ("int", "real", "date", "label")]
        if not candidates:
            return None
        column = self.pick(candidates)
        prefix = f"{alias}." if alias else ""
        distinct = sorted(set(self.values(spec, column)))
        if column.kind == "label":
            value = self.pick(distinct)
            return f"{prefix}{column.name} = {_quote(value)}", f"{column.phrase} is {_shown(value)}"
        op = self.pick(list(OPS))
        # A value strictly inside the range of the rows, so both sides of the comparison are usually non-empty.
        inner = distinct[1:-1] or distinct
        value = self.pick(inner)
        words = (DATE_OPS if column.kind == "date" else OPS)[op]
        return f"{prefix}{column.name} {op} {_quote(value)}", f"{column.phrase} is {words} {_shown(value)}"

    def numeric(self, spec: TableSpec) -> Column | None:
        """One of ``spec``'s number columns, or None."""
        columns = [c for c in spec.columns if c.numeric]
        return self.pick(columns) if columns else None

    def links(self) -> list[tuple[TableSpec, Column, TableSpec]]:
        """Every foreign key as (child table, key column, parent table)."""
        return [(child, column, self.by_name[column.ref]) for child in self.tables for column in child.columns if column.kind == "fk"]

    def chains(self) -> list[tuple[TableSpec, Column, TableSpec, Column, TableSpec]]:
        """Every path of two foreign keys: child -> parent -> grandparent."""
        return [
            (child, key, parent, key2, self.by_name[key2.ref]) for child, key, parent in self.links() for key2 in parent.columns if key2.kind == "fk"
        ]

    @staticmethod
    def role(key: Column, parent: TableSpec) -> str:
        """How a child names its parent: the key's phrase ("customer", "author")."""
        return key.phrase if key.phrase else parent.noun

    # ---------------------------------------------------------------- difficulty 1
    def select_filter(self) -> Program | None:
        """Single-table filter: the label and one value column of the rows meeting a condition."""
        spec = self.pick(self.tables)
        condition = self.condition(spec)
        if condition is None:
            return None
        sql_cond, words = condition
        column = sql_cond.split(" ")[0]
        label = spec.label
        if column == label:
            return None
        return Program(
            f"SELECT {label}, {column} FROM {spec.name} WHERE {sql_cond}",
            f"List the {label} and the {column.replace('_', ' ')} of every {spec.noun} whose {words}. Return two columns: {label}, {column}.",
            "select_filter",
        )

    def count_filter(self) -> Program | None:
        """Single-table count of the rows meeting a condition."""
        spec = self.pick(self.tables)
        condition = self.condition(spec)
        if condition is None:
            return None
        sql_cond, words = condition
        return Program(
            f"SELECT COUNT(*) FROM {spec.name} WHERE {sql_cond}",
            f"How many {_plural(spec.noun)} are there whose {words}? Return one number.",
            "count_filter",
        )

    def select_labels(self) -> Program | None:
        """Single-table filter on a text column, returning the labels."""
        candidates = [s for s in self.tables if any(c.kind == "label" for c in s.columns)]
        if not candidates:
            return None
        spec = self.pick(candidates)
        column = self.pick([c for c in spec.columns if c.kind == "label"])
        value = self.pick(sorted(set(self.values(spec, column))))
        return Program(
            f"SELECT {spec.label} FROM {spec.name} WHERE {column.name} = {_quote(value)}",
            f"List the {spec.label} of every {spec.noun} whose {column.phrase} is {_shown(value)}. Return one column: {spec.label}.",
            "select_labels",
        )

    # ---------------------------------------------------------------- difficulty 2
    def top_k(self) -> Program | None:
        """The k rows with the highest (or lowest) value of a number column, in that order."""
        spec = self.pick(self.tables)
        column = self.numeric(spec)
        if column is None:
            return None
        k = int(self.rng.integers(2, 6))
        high = bool(self.rng.integers(2))
        word, direction, order = ("highest", "DESC", "highest to lowest") if high else ("lowest", "ASC", "lowest to highest")
        return Program(
            f"SELECT {spec.label}, {column.name} FROM {spec.name} ORDER BY {column.name} {direction} LIMIT {k}",
            f"Which {k} {_plural(spec.noun)} have the {word} {column.phrase}? Return two columns, {spec.label} and "
            f"{column.name}, ordered by {column.phrase} from {order}.",
            "top_k",
            ordered=True,
            order_key=(1,),
        )

    def aggregate(self) -> Program | None:
        """An aggregate of a number column over the rows meeting a condition."""
        spec = self.pick(self.tables)
        column = self.numeric(spec)
        condition = self.condition(spec)
        if column is None or condition is None:
            return None
        function = self.pick(list(AGGREGATES))
        sql_cond, words = condition
        rounding = " (rounded to 2 decimals)" if function == "AVG" else ""
        return Program(
            f"SELECT {function}({column.name}) FROM {spec.name} WHERE {sql_cond}",
            f"What is the {AGGREGATES[function]} {column.phrase} of the {_plural(spec.noun)} whose {words}? Return one number{rounding}.",
            "aggregate",
        )

    def two_conditions(self) -> Program | None:
        """Two conditions joined by AND or OR, the labels sorted alphabetically."""
        spec = self.pick(self.tables)
        first, second = self.condition(spec), self.condition(spec)
        if first is None or second is None or first[0].split(" ")[0] == second[0].split(" ")[0]:
            return None
        joiner = self.pick(["AND", "OR"])
        words = "both" if joiner == "AND" else "either"
        link = "and" if joiner == "AND" else "or"
        return Program(
            f"SELECT {spec.label} FROM {spec.name} WHERE {first[0]} {joiner} {second[0]} ORDER BY {spec.label}",
            f"List the {spec.label} of every {spec.noun} for which {words} its {first[1]} {link} its {second[1]}. "
            f"Return one column, {spec.label}, sorted in ascending order.",
            "two_conditions",
            ordered=True,
            order_key=(0,),
        )

    # ---------------------------------------------------------------- difficulty 3
    def join_filter(self) -> Program | None:
        """Children whose parent meets a condition, with the parent's label."""
        links = self.links()
        if not links:
            return None
        child, key, parent = self.pick(links)
        condition = self.condition(parent, "p")
        if condition is None:
            return None
        sql_cond, words = condition
        role = self.role(key, parent)
        return Program(
            f"SELECT c.{child.label}, p.{parent.label} FROM {child.name} AS c JOIN {parent.name} AS p ON c.{key.name} = p.id WHERE {sql_cond}",
            f"For every {child.noun} whose {role}'s {words}, give the {child.noun}'s {child.label} and its {role}'s "
            f"{parent.label}. Return two columns: {child.noun} {child.label}, {role} {parent.label}.",
            "join_filter",
        )

    def group_count(self) -> Program | None:
        """The number of children of each parent that has any."""
        links = self.links()
        if not links:
            return None
        child, key, parent = self.pick(links)
        role = self.role(key, parent)
        return Program(
            f"SELECT p.{parent.label}, COUNT(*) FROM {child.name} AS c JOIN {parent.name} AS p ON c.{key.name} = p.id GROUP BY p.id",
            f"For each {parent.noun} that is the {role} of at least one {child.noun}, give its {parent.label} and the number "
            f"of {_plural(child.noun)} whose {role} it is. Return two columns: {parent.label}, count.",
            "group_count",
        )

    def group_aggregate(self) -> Program | None:
        """An aggregate of the children's numbers per parent."""
        links = [(c, k, p) for c, k, p in self.links() if any(col.numeric for col in c.columns)]
        if not links:
            return None
        child, key, parent = self.pick(links)
        column = self.numeric(child)
        assert column is not None
        function = self.pick(list(AGGREGATES))
        role = self.role(key, parent)
        rounding = " (rounded to 2 decimals)" if function == "AVG" else ""
        return Program(
            f"SELECT p.{parent.label}, {function}(c.{column.name}) FROM {child.name} AS c JOIN {parent.name} AS p "
            f"ON c.{key.name} = p.id GROUP BY p.id",
            f"For each {parent.noun} that is the {role} of at least one {child.noun}, give its {parent.label} and the "
            f"{AGGREGATES[function]} {column.phrase} of the {_plural(child.noun)} whose {role} it is{rounding}. "
            f"Return two columns: {parent.label}, {AGGREGATES[function]} {column.phrase}.",
            "group_aggregate",
        )

    # ---------------------------------------------------------------- difficulty 4
    def having_count(self) -> Program | None:
        """Parents with at least k children, most first (ties by label)."""
        links = self.links()
        if not links:
            return None
        child, key, parent = self.pick(links)
        k = int(self.rng.integers(2, 5))
        role = self.role(key, parent)
        return Program(
            f"SELECT p.{parent.label}, COUNT(*) AS n FROM {child.name} AS c JOIN {parent.name} AS p ON c.{key.name} = p.id "
            f"GROUP BY p.id HAVING COUNT(*) >= {k} ORDER BY n DESC, p.{parent.label} ASC",
            f"Which {_plural(parent.noun)} are the {role} of at least {k} {_plural(child.noun)}? Return two columns, "
            f"{parent.label} and the number of such {_plural(child.noun)}, ordered by that number from highest to lowest, "
            f"ties by {parent.label} in ascending order.",
            "having_count",
            ordered=True,
            order_key=(1, 0),
        )

    def above_average(self) -> Program | None:
        """Rows whose number is above the average of the rows meeting a condition (a nested query)."""
        spec = self.pick(self.tables)
        column = self.numeric(spec)
        if column is None:
            return None
        return Program(
            f"SELECT {spec.label}, {column.name} FROM {spec.name} WHERE {column.name} > (SELECT AVG({column.name}) FROM {spec.name})",
            f"Which {_plural(spec.noun)} have a {column.phrase} above the average {column.phrase} of all "
            f"{_plural(spec.noun)}? Return two columns: {spec.label}, {column.name}.",
            "above_average",
        )

    def without_children(self) -> Program | None:
        """Parents that no child points to (NOT IN a subquery)."""
        links = self.links()
        if not links:
            return None
        child, key, parent = self.pick(links)
        role = self.role(key, parent)
        return Program(
            f"SELECT {parent.label} FROM {parent.name} WHERE id NOT IN (SELECT {key.name} FROM {child.name})",
            f"Which {_plural(parent.noun)} are not the {role} of any {child.noun}? Return one column: {parent.label}.",
            "without_children",
        )

    def filtered_group(self) -> Program | None:
        """A per-parent sum of the children that meet a condition."""
        links = [(c, k, p) for c, k, p in self.links() if any(col.numeric for col in c.columns)]
        if not links:
            return None
        child, key, parent = self.pick(links)
        column = self.numeric(child)
        condition = self.condition(child, "c")
        assert column is not None
        if condition is None:
            return None
        sql_cond, words = condition
        role = self.role(key, parent)
        return Program(
            f"SELECT p.{parent.label}, SUM(c.{column.name}) FROM {child.name} AS c JOIN {parent.name} AS p "
            f"ON c.{key.name} = p.id WHERE {sql_cond} GROUP BY p.id",
            f"Considering only the {_plural(child.noun)} whose {words}: for each {parent.noun} that is the {role} of at "
            f"least one of them, give its {parent.label} and the total {column.phrase} of those {_plural(child.noun)}. "
            f"Return two columns: {parent.label}, total {column.phrase}.",
            "filtered_group",
        )

    # ---------------------------------------------------------------- difficulty 5
    def two_hop_group(self) -> Program | None:
        """Children counted per grandparent, through their parent (two joins and grouping)."""
        chains = self.chains()
        if not chains:
            return None
        child, key, parent, key2, grand = self.pick(chains)
        role, role2 = self.role(key, parent), self.role(key2, grand)
        return Program(
            f"SELECT g.{grand.label}, COUNT(*) FROM {child.name} AS c JOIN {parent.name} AS p ON c.{key.name} = p.id "
            f"JOIN {grand.name} AS g ON p.{key2.name} = g.id GROUP BY g.id",
            f"Each {child.noun} has a {role}, and each {parent.noun} a {role2}. For each {grand.noun} that is the {role2} "
            f"of the {role} of at least one {child.noun}, give its {grand.label} and how many {_plural(child.noun)} have a "
            f"{role} whose {role2} it is. Return two columns: {grand.label}, count.",
            "two_hop_group",
        )

    def top_groups(self) -> Program | None:
        """The k parents with the largest sum of a child number, largest first (grouping, ordering, limit)."""
        links = [(c, k, p) for c, k, p in self.links() if any(col.numeric for col in c.columns)]
        if not links:
            return None
        child, key, parent = self.pick(links)
        column = self.numeric(child)
        assert column is not None
        k = int(self.rng.integers(2, 5))
        role = self.role(key, parent)
        return Program(
            f"SELECT p.{parent.label}, SUM(c.{column.name}) AS total FROM {child.name} AS c JOIN {parent.name} AS p "
            f"ON c.{key.name} = p.id GROUP BY p.id ORDER BY total DESC LIMIT {k}",
            f"Which {k} {_plural(parent.noun)} have the largest total {column.phrase} over the {_plural(child.noun)} whose "
            f"{role} they are? Return two columns, {parent.label} and that total, ordered by that total from highest to lowest.",
            "top_groups",
            ordered=True,
            order_key=(1,),
        )

    def above_average_count(self) -> Program | None:
        """Parents with more children than the average per parent (correlated and scalar subqueries)."""
        links = self.links()
        if not links:
            return None
        child, key, parent = self.pick(links)
        role = self.role(key, parent)
        return Program(
            f"SELECT p.{parent.label}, (SELECT COUNT(*) FROM {child.name} AS c WHERE c.{key.name} = p.id) AS n "
            f"FROM {parent.name} AS p WHERE (SELECT COUNT(*) FROM {child.name} AS c WHERE c.{key.name} = p.id) > "
            f"(SELECT COUNT(*) * 1.0 FROM {child.name}) / (SELECT COUNT(*) FROM {parent.name}) ORDER BY n DESC",
            f"Which {_plural(parent.noun)} are the {role} of more {_plural(child.noun)} than the average number of "
            f"{_plural(child.noun)} per {parent.noun} (counting every {parent.noun}, including those with none)? Return two "
            f"columns, {parent.label} and its number of {_plural(child.noun)}, ordered by that number from highest to lowest.",
            "above_average_count",
            ordered=True,
            order_key=(1,),
        )

    #: The families of each difficulty.
    FAMILIES: dict[int, tuple[str, ...]] = {
        1: ("select_filter", "count_filter", "select_labels"),
        2: ("top_k", "aggregate", "two_conditions"),
        3: ("join_filter", "group_count", "group_aggregate"),
        4: ("having_count", "above_average", "without_children", "filtered_group"),
        5: ("two_hop_group", "top_groups", "above_average_count"),
    }

    def draw(self, difficulty: int) -> Program | None:
        """A program of one of the difficulty's families, or None when the family does not fit the world."""
        family: Callable[[], Program | None] = getattr(self, self.pick(self.FAMILIES[difficulty]))
        return family()


# --------------------------------------------------------------------------- the database


#: The functions a player's SQL may not call: extension loading, pointers, randomness and the clock (they would
#: make a replay differ), and huge zero blobs.
DENIED_FUNCTIONS = frozenset(
    {
        "load_extension",
        "fts3_tokenizer",
        "random",
        "randomblob",
        "zeroblob",
        "date",
        "time",
        "datetime",
        "julianday",
        "strftime",
        "unixepoch",
        "timediff",
        "current_date",
        "current_time",
        "current_timestamp",
    }
)
#: The authorizer actions a player's SQL may take: a SELECT, reading columns, calling functions, recursive CTEs.
ALLOWED_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE})
#: Virtual-machine instructions between two checks of the caps.
CHECK_EVERY = 1000
#: The limits set on every connection with ``setlimit``: longest value, longest SQL text, most columns, deepest
#: expression tree, most terms of a compound SELECT, longest LIKE pattern, most function arguments.
LIMITS = {
    sqlite3.SQLITE_LIMIT_LENGTH: 20_000,
    sqlite3.SQLITE_LIMIT_SQL_LENGTH: 20_000,
    sqlite3.SQLITE_LIMIT_COLUMN: 100,
    sqlite3.SQLITE_LIMIT_EXPR_DEPTH: 100,
    sqlite3.SQLITE_LIMIT_COMPOUND_SELECT: 50,
    sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH: 1000,
    sqlite3.SQLITE_LIMIT_FUNCTION_ARG: 16,
    sqlite3.SQLITE_LIMIT_ATTACHED: 0,
}


class QueryError(Exception):
    """A player's SQL could not run; the message says why and what to do, and names nothing hidden."""


def _resident_bytes() -> Callable[[], int] | None:
    """A reader of this process's resident memory in bytes (Linux ``/proc/self/statm``), or None elsewhere."""
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY)
    except OSError:
        return None
    page = os.sysconf("SC_PAGE_SIZE")

    def read() -> int:
        return int(os.pread(fd, 64, 0).split()[1]) * page

    return read


_RESIDENT = _resident_bytes()


@dataclass(frozen=True)
class Caps:
    """The caps of one query: VM instructions (deterministic), seconds and memory growth (backstops), rows, text."""

    instructions: int = 20_000_000
    seconds: float = 1.0
    memory_bytes: int = 128 << 20
    rows: int = 50
    chars: int = 8000


class Database:
    """A world's tables in an in-memory SQLite connection, answering SQL read-only under :class:`Caps`.

    The host builds the tables and runs its gold programs through :meth:`host_rows` before the guards are set;
    players' SQL goes through :meth:`run`, which is guarded. Not picklable: games keep the rows and rebuild.
    """

    def __init__(self, tables: list[TableSpec], rows: dict[str, list[tuple]], caps: Caps):
        self.caps = caps
        self.conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        for spec in tables:
            columns = []
            for column in spec.columns:
                if column.kind == "id":
                    columns.append(f"{column.name} INTEGER PRIMARY KEY")
                elif column.kind == "fk":
                    columns.append(f"{column.name} INTEGER NOT NULL REFERENCES {column.ref}(id)")
                elif column.kind == "name":
                    columns.append(f"{column.name} TEXT NOT NULL UNIQUE")
                else:
                    columns.append(f"{column.name} {column.sql_type} NOT NULL")
            self.conn.execute(f"CREATE TABLE {spec.name} ({', '.join(columns)})")
            marks = ", ".join("?" * len(spec.columns))
            self.conn.executemany(f"INSERT INTO {spec.name} VALUES ({marks})", rows[spec.name])
        self.guarded = False
        self._steps = 0
        self._deadline = 0.0
        self._memory_floor = 0
        self._stopped = ""

    def host_rows(self, sql: str) -> list[tuple]:
        """All rows of the host's own ``sql`` (a gold program), before the guards are set."""
        assert not self.guarded, "the host's queries run before the guards"
        return self.conn.execute(sql).fetchall()

    def guard(self) -> None:
        """Set the guards for players' SQL: read-only, the authorizer, the limits and the progress handler."""
        conn = self.conn
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA temp_store = MEMORY")  # sorts of huge joins never spill to files on the host
        for limit, value in LIMITS.items():
            conn.setlimit(limit, value)
        conn.set_authorizer(_authorize)
        conn.set_progress_handler(self._progress, CHECK_EVERY)
        self.guarded = True

    def _progress(self) -> int:
        """Nonzero (stop the query) past the instruction budget, the deadline or the memory cap."""
        self._steps += 1
        caps = self.caps
        if self._steps * CHECK_EVERY > caps.instructions:
            self._stopped = f"it ran past {caps.instructions:,} steps of SQLite's virtual machine"
        elif time.perf_counter() > self._deadline:
            self._stopped = f"it ran past {caps.seconds:g} s"
        elif _RESIDENT is not None and self._steps % 16 == 0 and _RESIDENT() - self._memory_floor > caps.memory_bytes:
            self._stopped = f"it used more than {caps.memory_bytes >> 20} MiB of memory"
        return 1 if self._stopped else 0

    def run(self, sql: str, rows: int | None = None) -> tuple[list[str], list[tuple], bool]:
        """Run a player's ``sql``: (column names, up to ``rows`` rows (default ``caps.rows``), whether more were left out).

        Raises :class:`QueryError` with a hint for SQL that does not parse, is not a read-only SELECT, calls a
        denied function, or runs past a cap.
        """
        if not self.guarded:
            self.guard()
        self._steps, self._stopped = 0, ""
        self._deadline = time.perf_counter() + self.caps.seconds
        self._memory_floor = _RESIDENT() if _RESIDENT is not None else 0
        limit = self.caps.rows if rows is None else rows
        cursor = self.conn.cursor()
        try:
            cursor.execute(sql)
            if cursor.description is None:
                raise QueryError("only a SELECT (or WITH ... SELECT) returns rows; this statement returns none.")
            columns = [entry[0] for entry in cursor.description]
            found = cursor.fetchmany(limit + 1)
        except (sqlite3.Warning, sqlite3.ProgrammingError) as error:
            if "one statement" in str(error):
                raise QueryError("send one SELECT statement per call, with nothing after its ';'.") from None
            raise QueryError(self._explain(error)) from None
        except sqlite3.Error as error:
            raise QueryError(self._explain(error)) from None
        except (OverflowError, ValueError, MemoryError) as error:
            raise QueryError(f"the query could not run ({type(error).__name__}: {str(error)[:200]}).") from None
        finally:
            cursor.close()
        return columns, found[:limit], len(found) > limit

    def _explain(self, error: sqlite3.Error | sqlite3.Warning) -> str:
        """A player-facing message for a failed query, with what to do."""
        text = str(error)[:300]
        if self._stopped:
            return (
                f"the query was stopped: {self._stopped}. Every table here is small; avoid unbounded recursive CTEs "
                f"and cross joins of many tables, and add join conditions or a LIMIT."
            )
        if "not authorized" in text or "prohibited" in text:
            return (
                "not allowed: the database is read-only and only SELECT queries may run (no INSERT, UPDATE, DELETE, "
                "CREATE, DROP, ATTACH, PRAGMA or transactions) and these functions are denied: "
                f"{', '.join(sorted(DENIED_FUNCTIONS))}. Dates are ISO text ('YYYY-MM-DD'): compare them as text "
                "or use substr()."
            )
        if "too big" in text or "too long" in text or "too many" in text or "too deep" in text:
            return f"{text}: a value, the SQL text or the query is over the database's limits; make it smaller."
        if "readonly" in text:
            return "the database is read-only: only SELECT queries may run."
        return f"{text}. Check the table and column names with list_tables and describe."

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()


def _authorize(action: int, first: str | None, second: str | None, database: str | None, trigger: str | None) -> int:
    """The authorizer of players' SQL: SELECT, reads, recursive CTEs and functions outside the deny-list."""
    if action not in ALLOWED_ACTIONS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (second or "").lower() in DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


# --------------------------------------------------------------------------- the world


@dataclass
class World:
    """One generated world: its theme, tables, rows, question program and the gold result (hidden)."""

    theme: str
    tables: list[TableSpec]
    rows: dict[str, list[tuple]]
    program: Program
    gold: list[tuple]


def _table_rows(tables: list[TableSpec], rng: np.random.Generator) -> dict[str, list[tuple]]:
    """Rows for every table (parents first, so foreign keys point to existing ids)."""
    rows: dict[str, list[tuple]] = {}
    for spec in tables:
        count = int(rng.integers(spec.rows[0], spec.rows[1] + 1))
        columns: list[list[Any]] = []
        for column in spec.columns:
            if column.kind == "id":
                columns.append(list(range(1, count + 1)))
            elif column.kind == "name":
                columns.append(_names(spec.namer, count, rng))
            else:
                columns.append(_values(column, count, rng, rows))
        rows[spec.name] = [tuple(values[i] for values in columns) for i in range(count)]
    return rows


def _acceptable(program: Program, database: Database) -> list[tuple] | None:
    """The gold rows of ``program`` if its question is fair: non-empty, at most :data:`MAX_GOLD_ROWS` rows, no NULL
    aggregate, and for a LIMIT no tie between the last row kept and the first row cut; otherwise None."""
    gold = database.host_rows(program.sql)
    if not gold or len(gold) > MAX_GOLD_ROWS or any(value is None for row in gold for value in row):
        return None
    if gold == [(0,)] and program.family == "count_filter":
        return None
    if " LIMIT " in program.sql:
        head, _, limit = program.sql.rpartition(" LIMIT ")
        whole = database.host_rows(head)
        k = int(limit)
        if len(whole) <= k or [whole[k - 1][i] for i in program.order_key] == [whole[k][i] for i in program.order_key]:
            return None
    return gold


def generate_world(world_seed: int, difficulty: int, caps: Caps) -> tuple[World, Database]:
    """The world of ``world_seed`` at ``difficulty`` and its guarded database; the same seed gives the same world."""
    rng = np.random.default_rng(world_seed)
    theme_names = sorted(THEMES)
    while True:
        theme = theme_names[int(rng.integers(len(theme_names)))]
        low, high = TABLE_COUNTS[difficulty]
        tables = _pick_tables(THEMES[theme], int(rng.integers(low, high + 1)), rng)
        rows = _table_rows(tables, rng)
        database = Database(tables, rows, caps)
        drafter = Drafter(tables, rows, rng)
        for _ in range(QUESTION_TRIES):
            program = drafter.draw(difficulty)
            if program is None:
                continue
            gold = _acceptable(program, database)
            if gold is not None:
                database.guard()
                return World(theme, tables, rows, program, gold), database
        database.close()


# --------------------------------------------------------------------------- comparing results


def _hundredths(number: float) -> Any:
    """A number as a whole count of hundredths, rounded half up (as SQLite's ROUND) with room for binary error:
    12.125 and ROUND(12.125, 2) both count 1213, and 0.285 (0.28499... in binary) counts 29."""
    if not math.isfinite(number):
        return str(number)
    return math.floor(number * 100 + 0.5 + 1e-7)


def _normal(value: Any) -> Any:
    """A result value as compared: numbers (and text that reads as one) in hundredths (see :func:`_hundredths`)."""
    if isinstance(value, (int, float)):
        return _hundredths(float(value))
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value
        return _hundredths(number)
    if isinstance(value, bytes):
        return "x'" + value.hex() + "'"
    return value


def normal_rows(rows: Sequence[Sequence[Any]]) -> list[tuple]:
    """Rows with every value normalised (see :func:`_normal`), duplicates after the first dropped, order kept."""
    seen: dict[tuple, None] = {}
    for row in rows:
        seen.setdefault(tuple(_normal(value) for value in row), None)
    return list(seen)


def result_match(got: Sequence[Sequence[Any]], gold: Sequence[Sequence[Any]], ordered: bool, order_key: Sequence[int]) -> tuple[bool, float]:
    """(whether ``got`` matches ``gold``, the partial credit in [0, 1]).

    Rows are compared as sets; when ``ordered``, ``got`` must also list the rows in the gold order of their
    ``order_key`` columns. The partial credit is the F1 of the two row sets; the right rows out of the asked
    order earn 0.5.
    """
    mine, theirs = normal_rows(got), normal_rows(gold)
    if set(mine) == set(theirs):
        if not ordered or [tuple(r[i] for i in order_key) for r in mine] == [tuple(r[i] for i in order_key) for r in theirs]:
            return True, 1.0
        return False, 0.5
    common = len(set(mine) & set(theirs))
    return False, 2 * common / (len(mine) + len(theirs))


# --------------------------------------------------------------------------- the privileged channel


class GoldChannel:
    """The gold programs behind recent episodes' question handles, in this process: the channel through which
    the ``expert`` baseline, a privileged oracle (``privileged = True``, refused by the leaderboard), reads the
    gold SQL. Observations carry only the opaque handle (see :func:`question_handle`)."""

    REMEMBERED = 4096

    def __init__(self) -> None:
        self._gold: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, handle: str, sql: str) -> None:
        """Keep the gold ``sql`` under ``handle``, forgetting the oldest beyond :attr:`REMEMBERED`."""
        with self._lock:
            self._gold[handle] = sql
            self._gold.move_to_end(handle)
            while len(self._gold) > self.REMEMBERED:
                self._gold.popitem(last=False)

    def gold_sql(self, handle: str) -> str:
        """The gold SQL behind ``handle``; ``LookupError`` if no recent episode of this process posed it."""
        with self._lock:
            found = self._gold.get(handle)
        if found is None:
            raise LookupError(
                f"no SQL episode of this process has the question handle {handle!r}: the channel knows only "
                "the questions of games running in the privileged agent's own process"
            )
        return found

    def __deepcopy__(self, memo: dict) -> GoldChannel:
        return self

    def __reduce__(self) -> tuple[Any, tuple]:
        return gold_channel, ()


_CHANNEL = GoldChannel()


def gold_channel() -> GoldChannel:
    """The gold channel of this process: for privileged agents only."""
    return _CHANNEL


def question_handle(secret: bytes, world_seed: int, sql: str) -> str:
    """An opaque handle of an episode's question (a keyed hash under a secret the episode drew), remembered with
    its gold SQL in :func:`gold_channel`."""
    handle = "q-" + hashlib.blake2b(f"{world_seed}:{sql}".encode(), key=secret, digest_size=12).hexdigest()
    _CHANNEL.remember(handle, sql)
    return handle
