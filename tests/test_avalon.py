"""Avalon: the deal and who knows whom, proposals (with talk), votes and the fifth rejection, quests and their
fail counts, the assassination, team rewards and forfeits, the vector face, and the reasoner's reading."""

from __future__ import annotations

import numpy as np
import pytest

from parlour.baselines.avalon import AvalonReasoner, merlin_likeness, suspicion
from parlour.envs.core.match import Match
from parlour.envs.social.avalon import DECK, QUEST_SIZES, Avalon

#: player_0 merlin, player_1 and player_2 servants, player_3 the assassin, player_4 the minion; player_0 leads first.
ROLES = ["merlin", "servant", "servant", "assassin", "minion"]


def dealt(**options) -> Match:
    """A started match with :data:`ROLES` and player_0 leading."""
    match = Match(Avalon, options)
    match.reset(0)
    match.game.roles = dict(zip(match.game.players, ROLES))
    match.game.leader = 0
    match._refresh()
    return match


def act(match: Match, moves: dict[str, str]) -> None:
    """One valid action per acting player."""
    assert sorted(moves) == sorted(match.acting()), (sorted(moves), match.acting())
    for player in list(match.acting()):
        match.submit(player, moves[player])
        assert match.steps[-1]["error"] is None, match.steps[-1]


def vote(match: Match, approvals: set[int]) -> None:
    """Everyone votes: the seats in ``approvals`` approve."""
    act(match, {f"player_{i}": "approve" if i in approvals else "reject" for i in range(5)})


def quest(match: Match, team: list[int], fails: set[int] = frozenset()) -> None:
    """Propose ``team`` (by the current leader), approve it unanimously, play it (``fails`` fail)."""
    act(match, {match.acting()[0]: "propose " + " ".join(f"player_{i}" for i in team)})
    vote(match, set(range(5)))
    act(match, {f"player_{i}": "fail" if i in fails else "success" for i in team})


def test_roles_are_dealt_at_random_and_merlin_and_evil_know_the_evil_players():
    deals = set()
    for seed in range(10):
        match = Match(Avalon, {})
        match.reset(seed)
        roles = match.game.roles
        assert sorted(roles.values()) == sorted(DECK)
        evil = [p for p in match.players if roles[p] in ("assassin", "minion")]
        for player in match.players:
            told = f"The evil players are {', '.join(evil)}." in match.observation_text(player)
            assert told == (roles[player] != "servant")
            assert match.game.view(player)["evil"] == (None if roles[player] == "servant" else evil)
            assert "roles" not in match.game.view(player)
        deals.add(tuple(roles.values()))
    assert len(deals) > 5


def test_a_proposal_names_the_quests_size_and_may_carry_talk():
    match = dealt(error_allowance=5)
    for text, reason in [
        ("propose player_1", "Propose 2 different"),
        ("propose player_1 player_1", "Propose 2 different"),
        ("I trust everyone", "No proposal"),
    ]:
        match.submit("player_0", text)
        assert reason in match.steps[-1]["error"]
    match.submit("player_0", "propose player_2, player_0 [say] I trust player_2.")
    assert match.steps[-1]["move"] == {"move": "propose player_0 player_2", "say": "I trust player_2."}
    talk = [m for m in match.messages("player_3") if m["kind"] == "talk"]
    assert talk == [{"sender": "player_0", "to": None, "kind": "talk", "text": "I trust player_2."}]
    assert match.game.phase == "vote" and sorted(match.acting()) == match.players


def test_a_majority_sends_the_team_and_good_players_can_only_succeed():
    match = dealt()
    act(match, {"player_0": "propose player_0 player_3"})
    vote(match, {0, 3, 4})
    assert match.acting() == ["player_0", "player_3"]
    assert match.legal_moves("player_0") == ["success"] and match.legal_moves("player_3") == ["success", "fail"]
    match.submit("player_0", "fail")
    assert match.steps[-1]["error"] is not None
    act(match, {"player_0": "success", "player_3": "fail"})
    assert match.game.results == [0]
    assert "Quest 1 fails (1 fail played)" in match.observation_text("player_1")
    assert match.game.players[match.game.leader] == "player_1" and match.game.phase == "propose"
    assert QUEST_SIZES[match.game.quest] == 3


