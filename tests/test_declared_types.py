"""The declared types of the data that crosses layers describe it as it is written (issue 36).

Records (:class:`~parlour.envs.core.record_types.Record`), rating tables (:mod:`parlour.leaderboard.tables`) and
results (:mod:`parlour.evaluation.results`) are TypedDicts: each test makes the data the way the package does
and checks that every key written is declared and every key declared as required is written, at every level.
The named tuples that replaced bare tuples still unpack in their old order.
"""

from __future__ import annotations

import typing

import numpy as np
import pytest

from parlour.envs.core.agent import AgentFailure
from parlour.envs.core.match import Match
from parlour.envs.core.record import Record, Step, ToolCall, replay
from parlour.envs.games import boards, dots_and_boxes, y
from parlour.envs.registry import game_class
from parlour.evaluation import results as results_types
from parlour.evaluation.runner import evaluate
from parlour.leaderboard import ratings
from parlour.leaderboard import tables as declared
from parlour.wrappers import kv_store
from tests.test_leaderboard_provisional import SEATS, STRANGERS


def assert_fits(value: typing.Mapping[str, typing.Any], declared: type, where: str) -> None:
    """``value`` has only keys ``declared`` names, and all the keys it requires."""
    hints = typing.get_type_hints(declared, include_extras=True)
    required = {key for key, hint in hints.items() if typing.get_origin(hint) is not typing.NotRequired}
    assert set(value) <= set(hints), f"{where}: {declared.__name__} does not declare {sorted(set(value) - set(hints))}"
    assert required <= set(value), f"{where}: {declared.__name__} requires {sorted(required - set(value))}, missing"


def assert_record(record: Record, where: str) -> None:
    assert_fits(record, Record, where)
    for index, step in enumerate(record["steps"]):
        assert_fits(step, Step, f"{where} step {index}")
        for call in step.get("calls", []):
            assert_fits(call, ToolCall, f"{where} step {index} call")


def test_a_record_with_cut_text_a_failure_and_a_forfeit_is_a_record():
    match = Match(game_class("parlour/TicTacToe-v0"), {"max_action_chars": 4, "error_allowance": 3})
    match.reset(5)
    match.submit("player_0", "b2")
    match.submit("player_1", "a long reply that is cut")
    match.submit("player_1", AgentFailure("the model server is down"))
    match.submit("player_1", AgentFailure("the model server is still down", forfeit=True))
    record = match.record({"player_0": "me", "player_1": "you"})
    assert {"action_chars", "failure", "forfeit"} <= {key for step in record["steps"] for key in step}
    assert_record(record, "TicTacToe")
    assert_record(replay(record), "replayed TicTacToe")


def test_a_record_with_tool_calls_is_a_record():
    match = Match(game_class("parlour/Search-v0"), {})
    match.reset(2)
    (player,) = match.acting()
    match.submit(player, '<tool_call>{"name": "search", "arguments": {"query": "capital"}}</tool_call>')
    record = match.record()
    assert record["steps"][0].get("calls"), record["steps"][0]
    assert_record(record, "Search")


def test_an_evaluation_writes_records_results_and_summaries_as_declared():
    results = evaluate("parlour/PriceNegotiation-v0", ["random", "random"], episodes=6, seed=3, progress=False)
    for record in results.records:
        assert_record(record, "PriceNegotiation")
        assert {"agents", "agent_seeds", "episode"} <= set(record)
    assert_fits(results.metadata(), results_types.Metadata, "metadata")
    assert_fits(results.failures(), results_types.Failures, "failures")
    summary = results.summary
    assert summary
    for name, block in summary.items():
        assert_fits(block, results_types.AgentBlock, name)
        assert "negotiation" in block and "win_rate" in block
        assert_fits(block["negotiation"], results_types.NegotiationBlock, f"{name} negotiation")
        for seat, seat_block in block["seats"].items():
            assert_fits(seat_block, results_types.SeatBlock, f"{name} in {seat}")
    metrics = results_types.negotiation_metrics(results.records[0], "player_0")
    assert metrics is not None
    assert_fits(metrics, results_types.NegotiationMetrics, "negotiation metrics")


