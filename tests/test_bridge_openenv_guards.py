"""The OpenEnv server's guards (parlour serve): bad reset arguments, idle and turn timeouts, the per-client cap and
the sandboxes' memory budget, driven by the released openenv-core client and raw WebSockets over 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

pytest.importorskip("openenv.core", reason="pip install 'parlour[bridges]'")

import requests  # noqa: E402
import websockets  # noqa: E402
from openenv.core import GenericEnvClient  # noqa: E402

import parlour  # noqa: E402
from parlour.bridges.openenv_server import BackgroundServer, create_app  # noqa: E402

TTT = "parlour/TicTacToe-v0"
MAX = "9223372036854775807"


def ws_url(url: str) -> str:
    return url.replace("http", "ws") + "/ws"


def wait_until(predicate, what: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


# ------------------------------------------------------------------ bad reset arguments

BAD_RESETS = [
    ('{"seed": NaN}', "seed"),
    ('{"seed": Infinity}', "seed"),
    ('{"seed": -Infinity}', "seed"),
    ('{"seed": 1.5}', "seed"),
    ('{"seed": -1}', "seed"),
    ('{"seed": 9223372036854775808}', "seed"),
    ('{"seed": [1]}', "seed"),
    ('{"seed": 0, "seat": 7}', "seat"),
    ('{"seed": 0, "seat": "x"}', "seat"),
    ('{"seed": 0, "seat": -1}', "seat"),
    ('{"seed": 0, "seat": true}', "seat"),
    ('{"seed": 0, "seat": 1.0}', "seat"),
    ('{"seed": 0, "name": [1]}', "name"),
    ('{"seed": 0, "name": ""}', "name"),
    ('{"seed": 0, "colour": "red"}', "colour"),
    ('{"episode_id": 5}', "episode_id"),
]


def test_http_reset_with_a_bad_argument_is_a_422_that_names_the_field():
    with BackgroundServer(create_app(TTT, opponent="random")) as url:
        answers = [requests.post(f"{url}/reset", data=body, headers={"content-type": "application/json"}, timeout=10) for body, _ in BAD_RESETS]
        assert requests.post(f"{url}/reset", json={"seed": 3, "seat": "player_1"}, timeout=10).ok
        assert requests.post(f"{url}/reset", json={"seed": int(MAX), "seat": 1, "name": "mine"}, timeout=10).ok
    for (body, field), answer in zip(BAD_RESETS, answers):
        assert answer.status_code == 422, (body, answer.status_code, answer.text)
        errors = answer.json()["detail"]
        assert any(error["loc"][-1] == field and error["msg"] for error in errors), (body, errors)


def test_websocket_reset_with_a_bad_argument_is_an_error_that_names_the_field_and_the_session_goes_on():
    async def session(url: str) -> list[str]:
        messages = []
        async with websockets.connect(ws_url(url)) as socket_:
            for body, _ in BAD_RESETS:
                await socket_.send('{"type": "reset", "data": ' + body + "}")
                answer = json.loads(await socket_.recv())
                assert answer["type"] == "error", (body, answer)
                messages.append(answer["data"]["message"])
            await socket_.send(json.dumps({"type": "reset", "data": {"seed": 3}}))
            assert json.loads(await socket_.recv())["type"] == "observation"
        return messages

    with BackgroundServer(create_app(TTT, opponent="random")) as url:
        messages = asyncio.run(session(url))
    for (body, field), message in zip(BAD_RESETS, messages):
        assert message.startswith(field), (body, message)
    assert messages[0] == f"seed must be an integer from 0 to {MAX}, got nan"
    assert messages[7] == "seat must be one of ['player_0', 'player_1'] or an index from 0 to 1, got 7"


# ------------------------------------------------------------------ idle sessions


def test_an_idle_session_is_closed_and_its_slot_freed():
    app = create_app(TTT, opponent="minimax", max_sessions=1, idle_timeout=0.3)
    server = app.state.openenv
    with BackgroundServer(app) as url:

        async def idle():
            async with websockets.connect(ws_url(url)) as socket_:
                await socket_.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
                assert json.loads(await socket_.recv())["type"] == "observation"
                # No message for longer than the idle timeout: the server says why, then closes the session.
                told = json.loads(await asyncio.wait_for(socket_.recv(), 10))
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await asyncio.wait_for(socket_.recv(), 10)
                return told, closed.value

        told, closed = asyncio.run(idle())
        wait_until(lambda: server.active_sessions == 0, "the idle session kept its slot")
        # The only slot is free again for the next client.
        with GenericEnvClient(base_url=url).sync() as client:
            assert not client.reset(seed=2).done
    assert told["type"] == "error" and told["data"]["code"] == "IDLE_TIMEOUT"
    assert "no message for 0.3 s" in told["data"]["message"] and "--idle-timeout" in told["data"]["message"]
    assert closed.rcvd.code == 1001 and "idle" in closed.rcvd.reason


def test_a_session_that_keeps_talking_is_not_idle():
    # A message every gap_s, well inside the idle timeout (room for a loaded machine), in a session that lasts three
    # timeouts and more: only the gap since the last message may count.
    idle_s, gap_s = 1.5, 0.3
    with BackgroundServer(create_app(TTT, opponent="random", idle_timeout=idle_s)) as url:
        with GenericEnvClient(base_url=url).sync() as client:
            started, records = time.monotonic(), []
            result = client.reset(seed=0)
            while not result.done or time.monotonic() - started < 3 * idle_s:
                time.sleep(gap_s)
                if result.done:
                    records.append(result.observation["record"])
                    result = client.reset(seed=len(records))
                else:
                    result = client.step({"text": result.observation["legal_moves"][0]})
            records.append(result.observation["record"])
    assert len(records) >= 2
    for record in records:
        parlour.replay(record)


# ------------------------------------------------------------------ one client, many sessions


def test_one_client_address_gets_at_most_its_share_of_the_sessions():
    app = create_app(TTT, opponent="random", max_sessions=4, max_sessions_per_client=2)
    server = app.state.openenv
    with BackgroundServer(app) as url:

        async def crowd():
            async with websockets.connect(ws_url(url)) as first, websockets.connect(ws_url(url)) as second:
                for socket_ in (first, second):
                    await socket_.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
                    assert json.loads(await socket_.recv())["type"] == "observation"
                # A header that claims another address changes nothing: the cap counts the connection's own peer.
                async with websockets.connect(ws_url(url), additional_headers={"X-Forwarded-For": "10.1.2.3"}) as third:
                    refused = json.loads(await third.recv())
                    with pytest.raises(websockets.ConnectionClosed) as closed:
                        await third.recv()
                # Another address (all of 127.0.0.0/8 is this machine) still gets a session.
                async with websockets.connect(ws_url(url), local_addr=("127.0.0.2", 0)) as other:
                    await other.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
                    assert json.loads(await other.recv())["type"] == "observation"
                    assert server.active_sessions == 3
                return refused, closed.value

        refused, closed = asyncio.run(crowd())
    assert refused["type"] == "error" and refused["data"]["code"] == "CAPACITY_REACHED"
    assert "127.0.0.1 already holds 2 sessions" in refused["data"]["message"]
    assert "--max-sessions-per-client" in refused["data"]["message"]
    assert closed.rcvd.code == 1013


# ------------------------------------------------------------------ a silent partner


def test_a_partner_who_does_not_move_within_the_turn_timeout_forfeits_and_the_other_is_released():
    app = create_app(TTT, opponent="client", max_sessions=2, turn_timeout=0.5)
    hall = app.state.hall
    with BackgroundServer(app) as url:

        async def silent_partner():
            async with GenericEnvClient(base_url=url) as silent, GenericEnvClient(base_url=url) as waiting:
                first = asyncio.create_task(silent.reset(seed=4))
                while hall.waiting is None:
                    await asyncio.sleep(0.01)
                second = asyncio.create_task(waiting.reset(seed=4))
                assert (await first).observation["acting"]
                # The silent client never moves: the waiting one is released once the turn timeout has passed.
                released = await asyncio.wait_for(second, 20)
                with pytest.raises(RuntimeError) as late:
                    await silent.step({"text": "b2"})
                return released, str(late.value)

        released, late = asyncio.run(silent_partner())
    record = released.observation["record"]
    assert released.done and released.reward == 1.0 and released.observation["player"] == "player_1"
    assert record["steps"] == [dict(record["steps"][0], player="player_0", forfeit=True)]
    assert "did not move within 0.5 s" in record["steps"][0]["failure"]
    assert "forfeited" in late and "did not move within 0.5 s" in late
    parlour.replay(record)


# ------------------------------------------------------------------ the sandboxes' memory


def test_coding_sessions_share_one_memory_budget_for_their_sandboxes():
    code = "parlour/Code-v0"
    # One Code episode may hold its player's scratch sandbox and a judge's, 512 MB each: a budget for one episode.
    app = create_app(code, sandbox_memory_mb=1024, max_sessions=4)
    with BackgroundServer(app) as url:
        with GenericEnvClient(base_url=url).sync() as first:
            assert not first.reset(seed=0).done
            with GenericEnvClient(base_url=url).sync() as second:
                with pytest.raises(RuntimeError, match="sandbox memory budget") as refused:
                    second.reset(seed=1)
            busy = requests.post(f"{url}/reset", json={"seed": 1}, timeout=60)
        # The first session has gone, and with it its reservation.
        with GenericEnvClient(base_url=url).sync() as third:
            assert not third.reset(seed=1).done
    assert "1024 MB" in str(refused.value) and "--sandbox-memory-mb" in str(refused.value)
    assert busy.status_code == 503 and "sandbox memory budget" in busy.json()["detail"]


def test_games_without_sandboxes_take_nothing_from_the_budget():
    with BackgroundServer(create_app(TTT, opponent="random", sandbox_memory_mb=1)) as url:
        with GenericEnvClient(base_url=url).sync() as first, GenericEnvClient(base_url=url).sync() as second:
            assert not first.reset(seed=0).done and not second.reset(seed=1).done


def test_bad_guard_options_are_refused_before_serving():
    for options, word in [
        ({"idle_timeout": 0}, "idle_timeout"),
        ({"turn_timeout": -1}, "turn_timeout"),
        ({"max_sessions_per_client": 0}, "max_sessions_per_client"),
        ({"sandbox_memory_mb": 0}, "sandbox_memory_mb"),
    ]:
        with pytest.raises(ValueError, match=word):
            create_app(TTT, **options)
