"""``parlour serve`` under load: many OpenEnv sessions at once, against the in-process Gymnasium face.

For each case a real ``parlour serve`` process is started on 127.0.0.1 and
``--sessions`` clients (openenv-core's ``GenericEnvClient``, all in this
process on one asyncio loop) each play ``--episodes`` episodes over the
WebSocket session endpoint, a parlour agent choosing every action from the
served observation. Episode ``j`` of session ``i`` uses seed ``1000 * i + j``.
Then, in this same run, the in-process Gymnasium face
(``gymnasium.make(ENV_ID, opponent=...)``) plays the same episodes one after
another with the same client agent, which reads the same observation
(``Match.agent_observation`` of the learner's seat).

A *step* is one action of the client's seat (an OpenEnv ``step``, a
Gymnasium ``step``); tool calls count. Printed per case: sessions, episodes,
steps; served steps per second in total (all steps over the wall time from
the first reset to the last record) and per session (the mean of each
session's steps over its own wall time); the Gymnasium face's steps per
second; and two checks after the clock stops: every served record replays
(``parlour.replay``, the server's agents re-asked for their moves from the
record's seeds) and every served episode made the same moves as the Gymnasium
face's episode of the same seed.

Done-when of issue 23: 64 concurrent sessions of TicTacToe and 8 of Search-v0,
every record replaying. Wall-clock figures: the server, the clients and the
Gymnasium loop share this machine's cores.

Then ``parlour serve`` beside openenv-core's own echo environment (the one its
``openenv init`` template writes: it echoes the message back) served by
openenv-core's ``create_fastapi_app`` in a process of its own, on the same
client path: one ``GenericEnvClient`` session plays ``--echo-episodes``
TicTacToe episodes against the server's ``random`` opponent, a random client
agent choosing each move, and on the echo server makes the same number of
resets and steps with a message of the same length as each move. The two
alternate for ``--echo-rounds`` rounds. The unit is the request (a reset or
a step) per CPU second of the server process and the client together (the
server's from ``/proc``, the client's ``time.process_time``), which the
machine's load disturbs less than wall time; printed: each side's rate, the
median and range of parlour's over the echo's beside its target (issue 37:
at least 0.9x), the server's share of each side's CPU, and each server's
seconds from launch to its first ``/health`` answer.

Run: ``.venv/bin/python benchmarks/serve_throughput.py [--episodes 5] [--cases TicTacToe,Search] [--echo-rounds 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, cast

import gymnasium
import requests
from openenv.core import GenericEnvClient

import parlour
from parlour.envs.core.gym import GymGame


@dataclass
class Case:
    """One served environment: its sessions, who plays the other seats on the server, and the client's agent."""

    label: str
    env_id: str
    sessions: int
    opponent: str | None
    client_agent: str


#: The session index of the untimed warm-up episode, beyond every timed session's.
WARM_UP = 10**6
#: parlour serve's least ratio to openenv-core's echo environment in requests per second (issue 37).
ECHO_TARGET = 0.9

#: openenv-core's echo environment, as its ``openenv init`` template writes it, served on the port given as argv[1].
ECHO_SERVER = """
import sys
from uuid import uuid4

import uvicorn
from openenv.core.env_server import Action, Environment, Observation, State, create_fastapi_app


class EchoAction(Action):
    message: str


class EchoObservation(Observation):
    echoed_message: str
    message_length: int = 0


class EchoEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self):
        self._state = State(episode_id=str(uuid4()), step_count=0)

    def reset(self, seed=None, episode_id=None, **kwargs):
        self._state = State(episode_id=str(uuid4()), step_count=0)
        return EchoObservation(echoed_message="Echo environment ready!", message_length=0, done=False, reward=0.0)

    def step(self, action, timeout_s=None, **kwargs):
        self._state.step_count += 1
        message = action.message
        return EchoObservation(echoed_message=message, message_length=len(message), done=False, reward=len(message) * 0.1,
                               metadata={"original_message": message, "step": self._state.step_count})

    @property
    def state(self):
        return self._state


app = create_fastapi_app(EchoEnvironment, EchoAction, EchoObservation, max_concurrent_envs=4)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""

CASES = [
    Case("TicTacToe", "parlour/TicTacToe-v0", 64, "random", "random"),
    Case("Search", "parlour/Search-v0", 8, None, "oracle"),
]


def free_port() -> int:
    """A port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(case: Case) -> tuple[subprocess.Popen, str]:
    """``parlour serve`` for ``case`` in its own process; returns it and its URL once ``/health`` answers."""
    port = free_port()
    # Every session comes from this one address: the per-client cap must admit them all.
    sessions = ["--max-sessions", str(case.sessions), "--max-sessions-per-client", str(case.sessions)]
    command = [sys.executable, "-m", "parlour.cli", "serve", case.env_id, "--port", str(port), *sessions]
    if case.opponent is not None:
        command += ["--opponent", case.opponent]
    return launch(command, port)


