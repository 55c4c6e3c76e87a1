"""SQL: answer a question about a generated database by querying it read-only (text-to-SQL with tools).

One player, ``player_0``. Each episode draws a world seed from the episode's
generator and builds from it, in memory, an SQLite database of 3 to 8 tables
of one theme (a shop, a school, a library: integer primary keys, foreign
keys, invented names) and one question, generated from a query program
(filters, joins, grouping, nesting, ordering; see
:mod:`parlour.envs.agentic.sql_world`). The question names the columns asked
for, in order, and says when the order of rows matters. Tools, called in any
syntax the core reads (OpenAI ``tool_calls``, ``{"tool": ..., "arguments":
...}``, Hermes ``<tool_call>``, or tags such as ``<query>SELECT 1</query>``):

* ``list_tables()``: every table with its row count and columns;
* ``describe(table)``: a table's columns, types and keys, and three rows;
* ``query(sql)``: run one read-only SELECT; the first ``max_rows`` rows come
  back as JSON arrays under a JSON list of the column names;
* ``submit(sql)``: the final answer as SQL, run like ``query`` (ends the episode);
* ``answer(rows)``: the final answer as a JSON list of rows (ends the episode).

``query`` and ``submit`` are answered by a guarded connection: only SELECT
(and WITH ... SELECT) runs; writes, ``ATTACH``, ``PRAGMA``, transactions,
extension loading and the functions of randomness and of the clock are denied;
a query stops past 20 million steps of SQLite's virtual machine (a
deterministic cap, so records replay; with backstops of 1 s and 128 MiB);
values, SQL text and expression depth are capped. A failed query is a tool
result that starts with ``Error:`` and says what to do; it is no invalid
action. Tool calls per episode are capped by the engine's ``max_tool_calls``
(30 by default, this game's ``default_max_tool_calls``: the whole episode is one turn,
and eight tables want a ``describe`` each before the queries). Text that calls no tool, a call
of an unknown tool, or arguments that break a tool's schema are invalid
actions.

Options:

* ``difficulty`` (1 to 5, default 3): the question's families and the number
  of tables. 1: one-table filters and counts; 2: top-k, aggregates, two
  conditions; 3: a join (filtered, or grouped with a count or an aggregate);
  4: HAVING, nested subqueries (above an average, NOT IN), filtered groups;
  5: two joins with grouping, grouped top-k, correlated subqueries.
* ``split`` (``"train"`` or ``"test"``, default, as in the other agentic
  worlds, so an evaluation that names no split runs on held-out worlds):
  world seeds below 2**62 are training worlds, those from 2**62 up test
  worlds; the two never meet.
* ``partial_credit`` (default False): pay the F1 of the row sets when the
  result does not match (the right rows out of the asked order earn 0.5).
* ``max_rows`` (1 to 500, default 50): rows a ``query`` shows.

Reward, paid at ``submit`` or ``answer``: 1 when the result matches the gold
result (its rows as sets, duplicates ignored; in the asked order when the
question orders, rows equal on the order's columns in any order; numbers
compared in hundredths, rounded half up; columns in the order asked), else 0
or, with ``partial_credit``, the partial credit. SQL that fails at ``submit``
scores 0. A player past the invalid-action allowance gets -1.

Nothing hidden reaches the player: observations, the view, tool results,
errors, the outcome and ``render`` carry neither the gold SQL nor the gold
result. The view holds an opaque ``question_id``; the ``expert`` baseline, a
privileged oracle refused by the leaderboard, reads the gold SQL through
:func:`parlour.envs.agentic.sql_world.gold_channel`. The outcome's details hold
the question's family, the theme, the number of tables, how the player
answered, whether it matched, the partial credit, the rows returned and the
calls made.

Version history: v0, first release.
"""

from __future__ import annotations

import json
import math
from typing import Any

from parlour.envs.agentic.sql_world import (
    Caps,
    Database,
    QueryError,
    World,
    generate_world,
    question_handle,
    result_match,
)
from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, InvalidMove, int_option
from parlour.envs.core.tools import Tool

