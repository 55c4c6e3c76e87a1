"""The SQL game: generated worlds, read-only tools, scoring, hidden state, hostile queries, copies and replay."""

from __future__ import annotations

import json

import pytest

import parlour
from parlour.baselines import make_scripted
from parlour.envs.agentic.sql import SQL, TEST_SEEDS_FROM
from parlour.envs.agentic.sql_world import Caps, generate_world, result_match
from parlour.envs.core.match import Match

ENV = "parlour/SQL-v0"


def call(tool: str, **arguments) -> str:
    return json.dumps({"tool": tool, "arguments": arguments})


def started(seed: int = 1, **options) -> Match:
    match = Match(SQL, options)
    match.reset(seed)
    return match


def last_result(match: Match) -> str:
    return [m["text"] for m in match.ctx.inboxes["player_0"] if m["kind"] == "tool_result"][-1]


def play(agent: str, seed: int, **options) -> Match:
    match = started(seed, **options)
    player = make_scripted(agent, ENV)
    player.reset(seed)
    while not match.over:
        match.submit("player_0", player.act(match.agent_observation("player_0")))
    return match


def counts(match: Match) -> dict[str, int]:
    """Each table's row count, read by the host straight from the connection."""
    game = match.game
    return {spec.name: game.database.conn.execute(f"SELECT COUNT(*) FROM {spec.name}").fetchone()[0] for spec in game.world.tables}


# ------------------------------------------------------------------ generation


@pytest.mark.parametrize("difficulty", [1, 2, 3, 4, 5])
def test_worlds_are_a_function_of_the_seed_with_fair_questions(difficulty):
    families = set()
    for seed in range(40):
        world, database = generate_world(seed, difficulty, Caps())
        again, _ = generate_world(seed, difficulty, Caps())
        assert (world.program, world.rows, world.gold) == (again.program, again.rows, again.gold)
        assert 3 <= len(world.tables) <= 8
        assert 1 <= len(world.gold) <= 20
        # The gold program runs through the guarded path, as a player's submission does, to the same rows.
        assert database.run(world.program.sql, rows=1000)[1] == world.gold
        assert "Return" in world.program.question
        if world.program.ordered:
            assert "order" in world.program.question
        families.add(world.program.family)
    assert len(families) >= 3


def test_a_limit_never_cuts_between_tied_rows():
    for seed in range(150):
        for difficulty in (2, 5):
            world, database = generate_world(seed, difficulty, Caps())
            if " LIMIT " in world.program.sql:
                head, _, k = world.program.sql.rpartition(" LIMIT ")
                rows = database.run(head, rows=1000)[1]
                key = world.program.order_key
                assert [rows[int(k) - 1][i] for i in key] != [rows[int(k)][i] for i in key]


def test_train_and_test_splits_draw_disjoint_world_seeds():
    train = {started(seed, split="train").game.world_seed for seed in range(20)}
    test = {started(seed).game.world_seed for seed in range(20)}  # the default split is "test", as in the other worlds
    assert max(train) < TEST_SEEDS_FROM <= min(test)
    assert started(5).game.world.program == started(5).game.world.program


@pytest.mark.parametrize(
    "options, message",
    [({"difficulty": 0}, "difficulty"), ({"split": "dev"}, "split"), ({"partial_credit": "yes"}, "partial_credit"), ({"max_rows": 0}, "max_rows")],
)
def test_bad_options_are_refused_with_their_name(options, message):
    with pytest.raises(ValueError, match=message):
        Match(SQL, options)


# ------------------------------------------------------------------ agents


@pytest.mark.parametrize("difficulty", [1, 2, 3, 4, 5])
def test_the_expert_always_matches_and_random_almost_never(difficulty):
    assert all(play("expert", seed, difficulty=difficulty).returns["player_0"] == 1.0 for seed in range(15))
    assert sum(play("random", seed, difficulty=difficulty).returns["player_0"] > 0 for seed in range(15)) <= 1


def test_the_pattern_agent_is_honest_and_weak():
    assert sum(play("pattern", seed, difficulty=1).returns["player_0"] == 1.0 for seed in range(20)) >= 18
    assert sum(play("pattern", seed, difficulty=4).returns["player_0"] == 1.0 for seed in range(20)) <= 2
    assert not getattr(make_scripted("pattern", ENV), "privileged", False)
    assert make_scripted("expert", ENV).privileged is True


# ------------------------------------------------------------------ tools


def test_tools_answer_schema_and_rows():
    match = started(2, difficulty=3)
    match.submit("player_0", call("list_tables"))
    listing = last_result(match)
    table = match.game.world.tables[0].name
    assert table in listing and "rows)" in listing
    match.submit("player_0", call("describe", table=table))
    assert "PRIMARY KEY" in last_result(match)
    match.submit("player_0", f"<query>SELECT id FROM {table} ORDER BY id LIMIT 2</query>")
    assert last_result(match).splitlines() == ['["id"]', "[1]", "[2]", "(2 row(s))"]
    match.submit("player_0", call("describe", table="nope"))
    assert last_result(match).startswith("Error: there is no table 'nope'. Tables:")
    assert match.errors["player_0"] == 0 and not match.over