def test_the_fifth_rejection_in_a_row_wins_for_evil():
    match = dealt()
    for i in range(5):
        assert match.game.players[match.game.leader] == f"player_{i}"
        act(match, {f"player_{i}": "propose player_1 player_2"})
        vote(match, {1, 2})
    assert match.outcome.winning_team == "evil" and "rejected" in match.outcome.reason
    assert match.outcome.scores == {"player_0": -1.0, "player_1": -1.0, "player_2": -1.0, "player_3": 1.0, "player_4": 1.0}


def test_three_failed_quests_win_for_evil():
    match = dealt()
    quest(match, [0, 3], {3})
    quest(match, [1, 2, 4], {4})
    quest(match, [2, 3], {3})
    assert match.outcome.winning_team == "evil" and match.outcome.reason == "three quests failed"
    assert [q["fails"] for q in match.outcome.details["quests"]] == [1, 1, 1]


@pytest.mark.parametrize("target,winner", [("player_0", "evil"), ("player_1", "good")])
def test_after_three_successes_the_assassin_decides_by_finding_merlin(target, winner):
    match = dealt()
    quest(match, [0, 1])
    quest(match, [0, 1, 2])
    quest(match, [1, 2])
    assert match.acting() == ["player_3"] and match.game.phase == "assassinate"
    assert match.legal_moves("player_3") == ["assassinate player_0", "assassinate player_1", "assassinate player_2"]
    act(match, {"player_3": f"assassinate {target}"})
    assert match.outcome.winning_team == winner
    assert match.outcome.details["assassinated"] == target and match.outcome.details["merlin"] == "player_0"
    assert match.outcome.teams == {"good": ["player_0", "player_1", "player_2"], "evil": ["player_3", "player_4"]}


def test_a_forfeit_loses_for_the_offenders_team():
    match = dealt(error_allowance=0)
    match.submit("player_0", "nothing")
    assert match.outcome.winning_team == "evil" and match.outcome.scores["player_4"] == 1.0


def test_the_vector_holds_role_knowledge_phase_and_results():
    match = dealt()
    quest(match, [0, 3], {3})
    game = match.game
    merlin, servant = game.vector("player_0"), game.vector("player_1")
    assert merlin.shape == (game.vector_size,) and merlin.dtype == np.float32
    assert merlin[:4].tolist() == [1, 0, 0, 0] and servant[:4].tolist() == [0, 1, 0, 0]
    assert merlin[4:9].tolist() == [0, 0, 0, 1, 1] and servant[4:9].tolist() == [0] * 5
    results = 4 + 5 + 4 + 5 + 5 + 5
    assert servant[results : results + 2].tolist() == [0, 1]
    assert len(match.legal_moves("player_1")) == 10 and all(m.startswith("propose") and len(m.split()) == 4 for m in match.legal_moves("player_1"))


def test_the_reasoner_suspects_a_failed_quests_members_and_votes_against_its_result():
    match = dealt()
    act(match, {"player_0": "propose player_0 player_3"})
    vote(match, {0, 3, 4})
    act(match, {"player_0": "success", "player_3": "fail"})
    scores = suspicion(match.game.view("player_1"))
    # player_3 went on the failed quest and approved it; player_0 too; player_4 only approved; player_2 rejected it.
    assert scores == {"player_0": 1.0, "player_2": 0.0, "player_3": 1.0, "player_4": 0.5}
    assert suspicion(match.game.view("player_0"))["player_3"] == 1.5
    # The assassin: merlin (player_0) led a team with evil on it, so it looks less like merlin than player_1 who rejected.
    view = match.game.view("player_3")
    assert merlin_likeness(view, "player_1") > merlin_likeness(view, "player_0")
    # Leading quest 2, a servant takes itself and the two least suspected.
    assert AvalonReasoner(seed=0).act({"view": match.game.view("player_1")}) == "propose player_1 player_2 player_4"


def test_the_reasoners_evil_fails_once_per_quest_and_approves_only_tainted_teams():
    match = dealt()
    act(match, {"player_0": "propose player_0 player_1"})
    agent = AvalonReasoner(seed=0)
    assert agent.act({"view": match.game.view("player_3")}) == "reject"
    vote(match, {0, 1, 2})
    act(match, {"player_0": "success", "player_1": "success"})
    act(match, {"player_1": "propose player_1 player_3 player_4"})
    assert agent.act({"view": match.game.view("player_4")}) == "approve"
    vote(match, {1, 3, 4})
    assert agent.act({"view": match.game.view("player_3")}) == "fail"
    assert agent.act({"view": match.game.view("player_4")}) == "success"
