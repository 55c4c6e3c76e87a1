"""Every registered environment, in both observation modes and through the AEC, Parallel and Gymnasium faces,
driven with random and adversarial actions: text in every script (lone surrogates included), 1 MB replies,
numbers as floats and numpy values, values JSON cannot encode, and every tool-call syntax.

Whatever an agent sends, no exception escapes a step, no step takes more than a generous wall bound (the
issue asks for 1 s; 5 s here so that a loaded machine cannot fail the test), and the episode's record
replays after a JSON round trip. Seeded, so a failure reproduces; about a minute on two cores.
"""

from __future__ import annotations

import json
import random
import time
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest

import parlour
from parlour.envs.core.match import Match
from tests.conftest import ENV_MODES

#: Steps of one episode; an episode still running then is recorded unfinished (records of those replay too).
STEPS = 60
#: The bound on one step's wall time: the issue's 1 s, with room for a loaded machine.
MAX_STEP_SECONDS = 5.0
#: One reply of about 1 MB.
MEGABYTE = 'Lorem ipsum {"tool": [<answer> \ud800 ' * 30_000
#: The second episode's options: invalid actions never forfeit, so play reaches later states, and replies are not cut.
LENIENT = {"error_allowance": 10_000, "max_action_chars": len(MEGABYTE) + 1}
CODING = ("parlour/Code-v0", "parlour/CoderTester-v0", "parlour/CodeProposerSolver-v0")


def random_text(rng: random.Random, length: int = 30) -> str:
    """Code points from ASCII, control characters, the BMP, lone surrogates of both halves and the astral planes."""
    ranges = [(0x20, 0x7E), (0x20, 0x7E), (0, 0x1F), (0xA0, 0xD7FF), (0xD800, 0xDBFF), (0xDC00, 0xDFFF), (0xE000, 0xFFFF), (0x10000, 0x10FFFF)]
    return "".join(chr(rng.randint(*ranges[rng.randrange(len(ranges))])) for _ in range(rng.randrange(length + 1)))


