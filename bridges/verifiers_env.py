"""verifiers: a parlour environment as a multi-agent environment of the ``verifiers`` package (0.4, ``verifiers.v1``).

verifiers finds an environment by its taskset id, the name of an importable
module that exports one ``Taskset``, one ``Env`` and optionally one ``Harness``
subclass in ``__all__``. The top-level module ``parlour_verifiers``, installed
with parlour, exports this module's classes, so ``parlour_verifiers``
(:data:`TASKSET_ID`) is the id for every parlour environment and the
taskset's ``env_id`` names the game: ``vf-eval``, ``run_eval``, prime-rl's
orchestrator or any other verifiers consumer, in any process, loads it.

* :class:`ParlourTaskset` yields one task per episode: ``episodes`` seeds from
  ``seed``, with the game's ``options``.
* :class:`ParlourEnv` plays each episode with parlour's engine, every seat an
  agent of its own: one verifiers interaction, so one trace, per seat. Seats in
  ``learner_seats`` (indices or names) are played by the ``learner`` role,
  the others by the ``frozen`` role, whose traces are stamped
  ``trainable=False``; each role can have its own model
  (``--env.frozen.model``). A seat's system prompt holds the rules, as in
  parlour's own LLM agents; each of its turns is everything new it sees, and
  its reply is read with parlour's move extraction.
* Each seat's trace gets the reward ``return`` (its return in the episode),
  and in ``info``: its ``seat``, its ``turn_rewards`` (what it was paid from
  each of its replies up to its next one) and the episode's parlour
  ``record``, which :func:`parlour.replay` re-executes. A trace keeps the
  environment's text apart from the seat's: system and user messages are what
  the environment inserted, assistant messages the seat's replies (one per
  turn reward), so a branch's token ``mask`` (the tokens the model sampled)
  leaves the environment's text out of the loss; :func:`parlour.export.to_text` gives character and token spans of the
  record's conversation too.
* :class:`ChatHarness`, the roles' default harness, makes one chat call per
  turn, in-process, through verifiers' interception, so the rollout needs no
  sandbox, no ``uv`` and no network beyond the model's endpoint.

Example::

    import asyncio
    from verifiers.v1.cli.eval.runner import run_eval
    from verifiers.v1.configs.cli.eval import EvalConfig

    config = EvalConfig(env={"taskset": {"id": "parlour_verifiers", "env_id": "parlour/TicTacToe-v0", "episodes": 8},
                             "learner_seats": [0], "frozen": {"model": "my-frozen-model"}},
                        model="my-model", client={"base_url": "http://localhost:8000/v1", "api_key_var": "OPENAI_API_KEY"},
                        push=False, rich=None)
    episodes = asyncio.run(run_eval(config))
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AsyncExitStack
from typing import Any

import httpx
import verifiers.v1 as vf
from pydantic import Field, field_validator
from verifiers.v1.dialects.chat import message_to_wire

from parlour.envs.core.agent import AgentFailure
from parlour.envs.core.match import Match
from parlour.envs.core.rendering import render
from parlour.envs.registry import game_class
from parlour.wrappers.extraction import FORMAT_HINTS, default_extraction, extract_action, resolve_extractor
from parlour.wrappers.prompting import system_prompt

__all__ = ["ChatHarness", "ParlourEnv", "ParlourEnvConfig", "ParlourTask", "ParlourTaskset", "ParlourTasksetConfig"]

#: The taskset id: the top-level module ``parlour_verifiers``, which re-exports this module's ``__all__``.
TASKSET_ID = "parlour_verifiers"


class ParlourTasksetConfig(vf.TasksetConfig):
    """Which episodes the taskset yields: ``--env.taskset.env-id``, ``episodes``, ``seed`` and the game's ``options``."""

    env_id: str = "parlour/TicTacToe-v0"
    """A registered parlour environment."""
    episodes: int = Field(16, ge=1)
    """How many episodes (tasks), one per seed."""
    seed: int = Field(0, ge=0)
    """The first episode's seed; the others follow it."""
    options: dict[str, Any] = Field(default_factory=dict)
    """The game's and the engine's options, as ``parlour.make`` takes them."""

    @field_validator("env_id")
    @classmethod
    def _registered(cls, env_id: str) -> str:
        # Checked while the command line is read, so vf-eval answers with parlour's suggestion, not a traceback.
        try:
            game_class(env_id)
        except KeyError as error:
            raise ValueError(error.args[0].split("; known:")[0] + "; `parlour list` shows every id") from None
        return env_id


