"""Evaluation output: negotiation metrics, CSV and pandas-friendly export, the plot, and what a "-" in a table means."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from parlour.cli import main
from parlour.evaluation.results import Results
from parlour.evaluation.runner import evaluate


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


# ------------------------------------------------------------------ 2. CSV and pandas


def test_to_records_gives_one_flat_row_per_episode_and_seat(negotiation: Results) -> None:
    rows = negotiation.to_records()
    assert len(rows) == 2 * len(negotiation.records)
    first = negotiation.records[0]
    seller = next(row for row in rows if row["episode"] == first["episode"] and row["seat"] == "seller")
    assert seller["agent"] == first["agents"]["seller"] and seller["reward"] == first["returns"]["seller"]
    assert seller["seed"] == first["seed"] and seller["env_id"] == "parlour/PriceNegotiation-v0"
    assert seller["agreement"] == first["outcome"]["details"]["agreement"]
    assert seller["nash_distance"] == first["outcome"]["details"]["nash_distance"]
    assert seller["result"] in ("win", "draw", "loss")
    for row in rows:
        assert all(not isinstance(value, (dict, list)) for value in row.values())
    assert sum(row["reward"] for row in rows if row["agent"] == "random") / 24 == pytest.approx(negotiation.summary["random"]["mean_reward"])


def test_to_csv_writes_the_records_with_a_header(negotiation: Results, tmp_path: Path) -> None:
    import csv

    path = negotiation.to_csv(tmp_path / "out" / "episodes.csv")
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    expected = negotiation.to_records()
    assert len(rows) == len(expected)
    assert list(rows[0]) == list(expected[0])
    assert float(rows[5]["reward"]) == expected[5]["reward"] and rows[5]["agent"] == expected[5]["agent"]


def test_to_pandas_is_a_data_frame_of_the_records(negotiation: Results) -> None:
    pandas = pytest.importorskip("pandas")
    frame = negotiation.to_pandas()
    assert isinstance(frame, pandas.DataFrame) and len(frame) == 48
    assert frame.groupby("agent")["reward"].mean()["random"] == pytest.approx(negotiation.summary["random"]["mean_reward"])


def test_to_pandas_without_pandas_says_how_to_get_it(negotiation: Results, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        negotiation.to_pandas()


def test_eval_writes_a_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tables" / "ttt.csv"
    status = main(
        ["eval", "parlour/TicTacToe-v0", "--agent", "random", "--episodes", "3", "--quiet", "--out", str(tmp_path / "bundle"), "--csv", str(path)]
    )
    assert status == 0
    lines = path.read_text().splitlines()
    assert lines[0].startswith("env_id,episode,seed,seat,agent,reward,result") and len(lines) == 1 + 6
    assert str(path) in capsys.readouterr().out


# ------------------------------------------------------------------ 3. the plot


def test_plot_writes_a_png_with_a_panel_per_figure(negotiation: Results, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from PIL import Image

    path = negotiation.plot(tmp_path / "plots" / "price.png")
    with Image.open(path) as image:
        assert image.format == "PNG"
        wide = image.size
    # Mean reward, win rate and agreement rate: three panels side by side; a game without winners or deals has one.
    single = evaluate("parlour/Hanabi-v0", ["random", "random"], episodes=2, progress=False).plot(tmp_path / "hanabi.png")
    with Image.open(single) as image:
        assert image.format == "PNG" and image.size[0] * 2 < wide[0]


def test_plot_without_matplotlib_says_how_to_get_it(negotiation: Results, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        negotiation.plot("never.png")


def test_eval_writes_a_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "ttt.png"
    status = main(
        ["eval", "parlour/TicTacToe-v0", "--agent", "minimax", "--episodes", "4", "--quiet", "--out", str(tmp_path / "bundle"), "--plot", str(path)]
    )
    assert status == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot: {path}" in capsys.readouterr().out


def test_eval_without_matplotlib_refuses_plot_before_playing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None if name == "matplotlib" else real(name, *rest))
    status = main(
        [
            "eval",
            "parlour/TicTacToe-v0",
            "--agent",
            "random",
            "--episodes",
            "2",
            "--quiet",
            "--out",
            str(tmp_path / "bundle"),
            "--plot",
            str(tmp_path / "p.png"),
        ]
    )
    assert status == 2
    assert "pip install matplotlib" in capsys.readouterr().err
    assert not (tmp_path / "bundle").exists()


def test_the_demos_round_robin_explains_its_dashes(capsys: pytest.CaptureFixture[str]) -> None:
    from parlour.commands.demo import print_round_robin

    cooperative = evaluate("parlour/Hanabi-v0", ["random", "random"], episodes=2, progress=False).summary
    competitive = evaluate("parlour/IteratedPrisonersDilemma-v0", ["always_cooperate", "tit_for_tat"], episodes=2, progress=False).summary
    print_round_robin("parlour/IteratedPrisonersDilemma-v0", [("always_cooperate", "vs tit_for_tat", competitive["always_cooperate"])])
    printed = capsys.readouterr().out
    assert "100%" in printed and '"-"' not in printed
    print_round_robin("parlour/Hanabi-v0", [("random", "with random #2", cooperative["random"])])
    printed = capsys.readouterr().out
    assert '"-": the game names no winners' in printed
