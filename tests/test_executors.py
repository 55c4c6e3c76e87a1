"""Where episodes are played: worker processes (records sent in lists, one process where workers cannot pay off) and a Ray cluster."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import parlour
from parlour.evaluation import rollout

TTT = "parlour/TicTacToe-v0"


class CountingBatcher:
    """A batching agent (it has ``act_batch``) that plays the first legal move and counts how many copies of it were built."""

    name = "batcher"

    def __init__(self) -> None:
        self.builds = 1

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Every unpickling is a copy built in another process (a worker, a Ray actor).
        self.__dict__.update(state)

    def act(self, observation: dict[str, Any]) -> str:
        """The first legal move."""
        return self.act_batch([observation])[0]

    def act_batch(self, observations: list[dict[str, Any]]) -> list[str]:
        """The first legal move of each observation."""
        return [observation["legal_moves"][0] for observation in observations]

    def stats(self) -> dict[str, int]:
        """One build per copy, summed over the copies by the runner."""
        return {"builds": self.builds}


def test_short_runs_stay_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that one process finishes quickly never spawns workers, and gives the one-process records."""

    def refuse(*args: Any) -> Iterator[dict[str, Any]]:
        raise AssertionError("workers were spawned for a short run")

    monkeypatch.setattr(rollout, "_spawn", refuse)
    one = parlour.evaluate(TTT, ["minimax", "random"], episodes=12, seed=4, progress=False)
    two = parlour.evaluate(TTT, ["minimax", "random"], episodes=12, seed=4, workers=2, progress=False)
    assert two.records == one.records
    assert two.stats["minimax"]["decisions"] == one.stats["minimax"]["decisions"]


