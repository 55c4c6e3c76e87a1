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

Run: ``.venv/bin/python benchmarks/serve_throughput.py [--episodes 5] [--cases TicTacToe,Search]``.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import time
from dataclasses import dataclass

import gymnasium
import requests
from openenv.core import GenericEnvClient

import parlour


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
    command = [sys.executable, "-m", "parlour.cli", "serve", case.env_id, "--port", str(port), "--max-sessions", str(case.sessions)]
    if case.opponent is not None:
        command += ["--opponent", case.opponent]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"parlour serve exited with status {process.returncode}")
        try:
            if requests.get(f"{url}/health", timeout=1).ok:
                return process, url
        except requests.ConnectionError:
            pass
        if time.monotonic() > deadline:
            process.terminate()
            raise RuntimeError("parlour serve did not answer /health within 120 s")
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
    options = {} if case.opponent is None else {"opponent": case.opponent}
    env = gymnasium.make(case.env_id, **options).unwrapped
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


def main() -> None:
    """Run the cases and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=5, help="episodes per session (default 5)")
    parser.add_argument("--cases", default=",".join(c.label for c in CASES), help="comma-separated case labels")
    args = parser.parse_args()
    chosen = [c for c in CASES if c.label in args.cases.split(",")]
    print(f"{'case':<10} {'sessions':>8} {'episodes':>8} {'steps':>6} {'served/s':>9} {'per session/s':>14} {'gym face/s':>10} "
          f"{'served/gym':>10}  replayed  same as gym")
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
        print(f"{case.label:<10} {case.sessions:>8} {len(records):>8} {steps:>6} {served:>9.0f} {sum(rates) / len(rates):>14.1f} "
              f"{gym:>10.0f} {served / gym:>10.2f}  {replayed}/{len(records)}  {same}/{len(records)}")


if __name__ == "__main__":
    main()