def _tables() -> dict[str, declared.RatingTable]:
    """A table of every method, each with ranked and provisional rows, and a single-agent one."""
    tables = {}
    for kind, (base, stranger, options) in STRANGERS.items():
        seats = len(options["players"])
        tables[kind] = ratings.env_table(base() + stranger(), seats, bootstrap=20, **options)
    solo = [
        (f"s{index:03d}", {"player_0": name}, {"player_0": float(index % 3) * skill})
        for index in range(24)
        for name, skill in (("random", 1), ("best", 2))
    ]
    tables["score"] = ratings.env_table(solo, 1, bootstrap=20, category="puzzle", players=["player_0"])
    negotiation = STRANGERS["alpha-rank"]
    tables["negotiation"] = ratings.env_table(
        negotiation[0]() + negotiation[1](), 2, bootstrap=20, category="negotiation", zero_sum=False, players=SEATS
    )
    return tables


def test_every_rating_table_is_a_rating_table():
    tables = _tables()
    assert {table["method"] for table in tables.values()} == {"bradley-terry", "payoff", "team", "roles", "score"}
    for kind, table in tables.items():
        assert_fits(table, declared.RatingTable, kind)
        assert any(row["provisional"] for row in table["rows"]) or kind == "score", kind
        for row in table["rows"]:
            assert_fits(row, declared.RatingRow, f"{kind} row of {row['agent']}")
        for row in table.get("teams", []):
            assert_fits(row, declared.TeamRow, f"{kind} team {row['team']}")
        for row in table.get("negotiation", []):
            assert_fits(row, declared.NegotiationRow, f"{kind} negotiation row of {row['agent']}")
        if "meta_game" in table:
            assert_fits(table["meta_game"], declared.MetaGame, f"{kind} meta-game")
    assert "negotiation" in tables["negotiation"] and "meta_game" in tables["payoff"] and "teams" in tables["team"]


def test_normalised_and_overall_tables_are_as_declared():
    tables = _tables()
    references = {"bradley-terry": ("minimax",), "payoff": ("ppo",), "team": ("good",), "roles": ("honest", "lazy"), "score": ("best",)}
    normalised = {kind: ratings.normalised(tables[kind], names) for kind, names in references.items()}
    assert any(entry["normalised"] for entry in normalised.values()) and not ratings.normalised(tables["score"], ())["normalised"]
    for kind, entry in {**normalised, "refused": ratings.normalised(tables["score"], ())}.items():
        assert_fits(entry, declared.Normalised, kind)
        for name, scaled in (entry["scores"] or {}).items():
            assert_fits(scaled, declared.Scaled, f"{kind} score of {name}")
    overall = ratings.overall(normalised, categories={kind: "game" for kind in normalised})
    for scope, table in {"overall": overall, **overall["categories"]}.items():
        assert_fits(table, declared.OverallTable, scope)
        assert table["reference"] is not None
        for row in [*table["rows"], table["reference"]]:
            assert_fits(row, declared.OverallRow, f"{scope} row of {row['agent']}")


@pytest.mark.parametrize(
    "made, fields",
    [
        (lambda: ratings.fit_bradley_terry(np.array([[0.0, 3.0], [1.0, 0.0]])), ("theta", "eta", "covariance")),
        (lambda: y.layout(3), ("cells", "neighbours", "sides")),
        (lambda: dots_and_boxes.layout(2, 2), ("names", "beside", "sides")),
        (lambda: boards.step_moves(3, 3, ((1, 0),)), ("names", "ends", "steps")),
        (lambda: kv_store.layout([3, 4], [1, 0]), ("prefix", "width", "columns")),
    ],
)
def test_named_tuples_unpack_in_their_old_order(made, fields):
    value = made()
    assert isinstance(value, tuple) and value._fields == fields
    assert tuple(value) == tuple(getattr(value, name) for name in fields)
