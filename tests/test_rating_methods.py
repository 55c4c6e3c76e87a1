"""Rating methods are a registry: each method carries its table function and its display rule, which the pages and
the command line both read from the table (issue 36: the digits rule was written in the CLI and in the template)."""

from __future__ import annotations

from typing import Any

import pytest

from parlour.leaderboard import ratings
from parlour.leaderboard.ratings import METHODS, Method, RatingInput, env_table, register_rating_method

# Three agents, two seats, every pair met: a score table that is ranked.
RESULTS = [
    (f"f{i}", {"player_0": a, "player_1": b}, {"player_0": float(i % 3), "player_1": float(-(i % 3))})
    for i, (a, b) in enumerate([("x", "y"), ("y", "z"), ("z", "x")] * 10)
]


def test_each_builtin_method_states_its_display_rule() -> None:
    assert METHODS["bradley-terry"].digits == 1 and METHODS["bradley-terry"].score_rate
    assert all(METHODS[key].digits == 3 and not METHODS[key].score_rate for key in ("payoff", "team", "roles", "score"))
    table = env_table(RESULTS, seats=2, category="negotiation", zero_sum=False)
    assert (table["method"], table["digits"], table["score_rate"]) == ("payoff", 3, False)


def test_a_registered_method_rates_a_category_and_its_rule_reaches_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[RatingInput] = []

    def median_return(given: RatingInput) -> dict[str, Any]:
        seen.append(given)
        return ratings.mean_scores(given.results)

    method = register_rating_method(Method("median", "median return", "The median return per episode.", median_return, digits=2))
    try:
        monkeypatch.setitem(ratings.CATEGORY_METHODS, "tournament", "median")
        table = env_table(RESULTS, seats=2, category="tournament", zero_sum=False)
        assert seen and seen[0].method == "median" and len(seen[0].results) == len(RESULTS)
        assert (table["method"], table["value"], table["digits"], table["sentence"]) == ("median", "median return", 2, method.sentence)
        with pytest.raises(ValueError, match="already registered"):
            register_rating_method(Method("median", "other", "other", median_return))
    finally:
        METHODS.pop("median")


def test_the_page_and_the_cli_read_the_digits_from_the_table() -> None:
    """Neither the template nor the CLI names a method to choose its digits any more."""
    from pathlib import Path

    import parlour.commands.leaderboard as cli
    import parlour.leaderboard.site as site

    template = (Path(site.__file__).parent / "templates" / "macros.html").read_text(encoding="utf-8")
    assert "table.digits" in template and 'table.kind == "bradley-terry"' not in template
    assert 'table["digits"]' in Path(cli.__file__).read_text(encoding="utf-8")
