"""Mafia: the deal, night actions and their private channels, discussion, votes and the tie rule, elimination on
every face, the win conditions, team rewards, the reading-others accuracy, and the baselines' village win rates."""

from __future__ import annotations

import numpy as np
import pytest

import parlour
from parlour.baselines.mafia import TeamMix
from parlour.envs.core.match import Match
from parlour.envs.social.mafia import Mafia

ENV_ID = "parlour/Mafia-v0"

#: Seven players: the mafia in seats 1 and 4, the detective in 2, the doctor in 5.
SEVEN = ["villager", "mafia", "detective", "villager", "mafia", "doctor", "villager"]


def dealt(roles: list[str], **options) -> Match:
    """A started match whose roles are replaced by ``roles`` (one per seat)."""
    options.setdefault("num_players", len(roles))
    options.setdefault("num_mafia", roles.count("mafia"))
    match = Match(Mafia, options)
    match.reset(0)
    match.game.roles = dict(zip(match.game.players, roles))
    match._refresh()
    return match


def act(match: Match, moves: dict[str, str]) -> None:
    """Submit one action per acting player (in seat order); each must be valid."""
    assert sorted(moves) == sorted(match.acting()), (sorted(moves), match.acting())
    for player in list(match.acting()):
        match.submit(player, moves[player])
        assert match.steps[-1]["error"] is None, match.steps[-1]


def night(match: Match, kills: dict[str, str], check: str | None = None, protect: str | None = None) -> None:
    """The night's moves: the mafia's kills and the detective's and doctor's targets."""
    roles = match.game.roles
    moves = {p: f"kill {t}" for p, t in kills.items()}
    for player in match.acting():
        if roles[player] == "detective":
            moves[player] = f"check {check}"
        elif roles[player] == "doctor":
            moves[player] = f"protect {protect}"
    act(match, moves)


def talk(match: Match, rounds: int = 2) -> None:
    """Everyone passes through the discussion."""
    for _ in range(rounds * len(match.game.alive)):
        act(match, {match.acting()[0]: "[pass]"})


def vote(match: Match, votes: dict[str, str]) -> None:
    """The day's votes, given as voter -> target (every living player)."""
    act(match, {p: f"vote {t}" for p, t in votes.items()})


def to_night(match: Match) -> None:
    """Through the quiet first night (the detective checks the next seat), if it is on, and through the day: everyone
    passes, then votes for the next living seat (a tie: nobody is out)."""
    game = match.game
    if game.quiet:
        (detective,) = match.acting()
        act(match, {detective: f"check {game.players[(game.players.index(detective) + 1) % len(game.players)]}"})
    talk(match, match.game.discussion_rounds)
    alive = match.game.alive
    vote(match, {p: alive[(i + 1) % len(alive)] for i, p in enumerate(alive)})
    assert match.game.phase == "night"


# ------------------------------------------------------------------------ the deal


@pytest.mark.parametrize("n,mafia", [(5, 1), (6, 1), (7, 2), (8, 2), (9, 2)])
def test_roles_are_dealt_at_random_and_the_mafia_know_each_other(n, mafia):
    deals = set()
    for seed in range(8):
        match = Match(Mafia, {"num_players": n})
        match.reset(seed)
        roles = match.game.roles
        assert sorted(roles.values()) == sorted(["mafia"] * mafia + ["detective", "doctor"] + ["villager"] * (n - mafia - 2))
        members = [p for p, r in roles.items() if r == "mafia"]
        for player in match.players:
            text = match.observation_text(player)
            assert f"Your role: {roles[player]}." in text
            told = f"The mafia are {', '.join(members)}." in text
            assert told == (roles[player] == "mafia")
            view = match.game.view(player)
            assert view["mafia"] == (members if roles[player] == "mafia" else None)
            assert "roles" not in view
        deals.add(tuple(members))
    assert len(deals) > 3


