"""``parlour leaderboard seed``: a fresh board holds the built-in agents' verified, counted runs after one command."""

from __future__ import annotations

from parlour.cli import main
from parlour.evaluation.seating import counted_lineups
from parlour.leaderboard.api import Leaderboard

KUHN = "parlour/KuhnPoker-v0"
CODE = "parlour/Code-v0"


def test_one_command_seeds_a_fresh_board_with_verified_counted_runs(tmp_path, capsys):
    db = f"sqlite:///{tmp_path}/lb.db"
    assert main(["leaderboard", "seed", "--db", db, "--env", KUHN, "--env", CODE, "--episodes", "2", "--game-episodes", "0"]) == 0
    out = capsys.readouterr().out
    board = Leaderboard(db)
    kuhn, _ = counted_lineups(KUHN)
    code, oracles = counted_lineups(CODE)
    assert board.store.episode_count(KUHN, counted=True) == 2 * len(kuhn)
    assert board.store.episode_count(CODE, counted=True) == 2 * len(code)
    assert board.store.episode_count(counted=False) == 0
    # Every run went through a challenge of the board and its verification, stored under the seeding submitter.
    submissions = board.store.submitter("baselines")["submissions"]
    assert len(submissions) == len(kuhn) + len(code) and all(item["source"] == "challenge" for item in submissions)
    assert {row["agent"] for row in board.ratings(KUHN)["rows"]} == {name for run in kuhn for name in run.agents}
    # The privileged oracle is left out, and the output says so.
    assert [run.label for run in oracles] == ["reference"] and "reference not stored (a privileged oracle" in out
    assert not any("reference" in item["summary"]["agents"] for item in submissions)

    # Seeding again adds nothing twice.
    assert main(["leaderboard", "seed", "--db", db, "--env", KUHN, "--episodes", "2", "--game-episodes", "0"]) == 0
    assert "already seeded by baselines, skipped" in capsys.readouterr().out
    assert board.store.episode_count(KUHN, counted=True) == 2 * len(kuhn)