def launch(command: list[str], port: int, quiet: bool = False) -> tuple[subprocess.Popen, str]:
    """Run a server ``command`` listening on ``port``; returns its process and URL once ``/health`` answers.

    ``quiet``: its standard error is dropped too (openenv-core's server logs a traceback for each client that closes).
    """
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL if quiet else None)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{' '.join(command[:4])} exited with status {process.returncode}")
        try:
            if requests.get(f"{url}/health", timeout=1).ok:
                return process, url
        except requests.ConnectionError:
            pass
        if time.monotonic() > deadline:
            process.terminate()
            raise RuntimeError(f"{' '.join(command[:4])} did not answer /health within 120 s")
        time.sleep(0.1)


async def session(url: str, case: Case, index: int, episodes: int) -> tuple[int, float, list[dict]]:
    """One client playing ``episodes`` episodes: its steps, its wall time and the records it got back."""
    agent = parlour.make_agent(case.client_agent, env_id=case.env_id)
    steps, records = 0, []
    start = time.perf_counter()
    async with GenericEnvClient(base_url=url, message_timeout_s=600) as client:
        for episode in range(episodes):
            seed = 1000 * index + episode
            agent.reset(seed=seed)
            result = await client.reset(seed=seed)
            while not result.done:
                result = await client.step({"text": agent.act(result.observation)})
                steps += 1
            records.append(result.observation["record"])
    return steps, time.perf_counter() - start, records


def serve_case(case: Case, episodes: int) -> tuple[int, float, list[float], list[dict]]:
    """Every session of ``case`` at once against a fresh server: steps, wall time, per-session rates, records."""
    process, url = start_server(case)
    try:
        # One untimed episode first: the server loads what the game loads once (Search's corpus and index).
        asyncio.run(session(url, case, WARM_UP, 1))

        async def everyone():
            return await asyncio.gather(*(session(url, case, i, episodes) for i in range(case.sessions)))

        start = time.perf_counter()
        results = asyncio.run(everyone())
        wall = time.perf_counter() - start
    finally:
        process.terminate()
        process.wait(timeout=30)
    steps = sum(s for s, _, _ in results)
    return steps, wall, [s / t for s, t, _ in results], [record for _, _, records in results for record in records]


def gym_case(case: Case, episodes: int) -> tuple[int, float, list[list]]:
    """The same episodes through the in-process Gymnasium face: steps, wall time, and each episode's moves."""
    options: dict[str, Any] = {} if case.opponent is None else {"opponent": case.opponent}
    env = cast(GymGame, gymnasium.make(case.env_id, **options).unwrapped)
    agent = parlour.make_agent(case.client_agent, env_id=case.env_id)
    env.reset(seed=1000 * WARM_UP)
    steps, moves = 0, []
    start = time.perf_counter()
    for index in range(case.sessions):
        for episode in range(episodes):
            seed = 1000 * index + episode
            agent.reset(seed=seed)
            env.reset(seed=seed)
            done = False
            while not done:
                _, _, terminated, truncated, _ = env.step(agent.act(env.match.agent_observation(env.player)))
                done = terminated or truncated
                steps += 1
            moves.append([step["move"] for step in env.match.steps])
    return steps, time.perf_counter() - start, moves


def process_cpu(pid: int) -> float:
    """CPU seconds (user and system, all threads) a process has used so far, from Linux's ``/proc``."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def parlour_client(url: str, episodes: int) -> tuple[int, float, list[list[int]]]:
    """One session playing TicTacToe episodes with a random agent: requests, wall time, each episode's move lengths."""
    agent = parlour.make_agent("random", env_id="parlour/TicTacToe-v0")
    requests_made, plays = 0, []
    start = time.perf_counter()
    async with GenericEnvClient(base_url=url, message_timeout_s=600) as client:
        for episode in range(episodes):
            agent.reset(seed=episode)
            result = await client.reset(seed=episode)
            lengths = []
            while not result.done:
                move = agent.act(result.observation)
                lengths.append(len(move))
                result = await client.step({"text": move})
            requests_made += 1 + len(lengths)
            plays.append(lengths)
    return requests_made, time.perf_counter() - start, plays


async def echo_client(url: str, plays: list[list[int]]) -> tuple[int, float]:
    """One session making the same resets and steps on the echo server, a message as long as each move: requests, wall time."""
    requests_made = 0
    start = time.perf_counter()
    async with GenericEnvClient(base_url=url, message_timeout_s=600) as client:
        for lengths in plays:
            await client.reset()
            for length in lengths:
                await client.step({"message": "x" * length})
            requests_made += 1 + len(lengths)
    return requests_made, time.perf_counter() - start


