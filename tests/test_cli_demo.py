"""``parlour list`` and ``parlour demo`` end to end."""

from __future__ import annotations

import parlour
from parlour.cli import main
from parlour.leaderboard.api import Leaderboard


def test_list_prints_every_environment_with_players(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for env_id in parlour.list_envs():
        assert env_id in out
    assert "seller, buyer" in out


def test_demo_plays_round_robin_and_fills_the_leaderboard(tmp_path, capsys):
    out_dir = tmp_path / "demo"
    site = tmp_path / "site"
    code = main(
        ["demo", "--no-serve", "--episodes", "6", "--out", str(out_dir), "--export", str(site),
         "--env", "parlour/TicTacToe-v0", "--env", "parlour/IteratedPrisonersDilemma-v0"]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "minimax" in printed and "tit_for_tat" in printed and "Overall leaderboard" in printed
    board = Leaderboard(f"sqlite:///{out_dir / 'leaderboard.db'}")
    table = board.ratings("parlour/TicTacToe-v0")
    names = {row["agent"] for row in table["rows"]}
    assert names == {"minimax", "random"}
    ipd = {row["agent"] for row in board.ratings("parlour/IteratedPrisonersDilemma-v0")["rows"]}
    assert {"tit_for_tat", "always_defect", "always_cooperate", "random"} <= ipd
    assert (site / "index.html").exists()


def test_demo_rejects_unknown_environment(tmp_path, capsys):
    assert main(["demo", "--no-serve", "--env", "parlour/Nope-v0", "--out", str(tmp_path / "x")]) == 2
    assert "unknown environment" in capsys.readouterr().out
