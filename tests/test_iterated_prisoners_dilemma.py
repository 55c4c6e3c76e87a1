"""IteratedPrisonersDilemma: payoffs, endings, forfeit, communication and secrecy of pending choices."""

from __future__ import annotations

import json

import gymnasium
import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.games.iterated_prisoners_dilemma import IteratedPrisonersDilemma

ENV_ID = "parlour/IteratedPrisonersDilemma-v0"


def new_match(**options) -> Match:
    """An IPD match reset with seed 0."""
    match = Match(IteratedPrisonersDilemma, options)
    match.reset(0)
    return match


def play(match: Match, names: dict[str, str]) -> None:
    """Play ``match`` to the end with the scripted agents named per player."""
    agents = {player: parlour.make_agent(name, env_id=ENV_ID) for player, name in names.items()}
    for i, agent in enumerate(agents.values()):
        agent.reset(seed=i)
    while not match.over:
        player = match.acting()[0]
        match.submit(player, agents[player].act(match.agent_observation(player)))


@pytest.mark.parametrize(
    "first,second,payoffs",
    [("cooperate", "cooperate", (3, 3)), ("defect", "defect", (1, 1)), ("defect", "cooperate", (5, 0)), ("cooperate", "defect", (0, 5))],
)
def test_each_round_pays_its_payoff_that_round(first, second, payoffs):
    match = new_match(rounds=2)
    assert match.submit("player_0", f"After thinking it over, I {first}.") == {}
    assert match.submit("player_1", second) == {"player_0": payoffs[0], "player_1": payoffs[1]}
    assert not match.over and match.game.round == 1


def test_tit_for_tat_against_always_defect_over_ten_rounds():
    match = new_match()
    play(match, {"player_0": "tit_for_tat", "player_1": "always_defect"})
    assert match.returns == {"player_0": 9 * 1 + 0, "player_1": 5 + 9 * 1}
    assert match.outcome.winner == "player_1"
    history = [(r["player_0"], r["player_1"]) for r in match.game.history]
    assert history == [("cooperate", "defect")] + [("defect", "defect")] * 9


def test_mutual_cooperation_is_a_tie_with_no_winner():
    match = new_match(rounds=4)
    play(match, {"player_0": "tit_for_tat", "player_1": "always_cooperate"})
    assert match.returns == {"player_0": 12.0, "player_1": 12.0}
    assert match.outcome.winner is None and match.outcome.winners == []


def test_custom_payoffs_are_used():
    match = new_match(rounds=1, payoffs=[10, 6, 2, -1])
    match.submit("player_0", "defect")
    match.submit("player_1", "cooperate")
    assert match.returns == {"player_0": 10.0, "player_1": -1.0}
    assert match.over and match.outcome.winner == "player_0"


@pytest.mark.parametrize("payoffs", [[3, 5, 1, 0], [5, 3, 1], "5310", [5, 3, 1, float("nan")]])
def test_payoffs_that_are_not_a_dilemma_are_rejected(payoffs):
    with pytest.raises(ValueError, match="payoffs"):
        IteratedPrisonersDilemma(payoffs=payoffs)


def test_the_last_choice_word_counts_and_other_text_is_invalid():
    match = new_match()
    assert match.game.parse("player_0", "Defect is tempting, but I'll COOPERATE") == "cooperate"
    match.submit("player_0", "I choose cooperation")
    assert "cooperate or defect" in match.last_error["player_0"]
    assert match.acting() == ["player_0", "player_1"]


def test_forfeit_sinks_the_offender_below_any_reachable_total():
    match = new_match(rounds=3, error_allowance=0)
    match.submit("player_0", "defect")
    match.submit("player_1", "cooperate")
    match.submit("player_0", "no idea")
    assert match.over
    assert match.returns == {"player_0": -1.0, "player_1": 0.0}
    assert match.outcome.winners == ["player_1"]


def test_a_pending_choice_is_never_shown_to_the_other_player():
    match = new_match(rounds=2)
    match.submit("player_0", "cooperate")
    match.submit("player_1", "cooperate")
    before = match.agent_observation("player_1")
    match.submit("player_0", "defect")
    assert match.agent_observation("player_1") == before
    assert match.game.vector("player_1").tolist() == match.game.vector("player_0").tolist()
    match.submit("player_1", "cooperate")
    assert "your opponent chose defect" in match.observation_text("player_1")


