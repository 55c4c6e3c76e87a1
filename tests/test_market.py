"""Market: the order grammar, the matching rules, payoffs, forfeits, privacy and the scripted traders."""

from __future__ import annotations

import pytest

import parlour
from parlour.baselines.market import MarketRandomAgent, ShadingTrader
from parlour.envs.core.match import Match
from parlour.envs.negotiation.market import MAX_PRICE, MONEY, Market

ENV_ID = "parlour/Market-v0"

# Difficulty 1: three traders, grain and wood. player_0 values grain most, player_1 holds it and values it least.
VALUES = {"player_0": [15, 20], "player_1": [5, 20], "player_2": [10, 25]}
HOLDINGS = {"player_0": [0, 1], "player_1": [2, 0], "player_2": [1, 1]}


def hand_made(rounds: int = 2, **options) -> Match:
    """A started difficulty-1 match (with engine ``options``) holding :data:`VALUES` and :data:`HOLDINGS`."""
    match = Match(Market, {"difficulty": 1, "rounds": rounds, **options})
    match.reset(0)
    game = match.game
    game.values = {p: list(v) for p, v in VALUES.items()}
    game.initial = {p: list(c) for p, c in HOLDINGS.items()}
    game.holdings = {p: list(c) for p, c in HOLDINGS.items()}
    return match


def play(match: Match, *texts: str) -> None:
    """Submit ``texts`` in turn order, failing on any invalid action."""
    for text in texts:
        match.submit(match.acting()[0], text)
        assert match.steps[-1]["error"] is None, match.steps[-1]["error"]


def book(match: Match) -> set[tuple[str, str, str, int]]:
    """The standing orders as (player, good, side, price)."""
    return {(o["player"], o["good"], o["side"], o["price"]) for o in match.game.orders}


def test_difficulty_sets_traders_and_goods():
    for difficulty, traders, goods in ((1, 3, ("grain", "wood")), (2, 4, ("grain", "wood", "iron")), (3, 5, ("grain", "wood", "iron", "cloth"))):
        game = Market(difficulty=difficulty)
        assert len(game.players) == traders and game.goods == goods
    with pytest.raises(ValueError, match="difficulty"):
        Market(difficulty=4)


def test_last_well_formed_move_counts_and_talk_reaches_the_others_verbatim():
    match = hand_made()
    text = "Not [pass]. Buying Grains: [bid] Grains at 12 cheap"
    assert match.game.parse("player_0", text) == {"type": "bid", "good": "grain", "price": 12, "talk": "Not [pass]. Buying Grains:  cheap"}
    play(match, text)
    talk = [m for m in match.messages("player_1") if m["kind"] == "talk"]
    assert talk == [{"sender": "player_0", "to": ["player_1", "player_2"], "kind": "talk", "text": "Not [pass]. Buying Grains:  cheap"}]
    assert "player_0 bids 12 for one grain." in match.observation_text("player_1")
    assert book(match) == {("player_0", "grain", "bid", 12)}


@pytest.mark.parametrize(
    "setup, text, reason",
    [
        ((), "I want grain", "No move found"),
        ((), "[bid] gold 5", "Unknown good 'gold'"),
        ((), "[bid] grain 0", "from 1 to 100"),
        ((), f"[bid] grain {MAX_PRICE + 1}", "from 1 to 100"),
        # Read as 12 and 1 before issue 32; a price is whole coins, written plainly.
        ((), "[bid] grain 12.5", "whole number of coins from 1 to 100, got 12.5"),
        ((), "[bid] grain 1,200", "'1,200' could be read more than one way"),
        ((), "[bid] grain 1e3", "'1e3' could be read more than one way"),
        ((), "[ask] grain 5", "You hold no grain"),
        # 60 committed to wood: a grain bid of 41 is not covered, 40 is (checked below).
        (("[bid] wood 60",), "[bid] grain 41", "do not cover"),
        (("[ask] wood 30",), "[bid] wood 30", "your own ask of 30"),
        (("[bid] wood 9",), "[ask] wood 9", "your own bid of 9"),
    ],
)
def test_invalid_orders_are_refused_with_a_reason(setup, text, reason):
    match = hand_made(rounds=3)
    # player_0's own orders, with the other two passing in between.
    for earlier in setup:
        play(match, earlier, "[pass]", "[pass]")
    with pytest.raises(parlour.InvalidMove, match=reason):
        match.game.parse("player_0", text)


def test_a_bid_replacing_its_own_bid_may_reuse_its_coins():
    match = hand_made(rounds=3)
    play(match, "[bid] wood 60", "[pass]", "[pass]")
    assert match.game.parse("player_0", "[bid] grain 40")["price"] == 40
    # Replacing the wood bid frees its 60 coins.
    assert match.game.parse("player_0", "[bid] wood 100")["price"] == 100
    play(match, "[bid] wood 100")
    assert book(match) == {("player_0", "wood", "bid", 100)}


