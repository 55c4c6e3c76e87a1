"""When an agent cannot decide (its model server fails), the turn is an invalid action with the reason recorded,
a circuit breaker ends the agent's remaining episodes as forfeits, ``parlour eval`` finishes with a bundle and a
non-zero exit, and rerunning it against a healthy server plays the affected episodes again."""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import parlour
from parlour.cli import main
from parlour.envs.core.agent import AgentFailure
from parlour.evaluation.results import Results

ENV = "parlour/TicTacToe-v0"


def test_a_failure_is_an_invalid_action_with_its_reason_and_replays_from_json():
    match = parlour.Match(parlour.game_class(ENV))
    match.reset(3)
    match.submit("player_0", AgentFailure("HTTP 500 after 4 attempts"))
    step = match.steps[-1]
    assert step["action"] is None and step["failure"] == "HTTP 500 after 4 attempts" and "HTTP 500" in step["error"]
    assert match.acting() == ["player_0"] and not match.over  # the allowance takes over, as for any invalid action
    match.submit("player_0", "b2")
    record = json.loads(json.dumps(match.record()))
    parlour.replay(record)


def test_a_forfeiting_failure_ends_the_episode_at_once_and_replays():
    match = parlour.Match(parlour.game_class(ENV))
    match.reset(3)
    match.submit("player_0", AgentFailure("circuit breaker open", forfeit=True))
    assert match.over and match.outcome.winners == ["player_1"] and match.steps[-1]["forfeit"] is True
    parlour.replay(json.loads(json.dumps(match.record())))
    tampered = match.record()
    del tampered["steps"][0]["forfeit"]  # a failure replayed without its forfeit does not end the game
    with pytest.raises(parlour.ReplayMismatch):
        parlour.replay(tampered)


@contextlib.contextmanager
def chat_server() -> Iterator[tuple[str, dict[str, bool]]]:
    """A chat-completions server on loopback: HTTP 400 while ``state["healthy"]`` is false, else the first empty cell."""
    state = {"healthy": False}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if state["healthy"]:
                prompt = payload["messages"][-1]["content"]
                cell = re.findall(r"Empty cells: ([a-c][1-3])", prompt)[-1]
                body = json.dumps({"choices": [{"message": {"role": "assistant", "content": cell}}]}).encode()
                status = 200
            else:
                body, status = b'{"error": "model is loading"}', 400
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", state
    finally:
        server.shutdown()
        server.server_close()


def test_a_failing_backend_costs_turns_then_trips_the_breaker():
    with chat_server() as (url, _):
        agent = parlour.make_agent(f"openai:tiny@{url}", failure_limit=3, max_attempts=1)
        # One episode at a time, so the steps, read in episode order, are in the order the agent was asked.
        results = parlour.evaluate(ENV, [agent, "random"], episodes=4, seed=0, progress=False, in_flight=1)
    failures = results.failures()
    assert failures["episodes"] == [0, 1, 2, 3] and agent.broken is not None
    steps = [step for record in results.records for step in record["steps"] if "failure" in step]
    assert [bool(step.get("forfeit")) for step in steps[:3]] == [False, False, False]  # three calls, then the breaker
    assert all(step.get("forfeit") and "circuit breaker" in step["failure"] for step in steps[3:])
    assert agent.stats()["calls"] == 3 and agent.stats()["backend_failures"] == 3
    for record in results.records:
        parlour.replay(json.loads(json.dumps(record)))


def test_eval_against_a_dead_server_finishes_with_a_bundle_then_resumes(tmp_path: Path, capsys):
    out = tmp_path / "bundle"
    with chat_server() as (url, state):
        argv = ["eval", ENV, "--agent", f"openai:tiny@{url}", "--opponent", "random", "--episodes", "6", "--out", str(out), "--quiet"]
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert "6 of 6 episode(s) had turns an agent could not decide" in err and "rerun the same command" in err
        summary = json.loads((out / "summary.json").read_text())
        assert summary["failures"]["episodes"] == [0, 1, 2, 3, 4, 5] and any("HTTP 400" in r for r in summary["failures"]["reasons"])

        state["healthy"] = True
        assert main(argv) == 0
    resumed = Results.load(out)
    assert len(resumed.records) == 6 and resumed.failures()["episodes"] == []
    for record in resumed.records:
        parlour.replay(json.loads(json.dumps(record)))