SPLITS = ("train", "test")
#: World seeds of the training split are below this; the test split's are at or above it.
TEST_SEEDS_FROM = 1 << 62
#: The longest SQL a tool takes (SQLite's own limit, set on the connection, is the same).
MAX_SQL_CHARS = 20_000
#: Most rows ``submit`` reads of a player's result (a gold result has at most 20).
SUBMIT_ROWS = 1000
#: Characters of one value shown in a tool result.
CELL_CHARS = 200
#: Rows ``describe`` shows.
SAMPLE_ROWS = 3

_SQL = {"type": "string", "minLength": 1, "maxLength": MAX_SQL_CHARS}
_CELL = {"type": ["string", "number", "boolean", "null"], "maxLength": 1000}

RULES = """You are {player}. Answer the question below about an SQLite database by querying it.
Tools:
  list_tables(): the tables, their row counts and columns
  describe(table): one table's columns, types and keys, and {sample} of its rows
  query(sql): run one read-only SELECT; you see up to {max_rows} rows, as JSON arrays
  submit(sql): your final answer as one SELECT, run like query (this ends the episode)
  answer(rows): your final answer as a JSON list of rows, e.g. [["Ada Holm", 12]] (this ends the episode)
Call them as <query>SELECT name FROM products</query>, {{"tool": "describe", "arguments": {{"table": "products"}}}},
<tool_call>{{"name": "submit", "arguments": {{"sql": "SELECT ..."}}}}</tool_call>, or OpenAI tool calls.
Tool calls are limited (8 by default); text without a tool call is an invalid action. The database is
read-only; dates are ISO text ('YYYY-MM-DD'); the clock and random functions are not available.
Scoring: your result must hold exactly the rows of the correct result, with the columns the question names,
in its order. Rows count once (duplicates are ignored) and may come in any order unless the question asks
for one. Numbers are compared rounded to 2 decimals. {scoring}"""


