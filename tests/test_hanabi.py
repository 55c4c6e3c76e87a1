"""Hanabi: the deck and deal, plays, misplays, discards, hints and what they reveal, the last round, rewards, the
vector face, the convention agent's measured scores, and a cross-check with OpenSpiel's hanabi."""

from __future__ import annotations

import numpy as np
import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.social.hanabi import COLOR_NAMES, PRESETS, Hanabi, copies_of

ENV_ID = "parlour/Hanabi-v0"


def kind(name: str, ranks: int = 5) -> int:
    """The card kind of ``"red 3"``."""
    color, rank = name.split()
    return COLOR_NAMES.index(color) * ranks + int(rank) - 1


def stacked(order: list[str], **options) -> Match:
    """A started match whose deck begins with ``order`` (dealt player_0's hand first), the rest of the deck after it."""
    match = Match(Hanabi, options)
    match.reset(0)
    game = match.game
    full = sorted(game.cards)
    top = [kind(name, game.ranks) for name in order]
    for k in top:
        full.remove(k)
    game._reset_state()
    game.cards = top + full
    for seat in range(game.num_players):
        for _ in range(game.hand_size):
            game._draw(seat)
    match._refresh()
    return match


def play(match: Match, *actions: str) -> None:
    """Submit ``actions`` in turn order; each must be valid."""
    for action in actions:
        match.submit(match.acting()[0], action)
        assert match.steps[-1]["error"] is None, match.steps[-1]


def hands(match: Match) -> list[list[str]]:
    """Every hand as card names."""
    return [[match.game.name_of(card) for card in hand] for hand in match.game.hands]


# ----------------------------------------------------------------- deck, deal, options


@pytest.mark.parametrize("preset", list(PRESETS))
def test_the_deck_holds_three_ones_two_of_each_middle_rank_and_one_top_card_per_colour(preset):
    match = Match(Hanabi, {"preset": preset})
    match.reset(3)
    game = match.game
    counts = np.bincount(game.cards, minlength=game.kinds)
    assert list(counts) == [copies_of(r, game.ranks) for _ in range(game.colors) for r in range(1, game.ranks + 1)]
    assert list(counts[:5]) == [3, 2, 2, 2, 1]
    # player_0's whole hand is dealt first, then player_1's.
    assert game.hands == [list(range(game.hand_size)), list(range(game.hand_size, 2 * game.hand_size))]
    assert game.deck_size == len(game.cards) - 2 * game.hand_size


def test_presets_follow_the_learning_environment_and_options_override_them():
    full = Hanabi(preset="full")
    assert (full.colors, full.ranks, full.hand_size, full.max_hints, full.max_lives, full.max_score) == (5, 5, 5, 8, 3, 25)
    assert Hanabi(preset="full", num_players=4).hand_size == 4
    small = Hanabi()
    assert (small.colors, small.ranks, small.hand_size, small.max_hints, small.max_lives) == (2, 5, 2, 3, 1)
    assert Hanabi(preset="very_small").colors == 1
    custom = Hanabi(preset="full", colors=3, life_tokens=1, hint_tokens=4, hand_size=3, ranks=4)
    assert (custom.colors, custom.ranks, custom.hand_size, custom.max_hints, custom.max_lives, custom.max_score) == (3, 4, 3, 4, 1, 12)


@pytest.mark.parametrize(
    "options,message",
    [
        ({"num_players": 6}, "num_players"),
        ({"num_players": 1}, "num_players"),
        ({"preset": "huge"}, "preset must be one of full, small, very_small"),
        ({"colors": 6}, "colors"),
        ({"ranks": 0}, "ranks"),
        ({"hint_tokens": 0}, "hint_tokens"),
        ({"life_tokens": True}, "life_tokens"),
        ({"preset": "very_small", "num_players": 5, "hand_size": 3}, "use a smaller hand_size"),
    ],
)
def test_bad_options_say_what_to_do(options, message):
    with pytest.raises(ValueError, match=message):
        Hanabi(**options)