def test_batching_agents_stay_in_one_process_below_in_flight_per_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a batching agent the rule is fixed: fewer than ``in_flight`` episodes per worker play in this process."""
    monkeypatch.setattr(rollout, "_spawn", lambda *args: (_ for _ in ()).throw(AssertionError("spawned")))
    results = parlour.evaluate(TTT, [CountingBatcher(), "random"], episodes=6, seed=1, workers=2, in_flight=4, progress=False)
    assert len(results.records) == 6


def test_workers_take_over_after_the_probe_with_identical_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the probe predicts a long run, the rest goes to the workers (records sent in lists); records equal one process's."""
    monkeypatch.setattr(rollout, "PROBE_SECONDS", 0.0)
    monkeypatch.setattr(rollout, "workers_to_spawn", lambda per_episode_s, remaining, workers, cores, start_s, slowdown: workers)
    spawned: list[list[int]] = []
    spawn = rollout._spawn

    def watch(plan: Any, indices: list[int], workers: int, totals: list[dict[str, Any]]) -> tuple[list[Any], Iterator[dict[str, Any]]]:
        spawned.append(list(indices))
        return spawn(plan, indices, workers, totals)

    monkeypatch.setattr(rollout, "_spawn", watch)
    one = parlour.evaluate(TTT, ["minimax", "random"], episodes=8, seed=4, in_flight=2, progress=False)
    two = parlour.evaluate(TTT, ["minimax", "random"], episodes=8, seed=4, workers=2, in_flight=2, progress=False)
    assert spawned and 0 < len(spawned[0]) < 8
    assert two.records == one.records
    assert two.stats["minimax"]["decisions"] == one.stats["minimax"]["decisions"]


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """A local Ray instance of two CPUs for this file, on loopback, started as ``evaluate`` starts its own; skipped where Ray is missing."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'parlour[ray]')")
    try:
        rollout.start_local_ray(num_cpus=2, logging_level="error", log_to_driver=False)
    except Exception as error:  # noqa: BLE001 - any failure to start a cluster here means the test cannot run
        pytest.skip(f"a local Ray instance could not start: {error}")
    yield ray
    ray.shutdown()


def test_local_ray_stays_on_loopback(ray_cluster: Any) -> None:
    """The local instance's nodes and GCS are on 127.0.0.1, not the machine's network address Ray would pick."""
    assert {node["NodeManagerAddress"] for node in ray_cluster.nodes() if node["Alive"]} == {"127.0.0.1"}
    assert ray_cluster.get_runtime_context().gcs_address.startswith("127.0.0.1:")


def test_ray_gives_the_records_of_a_local_run(ray_cluster: Any) -> None:
    """The same records on a Ray cluster as in one local process, and the batching agent built once per node, not per episode."""
    local = parlour.evaluate(TTT, [CountingBatcher(), "random"], episodes=10, seed=2, in_flight=3, progress=False)
    remote = parlour.evaluate(TTT, [CountingBatcher(), "random"], episodes=10, seed=2, in_flight=3, progress=False, executor="ray")
    assert remote.records == local.records
    nodes = len([node for node in ray_cluster.nodes() if node["Alive"]])
    assert remote.stats["batcher"]["builds"] == nodes
    scripted = parlour.evaluate(TTT, ["minimax", "random"], episodes=6, seed=5, progress=False, executor="ray")
    assert scripted.records == parlour.evaluate(TTT, ["minimax", "random"], episodes=6, seed=5, progress=False).records


def test_eval_command_plays_on_ray(ray_cluster: Any, tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``parlour eval --ray`` joins the running cluster and writes the bundle a local run writes."""
    from parlour.cli import main
    from parlour.evaluation.results import EPISODES_FILE, read_records

    argv = ["eval", TTT, "--agent", "minimax", "--episodes", "4", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "ray"), "--ray"]) == 0
    assert main([*argv, "--out", str(tmp_path / "local")]) == 0
    # Episodes are appended as they finish, so the two files may hold them in another order.
    ordered = [sorted(read_records(tmp_path / run / EPISODES_FILE), key=lambda record: record["episode"]) for run in ("ray", "local")]
    assert ordered[0] == ordered[1]
    assert "minimax" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("address", "nodes", "pinned"),
    [
        ("127.0.0.1:6379", ["127.0.0.1"], "127.0.0.1"),
        ("localhost:6379", ["127.0.0.1"], "127.0.0.1"),
        ("127.0.0.2:6379", ["127.0.0.3", "127.0.0.2"], "127.0.0.2"),
        # A plain `ray start --head` advertises the machine's address: Ray's rewrite of 127.0.0.1 finds it.
        ("127.0.0.1:6379", ["192.0.2.2"], None),
        ("10.1.2.3:6379", ["10.1.2.3"], None),
    ],
)
def test_a_loopback_address_is_joined_on_loopback_where_the_cluster_is(
    monkeypatch: pytest.MonkeyPatch, address: str, nodes: list[str], pinned: str | None
) -> None:
    """The driver's node address is pinned to loopback only where a node of the cluster is on loopback."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'parlour[ray]')")
    calls: list[dict[str, Any]] = []

    class FakeRay:
        """Records what ``ray.init`` was asked."""

        @staticmethod
        def init(**options: Any) -> None:
            """Keep the options."""
            calls.append(options)

    monkeypatch.setattr(rollout, "_answers", lambda host, port: True)
    monkeypatch.setattr(rollout, "_node_addresses", lambda target: nodes)
    rollout._join_ray(FakeRay, address)
    assert calls[0]["address"] == address
    assert calls[0].get("_node_ip_address") == pinned


#: Plays on the Ray cluster at argv[1] and prints whether the records are one process's, and the episodes per node.
TWO_NODE_DRIVER = """
import json, sys
import ray
import parlour
from parlour.evaluation import rollout

plan = rollout.make_plan("parlour/TicTacToe-v0", ["minimax", "random"], seed=3)
placed, totals = {}, [{} for _ in plan.names]
records = sorted(rollout.play_on_ray(plan, list(range(40)), sys.argv[1], totals, placed), key=lambda record: record["episode"])
local = parlour.evaluate("parlour/TicTacToe-v0", ["minimax", "random"], episodes=40, seed=3, progress=False)
nodes = {node["NodeID"]: node["NodeManagerAddress"] for node in ray.nodes() if node["Alive"]}
print(json.dumps({"same": records == local.records, "decisions": totals[0]["decisions"] == local.stats["minimax"]["decisions"],
                  "placed": placed, "nodes": nodes}))
