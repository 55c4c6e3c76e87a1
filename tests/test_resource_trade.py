"""ResourceTrade: grammar, trades, payoffs, every ending, outcome analysis, privacy and the scripted traders."""

from __future__ import annotations

import json

import numpy as np
import pytest

import parlour
from parlour.baselines.resource_trade import TitForTatAgent
from parlour.envs.core.agent import reset_agent
from parlour.envs.core.context import Context
from parlour.envs.core.match import Match
from parlour.envs.negotiation.resource_trade import RESOURCES, ResourceTrade

ENV_ID = "parlour/ResourceTrade-v0"


def hand_made(values: dict[str, list[int]], inventories: dict[str, list[int]], deadline: int = 4, **options) -> Match:
    """A started match (with engine ``options``) whose values and inventories are replaced by the given ones."""
    match = Match(ResourceTrade, {"deadline": deadline, **options})
    match.reset(0)
    game = match.game
    game.values = {p: list(v) for p, v in values.items()}
    game.initial = {p: list(c) for p, c in inventories.items()}
    game.inventory = {p: list(c) for p, c in inventories.items()}
    return match


# A two-resource instance: player_0 holds one wheat (worth 5 to it), player_1 one wood (worth 4 to it).
# Swapping doubles both: rewards (10 - 5) / 5 = 1 and (8 - 4) / 4 = 1.
SWAP_VALUES = {"player_0": [5, 10, 1, 1, 1], "player_1": [8, 4, 1, 1, 1]}
SWAP_INVENTORIES = {"player_0": [1, 0, 0, 0, 0], "player_1": [0, 1, 0, 0, 0]}


def play(match: Match, *texts: str) -> None:
    """Submit ``texts`` in turn order, failing on any invalid action."""
    for text in texts:
        player = match.acting()[0]
        match.submit(player, text)
        assert match.steps[-1]["error"] is None, match.steps[-1]["error"]


def test_last_well_formed_move_counts_and_talk_is_delivered_verbatim():
    match = hand_made(SWAP_VALUES, SWAP_INVENTORIES)
    text = "Maybe [accept]? No. Let's swap: [offer] I give 1 Wheat; you give 1 woods and then an [offer] of nothing"
    move = match.game.parse("player_0", text)
    assert move["type"] == "offer" and move["give"] == {"wheat": 1} and move["get"] == {"wood": 1}
    play(match, text)
    seen = match.observation_text("player_1")
    assert '\n\nplayer_0: "Maybe [accept]? No. Let\'s swap:  and then an [offer] of nothing"\n\n' in seen
    assert "player_0 offers: player_0 gives 1 wheat; player_1 gives 1 wood." in seen
    kinds = {(m["kind"], m["sender"]) for m in match.messages("player_1") if m["sender"] == "player_0"}
    assert kinds == {("talk", "player_0"), ("move", "player_0")}


@pytest.mark.parametrize(
    "text, reason",
    [
        ("let us trade", "No move found"),
        ("[offer] I give 1 gold; you give 1 wood", "Unknown resource"),
        ("[offer] I give 2 wheat; you give 1 wood", "You hold only 1 wheat"),
        ("[offer] I give 1 wheat; you give 1 ore", "player_1 holds only 0 ore"),
        ("[offer] I give nothing; you give nothing", "must give or ask"),
        ("[accept]", "no offer to accept"),
        ("[deny]", "no offer to deny"),
    ],
)
def test_invalid_actions(text, reason):
    match = hand_made(SWAP_VALUES, SWAP_INVENTORIES)
    match.submit("player_0", text)
    assert reason in match.last_error["player_0"]
    assert match.acting() == ["player_0"]