@pytest.mark.parametrize(
    "options,message",
    [
        ({"num_players": 4}, "num_players"),
        ({"num_players": 10}, "num_players"),
        ({"num_players": 5, "num_mafia": 3}, "num_mafia"),
        ({"num_mafia": 0}, "num_mafia"),
        ({"detective": "yes"}, "detective must be True or False"),
        ({"discussion_rounds": 0}, "discussion_rounds"),
        ({"max_days": 21}, "max_days"),
    ],
)
def test_bad_options_say_what_to_do(options, message):
    with pytest.raises(ValueError, match=message):
        Mafia(**options)


def test_without_detective_and_doctor_only_the_mafia_act_at_night():
    match = Match(Mafia, {"num_players": 5, "detective": False, "doctor": False})
    match.reset(1)
    assert sorted(match.game.roles.values()) == ["mafia"] + ["villager"] * 4
    assert "no detective and no doctor" in match.observation_text("player_0")
    to_night(match)
    assert match.acting() == [p for p, r in match.game.roles.items() if r == "mafia"]


# ------------------------------------------------------------------------- night


def test_the_game_opens_with_a_quiet_night_then_everyone_speaks_before_anyone_is_out():
    match = dealt(SEVEN)
    game = match.game
    assert game.phase == "night" and game.quiet and match.acting() == ["player_2"]
    assert "only the detective acts" in match.observation_text("player_0")
    act(match, {"player_2": "check player_4"})
    assert "player_4 IS a member of the mafia" in match.observation_text("player_2")
    assert "first night was quiet" in match.observation_text("player_0") and not match.eliminated
    assert game.phase == "discussion" and game.day == 1 and match.acting() == ["player_0"]
    spoken = []
    while game.phase == "discussion":
        spoken.append(match.acting()[0])
        act(match, {spoken[-1]: "[pass]"})
    assert set(spoken) == set(match.players) and not match.eliminated


def test_the_night_kill_the_check_and_the_save_reach_only_their_players():
    match = dealt(SEVEN)
    to_night(match)
    assert match.acting() == ["player_1", "player_2", "player_4", "player_5"]
    act(
        match,
        {"player_1": "kill player_6 [say] the quiet one", "player_4": "kill player_6", "player_2": "check player_4", "player_5": "protect player_5"},
    )
    assert match.eliminated == {"player_6": "player_6 was killed"}
    assert "player_6 was killed in the night. They were a villager." in match.observation_text("player_0")
    assert "IS a member of the mafia" in match.observation_text("player_2")
    assert "player_4 IS" not in match.observation_text("player_0") + match.observation_text("player_1")
    mafia_chat = 'player_1 chooses to kill player_6.\n\nplayer_1: "the quiet one"'
    assert mafia_chat in match.observation_text("player_4")
    assert all(mafia_chat not in match.observation_text(p) for p in ("player_0", "player_2", "player_3", "player_5"))
    assert match.game.phase == "discussion" and match.acting() == ["player_0"]
    assert match.game.view("player_2")["checks"][-1] == {"night": 2, "target": "player_4", "mafia": True}
    assert "checks" not in match.game.view("player_3")


def test_a_split_mafia_follows_the_lowest_seated_member_and_the_doctor_saves():
    match = dealt(SEVEN)
    to_night(match)
    night(match, {"player_1": "player_3", "player_4": "player_0"}, check="player_0", protect="player_3")
    # A tie: player_1 (the lower seat) chose player_3, whom the doctor protected.
    assert match.eliminated == {}
    assert "nobody died in the night" in match.observation_text("player_0")
    assert "The mafia's victim tonight: player_3." in match.observation_text("player_4")


