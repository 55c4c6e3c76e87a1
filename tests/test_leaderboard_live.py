"""Live matches: the server runs the game, the agent plays over HTTP turn by turn, and the records are the server's own."""

from __future__ import annotations

import time

import httpx
import pytest

import parlour
from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.live import LiveHub, connect
from parlour.leaderboard.verify import Rejected
from tests.test_leaderboard_challenges import KUHN, seeded_nonces
from tests.test_leaderboard_server import cli, server

TTT = "parlour/TicTacToe-v0"


DATABASES: dict[str, str] = {}


def base_db(base: str) -> str:
    """The database file of the served leaderboard at ``base``."""
    return DATABASES[base]


@pytest.fixture(scope="module")
def live_server(tmp_path_factory):
    """A served leaderboard (turns time out after half a second, matches are 4 episodes) and a submitter token."""
    path = f"{tmp_path_factory.mktemp('live')}/lb.db"
    token = Leaderboard(f"sqlite:///{path}").add_submitter("alice")
    with server(f"sqlite:///{path}", "--turn-timeout", "0.5", "--live-episodes", "4") as (base, _):
        DATABASES[base] = path
        yield base, token


class Watcher:
    """Plays random moves and keeps every observation it was sent."""

    name = "watcher"

    def __init__(self):
        self.inner = parlour.make_agent("random", env_id=KUHN)
        self.seen = []

    def reset(self, seed=None):
        """Reseed the random play."""
        self.inner.reset(seed=seed)

    def act(self, observation):
        """A random legal move."""
        self.seen.append(observation)
        return self.inner.act(observation)


class Player(Watcher):
    """A random TicTacToe player under a name of its own, built from a ``python:`` spec."""

    name = "cli-player"

    def __init__(self):
        super().__init__()
        self.inner = parlour.make_agent("random", env_id=TTT)


def test_a_live_match_is_played_on_the_server_and_stored_as_counted(live_server):
    base, token = live_server
    watcher = Watcher()
    result = connect(watcher, base, KUHN, opponent="nash", token=token, progress=False)
    assert result["episodes"] == 4 and set(result["returns"]) == {"watcher", "nash"}
    # The agent saw only what a player sees: no seed, no other card.
    assert watcher.seen and all(set(obs) >= {"text", "view", "legal_moves", "episode"} for obs in watcher.seen)
    assert not any("seed" in obs or "seed" in obs["view"] for obs in watcher.seen)
    table = httpx.get(base + "/api/leaderboard", params={"env": KUHN}).json()
    assert {row["agent"] for row in table["rows"]} == {"watcher", "nash"} and table["episodes"] == 4
    submission = result["submission"]
    page = httpx.get(f"{base}/submission/{submission}.html").text
    assert "live" in page
    episode_id = int(page.split('href="../episode/')[1].split(".html")[0])
    stored = httpx.get(f"{base}/api/episodes/{episode_id}").json()
    assert stored["source"] == "live"
    parlour.replay(stored["record"])
    viewer = httpx.get(f"{base}/episode/{episode_id}.html")
    assert viewer.status_code == 200 and "Your card" in viewer.text and 'id="final-state"' in viewer.text