class Fuzzer:
    """A seeded source of actions for one environment: legal moves often (so play goes deep), otherwise text,
    structured values and tool calls meant to break it."""

    def __init__(self, rng: random.Random, tools: list[dict[str, Any]]):
        self.rng = rng
        # Every game is offered tool calls: a game without tools must refuse them as it refuses any text.
        self.tools = [spec["function"] for spec in tools] or [{"name": "search", "parameters": {"properties": {"query": {"type": "string"}}}}]
        self.megabyte_sent = False

    def action(self, legal: list[Any]) -> Any:
        """One action, given the legal moves (strings in text mode, indices in vector mode; may be empty)."""
        rng = self.rng
        if legal and rng.random() < 0.45:
            return rng.choice(legal)
        if not self.megabyte_sent:
            # Every episode gets one reply of a megabyte: cut to max_action_chars in the first, whole in the second.
            self.megabyte_sent = True
            return MEGABYTE
        maker = rng.choice([self.text, self.text, self.structured, self.tool_call, self.tool_call, self.decorated])
        return maker(legal)

    def decorated(self, legal: list[Any]) -> Any:
        """A legal move spelled oddly: cased, padded, wrapped, followed by a surrogate, or as a numpy or float value."""
        if not legal:
            return self.text(legal)
        move = self.rng.choice(legal)
        if isinstance(move, int):
            # A small numpy int that still holds the move: int8 overflows past 127 moves (Breakthrough has hundreds).
            small = np.int8(move) if move <= np.iinfo(np.int8).max else np.int16(move)
            return self.rng.choice([np.int64(move), small, float(move), np.float32(move), str(move), -move - 1, move + 10**6])
        return self.rng.choice(
            [f"  {move.upper()}  ", f"I play {move}.", f"\\boxed{{{move}}}", f"{move}\ud800", f"<answer>{move}</answer>", move * 3]
        )

    def text(self, legal: list[Any]) -> str:
        """Random text, text shaped like the moves games parse, or text that is costly to parse."""
        rng = self.rng
        word = random_text(rng)
        return rng.choice(
            [
                word,
                f"[offer] {rng.choice(['1,200', '1e3', '1 000', '1_000', '3.5', '-1', '9' * 400, word])}",
                f"[accept] {word}",
                f"[pass] {word}",
                f"[all] {word}",
                f"[answer] {word}",
                f"### Final Answer ### {word}",
                f"<answer>{word}</answer>",
                f"<think>{word}</think>",
                "<answer>\ud800\udfff</answer>",
                f"\\boxed{{{word}}}",
                '{"a": ' * 2731,
                "[" * 5000,
                '{"player_1": "' * 500,
                "{" * 3000 + '{"tool": "search"}',
                f'{{"player_1": "{word}"}}',
                "",
                " ",
                "\x00",
                "\n" * 100,
                "\u202e\u200b\ufeff",
                word * 50,
            ]
        )

    def structured(self, legal: list[Any]) -> Any:
        """A value that is not text: numbers of every kind, containers, bytes, and objects JSON cannot encode."""
        return self.rng.choice(
            [
                0,
                -1,
                10**30,
                3.0,
                2.5,
                float("nan"),
                float("inf"),
                True,
                None,
                np.int64(1),
                np.float64(1.0),
                np.array([1]),
                b"bytes",
                bytearray(b"x"),
                [1, 2],
                ("a",),
                {"a": 1},
                {1, 2},
                {"tool_calls": None},
                {"tool_calls": []},
                {"tool_calls": [{}]},
                {"tool_calls": [{"function": "x"}]},
                object(),
            ]
        )

    def value(self, schema: dict[str, Any], encodable: bool) -> Any:
        """An argument value for ``schema``: often well-typed, sometimes off (floats for integers, numpy, huge)."""
        rng = self.rng
        kind = schema.get("type")
        if "enum" in schema and rng.random() < 0.7:
            return rng.choice(schema["enum"])
        if kind == "integer" and rng.random() < 0.7:
            number = rng.choice([1, 3, 5, 0, -2, 10**20])
            return rng.choice([number, float(number), number + 0.5] + ([] if encodable or abs(number) >= 2**63 else [np.int64(number)]))
        if kind == "array" and rng.random() < 0.7:
            return [self.value(schema.get("items", {}), encodable) for _ in range(rng.randrange(4))]
        if kind == "string" and rng.random() < 0.8:
            return rng.choice([random_text(rng), "print(1)", "def solve(x):\n    return x\n", "Tavelon", "x" * 5000])
        others = [None, True, 2.0, "text", [1], {"a": 1}]
        return rng.choice(others if encodable else others + [np.float32(1.5), b"x", {1}])

    def arguments(self, tool: dict[str, Any], encodable: bool) -> dict[str, Any]:
        """Arguments for ``tool``: each property drawn, some left out, sometimes one too many."""
        properties = tool.get("parameters", {}).get("properties", {})
        arguments = {name: self.value(schema, encodable) for name, schema in properties.items() if self.rng.random() < 0.85}
        if self.rng.random() < 0.15:
            arguments["unexpected"] = self.value({}, encodable)
        return arguments

    def tool_call(self, legal: list[Any]) -> Any:
        """A call of one of the game's tools in one of the syntaxes models emit, as text or as a message dict."""
        rng = self.rng
        tool = rng.choice(self.tools)
        name = tool["name"] if rng.random() < 0.9 else random_text(rng, 8)
        syntax = rng.randrange(6)
        if syntax == 0:
            arguments = self.arguments(tool, encodable=False)
            wrapped = arguments if rng.random() < 0.5 else json.dumps(arguments, default=repr)
            return {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": name, "arguments": wrapped}}]}
        if syntax == 5:
            return {"tool": name, "arguments": self.arguments(tool, encodable=False)}
        arguments = self.arguments(tool, encodable=True)
        if syntax == 1:
            return json.dumps({"tool_calls": [{"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]})
        if syntax == 2:
            return f"Let me check. {json.dumps({'tool': name, 'arguments': arguments})}"
        if syntax == 3:
            return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"
        value = next(iter(arguments.values()), random_text(rng))
        return f"<{name}>{value}</{name}>"


def timed(step: Callable[[], Any]) -> Any:
    """Run one step and hold it to the wall bound."""
    started = time.perf_counter()
    result = step()
    elapsed = time.perf_counter() - started
    assert elapsed < MAX_STEP_SECONDS, f"one step took {elapsed:.1f} s"
    return result


def replays_from_json(record: dict[str, Any]) -> None:
    """The record survives JSON both ways a writer may encode it, and each copy replays."""
    parlour.replay(json.loads(json.dumps(record)))
    text = json.dumps(record, ensure_ascii=False, allow_nan=False)
    parlour.replay(json.loads(text.encode("utf-8").decode("utf-8")))


def legal_of(observation: Any, info: dict[str, Any], vector: bool) -> list[Any]:
    """The legal moves: indices from the mask in vector mode, the strings in ``info`` in text mode."""
    if vector:
        return [int(i) for i in np.flatnonzero(observation["action_mask"])]
    return list(info.get("legal_moves") or [])


def fuzz_aec(env_id: str, obs_mode: str, options: dict[str, Any], fuzzer: Fuzzer, seed: int) -> dict[str, Any]:
    """One episode through the AEC face; its record."""
    env = parlour.make_aec(env_id, obs_mode=obs_mode, **options)
    env.reset(seed=seed)
    for _ in env.agent_iter(max_iter=STEPS):
        observation, _, terminated, truncated, info = env.last()
        action = None if terminated or truncated else fuzzer.action(legal_of(observation, info, obs_mode == "vector"))
        timed(lambda: env.step(action))
    return env.record()


def fuzz_parallel(env_id: str, obs_mode: str, options: dict[str, Any], fuzzer: Fuzzer, seed: int) -> dict[str, Any]:
    """One episode through the Parallel face; its record."""
    env = parlour.make_parallel(env_id, obs_mode=obs_mode, **options)
    observations, infos = env.reset(seed=seed)
    for _ in range(STEPS):
        if not env.agents:
            break
        actions = {agent: fuzzer.action(legal_of(observations[agent], infos[agent], obs_mode == "vector")) for agent in env.agents}
        observations, _, _, _, infos = timed(lambda: env.step(actions))
    return env.record()


def fuzz_gymnasium(env_id: str, obs_mode: str, options: dict[str, Any], fuzzer: Fuzzer, seed: int) -> dict[str, Any]:
    """One episode through the Gymnasium face, random agents in the other seats; its record."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = gymnasium.make(env_id, obs_mode=obs_mode, opponent="random", **options).unwrapped
    observation, info = timed(lambda: env.reset(seed=seed))
    for _ in range(STEPS):
        action = fuzzer.action(legal_of(observation, info, obs_mode == "vector"))
        observation, _, terminated, truncated, info = timed(lambda: env.step(action))
        if terminated or truncated:
            break
    return env.record()


FACES = {"aec": fuzz_aec, "parallel": fuzz_parallel, "gymnasium": fuzz_gymnasium}


@pytest.fixture(scope="module")
def sandbox_available() -> bool:
    """Whether bubblewrap can start a sandbox here (the coding games run nothing without one)."""
    from parlour.envs.coding import judge
    from parlour.sandbox import SandboxUnavailable

    try:
        judge.warm_sandbox()
    except SandboxUnavailable:
        return False
    return True


@pytest.mark.parametrize("face", sorted(FACES))
@pytest.mark.parametrize("env_id, obs_mode", ENV_MODES)
def test_no_action_breaks_an_environment(env_id, obs_mode, face, sandbox_available):
    if env_id in CODING and not sandbox_available:
        pytest.skip(f"{env_id} FUZZING SKIPPED: bubblewrap cannot start a sandbox here")
    rng = random.Random(f"{env_id}/{obs_mode}/{face}")
    tools = [tool.spec() for tool in Match(parlour.game_class(env_id)).game.tools]
    for episode, options in enumerate([{}, LENIENT]):
        record = FACES[face](env_id, obs_mode, options, Fuzzer(rng, tools), seed=episode)
        replays_from_json(record)
