"""Train on any parlour environment with TRL's ``GRPOTrainer``: decision points as a dataset, play-outs as the reward.

TRL's GRPO samples several completions per prompt and compares their rewards.
:class:`ParlourPositions` turns an environment into what it needs:

* :meth:`ParlourPositions.dataset`: a ``datasets.Dataset`` of decision points,
  collected by playing ``episodes`` games with the ``behaviour`` agents. Each
  row's ``prompt`` is the acting player's conversation up to that decision as
  chat messages (the system prompt with the rules, then its observations and
  its earlier moves), exactly as :class:`parlour.wrappers.LLMAgent` would
  show it; ``position`` indexes the engine snapshot kept in memory.
* :meth:`ParlourPositions.reward`: a TRL reward function. A completion is read
  by the environment's extractor (:mod:`parlour.wrappers.extraction`) and
  played from the restored snapshot; the rest of the game is played out by the
  ``continuation`` agent in every seat, and the reward is what the acting seat
  was paid from that move to the end. An invalid move gets
  ``-invalid_penalty`` and no play-out. The play-out's seeds derive from the
  position and the move, so equal moves of one group get equal play-outs and
  the group compares moves, not luck.

Example (on a CPU as written: ``parlour tiny-model tiny`` builds the model, and TRL's default
``bf16`` is turned off; any causal LM, such as ``"Qwen/Qwen2.5-0.5B-Instruct"``, takes its place)::

    from trl import GRPOConfig, GRPOTrainer
    positions = ParlourPositions("parlour/TicTacToe-v0", episodes=4)
    trainer = GRPOTrainer(model="tiny", reward_funcs=positions.reward, train_dataset=positions.dataset(),
                          args=GRPOConfig(output_dir="out", bf16=False, max_completion_length=8, max_steps=2, report_to=[]))
    trainer.train()

Whole episodes with tools and per-turn rewards go through :mod:`parlour.bridges.trl` instead.

The trained model is a Hugging Face folder, so ``hf:PATH`` plays it in every
parlour command.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from parlour.agents import make_agent
from parlour.envs.core.agent import act_batch, reset_agent
from parlour.envs.core.match import Match, Snapshot
from parlour.envs.core.seeding import episode_seeds
from parlour.envs.registry import game_class
from parlour.wrappers.extraction import FORMAT_HINTS, default_extraction, resolve_extractor, strip_reasoning
from parlour.wrappers.prompting import SYSTEM_TEMPLATE, Conversation, system_prompt


class ParlourPositions:
    """Decision points of ``env_id`` as a TRL dataset, and the reward function that plays a reply out.

    Args:
        env_id: any registered environment.
        episodes: games played to collect decision points.
        seed: base seed of those games (episode ``i`` uses the seeds parlour derives from it).
        behaviour: agent spec (or agent) that plays every seat while collecting.
        continuation: agent spec (or agent) that plays every seat after the scored move.
        env_kwargs: game options.
        invalid_penalty: the reward of a completion the environment does not accept is ``-invalid_penalty``.
        seats: keep the decision points of these seats only (default: every seat).
        extraction: extractor name for completions (default per environment).
        system_template: the system prompt's first line, as for :class:`~parlour.wrappers.LLMAgent`.
    """

    def __init__(
        self,
        env_id: str,
        *,
        episodes: int = 32,
        seed: int = 0,
        behaviour: Any = "random",
        continuation: Any = "random",
        env_kwargs: dict[str, Any] | None = None,
        invalid_penalty: float = 1.0,
        seats: Sequence[str] | None = None,
        extraction: str | None = None,
        system_template: str = SYSTEM_TEMPLATE,
    ):
        if episodes < 1:
            raise ValueError(f"episodes must be at least 1, got {episodes}")
        self.env_id = env_id
        self.game_cls = game_class(env_id)
        self.env_kwargs = dict(env_kwargs or {})
        self.invalid_penalty = invalid_penalty
        self.continuation = make_agent(continuation, env_id=env_id)
        self.extraction, self.extractor = resolve_extractor(extraction or default_extraction(env_id))
        self.system_template = system_template
        self.seed = seed
        self.snapshots: list[Snapshot] = []
        self.players: list[str] = []
        self.legal: list[list[str] | None] = []
        self.prompts: list[list[dict[str, str]]] = []
        self._collect(make_agent(behaviour, env_id=env_id), episodes, seats)

    def _collect(self, behaviour: Any, episodes: int, seats: Sequence[str] | None) -> None:
        hint = FORMAT_HINTS.get(self.extraction, FORMAT_HINTS["auto"])
        for episode in range(episodes):
            match = Match(self.game_cls, self.env_kwargs)
            game_seed, seat_seeds = episode_seeds(self.seed, episode, len(match.players))
            match.reset(game_seed)
            agents = {}
            for player, seat_seed in zip(match.players, seat_seeds):
                agents[player] = copy.deepcopy(behaviour)
                reset_agent(agents[player], seat_seed)
            conversations: dict[str, Conversation] = {}

            def decide(
                player: str,
                match: Match = match,
                agents: dict[str, Any] = agents,
                episode: int = episode,
                conversations: dict[str, Conversation] = conversations,
            ) -> Any:
                observation = {**match.agent_observation(player), "episode": episode}
                conversation = conversations.get(player)
                text = observation["text"]
                if conversation is None:
                    system, text = system_prompt(observation, hint, self.system_template)
                    conversation = conversations[player] = Conversation(system)
                conversation.observe(text)
                if seats is None or player in seats:
                    self.snapshots.append(match.snapshot())
                    self.players.append(player)
                    self.legal.append(observation["legal_moves"])
                    self.prompts.append(conversation.messages())
                (action,) = act_batch(agents[player], [observation])
                conversation.reply(str(action))
                return action

            match.play_until(decide)

    def __len__(self) -> int:
        return len(self.snapshots)

    def dataset(self) -> Any:
        """The decision points as a ``datasets.Dataset`` with columns ``prompt`` (chat messages) and ``position``."""
        from datasets import Dataset

        return Dataset.from_dict({"prompt": self.prompts, "position": list(range(len(self.prompts)))})

    def score(self, position: int, reply: str) -> float:
        """The acting seat's reward for answering ``reply`` at ``position``: the play-out's return, or ``-invalid_penalty``."""
        match = Match(self.game_cls, self.env_kwargs)
        match.restore(self.snapshots[position])
        player = self.players[position]
        action = self.extractor(strip_reasoning(reply), self.legal[position])
        before = match.returns[player]
        match.submit(player, reply if action is None else action)
        if match.steps[-1]["error"] is not None:
            return -self.invalid_penalty
        digest = hashlib.sha1(f"{position}\0{match.steps[-1]['move']}".encode()).digest()
        seeds = np.random.SeedSequence([self.seed, int.from_bytes(digest[:8], "little")]).generate_state(len(match.players), np.uint64)
        agents = {}
        for player_name, seat_seed in zip(match.players, seeds):
            agents[player_name] = copy.deepcopy(self.continuation)
            reset_agent(agents[player_name], int(seat_seed >> 1))
        match.play_until(lambda acting: act_batch(agents[acting], [match.agent_observation(acting)])[0])
        return float(match.returns[player] - before)

    def reward(self, prompts: Any = None, completions: Sequence[Any] = (), position: Sequence[int] = (), **_: Any) -> list[float]:
        """TRL's reward function: one play-out score per completion (text or chat messages), at its row's ``position``."""
        rewards = []
        for completion, index in zip(completions, position):
            text = completion[-1]["content"] if isinstance(completion, list) else str(completion)
            rewards.append(self.score(int(index), text))
        return rewards