# ------------------------------------------------------------------------------ plays


def test_a_fitting_card_grows_its_firework_pays_everyone_and_is_replaced():
    match = stacked(["red 1", "yellow 2", "red 2", "yellow 1", "red 3"])
    game = match.game
    play(match, "play 1")
    assert game.fireworks == [1, 0]
    assert match.steps[-1]["rewards"] == {"player_0": 1.0, "player_1": 1.0}
    # The played card left slot 1; the deck's next card (red 3) went to the end.
    assert hands(match) == [["yellow 2", "red 3"], ["red 2", "yellow 1"]]
    assert match.acting() == ["player_1"]
    assert "player_0 plays red 1 (slot 1): it fits" in match.observation_text("player_1")


def test_a_card_that_does_not_fit_costs_a_life_and_the_last_life_zeroes_the_score():
    match = stacked(["red 1", "yellow 2", "red 3", "yellow 1"], life_tokens=2)
    game = match.game
    play(match, "play 1")  # red 1 fits: score 1; player_0 draws the next red 1
    play(match, "play 2")  # player_1's yellow 1 fits: score 2
    assert match.returns == {"player_0": 2.0, "player_1": 2.0}
    play(match, "play 2")  # player_0's second red 1 does not fit: a life lost, the card discarded
    assert game.lives == 1 and game.misplays == 1 and game.discards == [kind("red 1")]
    assert not match.over and match.steps[-1]["rewards"] == {}
    play(match, "play 1")  # player_1's red 3 on red 1: the last life goes, and the score with it
    assert match.over
    assert match.returns == {"player_0": 0.0, "player_1": 0.0}
    assert match.steps[-1]["rewards"] == {"player_0": -2.0, "player_1": -2.0}
    assert match.outcome.details["score"] == 0 and "last life token" in match.outcome.reason


def test_completing_a_firework_returns_a_hint_token_only_if_one_was_spent():
    match = stacked(["yellow 1", "red 1", "red 1", "yellow 1"], preset="full", colors=2, ranks=1, hand_size=2)
    game = match.game
    play(match, "hint player_1 red")
    assert game.hints == 7
    play(match, "play 1")  # player_1's red 1 completes red (rank 1 is the top rank here)
    assert game.fireworks == [1, 0] and game.hints == 8
    play(match, "play 1")  # player_0's yellow 1 completes yellow with every token unspent
    assert game.hints == 8
    assert match.over and match.outcome.details["score"] == 2 and "perfect" in match.outcome.reason
    assert match.returns == {"player_0": 2.0, "player_1": 2.0}


# ---------------------------------------------------------------------- discards, hints


def test_discarding_needs_a_spent_hint_token_and_returns_one():
    match = stacked(["red 1", "yellow 2", "red 2", "yellow 1"])
    game = match.game
    assert "discard 1" not in game.legal_moves("player_0")
    with pytest.raises(parlour.InvalidMove, match="not legal"):
        game.parse("player_0", "discard 1")
    play(match, "hint player_1 red")
    assert game.hints == 2 and "discard 1" in game.legal_moves("player_1")
    play(match, "discard 2")
    assert game.hints == 3 and game.discards == [kind("yellow 1")]