class ParlourData(vf.TaskData):
    """One episode of a parlour environment; a seat's own copy also names the seat."""

    env_id: str
    seed: int
    options: dict[str, Any] = Field(default_factory=dict)
    seat: str | None = None


class ParlourTask(vf.Task[ParlourData, vf.State, vf.TaskConfig]):
    """An episode of a parlour environment (its scoring is the game's: :class:`ParlourEnv` records the returns)."""


class ParlourTaskset(vf.Taskset[ParlourTask, ParlourTasksetConfig]):
    """The episodes of one parlour environment, one task per seed."""

    def load(self) -> Iterator[ParlourTask]:
        """One task per episode; its conversation is opened by the env, seat by seat, so it carries no prompt."""
        config = self.config
        game_class(config.env_id)  # an unknown environment fails here, before any rollout
        for seed in range(config.seed, config.seed + config.episodes):
            data = ParlourData(name=f"{config.env_id}#{seed}", env_id=config.env_id, seed=seed, options=dict(config.options))
            yield ParlourTask(data, config.task)


def _first_seat() -> list[int | str]:
    """The learner's seats by default: the first seat only."""
    return [0]


class ParlourEnvConfig(vf.EnvConfig):
    """The two roles (``learner``, ``frozen``), which seats the learner plays, and how replies are read."""

    # The in-process harness runs nothing in its box, so the host's subprocess runtime is enough.
    learner: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    """The trainable role: plays every seat in ``learner_seats``."""
    frozen: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    """The frozen role (``trainable=False``): plays every other seat."""
    learner_seats: list[int | str] = Field(default_factory=_first_seat)
    """The learner's seats, as indices into the game's players or as names; all of them for self-play."""
    extraction: str | None = None
    """How a move is read from a reply (a name from ``parlour.wrappers.extraction``); default: the game's."""

    @field_validator("extraction")
    @classmethod
    def _known_extraction(cls, extraction: str | None) -> str | None:
        """Refuse an unknown extraction when the run is configured, not at an episode's first reply."""
        if extraction is not None:
            resolve_extractor(extraction)
        return extraction


class ParlourEnv(vf.Env[ParlourEnvConfig]):
    """One parlour episode per task, each seat a verifiers interaction of its role (see the module docstring)."""

    async def setup(self, agents: vf.Agents) -> None:
        """Stamp the frozen role's traces untrainable."""
        agents.frozen.trainable = False

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        """Play the episode: ask whichever seat acts for its move until the game is over, then score every seat."""
        data = task.data
        match = Match(game_class(data.env_id), data.options)
        match.reset(seed=data.seed)
        learners = seat_names(match.players, self.config.learner_seats)
        extraction = self.config.extraction or default_extraction(data.env_id)
        hint = FORMAT_HINTS[extraction]
        roles = {player: "learner" if player in learners else "frozen" for player in match.players}
        async with AsyncExitStack() as stack:
            seats = {}
            for player, role in roles.items():
                agent = getattr(agents, role)
                # The rules are in every inbox from the reset on, so each seat's system prompt is known now.
                system, _ = system_prompt(match.agent_observation(player), hint)
                seat_task = type(task)(data.model_copy(update={"seat": player, "system_prompt": system}), task.config)
                seats[player] = await stack.enter_async_context(agent.interaction(seat_task))
            turn_rewards = await play(match, seats, extraction)
        names = {player: f"verifiers {role}: {getattr(agents, role).config.model}" for player, role in roles.items()}
        record = match.record(names)
        record["turn_rewards"] = turn_rewards
        for player, interaction in seats.items():
            trace = interaction.trace
            trace.record_reward("return", match.returns[player])
            trace.info.update(seat=player, turn_rewards=turn_rewards[player], record=record)


