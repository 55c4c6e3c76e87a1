"""The rule that decides between worker processes and one process: a pure function of the measured times, and its wiring."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

import parlour
from parlour.evaluation import rollout
from parlour.evaluation.rollout import WORKERS_MUST_TAKE, workers_to_spawn


def test_long_runs_go_to_as_many_workers_as_asked_up_to_the_cores() -> None:
    """An hour of work is split: over as many workers as asked, never more than the cores."""
    assert workers_to_spawn(per_episode_s=0.02, remaining=180_000, workers=2, cores=2, start_s=1.0) == 2
    assert workers_to_spawn(per_episode_s=0.02, remaining=180_000, workers=8, cores=2, start_s=1.0) == 2
    assert workers_to_spawn(per_episode_s=0.02, remaining=180_000, workers=3, cores=16, start_s=1.0) == 3


def test_one_core_or_one_worker_never_spawns() -> None:
    """Workers on one core take turns with each other, and one worker is one process plus its start: neither pays."""
    assert workers_to_spawn(per_episode_s=0.02, remaining=10**9, workers=4, cores=1, start_s=0.0) == 0
    assert workers_to_spawn(per_episode_s=0.02, remaining=10**9, workers=1, cores=8, start_s=0.0) == 0


def test_two_workers_on_two_idle_cores_need_ten_starts_of_work() -> None:
    """On two cores that look idle, another process is assumed to want one: two workers run at 2/3 of a core each.

    Their wall time is (start + work / 2) * 1.5, at most 0.9 of the work's: with a start of 1 s, from 10 s of work on.
    """
    assert WORKERS_MUST_TAKE == 0.9
    assert workers_to_spawn(per_episode_s=0.01, remaining=1001, workers=2, cores=2, start_s=1.0) == 2
    assert workers_to_spawn(per_episode_s=0.01, remaining=999, workers=2, cores=2, start_s=1.0) == 0
    # A run of 400 Connect Four episodes of minimax (7 s here) stays in one process.
    assert workers_to_spawn(per_episode_s=0.02, remaining=350, workers=2, cores=2, start_s=1.0) == 0


def test_a_busy_machine_counts_the_processes_that_want_its_cores() -> None:
    """Twice as slow in wall time as in CPU time on two cores: four processes want them, this one included.

    Alone it runs at half a core, so the work is half its wall time in CPU; two workers among five processes get
    0.4 of a core each: (start + work_cpu / 2) / 0.4 = 2.5 start + 0.625 work, at most 0.9 work from 9.09 starts on.
    """
    assert workers_to_spawn(per_episode_s=0.01, remaining=910, workers=2, cores=2, start_s=1.0, slowdown=2.0) == 2
    assert workers_to_spawn(per_episode_s=0.01, remaining=908, workers=2, cores=2, start_s=1.0, slowdown=2.0) == 0


def test_usable_cores_follow_the_affinity(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process pinned to some cores counts only those, not the machine's."""
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no CPU affinity on this system")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3})
    assert rollout.usable_cores() == 1


def test_a_process_pinned_to_one_core_plays_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Even when the probe predicts workers would pay, a process allowed one core spawns none (it used to spawn ``workers``)."""
    monkeypatch.setattr(rollout, "usable_cores", lambda: 1)
    monkeypatch.setattr(rollout, "PROBE_SECONDS", 0.0)
    monkeypatch.setattr(rollout, "WORKER_START_S", 0.0)
    spawned: list[int] = []

    def refuse(plan: Any, indices: list[int], workers: int, totals: list[dict[str, Any]]) -> tuple[list[Any], Iterator[dict[str, Any]]]:
        spawned.append(workers)
        raise AssertionError("workers were spawned on one core")

    monkeypatch.setattr(rollout, "_spawn", refuse)
    results = parlour.evaluate("parlour/TicTacToe-v0", ["minimax", "random"], episodes=8, seed=4, workers=2, in_flight=2, progress=False)
    assert len(results.records) == 8 and not spawned


def test_the_rule_is_asked_with_this_runs_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the probe the rule gets the remaining episodes, the workers asked for and the usable cores, and the rest goes to as many workers as it says."""
    monkeypatch.setattr(rollout, "usable_cores", lambda: 5)
    monkeypatch.setattr(rollout, "PROBE_SECONDS", 0.0)
    asked: list[tuple[int, int, int]] = []

    def rule(per_episode_s: float, remaining: int, workers: int, cores: int, start_s: float, slowdown: float) -> int:
        asked.append((remaining, workers, cores))
        assert per_episode_s > 0 and start_s >= rollout.WORKER_START_S and slowdown > 0
        return 1

    spawned: list[tuple[int, int]] = []
    spawn = rollout._spawn

    def watch(plan: Any, indices: list[int], workers: int, totals: list[dict[str, Any]]) -> tuple[list[Any], Iterator[dict[str, Any]]]:
        spawned.append((len(indices), workers))
        return spawn(plan, indices, workers, totals)

    monkeypatch.setattr(rollout, "workers_to_spawn", rule)
    monkeypatch.setattr(rollout, "_spawn", watch)
    results = parlour.evaluate("parlour/TicTacToe-v0", ["minimax", "random"], episodes=8, seed=4, workers=3, in_flight=2, progress=False)
    assert asked[0] == (7, 3, 5) and len(asked) == 1
    # The first episode finished here, the one still in flight is finished here too, the rest went to the one worker the rule chose.
    assert spawned == [(6, 1)]
    assert len(results.records) == 8
