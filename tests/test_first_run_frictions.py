"""The small frictions a new user meets first (issue 35): each mistake is answered with the fix, not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import parlour
from parlour.cli import main
from parlour.commands.train import read_roles
from parlour.envs.registry import closest_env_ids


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("tictactoe", "parlour/TicTacToe-v0"),
        ("tic-tac-toe", "parlour/TicTacToe-v0"),
        ("TicTacToe", "parlour/TicTacToe-v0"),
        ("parlour/TicTacToe-v1", "parlour/TicTacToe-v0"),
        ("connect4", "parlour/ConnectFour-v0"),
        ("kuhn_poker", "parlour/KuhnPoker-v0"),
    ],
)
def test_a_lowercase_or_loosely_typed_id_suggests_the_registered_one(typed: str, meant: str) -> None:
    with pytest.raises(KeyError, match=f"did you mean '{meant}'"):
        parlour.game_class(typed)
    assert closest_env_ids(typed, parlour.list_envs()) == [meant]


def test_an_id_like_nothing_suggests_nothing() -> None:
    assert closest_env_ids("xyzzy", parlour.list_envs()) == []


def test_leaderboard_show_with_a_bare_id_points_at_env(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["leaderboard", "show", "parlour/TicTacToe-v0"]) == 2
    assert "parlour leaderboard show --env parlour/TicTacToe-v0" in capsys.readouterr().err


def test_a_misspelt_key_in_a_roles_file_gets_did_you_mean(tmp_path: Path) -> None:
    roles = tmp_path / "roles.toml"
    roles.write_text('[solver]\nmodle = "models/b"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"unknown keys 'modle' \(did you mean 'model'\?\)"):
        read_roles(roles)


def test_vf_eval_with_an_unknown_id_shows_the_suggestion_without_a_traceback(tmp_path: Path) -> None:
    pytest.importorskip("verifiers")
    command = [
        str(Path(sys.executable).with_name("vf-eval")),
        "parlour_verifiers",
        "--env.taskset.env-id",
        "tictactoe",
        "--env.learner-seats",
        "[0]",
        "--model",
        "m",
        "-n",
        "1",
    ]
    # In a folder of its own: vf-eval writes its outputs/ under the working directory.
    finished = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    output = finished.stdout + finished.stderr
    assert "did you mean" in output and "parlour/TicTacToe-v0" in output
    assert "Traceback" not in output


def test_the_readme_tiny_model_plays_legal_moves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's first hf: command played 99.7% invalid moves: a random model writes no legal move as free text.
    `parlour tiny-model` now saves score_legal as the folder's mode, so the same command plays legal moves."""
    pytest.importorskip("transformers")
    folder = tmp_path / "tiny"
    assert main(["tiny-model", str(folder), "--env", "parlour/TicTacToe-v0"]) == 0
    assert "score_legal" in capsys.readouterr().out
    results = parlour.evaluate("parlour/TicTacToe-v0", [f"hf:{folder}", "random"], episodes=4, seed=0, progress=False)
    steps = [step for record in results.records for step in record["steps"] if record["agents"][step["player"]] == f"hf:{folder}"]
    assert steps and all(step["error"] is None for step in steps)