def test_accepted_swap_executes_and_pays_relative_gains_with_analysis():
    match = hand_made(SWAP_VALUES, SWAP_INVENTORIES, deadline=2)
    play(match, "[offer] I give 1 wheat; you give 1 wood", "Deal. [accept]")
    game = match.game
    assert game.inventory == {"player_0": [0, 1, 0, 0, 0], "player_1": [1, 0, 0, 0, 0]}
    assert match.over and match.returns == {"player_0": 1.0, "player_1": 1.0}
    outcome = match.outcome
    assert outcome.winners == []  # a tie
    details = outcome.details
    assert details["agreement"] and details["trades"] == 1
    assert details["pareto_optimal"] and details["pareto_distance"] == 0.0
    assert details["nash_solution"] == {"player_0": 1.0, "player_1": 1.0} and details["nash_distance"] == 0.0
    assert details["social_welfare"] == details["max_social_welfare"] == 2.0
    json.dumps(details)


def test_feasible_outcomes_are_the_undominated_reallocations():
    game = hand_made(SWAP_VALUES, SWAP_INVENTORIES).game
    # Reallocations: keep (0, 0), swap (1, 1), all to player_0 (10 / 5, -1), all to player_1 (-1, 8 / 4).
    assert sorted(game.feasible_outcomes()) == [(-1.0, 2.0), (1.0, 1.0), (2.0, -1.0)]


def test_no_trade_pays_nothing_and_measures_the_distances():
    match = hand_made(SWAP_VALUES, SWAP_INVENTORIES, deadline=2)
    play(match, "[offer] I give 1 wheat; you give 1 wood", "No thanks. [deny]")
    outcome = match.outcome
    assert match.returns == {"player_0": 0.0, "player_1": 0.0} and outcome.winners == []
    details = outcome.details
    assert not details["agreement"] and details["trades"] == 0 and not details["pareto_optimal"]
    # Utilities range over [-1, 2] for both: (0, 0) and (1, 1) rescale to 1/3 and 2/3 apart on each axis.
    assert details["pareto_distance"] == pytest.approx(1 / 3)
    assert details["nash_distance"] == pytest.approx(1 / 3)


def test_a_gift_makes_a_winner_and_a_counter_offer_replaces_the_standing_one():
    match = hand_made(SWAP_VALUES, SWAP_INVENTORIES, deadline=3)
    play(match, "[offer] I give 1 wheat; you give 1 wood", "[offer] I give 1 wood; you give nothing", "[accept]")
    assert match.game.inventory["player_0"] == [1, 1, 0, 0, 0]
    assert match.returns == {"player_0": 2.0, "player_1": -1.0}
    assert match.outcome.winner == "player_0"


def test_any_reply_but_accept_ends_the_standing_offer():
    match = hand_made(SWAP_VALUES, SWAP_INVENTORIES)
    play(match, "[offer] I give 1 wheat; you give 1 wood", "[pass]")
    match.submit("player_0", "[pass]")
    match.submit("player_1", "[accept]")
    assert "no offer to accept" in match.last_error["player_1"]


def test_the_deadline_pays_out_but_the_engines_max_turns_truncates_unpaid():
    by_deadline = hand_made(SWAP_VALUES, SWAP_INVENTORIES, deadline=3)
    play(by_deadline, "[offer] I give 1 wheat; you give 1 wood", "[accept]", "[pass]")
    assert by_deadline.over and not by_deadline.outcome.truncated
    assert by_deadline.returns == {"player_0": 1.0, "player_1": 1.0}
    cut = hand_made(SWAP_VALUES, SWAP_INVENTORIES, deadline=3, max_turns=2)
    play(cut, "[offer] I give 1 wheat; you give 1 wood", "[accept]")
    assert cut.over and cut.outcome.truncated
    assert cut.returns == {"player_0": 0.0, "player_1": 0.0}
    assert Match(ResourceTrade, {"max_turns": 2}).game.deadline == 10


def test_exceeding_the_allowance_forfeits():
    match = Match(ResourceTrade, {"error_allowance": 0})
    match.reset(3)
    match.submit("player_0", "[accept]")
    assert match.over and match.returns == {"player_0": -1.0, "player_1": 0.0}
    assert match.outcome.winner == "player_1"


