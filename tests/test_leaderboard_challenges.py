"""No cherry-picking: challenges against the prefix and seed-shopping attacks, look-alike names, quotas, self-reported runs."""

from __future__ import annotations

import copy
import datetime as dt
import json
import random

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from parlour.envs.core.match import Match
from parlour.envs.core.seeding import episode_seeds
from parlour.envs.registry import game_class
from parlour.evaluation.runner import evaluate
from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.names import BadName, check_name, lookalike, skeleton
from parlour.leaderboard.server import create_app
from parlour.leaderboard.store import Challenge, Quota, QuotaExceeded
from parlour.leaderboard.verify import Rejected, as_bundle
from tests.named_agent import NamedRandom

KUHN = "parlour/KuhnPoker-v0"
TTT = "parlour/TicTacToe-v0"


def Named(name: str, env_id: str = KUHN) -> NamedRandom:  # noqa: N802 - read at call sites as the agent it makes
    """A random agent under another name."""
    return NamedRandom(name, env_id)


class SeedReader:
    """Cheats at Kuhn poker: rebuilds each deal from the run's base seed (which it assumes) and the episode index.

    Believing it knows both cards, it bets or calls with the higher one and
    checks or folds with the lower. ``read`` counts the deals it rebuilt and
    ``right`` those where the rebuilt deal gave it the card it really holds.
    """

    name = "seed-reader"

    def __init__(self, assumed_seed: int = 0):
        self.assumed_seed = assumed_seed
        self.read = self.right = 0

    def __deepcopy__(self, memo):
        # The runner copies scripted agents for every seat; this one keeps one tally across them.
        return self

    def act(self, observation):
        """Bet or call with the winning card, check or fold with the losing one."""
        game_seed, _ = episode_seeds(self.assumed_seed, observation["episode"], 2)
        match = Match(game_class(KUHN), {})
        match.reset(game_seed)
        seat, mine = observation["view"]["seat"], observation["view"]["card"]
        self.read += 1
        self.right += match.game.cards[seat] == mine
        theirs = match.game.cards[1 - seat]
        winning = "JQK".index(mine) > "JQK".index(theirs)
        legal = observation["legal_moves"]
        return ("bet" if "bet" in legal else "call") if winning else ("check" if "check" in legal else "fold")


def mean_return(results, name: str) -> float:
    """The mean return of agent ``name`` over a run's records."""
    values = [r["returns"][seat] for r in results.records for seat, agent in r["agents"].items() if agent == name]
    return sum(values) / len(values)


def seeded_nonces(seed: int):
    """Challenge nonces from a seeded generator, so a test plays the same games every time."""
    rng = random.Random(seed)
    return lambda: rng.randbytes(32).hex()


@pytest.fixture
def board(tmp_path):
    """A leaderboard with the submitters alice and bob."""
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db", bootstrap=20, min_challenge_episodes=4, nonces=seeded_nonces(1))
    board.add_submitter("alice")
    board.add_submitter("bob")
    yield board
    board.store.close()


def play(board: Leaderboard, agents: list, episodes: int = 12, submitter: str = "alice", env_id: str = KUHN):
    """A challenge for ``agents`` and the run played for it."""
    names = [agent if isinstance(agent, str) else agent.name for agent in agents]
    challenge = board.issue_challenge(submitter, env_id, names, episodes)
    return challenge, evaluate(env_id, agents, challenge=challenge, progress=False)


def test_a_challenge_run_counts_once_and_only_complete(board):
    challenge, results = play(board, ["random", "nash"])
    assert results.seed == challenge["seed"] and len(results.records) == 12
    assert results.metadata()["challenge"] == {"id": challenge["id"], "nonce": challenge["nonce"]}
    outcome = board.submit(results, "alice")
    assert outcome["counted"] and outcome["new_episodes"] == 12
    assert {row["agent"] for row in board.ratings(KUHN)["rows"]} == {"random", "nash"}
    with pytest.raises(Rejected, match="already used"):
        board.submit(results, "alice")
    info = board.store.submitter("alice")
    assert [item["state"] for item in info["challenges"]] == ["used"] and info["abandoned"] == 0


def test_the_prefix_attack_is_rejected(board):
    # Play the whole challenge, then send only the first episodes, where the agent happened to do well.
    _, results = play(board, ["random", "nash"], episodes=12)
    prefix = as_bundle(results)
    prefix["episodes"] = prefix["episodes"][:5]
    prefix["summary"]["episodes"] = 5
    with pytest.raises(Rejected, match="asks for all 12 episodes, the bundle holds 5"):
        board.submit(prefix, "alice")
    truncated = as_bundle(results)
    del truncated["episodes"][5:]
    with pytest.raises(Rejected, match="summary.episodes is 12, the bundle holds 5"):
        board.submit(truncated, "alice")
    assert board.store.episode_count() == 0


