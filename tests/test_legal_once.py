"""The text path asks for the legal moves once per move (issue 37).

Each move of the text path reads the acting player's legal moves three times: for the prompt of its observation,
for ``infos[player]["legal_moves"]`` and to check its action. The engine keeps them per state; these tests count
the calls of ``Match._legal_of`` (and of the game's ``legal_actions``) on a turn-based game and a simultaneous one,
through the AEC face and through the engine alone.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.registry import game_class, list_envs

GAMES = ["parlour/TicTacToe-v0", "parlour/Goofspiel-v0"]


def count_calls(monkeypatch: pytest.MonkeyPatch, game_cls: type) -> Counter:
    """A counter of ``Match._legal_of`` and ``game_cls.legal_actions`` calls, patched in for the test."""
    calls: Counter = Counter()
    legal_of, legal_actions = Match._legal_of, game_cls.legal_actions

    def counted_legal_of(self, player):
        calls["_legal_of"] += 1
        return legal_of(self, player)

    def counted_legal_actions(self, player):
        calls["legal_actions"] += 1
        return legal_actions(self, player)

    monkeypatch.setattr(Match, "_legal_of", counted_legal_of)
    monkeypatch.setattr(game_cls, "legal_actions", counted_legal_actions)
    return calls


@pytest.mark.parametrize("env_id", GAMES)
def test_the_aec_text_loop_asks_for_the_legal_moves_once_per_move(monkeypatch, env_id):
    env = parlour.make_aec(env_id)
    calls = count_calls(monkeypatch, type(env.match.game))
    rng = random.Random(0)
    moves = 0
    for episode in range(3):
        env.reset(seed=episode)
        for _agent in env.agent_iter():
            observation, _, termination, truncation, info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            observation["text"]
            env.step(rng.choice(info["legal_moves"]))
            moves += 1
    assert moves > 0 and calls["_legal_of"] == moves and calls["legal_actions"] == moves, (moves, calls)


@pytest.mark.parametrize("env_id", GAMES)
def test_the_engine_asks_for_the_legal_moves_once_per_move(monkeypatch, env_id):
    match = Match(game_class(env_id), {})
    calls = count_calls(monkeypatch, type(match.game))
    rng = random.Random(1)
    match.reset(1)
    moves = 0
    while not match.over:
        for player in list(match.acting()):
            match.observation_text(player)
            legal = match.info(player)["legal_moves"]
            match.submit(player, rng.choice(legal))
            moves += 1
    assert calls["_legal_of"] == moves and calls["legal_actions"] == moves, (moves, calls)


def enumerable_env_ids() -> list[str]:
    """Every registered game whose moves can be enumerated in its default configuration."""
    return [env_id for env_id in list_envs() if Match(game_class(env_id), {}).game.moves is not None]


@pytest.mark.parametrize("env_id", enumerable_env_ids())
def test_legal_indexed_moves_are_the_legal_actions_and_their_names(env_id):
    # Games override legal_indexed_moves to slice their move names (Nim, LiarsDice): it must stay the default's answer.
    match = Match(game_class(env_id), {})
    moves = match.game.moves
    rng = random.Random(2)
    checked = 0
    for seed in range(3):
        match.reset(seed)
        while not match.over and match.turns < 60:
            for player in list(match.acting()):
                actions, names = match.game.legal_indexed_moves(player)
                assert actions == match.game.legal_actions(player)
                assert names == [moves[i] for i in actions]
                checked += 1
                match.submit(player, rng.choice(names))
                if match.over:
                    break
    assert checked > 0
