"""A pure-Python twin of ``np.random.default_rng(seed)`` for an episode's first, small draws.

Seeding a numpy generator (``SeedSequence`` hashing, the ``PCG64`` and ``Generator``
objects) takes about 35 microseconds, more than a whole hand of Kuhn poker, and
each call of ``integers`` on a few dice costs several more in numpy's argument
handling. :class:`PCG64Twin` computes the same things in plain integer
arithmetic: numpy's ``SeedSequence`` pool and state words for the seed, the
``PCG64`` generator (128-bit LCG, XSL-RR output, 32-bit draws taken as the low then
the high half of a 64-bit one), ``Generator.shuffle`` on a list (a Fisher-Yates
pass with masked rejection, ``random_interval``) and ``Generator.integers`` with
int bounds (Lemire's bounded draw, as numpy's ``random_bounded_uint64_fill``),
so that every draw, and the generator's state after it, is bit for bit
numpy's. :meth:`PCG64Twin.state` is that state in numpy's
``bit_generator.state`` form, which hands the stream over to a real generator
for anything else (see :class:`parlour.envs.core.match.LazyGenerator`).

``tests/test_pcg64.py`` compares the twin with the installed numpy on thousands
of seeds, so a numpy release that changed any of these algorithms would be caught.
"""

from __future__ import annotations

from typing import Any

MASK32 = 0xFFFFFFFF
MASK64 = (1 << 64) - 1
MASK128 = (1 << 128) - 1
#: numpy's ``SeedSequence`` constants (``bit_generator.pyx``).
INIT_A = 0x43B0D7E5
MULT_A = 0x931E8875
INIT_B = 0x8B51F9DD
MULT_B = 0x58F38DED
MIX_MULT_L = 0xCA01F9DD
MIX_MULT_R = 0x4973F715
XSHIFT = 16
POOL_SIZE = 4
#: ``PCG_DEFAULT_MULTIPLIER_128``.
PCG_MULTIPLIER = (2549297995355413924 << 64) + 4865540595714422341


def _hash_constants(init: int, mult: int, count: int) -> list[tuple[int, int]]:
    """The ``(xor, multiplier)`` pairs of ``count`` successive hash steps from ``init``: the constants do not depend on the data."""
    pairs = []
    constant = init
    for _ in range(count):
        following = (constant * mult) & MASK32
        pairs.append((constant, following))
        constant = following
    return pairs


#: The pool's hash steps for entropy of up to ``POOL_SIZE`` words: one per pool word, then one per ordered pair of them.
_MIX_STEPS = _hash_constants(INIT_A, MULT_A, POOL_SIZE + POOL_SIZE * (POOL_SIZE - 1))
#: The cross-mixing of the pool: ``(source, target, xor, multiplier)`` for each ordered pair of pool words, in numpy's order.
_CROSS = tuple(
    (source, target, *constants)
    for (source, target), constants in zip(
        [(source, target) for source in range(POOL_SIZE) for target in range(POOL_SIZE) if source != target], _MIX_STEPS[POOL_SIZE:]
    )
)
#: The hash steps of ``generate_state(4, uint64)``: eight 32-bit words, from the pool words in turn.
_STATE_STEPS = tuple((index % POOL_SIZE, *constants) for index, constants in enumerate(_hash_constants(INIT_B, MULT_B, 8)))


def _hashed(value: int, xor: int, multiplier: int) -> int:
    """``SeedSequence``'s ``hashmix`` of ``value`` at the step with these constants."""
    value = ((value ^ xor) * multiplier) & MASK32
    return value ^ (value >> XSHIFT)


def _mix(x: int, y: int) -> int:
    """``SeedSequence``'s ``mix``."""
    result = (MIX_MULT_L * x - MIX_MULT_R * y) & MASK32
    return result ^ (result >> XSHIFT)


