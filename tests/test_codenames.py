"""Codenames: the generated boards and keys, what each role sees, clues and guesses and where a turn ends, the
assassin, the win conditions, team rewards and forfeits, the vector face, and the thematic agent's clues."""

from __future__ import annotations

import numpy as np
import pytest

from parlour.baselines.codenames import best_clue
from parlour.envs.core.match import Match
from parlour.envs.social.codenames import COLOURS, LEVELS, THEMES, WORD_THEMES, WORDS, Codenames

#: A 16-word board (difficulty 1): six red, five blue, four neutral, the assassin last.
BOARD = [
    "apple",
    "banana",
    "cherry",
    "tiger",
    "horse",
    "rabbit",
    "piano",
    "drum",
    "violin",
    "knife",
    "spoon",
    "rain",
    "snow",
    "moon",
    "star",
    "hammer",
]
KEY = ["red"] * 3 + ["blue"] * 3 + ["red"] * 3 + ["blue", "blue", "neutral", "neutral", "neutral", "neutral", "assassin"]


def dealt(board: list[str] = BOARD, key: list[str] = KEY, **options) -> Match:
    """A started difficulty-1 match whose board and key are replaced."""
    match = Match(Codenames, {"difficulty": 1, **options})
    match.reset(0)
    match.game.board, match.game.key = list(board), list(key)
    match._refresh()
    return match


def play(match: Match, *actions: str) -> None:
    """Submit ``actions`` in turn order; each must be valid."""
    for action in actions:
        match.submit(match.acting()[0], action)
        assert match.steps[-1]["error"] is None, match.steps[-1]


@pytest.mark.parametrize("difficulty", sorted(LEVELS))
def test_boards_are_drawn_from_a_few_themes_with_the_levels_key(difficulty):
    size, red, blue, assassins = LEVELS[difficulty]
    boards = set()
    for seed in range(6):
        match = Match(Codenames, {"difficulty": difficulty})
        match.reset(seed)
        game = match.game
        assert len(set(game.board)) == size and set(game.board) <= set(WORDS)
        assert [game.key.count(c) for c in COLOURS] == [red, blue, size - red - blue - assassins, assassins]
        # Clusters: the board's words come from few themes, so some theme relates to several of them.
        assert max(sum(w in words for w in game.board) for words in THEMES.values()) >= 3
        boards.add(tuple(game.board))
    assert len(boards) == 6


def test_the_theme_list_is_a_clue_vocabulary_apart_from_the_words():
    assert not set(THEMES) & set(WORDS)
    assert WORD_THEMES["orange"] == ("fruit", "colour") and WORD_THEMES["heart"] == ("body", "medicine", "cards")


def test_spymasters_see_the_key_and_guessers_only_what_is_revealed():
    match = dealt()
    play(match, "clue fruit 2", "guess tiger")
    spy, guesser = match.game.view("red_spymaster"), match.game.view("red_guesser")
    assert spy["key"] == dict(zip(BOARD, KEY)) and guesser["key"] is None
    assert guesser["revealed"] == {"tiger": "blue"}
    text = match.observation_text("blue_spymaster")
    assert "hammer [assassin]" in text
    play(match, "clue animal 2")
    guesser_text = match.observation_text("blue_guesser")
    assert "hammer" in guesser_text and "[assassin]" not in guesser_text and "tiger: revealed blue" in guesser_text


def test_own_words_continue_up_to_n_plus_one_guesses_then_the_turn_passes():
    match = dealt()
    play(match, "clue fruit 2", "guess apple", "guess banana", "guess cherry")
    assert match.acting() == ["blue_spymaster"]
    assert match.game.left("red") == 3


@pytest.mark.parametrize("word,colour", [("rain", "neutral"), ("tiger", "blue")])
def test_a_neutral_or_opposing_word_ends_the_turn(word, colour):
    match = dealt()
    play(match, "clue fruit 3", "guess apple", f"guess {word}")
    assert match.acting() == ["blue_spymaster"]
    assert match.game.view("blue_guesser")["revealed"] == {"apple": "red", word: colour}
    assert match.game.left("blue") == (4 if colour == "blue" else 5)