def test_deal_is_seeded_and_values_stay_near_the_base_values():
    first, second = ResourceTrade(), ResourceTrade()
    first.start(Context(first.players, np.random.default_rng(5)))
    second.start(Context(second.players, np.random.default_rng(5)))
    assert first.values == second.values and first.initial == second.initial
    for values in first.values.values():
        assert all(lo <= v <= hi for v, lo, hi in zip(values, [3, 5, 8, 13, 20], [7, 15, 22, 37, 60]))
    assert all(1 <= n <= 3 for counts in first.initial.values() for n in counts)


@pytest.mark.parametrize("option", [{"deadline": 0}, {"deadline": 1001}, {"max_count": 6}, {"max_count": True}])
def test_bad_options_are_rejected(option):
    with pytest.raises(ValueError):
        ResourceTrade(**option)


def leaked_values(text: str, owner_values: list[int], reader_values: list[int]) -> list[str]:
    """The owner's private value statements (``wheat=7``) found in the reader's text, where the two differ."""
    return [f"{r}={v}" for r, v, mine in zip(RESOURCES, owner_values, reader_values) if v != mine and f"{r}={v}" in text]


def test_private_values_never_reach_the_other_player():
    pairings = [("random", "random"), ("conceder", "boulware"), ("tit_for_tat", "linear"), ("hardliner", "random")]
    checked = 0
    for seed in range(24):
        names = pairings[seed % len(pairings)]
        match = Match(ResourceTrade, {})
        match.reset(seed)
        agents = {p: parlour.make_agent(n, env_id=ENV_ID) for p, n in zip(match.players, names)}
        for i, agent in enumerate(agents.values()):
            reset_agent(agent, seed * 10 + i)
        game = match.game
        first, second = match.players
        # The check can fail: each player's own rules state its values in the checked form.
        assert leaked_values(game.rules(first), game.values[first], game.values[second])
        while True:
            for reader, owner in ((first, second), (second, first)):
                observation = match.agent_observation(reader)
                assert not leaked_values(observation["text"], game.values[owner], game.values[reader])
                assert observation["view"]["values"] == game.values[reader]
                checked += 1
            if match.over:
                break
            player = match.acting()[0]
            match.submit(player, agents[player].act(match.agent_observation(player)))
    assert checked > 24 * 10


def play_pair(names: tuple[str, str], seed: int) -> Match:
    """One episode between two scripted traders; they must never make an invalid move."""
    match = Match(ResourceTrade, {})
    match.reset(seed)
    agents = {p: parlour.make_agent(n, env_id=ENV_ID) for p, n in zip(match.players, names)}
    while not match.over:
        player = match.acting()[0]
        match.submit(player, agents[player].act(match.agent_observation(player)))
        assert match.steps[-1]["error"] is None, (names, match.steps[-1])
    return match


def test_conceders_trade_far_more_often_than_hardliners():
    seeds = range(16)
    conceders = sum(play_pair(("conceder", "conceder"), s).outcome.details["agreement"] for s in seeds)
    hardliners = sum(play_pair(("hardliner", "hardliner"), s).outcome.details["agreement"] for s in seeds)
    assert conceders >= 8 and hardliners <= 2 and conceders > hardliners


@pytest.mark.parametrize("name", ["boulware", "linear", "conceder", "tit_for_tat", "hardliner", "random"])
def test_traders_speak_only_valid_moves_and_scripted_ones_never_lose_value(name):
    for seed in range(3):
        match = play_pair((name, "linear"), seed)
        if name != "random":
            assert match.returns["player_0"] >= 0.0


def test_tit_for_tat_concedes_what_the_opponent_conceded():
    view = {
        "player": "player_0",
        "values": [5, 10, 15, 25, 40],
        "history": [
            {"type": "offer", "player": "player_1", "to": "player_0", "give": {"wood": 1}, "get": {"ore": 1}},
            {"type": "pass", "player": "player_0"},
            {"type": "offer", "player": "player_1", "to": "player_0", "give": {"brick": 1}, "get": {"ore": 1}},
        ],
    }
    # The opponent's offers went from 10 - 40 = -30 to 25 - 40 = -15 for player_0: a concession of 15.
    assert TitForTatAgent().aspiration(view, hi=100) == 85
    assert TitForTatAgent().aspiration({**view, "history": view["history"][:1]}, hi=100) == 100
