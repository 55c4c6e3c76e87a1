"""PriceNegotiation: surplus arithmetic, the turn limit, the critic seat and privacy of reservation prices."""

from __future__ import annotations

import pytest

import parlour
from parlour.envs.core.game import InvalidMove
from parlour.envs.core.match import Match
from parlour.envs.negotiation.price_negotiation import PriceNegotiation

ENV = "parlour/PriceNegotiation-v0"


def started(seed: int = 0, **options) -> Match:
    match = Match(PriceNegotiation, options)
    match.reset(seed)
    return match


def test_sale_pays_each_side_its_surplus():
    match = started()
    seller, buyer = match.game.reservation["seller"], match.game.reservation["buyer"]
    price = (seller + buyer) // 2 + 3
    match.submit("seller", f"Great item. [offer] ${price + 10}")
    match.submit("buyer", f"Too much. [offer] {price}")
    assert '\n\nbuyer: "Too much."\n\n' in match.observation_text("seller")
    kinds = {(m["kind"], m["sender"]) for m in match.messages("seller") if m["sender"] == "buyer"}
    assert kinds == {("talk", "buyer"), ("move", "buyer")}
    match.submit("seller", "Fine, [accept] it.")
    assert match.over
    assert match.returns == {"seller": price - seller, "buyer": buyer - price}
    details = match.outcome.details
    assert details["price"] == price and details["agreement"] and details["pareto_optimal"]
    assert details["nash_solution"]["seller"] + details["nash_solution"]["buyer"] == buyer - seller
    assert abs(details["nash_solution"]["seller"] - details["nash_solution"]["buyer"]) <= 1
    assert details["social_welfare"] == buyer - seller


def test_a_bad_price_is_a_negative_surplus():
    match = started(1)
    seller = match.game.reservation["seller"]
    match.submit("seller", "[offer] 5")
    match.submit("buyer", "[accept]")
    assert match.returns["seller"] == 5 - seller < 0


def test_parse_rejects_bad_prices_and_accepting_nothing():
    game = started().game
    assert game.parse("seller", "[offer] 100 then [offer] 90 ok")["price"] == 90
    for bad in ("[offer] 201", "[offer] -5", "[offer] 10.5"):
        with pytest.raises(InvalidMove, match="whole numbers"):
            game.parse("seller", bad)
    for bad in ("[offer]", "I want 100", ""):
        with pytest.raises(InvalidMove, match="No move"):
            game.parse("seller", bad)
    with pytest.raises(InvalidMove, match="no offer"):
        game.parse("seller", "[accept]")


def test_no_sale_by_the_deadline_pays_nothing():
    match = started(deadline=3)
    assert "at most 3 turns" in match.observation_text("seller")
    match.submit("seller", "[offer] 190")
    match.submit("buyer", "[pass]")
    match.submit("seller", "[offer] 190")
    assert match.over and match.returns == {"seller": 0.0, "buyer": 0.0}
    assert match.outcome.details["agreement"] is False and match.outcome.details["price"] is None
    assert not match.outcome.truncated and match.outcome.reason == "no deal within 3 turns"


def test_the_engines_max_turns_truncates_before_the_deadline():
    match = started(max_turns=2)
    assert match.agent_observation("seller")["view"]["deadline"] == 20
    match.submit("seller", "[offer] 190")
    match.submit("buyer", "[pass]")
    assert match.over and match.outcome.truncated and "agreement" not in match.outcome.details


def test_the_critic_advises_one_side_between_rounds_and_shares_its_surplus():
    match = started(critic=True, advise="buyer")
    assert match.players == ["seller", "buyer", "critic"]
    match.submit("seller", "[offer] 190")
    assert match.acting() == ["buyer"]
    match.submit("buyer", "hmm [offer] 50")
    assert match.acting() == ["critic"]
    assert "buyer offers 50." in match.observation_text("critic")
    match.submit("critic", "Hold firm at 60.")
    assert match.observation_text("buyer").endswith('\n\ncritic: "Hold firm at 60."')
    (advice,) = [m for m in match.messages("buyer") if m["sender"] == "critic"]
    assert (advice["kind"], advice["sender"], advice["to"]) == ("talk", "critic", ["buyer"])
    assert "Hold firm" not in match.observation_text("seller")
    match.submit("seller", "[accept]")
    assert match.over
    assert match.returns["critic"] == match.returns["buyer"] == match.game.reservation["buyer"] - 50
    with pytest.raises(ValueError, match="advise"):
        PriceNegotiation(critic=True, advise="nobody")


def test_reservation_prices_never_reach_the_other_side_or_the_critic():
    for seed in range(30):
        match = started(seed, critic=True)
        reservation = match.game.reservation
        statements = {side: f"Your private reservation price is {r}" for side, r in reservation.items()}
        seen = {p: [match.observation_text(p)] for p in match.players}
        agents = {p: parlour.make_agent(name, env_id=ENV) for p, name in zip(match.players, ["conceder", "random", "random"])}
        for i, agent in enumerate(agents.values()):
            agent.reset(seed=seed * 3 + i)
        while not match.over:
            player = match.acting()[0]
            observation = match.agent_observation(player)
            if player != "critic":
                assert observation["view"]["reservation"] == reservation[player]
            else:
                assert "reservation" not in observation["view"]
            match.submit(player, agents[player].act(observation))
            for p in match.players:
                seen[p].append(match.observation_text(p))
        for owner, statement in statements.items():
            assert any(statement in text for text in seen[owner])
            for other in match.players:
                if other != owner:
                    assert not any(statement in text for text in seen[other])


@pytest.mark.parametrize("offender, winners", [("seller", ["buyer"]), ("buyer", ["seller"]), ("critic", [])])
def test_a_forfeit_pays_minus_one_and_only_the_other_side_can_win(offender, winners):
    match = started(critic=True, error_allowance=0)
    for player in ("seller", "buyer", "critic"):
        if player == offender:
            break
        match.submit(player, "[offer] 150" if player != "critic" else "Hold firm.")
    match.submit(offender, "" if offender == "critic" else "no move here")
    assert match.over and match.returns == {p: -1.0 if p == offender else 0.0 for p in match.players}
    assert match.outcome.winners == winners
    assert match.outcome.details["agreement"] is False and match.outcome.details["price"] is None
