"""Rollouts and training keep the garbage collector's full collections off the heap that existed before them."""

from __future__ import annotations

import gc
import threading
from collections.abc import Mapping
from typing import Any

import pytest

import parlour
from parlour.evaluation.heap import frozen_heap

#: gc.get_freeze_count() as each recording agent saw it when asked to move.
SEEN: list[int] = []


class FreezeRecorder:
    """Plays the first legal move and notes how many objects the collector had frozen at that moment."""

    name = "freeze-recorder"

    def act(self, observation: Mapping[str, Any]) -> str:
        SEEN.append(gc.get_freeze_count())
        return observation["legal_moves"][0]


@pytest.fixture(autouse=True)
def clean_heap():
    """Every test starts and ends with nothing frozen."""
    assert gc.get_freeze_count() == 0
    SEEN.clear()
    yield
    gc.unfreeze()


def test_an_evaluation_plays_with_the_heap_before_it_frozen_and_unfreezes_it_after() -> None:
    alive_before = len(gc.get_objects())
    parlour.evaluate("parlour/TicTacToe-v0", [FreezeRecorder(), "random"], episodes=2, progress=False)
    assert SEEN, "the agent was never asked to move"
    # Every object alive before the run was in the permanent generation while the agents played.
    assert min(SEEN) >= alive_before * 0.9
    assert gc.get_freeze_count() == 0


def test_a_rollout_abandoned_half_way_unfreezes_when_closed() -> None:
    from parlour.evaluation.rollout import Rollout, make_plan

    plan = make_plan("parlour/TicTacToe-v0", [FreezeRecorder(), "random"], None, 0, True, 1)
    played = Rollout(plan).play(range(4))
    next(played)
    assert gc.get_freeze_count() > 0
    played.close()
    assert gc.get_freeze_count() == 0


def test_nested_runs_share_one_freeze_and_the_outermost_ends_it() -> None:
    with frozen_heap():
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with frozen_heap():
            pass
        assert gc.get_freeze_count() >= frozen
    assert gc.get_freeze_count() == 0


def test_a_heap_the_program_froze_itself_stays_frozen() -> None:
    gc.freeze()
    mine = gc.get_freeze_count()
    with frozen_heap():
        pass
    # Frozen objects that die meanwhile (another thread's, say) leave the count, so it may only have shrunk:
    # an unfreeze would leave none, and a second freeze would have taken in the objects made since.
    assert 0 < gc.get_freeze_count() <= mine


def test_runs_on_two_threads_unfreeze_only_when_both_are_done() -> None:
    entered, release = threading.Event(), threading.Event()

    def run() -> None:
        with frozen_heap():
            entered.set()
            release.wait(10)

    worker = threading.Thread(target=run)
    worker.start()
    assert entered.wait(10)
    with frozen_heap():
        pass
    assert gc.get_freeze_count() > 0, "the first run to end unfroze the heap under the other"
    release.set()
    worker.join(10)
    assert gc.get_freeze_count() == 0


def test_garbage_cycles_from_before_a_run_are_collected_after_it() -> None:
    class Node:
        pass

    def cycles() -> int:
        return sum(type(obj) is Node for obj in gc.get_objects())

    gc.disable()  # no automatic collection may take the cycle before the run starts
    try:
        node = Node()
        node.itself = node
        del node
        with frozen_heap():
            gc.collect()
        assert cycles() == 1, "the cycle was collected while frozen, or lost"
        gc.collect()
        assert cycles() == 0
    finally:
        gc.enable()


def test_frozen_heap_decorates_a_function_and_freezes_each_call() -> None:
    @frozen_heap()
    def count() -> int:
        return gc.get_freeze_count()

    assert count() > 0 and count() > 0
    assert gc.get_freeze_count() == 0