def test_a_hint_names_the_touched_cards_and_rules_out_the_value_for_the_others():
    match = stacked(["red 1", "red 1", "red 2", "yellow 2", "red 5", "red 1"], preset="full", colors=2, hand_size=3)
    game = match.game
    assert hands(match) == [["red 1", "red 1", "red 2"], ["yellow 2", "red 5", "red 1"]]
    play(match, "hint player_1 2")
    first, second, third = game.hands[1]
    assert game._possible(first) == (["red", "yellow"], [2])
    assert game._possible(second) == game._possible(third) == (["red", "yellow"], [1, 3, 4, 5])
    assert game.clued == {first}
    view = game.view("player_1")
    assert view["hands"]["player_1"][0] == {"id": first, "color": None, "rank": None, "colors": ["red", "yellow"], "ranks": [2], "clued": True}
    assert view["log"][-1] == {
        "player": "player_0",
        "type": "hint",
        "target": "player_1",
        "value": "2",
        "slots": (1,),
        "touched": (first,),
        "new": (first,),
    }
    assert "player_0 hints player_1: slot 1 is 2" in match.observation_text("player_1")
    play(match, "hint player_0 red")
    assert all(game._possible(card) == (["red"], [1, 2, 3, 4, 5]) for card in game.hands[0])
    assert "slots 1, 2 and 3 are red" in match.observation_text("player_0")


def test_hints_must_touch_a_card_go_to_a_teammate_and_need_a_token():
    match = stacked(["red 1", "red 2", "red 3", "red 4"])
    game = match.game
    legal = game.legal_moves("player_0")
    assert "hint player_1 red" in legal and "hint player_1 3" in legal and "hint player_1 4" in legal
    assert "hint player_1 yellow" not in legal and "hint player_1 1" not in legal
    assert not any(move.startswith("hint player_0") for move in legal)
    with pytest.raises(parlour.InvalidMove, match="not legal"):
        game.parse("player_0", "hint player_1 yellow")
    play(match, "hint player_1 red", "hint player_0 red", "hint player_1 3")
    assert game.hints == 0
    assert not any(move.startswith("hint") for move in game.legal_moves("player_1"))


def test_every_player_gets_one_more_turn_after_the_deck_runs_out():
    match = stacked(["red 1", "red 1", "red 1", "red 2"], preset="very_small", hint_tokens=8)
    game = match.game

    def next_move() -> str:
        player = match.acting()[0]
        return "discard 1" if "discard 1" in game.legal_moves(player) else f"hint {game.other(player)} red"

    while game.deck_size > 0:
        play(match, next_move())
    last_drawer = match.steps[-1]["player"]
    assert game.turns_left == 2 and not match.over
    play(match, next_move())  # the other player's last turn
    assert not match.over and game.turns_left == 1
    assert match.acting() == [last_drawer]
    assert "1 turn(s) left" in match.observation_text(last_drawer)
    play(match, next_move())  # the player who drew the last card has its last turn too
    assert match.over and "deck ran out" in match.outcome.reason


def test_forfeit_loses_the_score_and_costs_the_offender_one_more():
    match = stacked(["red 1", "yellow 2", "red 2", "yellow 1"], error_allowance=0)
    play(match, "play 1")
    assert match.returns == {"player_0": 1.0, "player_1": 1.0}
    match.submit("player_1", "pass")
    assert match.over
    assert match.returns == {"player_0": 0.0, "player_1": -1.0}
    assert match.outcome.winners == [] and match.outcome.details["score"] == 0


# ------------------------------------------------------------------------ observations


def test_a_player_sees_every_hand_but_its_own():
    match = stacked(["red 1", "yellow 2", "red 2", "yellow 1"], num_players=3, hand_size=2)
    game = match.game
    view = game.view("player_0")
    assert all(card["color"] is None and card["rank"] is None for card in view["hands"]["player_0"])
    assert [(c["color"], c["rank"]) for c in view["hands"]["player_1"]] == [("red", 2), ("yellow", 1)]
    text = match.observation_text("player_0")
    assert "player_1's hand: slot 1: red 2" in text
    own = text.split("Your hand")[1]
    assert "red 1" not in own and "yellow 2" not in own