def test_night_targets_follow_the_roles():
    match = dealt(SEVEN)
    to_night(match)
    game = match.game
    assert game.night_targets("player_1") == ["player_0", "player_2", "player_3", "player_5", "player_6"]
    with pytest.raises(parlour.InvalidMove, match="they are mafia"):
        game.parse("player_1", "kill player_4")
    with pytest.raises(parlour.InvalidMove, match="that is you"):
        game.parse("player_2", "check player_2")
    with pytest.raises(parlour.InvalidMove, match="No protect found"):
        game.parse("player_5", "kill player_1")
    assert game.parse("player_5", "I will save player_5") == {"target": "player_5"}
    assert game.parse("player_2", "investigate player_1, no: check player_3") == {"target": "player_3"}
    night(match, {"player_1": "player_0", "player_4": "player_0"}, check="player_1", protect="player_3")
    talk(match)
    vote(
        match,
        {
            "player_1": "player_2",
            "player_2": "player_3",
            "player_3": "player_5",
            "player_4": "player_6",
            "player_5": "player_1",
            "player_6": "player_4",
        },
    )
    # Night 2: the doctor may not protect player_3 two nights in a row, nor a dead player.
    with pytest.raises(parlour.InvalidMove, match="protected them last night"):
        game.parse("player_5", "protect player_3")
    with pytest.raises(parlour.InvalidMove, match="they are out"):
        game.parse("player_5", "protect player_0")


# --------------------------------------------------------------------------- day


def test_discussion_goes_round_the_living_in_seat_order():
    match = dealt(SEVEN, discussion_rounds=1)
    to_night(match)
    night(match, {"player_1": "player_3", "player_4": "player_3"}, check="player_0", protect="player_5")
    speakers = []
    for text in ("[say] hello", "[pass]", "I think [say] not me", "[say] a", "[pass]", "[say] b"):
        speakers.append(match.acting()[0])
        act(match, {speakers[-1]: text})
    assert speakers == ["player_0", "player_1", "player_2", "player_4", "player_5", "player_6"]
    text = match.observation_text("player_0")
    assert 'player_0: "hello"' in text and "player_1 passes." in text and 'player_2: "not me"' in text
    assert match.game.phase == "vote" and match.acting() == ["player_0", "player_1", "player_2", "player_4", "player_5", "player_6"]
    with pytest.raises(parlour.InvalidMove, match="No vote found"):
        match.game.parse("player_0", "[say] hm")


def test_the_most_voted_is_out_a_tie_puts_nobody_out_and_suspects_stay_private():
    match = dealt(SEVEN)
    to_night(match)
    night(match, {"player_1": "player_6", "player_4": "player_6"}, check="player_1", protect="player_0")
    talk(match)
    act(
        match,
        {
            "player_0": "vote player_1 suspect player_4",
            "player_1": "vote player_0",
            "player_2": "vote player_1",
            "player_3": "vote player_4",
            "player_4": "vote player_0",
            "player_5": "vote player_4",
        },
    )
    # player_0 and player_1 have two votes each, player_4 two: a tie, nobody out.
    assert match.eliminated == {"player_6": "player_6 was killed"}
    text = match.observation_text("player_3")
    assert "player_0 -> player_1" in text and "nobody is voted out" in text and "suspect" not in text.split("Votes of day 2")[1]
    assert match.game.phase == "night" and match.game.night == 3
    suspects = {s["player"]: s["suspect"] for s in match.game.suspects if s["day"] == 2}
    assert suspects == {"player_0": "player_4", "player_2": "player_1", "player_3": "player_4", "player_5": "player_4"}
    night(match, {"player_1": "player_3", "player_4": "player_3"}, check="player_4", protect="player_2")
    talk(match)
    vote(match, {"player_0": "player_1", "player_1": "player_0", "player_2": "player_1", "player_4": "player_0", "player_5": "player_1"})
    assert "player_1" in match.eliminated and "They were a member of the mafia" in match.observation_text("player_0")


