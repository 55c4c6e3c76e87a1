"""Every seed deals an episode (issue 32): ``reset`` with any seed in [0, 2**62), the range the faces draw game seeds
from, never raises, in any registered environment at any difficulty it offers, through the PettingZoo and the
Gymnasium faces. DealOrWalk v0 raised ``ValueError: low >= high`` for 0.7% of the seeds at difficulty 1."""

from __future__ import annotations

import gymnasium
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parlour
from parlour.envs.core.match import Match
from parlour.envs.negotiation.deal_or_walk import DealOrWalk
from parlour.envs.registry import game_class
from tests.conftest import ENV_IDS
from tests.test_returns import seating

SEEDS = st.integers(min_value=0, max_value=(1 << 62) - 1)
#: Difficulties probed: every game's levels lie within these.
LEVELS = range(1, 7)


def options_of(env_id: str) -> list[dict[str, int]]:
    """The default options, and each ``difficulty`` the game accepts when it has that option."""
    levels = []
    for level in LEVELS:
        try:
            Match(game_class(env_id), {"difficulty": level})
        except (TypeError, ValueError):
            continue
        levels.append({"difficulty": level})
    return [{}, *levels]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_no_seed_breaks_a_reset(env_id):
    variants = options_of(env_id)

    # A few seeds per run and environment keep the test fast; each run draws others.
    @settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(seed=SEEDS, variant=st.sampled_from(variants))
    def resets(seed: int, variant: dict[str, int]) -> None:
        aec = parlour.make_aec(env_id, **variant)
        aec.reset(seed=seed)
        assert aec.agents
        # The learner's seat is 0; the others play agents that can hold them, so a failure is the reset's own.
        opponents = {player: agent for player, agent in seating(env_id, aec.possible_agents).items() if player != aec.possible_agents[0]}
        env = gymnasium.make(env_id, opponent=opponents, **variant)
        env.reset(seed=seed)
        assert env.unwrapped.player in env.unwrapped.match.acting()

    resets()


@given(seed=SEEDS)
@settings(max_examples=300, deadline=None)
def test_every_dealorwalk_level_deals_any_seed(seed):
    # The game whose generator raised: many more seeds, every level.
    for level in (1, 2, 3, 4):
        match = Match(DealOrWalk, {"difficulty": level})
        match.reset(seed)
        assert not match.over