def test_a_client_that_walks_away_forfeits_instead_of_erasing_the_match(live_server):
    base, token = live_server
    auth = {"Authorization": f"Bearer {token}"}
    created = httpx.post(base + "/api/live", json={"env_id": TTT, "agent": "quitter", "opponent": "minimax"}, headers=auth)
    assert created.status_code == 201
    match = created.json()["match"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        turn = httpx.get(f"{base}/api/live/{match}/turn", headers=auth, timeout=30).json()
        if turn["status"] == "done":
            break
        time.sleep(0.5)
    assert turn["status"] == "done" and turn["returns"]["quitter"] == -1.0
    assert httpx.get(f"{base}/api/agents/quitter").json()["environments"][TTT]["episodes"] == 4


def test_live_match_errors_are_clear(live_server):
    base, token = live_server
    auth = {"Authorization": f"Bearer {token}"}
    assert httpx.post(base + "/api/live", json={"env_id": KUHN, "agent": "x"}).status_code == 401
    refused = httpx.post(base + "/api/live", json={"env_id": KUHN, "agent": "x", "opponent": "minimax"}, headers=auth)
    assert refused.status_code == 422 and "opponent must be a built-in agent" in refused.json()["reason"]
    mimic = httpx.post(base + "/api/live", json={"env_id": KUHN, "agent": "Nash"}, headers=auth)
    assert mimic.status_code == 422 and "looks like 'nash'" in mimic.json()["reason"]
    other = Leaderboard(f"sqlite:///{base_db(base)}")
    bob = other.add_submitter("bob")
    taken = httpx.post(base + "/api/live", json={"env_id": KUHN, "agent": "watcher"}, headers={"Authorization": f"Bearer {bob}"})
    assert taken.status_code == 422 and "belongs to another submitter" in taken.json()["reason"]
    lookalike = httpx.post(base + "/api/live", json={"env_id": KUHN, "agent": "WATCHER"}, headers={"Authorization": f"Bearer {bob}"})
    assert lookalike.status_code == 422 and "looks like the existing agent name 'watcher'" in lookalike.json()["reason"]
    match = httpx.post(base + "/api/live", json={"env_id": KUHN, "agent": "x"}, headers=auth).json()["match"]
    stale = httpx.post(f"{base}/api/live/{match}/act", json={"turn": 99, "action": "bet"}, headers=auth)
    assert stale.status_code == 409 and "is not awaited" in stale.json()["reason"]
    assert httpx.get(f"{base}/api/live/nope/turn", headers=auth).status_code == 404


def test_parlour_connect_plays_from_the_command_line(live_server, capsys, monkeypatch):
    base, token = live_server
    status, out, _ = cli(
        capsys,
        monkeypatch,
        "connect",
        "python:tests.test_leaderboard_live:Player",
        "--server",
        base,
        "--env",
        TTT,
        "--opponent",
        "minimax",
        token=token,
    )
    assert status == 0 and "live match stored as submission" in out and "4 episodes" in out
    status, _, err = cli(capsys, monkeypatch, "connect", "random", "--server", base, "--env", TTT, "--episodes", "1", token=token)
    assert status == 2 and "'random' is a built-in agent's name" in err
    status, _, err = cli(capsys, monkeypatch, "connect", "random", "--server", base, "--env", TTT, token="")
    assert status == 2 and "PARLOUR_TOKEN" in err


def test_stopping_when_ahead_selects_nothing(tmp_path):
    # The attack: 1-episode matches, stopped while ahead, lifted a losing agent's counted mean to about zero.
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db", bootstrap=10)
    board.add_submitter("alice")
    hub = LiveHub(board, turn_timeout=0.1, episodes=20, match_secrets=seeded_nonces(5))
    with pytest.raises(Rejected, match="a live match on this server is 20 episodes, fixed before play"):
        hub.create("alice", KUHN, "stopper", "nash", episodes=1)
    # Within the fixed match: stop answering after the first won episode. The rest is forfeited, not dropped.
    created = hub.create("alice", KUHN, "stopper", "nash")
    live = hub.get(created["match"], "alice")
    player = parlour.make_agent("random", env_id=KUHN, seed=0)
    played, stopped = [], False
    while (turn := hub.turn(live, wait=0.05))["status"] != "done":
        if turn["status"] != "act" or stopped:
            time.sleep(0.01)
            continue
        if turn["episode"] > len(played):
            played.append(live.records[-1]["returns"][next(seat for seat, name in live.records[-1]["agents"].items() if name == "stopper")])
            stopped = played[-1] > 0
            if stopped:
                continue
        hub.act(live, turn["turn"], player.act(turn["observation"]))
    counted = [row for row in board.ratings(KUHN)["rows"] if row["agent"] == "stopper"]
    assert turn["episodes"] == 20 and board.store.episode_count(KUHN, counted=True) == 20 and counted[0]["games"] == 20
    # Every forfeited hand loses at least the ante, so the counted mean is the played hands' sum and those losses over
    # all 20: never the mean of the played prefix (which stopping on a win would select; -1.25 to -1.05 is no gain).
    assert stopped and turn["returns"]["stopper"] * 20 <= sum(played) - (20 - len(played)) + 1e-9
    # And the agent's one match against nash is its rating unit: no second try.
    with pytest.raises(Rejected, match="already played its live match against 'nash'"):
        hub.create("alice", KUHN, "stopper", "nash")


def test_live_matches_are_capped_and_finished_ones_are_freed(tmp_path):
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db", bootstrap=10)
    board.add_submitter("alice")
    board.add_submitter("bob")
    board.add_submitter("carol")
    hub = LiveHub(board, turn_timeout=0.01, episodes=2, max_matches=2, max_per_submitter=1, keep_finished=0.0)
    first = hub.create("alice", KUHN, "a1", "nash")
    with pytest.raises(Rejected, match="in progress"):
        hub.create("alice", KUHN, "a2", "nash")
    with pytest.raises(Rejected, match="1 live matches in progress, the most allowed"):
        hub.create("alice", TTT, "a3", "minimax")
    hub.create("bob", TTT, "b1", "minimax")
    with pytest.raises(Rejected, match="the server is playing 2 live matches, its limit"):
        hub.create("carol", KUHN, "c1", "nash")
    live = hub.get(first["match"], "alice")
    while hub.turn(live, wait=0.05)["status"] != "done":
        time.sleep(0.01)
    # Its result was fetched; past keep_finished the match and its records are gone, and the slot is free again.
    assert live.records == [] and live.match is None
    hub.create("alice", TTT, "a3", "minimax")
    assert first["match"] not in hub.matches


def test_a_seeded_hub_and_agent_play_the_same_match_on_every_board(tmp_path):
    # The web test's Kuhn reference moved between runs because live secrets and the agent's seeds were unseeded.
    from parlour.leaderboard.live import play_local
    from tests.test_leaderboard_challenges import Named

    results = []
    for number in range(2):
        board = Leaderboard(f"sqlite:///{tmp_path}/lb{number}.db", bootstrap=10)
        board.add_submitter("alice")
        hub = LiveHub(board, episodes=30, match_secrets=seeded_nonces(7))
        results.append(play_local(hub, "alice", Named("mine", KUHN), KUHN, opponent="nash", seed=11))
    assert results[0]["secret"] == results[1]["secret"] == seeded_nonces(7)()
    assert results[0]["returns"] == results[1]["returns"]
    board = Leaderboard(f"sqlite:///{tmp_path}/other.db", bootstrap=10)
    board.add_submitter("alice")
    other = play_local(LiveHub(board, episodes=30, match_secrets=seeded_nonces(7)), "alice", Named("mine", KUHN), KUHN, opponent="nash", seed=12)
    assert other["secret"] == results[0]["secret"] and other["returns"] != results[0]["returns"]
