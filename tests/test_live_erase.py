"""Issue 32: no player action erases a live match. Each attempt of the issue is replayed end to end: a move that
crashes the judge, a program that prints its uid or the clock (it passes the determinism check and would not
replay when the match is stored); every match is stored, failures with their reasons, and the agent cannot start
its match again to erase the result."""

from __future__ import annotations

import json
import time

import pytest
from fastapi.testclient import TestClient

from parlour.envs.coding import coder_tester, judge
from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.live import LiveHub
from parlour.leaderboard.server import create_app
from parlour.leaderboard.verify import Rejected
from parlour.sandbox import Sandbox
from tests.test_leaderboard_challenges import seeded_nonces

CODER_TESTER = "parlour/CoderTester-v0"
PROPOSER_SOLVER = "parlour/CodeProposerSolver-v0"
#: seeded_nonces(1) draws a CoderTester task whose reference returns a 400-digit int on [10**400, 1] in the episode
#: the remote agent tests (episode 1): the issue's judge crash, `same(10**400 + ..., 1.5)`.
CRASH_SEED = 1
OVERFLOW = "assert solve([1" + "0" * 400 + ", 1]) == 1.5"


@pytest.fixture
def board(tmp_path):
    """An empty leaderboard with the submitter alice."""
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db", bootstrap=10)
    board.add_submitter("alice")
    return board


def submit(code: str) -> str:
    """A submit(code) tool call as an agent writes it."""
    return json.dumps({"tool": "submit", "arguments": {"code": code}})


def play(hub: LiveHub, live, move) -> list[dict]:
    """Play ``move(turn)`` on every turn of ``live`` until it ends; the answers of the act calls. The final turn answer is last."""
    answers = []
    while (turn := hub.turn(live, wait=30.0))["status"] == "act":
        answers.append(hub.act(live, turn["turn"], move(turn)))
    return answers + [turn]


def stored_summary(board: Leaderboard, submission: int) -> dict:
    """The summary kept with a stored submission."""
    info = board.store.submission(submission)
    assert info is not None and info["source"] == "live"
    return info["summary"]


def test_a_judge_crash_is_stored_as_the_testers_forfeit(board, monkeypatch):
    # Whatever the judge does with an assert (the issue's OverflowError, or any other exception), the match is stored.
    real = judge.same

    def old_same(got, expected):
        if isinstance(got, int) and isinstance(expected, float) and abs(got) > 10**300:
            raise OverflowError("int too large to convert to float")
        return real(got, expected)

    monkeypatch.setattr(judge, "same", old_same)
    hub = LiveHub(board, turn_timeout=30, episodes=2, match_secrets=seeded_nonces(CRASH_SEED))
    created = hub.create("alice", CODER_TESTER, "crasher", "phrasebook")
    live = hub.get(created["match"], "alice")
    answers = play(hub, live, lambda turn: submit(OVERFLOW if turn["observation"]["view"]["role"] == "tester" else "def solve(x):\n    return 0"))
    done = answers[-1]
    # The crashing move was answered, not a server error, and the match went on to its end.
    assert answers[1]["status"] == "failed" and "OverflowError" in answers[1]["detail"]
    assert done["status"] == "done" and done["episodes"] == 2
    assert [failure["episode"] for failure in done["failures"]] == [1] and "OverflowError" in done["failures"][0]["reason"]
    summary = stored_summary(board, done["submission"])
    assert summary["status"] == "failed"
    (failure,) = summary["failures"]
    # What was played is kept: the episode as far as it went, and the move that failed.
    assert failure["record"]["env_id"] == CODER_TESTER and OVERFLOW in json.dumps(failure["action"])
    # The failed episode counts as the tester's forfeit, with the reason in its (replayable) record.
    episodes = board.store.episodes(submission=done["submission"])
    assert len(episodes) == 2
    forfeit = next(item for item in episodes if item["seating"]["tester"] == "crasher")
    record = board.store.episode(forfeit["id"])["record"]
    assert record["returns"]["tester"] == -1.0 and any(step.get("forfeit") and "OverflowError" in step["failure"] for step in record["steps"])
    # And the agent cannot start again to erase it.
    with pytest.raises(Rejected, match="already played its live match"):
        hub.create("alice", CODER_TESTER, "crasher", "phrasebook")


def test_the_issues_overflow_assert_is_stored_with_the_match(board):
    # The same move against the real judge: a comparison that cannot be made is False (judge.same is total), or, should
    # the judge ever raise, the episode is stored as a failure. Either way the match is stored and cannot be replayed.
    hub = LiveHub(board, turn_timeout=30, episodes=2, match_secrets=seeded_nonces(CRASH_SEED))
    live = hub.get(hub.create("alice", CODER_TESTER, "overflow", "phrasebook")["match"], "alice")
    answers = play(hub, live, lambda turn: submit(OVERFLOW if turn["observation"]["view"]["role"] == "tester" else "def solve(x):\n    return 0"))
    done = answers[-1]
    assert done["status"] == "done" and done["episodes"] == 2
    assert board.store.live_match_of("alice", CODER_TESTER, ["overflow", "phrasebook"]) == done["submission"]
    with pytest.raises(Rejected, match="already played its live match"):
        hub.create("alice", CODER_TESTER, "overflow", "phrasebook")


