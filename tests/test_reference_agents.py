"""Reference points that cannot invert (issue 22).

Every environment declares its reference agents (``Game.reference_agents``: its
strong agent(s) and ``random``). Here each declared strong agent plays
``random`` seated as the leaderboard's demo seats built-in agents
(:func:`parlour.evaluation.seating.lineups`: pairs with seats rotated, teams and
mixed teams for cooperative games, line-ups by role where seats have roles),
and the environment's own rating table (:func:`parlour.leaderboard.ratings.env_table`)
must put its whole 95% interval on the better side of ``random``'s. The
leaderboard normalises by a reference only where it measures exactly that, and
these tests show the normalisation refusing where it does not.

Reproduce the figures (rating and interval of each reference and of ``random``)::

    .venv/bin/python -c "from tests.test_reference_agents import report; report()"
"""

from __future__ import annotations

from typing import Any

import pytest

from parlour.envs.core.match import make_game
from parlour.envs.registry import all_games, game_class, list_envs
from parlour.evaluation.runner import evaluate
from parlour.evaluation.seating import lineups
from parlour.leaderboard import ratings
from parlour.leaderboard.store import outcome_details

#: The base seed of every measured run; each line-up's episodes derive their game and agent seeds from it.
SEED = 0
#: Episodes per line-up, per environment: enough for intervals that separate, as few as that takes (cheap games more).
EPISODES = {
    "parlour/ColonelBlotto-v0": 200,
    "parlour/ConnectFour-v0": 20,
    "parlour/IteratedPrisonersDilemma-v0": 20,
    "parlour/KuhnPoker-v0": 1500,
    "parlour/LeducHoldem-v0": 400,
    "parlour/LiarsDice-v0": 40,
    "parlour/Nim-v0": 40,
    "parlour/TicTacToe-v0": 40,
    "parlour/Othello-v0": 10,
    "parlour/Breakthrough-v0": 10,
    "parlour/Hex-v0": 10,
    "parlour/DotsAndBoxes-v0": 10,
    "parlour/Bargaining-v0": 40,
    "parlour/DealOrWalk-v1": 20,
    "parlour/Commons-v0": 20,
    "parlour/PriceNegotiation-v0": 20,
    "parlour/ResourceTrade-v0": 20,
    "parlour/Market-v0": 20,
    "parlour/Ultimatum-v0": 40,
    "parlour/AskOrSearch-v0": 20,
    "parlour/Search-v0": 20,
    "parlour/SQL-v0": 20,
    "parlour/SearchSelfPlay-v0": 80,
    "parlour/Code-v0": 20,
    "parlour/CodeProposerSolver-v0": 20,
    "parlour/CoderTester-v0": 30,
    "parlour/Debate-v0": 300,
    "parlour/DonorGame-v0": 10,
    "parlour/GraphCoordination-v0": 20,
    "parlour/Hanabi-v0": 40,
    "parlour/Mafia-v0": 600,
    "parlour/Codenames-v0": 80,
    "parlour/Avalon-v0": 200,
    "parlour/ConstrainedWriting-v0": 60,
    "parlour/SplitMaze-v0": 40,
    "parlour/Sokoban-v0": 20,
    "parlour/FrozenLake-v0": 20,
    "parlour/Sudoku-v0": 20,
    "parlour/Countdown-v0": 20,
    "parlour/Goofspiel-v0": 20,
    "parlour/PhantomTicTacToe-v0": 40,
    "parlour/Battleship-v0": 20,
    "parlour/Mancala-v0": 10,
    "parlour/Chess-v0": 10,
    "parlour/Minesweeper-v0": 20,
    "parlour/TowerOfHanoi-v0": 20,
    "parlour/Clobber-v0": 100,
    "parlour/Oware-v0": 10,
    "parlour/Pig-v0": 20,
    "parlour/Wordle-v0": 20,
    "parlour/TwentyFortyEight-v0": 20,
    "parlour/Y-v0": 10,
    "parlour/Household-v0": 20,
    "parlour/Services-v0": 20,
    "parlour/ServiceDesk-v0": 20,
    "parlour/Shop-v0": 20,
}


def measure(env_id: str, episodes: int, seed: int = SEED) -> dict[str, Any]:
    """The rating table of ``env_id`` from its declared references alone, seated as the demo seats them."""
    game_cls = game_class(env_id)
    players = list(make_game(game_cls, {}).players)
    results = []
    for lineup in lineups(env_id, sorted(game_cls.reference_agents)):
        run = evaluate(env_id, lineup.spec(players), episodes=episodes, seed=seed, progress=False)
        results += [(f"{lineup.label}/{record['episode']}", record["agents"], record["returns"], outcome_details(record)) for record in run.records]
    return ratings.env_table(
        results,
        len(players),
        category=game_cls.category,
        zero_sum=game_cls.zero_sum,
        players=players,
        simultaneous=game_cls.simultaneous,
        fixed_roles=game_cls.fixed_roles,
    )


def report() -> None:
    """Print every environment's measured references against ``random`` (the figures quoted in issue 22)."""
    for env_id in list_envs():
        table = measure(env_id, EPISODES[env_id])
        cells = [
            f"{row['agent']}{' as ' + row['role'] if row.get('role') else ''} {row['rating']:.4g} [{row['low']:.4g}, {row['high']:.4g}]"
            for row in table["rows"]
        ]
        print(f"{env_id} ({table['method']}, {EPISODES[env_id]} episodes per line-up, seed {SEED}): " + "; ".join(cells))


