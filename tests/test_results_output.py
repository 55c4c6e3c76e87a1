"""Evaluation output: negotiation metrics, CSV and pandas-friendly export, the plot, and what a "-" in a table means."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from parlour.cli import main
from parlour.leaderboard.results import Results
from parlour.leaderboard.runner import evaluate


@pytest.fixture(scope="module")
def negotiation() -> Results:
    """Random against random in PriceNegotiation: some deals, some failures."""
    return evaluate("parlour/PriceNegotiation-v0", ["random", "random"], episodes=24, seed=3, progress=False)


# ------------------------------------------------------------------ 1. negotiation metrics


def test_the_summary_has_each_agents_negotiation_metrics(negotiation: Results, tmp_path: Path) -> None:
    details = [record["outcome"]["details"] for record in negotiation.records]
    block = negotiation.summary["random"]["negotiation"]
    # Every episode has each agent in one seat, so the agent's rates are the run's.
    assert block["episodes"] == 24
    assert block["agreement_rate"] == pytest.approx(sum(d["agreement"] for d in details) / 24)
    assert block["agreement_rate_ci95"][0] <= block["agreement_rate"] <= block["agreement_rate_ci95"][1]
    assert block["mean_social_welfare"] == pytest.approx(sum(d["social_welfare"] for d in details) / 24)
    assert block["mean_pareto_distance"] == pytest.approx(sum(d["pareto_distance"] for d in details) / 24)
    assert block["mean_nash_distance"] == pytest.approx(sum(d["nash_distance"] for d in details) / 24)
    assert block["pareto_optimal_rate"] == pytest.approx(sum(d["pareto_optimal"] for d in details) / 24)
    mine = [r["outcome"]["details"]["utilities"][seat] for r in negotiation.records for seat, name in r["agents"].items() if name == "random"]
    assert block["mean_utility"] == pytest.approx(sum(mine) / len(mine))
    buyer = negotiation.summary["random"]["seats"]["buyer"]["negotiation"]
    assert buyer["episodes"] == 12
    negotiation.save(tmp_path)
    saved = json.loads((tmp_path / "summary.json").read_text())["summary"]
    assert saved["random #2"]["negotiation"]["agreement_rate"] == pytest.approx(block["agreement_rate"])


def test_games_without_an_outcome_analysis_have_no_negotiation_metrics() -> None:
    results = evaluate("parlour/TicTacToe-v0", ["random", "random"], episodes=2, progress=False)
    assert "negotiation" not in results.summary["random"]
    assert "agreement" not in results.table()


def test_the_eval_table_shows_the_negotiation_metrics(negotiation: Results) -> None:
    table = negotiation.table()
    header = table.splitlines()[1]
    for column in ("agreement", "utility", "welfare", "pareto dist", "nash dist"):
        assert column in header
    block = negotiation.summary["random"]["negotiation"]
    first = table.splitlines()[3]
    assert f"{block['agreement_rate']:.0%}" in first and f"{block['mean_nash_distance']:.3f}" in first


def test_play_ends_a_negotiation_with_its_metrics(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("[pass]\n" * 12))
    assert main(["play", "parlour/Bargaining-v0", "--opponent", "random", "--seed", "3"]) == 0
    ending = capsys.readouterr().out.split("Final state:")[1]
    assert "Your utility: " in ending and "Social welfare: " in ending and "(best possible " in ending
    assert "distance to the Pareto frontier " in ending and "Distance to the Nash bargaining solution (player_0 " in ending


# ------------------------------------------------------------------ 4. "-" in the tables


def test_a_competitive_game_without_a_winner_is_all_draws_not_a_dash() -> None:
    results = evaluate("parlour/IteratedPrisonersDilemma-v0", ["always_cooperate", "tit_for_tat"], episodes=4, progress=False)
    block = results.summary["always_cooperate"]
    assert (block["win_rate"], block["draw_rate"], block["loss_rate"]) == (0.0, 1.0, 0.0)
    row = results.table().splitlines()[3]
    assert "0%/100%/0%" in row


def test_every_dash_in_the_table_is_explained() -> None:
    # A cooperative game names no winners: its W/D/L column is a dash, and the table says why.
    results = evaluate("parlour/Hanabi-v0", ["random", "random"], episodes=2, progress=False)
    table = results.table()
    rows = table.splitlines()
    assert " - " in rows[3]
    header = rows[1]
    explained = [line for line in rows if line.startswith('"-" under ')]
    assert any("win/draw/loss" in line and "names no winners" in line for line in explained)
    assert any("tokens" in line for line in explained)
    assert "win/draw/loss" in header
