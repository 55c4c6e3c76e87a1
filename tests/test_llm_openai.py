"""The OpenAI-compatible backend and the LLM agent against real HTTP servers on loopback."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

import gymnasium
import pytest

import parlour  # noqa: F401  (registers the parlour environments with Gymnasium)
from parlour.wrappers import BackendError, LLMAgent, OpenAIBackend
from parlour.wrappers.backend import estimate_tokens

#: A responder gets the request number and JSON payload and returns (status, body, headers, delay before answering).
Responder = Callable[[int, dict[str, Any]], tuple[int, str, dict[str, str], float]]
MESSAGES = [{"role": "user", "content": "Your move."}]


def chat(content: str, prompt_tokens: int = 11, completion_tokens: int = 3) -> str:
    """A chat completion body."""
    return json.dumps(
        {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
        }
    )


class Log:
    """What the server saw: payloads, headers, arrival times, and the most requests in flight at once."""

    def __init__(self) -> None:
        self.payloads: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()


@contextlib.contextmanager
def serve(responder: Responder) -> Iterator[tuple[str, Log]]:
    """Run a chat-completions server on a free loopback port; yields its base URL and its log."""
    log = Log()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with log.lock:
                index = len(log.payloads)
                log.payloads.append(payload)
                log.headers.append(dict(self.headers))
                log.times.append(time.monotonic())
                log.in_flight += 1
                log.max_in_flight = max(log.max_in_flight, log.in_flight)
            status, body, headers, delay = responder(index, payload)
            time.sleep(delay)
            with log.lock:
                log.in_flight -= 1
            data = body.encode()
            # The client may have given up (timeout test); a closed socket is expected then.
            with contextlib.suppress(OSError):
                self.send_response(status)
                for key, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", log
    finally:
        server.shutdown()
        server.server_close()


def backend(url: str, **kwargs: Any) -> OpenAIBackend:
    """A backend with fast retries for tests."""
    options: dict[str, Any] = {"backoff": 0.01, "max_backoff": 1.0, "timeout": 5.0, "max_attempts": 3}
    return OpenAIBackend("tiny", url, **{**options, **kwargs})


def test_500_then_200_is_retried() -> None:
    def responder(index: int, payload: dict[str, Any]) -> tuple[int, str, dict[str, str], float]:
        return (500, "boom", {}, 0.0) if index == 0 else (200, chat("b2", 17, 2), {}, 0.0)

    with serve(responder) as (url, log):
        completion = backend(url).complete(MESSAGES)
    assert (completion.text, completion.prompt_tokens, completion.completion_tokens) == ("b2", 17, 2)
    assert len(log.payloads) == 2


def test_429_backs_off_honouring_retry_after() -> None:
    def responder(index: int, payload: dict[str, Any]) -> tuple[int, str, dict[str, str], float]:
        if index == 0:
            return 429, "slow down", {"Retry-After": "0.3"}, 0.0
        if index == 1:
            return 429, "slow down", {}, 0.0
        return 200, chat("ok"), {}, 0.0

    with serve(responder) as (url, log):
        assert backend(url, backoff=0.1, max_attempts=3).complete(MESSAGES).text == "ok"
    first_gap, second_gap = log.times[1] - log.times[0], log.times[2] - log.times[1]
    assert first_gap >= 0.3  # Retry-After beats the 0.1 s backoff
    assert second_gap >= 0.2  # backoff doubles: 0.1 * 2**1


def test_timeout_retries_then_fails_clearly() -> None:
    with serve(lambda index, payload: (200, chat("late"), {}, 2.0)) as (url, log):
        started = time.monotonic()
        with pytest.raises(BackendError, match=rf"{re.escape(url)}/chat/completions failed after 2 attempt\(s\): timed out"):
            # The request's deadline (all tries together) leaves room for both tries to time out on their own.
            backend(url, timeout=0.2, request_deadline=5.0, max_attempts=2).complete(MESSAGES)
        assert time.monotonic() - started < 1.5
        assert len(log.payloads) == 2


@pytest.mark.parametrize("body", ["{not json", json.dumps({"choices": []}), json.dumps({"id": "x"})])
def test_malformed_response_is_a_clear_error(body: str) -> None:
    with serve(lambda index, payload: (200, body, {}, 0.0)) as (url, log):
        with pytest.raises(BackendError, match=rf"{re.escape(url)}/chat/completions returned a malformed chat completion"):
            backend(url).complete(MESSAGES)
    assert len(log.payloads) == 1


def test_client_error_is_not_retried() -> None:
    with serve(lambda index, payload: (401, '{"error": "bad key"}', {}, 0.0)) as (url, log):
        with pytest.raises(BackendError, match=r"failed: HTTP 401: .*bad key"):
            backend(url).complete(MESSAGES)
    assert len(log.payloads) == 1


def test_server_down_names_the_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(BackendError, match=rf"POST {re.escape(url)}/chat/completions failed after 2 attempt\(s\): could not connect"):
        backend(url, max_attempts=2).complete(MESSAGES)


def test_concurrency_limit_is_honoured() -> None:
    with serve(lambda index, payload: (200, chat(f"reply {index}"), {}, 0.15)) as (url, log):
        completions = backend(url, concurrency=2).generate([MESSAGES] * 6)
    assert len(completions) == 6 and len(log.payloads) == 6
    assert log.max_in_flight == 2


def test_api_key_from_environment_and_request_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARLOUR_TEST_KEY", "sk-test")
    with serve(lambda index, payload: (200, chat("ok"), {}, 0.0)) as (url, log):
        backend(url, api_key_env="PARLOUR_TEST_KEY", max_new_tokens=7, temperature=0.5).generate([MESSAGES, MESSAGES], seed=5)
    assert {h["Authorization"] for h in log.headers} == {"Bearer sk-test"}
    assert sorted(p["seed"] for p in log.payloads) == [5, 6]
    assert all(p["model"] == "tiny" and p["messages"] == MESSAGES for p in log.payloads)
    assert all(p["max_tokens"] == 7 and p["temperature"] == 0.5 for p in log.payloads)


def tic_tac_toe_model(index: int, payload: dict[str, Any]) -> tuple[int, str, dict[str, str], float]:
    """A scripted "model": rambles at a new position; after feedback, reasons in <think> and boxes the first legal move."""
    last = payload["messages"][-1]["content"]
    legal = re.search(r"Legal moves: (.*)\.", last)
    if legal is None:
        return 200, chat("Hmm, let me look at the board first.", 50, 9), {}, 0.0
    move = legal.group(1).split(", ")[0]
    return 200, chat(f"<think>a corner? the centre?</think> I play \\boxed{{{move}}}", 60, 12), {}, 0.0


def test_agent_plays_tic_tac_toe_with_retries() -> None:
    with serve(tic_tac_toe_model) as (url, log):
        env = gymnasium.make("parlour/TicTacToe-v0", opponent=f"openai:tiny@{url}")
        agent = env.unwrapped.opponents["player_1"]
        assert agent.name == f"openai:tiny@{url}"  # named after its spec, as an evaluation names it
        observation, info = env.reset(seed=3)
        done = False
        while not done:
            observation, reward, done, truncated, info = env.step(info["legal_moves"][-1])
    replies = [step for step in env.unwrapped.match.steps if step["player"] == "player_1"]
    assert replies and all(step["error"] is None for step in replies)
    stats = agent.stats()
    moves = len(replies)
    assert stats["parse_failures"] == stats["retries"] == moves
    assert stats["calls"] == len(log.payloads) == 2 * moves
    assert stats["prompt_tokens"] == 110 * moves and stats["completion_tokens"] == 21 * moves
    # The retry carries the feedback, and the rambling reply is kept in the history.
    retry = log.payloads[1]["messages"]
    assert retry[0]["role"] == "system" and "Tic-tac-toe" in retry[0]["content"]
    assert [m["role"] for m in retry[-3:]] == ["user", "assistant", "user"]
    assert retry[-2]["content"] == "Hmm, let me look at the board first."
    # Stored replies are stripped of reasoning.
    assert all("<think>" not in m["content"] for m in log.payloads[-1]["messages"])


def test_agent_gives_up_after_max_retries() -> None:
    with serve(lambda index, payload: (200, chat("<think>b2?</think> I pass."), {}, 0.0)) as (url, log):
        agent = LLMAgent(backend(url), max_retries=2)
        observation = {"text": "Board...", "legal_moves": ["a1", "b2"], "player": "player_0", "env_id": "parlour/TicTacToe-v0"}
        assert agent.act(observation) == "I pass."
    assert len(log.payloads) == 3
    assert agent.stats()["parse_failures"] == 3 and agent.stats()["retries"] == 2


def test_conversations_are_kept_per_episode_and_windowed() -> None:
    with serve(lambda index, payload: (200, chat("a1"), {}, 0.0)) as (url, log):
        agent = LLMAgent(backend(url), max_turns=2)
        for turn in range(4):
            observations = [
                {"text": f"episode {e} turn {turn}", "legal_moves": ["a1"], "player": "player_0", "episode": e, "env_id": "x/Y-v0"} for e in (0, 1)
            ]
            assert agent.act_batch(observations) == ["a1", "a1"]
        with pytest.raises(ValueError, match="same \\(episode, player\\)"):
            agent.act_batch([observations[0], observations[0]])
        agent.forget(0)
        assert list(agent.conversations) == [(1, "player_0")]
    last = [p["messages"] for p in log.payloads[-2:]]
    for messages in last:
        episode = re.search(r"episode (\d)", messages[1]["content"]).group(1)
        users = [m["content"] for m in messages if m["role"] == "user"]
        # The first turn stays pinned, the middle ones are dropped, the current one is kept.
        assert users == [f"episode {episode} turn 0", f"(2 earlier turn(s) omitted.)\n\nepisode {episode} turn 3"]
        assert messages[0]["content"].startswith("You are player_0 in the environment x/Y-v0.")


def test_token_budget_drops_old_turns() -> None:
    with serve(lambda index, payload: (200, chat("a1"), {}, 0.0)) as (url, log):
        agent = LLMAgent(backend(url), max_context_tokens=120)
        for turn in range(8):
            agent.act({"text": f"turn {turn} " + "x" * 160, "legal_moves": ["a1"], "player": "p", "env_id": "x/Y-v0"})
    sizes = [agent.backend.count_tokens(p["messages"]) for p in log.payloads]
    assert max(sizes) <= 120
    assert "turn 7" in log.payloads[-1]["messages"][-1]["content"]


@contextlib.contextmanager
def trickle(in_headers: bool, interval: float = 0.5) -> Iterator[str]:
    """A server that answers one byte every ``interval`` seconds, in its headers or its body; yields its base URL."""
    body = chat("x" * 400).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            slow, fast = (head, b"") if in_headers else (b"", head)
            # The client gives up mid-answer: a closed socket is expected.
            with contextlib.suppress(OSError):
                self.wfile.write(fast)
                for index in range(len(slow)):
                    self.wfile.write(slow[index : index + 1])
                    time.sleep(interval)
                for index in range(len(body)):
                    self.wfile.write(body[index : index + 1])
                    time.sleep(interval)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("in_headers", [False, True], ids=["body", "headers"])
def test_a_trickling_server_meets_the_request_deadline(in_headers: bool) -> None:
    """Bytes every half second never trip the 1 s network timeout; the 1.5 s deadline ends the request all the same,
    with no second try, since the deadline covers all of them."""
    with trickle(in_headers) as url:
        started = time.monotonic()
        failure = rf"POST {re.escape(url)}/chat/completions failed after 1 attempt\(s\): .* request deadline of 1\.5s"
        with pytest.raises(BackendError, match=failure):
            backend(url, timeout=1.0, request_deadline=1.5, max_attempts=2).complete(MESSAGES)
        assert 1.5 <= time.monotonic() - started < 3.0


def test_default_deadline_is_twice_the_timeout() -> None:
    assert OpenAIBackend("tiny", "http://127.0.0.1:9/v1", timeout=7.0).request_deadline == 14.0


def retry_after_then_ok(value: Callable[[], str]) -> Responder:
    """A server that answers 429 with ``Retry-After: value()`` once, then a completion."""

    def responder(index: int, payload: dict[str, Any]) -> tuple[int, str, dict[str, str], float]:
        return (429, "slow down", {"Retry-After": value()}, 0.0) if index == 0 else (200, chat("ok"), {}, 0.0)

    return responder


def test_retry_after_in_seconds_is_honoured_beyond_the_backoff_cap() -> None:
    with serve(retry_after_then_ok(lambda: "0.6")) as (url, log):
        assert backend(url, backoff=0.01, max_backoff=0.05).complete(MESSAGES).text == "ok"
    assert 0.6 <= log.times[1] - log.times[0] < 1.2


def test_retry_after_as_an_http_date_is_honoured() -> None:
    from email.utils import formatdate

    # HTTP dates have whole seconds: three seconds ahead is a wait of more than two.
    with serve(retry_after_then_ok(lambda: formatdate(time.time() + 3, usegmt=True))) as (url, log):
        assert backend(url, backoff=0.01, max_backoff=0.05).complete(MESSAGES).text == "ok"
    assert 1.9 <= log.times[1] - log.times[0] < 3.6


def test_retry_after_beyond_the_limit_fails_at_once() -> None:
    with serve(retry_after_then_ok(lambda: "30")) as (url, log):
        started = time.monotonic()
        with pytest.raises(BackendError, match=r"HTTP 429.*asked to wait 30s.*max_retry_after of 5s"):
            backend(url, max_retry_after=5.0).complete(MESSAGES)
        assert time.monotonic() - started < 1.0
    assert len(log.payloads) == 1


def test_non_numeric_usage_is_ignored_and_tokens_are_estimated() -> None:
    body = json.dumps({"choices": [{"message": {"content": "b2"}}], "usage": {"prompt_tokens": "lots", "completion_tokens": None}})
    with serve(lambda index, payload: (200, body, {}, 0.0)) as (url, log):
        completion = backend(url).complete(MESSAGES)
    assert completion.text == "b2"
    assert completion.prompt_tokens == estimate_tokens(MESSAGES)
    assert completion.completion_tokens == estimate_tokens([{"role": "assistant", "content": "b2"}])


@pytest.mark.parametrize(
    "body",
    [
        json.dumps({"choices": [{"message": {"role": "assistant", "content": None}}]}),
        json.dumps({"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": []}}]}),
        json.dumps({"choices": [{"message": {"role": "assistant", "content": 7}}]}),
        '{"choices": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
    ids=["null content", "null content, no tool calls", "number content", "nested 100 000 deep"],
)
def test_responses_without_text_are_malformed(body: str) -> None:
    with serve(lambda index, payload: (200, body, {}, 0.0)) as (url, log):
        with pytest.raises(BackendError, match=rf"{re.escape(url)}/chat/completions returned a malformed chat completion"):
            backend(url).complete(MESSAGES)


def test_tool_calls_without_content_become_json_tool_calls() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"query": "Paris"}'}}
    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]})
    with serve(lambda index, payload: (200, body, {}, 0.0)) as (url, log):
        completion = backend(url).complete(MESSAGES)
    assert json.loads(completion.text) == {"tool": "search", "arguments": {"query": "Paris"}}


def test_deeply_nested_json_in_a_reply_is_an_invalid_action_not_a_crash() -> None:
    reply = '{"move": ' + "[" * 100_000 + '"zz"' + "]" * 100_000 + "}"
    with serve(lambda index, payload: (200, chat(reply), {}, 0.0)) as (url, log):
        agent = LLMAgent(backend(url), max_retries=1)
        observation = {"text": "Board...", "legal_moves": ["a1", "b2"], "player": "player_0", "env_id": "parlour/TicTacToe-v0"}
        assert agent.act(observation) == reply
    assert agent.stats()["parse_failures"] == 2