def test_the_seed_shopping_attack_is_rejected(board):
    # Without a challenge: play many base seeds and send the best. It is accepted, but only as self-reported.
    runs = [evaluate(KUHN, ["random", "nash"], episodes=12, seed=seed, progress=False) for seed in range(8)]
    best = max(runs, key=lambda run: mean_return(run, "random"))
    assert board.submit(best, "alice")["counted"] is False
    assert board.ratings(KUHN)["rows"] == [] and {row["agent"] for row in board.ratings(KUHN, counted=False)["rows"]} == {"random", "nash"}
    # With a challenge: its seed is the nonce's, so a shopped seed does not verify...
    challenge, _ = play(board, ["random", "nash"], episodes=12)
    shopped = as_bundle(copy.deepcopy(best))
    shopped["summary"]["challenge"] = {"id": challenge["id"], "nonce": challenge["nonce"]}
    with pytest.raises(Rejected, match="is not the seed .* that challenge .* nonce gives"):
        board.submit(shopped, "alice")
    # ...and a second challenge for the same run, to keep the better of two, is refused while the first is open.
    with pytest.raises(Rejected, match="is still open"):
        board.issue_challenge("alice", KUHN, ["random", "nash"], 12)
    assert board.store.episode_count(KUHN, counted=True) == 0


def test_stale_foreign_and_unknown_challenges_are_rejected(board):
    challenge, results = play(board, ["random", "nash"])
    with pytest.raises(Rejected, match="issued to another submitter"):
        board.submit(results, "bob")
    with board.store.write() as session:
        session.execute(update(Challenge).where(Challenge.id == challenge["id"]).values(expires_at=dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)))
    with pytest.raises(Rejected, match="expired"):
        board.submit(results, "alice")
    # An expired challenge stays on the submitter's page as abandoned, and a new one may be asked for.
    assert board.store.submitter("alice")["abandoned"] == 1
    assert board.issue_challenge("alice", KUHN, ["random", "nash"], 12)["id"] != challenge["id"]
    forged = as_bundle(results)
    forged["summary"]["challenge"] = {"id": "made-up", "nonce": "0" * 64}
    with pytest.raises(Rejected, match="did not issue"):
        board.submit(forged, "alice")


def test_a_challenge_binds_agents_seating_and_options(board):
    challenge = board.issue_challenge("alice", KUHN, ["random", "nash"], 8)
    with pytest.raises(ValueError, match="the challenge is for the agents"):
        evaluate(KUHN, ["nash", "random"], challenge=challenge, progress=False)
    with pytest.raises(ValueError, match="seats the agents"):
        evaluate(KUHN, ["random", "nash"], rotate_seats=False, challenge=challenge, progress=False)
    results = evaluate(KUHN, ["random", "nash"], challenge=challenge, progress=False)
    unrotated = as_bundle(results)
    unrotated["summary"]["rotate_seats"] = False
    with pytest.raises(Rejected):
        board.submit(unrotated, "alice")
    assert board.submit(results, "alice")["counted"]


@pytest.mark.parametrize(
    ("name", "like"),
    [("mіnimax", "minimax"), ("Minimax", "minimax"), ("minimax ", None), ("m1nimax", "minimax"), ("ｍｉｎｉｍａｘ", None), ("RANDOM #2", "random")],
)
def test_names_that_look_like_reserved_ones_are_refused(board, name, like):
    agent = Named(name, TTT)
    with pytest.raises(Rejected) as refused:
        board.submit(evaluate(TTT, [agent, "random"], episodes=2, progress=False), "alice")
    message = str(refused.value)
    assert f"looks like {like!r}" in message if like else ("whitespace" in message or "NFKC" in message)
    with pytest.raises(Rejected):
        board.issue_challenge("alice", TTT, [name, "random"])
    assert board.store.episode_count() == 0


def test_names_that_look_like_existing_ones_are_refused(board):
    assert board.submit(evaluate(TTT, [Named("DeepBlue", TTT), "random"], episodes=2, progress=False), "alice")["new_episodes"] == 2
    for name in ("deepblue", "DeepВlue", "Deep\u200bBlue"):  # case, a Cyrillic В, a zero-width space
        with pytest.raises(Rejected, match="looks like the existing agent name 'DeepBlue'|invisible"):
            board.submit(evaluate(TTT, [Named(name, TTT), "random"], episodes=2, seed=1, progress=False), "bob")
    with pytest.raises(BadName, match="looks like the existing submitter 'alice'"):
        board.add_submitter("аlice")  # Cyrillic а
    with pytest.raises(BadName, match="whitespace"):
        board.add_submitter("carol ")
    assert board.store.agent("deepblue") is None