def test_vector_observation_layout():
    match = stacked(["red 1", "yellow 2", "red 2", "yellow 1"])
    game = match.game
    play(match, "hint player_1 red")
    values = game.vector("player_1")
    assert values.shape == (game.vector_size,) and values.dtype == np.float32
    assert values.min() >= 0 and values.max() <= 1
    H, K = game.hand_size, game.kinds
    # The other hand (player_0's): red 1 then yellow 2.
    assert list(np.flatnonzero(values[: H * K])) == [kind("red 1"), K + kind("yellow 2")]
    base = H * K + game.colors * game.ranks
    assert list(values[base : base + 3]) == [1, 1, 0]  # two of three hint tokens left
    assert values[base + 3] == 1 and values[base + 4] == pytest.approx(game.deck_size / game.deck_total)
    knowledge = values[base + 5 + K :]
    # player_1's own first card (red 2): present, colour red only, any rank.
    assert list(knowledge[:8]) == [1, 1, 0, 1, 1, 1, 1, 1]
    # its second card (yellow 1): present, not red.
    assert list(knowledge[8:11]) == [1, 0, 1]


def test_every_move_name_is_its_own_move_and_the_last_mentioned_counts():
    game = stacked(["red 1", "yellow 2", "red 2", "yellow 1"]).game
    assert game.parse("player_0", "I think: hint player_1 red, no wait, play 2") == "play 2"
    assert game.parse("player_0", "HINT PLAYER_1 1") == "hint player_1 1"
    with pytest.raises(parlour.InvalidMove, match="No move found"):
        game.parse("player_0", "play the red one")


# ------------------------------------------------------------------------- baselines

#: Mean score of a team of convention agents in parlour.evaluate with seed 0 (200 episodes of the small
#: presets, 60 of the full game), as measured; the tests assert them with a margin of one point.
MEASURED = {
    ("small", 2): 6.405,
    ("very_small", 2): 3.76,
    ("full", 2): 19.533,
    ("full", 3): 20.45,
    ("full", 5): 19.433,
}


@pytest.mark.parametrize("preset,num_players", list(MEASURED))
def test_convention_agents_score_as_measured(preset, num_players):
    episodes = 60 if preset == "full" else 200
    results = parlour.evaluate(
        ENV_ID, ["convention"], episodes=episodes, seed=0, env_kwargs={"preset": preset, "num_players": num_players}, progress=False
    )
    scores = [record["outcome"]["details"]["score"] for record in results.records]
    assert np.mean([record["outcome"]["details"]["misplays"] for record in results.records]) <= 0.2
    assert np.mean(scores) > MEASURED[(preset, num_players)] - 1.0
    assert results.summary["convention"]["invalid_action_rate"] == 0.0


def test_random_play_scores_almost_nothing():
    results = parlour.evaluate(ENV_ID, ["random"], episodes=100, seed=0, progress=False)
    assert np.mean([record["outcome"]["details"]["score"] for record in results.records]) < 0.5


def test_convention_agents_never_read_their_own_cards():
    """The agent's choices depend only on its view: hiding its own cards changes nothing (they are hidden already)."""
    match = Match(Hanabi, {"preset": "full"})
    match.reset(1)
    agent = parlour.make_agent("convention", env_id=ENV_ID)
    observation = match.agent_observation("player_0")
    own = observation["view"]["hands"]["player_0"]
    assert all(card["color"] is None for card in own)
    assert agent.act(observation) in observation["legal_moves"]


# ------------------------------------------------------------------------- OpenSpiel


def _spiel_action(game: Hanabi, seat: int, index: int) -> int:
    """The OpenSpiel action of move ``index`` played from ``seat`` (hints there name the target by its offset)."""
    H, n, C, R = game.hand_size, game.num_players, game.colors, game.ranks
    if index < 2 * H:
        return index
    if index < game._rank_hints:
        target, color = divmod(index - game._color_hints, C)
        return 2 * H + ((target - seat) % n - 1) * C + color
    target, rank = divmod(index - game._rank_hints, R)
    return 2 * H + (n - 1) * C + ((target - seat) % n - 1) * R + rank