def test_an_eliminated_player_is_terminated_at_once_on_the_aec_face():
    env = parlour.make_aec(ENV_ID)
    env.reset(seed=0)
    env.match.game.roles = dict(zip(env.possible_agents, SEVEN))
    env.match._refresh()
    env.agent_selection = env.match.acting()[0]
    assert env.agent_selection == "player_2"
    env.step("check player_0")
    for _ in range(14):
        env.step("[pass]")
    for voter in env.possible_agents:
        env.step(f"vote {env.possible_agents[(int(voter[-1]) + 1) % 7]}")
    assert env.match.game.phase == "night" and not any(env.terminations.values())
    moves = {"player_1": "kill player_6", "player_2": "check player_0", "player_4": "kill player_6", "player_5": "protect player_0"}
    for _ in range(4):
        env.step(moves[env.agent_selection])
    assert env.terminations["player_6"] and not env.terminations["player_0"]
    assert env.agent_selection == "player_6"
    _, _, terminated, _, info = env.last()
    assert terminated and info["eliminated"] == "player_6 was killed"
    env.step(None)
    assert "player_6" not in env.agents and env.agent_selection == "player_0"


def test_a_gymnasium_learner_always_moves_before_it_can_be_out():
    import gymnasium

    for seed in range(30):
        env = gymnasium.make(ENV_ID, opponent="reasoner").unwrapped
        _, info = env.reset(seed=seed)
        assert info["acting"] and "eliminated" not in info


# ---------------------------------------------------------------- ends and rewards


def test_the_village_wins_when_the_last_mafia_member_is_out_and_the_dead_share_the_reward():
    match = dealt(["mafia", "detective", "doctor", "villager", "villager"])
    to_night(match)  # day 1: player_4 names player_0, the other villagers name villagers
    night(match, {"player_0": "player_4"}, check="player_0", protect="player_2")
    talk(match)
    vote(match, {p: "player_0" for p in ("player_1", "player_2", "player_3")} | {"player_0": "player_1"})
    assert match.over and match.outcome.winning_team == "village"
    assert match.outcome.teams == {"village": ["player_1", "player_2", "player_3", "player_4"], "mafia": ["player_0"]}
    assert match.returns == {"player_0": -1.0, "player_1": 1.0, "player_2": 1.0, "player_3": 1.0, "player_4": 1.0}
    assert sorted(match.outcome.winners) == ["player_1", "player_2", "player_3", "player_4"]
    details = match.outcome.details
    # Day 1: one right suspect in four (chance 1/4 each); day 2: three in three (chance 1/3 each).
    assert details["suspect_accuracy"] == pytest.approx(4 / 7) and details["suspect_chance"] == pytest.approx(2 / 7)
    assert details["deaths"] == [
        {"player": "player_4", "role": "villager", "day": 2, "how": "killed"},
        {"player": "player_0", "role": "mafia", "day": 2, "how": "voted out"},
    ]


def test_the_mafia_win_at_parity():
    match = dealt(["mafia", "detective", "doctor", "villager", "villager"])
    to_night(match)
    night(match, {"player_0": "player_4"}, check="player_3", protect="player_2")
    talk(match)
    vote(match, {"player_0": "player_1", "player_1": "player_3", "player_2": "player_3", "player_3": "player_1"})
    assert not match.over  # a tie: nobody out
    night(match, {"player_0": "player_1"}, check="player_2", protect="player_3")
    talk(match)
    vote(match, {"player_0": "player_3", "player_2": "player_3", "player_3": "player_0"})
    # player_3 is out: one mafia member against one villager.
    assert match.over and match.outcome.winning_team == "mafia"
    assert match.returns == {"player_0": 1.0, "player_1": -1.0, "player_2": -1.0, "player_3": -1.0, "player_4": -1.0}
    details = match.outcome.details
    # Right suspects: player_4 on day 1, player_3 on day 3; nine named in all.
    assert details["suspect_accuracy"] == pytest.approx(2 / 9) and details["mafia_left"] == 1


def test_after_the_last_day_the_game_is_a_draw():
    match = dealt(["mafia", "detective", "doctor", "villager", "villager"], max_days=1)
    act(match, {"player_1": "check player_0"})
    talk(match)
    vote(match, {"player_0": "player_1", "player_1": "player_2", "player_2": "player_3", "player_3": "player_4", "player_4": "player_0"})
    assert match.over and match.outcome.winning_team is None and match.outcome.winners == []
    assert set(match.returns.values()) == {0.0} and "within 1 days" in match.outcome.reason