def test_a_crossing_order_trades_at_the_standing_price_best_first_then_earliest():
    match = hand_made(rounds=3)
    # Two asks of 8 (player_1 first) and one of 9; player_0's bid of 12 meets player_1's: best price, then earliest.
    play(match, "[pass]", "[ask] grain 8", "[ask] grain 8", "[bid] grain 12")
    game = match.game
    assert game.trades[-1] == {"turn": 3, "good": "grain", "price": 8, "buyer": "player_0", "seller": "player_1"}
    assert game.holdings["player_0"] == [1, 1] and game.holdings["player_1"] == [1, 0]
    assert game.money["player_0"] == MONEY - 8 and game.money["player_1"] == MONEY + 8
    assert book(match) == {("player_2", "grain", "ask", 8)}
    assert "Trade: player_0 buys one grain from player_1 at 8." in match.observation_text("player_2")
    # An ask meeting a standing bid trades at the bid's price.
    play(match, "[bid] wood 30", "[pass]", "[ask] wood 25")
    assert game.trades[-1]["price"] == 30 and game.trades[-1]["seller"] == "player_0" and game.trades[-1]["buyer"] == "player_1"


def test_an_order_that_meets_nothing_waits_and_a_new_one_replaces_it():
    match = hand_made(rounds=3)
    play(match, "[bid] grain 4", "[ask] grain 6", "[pass]", "[bid] grain 5")
    assert book(match) == {("player_0", "grain", "bid", 5), ("player_1", "grain", "ask", 6)} and not match.game.trades


def test_rewards_are_surplus_over_initial_wealth_and_the_analysis_is_exact():
    match = hand_made(rounds=1)
    # player_1 sells grain (worth 5 to it) to player_0 (worth 15) at 10: each gains 5 coins of surplus.
    play(match, "[bid] grain 10", "[ask] grain 10", "[pass]")
    outcome = match.outcome
    wealth = {"player_0": 20 + MONEY, "player_1": 10 + MONEY, "player_2": 35 + MONEY}
    assert match.returns == pytest.approx({"player_0": 5 / wealth["player_0"], "player_1": 5 / wealth["player_1"], "player_2": 0.0})
    assert outcome.winners == ["player_1"]
    details = outcome.details
    # Efficient: every grain with player_0 (15): (15-5)*2 + (15-10)*1 = 25; every wood with player_2 (25): (25-20)*1 = 5.
    assert details == {
        "difficulty": 1,
        "trades": 1,
        "agreement": True,
        "surplus": {"player_0": 5, "player_1": 5, "player_2": 0},
        "social_welfare": 10,
        "max_social_welfare": 30,
        "efficiency": pytest.approx(1 / 3),
    }


def test_no_trade_pays_nothing_and_nobody_wins():
    match = hand_made(rounds=1)
    play(match, "[pass]", "[pass]", "[pass]")
    assert match.returns == {p: 0.0 for p in VALUES} and match.outcome.winners == []
    assert match.outcome.details["agreement"] is False and match.outcome.details["efficiency"] == 0.0


def test_a_forfeit_costs_the_offender_one_and_pays_the_others_as_they_stand():
    match = hand_made(rounds=2, error_allowance=0)
    play(match, "[bid] grain 10", "[ask] grain 10")
    match.submit("player_2", "no move here")
    assert match.returns == pytest.approx({"player_0": 5 / 120, "player_1": 5 / 110, "player_2": -1.0})
    assert match.outcome.winners == ["player_1"]


def test_a_trader_sees_its_own_values_and_holdings_only():
    match = Match(Market, {"difficulty": 3})
    match.reset(7)
    game = match.game
    for player in game.players:
        view = match.agent_observation(player)["view"]
        assert view["values"] == game.values[player] and view["holdings"] == game.holdings[player]
        seen = match.observation_text(player)
        for other in game.players:
            if other != player:
                assert f"Your private values per unit: {game.values_text(other)}." not in seen
        assert f"Your private values per unit: {game.values_text(player)}." in seen


def test_shading_takes_the_most_profitable_standing_order_and_never_loses_on_a_trade():
    match = hand_made(rounds=2)
    play(match, "[pass]", "[ask] grain 9")
    # player_2 values grain 10: the ask of 9 gains it 1; it bids exactly 9 to take it.
    assert ShadingTrader(ENV_ID, 0).act({"view": match.game.view("player_2")}).endswith("[bid] grain 9")
    checked = 0
    for seed in range(6):
        match = Match(Market, {"difficulty": 3})
        match.reset(seed)
        agents = {p: ShadingTrader(ENV_ID, seed) if i % 2 == 0 else MarketRandomAgent(ENV_ID, seed) for i, p in enumerate(match.game.players)}
        while not match.over:
            player = match.acting()[0]
            match.submit(player, agents[player].act(match.agent_observation(player)))
            assert match.steps[-1]["error"] is None
        game = match.game
        for trade in game.trades:
            for seat, sign in ((trade["buyer"], 1), (trade["seller"], -1)):
                if isinstance(agents[seat], ShadingTrader):
                    value = game.values[seat][game.goods.index(trade["good"])]
                    assert sign * (value - trade["price"]) >= 0
                    checked += 1
        assert all(game.surplus(p) >= 0 for p, agent in agents.items() if isinstance(agent, ShadingTrader))
    assert checked
