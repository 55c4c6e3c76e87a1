"""Scripted agents of the SQL game.

* ``expert``: an **oracle, not a fair agent**, and marked so: ``privileged = True``. The view holds only an
  opaque ``question_id``; the expert reads the gold SQL behind it through the privileged channel
  (:func:`parlour.envs.agentic.sql_world.gold_channel`, which knows the questions of the episodes running in
  its own process) and submits it. It is the upper bound of the scale, measured locally; the leaderboard
  refuses privileged agents.
* ``pattern``: an honest weak agent that reads only its observation. It lists the tables, then reads the
  question with the phrasings of the one-table questions (filters, counts, labels by a text value,
  aggregates, top-k) and writes their SQL; any other question gets a guess (the label column of the table
  the question names first), which is almost never right. It solves most questions of difficulties 1 and
  2 and few beyond.
* ``random``: random tool calls (tables it was shown, random SQL over them) and a random final answer.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.baselines.seeded import SeededAgent
from parlour.envs.agentic.sql_world import GoldChannel, gold_channel

SQL_ENV = "parlour/SQL-v0"

#: The comparison words of questions and their SQL operators.
_OPS = {
    "greater than": ">",
    "less than": "<",
    "at least": ">=",
    "at most": "<=",
    "after": ">",
    "before": "<",
    "on or after": ">=",
    "on or before": "<=",
}
_OP_WORDS = "|".join(sorted(map(re.escape, _OPS), key=len, reverse=True))
_VALUE = r"'(?:[^']|'')*'|-?\d+(?:\.\d+)?"
_CONDITION = re.compile(rf"(?P<column>[a-z ]+?) is (?:(?P<op>{_OP_WORDS}) )?(?P<value>{_VALUE})")
_FUNCTIONS = {"average": "AVG", "largest": "MAX", "smallest": "MIN", "total": "SUM"}


def call(tool: str, **arguments: Any) -> str:
    """A tool call as the JSON text ``{"tool": ..., "arguments": {...}}``."""
    return json.dumps({"tool": tool, "arguments": arguments}, ensure_ascii=False)


def tool_results(observation: Mapping[str, Any], tool: str) -> list[str]:
    """The texts of ``tool``'s results in this observation's messages."""
    return [m["text"] for m in observation.get("messages", []) if m["kind"] == "tool_result" and m["sender"] == tool]


def read_tables(text: str) -> dict[str, list[str]]:
    """The tables and their columns in a ``list_tables`` result."""
    tables = {}
    for line in text.splitlines():
        match = re.fullmatch(r"(\w+) \(\d+ rows\): (.*)", line.strip())
        if match:
            tables[match[1]] = [c.strip() for c in match[2].split(",")]
    return tables


# ----------------------------------------------------------------------------- expert (oracle)


class Expert(SeededAgent):
    """The oracle upper bound: submits the gold SQL of the question; see the module docstring."""

    name = "expert"
    #: Reads the hidden gold program through the privileged channel: the leaderboard refuses it.
    privileged = True

    def __init__(self, env_id: str | None = None, seed: int | None = None, channel: GoldChannel | None = None):
        super().__init__(env_id, seed)
        self.channel = channel or gold_channel()

    def act(self, observation: Mapping[str, Any]) -> str:
        """Submit the gold SQL behind the view's question handle."""
        return call("submit", sql=self.channel.gold_sql(observation["view"]["question_id"]))


# ----------------------------------------------------------------------------- pattern (weak, honest)


def _table(noun: str, tables: Mapping[str, list[str]]) -> str | None:
    """The table whose rows ``noun`` (singular or plural, as questions write them) names."""
    key = noun.strip().replace(" ", "_")
    for name in tables:
        if name == key or name.rstrip("s") == key.rstrip("s") or name == key[:-1] + "ies" or name == key + "es":
            return name
    return None


def _condition(text: str) -> str | None:
    """A question's condition words as SQL, or None."""
    match = _CONDITION.fullmatch(text.strip())
    if match is None:
        return None
    op = _OPS[match["op"]] if match["op"] else "="
    return f"{match['column'].replace(' ', '_')} {op} {match['value']}"


