"""Match.play_until is the one loop that drives a match: it plays the same records as the hand-written loop of the
Gymnasium face, the rollout and the terminal (each round, every seat acting then decides and is submitted in
acting order), on turn-based and simultaneous games, invalid actions included."""

from __future__ import annotations

import json
import random

import pytest

from parlour.envs.core.match import Match
from parlour.envs.registry import game_class

# Turn-based, simultaneous (several seats act at once), chance, tools, and a game with invalid text in play.
GAMES = [
    "parlour/TicTacToe-v0",
    "parlour/KuhnPoker-v0",
    "parlour/ColonelBlotto-v0",
    "parlour/IteratedPrisonersDilemma-v0",
    "parlour/Avalon-v0",
    "parlour/Mafia-v0",
    "parlour/Bargaining-v0",
    "parlour/Search-v0",
    "parlour/Household-v0",
]


def _chooser(seed: int):
    """A seeded agent per seat: a legal move mostly, sometimes garbage (an invalid action the engine must count)."""
    rngs: dict[str, random.Random] = {}

    def choose(match: Match, player: str) -> str:
        rng = rngs.setdefault(player, random.Random(f"{seed}/{player}"))
        legal = match.legal_moves(player)
        if legal and rng.random() > 0.1:
            return rng.choice(legal)
        return rng.choice(["", "pass", "??", "accept", "[propose] 1 1 1", "search[apple]"])

    return choose


def _hand_loop(env_id: str, seed: int) -> dict:
    match = Match(game_class(env_id), {"max_turns": 200} if env_id != "parlour/Household-v0" else {})
    match.reset(seed)
    choose = _chooser(seed)
    while not match.over:
        for player in list(match.acting()):
            if match.over:
                break
            match.submit(player, choose(match, player))
    return match.record()


def _play_until(env_id: str, seed: int) -> dict:
    match = Match(game_class(env_id), {"max_turns": 200} if env_id != "parlour/Household-v0" else {})
    match.reset(seed)
    choose = _chooser(seed)
    paid = match.play_until(lambda player: choose(match, player))
    assert paid == pytest.approx(match.returns)
    return match.record()


@pytest.mark.parametrize("env_id", GAMES)
def test_play_until_plays_the_records_the_old_loops_played(env_id: str) -> None:
    for seed in range(6):
        assert json.dumps(_play_until(env_id, seed), sort_keys=True) == json.dumps(_hand_loop(env_id, seed), sort_keys=True), seed


def test_until_stops_before_the_step_it_names() -> None:
    match = Match(game_class("parlour/TicTacToe-v0"))
    match.reset(0)
    paid = match.play_until(lambda player: match.legal_moves(player)[0], until=lambda: len(match.steps) >= 3)
    assert len(match.steps) == 3 and not match.over and paid == {"player_0": 0.0, "player_1": 0.0}
    match.play_until(lambda player: match.legal_moves(player)[0])
    assert match.over
