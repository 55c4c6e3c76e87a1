"""The leaderboard server: end to end over HTTP, errors, escaping, concurrent clients and a crash mid-submission."""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from parlour.cli import main
from parlour.evaluation.runner import evaluate
from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.server import create_app
from parlour.leaderboard.store import slug
from parlour.leaderboard.verify import as_bundle
from tests.named_agent import NamedRandom
from tests.pg import free_port

ENV = "parlour/TicTacToe-v0"
NASTY = "<img src=x onerror=alert(1)>'; DROP TABLE agents;--"


def Named(name: str, env_id: str = ENV) -> NamedRandom:  # noqa: N802 - read at call sites as the agent it makes
    """A random agent under another name."""
    return NamedRandom(name, env_id)


@functools.cache
def _bundle(agents: tuple, episodes: int, seed: int) -> dict:
    return as_bundle(evaluate(ENV, list(agents), episodes=episodes, seed=seed, progress=False))


def bundle(agents: tuple = ("minimax", "random"), episodes: int = 10, seed: int = 0) -> dict:
    """A fresh copy of an honest TicTacToe bundle."""
    return copy.deepcopy(_bundle(agents, episodes, seed))


def cli(capsys, monkeypatch, *args: str, token: str = "") -> tuple[int, str, str]:
    """Run the ``parlour`` command line in this process: (exit status, stdout, stderr)."""
    monkeypatch.setenv("PARLOUR_TOKEN", token)
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@contextmanager
def server(db: str, *options: str):
    """A real uvicorn server on a free loopback port; yields its base URL and process, killed at the end."""
    port = free_port()
    # A file, not a pipe: a chatty server can never block on a full pipe.
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(
        [sys.executable, "-m", "parlour.cli", "leaderboard", "serve", "--db", db, "--port", str(port), *options],
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(base + "/api/leaderboard", timeout=2)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"server did not start: {log.read().decode()[-2000:]}") from None
                time.sleep(0.2)
        yield base, process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        log.close()


def post(base: str, body: bytes | str, token: str, timeout: float = 120) -> httpx.Response:
    """POST a submission body with a bearer token."""
    return httpx.post(base + "/api/submissions", content=body, headers={"Authorization": f"Bearer {token}"}, timeout=timeout)


#: The end-to-end run's episodes. The server draws the challenge's nonce, so the games differ run by run. With 40,
#: FORMAT 5's mirrored Bradley-Terry interval reached down to random's in 66 of 2,000 seeded runs (a near-perfect
#: record such as 36 wins and 4 draws), the overall table then had no row and this test failed. FORMAT 6 mends the
#: interval (0 of 300 at 40; tests/test_leaderboard_ratings.py holds it); 80 keeps a margin.
EPISODES = "80"


