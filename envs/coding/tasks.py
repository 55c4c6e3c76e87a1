"""Coding tasks generated from a seed (``procgen``), the frozen ``CODE_V1`` practice set, and :func:`task_from_id`.

The :class:`~parlour.envs.coding.task.Task` every coding environment poses lives in :mod:`parlour.envs.coding.task`.

``generate_task(seed, depth=2, size=8, family=None)`` composes ``depth`` typed building blocks
(:mod:`parlour.envs.coding.blocks`: list, string, number and dictionary transforms, small parsers and
algorithms) into one function ``solve``. The task comes with

* a reference implementation (plain Python, one commented stanza per step),
* a natural-language statement: the function's signature, the steps in order, and the visible examples,
* visible examples (3) and hidden tests (24): edge cases of the input type first (empty lists, zero,
  negative numbers, blank text, ...), then random inputs, two of them four times ``size`` long.

Because the tasks are drawn fresh from a seed, no model has seen them in pre-training. Difficulty knobs:
``depth`` (1 to 4 steps) and ``size`` (the length of random inputs). Every task passes quality checks
before it is handed out, or another one is drawn: the hidden outputs take at least three different values
(both values for a True/False result), the visible examples at least two, and every step that keeps the
type matters (leaving it out changes some hidden output), so a solution that skips a step fails.

``task_from_id(task_id)`` rebuilds any task from its id (``procgen:SEED:DEPTH:SIZE:FAMILY``, ``CODE_V1:INDEX``
or ``file:PATH#LINE``), hidden tests and reference included. Observations never carry these ids, only
opaque per-episode handles (see :mod:`parlour.envs.coding.oracle`); the ids appear in outcome details,
after the episode.

The frozen practice set: ``frozen_tasks("CODE_V1")``, 120 tasks (seeds 0 to 119, every family and depths 1
to 3 in turn, size 8), pinned by :data:`CODE_V1_SHA256`; the generator's output must never change for it. It
is a **practice set**: its statements, hidden tests and references ship with parlour, so an agent can look
any of its answers up, and no result on it counts. Counted runs use procgen tasks with the default options,
drawn from seeds the player cannot know (a leaderboard server's secret: see
:mod:`parlour.leaderboard.verify`, which rates only default options, and :mod:`parlour.leaderboard.live`). Randomness comes from ``random.Random`` seeded with a string (stable across Python versions), never
from global state.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import random
import re
from dataclasses import replace
from typing import Any, Sequence

from parlour.envs.coding.blocks import BLOCKS, FAMILIES, PARAMETER, TYPE_WORDS, Block, word
from parlour.envs.coding.loaders import task_from_file_id
from parlour.envs.coding.task import Task

ENTRY = "solve"
VISIBLE = 3
HIDDEN = 24
MAX_DEPTH = 4
MAX_SIZE = 64

#: The frozen sets, their sizes and CODE_V1's fingerprint (see :func:`fingerprint`). Every one is a practice set
#: (:data:`PRACTICE_SETS`): its answers ship with parlour.
FROZEN_SETS = {"CODE_V1": 120}
#: Task sets whose hidden tests and references anyone can compute from this package: practice only, never counted.
PRACTICE_SETS = frozenset(FROZEN_SETS)
CODE_V1_SHA256 = "63b61bb95bc68fc722da7ecc12a124032dfe551e2fb526bd92b35b26324dd938"


# ----------------------------------------------------------------------------- inputs


def _text(rng: random.Random, size: int) -> str:
    tokens = []
    for _ in range(rng.randint(0, max(1, size // 2 + 1))):
        roll = rng.random()
        token = word(rng)
        if roll < 0.25:
            token = token.capitalize()
        elif roll < 0.4:
            token = str(rng.randint(-20, 999))
        elif roll < 0.5:
            token += rng.choice("!,.?")
        elif roll < 0.6:
            token = rng.choice("aeiou") * rng.randint(2, 3) + token
        tokens.append(token)
    text = rng.choice([" ", " ", " ", "  "]).join(tokens)
    return (" " if rng.random() < 0.15 else "") + text + (" " if rng.random() < 0.15 else "")


def _words(rng: random.Random, size: int) -> list[str]:
    pool = [word(rng) for _ in range(max(2, size))]
    pool += [w.capitalize() for w in pool[:1]]
    return [rng.choice(pool) for _ in range(rng.randint(0, size))]


def _numbers(rng: random.Random, size: int) -> list[int]:
    high = rng.choice([9, 20, 50])
    return [rng.randint(-10, high) for _ in range(rng.randint(0, size))]


def _integer(rng: random.Random, size: int) -> int:
    return rng.choice([rng.randint(-30, 30), rng.randint(0, 1000), rng.randint(-1000, 20000)])


def _dictionary(rng: random.Random, size: int) -> dict[str, int]:
    keys = sorted({word(rng)[:4] for _ in range(rng.randint(0, size))})
    rng.shuffle(keys)
    return {key: rng.randint(-10, 20) for key in keys}


RANDOM_INPUTS = {"ints": _numbers, "int": _integer, "str": _text, "strs": _words, "dict": _dictionary}
EDGE_INPUTS: dict[str, tuple[Any, ...]] = {
    "ints": ([], [0], [7], [-3], [2, 2, 2], [1, 2, 3, 4, 5], [5, 4, 3, 2, 1], [-1, 0, 1]),
    "int": (0, 1, -1, 2, 7, 12, 97, 100, -36, 360, 1024),
    "str": ("", " ", "a", "Aa", "abba", "hello world", "  two  spaces ", "x1y22z333", "AEIOU aeiou"),
    "strs": ([], ["a"], ["same", "same"], ["bb", "a", "ccc"], ["Zed", "apple", "mango"]),
    "dict": ({}, {"a": 0}, {"x": 5, "y": 5}, {"b": -3, "a": 10, "c": 2}),
}


def _inputs(first: Block, rng: random.Random, size: int) -> Any:
    return (first.inputs or RANDOM_INPUTS[first.takes])(rng, size)


def _edges(first: Block) -> tuple[Any, ...]:
    return first.edges if first.first_only else EDGE_INPUTS[first.takes]


# ----------------------------------------------------------------------------- composing


def _continues(kind: str) -> bool:
    return any(block.takes == kind and not block.first_only for block in BLOCKS)


def _draw_chain(rng: random.Random, depth: int, family: str | None) -> list[tuple[Block, dict[str, Any]]]:
    chosen = family or rng.choice(FAMILIES)
    firsts = [b for b in BLOCKS if b.family == chosen and (b.first_only or b.family != "parser") and (depth == 1 or _continues(b.gives))]
    first = rng.choice(firsts)
    chain = [(first, first.draw(rng))]
    for position in range(1, depth):
        last = position == depth - 1
        options = [
            b for b in BLOCKS if not b.first_only and b.takes == chain[-1][0].gives and b.name != chain[-1][0].name and (last or _continues(b.gives))
        ]
        block = rng.choice(options)
        chain.append((block, block.draw(rng)))
    return chain


def reference_source(steps: Sequence[tuple[str, str]], takes: str, skip: int | None = None) -> str:
    """The reference ``solve`` for rendered ``(code, text)`` steps taking ``takes``, leaving out step ``skip``."""
    parameter = PARAMETER[takes]
    lines = [f"def {ENTRY}({parameter}):", f"    value = {parameter}"]
    for index, (code, text) in enumerate(steps):
        if index == skip:
            continue
        lines.append(f"    # {index + 1}. {text}")
        lines += ["    " + line for line in code.split("\n")]
    lines.append("    return value")
    return "\n".join(lines) + "\n"


def _compiled(source: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<reference>", "exec"), namespace)  # our own generated code, never an agent's
    return namespace[ENTRY]


def _call(function: Any, argument: Any) -> Any:
    return function(copy.deepcopy(argument))


def _distinct(values: Sequence[Any]) -> int:
    return len({repr(sorted(v.items())) if isinstance(v, dict) else repr(v) for v in values})


def _statement(first: Block, gives: str, texts: Sequence[str], visible: Sequence[tuple[tuple, Any]]) -> str:
    parameter = PARAMETER[first.takes]
    count = "one step" if len(texts) == 1 else f"{len(texts)} steps"
    lines = [
        f"Write a Python function `{ENTRY}({parameter})` that takes {TYPE_WORDS[first.takes]} and returns {TYPE_WORDS[gives]}, computed in {count}:"
    ]
    lines += [f"{index}. {text}" for index, text in enumerate(texts, 1)]
    lines.append("")
    lines.append("Examples:")
    lines += [f"    {ENTRY}({repr(args[0])}) == {repr(expected)}" for args, expected in visible]
    lines.append("")
    lines.append("Use only the standard library. Return the result; do not print it.")
    return "\n".join(lines)


def _unseen_inputs(first: Block, rng: random.Random, size: int, seen: set[str], count: int, tries: int) -> list[Any]:
    """Up to ``count`` inputs for ``first`` whose repr is not in ``seen``, from at most ``tries`` draws; adds each one
    taken to ``seen``, so that no input is both hidden and visible, or twice in one set."""
    found: list[Any] = []
    for _ in range(tries):
        if len(found) >= count:
            break
        value = _inputs(first, rng, size)
        if repr(value) not in seen:
            seen.add(repr(value))
            found.append(value)
    return found


def _attempt(rng: random.Random, depth: int, size: int, family: str | None, task_id: str) -> Task | None:
    chain = _draw_chain(rng, depth, family)
    first, last = chain[0][0], chain[-1][0]
    steps = [block.render(params) for block, params in chain]
    source = reference_source(steps, first.takes)
    solve = _compiled(source)
    seen: set[str] = set()
    hidden_inputs = []
    for value in list(_edges(first)) + [_inputs(first, rng, 4 * size) for _ in range(2)]:
        if repr(value) not in seen:
            seen.add(repr(value))
            hidden_inputs.append(value)
    hidden_inputs += _unseen_inputs(first, rng, size, seen, HIDDEN - len(hidden_inputs), tries=20 * HIDDEN)
    visible_inputs = _unseen_inputs(first, rng, size, seen, VISIBLE, tries=50)
    if len(visible_inputs) < VISIBLE:
        return None
    hidden_outputs = [_call(solve, value) for value in hidden_inputs]
    visible_outputs = [_call(solve, value) for value in visible_inputs]
    if last.gives == "bool":
        if _distinct(hidden_outputs) < 2:
            return None
    elif _distinct(hidden_outputs) < 3 or _distinct(visible_outputs) < 2:
        return None
    for index, (block, _params) in enumerate(chain):
        if block.takes == block.gives:
            shortened = _compiled(reference_source(steps, first.takes, skip=index))
            if all(_call(shortened, value) == output for value, output in zip(hidden_inputs, hidden_outputs)):
                return None
    visible = tuple(((value,), output) for value, output in zip(visible_inputs, visible_outputs))
    hidden = tuple(((value,), output) for value, output in zip(hidden_inputs, hidden_outputs))
    return Task(
        task_id,
        "function",
        first.family,
        _statement(first, last.gives, [text for _, text in steps], visible),
        ENTRY,
        visible,
        hidden,
        source,
        steps=tuple(block.name for block, _ in chain),
    )


def generate_task(seed: int, depth: int = 2, size: int = 8, family: str | None = None) -> Task:
    """The procgen task of ``seed`` (see the module docstring); the same arguments always give the same task."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be an int from 1 to {MAX_DEPTH}, got {depth!r}")
    if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= MAX_SIZE:
        raise ValueError(f"size must be an int from 1 to {MAX_SIZE}, got {size!r}")
    if family is not None and family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)} or None, got {family!r}")
    task_id = f"procgen:{seed}:{depth}:{size}:{family or 'any'}"
    rng = random.Random(f"parlour.coding.procgen/{task_id}")
    for _ in range(500):
        task = _attempt(rng, depth, size, family, task_id)
        if task is not None:
            return task
    raise RuntimeError(f"no task passed the quality checks for {task_id}; try another seed")