async def play(match: Match, seats: dict[str, vf.Interaction], extraction: str) -> dict[str, list[float]]:
    """Play ``match`` to its end, each acting seat's move its interaction's reply; returns each seat's turn rewards.

    A seat's turn reward is what it was paid from one of its replies up to its
    next one, so there is one per reply (one per turn of its trace); what it was
    paid before its first reply counts toward the first, and a seat paid without
    ever replying gets one entry, that pay. A seat whose run ended (a turn or
    token limit, a failed model call) forfeits at its next turn, as parlour's
    agents do when they cannot decide.
    """
    turn_rewards: dict[str, list[float]] = {player: [] for player in match.players}
    before = dict(match.returns)
    over: dict[str, str] = {}
    while not match.over:
        player = match.acting()[0]
        action: Any = None
        if player not in over:
            # Everything new since its last turn; the rules are already in its system prompt.
            text = render(message for message in match.messages(player) if message["kind"] != "rules")
            segment = await seats[player].turn(text)
            if segment.terminated:
                over[player] = f"its verifiers run ended ({seats[player].trace.stop_condition or 'stopped'})"
            else:
                reply = segment.last_reply
                action = extract_action(reply, match.legal_moves(player), extraction) or reply
                turn_rewards[player].append(before.pop(player, 0.0))
        if player in over:
            action = AgentFailure(over[player], forfeit=True)
        for paid, reward in match.submit(player, action).items():
            if turn_rewards[paid]:
                turn_rewards[paid][-1] += reward
            else:
                before[paid] = before.get(paid, 0.0) + reward
    for player, reward in before.items():
        if reward:
            turn_rewards[player].append(reward)
    return turn_rewards


def seat_names(players: list[str], seats: list[int | str]) -> set[str]:
    """The player names of ``seats`` (indices, digit strings or names); ``ValueError`` for one the game does not have."""
    names = set()
    for seat in seats:
        index = int(seat) if isinstance(seat, int) or seat.isdigit() else None
        name = players[index] if index is not None and 0 <= index < len(players) else seat
        if name not in players:
            raise ValueError(f"no seat {seat!r}; the players are {', '.join(players)}")
        names.add(name)
    return names


class ChatHarness(vf.Harness[vf.HarnessConfig]):
    """One chat-completions call per turn, made in-process through the rollout's interception endpoint.

    verifiers' own chat loops (``null``, ``bash``) run a script that ``uv``
    installs in the rollout's box; a game seat only needs the model's reply to
    the conversation so far, and ``Harness.launch`` allows a loop in the host
    process as long as every model call goes through ``endpoint`` and ``secret``.
    """

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self, ctx: vf.ModelContext, trace: vf.Trace, runtime: vf.Runtime, endpoint: str, secret: str, mcp_urls: dict[str, str], data: vf.TaskData
    ) -> vf.ProgramResult:
        """Send the conversation (``data``'s system prompt and prompt) to the model once; the interception records the turn."""
        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [] if system is None else [{"role": "system", "content": system}]
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        elif prompt is not None:
            messages.extend(message_to_wire(message) for message in prompt)
        # No client timeout: the rollout's own deadline (the agent's timeout) bounds the call.
        async with httpx.AsyncClient(timeout=None) as client:
            response = await client.post(
                f"{endpoint}/chat/completions", json={"model": ctx.model, "messages": messages}, headers={"Authorization": f"Bearer {secret}"}
            )
        if response.status_code != 200:
            return vf.ProgramResult(exit_code=1, stdout="", stderr=f"the chat call failed ({response.status_code}): {response.text}")
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")
