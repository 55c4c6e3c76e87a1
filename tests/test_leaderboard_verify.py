"""Verification of submissions: tampered bundles are rejected whole, with the first bad episode and the reason."""

from __future__ import annotations

import copy
import functools

import pytest

import parlour
from parlour.envs.core.match import make_game
from parlour.envs.registry import game_class
from parlour.evaluation.runner import evaluate
from parlour.evaluation.seating import counted_lineups
from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.verify import Rejected, as_bundle, verify_bundle
from tests.named_agent import NamedRandom

TICTACTOE = "parlour/TicTacToe-v0"
KUHN = "parlour/KuhnPoker-v0"
NIM = "parlour/Nim-v0"
NASTY = 'Robert\'); DROP TABLE agents;-- <script>alert(1)</script> & "quotes"'


def Named(name: str, env_id: str = TICTACTOE) -> NamedRandom:  # noqa: N802 - read at call sites as the agent it makes
    """A random agent under another name."""
    return NamedRandom(name, env_id)


@functools.cache
def _bundle(env_id: str, agents: tuple, episodes: int, seed: int = 0, options: tuple = ()) -> dict:
    return as_bundle(evaluate(env_id, list(agents), episodes=episodes, seed=seed, env_kwargs=dict(options), progress=False))


def bundle(env_id: str = TICTACTOE, agents: tuple = ("minimax", "random"), episodes: int = 12, seed: int = 0, options: tuple = ()) -> dict:
    """A fresh copy of an honest bundle (safe to tamper with); ``options`` are the game's as (name, value) pairs."""
    return copy.deepcopy(_bundle(env_id, agents, episodes, seed, options))


@pytest.fixture
def board(tmp_path):
    """An empty SQLite leaderboard with the submitters alice and bob."""
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db", bootstrap=50)
    board.add_submitter("alice")
    board.add_submitter("bob")
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
    assert board.submit(bundle(), "alice")["new_episodes"] == 12
    assert board.submit(bundle(), "alice") == {
        "submission": None,
        "env_id": TICTACTOE,
        "episodes": 12,
        "new_episodes": 0,
        "duplicates": 12,
        "counted": False,
    }
    assert board.store.episode_count(TICTACTOE) == 12


@pytest.mark.parametrize("env_id", parlour.list_envs())
def test_honest_bundles_of_every_environment_verify(env_id):
    players = list(make_game(game_class(env_id), {}).players)
    # The demo's first and last line-ups: rotated pairs, single agents, or agents fixed to the seats of their roles.
    # Line-ups seating a privileged oracle are refused (tests/test_leaderboard_coding.py).
    runs, _ = counted_lineups(env_id)
    assert runs, f"no scripted agents can fill the seats of {env_id} (is there a random agent for every seat?)"
    for run in dict.fromkeys([runs[0], runs[-1]]):
        results = evaluate(env_id, run.spec(players), episodes=3, seed=11, progress=False)
        verified = verify_bundle(as_bundle(results))
        assert len(verified.episodes) == 3 and verified.builtin == set(verified.summary["agents"])


def test_a_repeated_episode_is_rejected(board):
    repeated = bundle()
    repeated["episodes"][5] = copy.deepcopy(repeated["episodes"][3])
    rejected(board, repeated, "episode index 3 appears twice", episode=5)


def test_a_missing_episode_is_rejected(board):
    missing = bundle()
    del missing["episodes"][4]
    rejected(board, missing, "summary.episodes is 12, the bundle holds 11", episode=None)
    # Claiming a shorter run does not help: the last episode's index is then out of range.
    missing["summary"]["episodes"] = 11
    rejected(board, missing, r"episode index must be an int in 0\.\.10, got 11", episode=10)


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
    record = tampered["episodes"][2]
    # A replayable game under another seed (the deal of episode 0) is still not episode 2's deal.
    record["seed"] = tampered["episodes"][0]["seed"]
    rejected(board, tampered, "is not the seed .* of episode 2 of a run with seed 0", episode=2)


def test_a_chosen_seed_for_a_whole_run_must_be_in_range(board):
    huge = bundle()
    huge["summary"]["seed"] = 2**63
    rejected(board, huge, r"summary.seed must be an int in \[0, 2\*\*63\)", episode=None)


def test_non_default_options_are_rejected(board):
    # One heap of one: the first mover always wins, which is not the game the leaderboard rates.
    easy = bundle(NIM, ("nim_sum", "random"), episodes=4, options=(("heaps", (1,)),))
    error = rejected(board, easy, "not the defaults: the leaderboard rates environments with their default options")
    assert '"heaps": [1]' in error.reason


