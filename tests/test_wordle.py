"""Wordle: marks on known words (repeated letters), both endings, refused words, the vector, and the entropy solver."""

from __future__ import annotations

import json

import pytest

from parlour.baselines import make_scripted
from parlour.baselines.wordle import best_guess, candidates, entropy
from parlour.envs.core.match import Match
from parlour.envs.puzzles.wordle import LEVELS, WORDS, Wordle, feedback

ENV_ID = "parlour/Wordle-v0"


def new_match(answer: str | None = None, difficulty: int = 3, seed: int = 0) -> Match:
    """A Wordle match reset with ``seed``, its answer set to ``answer`` if given."""
    match = Match(Wordle, {"difficulty": difficulty})
    match.reset(seed)
    if answer is not None:
        match.game.answer = answer
    return match


@pytest.mark.parametrize(
    "guess, answer, marks",
    [
        ("crane", "crane", "GGGGG"),
        ("crane", "tower", "-Y--Y"),
        # One a in the answer: the guess's first a is yellow, its second grey.
        ("papal", "apple", "YYG-Y"),
        # A green takes the letter first, so an earlier copy of it is grey.
        ("geese", "those", "---GG"),
        ("eerie", "sheep", "YY---"),
        ("level", "hello", "YG--Y"),
    ],
)
def test_marks_follow_the_repeated_letter_rule(guess, answer, marks):
    assert feedback(guess, answer) == marks


def test_the_word_list_is_sorted_unique_five_letter_lowercase():
    assert WORDS == sorted(set(WORDS)) and len(WORDS) == 693
    assert all(len(word) == 5 and word.isalpha() and word.islower() for word in WORDS)


def test_guessing_the_word_wins():
    match = new_match("apple")
    match.submit("player_0", "CRANE")
    assert match.game.history == [("crane", "--Y-G")] and not match.over
    match.submit("player_0", "My guess, after crane: APPLE")
    assert match.over and match.returns == {"player_0": 1.0} and match.outcome.winners == ["player_0"]
    assert match.outcome.details == {"difficulty": 3, "success": True, "guesses": 2, "max_guesses": 6, "answer": "apple"}


def test_running_out_of_guesses_loses_and_tells_the_word():
    match = new_match("apple", difficulty=5)
    for _ in range(4):
        match.submit("player_0", "crane")
    assert match.over and match.returns == {"player_0": 0.0} and match.outcome.winners == []
    assert "APPLE" in match.outcome.reason and match.outcome.details["guesses"] == 4


def test_an_unlisted_word_is_refused_by_name_and_costs_no_guess():
    match = new_match("apple")
    match.submit("player_0", "I guess XYZZY")
    assert "'xyzzy' is not in the word list" in match.last_error["player_0"] and match.game.history == []
    # Everyday words in the middle of a reply are never guesses: only one in capitals, or the last word, is.
    match.submit("player_0", "which words could it be? I have no idea")
    assert "No guess found" in match.last_error["player_0"] and match.game.history == []
    match.submit("player_0", "CRANE is my guess")
    assert match.game.history == [("crane", "--Y-G")]
    for _ in range(3):
        match.submit("player_0", "qwert")
    assert match.over and match.returns == {"player_0": -1.0} and match.outcome.details["success"] is False


def test_the_prompt_shows_the_marks_and_never_the_answer():
    match = new_match("apple")
    match.submit("player_0", "paper")
    observation = match.agent_observation("player_0")
    assert "PAPER  Y Y G Y -" in observation["text"] and "Guesses left: 5" in observation["text"]
    assert "apple" not in json.dumps(observation["view"]) and "APPLE" not in observation["text"]


def test_the_vector_holds_what_the_marks_prove():
    match = new_match("apple")
    match.submit("player_0", "paper")
    vector = match.game.vector("player_0")
    a, e, p, r = (ord(c) - ord("a") for c in "aepr")
    assert vector.shape == (313,) and vector.sum() == pytest.approx(3 + 1 + 1 + 4 + 1 / 6)
    assert vector[a] == vector[e] == vector[p] == 1 and vector[26 + r] == 1 and vector[26 + p] == 0
    assert vector[52 + 2 * 26 + p] == 1 and vector[52 + 130 + 0 * 26 + p] == 1 and vector[52 + 130 + 1 * 26 + a] == 1
    assert vector[-1] == pytest.approx(1 / 6)
    match.submit("player_0", "mouth")
    assert match.game.vector("player_0")[26 + ord("m") - ord("a")] == 1


def test_candidates_keep_exactly_the_consistent_words():
    history = [("crane", feedback("crane", "apple")), ("papal", feedback("papal", "apple"))]
    pool = candidates(history)
    assert "apple" in pool and all(feedback(g, w) == m for w in pool for g, m in history)
    assert set(candidates(history[:1])) >= set(pool)


def test_the_solver_prefers_the_most_informative_guess():
    pool = ["bound", "found", "mound", "pound", "round", "sound", "wound"]
    # Every candidate splits them no better than one from six; a word with several of the first letters does better.
    choice = best_guess(pool)
    assert entropy(choice, pool) > max(entropy(word, pool) for word in pool)
    assert best_guess(["pound", "round"]) == "pound"


@pytest.mark.parametrize("difficulty", sorted(LEVELS))
def test_the_solver_agent_finds_drawn_words(difficulty):
    agent = make_scripted("solver", ENV_ID)
    for seed in range(3):
        match = new_match(difficulty=difficulty, seed=seed)
        while not match.over:
            match.submit("player_0", agent.act(match.agent_observation("player_0")))
        assert match.returns == {"player_0": 1.0}


def test_difficulty_is_validated():
    with pytest.raises(ValueError, match="difficulty must be an int from 1 to 5"):
        Wordle(difficulty=6)