def test_end_to_end_evaluate_save_submit_show(tmp_path, capsys, monkeypatch):
    db = f"sqlite:///{tmp_path}/lb.db"
    status, token, _ = cli(capsys, monkeypatch, "leaderboard", "add-submitter", "alice", "--db", db)
    token = token.strip()
    assert status == 0 and token.startswith("plr_")

    with server(db) as (base, _):
        status, _, _ = cli(
            capsys,
            monkeypatch,
            "eval",
            ENV,
            "--agent",
            "minimax",
            "--opponent",
            "random",
            "--episodes",
            EPISODES,
            "--challenge",
            base,
            "--out",
            str(tmp_path / "bundle"),
            "--quiet",
            token=token,
        )
        assert status == 0
        tampered = as_bundle(tmp_path / "bundle")
        assert tampered["summary"]["challenge"]["id"] and len(tampered["episodes"]) == int(EPISODES)
        tampered["episodes"][7]["returns"]["player_0"] += 1
        (tmp_path / "bad").mkdir()
        (tmp_path / "bad" / "summary.json").write_text(json.dumps(tampered["summary"]))
        (tmp_path / "bad" / "episodes.jsonl").write_text("\n".join(json.dumps(r) for r in tampered["episodes"]))
        status, _, err = cli(capsys, monkeypatch, "submit", str(tmp_path / "bad"), "--server", base, token=token)
        assert status == 1 and "episode 7" in err
        status, out, _ = cli(capsys, monkeypatch, "submit", str(tmp_path / "bundle"), "--server", base, token=token)
        assert status == 0 and f"accepted, {EPISODES} new episode(s)" in out and "counted" in out
        # It names the page of what it stored.
        submission = re.search(rf"^  ({re.escape(base)}/submission/[0-9]+\.html)$", out, re.M).group(1)
        assert "minimax" in httpx.get(submission).text
        status, _, err = cli(capsys, monkeypatch, "submit", str(tmp_path / "bundle"), "--server", base, token=token)
        assert status == 1 and "already used" in err

        table = httpx.get(base + "/api/leaderboard", params={"env": ENV}).json()
        row = next(r for r in table["rows"] if r["agent"] == "minimax")
        assert row["low"] < row["rating"] < row["high"] and row["rating"] > 1000 and row["games"] == int(EPISODES)
        overall = httpx.get(base + "/api/leaderboard").json()
        assert overall["rows"][0]["agent"] == "minimax" and overall["rows"][0]["score"] == pytest.approx(100.0)
        agent = httpx.get(base + "/api/agents/minimax").json()
        assert agent["environments"][ENV]["episodes"] == int(EPISODES)
        assert httpx.get(base + "/api/agents/nobody").status_code == 404
        assert httpx.get(base + "/api/leaderboard", params={"env": "parlour/Nope-v0"}).status_code == 404

        index = httpx.get(base + "/").text
        env_link = re.search(r'href="(env/[^"]+\.html)"', index).group(1)
        page = httpx.get(f"{base}/{env_link}").text
        assert "minimax" in page and f"{row['rating']:.1f}" in page and f"{row['low']:.1f}" in page
        assert 'id="rating-plot"' in page and 'id="heat-map"' in page
        assert httpx.get(f"{base}/agent/{slug('minimax')}.html").status_code == 200

    status, out, _ = cli(capsys, monkeypatch, "leaderboard", "show", "--env", ENV, "--db", db)
    assert status == 0 and re.search(r"1\s+minimax\s+\d+\.\d\s+\[", out)
    status, _, _ = cli(capsys, monkeypatch, "leaderboard", "export", "--out", str(tmp_path / "site"), "--db", db)
    assert status == 0
    assert (tmp_path / "site" / env_link).read_text() == page
    assert (tmp_path / "site" / "static" / "leaderboard.js").exists()


def test_submit_without_a_token_fails(tmp_path, capsys, monkeypatch):
    evaluate(ENV, ["minimax", "random"], episodes=2, seed=0, out=tmp_path / "bundle", progress=False)
    status, _, err = cli(capsys, monkeypatch, "submit", str(tmp_path / "bundle"), "--server", "http://127.0.0.1:9")
    assert status == 2 and "PARLOUR_TOKEN" in err


@pytest.fixture
def board(tmp_path):
    """An empty SQLite leaderboard."""
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db", bootstrap=50)
    yield board
    board.store.close()


def test_api_errors_are_clear_and_store_nothing(board):
    token = board.add_submitter("alice")
    client = TestClient(create_app(board, max_bytes=50_000, rate_limit=3))
    body = json.dumps(bundle())
    assert client.post("/api/submissions", content=body).status_code == 401
    wrong = client.post("/api/submissions", content=body, headers={"Authorization": "Bearer plr_nope"})
    assert wrong.status_code == 401 and "unknown token" in wrong.json()["detail"]
    auth = {"Authorization": f"Bearer {token}"}
    large = client.post("/api/submissions", content=json.dumps(bundle(episodes=60)), headers=auth)
    assert large.status_code == 413 and "50000 bytes" in large.json()["detail"]
    malformed = client.post("/api/submissions", content=body[:-5], headers=auth)
    assert malformed.status_code == 400 and malformed.json()["error"] == "malformed JSON"
    tampered = bundle()
    tampered["episodes"][3]["steps"][0]["action"] = "z9"
    refused = client.post("/api/submissions", content=json.dumps(tampered), headers=auth)
    assert refused.status_code == 422 and refused.json()["episode"] == 3 and "does not reproduce" in refused.json()["reason"]
    assert board.store.episode_count() == 0 and board.store.submission_count() == 0
    limited = client.post("/api/submissions", content=body, headers=auth)
    assert limited.status_code == 429
    assert board.store.episode_count() == 0


