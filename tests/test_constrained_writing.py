"""ConstrainedWriting: the checker on known texts, the moves, the protocol, rewards, and the scripted writer and critic."""

from __future__ import annotations

import numpy as np
import pytest

import parlour
from parlour.baselines.constrained_writing import CheckerAgent, satisfying_text
from parlour.envs.core.frozen import freeze
from parlour.envs.core.match import Match
from parlour.envs.social.constrained_writing import (
    ACROSTICS,
    BANNED,
    ENDINGS,
    KINDS,
    VOCABULARY,
    ConstrainedWriting,
    check,
    draw_constraints,
    extract_text,
)

ENV_ID = "parlour/ConstrainedWriting-v0"
POEM = "Sun on the hill,\n\nUnder a tree's shade,\n  Night don't fall!\n"


@pytest.mark.parametrize(
    "constraint, met",
    [
        ({"kind": "acrostic", "word": "sun"}, True),
        ({"kind": "acrostic", "word": "su"}, False),
        ({"kind": "acrostic", "word": "sunk"}, False),
        ({"kind": "lines", "count": 3}, True),  # the blank line holds no word
        ({"kind": "lines", "count": 4}, False),
        # Sun on the hill / Under a tree's shade / Night don't fall: 11 words, "tree's" and "don't" one each.
        ({"kind": "words", "count": 11}, True),
        ({"kind": "words", "count": 12}, False),
        ({"kind": "include", "words": ("hill", "night")}, True),  # case-insensitive
        ({"kind": "include", "words": ("hill", "tree")}, False),  # "tree's" is another word
        ({"kind": "exclude", "words": ("and", "with")}, True),
        ({"kind": "exclude", "words": ("and", "the")}, False),
        ({"kind": "ending", "letter": "l"}, False),  # shade ends in e
        ({"kind": "length", "max": 5}, True),
        ({"kind": "length", "max": 4}, False),  # Under, shade and tree's have five letters (don't has four)
    ],
)
def test_the_checker_on_a_known_text(constraint, met):
    assert check(constraint, POEM) is met


def test_line_endings_read_the_last_word_past_punctuation():
    assert check({"kind": "ending", "letter": "l"}, "all is still.\nthe hill!\n...\n")
    assert not check({"kind": "ending", "letter": "l"}, "")


def test_extract_text_takes_the_last_block_and_refuses_none_or_empty():
    assert extract_text("draft: <text>one</text> better: <TEXT>\n two \n</Text> done") == "two"
    for reply in ("no tags", "<text>open only", "</text><text>", "<text>  \n </text>"):
        with pytest.raises(parlour.InvalidMove):
            extract_text(reply)


def started(seed: int = 0, **options) -> Match:
    """A started match whose constraints are replaced by a fixed set of three."""
    match = Match(ConstrainedWriting, {"difficulty": 3, **options})
    match.reset(seed)
    match.game.constraints = freeze([{"kind": "lines", "count": 2}, {"kind": "include", "words": ("sun",)}, {"kind": "ending", "letter": "n"}])
    return match


def test_verdicts_parse_in_every_form_and_name_only_real_constraints():
    match = started()
    match.submit("writer", "<text>a sun\nrain</text>")
    game = match.game
    assert game.parse("critic", "Bad. [verdict] 3 and 1, 3") == {"verdict": (1, 3), "talk": "Bad."}
    assert game.parse("critic", "[verdict] 2 3")["verdict"] == (2, 3)
    assert game.parse("critic", "[verdict] 1 then [verdict]: none")["verdict"] == ()
    with pytest.raises(parlour.InvalidMove, match="no constraint 4"):
        game.parse("critic", "[verdict] 2, 4")
    with pytest.raises(parlour.InvalidMove, match="No verdict"):
        game.parse("critic", "all fine")


def test_a_full_episode_relays_texts_and_comments_and_pays_each_seat_its_task():
    match = started()
    # Draft: 2 lines, no "sun", both lines end in n -> constraint 2 is the only violation.
    match.submit("writer", "private notes <text>green lawn\nrain</text>")
    to_critic = [m for m in match.messages("critic") if m["kind"] == "talk"]
    assert to_critic == [{"sender": "writer", "to": ["critic"], "kind": "talk", "text": "green lawn\nrain"}]
    assert "private notes" not in match.observation_text("critic")
    # The critic names 2 (right) and 3 (wrong): it judged constraints 1 and 2 right.
    match.submit("critic", "Use sun. [verdict] 2, 3")
    to_writer = [m for m in match.messages("writer") if m["kind"] == "talk"]
    assert to_writer == [{"sender": "critic", "to": ["writer"], "kind": "talk", "text": "Use sun."}]
    assert "The critic's verdict: constraints violated: 2, 3." in match.observation_text("writer")
    # Final: 2 lines with sun, but the first ends in e: 2 of 3.
    match.submit("writer", "<text>the sun shone\nrain</text>")
    assert match.returns == pytest.approx({"writer": 2 / 3, "critic": 2 / 3})
    details = match.outcome.details
    assert details["draft"] == [True, False, True] and details["final"] == [True, True, False]
    assert details["verdict"] == [2, 3] and match.outcome.winners == []


def test_a_forfeit_costs_the_offender_one():
    match = started(error_allowance=0)
    match.submit("writer", "<text>sun</text>")
    match.submit("critic", "looks fine")
    assert match.returns == {"writer": 0.0, "critic": -1.0}
    assert match.outcome.details["verdict"] is None and match.outcome.details["critic_accuracy"] is None


def test_constraints_are_distinct_consistent_and_as_many_as_the_difficulty():
    for difficulty in range(1, len(KINDS) + 1):
        for seed in range(30):
            drawn = draw_constraints(np.random.default_rng(seed), difficulty)
            kinds = [c["kind"] for c in drawn]
            assert len(drawn) == difficulty and len(set(kinds)) == difficulty
            by_kind = {c["kind"]: c for c in drawn}
            if "acrostic" in by_kind and "lines" in by_kind:
                assert by_kind["lines"]["count"] == len(by_kind["acrostic"]["word"])
            if "include" in by_kind and "length" in by_kind:
                assert all(len(w) <= by_kind["length"]["max"] for w in by_kind["include"]["words"])


def test_the_vocabulary_covers_every_acrostic_letter_and_ending_with_short_words():
    short = [w for w in VOCABULARY if len(w) <= 5]
    assert all(any(w[0] == letter for w in short) for word in ACROSTICS for letter in word)
    assert all(any(w.endswith(letter) for w in short) for letter in ENDINGS)
    assert not set(BANNED) & set(VOCABULARY)


@pytest.mark.parametrize("difficulty", range(1, len(KINDS) + 1))
def test_the_scripted_writer_meets_every_constraint(difficulty):
    rng = np.random.default_rng(difficulty)
    for seed in range(40):
        constraints = draw_constraints(np.random.default_rng(seed), difficulty)
        text = satisfying_text(constraints, lambda options: options[int(rng.integers(len(options)))])
        assert all(check(c, text) for c in constraints), (constraints, text)


def test_the_checker_critic_names_exactly_the_violations():
    match = started()
    match.submit("writer", "<text>green lawn\nrain</text>")
    assert CheckerAgent(ENV_ID, 0).act(match.agent_observation("critic")).endswith("[verdict] 2")
