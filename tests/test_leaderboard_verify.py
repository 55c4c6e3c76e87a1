"""Verification of submissions: tampered bundles are rejected whole, with the first bad episode and the reason."""

from __future__ import annotations

import copy
import functools

import pytest

import parlour
from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.runner import evaluate
from parlour.leaderboard.verify import Rejected, as_bundle

TICTACTOE = "parlour/TicTacToe-v0"
KUHN = "parlour/KuhnPoker-v0"
NASTY = "Robert'); DROP TABLE agents;-- <script>alert(1)</script> & \"quotes\""


class Named:
    """A random agent under another name."""

    def __init__(self, name: str):
        self.name = name
        self.inner = parlour.make_agent("random", env_id=TICTACTOE)

    def reset(self, seed=None):
        """Reseed the random play."""
        self.inner.reset(seed=seed)

    def act(self, observation):
        """A random legal move."""
        return self.inner.act(observation)


@functools.cache
def _bundle(env_id: str, agents: tuple, episodes: int, seed: int = 0) -> dict:
    return as_bundle(evaluate(env_id, list(agents), episodes=episodes, seed=seed, progress=False))


def bundle(env_id: str = TICTACTOE, agents: tuple = ("minimax", "random"), episodes: int = 12, seed: int = 0) -> dict:
    """A fresh copy of an honest bundle (safe to tamper with)."""
    return copy.deepcopy(_bundle(env_id, agents, episodes, seed))


@pytest.fixture
def board(tmp_path):
    """An empty SQLite leaderboard with the submitter alice."""
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db", bootstrap=50)
    board.add_submitter("alice")
    yield board
    board.store.close()


def rejected(board: Leaderboard, bundle: dict, match: str, episode: int | None = 0) -> Rejected:
    """Submit ``bundle``, check it is refused for ``match`` at ``episode``, and that nothing was stored."""
    with pytest.raises(Rejected, match=match) as caught:
        board.submit(bundle, "alice")
    assert caught.value.episode == episode
    assert board.store.episode_count() == 0 and board.store.submission_count() == 0
    return caught.value


def test_honest_bundle_is_accepted_and_duplicates_count_once(board):
    honest = bundle()
    honest["episodes"].append(copy.deepcopy(honest["episodes"][3]))
    result = board.submit(honest, "alice")
    assert result["new_episodes"] == 12 and result["duplicates"] == 1
    assert board.submit(bundle(), "alice") == {
        "submission": None, "env_id": TICTACTOE, "episodes": 12, "new_episodes": 0, "duplicates": 12,
    }
    assert board.store.episode_count(TICTACTOE) == 12


def test_changed_reward_is_rejected(board):
    tampered = bundle()
    record = tampered["episodes"][0]
    last = record["steps"][-1]
    last["rewards"] = {seat: value + 0.5 for seat, value in last["rewards"].items()} or {"player_0": 0.5}
    rejected(board, tampered, "does not reproduce: step .*rewards")


def test_changed_action_is_rejected(board):
    tampered = bundle()
    step = tampered["episodes"][0]["steps"][0]
    other = next(cell for cell in ("a1", "b2", "c3") if cell != step["action"])
    step["action"] = step["move"] = other
    rejected(board, tampered, "does not reproduce")


def test_changed_seed_is_rejected(board):
    tampered = bundle(KUHN, ("random", "random"), episodes=4)
    record = tampered["episodes"][0]
    # Kuhn poker deals from the seed: another deal shows other cards at the end, so the record stops reproducing.
    for delta in range(1, 30):
        candidate = dict(record, seed=record["seed"] + delta)
        try:
            parlour.replay(candidate)
        except parlour.ReplayMismatch:
            record["seed"] = candidate["seed"]
            break
    else:
        pytest.fail("no nearby seed deals differently")
    rejected(board, tampered, "does not reproduce")


def test_episode_from_another_environment_version_is_rejected(board):
    tampered = bundle()
    tampered["episodes"][2]["env_version"] = 7
    rejected(board, tampered, "version 7, the server runs version 0", episode=2)
    whole = bundle()
    whole["summary"]["env_version"] = 7
    rejected(board, whole, "bundle is for .* version 7", episode=None)


def test_claimed_win_is_rejected(board):
    tampered = bundle()
    record = next(r for r in tampered["episodes"] if r["outcome"]["winner"] is not None)
    index = tampered["episodes"].index(record)
    loser = next(seat for seat in record["players"] if seat != record["outcome"]["winner"])
    # A consistent lie: winner, scores, returns and the last step's rewards all turned around.
    record["outcome"]["winner"] = loser
    record["returns"] = {seat: -value for seat, value in record["returns"].items()}
    record["outcome"]["scores"] = dict(record["returns"])
    record["steps"][-1]["rewards"] = {seat: -value for seat, value in record["steps"][-1]["rewards"].items()}
    rejected(board, tampered, "does not reproduce", episode=index)