def echo_comparison(rounds: int, episodes: int) -> None:
    """parlour serve (TicTacToe, random opponent) beside openenv-core's echo environment on the same client path."""
    port = free_port()
    began = time.perf_counter()
    parlour_process, parlour_url = launch([sys.executable, "-m", "parlour.cli", "serve", "parlour/TicTacToe-v0", "--port", str(port)], port)
    parlour_start = time.perf_counter() - began
    port = free_port()
    began = time.perf_counter()
    echo_process, echo_url = launch([sys.executable, "-c", ECHO_SERVER, str(port)], port, quiet=True)
    echo_start = time.perf_counter() - began
    try:
        asyncio.run(parlour_client(parlour_url, 2))  # warm-up: first connections, first episodes
        asyncio.run(echo_client(echo_url, [[1, 1]] * 2))
        rates: dict[str, list[float]] = {"parlour serve": [], "echo": []}
        shares: dict[str, list[float]] = {"parlour serve": [], "echo": []}

        def timed(name: str, process: subprocess.Popen, run: Callable[[], tuple]) -> tuple:
            server, client = process_cpu(process.pid), time.process_time()
            result = run()
            server, client = process_cpu(process.pid) - server, time.process_time() - client
            rates[name].append(result[0] / (server + client))
            shares[name].append(server / (server + client))
            return result

        for _ in range(rounds):
            plays = timed("parlour serve", parlour_process, lambda: asyncio.run(parlour_client(parlour_url, episodes)))[2]
            # mypy cannot type a lambda with a default argument (python/mypy#15459), here binding this round's plays.
            timed("echo", echo_process, lambda plays=plays: asyncio.run(echo_client(echo_url, plays)))  # type: ignore[misc]
    finally:
        for process in (parlour_process, echo_process):
            process.terminate()
            process.wait(timeout=30)
    ratios = [a / b for a, b in zip(rates["parlour serve"], rates["echo"])]
    median = statistics.median(ratios)
    print(f"\nparlour serve beside openenv-core's echo environment, one session, {episodes} TicTacToe episodes per round, {rounds} rounds")
    print("requests per CPU second (server and client): " + ", ".join(f"{name} {statistics.median(r):,.0f}" for name, r in rates.items()))
    print("  the server's share of that CPU: " + ", ".join(f"{name} {statistics.median(r):.0%}" for name, r in shares.items()))
    print(
        f"  parlour serve/echo: {median:.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]  target >= {ECHO_TARGET:g}x: {'met' if median >= ECHO_TARGET else 'MISSED'}"
    )
    print(f"  start-up to the first /health answer: parlour serve {parlour_start:.1f} s, echo {echo_start:.1f} s")


def main() -> None:
    """Run the cases and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=5, help="episodes per session (default 5)")
    parser.add_argument("--cases", default=",".join(c.label for c in CASES), help="comma-separated case labels")
    parser.add_argument("--echo-rounds", type=int, default=5, help="rounds of the comparison with openenv-core's echo environment (0: none)")
    parser.add_argument("--echo-episodes", type=int, default=40, help="TicTacToe episodes per round of that comparison (default 40)")
    args = parser.parse_args()
    chosen = [c for c in CASES if c.label in args.cases.split(",")]
    print(
        f"{'case':<10} {'sessions':>8} {'episodes':>8} {'steps':>6} {'served/s':>9} {'per session/s':>14} {'gym face/s':>10} "
        f"{'served/gym':>10}  replayed  same as gym"
    )
    for case in chosen:
        steps, wall, rates, records = serve_case(case, args.episodes)
        gym_steps, gym_wall, gym_moves = gym_case(case, args.episodes)
        agents = {} if case.opponent is None else {"player_1": parlour.make_agent(case.opponent, env_id=case.env_id)}
        replayed = 0
        for record in records:
            parlour.replay(record, agents=agents)
            replayed += 1
        same = sum([step["move"] for step in record["steps"]] == moves for record, moves in zip(records, gym_moves))
        served, gym = steps / wall, gym_steps / gym_wall
        print(
            f"{case.label:<10} {case.sessions:>8} {len(records):>8} {steps:>6} {served:>9.0f} {sum(rates) / len(rates):>14.1f} "
            f"{gym:>10.0f} {served / gym:>10.2f}  {replayed}/{len(records)}  {same}/{len(records)}"
        )
    if args.echo_rounds:
        echo_comparison(args.echo_rounds, args.echo_episodes)


if __name__ == "__main__":
    main()
