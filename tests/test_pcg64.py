"""The episode generator's pure-Python twin draws exactly what numpy's ``default_rng(seed)`` draws (issue 37).

Kuhn poker's and Liar's dice's deals paid for a numpy generator every episode (about 35 microseconds to seed, more
than a Kuhn hand's moves) and for numpy's argument handling on every roll of a few dice. The engine's generator
now makes those draws with :class:`parlour.envs.core.pcg64.PCG64Twin` and hands the stream to numpy for anything
else; these tests hold the twin to the installed numpy, bit for bit, and show that the deals no longer build a
numpy generator while every record stays the same.
"""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

import parlour
from parlour.envs.core.match import LazyGenerator, Match
from parlour.envs.core.pcg64 import PCG64Twin, seed_words
from parlour.envs.registry import game_class

#: Seeds of every size the twin handles differently: one 32-bit word, two, a pool's worth and more.
SEEDS = [*range(2000), 2**32 - 1, 2**32, 2**63 - 1, 2**64 + 5, 2**127 + 9, 2**128 + 1, 2**300 + 11]


@pytest.mark.parametrize("seed", SEEDS[:50] + SEEDS[1995:])
def test_seeding_gives_numpys_state(seed):
    generator = np.random.default_rng(seed)
    assert seed_words(seed) == generator.bit_generator.seed_seq.generate_state(4, np.uint64).tolist()
    assert PCG64Twin(seed).state() == generator.bit_generator.state


def test_shuffles_and_rolls_are_numpys_on_many_seeds():
    for seed in SEEDS:
        twin, generator = PCG64Twin(seed), np.random.default_rng(seed)
        mine, theirs = list("JQK"), list("JQK")
        twin.shuffle(mine)
        generator.shuffle(theirs)
        assert mine == theirs, seed
        # Dice, an odd count so that a 32-bit half is left over, a wide span and an empty range.
        for low, high, count in ((1, 7, 5), (1, 7, 3), (0, 2**31 + 1, 4), (5, 6, 2), (-3, 40, 1)):
            assert twin.bounded(low, high - 1 - low, count) == generator.integers(low, high, size=count).tolist(), seed
        assert twin.state() == generator.bit_generator.state, seed


def test_the_lazy_generator_hands_its_stream_to_numpy():
    rng = random.Random(0)
    for seed in range(300):
        lazy, generator = LazyGenerator(seed), np.random.default_rng(seed)
        for _ in range(rng.randrange(4)):
            size = rng.choice([None, 0, 1, 5])
            mine, theirs = lazy.integers(1, 7, size=size), generator.integers(1, 7, size=size)
            assert type(mine) is type(theirs) and np.array_equal(mine, theirs)
            if size is not None:
                assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
            deck = list(range(rng.randrange(1, 9)))
            other = list(deck)
            lazy.shuffle(deck)
            generator.shuffle(other)
            assert deck == other
        if rng.random() < 0.5:  # a snapshot in mid-stream carries the twin's state
            lazy = pickle.loads(pickle.dumps(lazy))
        # Anything else goes to numpy, which carries on from where the twin left off.
        assert lazy.random() == generator.random()
        assert lazy.integers(1, 7, size=4).tolist() == generator.integers(1, 7, size=4).tolist()
        assert lazy.permutation(5).tolist() == generator.permutation(5).tolist()


@pytest.mark.parametrize(
    "args, kwargs",
    [((0, 10), {"dtype": np.int32}), ((np.int64(1), 7), {}), ((1, 6), {"endpoint": True}), ((0, 2**40), {"size": 3}), ((1, 7), {"size": (2, 2)})],
)
def test_other_arguments_go_to_numpy(args, kwargs):
    lazy, generator = LazyGenerator(3), np.random.default_rng(3)
    mine, theirs = lazy.integers(*args, **kwargs), generator.integers(*args, **kwargs)
    assert type(mine) is type(theirs) and np.asarray(mine).dtype == np.asarray(theirs).dtype and np.array_equal(mine, theirs)
    assert lazy.random() == generator.random()


def test_numpys_errors_stay_numpys():
    with pytest.raises(ValueError, match="low >= high"):
        LazyGenerator(3).integers(5, 5)
    with pytest.raises(NotImplementedError):
        LazyGenerator(3).shuffle([1, 2, 3], axis=1)
    array = np.arange(6)
    LazyGenerator(3).shuffle(array)
    assert array.tolist() == np.random.default_rng(3).permutation(6).tolist()


@pytest.mark.parametrize("env_id", ["parlour/KuhnPoker-v0", "parlour/LiarsDice-v0"])
def test_a_deal_builds_no_numpy_generator(env_id):
    # Reproduction (issue 37): each Kuhn hand and Liar's dice game seeded a numpy generator for a few draws.
    match = Match(game_class(env_id))
    rng = random.Random(0)
    for seed in range(20):
        match.reset(seed)
        while not match.over:
            player = match.acting()[0]
            match.submit(player, rng.choice(match.legal_moves_of(player)))
        assert match.ctx.rng.used
        assert match.ctx.rng._generator is None, "the deal seeded a numpy generator"


@pytest.mark.parametrize("env_id", ["parlour/KuhnPoker-v0", "parlour/LiarsDice-v0"])
def test_the_deals_are_numpys(env_id):
    """The same cards and dice as a numpy generator seeded alike deals, on many seeds (so every record is unchanged)."""
    game_cls = game_class(env_id)
    for seed in range(500):
        match = Match(game_cls)
        match.reset(seed)
        generator = np.random.default_rng(seed)
        if env_id == "parlour/KuhnPoker-v0":
            deck = ["J", "Q", "K"]
            generator.shuffle(deck)
            assert match.game.cards == deck[:2], seed
        else:
            assert match.game.dice == [sorted(generator.integers(1, 7, size=5).tolist()) for _ in range(2)], seed


def test_a_restored_snapshot_rolls_the_same_dice():
    env = parlour.make_aec("parlour/LiarsDice-v0")
    env.reset(seed=11)
    env.step(env.infos[env.agent_selection]["legal_moves"][0])
    snapshot = env.snapshot()
    env.step("liar")
    after = env.match.game.dice
    env.restore(snapshot)
    env.step("liar")
    assert env.match.game.dice == after