def test_pass_needs_a_guess_first_and_then_ends_the_turn():
    match = dealt()
    play(match, "clue music 3")
    match.submit("red_guesser", "pass")
    assert "at least one word" in match.steps[-1]["error"]
    assert "pass" not in match.legal_moves("red_guesser")
    play(match, "guess piano")
    assert "pass" in match.legal_moves("red_guesser")
    play(match, "pass")
    assert match.acting() == ["blue_spymaster"]


def test_bad_clues_and_guesses_are_invalid_with_the_reason():
    match = dealt(error_allowance=5)
    for text, reason in [("clue banana 2", "not a theme word"), ("clue fruit 9", "from 1 to 5"), ("I have no idea", "No clue found")]:
        match.submit("red_spymaster", text)
        assert reason in match.steps[-1]["error"]
    match2 = dealt()
    play(match2, "clue fruit 1", "apple")  # a bare board word is a guess
    assert match2.game.view("red_guesser")["revealed"] == {"apple": "red"}
    match2.submit("red_guesser", "guess apple")
    assert "not an unrevealed word" in match2.steps[-1]["error"]


def test_the_assassin_loses_at_once_for_the_team_that_reveals_it():
    match = dealt()
    play(match, "clue tools 1", "guess hammer")
    outcome = match.outcome
    assert outcome.winning_team == "blue" and outcome.details["assassin"]
    assert outcome.scores == {"red_spymaster": -1.0, "red_guesser": -1.0, "blue_spymaster": 1.0, "blue_guesser": 1.0}
    assert outcome.teams == {"red": ["red_spymaster", "red_guesser"], "blue": ["blue_spymaster", "blue_guesser"]}


def test_a_team_wins_when_its_last_word_is_revealed_even_by_the_other_team():
    match = dealt()
    play(match, "clue fruit 3", "guess apple", "guess banana", "guess cherry", "pass")
    play(match, "clue animal 3", "guess tiger", "guess horse", "guess rabbit", "guess knife")
    play(match, "clue music 3", "guess piano", "guess drum", "guess spoon")
    assert match.outcome.winning_team == "blue" and match.outcome.reason == "every blue word is revealed"
    assert match.outcome.details["left"] == {"red": 1, "blue": 0}
    assert [c["theme"] for c in match.outcome.details["clues"]] == ["fruit", "animal", "music"]


def test_a_forfeit_loses_for_the_offenders_team():
    match = Match(Codenames, {"difficulty": 1, "error_allowance": 0})
    match.reset(0)
    match.submit("red_spymaster", "nonsense")
    assert match.outcome.winning_team == "blue" and match.outcome.scores["red_guesser"] == -1.0


def test_the_vector_shows_the_key_to_spymasters_only_and_indexes_the_moves():
    match = dealt()
    play(match, "clue fruit 2", "guess rain")
    game = match.game
    slot = game._slot
    spy, guesser = game.vector("blue_spymaster"), game.vector("blue_guesser")
    assert spy.shape == (game.vector_size,) and spy.dtype == np.float32
    key_part = slice(len(COLOURS) + 1, 2 * len(COLOURS) + 1)
    assert spy[key_part].tolist() == [1, 0, 0, 0] and guesser[key_part].tolist() == [0, 0, 0, 0]
    rain = BOARD.index("rain") * slot
    assert spy[rain + COLOURS.index("neutral")] == 1 and spy[rain + len(COLOURS)] == 0
    assert spy[rain + 2 * len(COLOURS) + 1 + len(game.themes) + WORDS.index("rain")] == 1
    play(match, "clue music 1")
    legal = match.legal_moves("blue_guesser")
    assert len(legal) == 15 and "guess rain" not in legal and all(game.moves[i] in legal for i in game.legal_actions("blue_guesser"))


def test_the_thematic_spymaster_clues_its_most_words_per_miss_and_shuns_the_assassin():
    view = dealt().game.view("red_spymaster")
    view["key"]["banana"] = "neutral"
    # music relates to red piano, drum, violin and nothing else on the board: three words, no miss; fruit two and a miss.
    assert best_clue(view) == ("music", 3)
    view["key"]["drum"] = "assassin"
    view["key"]["hammer"] = "red"
    # music now relates to the assassin; fruit (two red, one neutral) beats tools (one red) on words at one miss each.
    assert best_clue(view) == ("fruit", 2)


def test_difficulty_is_validated():
    with pytest.raises(ValueError, match="difficulty"):
        Codenames(difficulty=4)
