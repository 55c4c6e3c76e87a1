"""The demo: line-ups by category, every run a challenge, and each game's page ranking the stronger agent above random."""

from __future__ import annotations

import json

import numpy as np
import pytest

from parlour.baselines import scripted_names
from parlour.cli import main
from parlour.envs.registry import all_games, game_class
from parlour.evaluation.seating import Lineup, episodes_per_lineup, lineups
from parlour.leaderboard.api import Leaderboard

#: The first built-in competitive games, with the episodes each gets (minimax is slow; poker needs hundreds of hands).
CHEAP = [
    "parlour/KuhnPoker-v0",
    "parlour/LeducHoldem-v0",
    "parlour/ColonelBlotto-v0",
    "parlour/IteratedPrisonersDilemma-v0",
    "parlour/LiarsDice-v0",
    "parlour/Nim-v0",
]
SLOW = ["parlour/TicTacToe-v0", "parlour/ConnectFour-v0"]


def head_to_head(results: list, strong: str, weak: str) -> float:
    """How much more ``strong`` earns than ``weak`` per episode where they meet (mean over those episodes)."""
    gaps = []
    for _, seating, returns, _ in results:
        mine = [returns[seat] for seat, name in seating.items() if name == strong]
        theirs = [returns[seat] for seat, name in seating.items() if name == weak]
        if mine and theirs:
            gaps.append(np.mean(mine) - np.mean(theirs))
    return float(np.mean(gaps)) if gaps else 0.0


def run_demo(out, envs: list[str], *options: str) -> Leaderboard:
    """Run ``parlour demo`` without serving and without a time budget (every line-up plays what its figure wants); the
    leaderboard it built. The budget's cuts are tests/test_demo_first_run.py's."""
    args = ["demo", "--no-serve", "--budget", "0", "--out", str(out), *options]
    for env_id in envs:
        args += ["--env", env_id]
    assert main(args) == 0
    return Leaderboard(f"sqlite:///{out}/leaderboard.db")


def test_the_built_in_games_rank_the_agent_stronger_in_expected_payoff_above_random(tmp_path, capsys):
    # The first games, rated on expected payoff head to head; every game since is held to the same by
    # test_after_the_demo_every_strong_built_in_ranks_above_random_everywhere below.
    assert set(CHEAP + SLOW) <= {game.env_id() for game in all_games() if game.__module__.startswith("parlour.envs.games")}
    boards = [
        run_demo(tmp_path / "cheap", CHEAP, "--episodes", "10", "--game-episodes", "600"),
        run_demo(tmp_path / "slow", SLOW, "--episodes", "8", "--game-episodes", "16"),
    ]
    checked = 0
    for board in boards:
        assert board.store.episode_count(counted=False) == 0  # every demo run was a challenge
        for env_id in board.store.env_ids():
            table = board.ratings(env_id)
            rating = {row["agent"]: row["rating"] for row in table["rows"]}
            results = board.store.results(env_id)
            # Bradley-Terry weighs every pairing, so an agent that beats random but loses to everyone else may rate
            # below it: the declared strong agents are the ones held to ranking above random.
            for name in rating:
                if name in game_class(env_id).reference_agents and name != "random" and head_to_head(results, name, "random") > 0:
                    assert rating[name] > rating["random"], (env_id, name, table["method"])
                    checked += 1
    # Kuhn's nash wins fewer than half its hands but more chips: counting hands would rank it below random.
    assert checked >= 8
    kuhn = boards[0].ratings("parlour/KuhnPoker-v0")
    ranked = [row["agent"] for row in kuhn["rows"]]
    # The shipped ppo policy, where stable-baselines3 is installed, may rank anywhere; nash must top the scripted agents.
    assert kuhn["method"] == "payoff" and [name for name in ranked if name != "ppo"][0] == "nash"
    out = capsys.readouterr().out
    assert "rating: payoff (600 counted episodes)" in out and "Overall leaderboard" in out


