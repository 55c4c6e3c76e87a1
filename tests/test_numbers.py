"""Quantities in players' text are read exactly or refused with a hint (issue 32): ``12.5`` never becomes 12, and
``1,200`` or ``1e3`` never becomes 1, in any game that reads a number from free text."""

from __future__ import annotations

import re

import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.core.numbers import LISTED_NUMBER, NUMBER, whole_number
from parlour.envs.registry import game_class

REFUSAL = "not from 0 to 5000: {written}"


def read(text: str, pattern: str = NUMBER) -> int:
    """The number at the start of ``text`` as a game reads it (0 to 5000)."""
    return whole_number(re.match(pattern, text).group(), 0, 5000, REFUSAL, "[x] 12")


@pytest.mark.parametrize(
    "text, value", [("12", 12), ("12.", 12), ("12.0", 12), ("12.00", 12), ("007", 7), ("12, then", 12), ("12 apples", 12), ("12..", 12), ("0", 0)]
)
def test_plain_whole_numbers_are_read(text, value):
    assert read(text) == value


@pytest.mark.parametrize("text", ["12.5", "12.5.", "0.5", "5001"])
def test_fractions_and_numbers_out_of_range_get_the_games_refusal(text):
    with pytest.raises(parlour.InvalidMove, match=re.escape(REFUSAL.format(written=text.rstrip(".")))):
        read(text)


@pytest.mark.parametrize("text", ["1,200", "1e3", "1E+3", "1 000", "1_000", "1'000", "1\u202f000", "100.000", "1,5"])
def test_digit_groups_exponents_and_three_decimals_are_refused_as_ambiguous(text):
    with pytest.raises(parlour.InvalidMove, match=r"plain whole number, digits only, e\.g\. \[x\] 12: .* more than one way"):
        read(text)


def test_a_listed_number_ends_at_a_comma_or_space():
    assert [whole_number(n, 0, None, REFUSAL, "2, 1") for n in re.findall(LISTED_NUMBER, "2, 1,0 3")] == [2, 1, 0, 3]
    with pytest.raises(parlour.InvalidMove, match="got 2.5|: 2.5"):
        read("2.5, 1", LISTED_NUMBER)


def started(env_id: str) -> tuple[Match, str]:
    """A seeded match of ``env_id`` at the first decision that reads a number, and the player to make it."""
    match = Match(game_class(env_id), {})
    match.reset(3)
    game = match.game
    # Commons reads numbers in its harvest phase, DonorGame after the strategies.
    while getattr(game, "phase", None) in ("discuss", "strategy"):
        for player in list(match.acting()):
            match.submit(player, "[pass]" if game.phase == "discuss" else "[strategy] give when given")
    return match, match.acting()[0]


#: Per game: a move with ``{}`` for the number, and what that move reads from a plain ``12``-like number.
GAMES = {
    "parlour/Market-v0": ("[bid] grain {}", 12, lambda move: move["price"]),
    "parlour/Commons-v0": ("[harvest] {}", 12, lambda tons: tons),
    "parlour/PriceNegotiation-v0": ("[offer] {}", 120, lambda move: move["price"]),
    "parlour/Ultimatum-v0": ("[offer] {}", 4, lambda move: move["share"]),
    "parlour/Bargaining-v0": ("[propose] 0, {}, 0", 1, lambda move: move["keep"][1]),
    "parlour/DealOrWalk-v1": ("[propose] 0, {}, 0, 0", 1, lambda move: move["keep"][1]),
    "parlour/Codenames-v0": ("clue animal {}", 2, lambda move: int(move.split()[-1])),
    "parlour/DonorGame-v0": ("give {}%", 30, lambda move: int(move.split()[-1].rstrip("%"))),
}


#: The games that read a list of counts (LISTED_NUMBER).
LISTS = ("parlour/Bargaining-v0", "parlour/DealOrWalk-v1")


@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_every_game_reads_plain_numbers_and_refuses_the_rest(env_id):
    form, plain, value = GAMES[env_id]
    match, player = started(env_id)
    game = match.game
    assert value(game.parse(player, form.format(plain))) == plain
    assert value(game.parse(player, form.format(f"{plain}.0"))) == plain
    # The cases: Market read "[bid] wood 12.5" as 12 and "1,200" or "1e3" as 1.
    for written in (f"{plain}.5", "1,200", "1e3", "1 000", f"{plain}.000"):
        with pytest.raises(parlour.InvalidMove) as refused:
            game.parse(player, form.format(written))
        # In a list of counts a comma or a space separates two counts, so "1,200" is a list of the wrong length there.
        if not (env_id in LISTS and written in ("1,200", "1 000")):
            assert written in str(refused.value)