def test_one_bad_episode_among_many_rejects_the_whole_bundle(board):
    tampered = bundle(episodes=40)
    tampered["episodes"][29]["outcome"]["reason"] = "resigned"
    error = rejected(board, tampered, "outcome reason", episode=29)
    assert error.to_dict()["episode"] == 29 and "episode 29" in error.to_dict()["detail"]


def test_unfinished_episode_is_rejected(board):
    tampered = bundle()
    record = tampered["episodes"][1]
    record["steps"] = record["steps"][:2]
    record["done"], record["outcome"] = False, None
    record["returns"] = {seat: 0.0 for seat in record["players"]}
    rejected(board, tampered, "unfinished", episode=1)


def test_agents_must_match_the_declared_ones(board):
    undeclared = bundle()
    undeclared["episodes"][4]["agents"]["player_0"] = "impostor"
    rejected(board, undeclared, "'impostor' is not among the bundle's declared agents", episode=4)
    unused = bundle()
    unused["summary"]["agents"].append("ghost")
    rejected(board, unused, "ghost.*play in no episode", episode=None)
    control = bundle()
    control["summary"]["agents"].append("bell\x07")
    rejected(board, control, "control", episode=None)


def test_episode_of_another_environment_is_rejected(board):
    mixed = bundle()
    mixed["episodes"][5] = bundle(KUHN, ("random", "random"), episodes=1)["episodes"][0]
    rejected(board, mixed, "episode is from 'parlour/KuhnPoker-v0'", episode=5)


@pytest.mark.parametrize("broken", [{"summary": [], "episodes": []}, {"summary": {}}, {"summary": {"env_id": "parlour/Nope-v0"}, "episodes": [{}]}, {"summary": {"env_id": TICTACTOE, "env_version": 0, "agents": ["a"]}, "episodes": []}])
def test_malformed_bundles_are_rejected(board, broken):
    rejected(board, broken, ".", episode=None)


def test_names_with_sql_and_html_metacharacters_are_stored_literally(board):
    board.submit(bundle(agents=(Named(NASTY), "random"), episodes=6), "alice")
    assert board.store.agent(NASTY)["episodes"] == {TICTACTOE: 6}
    assert NASTY in {row["agent"] for row in board.ratings(TICTACTOE)["rows"]}


def test_bundle_directories_are_accepted(board, tmp_path):
    results = evaluate(TICTACTOE, ["minimax", "random"], episodes=4, seed=3, progress=False)
    results.save(tmp_path / "runs" / "a")
    evaluate(KUHN, ["random", "random"], episodes=4, seed=3, progress=False).save(tmp_path / "runs" / "b")
    assert board.submit(tmp_path / "runs" / "a", "alice")["new_episodes"] == 4
    outcomes = board.submit(tmp_path / "runs", "alice")
    assert [(o["env_id"], o["new_episodes"]) for o in outcomes] == [(TICTACTOE, 0), (KUHN, 4)]


class Impostor:
    """Plays perfect TicTacToe while calling itself ``random``, the anchor of the ratings."""

    name = "random"

    def __init__(self):
        self.inner = parlour.make_agent("minimax", env_id=TICTACTOE)

    def reset(self, seed=None):
        """Reseed the tie-breaking."""
        self.inner.reset(seed=seed)

    def act(self, observation):
        """A minimax move."""
        return self.inner.act(observation)


def test_a_seat_named_after_a_builtin_agent_must_play_like_it(board):
    impostor = as_bundle(evaluate(TICTACTOE, ["minimax", Impostor()], episodes=4, seed=0, progress=False))
    rejected(board, impostor, "the agent in seat .* plays")


def test_a_builtin_agent_without_its_seed_cannot_be_checked(board):
    unseeded = bundle()
    del unseeded["episodes"][0]["agent_seeds"]
    rejected(board, unseeded, "no agent seed")


def test_a_changed_agent_seed_is_caught(board):
    reseeded = bundle(agents=("random", "random"))
    seeds = reseeded["episodes"][0]["agent_seeds"]
    seeds["player_0"] += 1
    rejected(board, reseeded, "the agent in seat 'player_0' plays")


def test_agents_with_other_names_are_not_replayed(board):
    other = as_bundle(evaluate(TICTACTOE, ["minimax", Named("my-agent")], episodes=6, seed=0, progress=False))
    assert board.submit(other, "alice")["new_episodes"] == 6
