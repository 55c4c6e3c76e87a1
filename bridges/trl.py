"""TRL: a parlour environment as ``GRPOTrainer(environment_factory=...)``'s environment class.

:func:`environment_class` builds one class per environment. TRL makes one
instance per rollout and finds its tools by reading the class's public
methods, so each of the game's tools is a method with typed arguments and a
docstring (a game without tools gets ``move(move)``; a tool game whose moves
are text gets it beside its tools, and so does one with seats that move by text
beside their tools, ``Game.text_moves``: ServiceDesk's messages). ``reset(**row)``
starts an episode from a dataset row: ``seed``, and optionally ``seat`` and
``opponent`` (an agent spec such as ``"random"`` or ``"minimax"``; by default the
game's ``default_opponents``, such as ServiceDesk's customer simulator, and
``random`` elsewhere); the other seats are played inside, so a tool call answers
with everything the learner sees until it is to act again.

Rewards, the way TRL reads them: ``get_reward()`` is the learner's return
for the episode (TRL adds it as a reward source named after the class), and
every reward function TRL calls receives ``environments=[...]``, whose
``turn_rewards`` hold the learner's reward for each of its tool calls (what it
was paid from that call to its next, and what it was paid before its first
counted with the first: :func:`parlour.export.turn_rewards`), for
turn-level credit assignment; they sum to the return. TRL builds the token sequences itself; the only
text the environment inserts is ``reset``'s first observation (in the prompt)
and the tool answers, which TRL masks out of the loss (its ``tool_mask``).
An episode the model stops playing before the end scores ``unfinished_reward``,
so quitting is never better than losing.

Each finished episode's parlour record (with ``turn_rewards`` and the
opponents' names and seeds) is appended to ``records`` if given, so a training
run can be replayed with :func:`parlour.replay`.

Example::

    from trl import GRPOConfig, GRPOTrainer
    from parlour.bridges.trl import environment_class, rows
    trainer = GRPOTrainer(model="Qwen/Qwen3-0.6B", train_dataset=rows(64, opponent="random"),
                          environment_factory=environment_class("parlour/TicTacToe-v0"),
                          args=GRPOConfig(output_dir="out", bf16=False))
    trainer.train()
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from parlour.agents import make_agent
from parlour.envs.core.gym import GymGame
from parlour.envs.core.match import Match
from parlour.envs.core.record import Record
from parlour.envs.core.tools import Tool
from parlour.envs.registry import game_class
from parlour.export import turn_rewards

#: The Python type TRL's schema reader maps back to each JSON-schema type.
JSON_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}

#: The user message a row's prompt holds; ``reset`` appends the first observation to it.
PROMPT = "Play the game below by calling its tools. Each tool answers with what you see next."


def rows(episodes: int, seed: int = 0, seat: int | str = 0, opponent: str | None = None, prompt: str = PROMPT) -> Any:
    """A ``datasets.Dataset`` of ``episodes`` rows (``prompt``, ``seed``, ``seat``, and ``opponent`` when one is given)
    for :func:`environment_class`'s ``reset``; without ``opponent``, ``reset`` seats the game's own."""
    from datasets import Dataset

    columns = {
        "prompt": [[{"role": "user", "content": prompt}] for _ in range(episodes)],
        "seed": [seed + index for index in range(episodes)],
        "seat": [str(seat)] * episodes,
    }
    if opponent is not None:
        columns["opponent"] = [opponent] * episodes
    return Dataset.from_dict(columns)


def move_tool(game_name: str) -> Tool:
    """The ``move`` tool of a game whose moves are text: the move is the argument."""
    return Tool(
        "move",
        f"Play your move in {game_name}; the answer is what you see next, or the result if the game is over.",
        {"type": "object", "properties": {"move": {"type": "string", "description": "your move, written as the rules ask"}}, "required": ["move"]},
        final=True,
    )


def tool_method(tool: Tool) -> Any:
    """A method that plays ``tool``, with the signature and Google-style docstring TRL turns into the tool's schema."""
    properties = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))

    def method(self: Any, **arguments: Any) -> str:
        return self._play(tool, {name: value for name, value in arguments.items() if value is not None})

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {"return": str}
    lines = []
    # Required arguments first: a Python signature cannot put one after an argument with a default.
    for name in sorted(properties, key=lambda n: n not in required):
        schema = properties[name]
        annotations[name] = JSON_TYPES.get(schema.get("type"), str)
        default = inspect.Parameter.empty if name in required else None
        parameters.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=annotations[name]))
        lines.append(f"    {name}: {' '.join(str(schema.get('description', name)).split())}")
    method.__name__ = method.__qualname__ = tool.name
    method.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    args = "\n\nArgs:\n" + "\n".join(lines) if lines else ""
    method.__doc__ = (
        f"{' '.join(tool.description.split())}{args}\n\nReturns:\n    What you see next: the answer, the other players' moves, or the result."
    )
    return method


