"""Scripted agents draw what ``np.random.default_rng(seed)`` draws, from a generator made on first use (issue 37).

The runner deep-copies a scripted agent for every seat of every episode and reseeds the copy: with a numpy
generator in it, the copy and the seeding were about a fifth of a random TicTacToe episode. ``SeededAgent``
now holds :func:`parlour.envs.core.match.lazy_default_rng`'s generator; these tests hold it to numpy's stream,
through copies and snapshots, and show that the copy no longer carries a numpy generator.
"""

from __future__ import annotations

import copy
import pickle
import random

import numpy as np
import pytest

import parlour
from parlour.baselines.seeded import SeededAgent
from parlour.envs.core.match import LazyGenerator, lazy_default_rng


def draws(rng: np.random.Generator, plan: list[str]) -> list:
    """One draw of each kind named in ``plan``, as plain lists and numbers."""
    out: list = []
    for kind in plan:
        if kind == "int":
            out.append(int(rng.integers(9)))
        elif kind == "ints":
            out.append(rng.integers(1, 7, size=5).tolist())
        elif kind == "shuffle":
            deck = list(range(6))
            rng.shuffle(deck)
            out.append(deck)
        elif kind == "choice":
            out.append(str(rng.choice(["a", "b", "c"])))
        elif kind == "random":
            out.append(float(rng.random()))
        else:
            out.append(rng.permutation(5).tolist())
    return out


KINDS = ["int", "ints", "shuffle", "choice", "random", "permutation"]


def test_the_lazy_generator_draws_numpys_stream_for_every_kind_of_draw():
    rng = random.Random(0)
    for seed in [*range(200), 2**63 - 1, 2**64 + 3, 2**130 + 7]:
        plan = [rng.choice(KINDS) for _ in range(rng.randrange(1, 7))]
        assert draws(lazy_default_rng(seed), plan) == draws(np.random.default_rng(seed), plan), (seed, plan)


@pytest.mark.parametrize("seed", [np.int64(5), [1, 2, 3], np.random.SeedSequence(9), np.random.PCG64(4)])
def test_seeds_the_twin_cannot_take_get_numpys_generator(seed):
    rng = lazy_default_rng(seed)
    assert isinstance(rng, np.random.Generator)
    twin_seed = copy.deepcopy(seed)  # a bit generator is consumed by the generator built on it
    assert draws(rng, KINDS) == draws(np.random.default_rng(twin_seed), KINDS)


def test_bad_seeds_fail_as_numpy_fails():
    with pytest.raises(ValueError) as ours:
        lazy_default_rng(-1)
    with pytest.raises(ValueError) as numpys:
        np.random.default_rng(-1)
    assert str(ours.value) == str(numpys.value)
    with pytest.raises(TypeError):
        lazy_default_rng("seven")


def test_no_seed_draws_fresh_entropy():
    assert len({tuple(draws(lazy_default_rng(), ["ints", "ints"])[0]) for _ in range(20)}) > 1


@pytest.mark.parametrize("drawn", ["nothing", "twin", "numpy"])
def test_a_copy_draws_what_the_original_would_draw_and_stays_apart(drawn):
    rng, reference = lazy_default_rng(21), np.random.default_rng(21)
    if drawn != "nothing":
        assert draws(rng, ["ints", "shuffle"]) == draws(reference, ["ints", "shuffle"])
    if drawn == "numpy":
        assert draws(rng, ["random"]) == draws(reference, ["random"])
    for duplicate in (copy.deepcopy(rng), pickle.loads(pickle.dumps(rng))):
        assert draws(duplicate, KINDS) == draws(copy.deepcopy(reference), KINDS)
    # Drawing from the copies did not move the original.
    assert draws(rng, KINDS) == draws(reference, KINDS)


def test_a_deep_copy_keeps_a_generator_shared_where_it_was_shared():
    rng = lazy_default_rng(4)
    holder = {"a": rng, "b": [rng]}
    copied = copy.deepcopy(holder)
    assert copied["a"] is copied["b"][0] and copied["a"] is not rng


def test_a_scripted_agent_reseeds_to_numpys_stream_and_copies_without_numpy():
    agent = parlour.make_agent("random", env_id="parlour/TicTacToe-v0")
    assert isinstance(agent, SeededAgent)
    observation = {"legal_moves": ["a1", "b1", "c1", "a2", "b2"]}
    for seed in range(50):
        duplicate = copy.deepcopy(agent)
        duplicate.reset(seed=seed)
        reference = np.random.default_rng(seed)
        for _ in range(4):
            assert duplicate.act(observation) == observation["legal_moves"][int(reference.integers(5))]
    # The runner's copy of a built agent that never drew holds a seed, not a numpy generator.
    fresh = copy.deepcopy(agent).rng
    assert isinstance(fresh, LazyGenerator) and fresh._generator is None and fresh._twin is None


def test_evaluation_with_scripted_agents_is_unchanged_by_the_lazy_generator(monkeypatch):
    def evaluated():
        results = parlour.evaluate("parlour/TicTacToe-v0", ["random", "minimax"], episodes=12, seed=3, progress=False)
        return [record["steps"] for record in results.records]

    lazy = evaluated()

    def numpy_reset(self, seed=None):
        self.rng = np.random.default_rng(seed)

    monkeypatch.setattr(SeededAgent, "reset", numpy_reset)
    assert evaluated() == lazy
