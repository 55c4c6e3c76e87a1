"""Episodes per wall second: one process, ``workers=N``, and Ray on one node and on two nodes, on matched work.

For each game (TicTacToe and Connect Four, minimax against random) this plays
the same episodes with ``parlour.evaluate`` four ways, interleaved for
``--rounds`` rounds in this process:

* one process (``workers=1``);
* ``workers=--cpus`` worker processes;
* Ray, one node of ``--cpus`` CPUs;
* Ray, two nodes of ``--cpus / 2`` CPUs each (at least one).

The Ray clusters are started here with ``ray start --block`` on this
machine's loopback (127.0.0.2 for the one-node cluster, 127.0.0.4 and
127.0.0.5 for the two-node one), with token auth and a token made for the
run, and ended when the benchmark ends. They stay in this process's session:
Linux gives each session (autogroup) a fair share of a busy machine, so nodes
in sessions of their own would be given more CPU than the one-process run. Each Ray run plays once from a fresh
connection (``cold``: what ``parlour eval --ray ADDRESS`` pays past its
imports: joining the cluster, Ray starting the worker processes, their import
of parlour and first fill of the agents' caches) and once more on the same connection (``warm``: a driver that
evaluates again, as a trainer does, finds the workers ready). Every run must
give the same records (checked), so the work is the same. Wall time is
``time.perf_counter``.

Printed per game: episodes per wall second of each way (median and range over
the rounds), and each way's ratio to one process, round by round (median and
range), with the load average of the machine before each round. Target (issue
37): Ray with 2 CPUs at least 1.6x one process (median) and never below 0.9x,
on warm runs; a miss is flagged (cold runs are printed beside them). The figures mean something only on a machine whose
cores are not wanted by other work: the load average says how busy it was.

Run: ``.venv/bin/python benchmarks/ray_scaling.py [--rounds 3] [--cpus 2] [--ttt 2000] [--c4 200]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The clusters started here want this token; it is set before Ray is imported, which reads it once.
TOKEN = secrets.token_hex(32)
os.environ.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=TOKEN)
os.environ.pop("RAY_ADDRESS", None)

# Imported after the auth settings above, which Ray reads once on import (hence E402).
import ray  # noqa: E402

import parlour  # noqa: E402

if TYPE_CHECKING:
    from parlour.envs.core.record_types import Record

#: A warm Ray run with the benchmark's CPUs over one process, median over the rounds, at least (issue 37).
RAY_TARGET = 1.6
#: A warm Ray run over one process in any round, at least.
RAY_FLOOR = 0.9
AGENTS = ["minimax", "random"]


def free_port(host: str) -> int:
    """A TCP port free on ``host`` just now."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def clusters(cpus: int) -> Iterator[dict[str, str]]:
    """Start the one-node and the two-node cluster on loopback; their addresses by name. Ended on leaving, even on failure."""
    ray_cli = shutil.which("ray", path=os.path.dirname(sys.executable))
    if ray_cli is None:
        raise SystemExit("the ray command is not installed beside this Python: pip install 'parlour[ray]'")
    temp = Path(tempfile.mkdtemp(prefix="ray"))  # short: Ray's socket paths must fit in 107 characters
    nodes: list[subprocess.Popen[bytes]] = []

    def start(ip: str, node_cpus: int, *role: str) -> None:
        log = temp / f"{ip}.log"
        args = [ray_cli, "start", "--block", *role, f"--node-ip-address={ip}", f"--num-cpus={node_cpus}", "--disable-usage-stats"]
        args += [f"--temp-dir={temp / ip}", f"--dashboard-agent-listen-port={free_port(ip)}"]
        with log.open("wb") as out:
            nodes.append(subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, process_group=0))
        deadline = time.monotonic() + 300
        while b"Ray runtime started" not in log.read_bytes():
            if nodes[-1].poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the Ray node on {ip} did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.5)

    def head(ip: str, node_cpus: int) -> str:
        port = free_port(ip)
        start(ip, node_cpus, "--head", f"--port={port}", "--include-dashboard=false")
        return f"{ip}:{port}"

    try:
        one = head("127.0.0.2", cpus)
        two = head("127.0.0.4", max(1, cpus // 2))
        start("127.0.0.5", max(1, cpus - cpus // 2), f"--address={two}")
        yield {"ray 1 node": one, "ray 2 nodes": two}
    finally:
        for process in reversed(nodes):
            # Every process of a node is in the process group of its `ray start`, started here.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        shutil.rmtree(temp, ignore_errors=True)


def timed(env_id: str, episodes: int, **options: Any) -> tuple[float, list[Record]]:
    """Wall seconds of one ``parlour.evaluate`` of ``episodes`` episodes with ``options``, and its records."""
    started = time.perf_counter()
    records = parlour.evaluate(env_id, AGENTS, episodes=episodes, progress=False, **options).records
    return time.perf_counter() - started, records


def spread(values: list[float], digits: int = 2) -> str:
    """Median and range of ``values``."""
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}-{max(values):.{digits}f}]"


def main() -> None:
    """Time the four ways per game in interleaved rounds and print episodes per second and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of each Ray cluster and the workers run's workers (default 2)")
    parser.add_argument("--ttt", type=int, default=2000, help="TicTacToe episodes (default 2000)")
    parser.add_argument("--c4", type=int, default=200, help="Connect Four episodes (default 200)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    games = [("parlour/TicTacToe-v0", args.ttt), ("parlour/ConnectFour-v0", args.c4)]
    print(f"{' vs '.join(AGENTS)}, {args.rounds} interleaved rounds, {os.cpu_count()} cores here, Ray clusters of {args.cpus} CPUs\n")
    missed = 0
    with clusters(args.cpus) as addresses:
        for env_id, episodes in games:
            # Untimed: this process imports the game and fills the agents' caches (minimax memoises positions) once,
            # as a fresh worker or Ray worker process does in the runs that count its start.
            timed(env_id, episodes)
            walls: dict[str, list[float]] = {}
            loads = []
            for _ in range(args.rounds):
                loads.append(os.getloadavg()[0])
                runs = {"1 process": timed(env_id, episodes), f"workers={args.cpus}": timed(env_id, episodes, workers=args.cpus)}
                for name, address in addresses.items():
                    try:
                        runs[f"{name} cold"] = timed(env_id, episodes, executor="ray", ray_address=address)
                        runs[f"{name} warm"] = timed(env_id, episodes, executor="ray", ray_address=address)
                    finally:
                        ray.shutdown()
                reference = runs["1 process"][1]
                assert all(records == reference for _, records in runs.values()), "a run played other episodes"
                for name, (wall, _) in runs.items():
                    walls.setdefault(name, []).append(wall)
            print(f"{env_id}, {episodes} episodes (load average before each round: {', '.join(f'{load:.1f}' for load in loads)}):")
            base = walls["1 process"]
            for name, times in walls.items():
                ratios = [one / wall for one, wall in zip(base, times)]
                verdict = ""
                if name.startswith("ray") and name.endswith("warm"):
                    low = min(ratios) < RAY_FLOOR
                    short = statistics.median(ratios) < RAY_TARGET
                    missed += low + short
                    verdict = f"  target >= {RAY_TARGET:g}x, never < {RAY_FLOOR:g}x: {'MISSED' if low or short else 'met'}"
                rates = [episodes / wall for wall in times]
                print(f"  {name:18s} {spread(rates, 0)} episodes/s   x one process {spread(ratios)}{verdict}")
            print()
    print(f"{missed} target(s) missed")


if __name__ == "__main__":
    main()