def test_a_crash_over_http_is_answered_and_stored(board, monkeypatch):
    # The issue's symptom: HTTP 500 on the move, the match in error, nothing stored, the agent free to start again.
    real = coder_tester.CoderTester.apply

    def crashing(self, ctx, moves):
        if "CRASH" in moves["tester"]["arguments"]["code"]:
            raise OverflowError("int too large to convert to float")
        return real(self, ctx, moves)

    monkeypatch.setattr(coder_tester.CoderTester, "apply", crashing)
    token = board.store.add_submitter("bob")
    client = TestClient(create_app(board, live_episodes=2), raise_server_exceptions=False)
    auth = {"Authorization": f"Bearer {token}"}
    created = client.post("/api/live", json={"env_id": CODER_TESTER, "agent": "http-crasher", "opponent": "phrasebook"}, headers=auth)
    assert created.status_code == 201
    match = created.json()["match"]
    while (turn := client.get(f"/api/live/{match}/turn", params={"wait": 30}, headers=auth).json())["status"] == "act":
        role = turn["observation"]["view"]["role"]
        answer = client.post(
            f"/api/live/{match}/act",
            headers=auth,
            json={"turn": turn["turn"], "action": submit("assert solve(1) == 2  # CRASH" if role == "tester" else "def solve(x):\n    return 0")},
        )
        assert answer.status_code == 200
    assert turn["status"] == "done" and len(turn["failures"]) == 1 and "OverflowError" in turn["failures"][0]["reason"]
    shown = client.get(f"/api/submissions/{turn['submission']}").json()["summary"]
    assert shown["status"] == "failed" and "OverflowError" in shown["failures"][0]["reason"] and shown["failures"][0]["record"]
    again = client.post("/api/live", json={"env_id": CODER_TESTER, "agent": "http-crasher", "opponent": "phrasebook"}, headers=auth)
    assert again.status_code == 422 and "already played its live match" in again.json()["reason"]


def proposal(program: str) -> str:
    """A propose(program, input) tool call."""
    return json.dumps({"tool": "propose", "arguments": {"program": program, "input": "1"}})


def answer(turn: dict) -> str:
    """The remote solver's answer (when the built-in proposes): any output will do."""
    return json.dumps({"tool": "answer", "arguments": {"output": "0"}})


def check_stored(board: Leaderboard, hub: LiveHub, done: dict, name: str) -> None:
    """The match is stored; an episode that did not replay is kept with its reason and counts as the proposer's forfeit."""
    assert done["status"] == "done" and done["episodes"] == 2
    summary = stored_summary(board, done["submission"])
    for failure in summary["failures"]:
        assert failure["episode"] == 0 and "did not replay" in failure["reason"] and failure["record"]["steps"]
    if summary["failures"]:
        stored = [board.store.episode(item["id"])["record"] for item in board.store.episodes(submission=done["submission"])]
        forfeit = next(record for record in stored if record["agents"]["proposer"] == name)
        assert forfeit["returns"]["proposer"] == -1.0
    with pytest.raises(Rejected, match="already played its live match"):
        hub.create("alice", PROPOSER_SOLVER, name, "tracer")


def test_a_program_that_prints_its_uid_cannot_erase_the_match(board):
    # The determinism check runs both runs in one sandbox; the storage replay runs in another slot. A sandbox held
    # during play and closed before the match is stored puts the two in different slots.
    hub = LiveHub(board, turn_timeout=30, episodes=2, match_secrets=seeded_nonces(3))
    live = hub.get(hub.create("alice", PROPOSER_SOLVER, "uid-printer", "tracer")["match"], "alice")
    held = Sandbox(judge.JUDGE_LIMITS)
    held.run("print(1)")

    def move(turn: dict) -> str:
        if turn["observation"]["view"]["role"] == "proposer":
            return proposal("import os\nprint(os.getuid())")
        held.close()
        return answer(turn)

    try:
        done = play(hub, live, move)[-1]
    finally:
        held.close()
    check_stored(board, hub, done, "uid-printer")


def test_a_program_that_prints_the_clock_cannot_erase_the_match(board):
    # Both check runs fall in one two-second window of the clock; the match is stored in a later one.
    hub = LiveHub(board, turn_timeout=30, episodes=2, match_secrets=seeded_nonces(3))
    live = hub.get(hub.create("alice", PROPOSER_SOLVER, "clock-printer", "tracer")["match"], "alice")
    seen = []

    def move(turn: dict) -> str:
        if turn["observation"]["view"]["role"] == "proposer":
            while time.time() % 2 > 0.5:
                time.sleep(0.05)
            seen.append(int(time.time()) // 2)
            return proposal("import time\nprint(int(time.time()) // 2)")
        # Before the last move, which stores the match: leave the window of every proposal.
        while int(time.time()) // 2 <= max(seen):
            time.sleep(0.1)
        return answer(turn)

    done = play(hub, live, move)[-1]
    check_stored(board, hub, done, "clock-printer")
    # The program did pass the check in play (it printed the same thing twice), so its episode failed on replay.
    assert stored_summary(board, done["submission"])["failures"]