def test_lineups_follow_the_category_seats_and_roles():
    assert lineups("parlour/Search-v0") == [Lineup((name,), False, name) for name in ("no_search", "oracle", "random")]
    hanabi = lineups("parlour/Hanabi-v0")
    assert Lineup(("convention",), False, "convention-team") in hanabi and Lineup(("random",), False, "random-team") in hanabi
    assert Lineup(("convention", "random"), False, "convention-with-random") in hanabi
    debate = lineups("parlour/Debate-v0")
    assert debate and all(run.fixed and len(run.agents) == 3 for run in debate)
    judges = {run.agents[2] for run in debate}
    debaters = {run.agents[0] for run in debate} | {run.agents[1] for run in debate}
    assert {"verifier", "credulous"} <= judges and not judges & {"honest", "dishonest"}
    assert {"honest", "dishonest"} <= debaters and not debaters & {"verifier", "credulous"}
    # Every pair of scripted agents once, unrotated by the demo (the runner rotates seats); ppo where stable-baselines3 is installed.
    expected = (
        [("minimax", "random")]
        if "ppo" not in scripted_names("parlour/TicTacToe-v0")
        else [("minimax", "ppo"), ("minimax", "random"), ("ppo", "random")]
    )
    assert lineups("parlour/TicTacToe-v0") == [Lineup(pair, False, "-vs-".join(pair)) for pair in expected]
    assert episodes_per_lineup("parlour/KuhnPoker-v0", 1, 50, 600) == 600
    assert episodes_per_lineup("parlour/Bargaining-v0", 15, 50, 600) == 50


def test_role_lineups_are_played_for_challenges_and_verified(tmp_path):
    board = run_demo(tmp_path / "debate", ["parlour/Debate-v0"], "--episodes", "2")
    manifest = json.loads((tmp_path / "debate" / "demo.json").read_text())
    assert len(manifest["submitted"]) == len(lineups("parlour/Debate-v0"))
    table = board.ratings("parlour/Debate-v0")
    assert table["method"] == "roles" and table["roles"] == ["debater", "judge"]
    assert board.store.episode_count(counted=False) == 0


@pytest.mark.parametrize("env_id", ["parlour/Search-v0", "parlour/Hanabi-v0"])
def test_single_agent_and_cooperative_demos_rate_each_agent(tmp_path, env_id):
    board = run_demo(tmp_path / "demo", [env_id], "--episodes", "3")
    table = board.ratings(env_id)
    assert table["method"] == ("score" if env_id.endswith("Search-v0") else "team")
    assert {row["agent"] for row in table["rows"]} == {name for run in lineups(env_id) for name in run.agents}


def misranked(board: Leaderboard) -> list[str]:
    """Where a built-in strong agent is not ranked above ``random``: each environment's declared references in its own
    table, and each environment's 100 (its strongest measured reference) in the overall and category tables."""
    from parlour.envs.registry import game_class

    problems = []
    for env_id in board.store.env_ids():
        # A table rated per role ranks each role apart: a reference is compared with random in each role it held. A
        # reference must be ranked; random may be provisional in a role (ServiceDesk's random agent meets one other
        # agent, the customer, since random as the customer is itself), and then every ranked agent is above it.
        units: dict[str | None, dict[str, int | None]] = {}
        for row in board.ratings(env_id)["rows"]:
            units.setdefault(row.get("role"), {})[row["agent"]] = row["rank"]
        for role, rank in units.items():
            for name in game_class(env_id).reference_agents:
                ranked_above = rank.get(name) and (not rank.get("random") or rank[name] < rank["random"])
                if name != "random" and name in rank and not ranked_above:
                    problems.append(f"{env_id}{' as ' + role if role else ''}: {name} rank {rank[name]}, random rank {rank.get('random')}")
    overall = board.ratings()
    for title, table in [("overall", overall), *overall["categories"].items()]:
        order = [row["agent"] for row in table["rows"]]
        for name in table["reference_agents"]:
            if name not in order or order.index(name) > order.index("random"):
                problems.append(f"{title}: {name} below random in {order}")
    return problems


# Every environment's demo at 20 episodes a line-up and 200 a game: 356 s alone on 2 cores, about 500 s beside other
# work, so the suite's 600 s limit would fail it on a busy machine; the limit is for hangs, this test is long by design.
@pytest.mark.phase_timeout(1800)
def test_after_the_demo_every_strong_built_in_ranks_above_random_everywhere(tmp_path):
    # Issue 22: the overall table ranked only random (no built-in reached the 50% coverage rule), Games ranked ppo with
    # minimax and nash unranked, Search ranked no_search with the perfect oracle unranked.
    board = run_demo(tmp_path / "all", [], "--episodes", "20", "--game-episodes", "200")
    assert misranked(board) == []
    overall = board.ratings()
    assert len(overall["rows"]) > 20 and overall["rows"][-1]["agent"] != "random" and overall["reference"]["score"] == pytest.approx(100.0)
    for category in ("game", "search", "cooperation"):
        table = overall["categories"][category]
        assert table["references"] and table["rows"][0]["agent"] != "random"