def test_unparseable_and_malformed_bodies_are_refused_not_crashing(board, monkeypatch):
    token = board.add_submitter("alice")
    client = TestClient(create_app(board))
    auth = {"Authorization": f"Bearer {token}"}
    # Valid JSON syntax, but Python refuses to convert an integer of more than 4300 digits.
    huge = client.post("/api/submissions", content='{"summary": {"seed": ' + "9" * 5000 + "}}", headers=auth)
    assert huge.status_code == 400 and huge.json()["error"] == "malformed JSON"
    deep = client.post("/api/submissions", content="[" * 100_000 + "]" * 100_000, headers=auth)
    assert deep.status_code == 400
    malformed = bundle()
    malformed["episodes"][2]["returns"] = {"player_0": "a lot", "player_1": None}
    refused = client.post("/api/submissions", content=json.dumps(malformed), headers=auth)
    assert refused.status_code == 422 and refused.json()["episode"] == 2

    def choke(record, agents=None):
        """Replay tripping over a field nobody thought of."""
        raise ValueError("could not convert string to float: 'a lot'")

    monkeypatch.setattr("parlour.leaderboard.verify.replay", choke)
    crashed = client.post("/api/submissions", content=json.dumps(bundle()), headers=auth)
    assert crashed.status_code == 422 and "cannot be replayed: ValueError" in crashed.json()["reason"]
    assert board.store.episode_count() == 0


def test_another_submitters_agent_name_is_refused(board):
    client = TestClient(create_app(board))
    alice, bob = ({"Authorization": f"Bearer {board.add_submitter(name)}"} for name in ("alice", "bob"))
    assert client.post("/api/submissions", content=json.dumps(bundle((Named("mine"), "random"))), headers=alice).status_code == 201
    theft = client.post("/api/submissions", content=json.dumps(bundle((Named("mine"), "random"), seed=1)), headers=bob)
    assert theft.status_code == 422 and "'mine' belong to another submitter" in theft.json()["reason"]
    assert board.store.submission_count() == 1


def test_accepted_then_duplicate_submission(board):
    token = board.add_submitter("alice")
    client = TestClient(create_app(board))
    auth = {"Authorization": f"Bearer {token}"}
    first = client.post("/api/submissions", content=json.dumps(bundle()), headers=auth)
    assert first.status_code == 201 and first.json()["new_episodes"] == 10
    again = client.post("/api/submissions", content=json.dumps(bundle()), headers=auth)
    assert again.status_code == 200 and again.json() == dict(first.json(), submission=None, new_episodes=0, duplicates=10)
    assert first.json()["counted"] is False


def test_metacharacter_names_are_shown_literally_never_as_markup(board):
    token = board.add_submitter("alice")
    client = TestClient(create_app(board))
    for agents in [(Named(NASTY), "random"), ("minimax", "random")]:
        sent = client.post("/api/submissions", content=json.dumps(bundle(agents, episodes=8)), headers={"Authorization": f"Bearer {token}"})
        assert sent.status_code == 201
    assert client.get("/api/agents/" + NASTY).json()["name"] == NASTY
    index = client.get("/")
    assert index.headers["content-security-policy"].startswith("default-src 'none'")
    env_page = client.get(re.search(r'href="(env/[^"]+\.html)"', index.text).group(1)).text
    agent_link = re.search(r'href="\.\./(agent/[^"]+\.html)">&lt;img', env_page).group(1)
    agent_page = client.get("/" + agent_link).text
    assert "<img" not in index.text
    for html in (env_page, agent_page):
        assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;&#39;; DROP TABLE agents;--" in html
    assert board.store.agent(NASTY)["self_reported"] == {ENV: 8}


