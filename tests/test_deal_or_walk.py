"""DealOrWalk: instances, the grammar, deals, walks, the deadline, forfeits, privacy and the walk-away negotiators."""

from __future__ import annotations

import numpy as np
import pytest

import parlour
from parlour.baselines.deal_or_walk import WalkAwayNegotiator
from parlour.envs.core.agent import reset_agent
from parlour.envs.core.match import Match
from parlour.envs.negotiation.deal_or_walk import LEVELS, MAX_COUNT, MAX_VALUE, DealOrWalk, draw_instance

ENV_ID = "parlour/DealOrWalk-v1"


def hand_made(deadline: int = 6, **options) -> Match:
    """A started difficulty-1 match (books and hats) with a fixed instance.

    Pool 2 books, 3 hats. player_0 values a book 6 and a hat 1 (pool 15), walk-away 5; player_1 a book 1 and a hat 4
    (pool 14), walk-away 6.
    """
    match = Match(DealOrWalk, {"difficulty": 1, "deadline": deadline, **options})
    match.reset(0)
    game = match.game
    game.pool, game.values, game.walk = [2, 3], [[6, 1], [1, 4]], [5, 6]
    return match


def play(match: Match, *texts: str) -> None:
    """Submit ``texts`` in turn order, failing on any invalid action."""
    for text in texts:
        match.submit(match.acting()[0], text)
        assert match.steps[-1]["error"] is None, match.steps[-1]["error"]


def test_instances_follow_the_drawing_rules():
    for types, (low, high) in LEVELS.values():
        for seed in range(50):
            instance = draw_instance(np.random.default_rng(seed), types, (low, high))
            pool, values, walk = instance["pool"], instance["values"], instance["walk"]
            assert len(pool) == types and all(1 <= n <= MAX_COUNT for n in pool)
            assert all(0 <= v <= MAX_VALUE for own in values for v in own)
            assert all(a or b for a, b in zip(*values)) and any(a and b for a, b in zip(*values))
            for own, w in zip(values, walk):
                worth = sum(v * n for v, n in zip(own, pool))
                assert low * worth <= 100 * w <= high * worth


def test_every_seed_deals_an_instance():
    # v0 raised "ValueError: low >= high" where a pool was worth 1 to a player (no whole number in 20-60% of 1):
    # 0.7% of the seeds at difficulty 1 (214 the first), and episode 89 of the evaluate run below.
    for difficulty in LEVELS:
        match = Match(DealOrWalk, {"difficulty": difficulty})
        for seed in [214, 425, 1907, *range(1000)]:
            match.reset(seed)
            for player, walk in zip(match.game.players, match.game.walk):
                assert walk <= match.game.value(player, match.game.pool)
    results = parlour.evaluate(DealOrWalk.env_id(), ["random", "random"], episodes=300, seed=0, progress=False)
    assert len(results.records) == 300


def agreement_rate(difficulty: int, agents: tuple[str, str], seeds: int) -> float:
    """The share of ``seeds`` seeded episodes at ``difficulty`` that end in a deal, ``agents`` in seat order."""
    match = Match(DealOrWalk, {"difficulty": difficulty})
    players = [parlour.make_agent(name, env_id=DealOrWalk.env_id()) for name in agents]
    deals = 0
    for seed in range(seeds):
        match.reset(seed)
        for index, agent in enumerate(players):
            reset_agent(agent, 2 * seed + index)
        while not match.over:
            (player,) = match.acting()
            match.submit(player, players[match.game.seat(player)].act(match.agent_observation(player)))
        deals += bool(match.outcome.details["agreement"])
    return deals / seeds


@pytest.mark.parametrize(
    "agents, falls_from",
    # Patient pairs agree almost always at the two easiest levels (99-100%), so their rates may tie there.
    [(("boulware", "boulware"), 1), (("boulware", "conceder"), 1), (("linear", "linear"), 2), (("conceder", "conceder"), 2)],
)
def test_a_higher_difficulty_leaves_scripted_pairs_fewer_deals(agents, falls_from):
    # v0: two boulware negotiators agreed in 0.44, 0.65, 0.69 and 0.74 of 200 seeds: more issues, easier deals.
    rates = [agreement_rate(difficulty, agents, 100) for difficulty in LEVELS]
    assert all(harder <= easier + 0.01 for easier, harder in zip(rates, rates[1:])), rates
    assert all(harder < easier for easier, harder in zip(rates[falls_from - 1 :], rates[falls_from:])), rates
    assert rates[-1] <= rates[0] - 0.2, rates