def test_every_environment_declares_random_and_a_strong_agent_it_has():
    from parlour.baselines import scripted_names

    # parlour's own environments: a test elsewhere may have registered a game of its own in this process.
    for env_id in [game.env_id() for game in all_games() if game.__module__.startswith("parlour.")]:
        references = game_class(env_id).reference_agents
        assert "random" in references and len(references) > 1, f"{env_id} declares no strong reference: {references}"
        assert set(references) <= set(scripted_names(env_id)), f"{env_id} declares agents it does not have: {references}"
        assert env_id in EPISODES, f"{env_id}: choose its episode count in EPISODES"


def test_a_shared_reward_task_is_seated_as_teams_like_a_cooperative_game():
    # AskOrSearch's asker and expert share one reward: seated only as a rotated pair, asker and random always had one mean.
    seated = {(lineup.agents, lineup.fixed) for lineup in lineups("parlour/AskOrSearch-v0", ["asker", "random"])}
    assert seated == {(("asker",), False), (("random",), False), (("asker", "random"), False)}


@pytest.mark.parametrize("env_id", list_envs())
def test_declared_strong_agents_beat_random_outside_both_intervals(env_id):
    game_cls = game_class(env_id)
    table = measure(env_id, EPISODES[env_id])
    # A table rated per role is compared role by role: a debate's judges against random as a judge.
    units = (
        {role: [row for row in table["rows"] if row["role"] == role] for role in table["roles"]}
        if table["kind"] == "roles"
        else {None: table["rows"]}
    )
    compared = 0
    for role, unit in units.items():
        rows = {row["agent"]: row for row in unit}
        anchor = rows["random"]
        for name in game_cls.reference_agents:
            # A reference that cannot hold a role (the judge-only verifier as a debater) is measured where it can.
            if name == "random" or name not in rows:
                continue
            row = rows[name]
            figures = (
                f"{name} {row['rating']:.4g} [{row['low']:.4g}, {row['high']:.4g}] vs random {anchor['rating']:.4g} "
                f"[{anchor['low']:.4g}, {anchor['high']:.4g}]" + (f" as {role}" if role else "")
            )
            if game_cls.higher_is_better:
                assert row["low"] > anchor["high"], figures
            else:
                assert row["high"] < anchor["low"], figures
            compared += 1
    assert compared, f"{env_id}: no declared reference played"


def _table(*rows: tuple[str, float, float]) -> dict[str, Any]:
    """A rating table with (agent, rating, half-width of its interval) rows."""
    return {"rows": [{"agent": agent, "rating": rating, "low": rating - half, "high": rating + half} for agent, rating, half in rows]}


def test_a_reference_below_random_is_not_a_reference():
    # The DonorGame table of issue 22: random (272.8) above the "best" built-in (253.4), never_give far below;
    # dividing by (253.4 - 272.8) made never_give the best agent on the board.
    donor = _table(("random", 272.8, 15.0), ("discriminator", 253.4, 15.0), ("never_give", 120.0, 10.0))
    scale = ratings.normalised(donor, ("discriminator", "random"))
    assert not scale["normalised"] and scale["scores"] is None
    assert "measured better than random" in scale["reason"] and "discriminator 253.4" in scale["reason"]
    board = ratings.overall({"parlour/DonorGame-v0": scale})
    assert board["rows"] == [] and board["unnormalised"] == ["parlour/DonorGame-v0"]
    assert board["reasons"]["parlour/DonorGame-v0"] == scale["reason"]


def test_a_reference_whose_interval_meets_randoms_is_not_a_reference():
    touching = _table(("random", 0.0, 0.1), ("heuristic", 0.15, 0.1))
    assert not ratings.normalised(touching, ("heuristic", "random"))["normalised"]


def test_the_strongest_reference_measured_above_random_is_the_hundred():
    table = _table(("random", 0.0, 0.1), ("weak", -1.0, 0.1), ("strong", 2.0, 0.2), ("llm", 1.0, 0.2), ("other", 4.0, 0.1))
    scale = ratings.normalised(table, ("weak", "strong", "random"))
    assert scale["normalised"] and scale["reference"] == "strong"
    assert scale["scores"]["strong"]["score"] == 100.0 and scale["scores"]["weak"]["score"] == pytest.approx(-50.0)
    assert scale["scores"]["llm"] == pytest.approx({"score": 50.0, "low": 40.0, "high": 60.0})


def test_a_lower_is_better_score_is_normalised_the_right_way_round():
    # Fewer moves to solve: the reference's 10 moves is 100, random's 50 is 0, and an agent at 30 is halfway.
    table = _table(("random", 50.0, 2.0), ("solver", 10.0, 1.0), ("llm", 30.0, 4.0))
    scale = ratings.normalised(table, ("solver", "random"), higher_is_better=False)
    assert scale["normalised"] and scale["scores"]["solver"]["score"] == 100.0
    assert scale["scores"]["llm"] == pytest.approx({"score": 50.0, "low": 40.0, "high": 60.0})
    assert not ratings.normalised(table, ("solver", "random"))["normalised"]


def test_no_declared_reference_refuses_to_normalise():
    table = _table(("random", 0.0, 0.1), ("heuristic", 1.0, 0.1))
    assert ratings.normalised(table, ())["reason"] == "the environment declares no strong reference agent"
    assert ratings.normalised(table, ("heuristic",), anchor="nobody")["reason"] == "nobody has not played here (or too little to be ranked)"