def test_twenty_clients_at_once_lose_and_duplicate_nothing(tmp_path):
    db = f"sqlite:///{tmp_path}/lb.db"
    token = Leaderboard(db).add_submitter("alice")
    bodies = [json.dumps(bundle(seed=k % 10)) for k in range(20)]  # clients k and k+10 send the same bundle
    with server(db) as (base, _):
        responses: list[httpx.Response] = []
        threads = [threading.Thread(target=lambda b=b: responses.append(post(base, b, token))) for b in bodies]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert sorted(r.status_code for r in responses) == [200] * 10 + [201] * 10
        assert sum(r.json()["new_episodes"] for r in responses) == 100
        table = httpx.get(base + "/api/leaderboard", params={"env": ENV, "self_reported": "true"}).json()
        assert table["episodes"] == 100
    store = Leaderboard(db).store
    assert store.episode_count() == 100 and store.submission_count() == sum(r.status_code == 201 for r in responses)


def test_server_killed_mid_submission_leaves_no_partial_submission(tmp_path):
    db_path = tmp_path / "lb.db"
    db = f"sqlite:///{db_path}"
    token = Leaderboard(db).add_submitter("alice")
    body = json.dumps(bundle(("minimax", "random"), episodes=2500, seed=5))
    wal = Path(f"{db_path}-wal")
    with server(db) as (base, process):
        baseline = wal.stat().st_size if wal.exists() else 0
        outcome: list[object] = []

        def send() -> None:
            """Submit, noting the status or that the connection dropped."""
            try:
                outcome.append(post(base, body, token, 300).status_code)
            except httpx.TransportError:
                outcome.append("dropped")

        sender = threading.Thread(target=send)
        sender.start()
        # Kill as soon as the submission's transaction starts writing (the WAL grows), mid-insert.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (wal.stat().st_size if wal.exists() else 0) <= baseline:
            time.sleep(0.002)
        os.kill(process.pid, signal.SIGKILL)
        sender.join(timeout=60)
    board = Leaderboard(db)
    episodes, submissions = board.store.episode_count(), board.store.submission_count()
    # All or nothing: the kill may land before or after the commit, never inside a stored half.
    assert (episodes, submissions) in ((0, 0), (2500, 1))
    assert outcome != [201] or (episodes, submissions) == (2500, 1)
    with board.store.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
    board.store.close()
    with server(db) as (base, _):
        response = post(base, body, token)
        assert response.status_code in (200, 201)
        assert httpx.get(base + "/api/leaderboard", params={"env": ENV, "self_reported": "true"}).json()["episodes"] == 2500


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_malformed_ids_and_fields_are_400s_not_500s(tmp_path, database):
    if database == "sqlite":
        url = f"sqlite:///{tmp_path}/lb.db"
        board = Leaderboard(url, bootstrap=10)
        context = None
    else:
        from tests.pg import postgres_server, reset_database

        context = postgres_server()
        url = context.__enter__()
        reset_database(url)
        board = Leaderboard(url, bootstrap=10)
    try:
        token = board.add_submitter("alice")
        auth = {"Authorization": f"Bearer {token}"}
        client = TestClient(create_app(board), raise_server_exceptions=False)
        huge = str(2**64)
        for path in (f"/api/episodes/{huge}", f"/episode/{huge}.html", f"/submission/{huge}.html"):
            answer = client.get(path)
            assert answer.status_code in (400, 404), (path, answer.status_code)
        for env_id in ({"a": 1}, ["parlour/KuhnPoker-v0"]):
            answer = client.post("/api/challenges", json={"env_id": env_id, "agents": ["nash", "random"]}, headers=auth)
            assert answer.status_code == 422 and "env_id must be" in answer.json()["detail"]
        for path in ("/api/agents/a%00b", "/api/leaderboard?env=a%00b", "/agent/a%00b.html", "/submitter/a%00b.html"):
            answer = client.get(path)
            assert answer.status_code == 400 and "NUL" in answer.json()["detail"], path
        forged = bundle()
        forged["summary"]["challenge"] = {"id": "a\x00b", "nonce": "x"}
        answer = client.post("/api/submissions", content=json.dumps(forged), headers=auth)
        assert answer.status_code == 422 and "NUL" in answer.json()["detail"]
    finally:
        board.store.close()
        if context is not None:
            context.__exit__(None, None, None)