def test_a_deal_pays_each_its_items_and_the_talk_is_relayed():
    match = hand_made()
    play(match, "Books for me. [propose] 2 books, 0 hats", "Fine by me. [accept]")
    assert match.returns == {"player_0": 12.0, "player_1": 12.0}
    assert match.outcome.winners == []  # a tie
    # player_1's inbox was read when it moved; player_0's still holds player_1's words.
    talk = [m for m in match.messages("player_0") if m["kind"] == "talk"]
    assert [(m["sender"], m["to"], m["text"]) for m in talk] == [("player_1", ["player_0"], "Fine by me.")]
    details = match.outcome.details
    # The best split (books to player_0, hats to player_1) is on the frontier: 12 and 12.
    assert details["agreement"] and details["pareto_optimal"] and details["walked"] is None
    assert details["walk_away"] == {"player_0": 5.0, "player_1": 6.0}


def test_a_walk_pays_both_walk_away_values():
    match = hand_made()
    play(match, "[propose] 2 books, 3 hats", "Never. [walk]")
    assert match.returns == {"player_0": 5.0, "player_1": 6.0}
    assert match.outcome.winners == [] and match.outcome.details["walked"] == "player_1"
    assert not match.outcome.details["agreement"]


def test_a_bad_deal_is_worse_than_walking():
    match = hand_made()
    # player_1 accepts 1 hat (4) though it could walk with 6.
    play(match, "[propose] 2 books, 2 hats", "[accept]")
    assert match.returns == {"player_0": 14.0, "player_1": 4.0} and match.outcome.winners == ["player_0"]


def test_the_deadline_ends_like_a_walk():
    match = hand_made(deadline=3)
    play(match, "[propose] 1 book, 1 hat", "[pass]", "[propose] 2, 0")
    assert match.returns == {"player_0": 5.0, "player_1": 6.0}
    assert match.outcome.reason == "no deal within 3 turns" and match.outcome.details["walked"] is None


@pytest.mark.parametrize(
    "text, reason",
    [
        ("I'd like books", "No move found"),
        ("[accept]", "no proposal of the other player"),
        ("[propose] 3 books, 0 hats", "more than the pool holds"),
        ("[propose] 2 books", "No move found"),  # a proposal must name every type
        ("[propose] 1 book, 1 book", "No move found"),
    ],
)
def test_invalid_moves_are_refused_with_a_reason(text, reason):
    match = hand_made()
    with pytest.raises(parlour.InvalidMove, match=reason):
        match.game.parse("player_0", text)


def test_the_last_well_formed_move_counts():
    match = hand_made()
    assert match.game.parse("player_0", "[walk] no wait: [propose] 0 hats, 1 book ok")["keep"] == [1, 0]
    assert match.game.parse("player_0", "[propose] 1, 1 hmm [walk]")["move"] == "walk"


def test_a_forfeit_costs_the_offender_one_and_pays_the_other_its_walk_away_value():
    match = hand_made(error_allowance=0)
    match.submit("player_0", "no move")
    assert match.returns == {"player_0": -1.0, "player_1": 6.0} and match.outcome.winners == ["player_1"]


def test_walk_away_values_are_private_until_the_end():
    match = Match(DealOrWalk, {})
    match.reset(3)
    game = match.game
    for player in game.players:
        mine, theirs = game.walk[game.seat(player)], game.walk[1 - game.seat(player)]
        assert match.agent_observation(player)["view"]["walk_away"] == mine
        assert f"Your private walk-away value: {mine}." in match.observation_text(player)
        if theirs != mine:
            assert f"walk-away value: {theirs}" not in match.observation_text(player)


def test_boulware_never_accepts_below_its_walk_away_value_and_walks_on_the_last_turn():
    agent = WalkAwayNegotiator(ENV_ID, 0, e=0.2, name="boulware")
    match = hand_made(deadline=2)
    # player_1 would get 1 hat (4) against its walk-away 6; on the game's last turn it walks.
    play(match, "[propose] 2 books, 2 hats")
    assert agent.act(match.agent_observation("player_1")) == "No deal, then. [walk]"
    match = hand_made(deadline=4)
    play(match, "[propose] 2 books, 2 hats")
    move = agent.act(match.agent_observation("player_1"))
    assert move.startswith("[propose]")
    # Offered all 3 hats (12) on the game's last turn, where its target has fallen to its walk-away value 6, it accepts.
    match = hand_made(deadline=4)
    play(match, "[pass]", "[pass]", "[propose] 2 books, 0 hats")
    assert agent.act(match.agent_observation("player_1")) == "[accept]"
