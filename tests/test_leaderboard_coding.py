"""The leaderboard and the coding environments (issue 20): no privileged oracle counts, only rateable task sets are
rated, a page view runs no code, and every match has sandboxes of its own."""

from __future__ import annotations

import functools

import pytest
from fastapi.testclient import TestClient

import parlour
from parlour.envs.coding.common import TaskSource
from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.live import LiveHub
from parlour.leaderboard.server import create_app
from parlour.leaderboard.verify import Rejected, as_bundle, verify_bundle

CODE = "parlour/Code-v0"
CODER_TESTER = "parlour/CoderTester-v0"


@functools.cache
def _bundle(env_id: str, agents: tuple, episodes: int = 2) -> dict:
    return as_bundle(parlour.evaluate(env_id, list(agents), episodes=episodes, seed=0, progress=False))


@pytest.fixture
def board(tmp_path):
    """An empty leaderboard with the submitter alice."""
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db", min_challenge_episodes=1)
    board.add_submitter("alice")
    return board


@pytest.mark.parametrize("env_id, agents", [(CODE, ("reference",)), (CODER_TESTER, ("phrasebook", "reference"))])
def test_the_privileged_reference_oracle_is_never_verified(env_id, agents, board):
    with pytest.raises(Rejected, match="privileged oracle"):
        verify_bundle(_bundle(env_id, agents))
    with pytest.raises(Rejected, match="privileged oracle"):
        board.issue_challenge("alice", env_id, list(agents))
    # Its fair built-in neighbours still count.
    assert verify_bundle(_bundle(CODE, ("phrasebook",))).episodes


def test_a_live_match_never_seats_the_privileged_oracle(board):
    with pytest.raises(Rejected, match="privileged oracle"):
        LiveHub(board, episodes=1).create("alice", CODER_TESTER, "mine", opponent="reference")


def test_a_task_set_that_is_not_rateable_is_not_rated(board, monkeypatch):
    honest = _bundle(CODE, ("phrasebook",))
    monkeypatch.setattr(TaskSource, "rateable", property(lambda self: False))
    with pytest.raises(Rejected, match="not rateable"):
        verify_bundle(honest)
    with pytest.raises(Rejected, match="not rateable"):
        board.issue_challenge("alice", CODE, ["phrasebook"])
    with pytest.raises(Rejected, match="not rateable"):
        LiveHub(board, episodes=1).create("alice", CODER_TESTER, "mine", opponent="phrasebook")


def test_a_page_view_of_a_coding_episode_runs_no_code(board, monkeypatch):
    from parlour.envs.coding import judge
    from parlour.sandbox import Sandbox

    board.submit(parlour.evaluate(CODER_TESTER, ["phrasebook", "random"], episodes=1, seed=3, progress=False), "alice")
    episode = 1  # the first episode of a fresh board
    record = board.store.episode(episode)["record"]

    def refuse(*args, **kwargs):
        raise AssertionError("a page view started a sandbox")

    monkeypatch.setattr(Sandbox, "__init__", refuse)
    monkeypatch.setattr(judge, "_WARM", {})
    page = TestClient(create_app(board)).get(f"/episode/{episode}.html")
    assert page.status_code == 200
    # The verdict and the submitted code come from the record.
    assert record["outcome"]["reason"].replace("'", "&#39;") in page.text
    assert "drawn from the record" in page.text