def environment_class(
    env_id: str,
    *,
    env_kwargs: dict[str, Any] | None = None,
    unfinished_reward: float = -1.0,
    records: list[Record] | None = None,
) -> type:
    """The class TRL's ``environment_factory`` takes for ``env_id``: one method per tool, ``reset(**row)`` and ``get_reward()``.

    Args:
        env_id: any registered environment.
        env_kwargs: the game's and the engine's options.
        unfinished_reward: the reward of an episode the model stopped playing before it ended.
        records: if given, each finished or abandoned episode's record is appended to it.
    """
    game_cls = game_class(env_id)
    options = dict(env_kwargs or {})
    tools = list(Match(game_cls, options).tools.values())
    if not any(tool.final for tool in tools) or game_cls.text_moves:
        tools.append(move_tool(game_cls.name))
    namespace: dict[str, Any] = {tool.name: tool_method(tool) for tool in tools}
    namespace.update(
        env_id=env_id,
        options=options,
        unfinished_reward=unfinished_reward,
        records=records,
        __doc__=f"{game_cls.name} ({env_id}) for TRL's environment_factory: tools {', '.join(t.name for t in tools)}.",
    )
    return type(game_cls.name + "Environment", (ParlourEnvironment,), namespace)


class ParlourEnvironment:
    """One seat of a parlour episode, played through tool calls; :func:`environment_class` makes its subclasses."""

    env_id: str
    options: dict[str, Any]
    unfinished_reward: float
    records: list[Record] | None

    def __init__(self) -> None:
        self._faces: dict[tuple[str, str | None], GymGame] = {}
        self._face: GymGame | None = None
        self._kept = True

    def reset(self, seed: int = 0, seat: int | str = 0, opponent: str | None = None, **_row: Any) -> str:
        """Start an episode of the row's ``seed`` with the learner in ``seat`` against ``opponent`` (default: the game's
        ``default_opponents``, ``random`` elsewhere); other columns are ignored.

        Returns the learner's first observation, which TRL appends to the row's prompt.
        """
        self._keep()
        seat = int(seat) if isinstance(seat, str) and seat.isdigit() else seat
        key = (str(seat), opponent)
        if key not in self._faces:
            agent = None if opponent is None else make_agent(opponent, env_id=self.env_id)
            self._faces[key] = GymGame(game_class(self.env_id), opponent=agent, seat=seat, **self.options)
        self._face = self._faces[key]
        observation, _ = self._face.reset(seed=int(seed))
        self._kept = False
        return observation["text"]

    def _play(self, tool: Tool, arguments: dict[str, Any]) -> str:
        """Submit one tool call as the learner's action; the answer is the learner's next observation."""
        face = self._face
        if face is None:
            raise RuntimeError("call reset() before playing")
        if face.match.over or face.player in face.match.eliminated:
            raise ValueError("the game is over; no more moves")
        action = arguments["move"] if tool.name == "move" else json.dumps({"tool": tool.name, "arguments": arguments})
        observation, _, terminated, truncated, _ = face.step(action)
        text = observation["text"]
        if terminated or truncated:
            text += f"\nThe game is over. Your return: {face.match.returns[face.player]:g}."
        return text

    @property
    def finished(self) -> bool:
        """Whether the current episode ended (or the learner was eliminated)."""
        face = self._face
        return face is not None and (face.match.over or face.player in face.match.eliminated)

    def get_reward(self) -> float:
        """The learner's return for the episode, or ``unfinished_reward`` if the model stopped playing before the end."""
        self._keep()
        if self._face is None:
            raise RuntimeError("call reset() before asking for the reward")
        return float(self._face.match.returns[self._face.player]) if self.finished else self.unfinished_reward

    @property
    def turn_rewards(self) -> list[float]:
        """The learner's reward for each of its turns so far (see the module docstring); empty before :meth:`reset`."""
        face = self._face
        return [] if face is None else turn_rewards(face.record(), face.player)

    @property
    def record(self) -> Record:
        """The episode's parlour record, with the learner's ``turn_rewards`` and the opponents' names and seeds."""
        face = self._face
        if face is None:
            raise RuntimeError("call reset() before asking for the record")
        record = face.record()
        record["turn_rewards"] = {face.player: turn_rewards(record, face.player)}
        return record

    def _keep(self) -> None:
        """Append the episode's record to ``records`` once: when its reward is read, or when the next one starts."""
        if self._kept or self._face is None:
            return
        self._kept = True
        if self.records is not None:
            self.records.append(self.record)