def write_sql(question: str, tables: Mapping[str, list[str]]) -> str | None:
    """The SQL of a one-table question in the phrasings ``pattern`` knows, or None."""
    question = question.strip()
    patterns = (
        (
            r"List the (?P<label>\w+) and the (?P<col>[a-z ]+) of every (?P<noun>[a-z ]+?) whose (?P<cond>.+)\. Return two columns: .*",
            "SELECT {label}, {col_} FROM {table} WHERE {where}",
        ),
        (
            r"List the (?P<label>\w+) of every (?P<noun>[a-z ]+?) whose (?P<cond>.+)\. Return one column: .*",
            "SELECT {label} FROM {table} WHERE {where}",
        ),
        (r"How many (?P<noun>[a-z ]+?) are there whose (?P<cond>.+)\? Return one number\.", "SELECT COUNT(*) FROM {table} WHERE {where}"),
        (
            r"What is the (?P<fn>average|largest|smallest|total) (?P<col>[a-z ]+?) of the (?P<noun>[a-z ]+?) whose (?P<cond>.+)\? Return one number.*",
            "SELECT {function}({col_}) FROM {table} WHERE {where}",
        ),
        (
            r"Which (?P<k>\d+) (?P<noun>[a-z ]+?) have the (?P<dir>highest|lowest) (?P<col>[a-z ]+?)\? Return two columns, (?P<label>\w+) and .*",
            "SELECT {label}, {col_} FROM {table} ORDER BY {col_} {direction} LIMIT {k}",
        ),
    )
    for pattern, template in patterns:
        match = re.fullmatch(pattern, question)
        if match is None:
            continue
        parts = match.groupdict()
        table = _table(parts["noun"], tables)
        where = _condition(parts["cond"]) if parts.get("cond") else ""
        if table is None or where is None:
            return None
        return template.format(
            label=parts.get("label"),
            col_=(parts.get("col") or "").replace(" ", "_"),
            table=table,
            where=where,
            function=_FUNCTIONS.get(parts.get("fn") or ""),
            direction="DESC" if parts.get("dir") == "highest" else "ASC",
            k=parts.get("k"),
        )
    return None


class Pattern(SeededAgent):
    """Lists the tables, then writes the SQL of the question's phrasing if it knows it, or guesses."""

    name = "pattern"

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        super().__init__(env_id, seed)
        self.tables: dict[str, list[str]] | None = None

    def reset(self, seed: int | None = None) -> None:
        """Forget the last episode's tables."""
        super().reset(seed)
        self.tables = None

    def act(self, observation: Mapping[str, Any]) -> str:
        """``list_tables`` first; then the question's SQL, or the guess."""
        for text in tool_results(observation, "list_tables"):
            self.tables = read_tables(text)
        if self.tables is None:
            return call("list_tables")
        question = observation["view"].get("question") or ""
        sql = write_sql(question, self.tables)
        if sql is None:
            named = [t for t in self.tables if re.search(rf"\b{t.rstrip('s').replace('_', ' ')}", question)]
            table = named[0] if named else next(iter(self.tables))
            label = "name" if "name" in self.tables[table] else self.tables[table][0]
            sql = f"SELECT {label} FROM {table}"
        return call("submit", sql=sql)


# ----------------------------------------------------------------------------- random


class RandomSQL(RandomAgent):
    """Random tool calls over the tables it was shown, then a random final answer."""

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        super().__init__(env_id, seed)
        self.tables: dict[str, list[str]] = {}

    def reset(self, seed: int | None = None) -> None:
        """Forget the last episode's tables."""
        super().reset(seed)
        self.tables = {}

    def random_sql(self) -> str:
        """A random SELECT over a table it knows (or over none)."""
        rng = self.rng
        if not self.tables:
            return "SELECT 1"
        names = sorted(self.tables)
        table = names[int(rng.integers(len(names)))]
        columns = self.tables[table]
        picked = [columns[int(i)] for i in rng.integers(len(columns), size=int(rng.integers(1, 3)))]
        sql = f"SELECT {', '.join(picked)} FROM {table}"
        if rng.random() < 0.5:
            sql += f" LIMIT {int(rng.integers(1, 6))}"
        return sql

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random list_tables, describe, query, submit or answer."""
        for text in tool_results(observation, "list_tables"):
            self.tables.update(read_tables(text))
        rng = self.rng
        choice = rng.random()
        if observation.get("tool_calls_left", 0) > 0 and choice < 0.7:
            if choice < 0.2 or not self.tables:
                return call("list_tables")
            if choice < 0.4:
                names = sorted(self.tables)
                return call("describe", table=names[int(rng.integers(len(names)))])
            return call("query", sql=self.random_sql())
        if choice < 0.85:
            return call("submit", sql=self.random_sql())
        return call("answer", rows=[[int(rng.integers(100))] for _ in range(int(rng.integers(1, 4)))])


register_scripted("expert", SQL_ENV, Expert)
register_scripted("pattern", SQL_ENV, Pattern)
register_scripted("random", SQL_ENV, RandomSQL)
