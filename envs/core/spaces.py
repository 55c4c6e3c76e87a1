"""Spaces for text observations and actions.

Gymnasium's ``Text`` space only accepts a fixed charset, while an agent's text
can be any Unicode. :class:`TextSpace` accepts any ``str`` up to ``max_length``
characters. When a game's moves are enumerable, the space knows them, so that
``sample(mask)`` (used by PettingZoo's test suites and by random agents) draws
a legal move name. :class:`MessagesSpace` holds an observation's typed
messages and :class:`ToolsSpace` a game's tool specs.

These spaces are registered with Gymnasium's vector utilities, so that
``gymnasium.make_vec(..., vectorization_mode="async")`` works in text mode out
of the box: in shared memory each environment's value travels as JSON in a
buffer of ``SHARED_BYTES`` bytes.
"""

from __future__ import annotations

import json
import multiprocessing
from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

from parlour.envs.core.context import MESSAGE_KINDS

#: Bytes of shared memory per environment for one text-like observation entry (async vector environments).
SHARED_BYTES = 1 << 20

_SAMPLE_ALPHABET = np.array(list('abcdefghijklmnopqrstuvwxyz0123456789 ,.!?-[]{}":é中\n\t\x00'))


class TextSpace(spaces.Space[str]):
    """Any Unicode string of at most ``max_length`` characters.

    Args:
        max_length: the longest string the space contains.
        moves: the move names of an enumerable game; ``sample(mask)`` then
            returns one of the moves allowed by ``mask``.
        seed: seed for ``sample``.
    """

    def __init__(self, max_length: int = 1 << 20, moves: Sequence[str] | None = None, seed: int | None = None):
        if max_length < 1:
            raise ValueError(f"max_length must be positive, got {max_length}")
        self.max_length = int(max_length)
        self.moves = list(moves) if moves is not None else None
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        """Text cannot be flattened into a numpy array."""
        return False

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a string no longer than ``max_length``."""
        return isinstance(x, str) and len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """A random legal move when ``mask`` and moves are known, else random text.

        Random text is mostly not a valid action: it exercises the invalid-action
        policy, which is what API checkers sampling blindly should see.
        """
        if self.moves is not None and mask is not None:
            allowed = np.flatnonzero(np.asarray(mask))
            if len(allowed) == 0:
                return ""
            return self.moves[int(self.np_random.choice(allowed))]
        if self.moves is not None and self.np_random.random() < 0.5:
            return self.moves[int(self.np_random.integers(len(self.moves)))]
        length = int(self.np_random.integers(0, min(self.max_length, 24) + 1))
        return "".join(self.np_random.choice(_SAMPLE_ALPHABET, size=length))

    def __repr__(self) -> str:
        return f"TextSpace(max_length={self.max_length}, moves={len(self.moves) if self.moves else None})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, TextSpace) and other.max_length == self.max_length and other.moves == self.moves

    def __hash__(self) -> int:
        return hash((self.max_length, tuple(self.moves or ())))


class MessagesSpace(spaces.Space[list]):
    """Lists of typed messages: dicts with ``sender`` (str or None), ``to`` (list of str or None), ``kind`` and ``text``."""

    def __init__(self, seed: int | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        """Messages cannot be flattened into a numpy array."""
        return False

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a list of well-formed message dicts."""
        return isinstance(x, list) and all(
            isinstance(m, dict)
            and m.keys() == {"sender", "to", "kind", "text"}
            and m["kind"] in MESSAGE_KINDS
            and isinstance(m["text"], str)
            and (m["sender"] is None or isinstance(m["sender"], str))
            and (m["to"] is None or isinstance(m["to"], list) and all(isinstance(p, str) for p in m["to"]))
            for m in x
        )

    def sample(self, mask: Any = None, probability: Any = None) -> list:
        """A short random list of event messages."""
        count = int(self.np_random.integers(0, 3))
        return [{"sender": None, "to": None, "kind": "event", "text": f"message {i}"} for i in range(count)]

    def __repr__(self) -> str:
        return "MessagesSpace()"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, MessagesSpace)

    def __hash__(self) -> int:
        return hash("MessagesSpace")


class ToolsSpace(spaces.Space[list]):
    """Lists of OpenAI tool specs drawn from the ones a game offers (a player may be offered some of them)."""

    def __init__(self, tools: list[dict[str, Any]], seed: int | None = None):
        self.tools = tools
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        """Tool specs cannot be flattened into a numpy array."""
        return False

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a list of some of the game's tool specs."""
        return isinstance(x, list) and all(spec in self.tools for spec in x)

    def sample(self, mask: Any = None, probability: Any = None) -> list:
        """All of the game's tool specs."""
        return json.loads(json.dumps(self.tools))

    def __repr__(self) -> str:
        return f"ToolsSpace({[t['function']['name'] for t in self.tools]})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ToolsSpace) and other.tools == self.tools

    def __hash__(self) -> int:
        return hash(json.dumps(self.tools, sort_keys=True))


class SharedJSON:
    """One JSON value per environment in shared memory, read back on access (see the module docstring)."""

    def __init__(self, buffers: list[Any]):
        self.buffers = buffers

    def __len__(self) -> int:
        return len(self.buffers)

    def __getitem__(self, index: int) -> Any:
        buffer = self.buffers[index]
        view = memoryview(buffer.get_obj()).cast("B")
        size = int.from_bytes(view[:4], "little")
        return json.loads(bytes(view[4 : 4 + size]).decode("utf-8", "surrogatepass")) if size else None

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __deepcopy__(self, memo: dict) -> tuple:
        return tuple(self)


@create_shared_memory.register(TextSpace)
@create_shared_memory.register(MessagesSpace)
@create_shared_memory.register(ToolsSpace)
def _create_shared_json(space: spaces.Space, n: int = 1, ctx: Any = multiprocessing) -> list[Any]:
    return [ctx.Array("B", SHARED_BYTES) for _ in range(n)]


@read_from_shared_memory.register(TextSpace)
@read_from_shared_memory.register(MessagesSpace)
@read_from_shared_memory.register(ToolsSpace)
def _read_shared_json(space: spaces.Space, shared_memory: list[Any], n: int = 1) -> SharedJSON:
    return SharedJSON(shared_memory)


@write_to_shared_memory.register(TextSpace)
@write_to_shared_memory.register(MessagesSpace)
@write_to_shared_memory.register(ToolsSpace)
def _write_shared_json(space: spaces.Space, index: int, value: Any, shared_memory: list[Any]) -> None:
    data = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if len(data) + 4 > SHARED_BYTES:
        raise ValueError(
            f"an observation entry of {len(data)} bytes does not fit the {SHARED_BYTES}-byte shared buffer; "
            "pass vector_kwargs={'shared_memory': False} to gymnasium.make_vec"
        )
    buffer = shared_memory[index]
    with buffer.get_lock():
        view = memoryview(buffer.get_obj()).cast("B")
        view[:4] = len(data).to_bytes(4, "little")
        view[4 : 4 + len(data)] = data
