"""Ultimatum: payoffs of acceptance and rejection, iterated play with alternating roles, parsing."""

from __future__ import annotations

import pytest

from parlour.envs.core.game import InvalidMove
from parlour.envs.core.match import Match
from parlour.envs.negotiation.ultimatum import Ultimatum


def started(**options) -> Match:
    match = Match(Ultimatum, options)
    match.reset(0)
    return match


def test_accepted_offer_splits_the_pie():
    match = started(pie=10)
    match.submit("proposer", "I think this is generous. [offer] 3")
    assert '\n\nproposer: "I think this is generous."\n\n' in match.observation_text("responder")
    kinds = {(m["kind"], m["sender"]) for m in match.messages("responder") if m["sender"] == "proposer"}
    assert kinds == {("talk", "proposer"), ("move", "proposer")}
    match.submit("responder", "[accept]")
    assert match.over and match.returns == {"proposer": 7.0, "responder": 3.0}
    details = match.outcome.details
    assert details["agreement"] and details["pareto_optimal"] and details["accepted_rounds"] == 1
    assert details["nash_solution"] == {"proposer": 5.0, "responder": 5.0}
    assert match.outcome.winner == "proposer"


def test_rejection_leaves_both_with_nothing():
    match = started(pie=10)
    match.submit("proposer", "[offer] 1")
    match.submit("responder", "Insulting. [reject]")
    assert match.over and match.returns == {"proposer": 0.0, "responder": 0.0}
    assert match.outcome.details["agreement"] is False and match.outcome.winner is None


def test_iterated_with_alternating_roles():
    match = started(pie=6, rounds=3, alternate=True)
    assert match.players == ["player_0", "player_1"]
    match.submit("player_0", "[offer] 2")
    match.submit("player_1", "[accept]")
    assert match.acting() == ["player_1"] and not match.over
    match.submit("player_1", "[offer] 1")
    match.submit("player_0", "[reject]")
    match.submit("player_0", "[offer] 3")
    match.submit("player_1", "[accept]")
    assert match.over
    assert match.returns == {"player_0": 4.0 + 3.0, "player_1": 2.0 + 3.0}
    details = match.outcome.details
    assert details["accepted_rounds"] == 2 and details["agreement"] is False
    assert [h["proposer"] for h in details["history"]] == ["player_0", "player_1", "player_0"]


def test_parse_takes_the_last_move_of_the_current_role():
    game = started(pie=10).game
    assert game.parse("proposer", "[accept] no wait [offer] 4 [offer] 5 done")["share"] == 5
    for bad in ("[accept]", "[offer]", "four"):
        with pytest.raises(InvalidMove, match="No move"):
            game.parse("proposer", bad)
    with pytest.raises(InvalidMove, match="whole share"):
        game.parse("proposer", "[offer] 11")
    match = started(pie=10)
    match.submit("proposer", "[offer] 4")
    assert match.game.parse("responder", "[reject] hmm, no: [accept]")["move"] == "accept"
    with pytest.raises(InvalidMove, match="responder"):
        match.game.parse("responder", "[offer] 5")


def test_options_are_validated():
    for bad in ({"pie": 0}, {"rounds": 0}, {"alternate": "yes"}):
        with pytest.raises(ValueError):
            Ultimatum(**bad)


def test_a_forfeit_is_a_loss_even_for_the_player_ahead():
    match = Match(Ultimatum, {"rounds": 3, "error_allowance": 0})
    match.reset(0)
    match.submit("proposer", "[offer] 1")
    match.submit("responder", "[accept]")
    match.submit("proposer", "gibberish without a move")
    assert match.over
    assert match.returns == {"proposer": -1.0, "responder": 1.0}
    assert match.outcome.winners == ["responder"]


def test_pie_times_rounds_is_capped():
    with pytest.raises(ValueError, match="at most 10000"):
        Match(Ultimatum, {"pie": 1_000_000})
