"""Scripted negotiators behave as the literature expects over seeded batches, through the text grammar."""

from __future__ import annotations

import pytest

import parlour
from parlour.envs.core.match import Match

PRICE = "parlour/PriceNegotiation-v0"
BARGAINING = "parlour/Bargaining-v0"
BATCH = {PRICE: 60, BARGAINING: 30}


def play(env_id: str, first: str, second: str, seed: int, **options) -> Match:
    """One episode between two named agents; every action must be well-formed."""
    match = Match(parlour.game_class(env_id), options)
    match.reset(seed)
    agents = dict(zip(match.players, (parlour.make_agent(name, env_id=env_id) for name in (first, second, "random"))))
    for i, agent in enumerate(agents.values()):
        agent.reset(seed=seed * 3 + i)
    while not match.over:
        player = match.acting()[0]
        match.submit(player, agents[player].act(match.agent_observation(player)))
        assert match.steps[-1]["error"] is None, match.steps[-1]
    return match


def batch(env_id: str, first: str, second: str) -> list[Match]:
    return [play(env_id, first, second, seed) for seed in range(BATCH[env_id])]


def agreement_rate(matches: list[Match]) -> float:
    return sum(m.outcome.details["agreement"] for m in matches) / len(matches)


@pytest.mark.parametrize("env_id", [PRICE, BARGAINING])
def test_conceders_agree_almost_always_and_hardliners_rarely(env_id):
    assert agreement_rate(batch(env_id, "conceder", "conceder")) >= 0.9
    assert agreement_rate(batch(env_id, "hardliner", "hardliner")) <= 0.2


@pytest.mark.parametrize("env_id", [PRICE, BARGAINING])
def test_boulware_extracts_more_than_conceder_against_linear(env_id):
    def mean_first_seat_utility(first: str) -> float:
        matches = batch(env_id, first, "linear")
        return sum(m.returns[m.players[0]] for m in matches) / len(matches)

    assert mean_first_seat_utility("boulware") > mean_first_seat_utility("conceder") + 1.0


def test_tit_for_tat_reciprocates_concessions_and_meets_a_hardliner_with_no_deal():
    match = play(PRICE, "tit_for_tat", "conceder", 0)
    offers = match.game.offers
    mine = [o["price"] for o in offers if o["player"] == "seller"]
    theirs = [o["price"] for o in offers if o["player"] == "buyer"]
    assert mine[0] == 200
    # Each seller offer gives back exactly what the buyer's offers have conceded so far.
    for k in range(1, len(mine)):
        assert mine[k] == max(200 - (theirs[k - 1] - theirs[0]), match.game.reservation["seller"])
    assert agreement_rate(batch(PRICE, "tit_for_tat", "hardliner")) == 0.0


def test_ultimatum_negotiators():
    ultimatum = "parlour/Ultimatum-v0"
    fair = play(ultimatum, "tit_for_tat", "tit_for_tat", 0, rounds=3)
    assert fair.returns == {"proposer": 15.0, "responder": 15.0}
    # A one-shot hardliner proposer keeps the whole pie; a hardliner responder wants half, so no deal.
    greedy = play(ultimatum, "hardliner", "hardliner", 0)
    assert greedy.game.history == ({"proposer": "proposer", "offer": 0, "accepted": False},)
    # Over rounds the conceding proposer offers more and the conceding responder asks less, so they meet.
    assert play(ultimatum, "conceder", "conceder", 0, rounds=5).outcome.details["accepted_rounds"] >= 3


def test_negotiators_answer_in_the_critic_seat_and_refuse_other_games():
    match = play(PRICE, "linear", "linear", 0, critic=True)
    assert any(step["player"] == "critic" for step in match.steps)
    with pytest.raises(ValueError, match="no agent 'boulware'"):
        parlour.make_agent("boulware", env_id="parlour/TicTacToe-v0")


def test_bargaining_negotiators_cope_with_an_item_type_of_count_zero(tmp_path):
    instances = tmp_path / "instances.txt"
    instances.write_text("0,2,3 0,2,2 5,2,1\n")
    for name in ("linear", "boulware", "tit_for_tat", "hardliner", "conceder"):
        results = parlour.evaluate(
            "parlour/Bargaining-v0", [name, "linear"], episodes=2, seed=0, env_kwargs={"instances_file": str(instances)}, progress=False
        )
        assert results.summary[name]["invalid_action_rate"] == 0.0
