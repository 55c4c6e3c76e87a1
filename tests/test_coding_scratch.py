"""Scratch runs use a sandbox per player and episode: the two players of CoderTester, and two concurrent
episodes (two tenants' live matches), never share a warm sandbox, and an episode's sandboxes close with it."""

from __future__ import annotations

import json
import pickle

import pytest

from parlour.envs.coding import judge
from parlour.envs.core.match import Match
from parlour.envs.registry import game_class
from parlour.sandbox import SandboxUnavailable

# A sandbox's own PID namespace (every sandbox shows its programs the same uid, so that their output replays).
WHO = "import os; print(os.readlink('/proc/self/ns/pid'))"


@pytest.fixture(scope="module", autouse=True)
def needs_sandbox():
    try:
        judge.warm_sandbox()
    except SandboxUnavailable as error:
        pytest.skip(f"CODING SANDBOX TESTS SKIPPED: bubblewrap cannot run here: {error}")


def run(match: Match, player: str, code: str) -> str:
    """Call run_python as ``player`` and return what it was told."""
    match.submit(player, json.dumps({"tool": "run_python", "arguments": {"code": code}}))
    return [m["text"] for m in match.messages(player) if m["kind"] == "tool_result"][-1]


def sandbox_of(told: str) -> str:
    return told.split("stdout:\n")[1].split()[0]


def test_each_player_and_each_episode_has_its_own_scratch_sandbox():
    first = Match(game_class("parlour/CoderTester-v0"))
    second = Match(game_class("parlour/CoderTester-v0"))
    first.reset(1)
    second.reset(2)
    acting = first.acting()[0]
    coder_sandbox = sandbox_of(run(first, acting, WHO))
    other_episode_sandbox = sandbox_of(run(second, second.acting()[0], WHO))
    assert coder_sandbox != other_episode_sandbox
    assert first.game.scratch.of(acting) is not second.game.scratch.of(second.acting()[0])
    players = first.game.players
    assert first.game.scratch.of(players[0]) is not first.game.scratch.of(players[1])


def test_an_episode_closes_its_sandboxes_when_it_ends_and_copies_open_their_own():
    match = Match(game_class("parlour/Code-v0"))
    match.reset(3)
    run(match, "coder", "print(1)")
    assert list(match.game.scratch.open) == ["coder"]
    copy = pickle.loads(pickle.dumps(match.game))
    assert copy.scratch.open == {}  # sandboxes are not state: a copy starts with none
    match.submit("coder", json.dumps({"tool": "submit", "arguments": {"code": "pass"}}))
    assert match.over and match.game.scratch.open == {}