def test_rows_are_capped():
    match = started(2, max_rows=3)
    table = match.game.world.tables[-1].name
    match.submit("player_0", call("query", sql=f"SELECT * FROM {table}"))
    assert last_result(match).endswith("(3 row(s) shown; more rows were left out)")


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO {t} (id) VALUES (999)",
        "UPDATE {t} SET id = id + 100",
        "DELETE FROM {t}",
        "DROP TABLE {t}",
        "CREATE TABLE x (a)",
        "ATTACH DATABASE '/tmp/parlour_sql_attack.db' AS x",
        "PRAGMA writable_schema = ON",
        "SELECT load_extension('/tmp/evil')",
        "SELECT random()",
        "SELECT date('now')",
        "SELECT current_timestamp",
        "BEGIN",
        "VACUUM",
        "CREATE TEMP VIEW v AS SELECT 1",
        "SELECT 1; DELETE FROM {t}",
        "REPLACE INTO {t} (id) VALUES (1)",
    ],
)
def test_sql_that_writes_attaches_or_reads_the_clock_is_a_tool_error_and_changes_nothing(sql, tmp_path):
    match = started(3)
    before = counts(match)
    table = match.game.world.tables[0].name
    match.submit("player_0", call("query", sql=sql.format(t=table)))
    result = last_result(match)
    assert result.startswith("Error:") and ("read-only" in result or "one SELECT statement" in result or "denied" in result), result
    assert counts(match) == before
    assert match.errors["player_0"] == 0


@pytest.mark.parametrize(
    "sql, reason",
    [
        ("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT COUNT(*) FROM r", "stopped"),
        ("SELECT COUNT(*) FROM {every}", "stopped"),
        ("SELECT randomblob(1000000000)", "not allowed"),
        ("SELECT zeroblob(1000000000)", "not allowed"),
        ("WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM r) SELECT length(s) FROM r", "too big"),
        (
            "WITH RECURSIVE r(x, y) AS (SELECT 1, hex(randomblob(4000)) UNION ALL SELECT x + 1, y FROM r) SELECT x, y FROM r ORDER BY x DESC",
            "not allowed",
        ),
        (
            "WITH RECURSIVE r(x, y) AS (SELECT 1, printf('%.*c', 9000, 'x') UNION ALL SELECT x + 1, y || '' FROM r) "
            "SELECT x, y FROM r ORDER BY x DESC",
            "stopped",
        ),
    ],
)
def test_hostile_queries_stop_at_a_cap_with_a_clear_error(sql, reason):
    match = started(4, difficulty=5)
    every = ", ".join(spec.name for spec in match.game.world.tables)
    match.submit("player_0", call("query", sql=sql.format(every=every)))
    result = last_result(match)
    assert result.startswith("Error:") and reason in result, result
    assert not match.over and match.errors["player_0"] == 0
    # The connection still answers.
    match.submit("player_0", call("query", sql="SELECT 1"))
    assert last_result(match).startswith('["1"]')


@pytest.mark.parametrize(
    "action, hint",
    [
        ("SELECT name FROM products", "No tool call found"),
        (call("drop_database"), "There is no tool"),
        (call("query"), "Bad call of query"),
        (call("query", sql=7), "Bad call of query"),
        (call("describe", table="x" * 300), "Bad call of describe"),
        ('{"tool": "query", "arguments": {"sql": "SELECT 1"', "No tool call found"),
        (call("query", sql="SELECT '" + "x" * 1_000_000 + "'"), "No tool call found"),
        (call("answer", rows="everything"), "Bad call of answer"),
        ({"tool_calls": [{"type": "function", "function": {"name": "query", "arguments": "{not json"}}]}, "not valid JSON"),
    ],
)
def test_malformed_calls_are_invalid_actions_with_a_hint(action, hint):
    match = started(5)
    match.submit("player_0", action)
    assert hint in match.last_error["player_0"]
    assert not match.over


def test_megabyte_sql_within_the_action_limit_is_refused_by_the_schema():
    match = started(5, max_action_chars=2_000_000)
    match.submit("player_0", call("query", sql="SELECT 1 -- " + "x" * 1_000_000))
    assert "Bad call of query" in match.last_error["player_0"]


# ------------------------------------------------------------------ scoring


