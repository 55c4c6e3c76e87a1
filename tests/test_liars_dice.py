"""LiarsDice: bid grammar, challenges, elimination on every face, turn order, the probabilistic agent, and a cross-check with OpenSpiel."""

from __future__ import annotations

import re

import numpy as np
import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.games.liars_dice import LiarsDice

ENV_ID = "parlour/LiarsDice-v0"


def rolled(dice: list[list[int]], **options) -> Match:
    """A match whose first roll is replaced by ``dice`` (one list per player)."""
    options.setdefault("num_players", len(dice))
    options.setdefault("dice_per_player", len(dice[0]))
    match = Match(LiarsDice, options)
    match.reset(0)
    match.game.dice = [sorted(hand) for hand in dice]
    return match


def play(match: Match, *actions: str) -> None:
    """Submit ``actions`` in turn order; each must be valid."""
    for action in actions:
        match.submit(match.acting()[0], action)
        assert match.steps[-1]["error"] is None, match.steps[-1]


@pytest.mark.parametrize(
    "text,move",
    [
        ("3 fives", "3 fives"),
        ("3 five", "3 fives"),
        ("three fives", "3 fives"),
        ("3 5s", "3 fives"),
        ("3 5's", "3 fives"),
        ("3x5", "3 fives"),
        ("3 x 5", "3 fives"),
        ("3*5", "3 fives"),
        ("3-5", "3 fives"),
        ("3 of 5", "3 fives"),
        ("Bid: 1 six", "1 six"),
        ("I hold 2 fives, so I bid 4 sixes.", "4 sixes"),
        ("LIAR!", "liar"),
        ("I challenge that bid", "liar"),
    ],
)
def test_bid_grammar(text, move):
    match = rolled([[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]])
    play(match, "1 two")
    assert match.game.parse("player_1", text) == move


@pytest.mark.parametrize(
    "text,why",
    [
        ("1 one", "not higher"),
        ("1 two", "not higher"),
        ("11 twos", "from 1 to 10"),
        ("0 fives", "from 1 to 10"),
        ("3x7", "names no face"),
        ("I pass", "No move found"),
    ],
)
def test_bad_bids_are_explained(text, why):
    match = rolled([[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]])
    play(match, "1 two")
    with pytest.raises(parlour.InvalidMove, match=why):
        match.game.parse("player_1", text)


def test_liar_needs_a_standing_bid():
    match = rolled([[1, 2], [3, 4]])
    game = match.game
    assert game.liar_index not in game.legal_actions("player_0")
    with pytest.raises(parlour.InvalidMove, match="no bid"):
        game.parse("player_0", "liar")


def test_bids_rise_by_quantity_or_face_and_never_exceed_the_dice():
    match = rolled([[1, 2], [3, 4]])
    game = match.game
    play(match, "2 threes")
    legal = game.legal_moves("player_1")
    assert legal[:4] == ["2 fours", "2 fives", "2 sixes", "3 ones"]
    assert legal[-2:] == ["4 sixes", "liar"]
    assert "2 twos" not in legal and "1 six" not in legal


def test_sixes_are_wild_and_a_correct_bid_beats_the_challenger():
    match = rolled([[2, 6], [2, 3]], single_round=True)
    play(match, "3 twos", "liar")
    assert match.over
    assert match.returns == {"player_0": 1.0, "player_1": -1.0}
    assert match.outcome.winner == "player_0"
    assert "There are 3 twos" in match.observation_text("player_1")


def test_a_bid_on_sixes_counts_only_sixes_and_a_false_bid_loses():
    match = rolled([[2, 6], [5, 5]], single_round=True)
    play(match, "2 sixes", "liar")
    assert match.returns == {"player_0": -1.0, "player_1": 1.0}
    assert match.outcome.winner == "player_1"


def test_single_round_with_three_players_pays_bystanders_nothing():
    match = rolled([[1], [1], [2]], single_round=True)
    play(match, "1 three", "2 ones", "liar")
    assert match.returns == {"player_0": 0.0, "player_1": 1.0, "player_2": -1.0}