def _spiel_own_knowledge(text: str) -> list[str]:
    """The observer's own cards' plausible colours and ranks from OpenSpiel's observation string, e.g. ``"RY123"``."""
    lines = text.split("\n")
    knowledge = []
    for line in lines[lines.index("Hands:") + 1 :]:
        if line == "Cur player":
            continue
        if line == "-----" or line.startswith("Deck"):
            break
        knowledge.append(line.split("||")[1].strip().split("|")[1])
    return knowledge


#: Option sets played against OpenSpiel: every preset, every player count, and odd sizes.
SPIEL_OPTIONS = [
    {"preset": "small"},
    {"preset": "full"},
    {"preset": "very_small", "num_players": 3},
    {"preset": "full", "num_players": 4},
    {"preset": "full", "num_players": 5},
    {"colors": 3, "ranks": 2, "hand_size": 3, "num_players": 3, "hint_tokens": 2, "life_tokens": 2},
    {"colors": 1, "ranks": 3, "hand_size": 1, "num_players": 2},
]


def test_same_deal_legal_moves_knowledge_tokens_rewards_and_end_as_openspiel():
    pyspiel = pytest.importorskip("pyspiel")
    endings = set()
    for options in SPIEL_OPTIONS:
        endings |= _cross_check(pyspiel, options, seeds=40)
    # Every way a game ends was reached: lives, a perfect score, the deck.
    assert len(endings) == 3, endings


def _cross_check(pyspiel, options: dict, seeds: int) -> set[str]:
    """Play ``seeds`` games move for move in parlour and OpenSpiel, comparing everything; the endings met."""
    probe = Hanabi(**options)
    parameters = {
        "players": probe.num_players,
        "colors": probe.colors,
        "ranks": probe.ranks,
        "hand_size": probe.hand_size,
        "max_information_tokens": probe.max_hints,
        "max_life_tokens": probe.max_lives,
    }
    try:
        spiel_game = pyspiel.load_game("hanabi", parameters)
    except pyspiel.SpielError as error:  # an OpenSpiel built without the Hanabi Learning Environment
        pytest.skip(f"OpenSpiel has no hanabi: {error}")
    endings = set()
    for seed in range(seeds):
        rng = np.random.default_rng(seed + 77)
        match = Match(Hanabi, options)
        match.reset(seed)
        game = match.game
        state = spiel_game.new_initial_state()
        dealt = 0

        def deal():
            nonlocal dealt
            while state.is_chance_node():
                state.apply_action(game.cards[dealt])
                dealt += 1

        deal()
        while not match.over:
            player = match.acting()[0]
            seat = match.players.index(player)
            assert state.current_player() == seat
            legal = game.legal_actions(player)
            assert sorted(_spiel_action(game, seat, i) for i in legal) == state.legal_actions()
            mine = ["".join(c[0].upper() for c in colors) + "".join(map(str, ranks)) for colors, ranks in map(game._possible, game.hands[seat])]
            assert _spiel_own_knowledge(state.observation_string(seat)) == mine
            # Mostly play what fits, hint or discard, and seldom misplay, so that games end in every way.
            plays = [i for i in legal if game.hand_size <= i < 2 * game.hand_size]
            fitting = [
                i
                for i in plays
                if game.fireworks[game.color_of(game.hands[seat][i - game.hand_size])] == game.rank_of(game.hands[seat][i - game.hand_size]) - 1
            ]
            others = [i for i in legal if i not in plays]
            roll = rng.random()
            pool = fitting if fitting and roll < 0.6 else others if others and roll < 0.97 else legal
            action = pool[int(rng.integers(len(pool)))]
            rewards = match.submit(player, action)
            state.apply_action(_spiel_action(game, seat, action))
            deal()
            assert [rewards.get(p, 0.0) for p in match.players] == state.rewards()
            assert f"Life tokens: {game.lives}\nInfo tokens: {game.hints}" in str(state)
            assert state.is_terminal() == match.over
        assert [match.returns[p] for p in match.players] == state.returns()
        endings.add(match.outcome.reason.split(",")[0].split(":")[0])
    return endings