def _cell(value: Any) -> Any:
    """A result value as a tool result shows it: JSON-ready, long text cut, blobs as hex."""
    if isinstance(value, bytes):
        value = "x'" + value[: CELL_CHARS // 2].hex() + "'"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str) and len(value) > CELL_CHARS:
        return value[:CELL_CHARS] + f"... ({len(value) - CELL_CHARS} more characters)"
    return value


def table_text(columns: list[str], rows: list[tuple], more: bool, chars: int) -> str:
    """Rows as a tool result: the column names as a JSON list, then one JSON array per row, within ``chars``."""
    lines = [json.dumps(columns, ensure_ascii=False)]
    size = len(lines[0])
    shown = 0
    for row in rows:
        line = json.dumps([_cell(value) for value in row], ensure_ascii=False)
        if size + len(line) > chars:
            more = True
            break
        lines.append(line)
        size += len(line) + 1
        shown += 1
    lines.append(f"({shown} row(s) shown; more rows were left out)" if more else f"({shown} row(s))")
    return "\n".join(lines)


class SQL(Game):
    """One player answers a question about a generated SQLite database with read-only tools; see the module docstring."""

    name = "SQL"
    version = 0
    description = "Text-to-SQL on a generated SQLite database: explore it with read-only tools, then submit SQL or rows."
    category = "agentic"
    zero_sum = False
    fixed_rules = True
    default_max_tool_calls = 30
    reference_agents = ("expert", "random")

    def __init__(self, *, difficulty: int = 3, split: str = "test", partial_credit: bool = False, max_rows: int = 50):
        self.difficulty = int_option("difficulty", difficulty, 1, 5)
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        self.split = split
        if not isinstance(partial_credit, bool):
            raise ValueError(f"partial_credit must be True or False, got {partial_credit!r}")
        self.partial_credit = partial_credit
        self.caps = Caps(rows=int_option("max_rows", max_rows, 1, 500))
        self.players = ["player_0"]
        self.tools = [
            Tool("list_tables", "List the database's tables with their row counts and columns."),
            Tool(
                "describe",
                "Show one table's columns, types and keys, and a few of its rows.",
                {"type": "object", "properties": {"table": {"type": "string", "maxLength": 200}}, "required": ["table"]},
            ),
            Tool("query", "Run one read-only SELECT and see its first rows.", {"type": "object", "properties": {"sql": _SQL}, "required": ["sql"]}),
            Tool(
                "submit",
                "Your final answer as one SELECT; it is run and its result scored. Ends the episode.",
                {"type": "object", "properties": {"sql": _SQL}, "required": ["sql"]},
                final=True,
            ),
            Tool(
                "answer",
                "Your final answer as a list of rows, each a list of values in the asked column order. Ends the episode.",
                {
                    "type": "object",
                    "properties": {"rows": {"type": "array", "maxItems": SUBMIT_ROWS, "items": {"type": "array", "maxItems": 100, "items": _CELL}}},
                    "required": ["rows"],
                },
                final=True,
            ),
        ]
        self.world_seed = 0
        self.world: World | None = None
        self.question_id = ""
        self.calls: list[dict[str, Any]] = []
        self.answered: dict[str, Any] | None = None
        self._db: Database | None = None

    # ----------------------------------------------------------- state and copies
    def __getstate__(self) -> dict[str, Any]:
        # A connection cannot be copied; copies rebuild it from the world's rows when first queried.
        state = dict(self.__dict__)
        state["_db"] = None
        return state

    @property
    def database(self) -> Database:
        """The episode's guarded connection, rebuilt from the world's rows in a copy of the game."""
        if self._db is None:
            assert self.world is not None, "the game has not started"
            self._db = Database(self.world.tables, self.world.rows, self.caps)
        return self._db

    # ----------------------------------------------------------- the episode
    def start(self, ctx: Context) -> None:
        """Draw the world seed (in the split's range), build the world and tell the question."""
        self.world_seed = int(ctx.rng.integers(TEST_SEEDS_FROM)) + (TEST_SEEDS_FROM if self.split == "test" else 0)
        if self._db is not None:
            self._db.close()
        self.world, self._db = generate_world(self.world_seed, self.difficulty, self.caps)
        self.question_id = question_handle(bytes(ctx.rng.bytes(16)), self.world_seed, self.world.program.sql)
        self.calls = []
        self.answered = None
        ctx.tell(f"Question: {self.world.program.question}", to=self.players[0])

    def to_move(self) -> list[str]:
        """The one player, until it submits or answers."""
        return list(self.players)

    def rules(self, player: str) -> str:
        """The tools, the call syntaxes and the scoring."""
        scoring = (
            "A result that does not match earns the F1 of its rows against the correct rows (the right rows out of the asked order earn 0.5)."
            if self.partial_credit
            else "A result that does not match scores 0."
        )
        return RULES.format(player=player, sample=SAMPLE_ROWS, max_rows=self.caps.rows, scoring=scoring)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """A reminder of the tools and of the calls made so far."""
        return f"Call list_tables, describe, query, submit or answer ({len(self.calls)} tool call(s) made so far)."

    def parse(self, player: str, text: str) -> Any:
        """Text without a tool call is no move here."""
        raise InvalidMove(
            "No tool call found. Call a tool, e.g. <query>SELECT name FROM products LIMIT 5</query> or "
            '{"tool": "submit", "arguments": {"sql": "SELECT ..."}}.'
        )

    def call_tool(self, player: str, name: str, arguments: dict[str, Any]) -> str:
        """Answer list_tables, describe or query; failures are results that start with ``Error:``."""
        assert self.world is not None
        if name == "list_tables":
            text = self.list_tables()
        elif name == "describe":
            text = self.describe(arguments["table"])
        else:
            try:
                columns, rows, more = self.database.run(arguments["sql"])
            except QueryError as error:
                text = f"Error: {error}"
            else:
                text = table_text(columns, rows, more, self.caps.chars)
        self.calls.append({"tool": name, "error": text.startswith("Error:")})
        return text

    def list_tables(self) -> str:
        """Every table with its row count and columns."""
        assert self.world is not None
        rows = self.world.rows
        return "\n".join(f"{spec.name} ({len(rows[spec.name])} rows): {', '.join(c.name for c in spec.columns)}" for spec in self.world.tables)

    def describe(self, table: str) -> str:
        """One table's columns, types, keys and first rows; an ``Error:`` naming the tables for an unknown one."""
        assert self.world is not None
        spec = next((s for s in self.world.tables if s.name == table.strip().lower()), None)
        if spec is None:
            names = ", ".join(s.name for s in self.world.tables)
            return f"Error: there is no table {table[:60]!r}. Tables: {names}."
        lines = [f"table {spec.name} ({len(self.world.rows[spec.name])} rows)"]
        for column in spec.columns:
            key = {"id": " PRIMARY KEY", "fk": f" REFERENCES {column.ref}(id)", "name": " UNIQUE"}.get(column.kind, "")
            lines.append(f"  {column.name} {column.sql_type}{key}")
        sample = self.world.rows[spec.name][:SAMPLE_ROWS]
        return "\n".join(lines) + "\nfirst rows:\n" + table_text([c.name for c in spec.columns], sample, False, self.caps.chars)

    def apply(self, ctx: Context, moves: dict[str, Any]) -> None:
        """Run the submitted SQL (or read the answered rows), compare with the gold result and end the episode."""
        ((player, move),) = moves.items()
        world = self.world
        assert world is not None
        error = None
        if move["tool"] == "submit":
            try:
                _, rows, _ = self.database.run(move["arguments"]["sql"], rows=SUBMIT_ROWS)
            except QueryError as failure:
                error, rows = str(failure), []
        else:
            rows = [tuple(row) for row in move["arguments"]["rows"]]
        matched, partial = result_match(rows, world.gold, world.program.ordered, world.program.order_key)
        if error is not None:
            matched, partial = False, 0.0
        reward = 1.0 if matched else (partial if self.partial_credit else 0.0)
        self.answered = {"tool": move["tool"], "rows": len(rows), "error": error, "matched": matched, "partial": partial}
        if matched:
            reason = f"{player} {'submitted SQL' if move['tool'] == 'submit' else 'answered rows'} whose result is correct"
        elif error is not None:
            reason = f"{player} submitted SQL that failed: {error}"
        else:
            reason = f"{player}'s result does not match the correct result"
        ctx.finish({player: reward}, winners=[player] if matched else [], reason=reason, details=self.details())

    def details(self) -> dict[str, Any]:
        """The outcome's details (nothing of the gold SQL or result)."""
        world = self.world
        assert world is not None
        return {
            "family": world.program.family,
            "difficulty": self.difficulty,
            "split": self.split,
            "theme": world.theme,
            "tables": len(world.tables),
            "question": world.program.question,
            "ordered": world.program.ordered,
            "answer": dict(self.answered) if self.answered else None,
            "calls": [dict(c) for c in self.calls],
        }

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """-1 to the player."""
        ctx.finish({player: -1.0}, reason=reason, details=self.details())

    def view(self, player: str) -> dict[str, Any]:
        """The question, its opaque handle, the difficulty and the calls made (the results are in the messages)."""
        return {
            "question": self.world.program.question if self.world else None,
            "question_id": self.question_id,
            "difficulty": self.difficulty,
            "max_rows": self.caps.rows,
            "calls": [dict(c) for c in self.calls],
        }

    def render(self) -> str:
        """The question, the schema, the calls and the answer (nothing of the gold)."""
        world = self.world
        if world is None:
            return "not started"
        schema = "; ".join(f"{spec.name}({', '.join(c.name for c in spec.columns)})" for spec in world.tables)
        calls = ", ".join(c["tool"] + (" (error)" if c["error"] else "") for c in self.calls) or "none"
        answered = "" if self.answered is None else f"\nanswer: {self.answered}"
        return f"theme: {world.theme} (difficulty {self.difficulty})\nschema: {schema}\nquestion: {world.program.question}\ncalls: {calls}{answered}"