def test_losing_a_challenge_costs_a_die_and_the_loser_starts_the_next_round():
    match = rolled([[3, 3], [1, 2]])
    game = match.game
    play(match, "2 threes", "liar")
    assert not match.over
    assert [len(h) for h in game.dice] == [2, 1]
    assert game.round == 2 and game.bid is None
    assert match.acting() == ["player_1"]
    # Three dice are left in play, so "3 sixes" is the highest bid.
    assert game.legal_moves("player_1")[-1] == "3 sixes"
    assert match.returns == {"player_0": 0.0, "player_1": 0.0}


def test_elimination_of_the_last_opponent_ends_the_game():
    match = rolled([[4], [5]])
    play(match, "1 four", "1 five", "liar")
    assert match.over
    assert match.outcome.winners == ["player_1"]
    assert match.game.eliminated == ["player_0"]
    assert match.eliminated == {"player_0": "player_0 lost its last die"}
    assert match.returns == {"player_0": -1.0, "player_1": 1.0}


def test_turn_order_skips_eliminated_players():
    match = rolled([[2], [3], [4]])
    game = match.game
    play(match, "1 two", "liar")  # the bid holds: player_1 loses its only die
    assert game.eliminated == ["player_1"]
    # Paid at once, since nothing reaches an eliminated player afterwards.
    assert match.eliminated == {"player_1": "player_1 lost its last die"}
    assert match.steps[-1]["rewards"] == {"player_1": -0.5}
    # The loser is out, so the next player still in starts.
    assert match.acting() == ["player_2"]
    game.dice = [[6], [], [5]]
    play(match, "1 five")
    assert match.acting() == ["player_0"]
    play(match, "2 fives")
    assert match.acting() == ["player_2"]
    play(match, "liar")  # the bid holds with player_0's wild six: player_2 loses its only die
    assert game.eliminated == ["player_1", "player_2"]
    assert match.steps[-1]["rewards"] == {"player_0": 1.0, "player_2": -0.5}
    assert match.over and match.outcome.winners == ["player_0"]
    assert match.returns == {"player_0": 1.0, "player_1": -0.5, "player_2": -0.5}


def test_exceeding_the_allowance_loses_and_the_others_share():
    match = rolled([[1], [2], [3]], error_allowance=0)
    match.submit("player_0", "hmm")
    assert match.over
    assert match.returns == {"player_0": -1.0, "player_1": 0.5, "player_2": 0.5}
    assert match.outcome.winners == ["player_1", "player_2"]


def test_a_forfeit_after_an_elimination_pays_only_the_players_still_in():
    match = rolled([[2], [3], [4], [5]], error_allowance=0)
    play(match, "1 two", "liar")  # player_1 loses its only die and is paid -1/3 at once
    assert match.acting() == ["player_2"]
    match.submit("player_2", "hmm")
    assert match.over
    # player_1 keeps what it was paid when it went out; the game stays zero-sum.
    assert match.steps[-1]["rewards"] == pytest.approx({"player_2": -1.0, "player_0": 2 / 3, "player_3": 2 / 3})
    assert match.returns == pytest.approx({"player_0": 2 / 3, "player_1": -1 / 3, "player_2": -1.0, "player_3": 2 / 3})
    assert match.outcome.winners == ["player_0", "player_3"]


def test_players_never_see_other_dice_before_a_challenge():
    match = Match(LiarsDice, {"num_players": 3, "dice_per_player": 4})
    match.reset(5)
    game = match.game
    for seat, player in enumerate(game.players):
        view = game.view(player)
        assert view["dice"] == game.dice[seat]
        assert view["dice_counts"] == [4, 4, 4]
        assert set(view) >= {"bid", "to_move"} and not any(isinstance(v, list) and len(v) == 3 and isinstance(v[0], list) for v in view.values())
        # Told once, by the private message of the roll (the acting player's prompt does not repeat it).
        told = re.findall(r"Your dice: ([\d ]+)\.", match.observation_text(player))
        assert told == [" ".join(map(str, game.dice[seat]))]


