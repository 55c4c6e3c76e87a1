"""The shared mechanics on every environment: invalid actions, fuzzed text, determinism, records and replay."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parlour
from parlour.envs.core.match import Match
from tests.conftest import ENV_IDS

NASTY_TEXTS = [
    "",
    " ",
    "\x00\x01\x02\x1b[31m",
    "x" * 2_000_000,
    "e4",
    "bid 99 sixes",
    "[accept]",
    '{"tool": "search", "arguments": {}}',
    "\ud7ff\U0001f600 émoji",
    "cooperate defect fold call raise",
    "-1",
    "999999999999999999999999",
    "7" * 5000,
    "[offer] " + "9" * 400,
    "[harvest] " + "7" * 5000,
    "take " + "7" * 5000 + " from heap 1",
    "[propose] " + "1 " * 3000 + "!",
    "[offer]" + " " * 20000 + "x",
    "a" + " " * 20000 + "1x",
]


def random_episode(env_id: str, seed: int, agent_seed: int = 0, **options) -> Match:
    """Play one episode with random agents through a Match; return the finished match."""
    match = Match(parlour.game_class(env_id), options)
    match.reset(seed)
    agents = {p: parlour.make_agent("random", env_id=env_id) for p in match.players}
    for i, agent in enumerate(agents.values()):
        agent.reset(seed=agent_seed * 100 + i)
    for _ in range(10_000):
        if match.over:
            break
        player = match.acting()[0]
        match.submit(player, agents[player].act(match.agent_observation(player)))
    assert match.over, "random play did not finish in 10,000 steps"
    return match


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_nasty_text_is_an_invalid_action_never_an_exception(env_id):
    match = Match(parlour.game_class(env_id), {"error_allowance": len(NASTY_TEXTS) * 4})
    match.reset(3)
    for text in NASTY_TEXTS:
        if match.over:
            break
        player = match.acting()[0]
        match.submit(player, text)
        step = match.steps[-1]
        if step["error"] is not None:
            assert match.last_error[player] == step["error"]
            if not match.over:
                assert "Invalid action" in match.observation_text(player)
    errors = [step for step in match.steps if step["error"] is not None]
    # Most of these texts are no move in any game: if none was refused, the invalid-action path never ran.
    assert len(errors) >= len(match.steps) // 2 and errors
    assert all(len(step["action"]) <= 16384 for step in match.steps if isinstance(step["action"], str))
    parlour.replay(match.record())


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_exceeding_the_allowance_is_a_loss(env_id):
    match = Match(parlour.game_class(env_id), {"error_allowance": 1})
    match.reset(0)
    offender = match.acting()[0]
    match.submit(offender, "\x00 not a move \x00")
    assert not match.over and match.last_error[offender]
    assert offender in match.acting()
    match.submit(offender, "\x00 still not a move \x00")
    assert match.over
    outcome = match.outcome
    scores = outcome.scores
    assert offender not in outcome.winners
    assert scores[offender] == min(scores.values())
    if len(scores) > 1:
        assert scores[offender] < max(scores.values())
    else:
        # A single player (Search) has nobody to lose to: its forfeit is a negative score.
        assert scores[offender] < 0


@pytest.mark.parametrize("env_id", ENV_IDS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.text(max_size=60), min_size=1, max_size=8), seed=st.integers(0, 2**32))
def test_fuzzed_text_never_raises_and_replays(env_id, texts, seed):
    match = Match(parlour.game_class(env_id), {"error_allowance": 3})
    match.reset(seed)
    for text in texts:
        if match.over:
            break
        match.submit(match.acting()[0], text)
    parlour.replay(json.dumps(match.record()))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_same_seed_same_record_and_replay_accepts_it(env_id):
    for seed in range(5):
        first = random_episode(env_id, seed).record()
        second = random_episode(env_id, seed).record()
        assert first == second
        assert parlour.replay(first)["returns"] == first["returns"]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_replay_rejects_tampered_records(env_id):
    record = random_episode(env_id, 11).record()
    valid_steps = [i for i, s in enumerate(record["steps"]) if s["error"] is None]

    changed_reward = copy.deepcopy(record)
    last = changed_reward["steps"][-1]
    player = last["player"]
    last["rewards"][player] = last["rewards"].get(player, 0.0) + 1.0
    changed_action = copy.deepcopy(record)
    changed_action["steps"][valid_steps[0]]["action"] = "\x00garbage\x00"
    changed_seed = copy.deepcopy(record)
    changed_seed["seed"] = record["seed"] + 1
    claimed_win = copy.deepcopy(record)
    loser = min(record["returns"], key=record["returns"].get)
    claimed_win["outcome"]["winner"] = loser
    claimed_win["returns"][loser] = 99.0
    dropped_step = copy.deepcopy(record)
    dropped_step["steps"].pop()
    wrong_version = copy.deepcopy(record)
    wrong_version["env_version"] = record["env_version"] + 1

    for tampered in (changed_reward, changed_action, claimed_win, dropped_step, wrong_version):
        with pytest.raises(parlour.ReplayMismatch):
            parlour.replay(tampered)
    assert parlour.replay(record)["returns"] == record["returns"]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_another_seed_replays_only_where_the_game_never_draws(env_id):
    """A game that drew randomness is caught replaying under another seed; one that never drew does not depend on it."""
    for seed in range(20):
        match = random_episode(env_id, seed)
        if match.ctx.rng.used:
            break
    else:
        for seed in range(5):
            record = random_episode(env_id, seed).record()
            for other in (seed + 1, seed + 1000):
                assert parlour.replay({**record, "seed": other})["returns"] == record["returns"]
        return
    mismatches = 0
    for seed in range(20):
        record = random_episode(env_id, seed, agent_seed=seed).record()
        try:
            parlour.replay({**record, "seed": seed + 7919})
        except parlour.ReplayMismatch:
            mismatches += 1
    # Another deal can leave a transcript unchanged (a Kuhn hand that ends in a fold shows no card), but not
    # every one of twenty seeded episodes.
    assert mismatches >= 3


@pytest.mark.parametrize("bad", [None, 3, "not json", "{}", '{"format": "parlour.record"}', []])
def test_replay_rejects_garbage_with_a_clear_error(bad):
    with pytest.raises(parlour.ReplayMismatch):
        parlour.replay(bad)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_no_global_random_state_is_used(env_id):
    np.random.seed(0)
    import random

    random.seed(0)
    first = random_episode(env_id, 4).record()
    np.random.seed(123)
    random.seed(123)
    assert random_episode(env_id, 4).record() == first


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_outcome_scores_equal_returns(env_id):
    for seed in range(10):
        match = random_episode(env_id, seed, agent_seed=seed)
        outcome = match.outcome
        assert outcome.scores == match.returns
        assert set(outcome.winners) <= set(match.players)
        if type(match.game).zero_sum:
            assert abs(sum(match.returns.values())) < 1e-9


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_legal_move_string_parses_to_itself(env_id):
    """The contract of legal_moves, which lets the core skip the parser for an exact legal move."""
    for seed in range(5):
        match = Match(parlour.game_class(env_id), {})
        if not match.game.enumerable:
            pytest.skip("moves are not enumerable")
        match.reset(seed)
        agents = {p: parlour.make_agent("random", env_id=env_id) for p in match.players}
        for agent in agents.values():
            agent.reset(seed=seed)
        while not match.over:
            player = match.acting()[0]
            for move in match.legal_moves(player):
                assert match.game.parse(player, move) == move
                assert match.game.parse(player, f"After some thought: {move}") == move
            match.submit(player, agents[player].act(match.agent_observation(player)))


def test_replay_rejects_malformed_fields_as_mismatches():
    record = random_episode("parlour/TicTacToe-v0", 2).record(agents={"player_0": "random", "player_1": "random"})
    broken = []
    for path, value in [
        (("returns", "player_0"), "1"),
        (("outcome", "scores", "player_0"), None),
        (("steps", -1, "rewards", "player_0"), [1]),
        (("agents",), ["random", "random"]),
        (("seed",), -5),
        (("seed",), "7"),
    ]:
        tampered = copy.deepcopy(record)
        target = tampered
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        broken.append(tampered)
    for tampered in broken:
        with pytest.raises(parlour.ReplayMismatch):
            parlour.replay(tampered)
    checked = {"player_0": parlour.make_agent("random", env_id="parlour/TicTacToe-v0")}
    for seed in (-1, True, "3", None):
        seeded = copy.deepcopy(record)
        seeded["agent_seeds"] = {"player_0": seed}
        with pytest.raises(parlour.ReplayMismatch, match="no agent seed"):
            parlour.replay(seeded, agents=checked)
