"""The OpenEnv server (parlour serve), driven by the released openenv-core client over 127.0.0.1.

Every episode is played by OpenEnv's own client classes (GenericEnvClient and its sync wrapper) against the
server in a thread; records come back in the last observation and must replay, agents' moves included.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("openenv.core", reason="pip install 'parlour[bridges]'")

import gymnasium
import requests
import websockets
from openenv.core import GenericEnvClient

import parlour
from parlour.bridges.openenv_server import BackgroundServer, create_app

TTT = "parlour/TicTacToe-v0"
SEARCH = "parlour/Search-v0"


async def play(url: str, env_id: str, spec: str, seed: int, **reset: object) -> tuple[list[float], dict]:
    """One episode through GenericEnvClient with a parlour agent choosing from the served observations."""
    agent = parlour.make_agent(spec, env_id=env_id)
    agent.reset(seed=seed)
    async with GenericEnvClient(base_url=url) as client:
        result = await client.reset(seed=seed, **reset)
        rewards = [result.reward]
        while not result.done:
            result = await client.step({"text": agent.act(result.observation)})
            rewards.append(result.reward)
        return rewards, result.observation["record"]


def test_tictactoe_episode_rewards_and_a_record_that_replays_with_the_served_agent():
    with BackgroundServer(create_app(TTT, opponent="minimax", max_sessions=2)) as url:
        rewards, record = asyncio.run(play(url, TTT, "random", seed=5, name="my-policy"))
    assert record["agents"] == {"player_0": "my-policy", "player_1": "minimax"}
    assert sum(rewards) == record["returns"]["player_0"] and rewards[-1] == record["returns"]["player_0"]
    assert record["returns"]["player_0"] <= 0  # minimax never loses
    # The record's turn rewards are the session's step rewards, the reset's counted toward the first turn.
    assert record["turn_rewards"]["player_0"] == [(rewards[0] or 0.0) + rewards[1], *rewards[2:]]
    assert sum(record["turn_rewards"]["player_1"]) == record["returns"]["player_1"]
    # The server's seat really was minimax: replay asks a fresh minimax, reseeded from the record, for every move.
    parlour.replay(record, agents={"player_1": parlour.make_agent("minimax", env_id=TTT)})
    tampered = json.loads(json.dumps(record))
    tampered["returns"]["player_0"] = 1.0
    with pytest.raises(parlour.ReplayMismatch):
        parlour.replay(tampered)


def test_a_served_episode_is_the_gymnasium_faces_episode_of_the_same_seed():
    with BackgroundServer(create_app(TTT, opponent="random")) as url:
        _, record = asyncio.run(play(url, TTT, "minimax", seed=21))
    env = gymnasium.make(TTT, opponent="random").unwrapped
    agent = parlour.make_agent("minimax", env_id=TTT)
    agent.reset(seed=21)
    env.reset(seed=21)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(agent.act(env.match.agent_observation(env.player)))
        done = terminated or truncated
    assert [step["move"] for step in record["steps"]] == [step["move"] for step in env.record()["steps"]]
    assert record["agent_seeds"] == env.record()["agent_seeds"]


def test_a_reset_picks_the_seat_and_the_sync_client_plays_it():
    with BackgroundServer(create_app(TTT, opponent="random")) as url:
        agent = parlour.make_agent("minimax", env_id=TTT)
        agent.reset(seed=1)
        with GenericEnvClient(base_url=url).sync() as client:
            result = client.reset(seed=3, seat="player_1")
            assert result.observation["player"] == "player_1" and result.observation["acting"]
            assert result.observation["view"]["board"].count(-1) == 8  # X has moved
            while not result.done:
                result = client.step({"text": agent.act(result.observation)})
            state = client.state()
    record = result.observation["record"]
    assert state["seat"] == "player_1" and state["done"] and state["episode_return"] == record["returns"]["player_1"] >= 0
    parlour.replay(record, agents={"player_0": parlour.make_agent("random", env_id=TTT)})


def test_search_episode_with_tools_listed_in_the_schema_and_observations():
    with BackgroundServer(create_app(SEARCH, max_sessions=2)) as url:
        schema = requests.get(f"{url}/schema", timeout=10).json()
        assert [tool["function"]["name"] for tool in schema["action"]["tools"]] == ["search", "open", "answer"]

        async def tool_call_then_finish():
            agent = parlour.make_agent("oracle", env_id=SEARCH)
            agent.reset(seed=0)
            async with GenericEnvClient(base_url=url) as client:
                result = await client.reset(seed=11)
                assert [tool["function"]["name"] for tool in result.observation["tools"]] == ["search", "open", "answer"]
                first = await client.step({"text": agent.act(result.observation)})
                # A tool call is answered to the caller at once: still its turn, the result in its messages.
                assert not first.done and first.observation["acting"] and first.reward == 0
                assert first.observation["messages"][0]["kind"] == "tool_result"
                result = first
                while not result.done:
                    result = await client.step({"text": agent.act(result.observation)})
                return result

        result = asyncio.run(tool_call_then_finish())
    record = result.observation["record"]
    assert result.reward == record["returns"]["player_0"] == 1.0
    assert any(step.get("calls") and step["calls"][0]["name"] == "search" for step in record["steps"])
    parlour.replay(record)


def test_concurrent_sessions_up_to_the_cap_then_capacity_reached():
    app = create_app(TTT, opponent="minimax", max_sessions=8)
    with BackgroundServer(app) as url:

        async def full_house():
            results = await asyncio.gather(*(play(url, TTT, "random", seed) for seed in range(8)))
            return results

        async def one_too_many():
            clients = [GenericEnvClient(base_url=url) for _ in range(8)]
            try:
                for client in clients:
                    await client.connect()
                    await client.reset(seed=0)
                # The server answers a session past the cap at once, before any message, and closes it.
                async with websockets.connect(url.replace("http", "ws") + "/ws") as refused:
                    answer = json.loads(await refused.recv())
                assert answer["type"] == "error" and answer["data"]["code"] == "CAPACITY_REACHED"
            finally:
                for client in clients:
                    await client.close()

        results = asyncio.run(full_house())
        asyncio.run(one_too_many())
    assert len({json.dumps(record["steps"]) for _, record in results}) > 1
    for rewards, record in results:
        assert sum(rewards) == record["returns"]["player_0"]
        parlour.replay(record, agents={"player_1": parlour.make_agent("minimax", env_id=TTT)})


def wait_until(predicate, what: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_a_client_that_disconnects_mid_episode_frees_its_session():
    app = create_app(TTT, opponent="minimax", max_sessions=1)
    server = app.state.openenv
    with BackgroundServer(app) as url:

        async def vanish():
            # OpenEnv's payloads straight on the socket, then the connection drops without a close message.
            async with websockets.connect(url.replace("http", "ws") + "/ws") as socket_:
                await socket_.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
                first = json.loads(await socket_.recv())
                move = first["data"]["observation"]["legal_moves"][0]
                await socket_.send(json.dumps({"type": "step", "data": {"text": move}}))
                assert not json.loads(await socket_.recv())["data"]["done"]
                assert server.active_sessions == 1
                socket_.transport.abort()

        asyncio.run(vanish())
        wait_until(lambda: server.active_sessions == 0, "the server kept the session of a client that disconnected")
        rewards, record = asyncio.run(play(url, TTT, "random", seed=2))
    parlour.replay(record)


def test_two_clients_play_each_other_and_get_the_same_record():
    with BackgroundServer(create_app(TTT, opponent="client", max_sessions=2)) as url:

        async def match():
            return await asyncio.gather(play(url, TTT, "minimax", seed=1, name="trainer-a"), play(url, TTT, "random", seed=2, name="trainer-b"))

        (rewards_a, record_a), (rewards_b, record_b) = asyncio.run(match())
    assert record_a == record_b
    assert sorted(record_a["agents"].values()) == ["trainer-a", "trainer-b"]
    seat_a = next(seat for seat, name in record_a["agents"].items() if name == "trainer-a")
    seat_b = next(seat for seat in record_a["players"] if seat != seat_a)
    assert sum(rewards_a) == record_a["returns"][seat_a] >= 0 and sum(rewards_b) == record_a["returns"][seat_b]
    parlour.replay(record_a)


def test_a_paired_client_that_leaves_forfeits_and_the_other_gets_the_record():
    app = create_app(TTT, opponent="client", max_sessions=2)
    hall = app.state.hall
    with BackgroundServer(app) as url:

        async def desert():
            async with GenericEnvClient(base_url=url) as stayer:
                async with GenericEnvClient(base_url=url) as leaver:
                    # The leaver arrives first, so it is X and to move when the stayer's arrival starts the game.
                    leaving = asyncio.create_task(leaver.reset(seed=4))
                    while hall.waiting is None:
                        await asyncio.sleep(0.01)
                    staying = asyncio.create_task(stayer.reset(seed=4))
                    assert (await leaving).observation["player"] == "player_0"
                # The leaver has gone without moving: its seat forfeits, which ends the stayer's wait at reset.
                return await staying

        result = asyncio.run(desert())
    record = result.observation["record"]
    assert result.done and result.observation["player"] == "player_1" and result.reward == 1.0
    assert record["steps"] == [dict(record["steps"][0], player="player_0", forfeit=True)]
    parlour.replay(record)


def test_a_lone_client_waiting_for_a_partner_times_out_with_the_fix():
    with BackgroundServer(create_app(TTT, opponent="client", pair_timeout=0.2)) as url:
        with pytest.raises(RuntimeError, match="no other client joined within 0.2 s"):
            with GenericEnvClient(base_url=url).sync() as client:
                client.reset(seed=0)


def test_openenv_http_routes_and_its_own_validator():
    with BackgroundServer(create_app(TTT, opponent="minimax")) as url:
        assert requests.get(f"{url}/health", timeout=10).json() == {"status": "healthy"}
        metadata = requests.get(f"{url}/metadata", timeout=10).json()
        assert metadata["name"] == TTT and metadata["version"] == "0"
        reset = requests.post(f"{url}/reset", json={"seed": 3}, timeout=10).json()
        assert reset["observation"]["legal_moves"] and reset["done"] is False and reset["reward"] == 0
        step = requests.post(f"{url}/step", json={"action": {"text": "b2"}}, timeout=10)
        assert step.status_code == 409 and "/ws" in step.json()["detail"]
        assert requests.post(f"{url}/step", json={"action": {"move": "b2"}}, timeout=10).status_code == 422
        report = subprocess.run([sys.executable, "-m", "openenv.cli", "validate", "--url", url], capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stdout + report.stderr
    assert json.loads(report.stdout)["passed"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_parlour_serve_command_serves_an_episode():
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "parlour.cli",
        "serve",
        TTT,
        "--port",
        str(port),
        "--max-sessions",
        "2",
        "--opponent",
        "minimax",
        "--max-sessions-per-client",
        "1",
        "--idle-timeout",
        "30",
        "--turn-timeout",
        "10",
        "--sandbox-memory-mb",
        "2048",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}"

        def healthy() -> bool:
            assert process.poll() is None, process.communicate()
            try:
                return requests.get(f"{url}/health", timeout=1).ok
            except requests.ConnectionError:
                return False

        wait_until(healthy, "parlour serve did not come up", seconds=60)
        rewards, record = asyncio.run(play(url, TTT, "random", seed=9))
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert record["agents"]["player_1"] == "minimax"
    parlour.replay(record, agents={"player_1": parlour.make_agent("minimax", env_id=TTT)})


def test_bad_opponent_spec_fails_before_serving():
    with pytest.raises((KeyError, ValueError), match="nonesuch"):
        create_app(TTT, opponent="nonesuch")