@functools.cache
def frozen_tasks(name: str = "CODE_V1") -> tuple[Task, ...]:
    """A frozen practice set by name (``CODE_V1``: see the module docstring); its hidden tests ship with parlour."""
    if name not in FROZEN_SETS:
        raise ValueError(f"unknown task set {name!r}; frozen sets: {', '.join(FROZEN_SETS)}")
    return tuple(
        replace(generate_task(i, depth=1 + (i // len(FAMILIES)) % 3, size=8, family=FAMILIES[i % len(FAMILIES)]), task_id=f"{name}:{i}")
        for i in range(FROZEN_SETS[name])
    )


def fingerprint(tasks: Sequence[Task]) -> str:
    """The SHA-256 of the tasks' canonical JSON: pins a frozen set."""
    text = json.dumps([task.to_json() for task in tasks], sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


_PROCGEN_ID = re.compile(r"procgen:(\d+):(\d+):(\d+):(\w+)")
_FROZEN_ID = re.compile(r"([A-Z][A-Z0-9_]*):(\d+)")


def task_from_id(task_id: str) -> Task:
    """The task with this id: a procgen task, a frozen set's, or one of a task file read by
    :mod:`parlour.envs.coding.loaders` (``file:PATH#LINE``); ``ValueError`` saying which ids exist otherwise."""
    if (match := _PROCGEN_ID.fullmatch(task_id)) is not None:
        seed, depth, size, family = match.groups()
        return generate_task(int(seed), int(depth), int(size), None if family == "any" else family)
    if (match := _FROZEN_ID.fullmatch(task_id)) is not None and match.group(1) in FROZEN_SETS:
        tasks = frozen_tasks(match.group(1))
        index = int(match.group(2))
        if index < len(tasks):
            return tasks[index]
    if task_id.startswith("file:"):
        return task_from_file_id(task_id)
    raise ValueError(
        f"no task {task_id!r}: ids are procgen:SEED:DEPTH:SIZE:FAMILY, CODE_V1:0 to CODE_V1:{FROZEN_SETS['CODE_V1'] - 1}, or file:PATH#LINE"
    )