def test_vector_describes_the_last_rounds_most_recent_first():
    match = new_match(rounds=4)
    for first, second in [("defect", "cooperate"), ("cooperate", "defect")]:
        match.submit("player_0", first)
        match.submit("player_1", second)
    vector = match.game.vector("player_0").tolist()
    assert vector == [1, 0, 1, 1, 1, 0, 0, 0, 0, 0.5]


def test_communication_delivers_messages_verbatim_before_the_decision():
    match = new_match(rounds=2, communication=True)
    assert match.legal_moves("player_0") is None
    message = 'Let\'s both cooperate.\n  Promise? ✓ {"json": true}  '
    match.submit("player_0", message)
    assert message not in match.observation_text("player_1")
    assert match.agent_observation("player_1")["view"]["messages_received"] == ()
    match.submit("player_1", "defect, obviously")
    assert match.game.phase == "decide" and match.returns == {"player_0": 0.0, "player_1": 0.0}
    assert f"player_0: {json.dumps(message, ensure_ascii=False)}\n\n" in match.observation_text("player_1")
    (relayed,) = [m for m in match.agent_observation("player_1")["messages"] if m["kind"] == "talk"]
    assert relayed == {"sender": "player_0", "to": ["player_1"], "kind": "talk", "text": message}
    assert "defect, obviously" in match.observation_text("player_0")
    assert match.agent_observation("player_1")["view"]["messages_received"] == (message,)
    before = match.agent_observation("player_0")
    match.submit("player_1", "defect")
    assert match.agent_observation("player_0") == before
    match.submit("player_0", "cooperate")
    assert match.returns == {"player_0": 0.0, "player_1": 5.0}
    assert match.game.phase == "talk" and match.game.round == 1


def test_communication_rejects_overlong_messages():
    match = new_match(communication=True)
    match.submit("player_0", "x" * 1001)
    assert "limit is 1000" in match.last_error["player_0"]


def test_communication_has_no_vector_mode():
    with pytest.raises(ValueError, match="obs_mode='text'"):
        parlour.make_aec(ENV_ID, obs_mode="vector", communication=True)


@pytest.mark.parametrize("names", [{"player_0": "random", "player_1": "random"}, {"player_0": "tit_for_tat", "player_1": "random"}])
def test_agents_play_whole_games_with_communication_and_replay(names):
    match = new_match(rounds=5, communication=True)
    play(match, names)
    assert match.over and len(match.game.history) == 5 and len(match.game.messages) == 5
    assert parlour.replay(match.record())["returns"] == match.returns


def test_gymnasium_against_always_cooperate():
    env = gymnasium.make(ENV_ID, opponent="always_cooperate", rounds=3)
    env.reset(seed=1)
    rewards = [env.step("defect")[1] for _ in range(3)]
    assert rewards == [5.0, 5.0, 5.0]


def test_a_round_appends_to_the_histories_instead_of_copying_them():
    # Issue 37: apply replaced each player's history by a copy one round longer, so a round cost more the longer the
    # game ran (twice a short game's near 8,000 rounds). A round now appends to the same lists; a view copies them.
    match = Match(IteratedPrisonersDilemma, {"rounds": 10_000, "communication": True})
    match.reset(0)
    game = match.game
    rounds, messages = dict(game.rounds_seen), dict(game.messages_received)
    for round_ in range(3):
        for text in (f"talk {round_}", "cooperate"):
            for player in list(match.acting()):
                match.submit(player, text)
    for player in match.players:
        assert game.rounds_seen[player] is rounds[player] and len(rounds[player]) == 3
        assert game.messages_received[player] is messages[player] and len(messages[player]) == 3
    view = game.view("player_0")
    assert view["history"] == ({"you": "cooperate", "opponent": "cooperate"},) * 3 and isinstance(view["history"], tuple)
    assert view["messages_received"] == ("talk 0", "talk 1", "talk 2")
    # The views of a round share one copy; a later round leaves an earlier view as it was.
    assert game.view("player_0")["history"] is view["history"]
    for text in ("talk 3", "defect"):
        for player in list(match.acting()):
            match.submit(player, text)
    assert len(view["history"]) == 3 and len(game.view("player_0")["history"]) == 4
