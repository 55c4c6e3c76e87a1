"""``parlour eval`` end to end and ``parlour play`` driven through a fake stdin."""

from __future__ import annotations

import io
import json
import sys

import parlour
from parlour.cli import main
from parlour.evaluation.results import Results


def test_eval_prints_the_summary_and_writes_a_replayable_bundle(tmp_path, capsys) -> None:
    out = tmp_path / "bundle"
    argv = ["eval", "parlour/TicTacToe-v0", "--agent", "minimax", "--opponent", "random", "--episodes", "6"]
    argv += ["--seed", "1", "--out", str(out), "--env-kwarg", "error_allowance=0", "--quiet"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "minimax" in printed and "random" in printed and "player_1" in printed
    bundle = Results.load(out)
    assert bundle.agents == ["minimax", "random"]
    assert (bundle.seed, bundle.episodes, bundle.env_kwargs) == (1, 6, {"error_allowance": 0})
    assert [record["episode"] for record in bundle.records] == list(range(6))
    assert all(record["options"] == {"error_allowance": 0} for record in bundle.records)
    for record in bundle.records:
        parlour.replay(record)
    assert json.loads((out / "summary.json").read_text())["summary"]["minimax"]["loss_rate"] == 0.0


def test_eval_without_opponent_plays_random_and_shows_progress(tmp_path, capsys) -> None:
    assert main(["eval", "parlour/TicTacToe-v0", "--agent", "minimax", "--episodes", "2", "--out", str(tmp_path)]) == 0
    assert Results.load(tmp_path).agents == ["minimax", "random"]
    assert "2/2" in capsys.readouterr().err


def play(monkeypatch, capsys, typed: str, *argv: str) -> tuple[int, str]:
    """Run ``parlour play`` with ``typed`` as the person's input; returns the exit status and what was printed."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    status = main(["play", "parlour/TicTacToe-v0", *argv])
    return status, capsys.readouterr().out


def test_play_shows_the_llm_observation_and_ends_with_the_result(monkeypatch, capsys) -> None:
    status, printed = play(
        monkeypatch,
        capsys,
        "b2\nno idea\n" + "\n".join(["a1", "b1", "c1", "a2", "c2", "a3", "b3", "c3"]) + "\n",
        "--opponent",
        "minimax",
        "--seed",
        "0",
    )
    assert status == 0
    assert "You are playing Tic-tac-toe as X (player_0)" in printed
    assert "Invalid action: No move found" in printed
    assert "player_0 (X) plays b2." in printed
    assert "Game over:" in printed
    assert "Quit." not in printed


def test_play_as_second_seat_and_quit_on_eof(monkeypatch, capsys) -> None:
    status, printed = play(monkeypatch, capsys, "", "--seat", "player_1", "--seed", "0")
    assert status == 0
    assert "as O (player_1)" in printed
    assert "player_0 (X) plays" in printed
    assert printed.rstrip().endswith("Quit.")


def test_play_rejects_an_unknown_seat(monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["play", "parlour/TicTacToe-v0", "--seat", "dealer"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("parlour play: error: --seat must be one of player_0, player_1 or an index below 2, got 'dealer'")
