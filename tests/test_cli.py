"""The command line end to end: ``parlour list``, ``parlour demo``, error handling and defaults of ``parlour eval``."""

from __future__ import annotations

import parlour
from parlour.baselines import scripted_names
from parlour.cli import main
from parlour.evaluation.results import Results
from parlour.evaluation.seating import lineups
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
        [
            "demo",
            "--no-serve",
            "--episodes",
            "6",
            "--game-episodes",
            "0",
            "--out",
            str(out_dir),
            "--export",
            str(site),
            "--env",
            "parlour/TicTacToe-v0",
            "--env",
            "parlour/IteratedPrisonersDilemma-v0",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "minimax" in printed and "tit_for_tat" in printed and "Overall leaderboard" in printed
    board = Leaderboard(f"sqlite:///{out_dir / 'leaderboard.db'}")
    table = board.ratings("parlour/TicTacToe-v0")
    names = {row["agent"] for row in table["rows"]}
    # The shipped MaskablePPO policy plays too where stable-baselines3 is installed.
    assert names == {"minimax", "random"} | ({"ppo"} & set(scripted_names("parlour/TicTacToe-v0")))
    ipd = {row["agent"] for row in board.ratings("parlour/IteratedPrisonersDilemma-v0")["rows"]}
    assert {"tit_for_tat", "always_defect", "always_cooperate", "random"} <= ipd
    assert (site / "index.html").exists()


def test_demo_export_reuses_the_bundles_already_played(tmp_path, capsys, monkeypatch):
    import parlour.evaluation.runner as runner

    out_dir = tmp_path / "demo"
    argv = [
        "demo",
        "--no-serve",
        "--episodes",
        "4",
        "--game-episodes",
        "0",
        "--out",
        str(out_dir),
        "--env",
        "parlour/TicTacToe-v0",
        "--env",
        "parlour/Nim-v0",
    ]
    assert main(argv) == 0
    first = capsys.readouterr().out
    bundles = sorted(out_dir.glob("*/*/episodes.jsonl"))
    assert len(bundles) == len(lineups("parlour/TicTacToe-v0")) + len(lineups("parlour/Nim-v0"))
    written = [bundle.stat().st_mtime_ns for bundle in bundles]
    played = []
    monkeypatch.setattr(runner, "evaluate", lambda *args, **kwargs: played.append(args))
    monkeypatch.setattr(Leaderboard, "submit", lambda *args, **kwargs: played.append(args))

    assert main([*argv, "--export", str(tmp_path / "site")]) == 0
    assert played == [] and [bundle.stat().st_mtime_ns for bundle in bundles] == written
    assert (tmp_path / "site" / "index.html").exists()
    # The same tables, from the bundles on disk.
    assert capsys.readouterr().out.splitlines()[:-1] == first.splitlines()
    nim = {"nim_sum", "random"} | ({"ppo"} & set(scripted_names("parlour/Nim-v0")))
    assert {row["agent"] for row in Leaderboard(f"sqlite:///{out_dir / 'leaderboard.db'}").ratings("parlour/Nim-v0")["rows"]} == nim


def test_demo_with_other_settings_starts_afresh(tmp_path, capsys):
    out_dir = tmp_path / "demo"
    argv = ["demo", "--no-serve", "--game-episodes", "0", "--out", str(out_dir), "--env", "parlour/Nim-v0"]
    assert main([*argv, "--episodes", "2"]) == 0
    assert main([*argv, "--episodes", "3"]) == 0
    bundles = list(out_dir.glob("*/*/"))
    assert len(bundles) == len(lineups("parlour/Nim-v0"))
    assert all(len(Results.load(bundle).records) == 3 for bundle in bundles)
    table = Leaderboard(f"sqlite:///{out_dir / 'leaderboard.db'}").ratings("parlour/Nim-v0")
    assert table["episodes"] == 3 * len(bundles)


def test_demo_rejects_unknown_environment(tmp_path, capsys):
    assert main(["demo", "--no-serve", "--env", "parlour/Nim-v1", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("parlour demo: error: unknown environment 'parlour/Nim-v1' (did you mean 'parlour/Nim-v0'")
    assert not (tmp_path / "x").exists()


def test_cli_user_errors_are_messages_not_tracebacks(capsys):
    assert main(["eval", "parlour/Nope-v0", "--agent", "random", "--quiet"]) == 2
    assert "unknown environment 'parlour/Nope-v0'" in capsys.readouterr().err
    assert main(["eval", "parlour/TicTacToe-v0", "--agent", "nosuch", "--quiet", "--episodes", "1"]) == 2
    assert "no agent 'nosuch'" in capsys.readouterr().err


def test_eval_writes_its_bundle_under_results_by_default(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "parlour/Nim-v0", "--agent", "nim_sum", "--episodes", "4", "--quiet"]) == 0
    bundle = tmp_path / "results" / "Nim-v0" / "nim_sum-vs-random"
    assert (bundle / "episodes.jsonl").exists() and (bundle / "summary.json").exists()


def test_cli_reports_bad_options_missing_models_and_modules_in_one_line(capsys):
    assert main(["eval", "parlour/TicTacToe-v0", "--agent", "random", "--env-kwarg", "foo=1", "--quiet"]) == 2
    assert "unknown option(s) 'foo'" in capsys.readouterr().err
    assert main(["eval", "parlour/TicTacToe-v0", "--agent", "hf:/nonexistent/model", "--quiet"]) == 2
    assert "no model folder at '/nonexistent/model'" in capsys.readouterr().err
    assert main(["eval", "parlour/TicTacToe-v0", "--agent", "python:nonexistent_mod:f", "--quiet"]) == 2
    assert "nonexistent_mod" in capsys.readouterr().err
    assert main(["demo", "--episodes", "0", "--no-serve"]) == 2
    assert capsys.readouterr().err.startswith("parlour demo: error: --episodes must be at least 1")