def test_default_options_spelt_out_are_the_same_episodes(board):
    spelt = bundle(NIM, ("nim_sum", "random"), episodes=4, options=(("error_allowance", 2), ("heaps", (3, 5, 7)), ("misere", False)))
    assert board.submit(spelt, "alice")["new_episodes"] == 4
    assert board.submit(bundle(NIM, ("nim_sum", "random"), episodes=4), "alice")["duplicates"] == 4
    assert board.store.episode_count(NIM) == 4


def test_changed_seating_is_rejected(board):
    swapped = bundle(agents=(Named("mine"), "random"))
    record = swapped["episodes"][0]
    record["agents"] = {"player_0": record["agents"]["player_1"], "player_1": record["agents"]["player_0"]}
    rejected(board, swapped, "is not the seating .* of episode 0")
    # Claiming a fixed seating for a rotated run puts the agents in the wrong seats from episode 1 on.
    fixed = bundle(agents=(Named("mine"), "random"))
    fixed["summary"]["rotate_seats"] = False
    rejected(board, fixed, "is not the seating", episode=1)


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
    rejected(board, undeclared, "seating .*'impostor'.* is not the seating", episode=4)
    unused = bundle()
    unused["summary"]["agents"].append("ghost")
    rejected(board, unused, "summary.agents must be 1 to 2 distinct names", episode=None)
    control = bundle()
    control["summary"]["agents"].append("bell\x07")
    rejected(board, control, "control", episode=None)


def test_episode_of_another_environment_is_rejected(board):
    mixed = bundle()
    mixed["episodes"][5] = bundle(KUHN, ("random", "random"), episodes=1)["episodes"][0]
    rejected(board, mixed, "episode is from 'parlour/KuhnPoker-v0'", episode=5)


@pytest.mark.parametrize(
    "broken",
    [
        {"summary": [], "episodes": []},
        {"summary": {}},
        {"summary": {"env_id": "parlour/Nope-v0"}, "episodes": [{}]},
        {"summary": {"env_id": TICTACTOE, "env_version": 0, "agents": ["a"]}, "episodes": []},
    ],
)
def test_malformed_bundles_are_rejected(board, broken):
    rejected(board, broken, ".", episode=None)


def test_names_with_sql_and_html_metacharacters_are_stored_literally(board):
    board.submit(bundle(agents=(Named(NASTY), "random"), episodes=6), "alice")
    assert board.store.agent(NASTY)["self_reported"] == {TICTACTOE: 6}
    assert NASTY in {row["agent"] for row in board.ratings(TICTACTOE, counted=False)["rows"]}


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
    rejected(board, reseeded, "agent seed .* of seat 'player_0' is not the one episode 0 of the run derives")


def test_agents_with_other_names_are_not_replayed(board):
    other = as_bundle(evaluate(TICTACTOE, ["minimax", Named("my-agent")], episodes=6, seed=0, progress=False))
    assert board.submit(other, "alice")["new_episodes"] == 6


def test_a_builtin_name_of_another_environment_is_reserved(board):
    # Nim has no minimax: a seat called so would be a reference agent's name that nothing checks.
    borrowed = as_bundle(evaluate(NIM, [Named("minimax", NIM), "random"], episodes=4, seed=0, progress=False))
    rejected(board, borrowed, "'minimax' is reserved for a built-in agent of other environments", episode=None)


def test_a_name_belongs_to_the_submitter_who_first_stored_it(board):
    assert board.submit(bundle(agents=(Named("mine"), "random")), "alice")["new_episodes"] == 12
    for theft in (bundle(agents=(Named("mine"), "random"), seed=1), bundle(agents=(Named("mine"), "random"))):
        with pytest.raises(Rejected, match="'mine' belong to another submitter"):
            board.submit(theft, "bob")
    assert board.store.episode_count() == 12 and board.store.submission_count() == 1
    # The owner goes on using it; built-in names are everyone's.
    assert board.submit(bundle(agents=(Named("mine"), "random"), seed=1), "alice")["new_episodes"] == 12
    assert board.submit(bundle(agents=("random", "minimax"), seed=2), "bob")["new_episodes"] == 12


def test_malformed_fields_are_rejected_not_crashing(board, monkeypatch):
    malformed = bundle()
    malformed["episodes"][2]["steps"][0]["rewards"] = {"player_0": "lots"}
    rejected(board, malformed, "rewards", episode=2)

    def choke(record, agents=None):
        """Replay tripping over a field nobody thought of."""
        raise TypeError("'<' not supported between instances of 'dict' and 'int'")

    # Whatever a record breaks in replay, the bundle is refused with the reason, never a crash of the server.
    monkeypatch.setattr("parlour.leaderboard.verify.replay", choke)
    rejected(board, bundle(), "cannot be replayed: TypeError: '<' not supported")