@pytest.mark.parametrize(
    "num_players,says,never",
    [(2, "the loser gets -1", "-1/1"), (3, "is out at once and gets -1/2", "the loser gets -1"), (6, "gets -1/5", "-1/1")],
)
def test_rules_state_the_elimination_payoffs(num_players, says, never):
    rules = LiarsDice(num_players=num_players).rules("player_0")
    assert says in rules and never not in rules
    assert "The last player with dice wins: +1" in rules


def test_vector_observation():
    match = rolled([[1, 6, 6], [2, 2, 3]])
    game = match.game
    play(match, "2 threes")
    values = game.vector("player_1")
    assert values.dtype == np.float32 and values.shape == (game.vector_size,)
    assert values.min() >= 0 and values.max() <= 1
    assert list(values[:6]) == pytest.approx([0, 2 / 3, 1 / 3, 0, 0, 0])
    bids = values[6 : 6 + game.liar_index]
    assert list(np.flatnonzero(bids)) == [(2 - 1) * 6 + 3 - 1]
    base = 6 + game.liar_index
    # seats from player_1's point of view: itself, then player_0
    assert list(values[base:]) == [1, 1, 1, 0, 0, 1]


@pytest.mark.parametrize("options", [{"num_players": 7}, {"num_players": 1}, {"dice_per_player": 0}, {"single_round": "yes"}])
def test_bad_options_raise(options):
    with pytest.raises(ValueError):
        LiarsDice(**options)


def eliminating_dice(env) -> None:
    """Replace the first roll of a 3-player, 1-die game so that "1 two" then "liar" puts player_1 out."""
    env.reset(seed=0)
    env.match.game.dice = [[2], [3], [4]]


def test_aec_terminates_an_eliminated_player_at_once_and_the_others_play_on():
    env = parlour.make_aec(ENV_ID, num_players=3, dice_per_player=1)
    eliminating_dice(env)
    env.step("1 two")
    assert env.agent_selection == "player_1"
    env.step("liar")  # the bid holds: player_1 loses its only die
    assert env.terminations == {"player_0": False, "player_1": True, "player_2": False}
    assert env.rewards["player_1"] == -0.5
    # The eliminated player is selected for its closing step before play goes on.
    assert env.agent_selection == "player_1"
    _, paid, terminated, truncated, info = env.last()
    assert (paid, terminated, truncated) == (-0.5, True, False)
    assert info["eliminated"] == "player_1 lost its last die"
    env.step(None)
    assert env.agents == ["player_0", "player_2"]
    # The loser is out, so the next player still in opens round 2.
    assert env.agent_selection == "player_2"
    env.match.game.dice = [[6], [], [5]]
    returns = {"player_0": 0.0, "player_2": 0.0}
    for action in ("1 five", "2 fives", "liar"):  # the bid holds with player_0's wild six: player_2 is out
        assert not any(env.terminations.values())
        env.step(action)
        for agent in returns:
            returns[agent] += env.rewards[agent]
    assert returns == {"player_0": 1.0, "player_2": -0.5}
    assert env.terminations == {"player_0": True, "player_2": True}
    assert env.match.returns == {"player_0": 1.0, "player_1": -0.5, "player_2": -0.5}


def test_parallel_drops_an_eliminated_player_in_the_step_it_goes_out():
    env = parlour.make_parallel(ENV_ID, num_players=3, dice_per_player=1)
    eliminating_dice(env)
    env.step({"player_0": "1 two"})
    _, rewards, terminations, truncations, infos = env.step({"player_1": "liar"})
    assert rewards == {"player_0": 0.0, "player_1": -0.5, "player_2": 0.0}
    assert terminations == {"player_0": False, "player_1": True, "player_2": False}
    assert not any(truncations.values())
    assert infos["player_1"]["eliminated"] == "player_1 lost its last die"
    assert env.agents == ["player_0", "player_2"]
    env.match.game.dice = [[6], [], [5]]
    for actions in ({"player_2": "1 five"}, {"player_0": "2 fives"}, {"player_2": "liar"}):
        _, rewards, terminations, _, _ = env.step(actions)
        assert "player_1" not in rewards and "player_1" not in terminations
    assert rewards == {"player_0": 1.0, "player_2": -0.5}
    assert terminations == {"player_0": True, "player_2": True} and env.agents == []