"""


def _free_port(host: str) -> int:
    """A TCP port free on ``host`` just now."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _ray_env(**settings: str) -> dict[str, str]:
    """This environment without Ray's address and auth settings, plus ``settings``."""
    env = {key: value for key, value in os.environ.items() if key not in ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")}
    return {**env, **settings}


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[tuple[str, str]]:
    """A Ray cluster of two nodes of one CPU each on this machine's loopback, with token auth: its address and token.

    The nodes are on 127.0.0.2 and 127.0.0.3 (loopback too): Ray rewrites 127.0.0.1 to the machine's network address
    for a node joining a cluster, and the switch that stops it (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0) forbids joining.
    Each ``ray start --block`` runs in a process group of its own, ended by its id when the tests end, even on failure.
    """
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'parlour[ray]')")
    ray_cli = shutil.which("ray", path=os.path.dirname(sys.executable))
    if ray_cli is None:
        pytest.skip("the ray command is not installed beside this Python")
    token = secrets.token_hex(32)
    env = _ray_env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token)
    port = _free_port("127.0.0.2")
    address = f"127.0.0.2:{port}"
    temp = Path(tempfile.mkdtemp(prefix="ray"))  # short: Ray's socket paths must fit in 107 characters
    nodes: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(ip: str, *role: str) -> None:
        log = temp / f"{ip}.log"
        args = [ray_cli, "start", "--block", *role, f"--node-ip-address={ip}", "--num-cpus=1", "--disable-usage-stats"]
        args += [f"--temp-dir={temp / ip}", f"--dashboard-agent-listen-port={_free_port(ip)}"]
        with log.open("wb") as out:
            nodes.append((subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT, process_group=0), log))
        deadline = time.monotonic() + 240
        while b"Ray runtime started" not in log.read_bytes():
            if nodes[-1][0].poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Ray node on {ip} did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.5)

    try:
        start("127.0.0.2", "--head", f"--port={port}", "--include-dashboard=false")
        start("127.0.0.3", f"--address={address}")
        yield address, token
    finally:
        for process, _ in reversed(nodes):
            # Every process a node started is in the group of its `ray start`, which was started here.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        shutil.rmtree(temp, ignore_errors=True)


def test_ray_plays_on_every_node_of_a_two_node_cluster(two_nodes: tuple[str, str]) -> None:
    """Both nodes of a two-node cluster play episodes, and the records and stats are those of one process."""
    address, token = two_nodes
    driver = subprocess.run(
        [sys.executable, "-c", TWO_NODE_DRIVER, address],
        env=_ray_env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert driver.returncode == 0, driver.stderr[-3000:]
    result = json.loads(driver.stdout.strip().splitlines()[-1])
    assert result["same"] and result["decisions"]
    assert set(result["nodes"].values()) == {"127.0.0.2", "127.0.0.3"}
    assert set(result["placed"]) == set(result["nodes"]) and all(count > 0 for count in result["placed"].values())
    assert sum(result["placed"].values()) == 40


def test_eval_refuses_a_cluster_wanting_a_token_naming_the_fix(two_nodes: tuple[str, str], tmp_path: Path) -> None:
    """Without RAY_AUTH_MODE=token, ``parlour eval --ray`` against a token cluster fails with the fix, not after Ray's retries."""
    address, _ = two_nodes
    argv = ["eval", TTT, "--agent", "minimax", "--episodes", "2", "--quiet", "--out", str(tmp_path / "run"), "--ray", address]
    driver = subprocess.run(
        [sys.executable, "-c", "import sys; from parlour.cli import main; sys.exit(main(sys.argv[1:]))", *argv],
        env=_ray_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert driver.returncode != 0
    assert "set RAY_AUTH_MODE=token" in driver.stderr.strip().splitlines()[-1], driver.stderr[-3000:]


def test_unknown_executor_is_refused() -> None:
    """A misspelt executor names the choices."""
    with pytest.raises(ValueError, match="'local' or 'ray'"):
        parlour.evaluate(TTT, ["random", "random"], episodes=1, executor="threads", progress=False)