def test_name_rules():
    assert skeleton("mіnimax") == skeleton("Minimax") == skeleton("minimax")
    assert lookalike("m1nimax", ["random", "minimax"]) == "minimax" and lookalike("maximin", ["minimax"]) is None
    assert check_name("also random") == "also random"
    for bad in ("a\u200db", "x\u00a0y", "tab\there", "ﬁsh", "\u3164", "a\u202eb"):
        with pytest.raises(BadName):
            check_name(bad)


def test_storage_quotas_refuse_with_413_and_a_message(tmp_path):
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db", bootstrap=10, quota=Quota(max_bytes=None, max_episodes=10))
    token = board.add_submitter("alice")
    client = TestClient(create_app(board))
    auth = {"Authorization": f"Bearer {token}"}
    first = as_bundle(evaluate(TTT, [Named("mine", TTT), "random"], episodes=8, progress=False))
    assert client.post("/api/submissions", content=json.dumps(first), headers=auth).status_code == 201
    second = as_bundle(evaluate(TTT, [Named("mine", TTT), "random"], episodes=4, seed=1, progress=False))
    refused = client.post("/api/submissions", content=json.dumps(second), headers=auth)
    assert refused.status_code == 413 and "you store 8 of your quota of 10 episodes" in refused.json()["detail"]
    assert board.store.episode_count() == 8
    small = Leaderboard(f"sqlite:///{tmp_path}/lb2.db", quota=Quota(max_bytes=5000, max_episodes=None))
    small.add_submitter("alice")
    with pytest.raises(QuotaExceeded, match="quota of 5000 bytes"):
        small.submit(first, "alice")
    assert small.store.episode_count() == 0


def test_challenges_over_http(tmp_path):
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db", bootstrap=10)
    token = board.add_submitter("alice")
    client = TestClient(create_app(board))
    auth = {"Authorization": f"Bearer {token}"}
    assert client.post("/api/challenges", json={"env_id": KUHN, "agents": ["random", "nash"]}).status_code == 401
    issued = client.post("/api/challenges", json={"env_id": KUHN, "agents": ["random", "nash"], "episodes": 3}, headers=auth)
    assert issued.status_code == 201 and issued.json()["episodes"] == 20  # the server's minimum
    again = client.post("/api/challenges", json={"env_id": KUHN, "agents": ["random", "nash"]}, headers=auth)
    assert again.status_code == 422 and "still open" in again.json()["reason"]
    unknown = client.post("/api/challenges", json={"env_id": "parlour/Kuhn-v0", "agents": ["mine"]}, headers=auth)
    assert unknown.status_code == 422 and "did you mean" in unknown.json()["reason"]
    results = evaluate(KUHN, ["random", "nash"], challenge=issued.json(), progress=False)
    sent = client.post("/api/submissions", content=json.dumps(as_bundle(results)), headers=auth)
    assert sent.status_code == 201 and sent.json()["counted"] is True
    reused = client.post("/api/submissions", content=json.dumps(as_bundle(results)), headers=auth)
    assert reused.status_code == 422 and "already used" in reused.json()["reason"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ((["nash", "random"], None, True), (["random", "nash"], None, True)),  # agent order
        ((["nash", "random"], None, True), (["nash", "random"], [1, 0], True)),  # line-up
        ((["nash", "random"], None, True), (["nash", "random"], None, False)),  # rotation
        ((["nash", "random"], None, True), (["ppo", "random"], None, True)),  # agent name
    ],
)
def test_one_open_challenge_per_environment_whatever_the_permutation(board, first, second):
    # Seed shopping by permutation: every variant of a run is a fresh nonce; holding several and sending the best is refused.
    board.issue_challenge("alice", KUHN, first[0], 8, first[1], first[2])
    with pytest.raises(Rejected, match="still open"):
        board.issue_challenge("alice", KUHN, second[0], 8, second[1], second[2])
    # Another environment, or another submitter, is not held back.
    assert board.issue_challenge("alice", TTT, ["minimax", "random"], 8)["env_id"] == TTT
    assert board.issue_challenge("bob", KUHN, ["nash", "random"], 8)["submitter"] == "bob"


@pytest.mark.parametrize(
    "name",
    ["minimax\U0001d159", "nash\U0001d159", "minimax\U00016fe4", "nash\U00016fe4", "nash\u0301", "mi\u0301nimax", "nash\u20dd"],
)
def test_reserved_names_with_a_blank_symbol_or_a_combining_mark_are_refused(board, name):
    # U+1D159 (a musical null notehead) and U+16FE4 (a Khitan filler) render as nothing; a combining mark hides in its letter.
    with pytest.raises(Rejected, match="looks like|invisible|NFKC"):
        check_name_for_board(name)
    with pytest.raises(Rejected):
        board.issue_challenge("alice", KUHN, [name, "nash"])
    assert skeleton("nash\u0301") == skeleton("nash")


def check_name_for_board(name: str) -> str:
    """The leaderboard's agent-name check."""
    from parlour.leaderboard.verify import check_name as board_check

    return board_check(name, "agent name")