def test_a_three_player_game_through_aec_pays_at_elimination_and_replays():
    env = parlour.make_aec(ENV_ID, num_players=3, dice_per_player=2)
    env.reset(seed=4)
    agents = {p: parlour.make_agent("probabilistic", env_id=ENV_ID, seed=i) for i, p in enumerate(env.possible_agents)}
    returns = dict.fromkeys(env.possible_agents, 0.0)
    paid_when_out: dict[str, float] = {}
    played_on = False
    for agent in env.agent_iter(max_iter=1000):
        _, _, terminated, truncated, _ = env.last()
        action = None if terminated or truncated else agents[agent].act(env.match.agent_observation(agent))
        before = dict(env.match.eliminated)
        env.step(action)
        for player, reward in env.rewards.items():
            returns[player] += reward
        for out in set(env.match.eliminated) - set(before):
            paid_when_out[out] = env.rewards[out]
            assert env.terminations[out]
            if not env.match.over:
                # Out before the end: it takes its closing step next, and the other two play on.
                assert env.agent_selection == out and len([a for a in env.agents if not env.terminations[a]]) == 2
                played_on = True
    assert played_on, "the first player out should leave the other two playing"
    assert sorted(paid_when_out) == sorted(env.match.outcome.details["eliminated"]) and len(paid_when_out) == 2
    (winner,) = env.match.outcome.winners
    assert returns == env.match.returns == {**paid_when_out, winner: 1.0}
    assert all(paid == -0.5 for paid in paid_when_out.values())
    record = env.record()
    assert record["eliminated"] == env.match.eliminated
    assert parlour.replay(record)["returns"] == returns


def test_six_player_elimination_runs_to_a_single_winner():
    match = Match(LiarsDice, {"num_players": 6, "dice_per_player": 2})
    match.reset(7)
    agents = [parlour.make_agent("random", env_id=ENV_ID, seed=i) for i in range(6)]
    while not match.over:
        player = match.acting()[0]
        match.submit(player, agents[match.players.index(player)].act(match.agent_observation(player)))
    outcome = match.outcome
    assert len(outcome.details["eliminated"]) == 5
    assert outcome.winner not in outcome.details["eliminated"]
    assert match.returns[outcome.winner] == 1.0
    assert all(match.returns[p] == pytest.approx(-0.2) for p in match.players if p != outcome.winner)


def test_probabilistic_beats_random():
    results = parlour.evaluate(ENV_ID, ["probabilistic", "random"], episodes=200, seed=0, progress=False)
    assert results.summary["probabilistic"]["win_rate"] > 0.6


@pytest.mark.parametrize("numdice", [1, 2])
def test_same_legal_moves_and_returns_as_openspiel(numdice):
    pyspiel = pytest.importorskip("pyspiel")
    spiel_game = pyspiel.load_game("liars_dice", {"numdice": numdice})
    assert spiel_game.num_distinct_actions() == len(LiarsDice(dice_per_player=numdice).moves)
    for seed in range(150):
        rng = np.random.default_rng(2000 + seed)
        match = Match(LiarsDice, {"dice_per_player": numdice, "single_round": True})
        match.reset(seed)
        game = match.game
        state = spiel_game.new_initial_state()
        for hand in game.dice:
            for die in hand:
                state.apply_action(die - 1)
        while not match.over:
            player = match.acting()[0]
            assert state.current_player() == match.players.index(player)
            legal = game.legal_actions(player)
            assert legal == state.legal_actions()
            # Favour low bids so that games last more than a move or two.
            action = legal[min(int(rng.integers(len(legal))), int(rng.integers(len(legal))))]
            if rng.random() < 0.2 and game.liar_index in legal:
                action = game.liar_index
            match.submit(player, action)
            state.apply_action(action)
        assert state.is_terminal()
        assert [match.returns[p] for p in match.players] == state.returns()