def test_submit_and_answer_are_scored_by_execution_match():
    match = started(6, difficulty=1)
    gold = match.game.world.gold
    match.submit("player_0", call("answer", rows=[list(row) for row in reversed(gold)] + [list(gold[0])]))
    assert match.over and match.returns["player_0"] == (1.0 if not match.game.world.program.ordered or len(gold) == 1 else 0.0)
    failed = started(6, difficulty=1)
    failed.submit("player_0", call("submit", sql="SELECT nothing FROM nowhere"))
    assert failed.over and failed.returns["player_0"] == 0.0 and "failed" in failed.outcome.reason


def test_result_match_orders_only_on_the_key_and_rounds_half_up():
    gold = [("a", 3), ("b", 2), ("c", 2)]
    assert result_match([("a", 3), ("c", 2), ("b", 2)], gold, True, (1,)) == (True, 1.0)
    assert result_match([("b", 2), ("a", 3), ("c", 2)], gold, True, (1,)) == (False, 0.5)
    assert result_match([("b", 2), ("a", 3), ("c", 2), ("c", 2)], gold, False, ()) == (True, 1.0)
    assert result_match([("a", 3)], gold, False, ()) == (False, 0.5)
    assert result_match([(12.13,)], [(12.125,)], False, ())[0]
    assert result_match([("0.29",)], [(0.285,)], False, ())[0]
    assert not result_match([(12.12,)], [(12.125,)], False, ())[0]
    assert result_match([], gold, False, ()) == (False, 0.0)


def test_partial_credit_pays_the_f1_of_the_rows():
    plain, partial = started(7, difficulty=1), started(7, difficulty=1, partial_credit=True)
    gold = plain.game.world.gold
    rows = [list(gold[0]), ["not", "here"]]
    for match in (plain, partial):
        match.submit("player_0", call("answer", rows=rows))
    expected = result_match(rows, gold, plain.game.world.program.ordered, plain.game.world.program.order_key)
    assert plain.returns["player_0"] == (1.0 if expected[0] else 0.0)
    assert partial.returns["player_0"] == pytest.approx(expected[1])


# ------------------------------------------------------------------ hidden state, copies and replay


def test_nothing_of_the_gold_reaches_the_player_or_the_spectator():
    for seed in range(10):
        match = started(seed, difficulty=4)
        world = match.game.world
        match.submit("player_0", call("list_tables"))
        match.submit("player_0", call("query", sql="SELECT bad"))
        texts = [json.dumps(match.agent_observation("player_0"), default=str), match.render(), json.dumps(match.info("player_0"), default=str)]
        match.submit("player_0", call("submit", sql="SELECT 1"))
        texts += [json.dumps(match.outcome.to_dict(), default=str), json.dumps(match.record(), default=str), match.render()]
        for text in texts:
            assert world.program.sql not in text
            assert json.dumps([list(r) for r in world.gold]) not in text


def test_snapshots_and_clones_rebuild_the_connection():
    match = started(8, difficulty=3)
    table = match.game.world.tables[0].name
    snapshot = match.snapshot()
    match.submit("player_0", call("query", sql=f"SELECT COUNT(*) FROM {table}"))
    first = last_result(match)
    match.restore(snapshot)
    assert match.game._db is None
    match.submit("player_0", call("query", sql=f"SELECT COUNT(*) FROM {table}"))
    assert last_result(match) == first
    twin = match.game.clone()
    assert twin.database.run(f"SELECT COUNT(*) FROM {table}")[1] == match.game.database.run(f"SELECT COUNT(*) FROM {table}")[1]


def test_records_replay_every_tool_call():
    match = started(9, difficulty=2)
    table = match.game.world.tables[1].name
    for action in (
        call("list_tables"),
        call("describe", table=table),
        call("query", sql=f"SELECT * FROM {table} LIMIT 3"),
        call("query", sql="DELETE FROM " + table),
        "no call",
        call("submit", sql=f"SELECT id FROM {table}"),
    ):
        match.submit("player_0", action)
    record = match.record()
    assert parlour.replay(record)["returns"] == record["returns"]
    tampered = json.loads(json.dumps(record))
    step = next(s for s in tampered["steps"] if s.get("calls") and s["calls"][0]["name"] == "query")
    step["calls"][0]["result"] = "0" * len(step["calls"][0]["result"])
    with pytest.raises(parlour.ReplayMismatch):
        parlour.replay(tampered)


def test_a_game_sets_its_own_tool_budget_and_the_option_still_overrides_it() -> None:
    """The whole SQL episode is one turn: the engine's general default of 8 calls left too few for eight tables."""
    from parlour.envs.games.tic_tac_toe import TicTacToe
    from parlour.envs.search.search import Search

    assert Match(SQL).settings.max_tool_calls == SQL.default_max_tool_calls == 30
    assert Match(SQL, {"max_tool_calls": 5}).settings.max_tool_calls == 5
    assert Match(Search).settings.max_tool_calls == 8
    assert TicTacToe.default_max_tool_calls == 8
