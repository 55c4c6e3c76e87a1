"""The verifiers bridge plays TicTacToe through verifiers' own eval runner, each seat a scripted model behind a loopback server."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("verifiers")

from verifiers.v1.cli.eval.runner import run_eval  # noqa: E402
from verifiers.v1.configs.cli.eval import EvalConfig  # noqa: E402
from verifiers.v1.utils.trace_store import TRACES_FILE  # noqa: E402

import parlour  # noqa: E402
from parlour.bridges.verifiers_env import TASKSET_ID, ParlourEnvConfig, seat_names  # noqa: E402


def scripted_reply(model: str, messages: list[dict]) -> str:
    """The scripted players: model ``first`` takes the first empty cell it is shown, ``last`` thinks aloud and takes the
    last, ``cooperator`` always cooperates."""
    if model == "cooperator":
        return "I cooperate."
    cells = re.findall(r"Empty cells: (.*)\.", messages[-1]["content"])[-1].split(", ")
    if model == "first":
        return cells[0]
    return f"<think>The corner is free.</think> I take {cells[-1]}."


class ScriptedModel(BaseHTTPRequestHandler):
    """An OpenAI-style chat-completions endpoint that answers with :func:`scripted_reply`; it records each request's model."""

    models: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.models.append(request["model"])
        reply = scripted_reply(request["model"], request["messages"])
        body = json.dumps(
            {
                "id": f"chatcmpl-{len(self.models)}",
                "object": "chat.completion",
                "created": 0,
                "model": request["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Quiet: the test reads the traces, not the access log."""


@pytest.fixture
def model_url(monkeypatch) -> Iterator[str]:
    """The scripted endpoint's base URL, and the variable verifiers reads its key from."""
    monkeypatch.setenv("SCRIPTED_MODEL_KEY", "unused")
    ScriptedModel.models = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    thread.join()
    server.server_close()


def evaluate(model_url: str, output_dir: Path, episodes: int, env_id: str = "parlour/TicTacToe-v0", **env: object) -> list:
    """Run verifiers' eval runner on ``env_id`` episodes from seed 7, the run's model ``first``, with ``env``'s settings."""
    config = EvalConfig(
        env={"taskset": {"id": TASKSET_ID, "env_id": env_id, "episodes": episodes, "seed": 7}, **env},
        model="first",
        client={"base_url": model_url, "api_key_var": "SCRIPTED_MODEL_KEY"},
        push=False,
        rich=None,
        output_dir=output_dir,
    )
    return asyncio.run(run_eval(config))


def test_two_seats_through_run_eval(model_url, tmp_path) -> None:
    episodes = evaluate(model_url, tmp_path, 2, learner_seats=[0], frozen={"model": "last"})

    assert len(episodes) == 2
    for episode in episodes:
        assert episode.ok, episode.errors
        traces = {trace.info["seat"]: trace for trace in episode.traces}
        assert set(traces) == {"player_0", "player_1"}
        learner, frozen = traces["player_0"], traces["player_1"]
        assert (learner.agent.name, learner.agent.trainable) == ("learner", True)
        assert (frozen.agent.name, frozen.agent.trainable) == ("frozen", False)
        record = learner.info["record"]
        assert frozen.info["record"] == record
        # first-empty-cell X against last-empty-cell O: X fills row 1 on its third move
        moves = [step["move"] for step in record["steps"]]
        assert moves == ["a1", "c3", "b1", "b3", "c1"]
        assert record["returns"] == {"player_0": 1.0, "player_1": -1.0}
        for seat, trace in traces.items():
            assert trace.reward == trace.rewards["return"].score == record["returns"][seat]
            assert sum(trace.info["turn_rewards"]) == record["returns"][seat]
            assert trace.num_turns == len(trace.info["turn_rewards"]) == {"player_0": 3, "player_1": 2}[seat]
        assert record["agents"] == {"player_0": "verifiers learner: first", "player_1": "verifiers frozen: last"}
        assert "Tic-tac-toe" in learner.task.data.system_prompt and learner.task.data.seat == "player_0"
        # the rules are in the system prompt only; the frozen seat's first turn shows the learner's first move
        users = [message.content for message in frozen.branches[-1].messages if message.role == "user"]
        assert len(users) == 2 and "three marks" not in users[0] and users[0].startswith("▶ player_0 (X) plays a1.")
        parlour.replay(record)
    assert sorted(episode.traces[0].info["record"]["seed"] for episode in episodes) == [7, 8]
    assert sorted(set(ScriptedModel.models)) == ["first", "last"]

    # the run's traces.jsonl, as verifiers wrote it, carries the records too
    lines = [json.loads(line) for line in next(tmp_path.rglob(TRACES_FILE)).read_text().splitlines()]
    written = [trace["info"]["record"] for line in lines for trace in line["traces"]]
    assert len(written) == 4
    for record in written:
        parlour.replay(record)


def test_vf_eval_loads_the_installed_taskset_in_another_process(model_url, tmp_path) -> None:
    # verifiers' own CLI, run from a folder outside the checkout with no PYTHONPATH: it finds the taskset by importing
    # the installed top-level module parlour_verifiers, as any other process would.
    vf_eval = Path(sys.executable).with_name("vf-eval")
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    argv = [
        str(vf_eval),
        TASKSET_ID,
        "--env.taskset.env-id",
        "parlour/TicTacToe-v0",
        "--env.taskset.episodes",
        "1",
        "--env.taskset.seed",
        "7",
        "--env.learner-seats",
        "1",
        "--env.frozen.model",
        "first",
        "--model",
        "last",
        "--client.base-url",
        model_url,
        "--client.api-key-var",
        "SCRIPTED_MODEL_KEY",
        "--no-push",
        "--no-rich",
        "--output-dir",
        str(tmp_path / "out"),
    ]
    done = subprocess.run(argv, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = next((tmp_path / "out").rglob(TRACES_FILE)).read_text().splitlines()
    traces = {trace["info"]["seat"]: trace for trace in json.loads(line)["traces"]}
    assert {seat: trace["agent"]["trainable"] for seat, trace in traces.items()} == {"player_0": False, "player_1": True}
    record = traces["player_1"]["info"]["record"]
    assert record["agents"] == {"player_0": "verifiers frozen: first", "player_1": "verifiers learner: last"}
    assert [step["move"] for step in record["steps"]] == ["a1", "c3", "b1", "b3", "c1"]
    parlour.replay(record)


def test_self_play_seat_out_of_turns_forfeits(model_url, tmp_path) -> None:
    (episode,) = evaluate(model_url, tmp_path, 1, learner_seats=["player_0", "player_1"], learner={"max_turns": 2})
    traces = {trace.info["seat"]: trace for trace in episode.traces}
    assert all(trace.agent.name == "learner" and trace.agent.trainable for trace in traces.values())
    record = traces["player_0"].info["record"]
    # both seats take the first empty cell; player_0 has no turn left for its third move and forfeits it
    assert [step["move"] for step in record["steps"]] == ["a1", "b1", "c1", "a2", None]
    assert record["steps"][-1]["forfeit"] and "max_turns" in record["steps"][-1]["failure"]
    assert record["returns"] == {"player_0": -1.0, "player_1": 1.0}
    assert record["turn_rewards"] == {"player_0": [0.0, -1.0], "player_1": [0.0, 1.0]}
    assert [traces[seat].num_turns for seat in ("player_0", "player_1")] == [2, 2]
    assert traces["player_0"].stop_condition == "max_turns" and episode.ok
    assert {seat: trace.reward for seat, trace in traces.items()} == record["returns"]
    parlour.replay(record)


def test_simultaneous_moves_in_self_play(model_url, tmp_path) -> None:
    (episode,) = evaluate(model_url, tmp_path, 1, "parlour/IteratedPrisonersDilemma-v0", learner_seats=[0, 1], learner={"model": "cooperator"})
    assert episode.ok, episode.errors
    record = episode.traces[0].info["record"]
    rounds = len(record["steps"]) // 2
    assert rounds > 1 and {step["move"] for step in record["steps"]} == {"cooperate"}
    for trace in episode.traces:
        assert trace.agent.trainable and trace.num_turns == rounds
        assert trace.info["turn_rewards"] == [3.0] * rounds and trace.reward == record["returns"][trace.info["seat"]] == 3.0 * rounds
    parlour.replay(record)


def test_unknown_seat_or_extraction_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown extraction 'xml'"):
        ParlourEnvConfig(taskset={"id": TASKSET_ID}, extraction="xml")
    assert seat_names(["buyer", "seller"], [1, "buyer"]) == {"buyer", "seller"}
    with pytest.raises(ValueError, match="no seat 'judge'"):
        seat_names(["buyer", "seller"], ["judge"])
    with pytest.raises(ValueError, match="no seat 2"):
        seat_names(["buyer", "seller"], [2])