def test_a_forfeit_loses_the_game_for_the_offenders_team():
    match = dealt(SEVEN, error_allowance=0)
    match.submit("player_2", "I refuse")
    assert match.over and match.outcome.winning_team == "mafia"
    assert match.returns["player_2"] == -1.0 and match.returns["player_1"] == 1.0 and match.returns["player_0"] == -1.0


# --------------------------------------------------------------------------- baselines

#: Village win rate and the village's reading accuracy (share of its suspects who were mafia) against chance,
#: per line-up (village agent / mafia agent), over parlour.evaluate's first 200 episodes with seed 0 and the
#: default 7 players, as measured; the tests assert them with margins.
MEASURED = {
    ("reasoner", "reasoner"): (0.600, 0.625, 0.314),
    ("reasoner", "random"): (0.945, 0.757, 0.333),
    ("random", "reasoner"): (0.060, 0.371, 0.382),
    ("random", "random"): (0.130, 0.370, 0.374),
}


def _line_up(village: str, mafia: str) -> TeamMix:
    """One agent for every seat: ``village`` plays the village, ``mafia`` the mafia."""
    return TeamMix(parlour.make_agent(village, env_id=ENV_ID), parlour.make_agent(mafia, env_id=ENV_ID))


@pytest.mark.parametrize("village,mafia", list(MEASURED))
def test_village_win_rate_per_line_up(village, mafia):
    results = parlour.evaluate(ENV_ID, _line_up(village, mafia), episodes=200, seed=0, progress=False)
    outcomes = [record["outcome"] for record in results.records]
    win_rate = np.mean([o["winning_team"] == "village" for o in outcomes])
    accuracy = np.mean([o["details"]["suspect_accuracy"] for o in outcomes if o["details"]["suspect_accuracy"] is not None])
    chance = np.mean([o["details"]["suspect_chance"] for o in outcomes if o["details"]["suspect_chance"] is not None])
    measured_win, measured_accuracy, measured_chance = MEASURED[(village, mafia)]
    assert abs(win_rate - measured_win) <= 0.05
    assert abs(accuracy - measured_accuracy) <= 0.03 and abs(chance - measured_chance) <= 0.03
    assert all(record["steps"][i]["error"] is None for record in results.records for i in range(len(record["steps"])))


def test_reasoning_villagers_read_the_mafia_better_than_chance_and_beat_random_ones():
    rates = {}
    for village in ("reasoner", "random"):
        results = parlour.evaluate(ENV_ID, _line_up(village, "reasoner"), episodes=100, seed=1, progress=False)
        outcomes = [record["outcome"] for record in results.records]
        rates[village] = np.mean([o["winning_team"] == "village" for o in outcomes])
        if village == "reasoner":
            accuracy = np.mean([o["details"]["suspect_accuracy"] for o in outcomes])
            chance = np.mean([o["details"]["suspect_chance"] for o in outcomes])
            assert accuracy > chance + 0.15
    assert rates["reasoner"] > rates["random"] + 0.4


def test_no_seat_is_the_mafias_standing_first_victim():
    results = parlour.evaluate(ENV_ID, "reasoner", episodes=60, seed=0, progress=False)
    first = [record["outcome"]["details"]["deaths"][0]["player"] for record in results.records if record["outcome"]["details"]["deaths"]]
    assert max(first.count(p) for p in set(first)) < len(first) / 3


def test_the_lying_mafia_counter_claims_when_a_detective_accuses_them():
    results = parlour.evaluate(ENV_ID, "reasoner", episodes=40, seed=0, progress=False)
    lies = 0
    for record in results.records:
        roles = record["outcome"]["details"]["roles"]
        lies += sum(1 for step in record["steps"] if roles[step["player"]] == "mafia" and "I am the detective" in (step["action"] or ""))
    assert lies > 0
