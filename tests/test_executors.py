"""Where episodes are played: worker processes (records sent in lists, one process where workers cannot pay off) and a Ray cluster."""

from __future__ import annotations

from collections.abc import Iterator
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
    """A local Ray instance of two CPUs for this file; skipped where Ray is missing or cannot start."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'parlour[ray]')")
    try:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="error", log_to_driver=False)
    except Exception as error:  # noqa: BLE001 - any failure to start a cluster here means the test cannot run
        pytest.skip(f"a local Ray instance could not start: {error}")
    yield ray
    ray.shutdown()


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
    assert read_records(tmp_path / "ray" / EPISODES_FILE) == read_records(tmp_path / "local" / EPISODES_FILE)
    assert "minimax" in capsys.readouterr().out


def test_unknown_executor_is_refused() -> None:
    """A misspelt executor names the choices."""
    with pytest.raises(ValueError, match="'local' or 'ray'"):
        parlour.evaluate(TTT, ["random", "random"], episodes=1, executor="threads", progress=False)