def seed_words(seed: int) -> list[int]:
    """The four 64-bit words ``SeedSequence(seed).generate_state(4, np.uint64)`` gives (``seed`` a non-negative int).

    The hash steps' constants do not depend on the seed, so they are worked out once (``_MIX_STEPS``, ``_CROSS``,
    ``_STATE_STEPS``); the mixing is written out with them, since this runs once per episode.
    """
    entropy = []
    rest = seed
    while True:  # the int's 32-bit words, least significant first (one word for 0)
        entropy.append(rest & MASK32)
        rest >>= 32
        if not rest:
            break
    pool = [_hashed(entropy[index] if index < len(entropy) else 0, *_MIX_STEPS[index]) for index in range(POOL_SIZE)]
    mask, left, right = MASK32, MIX_MULT_L, MIX_MULT_R
    for source, target, xor, multiplier in _CROSS:
        value = ((pool[source] ^ xor) * multiplier) & mask
        result = (left * pool[target] - right * (value ^ (value >> XSHIFT))) & mask
        pool[target] = result ^ (result >> XSHIFT)
    if len(entropy) > POOL_SIZE:  # seeds of 129 bits or more: each further word is mixed into every pool word
        steps = iter(_hash_constants(INIT_A, MULT_A, len(_MIX_STEPS) + POOL_SIZE * (len(entropy) - POOL_SIZE))[len(_MIX_STEPS) :])
        for word in entropy[POOL_SIZE:]:
            for target in range(POOL_SIZE):
                pool[target] = _mix(pool[target], _hashed(word, *next(steps)))
    halves = []
    for index, xor, multiplier in _STATE_STEPS:
        value = ((pool[index] ^ xor) * multiplier) & mask
        halves.append(value ^ (value >> XSHIFT))
    return [halves[0] | halves[1] << 32, halves[2] | halves[3] << 32, halves[4] | halves[5] << 32, halves[6] | halves[7] << 32]


class PCG64Twin:
    """numpy's ``default_rng(seed)`` in plain integers, for ``shuffle`` of a list and ``integers`` with int bounds.

    Every draw equals numpy's, and :meth:`state` is numpy's state after the same draws (see the module docstring).
    """

    __slots__ = ("state_value", "increment", "has_uint32", "uinteger")

    def __init__(self, seed: int):
        words = seed_words(seed)
        initial, sequence = (words[0] << 64) | words[1], (words[2] << 64) | words[3]
        self.increment = increment = ((sequence << 1) | 1) & MASK128
        # pcg_setseq_128_srandom_r: from state 0, one step, add the initial state, one more step.
        self.state_value = (((increment + initial) & MASK128) * PCG_MULTIPLIER + increment) & MASK128
        self.has_uint32 = False
        self.uinteger = 0

    def copy(self) -> PCG64Twin:
        """An independent twin in the same state: it draws what this one would draw next."""
        copied = PCG64Twin.__new__(PCG64Twin)
        copied.state_value, copied.increment = self.state_value, self.increment
        copied.has_uint32, copied.uinteger = self.has_uint32, self.uinteger
        return copied

    def next64(self) -> int:
        """The next 64-bit output: a step of the LCG, then XSL-RR of the new state."""
        state = self.state_value = (self.state_value * PCG_MULTIPLIER + self.increment) & MASK128
        value = ((state >> 64) ^ state) & MASK64
        rotation = state >> 122
        return ((value >> rotation) | (value << (64 - rotation))) & MASK64

    def next32(self) -> int:
        """The next 32-bit output: the low half of a fresh 64-bit one, its high half kept for the following call."""
        if self.has_uint32:
            self.has_uint32 = False
            return self.uinteger
        value = self.next64()
        self.has_uint32 = True
        self.uinteger = value >> 32
        return value & MASK32

    def interval(self, maximum: int) -> int:
        """A uniform int in ``[0, maximum]`` by masked rejection (numpy's ``random_interval``)."""
        if maximum == 0:
            return 0
        mask = (1 << maximum.bit_length()) - 1
        draw = self.next32 if maximum <= MASK32 else self.next64
        while True:
            value = draw() & mask
            if value <= maximum:
                return value

    def shuffle(self, items: list[Any]) -> None:
        """Shuffle ``items`` in place as ``Generator.shuffle`` shuffles a list."""
        for i in range(len(items) - 1, 0, -1):
            j = self.interval(i)
            items[i], items[j] = items[j], items[i]

    def bounded(self, offset: int, span: int, count: int) -> list[int]:
        """``count`` uniform ints in ``[offset, offset + span]`` (``span`` below ``2**32 - 1``), by Lemire's method as numpy draws them."""
        if span == 0:
            return [offset] * count
        exclusive = span + 1
        threshold = (MASK32 - span) % exclusive
        values = []
        for _ in range(count):
            product = self.next32() * exclusive
            if (product & MASK32) < exclusive:
                while (product & MASK32) < threshold:
                    product = self.next32() * exclusive
            values.append(offset + (product >> 32))
        return values

    def state(self) -> dict[str, Any]:
        """The generator's state as numpy's ``PCG64.state`` gives and takes it."""
        return {
            "bit_generator": "PCG64",
            "state": {"state": self.state_value, "inc": self.increment},
            "has_uint32": int(self.has_uint32),
            "uinteger": self.uinteger,
        }
