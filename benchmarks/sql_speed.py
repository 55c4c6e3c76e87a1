"""The SQL game's figures: agents' success per difficulty, query / reset / step latency, hostile queries.

    .venv/bin/python benchmarks/sql_speed.py [--episodes 200] [--repeats 300]

Prints, on one core:

* the success rate of ``expert`` (the gold program; target >= 0.99) at every difficulty, of ``pattern``,
  and of ``random`` (target <= 0.02 at difficulty 3);
* the p50 and p90 of ``query`` (a join with grouping on the default database; target p50 <= 5 ms), of
  ``reset`` (building the world and its database; target p50 <= 20 ms) and of a non-query ``step``
  (``list_tables`` or ``describe``; target p50 <= 2 ms);
* for each hostile query (a recursive CTE without end, a cross join of every table, ``randomblob(1e9)``,
  a sort of ever-growing rows) the seconds it took, the growth of the process's peak memory, and the error
  it got; then that the database still has its rows.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from typing import cast

from agentic_worlds import pin_one_core, success_rate

from parlour.envs.agentic.sql import SQL
from parlour.envs.core.match import Match

ENV = "parlour/SQL-v0"


def call(tool: str, **arguments: str) -> str:
    return json.dumps({"tool": tool, "arguments": arguments})


def percentiles(samples: list[float]) -> str:
    cuts = statistics.quantiles(samples, n=10)
    return f"p50 {statistics.median(samples) * 1000:.2f} ms, p90 {cuts[8] * 1000:.2f} ms"


def latencies(repeats: int) -> None:
    """Reset, query and non-query step latency on the default options."""
    match = Match(SQL, {"max_tool_calls": 10**6})
    resets: list[float] = []
    queries: list[float] = []
    steps: list[float] = []
    for seed in range(repeats):
        start = time.perf_counter()
        match.reset(seed)
        resets.append(time.perf_counter() - start)
    for seed in range(repeats):
        match.reset(seed)
        world = cast(SQL, match.game).world
        assert world is not None
        child, parent = next(((c, col.ref) for c in world.tables for col in c.columns if col.kind == "fk"))
        key = next(col.name for col in child.columns if col.kind == "fk")
        sql = f"SELECT p.id, COUNT(*) FROM {child.name} AS c JOIN {parent} AS p ON c.{key} = p.id GROUP BY p.id ORDER BY 2 DESC"
        for action, into in ((call("query", sql=sql), queries), (call("list_tables"), steps), (call("describe", table=parent), steps)):
            start = time.perf_counter()
            match.submit("player_0", action)
            into.append(time.perf_counter() - start)
    print(f"reset: {percentiles(resets)}")
    print(f"query (join + group + order): {percentiles(queries)}")
    print(f"non-query step (list_tables, describe): {percentiles(steps)}")


def hostile() -> None:
    """Each hostile query's time, peak-memory growth and error; then the database's rows, unchanged."""
    match = Match(SQL, {"difficulty": 5, "max_tool_calls": 100})
    match.reset(0)
    game = cast(SQL, match.game)
    assert game.world is not None
    tables = game.world.tables
    before = {s.name: game.database.conn.execute(f"SELECT COUNT(*) FROM {s.name}").fetchone()[0] for s in tables}
    queries = {
        "recursive CTE": "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT COUNT(*) FROM r",
        f"cross join of all {len(tables)} tables": "SELECT COUNT(*) FROM " + ", ".join(s.name for s in tables),
        "randomblob(1e9)": "SELECT randomblob(1000000000)",
        "sort of growing 9 KB rows": (
            "WITH RECURSIVE r(x, y) AS (SELECT 1, printf('%.*c', 9000, 'x') UNION ALL "
            "SELECT x + 1, y || '' FROM r) SELECT x, y FROM r ORDER BY x DESC"
        ),
        "write": f"DELETE FROM {tables[0].name}",
    }
    for name, sql in queries.items():
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        match.submit("player_0", call("query", sql=sql))
        took = time.perf_counter() - start
        grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) / 1024
        result = [m["text"] for m in match.ctx.inboxes["player_0"] if m["kind"] == "tool_result"][-1]
        print(f"hostile {name}: {took:.2f} s, peak memory +{grown:.0f} MiB, {result[:110]!r}")
    after = {s.name: game.database.conn.execute(f"SELECT COUNT(*) FROM {s.name}").fetchone()[0] for s in tables}
    print(f"database unchanged after them: {after == before}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=300)
    args = parser.parse_args()
    pin_one_core()
    for difficulty in range(1, 6):
        figures = ", ".join(f"{agent} {success_rate(ENV, agent, difficulty, args.episodes):.3f}" for agent in ("expert", "pattern", "random"))
        print(f"difficulty {difficulty} success over {args.episodes} episodes: {figures}")
    latencies(args.repeats)
    hostile()


if __name__ == "__main__":
    main()
