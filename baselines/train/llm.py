"""The LLM self-play trainer: a ``transformers`` causal LM learns a parlour game against a league.

``parlour train llm ENV_ID --model PATH_OR_ID --out DIR`` calls :func:`train_llm`.

Each update plays ``episodes`` episodes with :mod:`parlour.evaluation.rollout`, all in
flight at once so the learner answers every pending decision in one batched
call. Episodes come in groups of ``group_size`` that share the game seed, the
learner's seat and the opponent, drawn from the league: the learner itself
(``mirror``: both seats learn), a frozen snapshot of an earlier learner, or a
scripted anchor (``random`` and the environment's strong agent). Only the
learner's decisions become training rows; every game's record is kept
(``DIR/episodes.jsonl.gz`` when ``keep_records``) and replays with
:func:`parlour.replay`.

Roles. ``roles`` gives a model per role instead of one shared ``model``
(``parlour train llm ENV --model proposer=PATH --model solver=PATH``), for
role-specialised self-play (proposer and solver, coder and tester): role
``R`` plays the seat ``R`` and the seats ``R_0``, ``R_1``, ... (:func:`role_seats`),
and every seat belongs to one role. Each role has its own policy, its own
advantages (from its own rows of the turn table, with its own estimator state)
and its own optimiser; the roles in ``frozen`` play and never learn. Every
episode seats each role's policy in its seats (there is no league: the roles
are each other's opponents), ``train.csv`` has a row per role and update
(``role`` column), the evaluation plays each trainable role in its seats
against each evaluation opponent in the others, and each trainable role's
model is saved to ``DIR/ROLE`` (a Hugging Face folder with its
``parlour_agent.json``, so ``hf:DIR/ROLE`` plays it).

Rewards and advantages. A turn's reward is what its seat was paid from that
decision to its next (:class:`parlour.evaluation.rollout.Turn`); an invalid action
costs ``invalid_penalty`` on its own turn only. An episode the learner lost by
running out of invalid actions (``generate`` mode; the allowance is
``max_invalid``) is void: its rewards are zeroed and only the penalties
count, so a malformed reply is never scored as a lost game. Advantages come
from one of the estimators of :mod:`parlour.baselines.train.advantages`
(``grpo``, ``rae``, ``turn_rtg``, ``gigpo``).

Loss. ``reinforce``: ``-A * log pi(a|s)``; ``ppo``: the clipped surrogate
``-min(r A, clip(r, 1-eps, 1+eps) A)`` with ``r = pi(a|s) / pi_old(a|s)``, over
``ppo_epochs`` passes. In ``score_legal`` mode ``pi`` is the softmax over
legal moves (one term per decision); in ``generate`` mode the terms are per
token and averaged over all tokens of the batch. ``kl_coef > 0`` adds
``kl_coef * KL(pi || pi_init)``: exact over the legal moves, or the
``k3`` estimator per token (``exp(q) - q - 1``, ``q = log pi_init - log pi``). With
``lora`` only LoRA adapters train (``peft``), and the initial policy is the
model with its adapters switched off. The model stays in eval mode (no
dropout), so the log-probabilities of the rollouts and of the update agree.

Devices. ``accelerate`` places the model: CPU by default when no GPU is
there, the GPU otherwise, with optional mixed precision; the same command runs
on both. One process (no data parallelism).

Seeing that it learns. Every ``eval_every`` updates (and before the first and
after the last) the learner plays each evaluation opponent (``random`` and the
strong agent by default) for ``eval_episodes`` episodes with seats rotated, on
fixed seeds (``eval_seed``), taking its most likely move (``eval_greedy``, the
default) or sampling: ``DIR/eval.csv`` gets win/draw/loss counts, the win rate
with its Wilson 95% interval, the mean return, the invalid-move rate, the
policy entropy and the response length; ``DIR/train.csv`` the training metrics
of every update (return and win rate in the training games, loss, KL, clipped
fraction, decisions, tokens, rollout and update seconds); ``DIR/learning.png``
and ``DIR/learning_time.png`` plot the evaluation against updates and wall time
(:func:`parlour.baselines.train.plots.plot_learning`). On KuhnPoker and
LeducHoldem in ``score_legal`` mode each evaluation also measures the
policy's exploitability with OpenSpiel (:func:`llm_exploitability`; a row
whose opponent is ``best response``). The final model is a
Hugging Face folder, ``DIR/checkpoint`` (LoRA adapters merged), with
``parlour_agent.json`` beside the weights saying its mode and the decoding
the evaluations used (:func:`parlour.wrappers.llm_agent.write_checkpoint_settings`),
so ``hf:DIR/checkpoint`` plays it as it was trained and evaluated anywhere an
agent spec is taken; ``DIR/training.json`` records the settings. Ctrl-C stops a run and still saves
the checkpoint, the CSVs and the curves (:class:`TrainingInterrupted`).
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import gzip
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from parlour.agents import agent_name
from parlour.baselines.train.advantages import ESTIMATORS, compute_advantages
from parlour.baselines.train.evaluation import strong_agent, wilson
from parlour.baselines.train.plots import plot_learning
from parlour.envs.core.match import Match, make_game
from parlour.envs.core.seeding import episode_seeds
from parlour.envs.registry import game_class
from parlour.evaluation.exploitability import supported as exploitability_supported
from parlour.evaluation.heap import frozen_heap
from parlour.evaluation.results import outcome_of
from parlour.evaluation.rollout import Plan, Played, Rollout, agent_names, make_plan
from parlour.wrappers.llm_agent import write_checkpoint_settings
from parlour.wrappers.llm_policy import MODES, LMPolicy, candidate_batch, candidate_scores, completion_scores, to_device

#: Loss names.
LOSSES = ("reinforce", "ppo")
#: The columns of ``train.csv``.
TRAIN_COLUMNS = (
    "update",
    "role",
    "wall_s",
    "episodes",
    "decisions",
    "tokens",
    "mean_return",
    "win_rate",
    "invalid_rate",
    "entropy",
    "response_tokens",
    "loss",
    "kl",
    "clip_fraction",
    "rollout_s",
    "rollout_model_s",
    "update_s",
)
#: The columns of ``eval.csv``.
EVAL_COLUMNS = (
    "update",
    "role",
    "wall_s",
    "opponent",
    "episodes",
    "wins",
    "draws",
    "losses",
    "win_rate",
    "win_low",
    "win_high",
    "mean_return",
    "invalid_rate",
    "entropy",
    "response_tokens",
    "exploitability",
)
#: Game seeds whose deal is a given one, per environment: ``{(env_id, cards): seed}`` (see :func:`seed_for_deal`).
_DEAL_SEEDS: dict[tuple[str, tuple[Any, ...]], int] = {}


def view_hash(view: Any) -> str:
    """A short stable hash of a player's own view (the anchor-state key of ``gigpo``)."""
    return hashlib.sha1(json.dumps(view, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class LLMTrainConfig:
    """Settings of :func:`train_llm` (see the module docstring); every field is a ``parlour train llm`` option."""

    env_id: str
    #: The one model every learning seat shares (``""`` when ``roles`` gives a model per role).
    model: str
    out: str
    #: A model per role, ``{role: path or hub id}`` (see :func:`role_seats`); each role learns on its own.
    roles: dict[str, str] = field(default_factory=dict)
    #: Roles whose model plays but never learns.
    frozen: list[str] = field(default_factory=list)
    mode: str = "score_legal"
    estimator: str = "grpo"
    loss: str = "reinforce"
    updates: int = 20
    episodes: int = 32
    group_size: int = 4
    learning_rate: float = 1e-5
    kl_coef: float = 0.0
    clip: float = 0.2
    ppo_epochs: int = 2
    minibatch: int | None = None
    micro_batch: int = 16
    max_grad_norm: float = 1.0
    temperature: float = 1.0
    max_new_tokens: int = 32
    history_turns: int | None = 1
    invalid_penalty: float = 0.1
    max_invalid: int = 8
    mirror: float = 0.5
    snapshots: float = 0.25
    anchors: float = 0.25
    anchor_agents: list[str] | None = None
    snapshot_every: int = 5
    max_snapshots: int = 3
    eval_every: int = 5
    eval_episodes: int = 40
    eval_opponents: list[str] | None = None
    eval_seed: int = 1_000_003
    eval_greedy: bool = True
    #: Measure the exploitability at each evaluation where it can be computed (KuhnPoker, LeducHoldem, ``score_legal``).
    exploitability: bool = True
    seed: int = 0
    lora: bool = False
    lora_rank: int = 8
    lora_alpha: int = 16
    mixed_precision: str = "no"
    device: str | None = None
    dtype: str = "auto"
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    estimator_options: dict[str, Any] = field(default_factory=dict)
    keep_records: bool = True
    progress: bool = True
    #: The command line that started the run, recorded in ``training.json``.
    command: str = ""

    def check(self) -> None:
        """``ValueError`` naming the fix for a setting that cannot work."""
        game = make_game(game_class(self.env_id), dict(self.env_kwargs))
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.mode == "score_legal" and not game.enumerable:
            raise ValueError(f"{self.env_id} has no enumerable moves, so score_legal cannot score them; use --mode generate")
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"unknown estimator {self.estimator!r}; choose one of {', '.join(ESTIMATORS)}")
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        for name in ("updates", "episodes", "group_size", "micro_batch", "ppo_epochs", "eval_episodes", "snapshot_every", "eval_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.episodes % self.group_size:
            raise ValueError(f"episodes ({self.episodes}) must be a multiple of group_size ({self.group_size})")
        if min(self.mirror, self.snapshots, self.anchors) < 0 or self.mirror + self.snapshots + self.anchors <= 0:
            raise ValueError("the league weights mirror, snapshots and anchors must be >= 0 and not all 0")
        if self.learning_rate <= 0 or self.temperature <= 0:
            raise ValueError("learning_rate and temperature must be > 0")
        if self.kl_coef < 0 or self.invalid_penalty < 0:
            raise ValueError("kl_coef and invalid_penalty must be >= 0")
        if bool(self.model) == bool(self.roles):
            raise ValueError("give one shared model (--model PATH) or a model per role (--model ROLE=PATH ...), not both or neither")
        unknown = sorted(set(self.frozen) - set(self.roles))
        if unknown:
            raise ValueError(
                f"--frozen names roles given a model: {', '.join(unknown)} is not one of {sorted(self.roles) or 'them (no roles given)'}"
            )
        if self.roles:
            role_seats(game.players, self.roles)
            if set(self.frozen) == set(self.roles):
                raise ValueError("every role is frozen, so nothing would learn; leave at least one role out of --frozen")


def role_seats(players: Sequence[str], roles: Mapping[str, Any]) -> dict[str, list[str]]:
    """The seats of each role: role ``R`` plays the seat named ``R`` and the seats ``R_0``, ``R_1``, ...

    So ``player_0`` is one TicTacToe seat, and ``solver`` every solver of SearchSelfPlay. Every seat must
    belong to exactly one role; a ``ValueError`` names the seats otherwise.
    """
    seats: dict[str, list[str]] = {role: [] for role in roles}
    unowned = []
    for player in players:
        owners = [role for role in roles if player == role or (player.startswith(f"{role}_") and player[len(role) + 1 :].isdigit())]
        if len(owners) > 1:
            raise ValueError(
                f"seat {player!r}: roles {', '.join(owners)} both claim it; the seats are {list(players)}, and role R plays seat R and seats R_0, R_1, ..."
            )
        if owners:
            seats[owners[0]].append(player)
        else:
            unowned.append(player)
    # A misspelt role is both a role without seats and seats without a role: name the role, the likelier fix.
    empty = [role for role, mine in seats.items() if not mine]
    if empty:
        raise ValueError(f"roles {', '.join(empty)} play no seat; the seats are {list(players)}, and role R plays seat R and seats R_0, R_1, ...")
    if unowned:
        raise ValueError(f"seat {unowned[0]!r}: no role plays it; the seats are {list(players)}, and role R plays seat R and seats R_0, R_1, ...")
    return seats


@dataclass
class _GroupedPlan(Plan):
    """A :class:`Plan` whose episodes come in groups of ``group_size`` sharing the game seed (GRPO's groups)."""

    group_size: int = 1

    def seeds(self, episode: int) -> tuple[int, list[int]]:
        """The group's game seed and the episode's own seat seeds."""
        game_seed, _ = episode_seeds(self.seed, episode // self.group_size, len(self.players))
        _, seat_seeds = episode_seeds(self.seed, episode, len(self.players))
        return game_seed, seat_seeds


def seed_for_deal(env_id: str, cards: Sequence[int], limit: int = 100_000) -> int:
    """The smallest game seed whose deal is the one OpenSpiel's chance ``cards`` describe (KuhnPoker, LeducHoldem).

    The text a player is shown tells its card when the hand is dealt, so an
    information state's text is replayed from a real deal rather than from
    cards put into a game afterwards.
    """
    from parlour.evaluation.exploitability import ADAPTERS

    key = (env_id, tuple(cards))
    if key not in _DEAL_SEEDS:
        adapter, game_cls = ADAPTERS[env_id], game_class(env_id)
        for seed in range(limit):
            match = Match(game_cls, {})
            match.reset(seed)
            # KuhnPoker and LeducHoldem (the adapters' games) keep their deal in ``cards``, which Game does not declare.
            dealt: Any = match.game
            wanted = copy.deepcopy(dealt)
            adapter.deal(wanted, list(cards))
            if list(wanted.cards) == list(dealt.cards):
                _DEAL_SEEDS[key] = seed
                break
        else:
            raise RuntimeError(f"no seed below {limit} deals {list(cards)} in {env_id}")
    return _DEAL_SEEDS[key]


def llm_tabular_policy(env_id: str, policy: LMPolicy, micro_batch: int = 64) -> tuple[Any, list[list[int]]]:
    """The OpenSpiel ``TabularPolicy`` of an LLM's softmax over legal moves, and the prompt of every information state.

    Each OpenSpiel information state is replayed in parlour from a seed with
    the same deal (:func:`seed_for_deal`), the acting player's conversation
    built as in play (its observations and its own earlier moves), and the
    legal moves scored as in ``score_legal`` mode.
    """
    import pyspiel
    import torch
    from open_spiel.python import policy as openspiel_policy

    from parlour.evaluation.exploitability import ADAPTERS

    adapter, game_cls = ADAPTERS[env_id], game_class(env_id)
    table = openspiel_policy.TabularPolicy(pyspiel.load_game(adapter.openspiel))
    scorer = policy.copy_with(policy.model)
    prompts, candidates, targets = [], [], []
    for row, state in enumerate(table.states):
        history = state.full_history()
        match = Match(game_cls, {})
        match.reset(seed_for_deal(env_id, [item.action for item in history if item.player == pyspiel.PlayerId.CHANCE]))
        player = match.players[state.current_player()]
        name, _ = scorer._extractor({"env_id": env_id})
        for item in history:
            if item.player == pyspiel.PlayerId.CHANCE:
                continue
            acting = match.acting()[0]
            move = adapter.move(match.game, item.action)
            if acting == player:
                scorer._observe((row, player), match.agent_observation(acting), name).reply(move)
            match.submit(acting, move)
        conversation = scorer._observe((row, player), match.agent_observation(player), name)
        legal = match.legal_moves_of(player)
        actions = state.legal_actions()
        translated = [adapter.move(match.game, action) for action in actions]
        if sorted(translated) != sorted(legal):
            raise RuntimeError(f"{env_id} offers {legal} where OpenSpiel's {adapter.openspiel} offers {translated}")
        prompts.append(scorer.prompt_ids(conversation.messages(scorer.history_turns)))
        candidates.append([scorer.move_ids(move) for move in legal])
        targets.append([(action, legal.index(move)) for action, move in zip(actions, translated)])
    table.action_probability_array[:] = 0.0
    with torch.no_grad():
        for start in range(0, len(prompts), micro_batch):
            batch = candidate_batch(prompts[start : start + micro_batch], candidates[start : start + micro_batch], policy.pad_id)
            scores = candidate_scores(policy.model, batch).scores
            probs = torch.softmax(scores / policy.temperature, dim=1).cpu().numpy()
            for row, chunk_row in zip(range(start, start + len(probs)), probs):
                for action, index in targets[row]:
                    table.action_probability_array[row, action] = chunk_row[index]
    return table, prompts


def llm_exploitability(env_id: str, policy: LMPolicy) -> float:
    """Exploitability of the LLM's ``score_legal`` policy on KuhnPoker or LeducHoldem (chips per hand; 0 at a Nash equilibrium).

    OpenSpiel's exact best response of each seat against :func:`llm_tabular_policy`,
    averaged over the seats, as :mod:`parlour.evaluation.exploitability` measures the SB3 policies.
    """
    import pyspiel
    from open_spiel.python.algorithms import exploitability as openspiel_exploitability

    from parlour.evaluation.exploitability import ADAPTERS

    table, _ = llm_tabular_policy(env_id, policy)
    return float(openspiel_exploitability.exploitability(pyspiel.load_game(ADAPTERS[env_id].openspiel), table))


@dataclass
class _Row:
    """One training decision: the turn's metadata and its advantage."""

    metadata: dict[str, Any]
    advantage: float
    ref: Any = None


@dataclass
class Learner:
    """One policy of a run: the shared model, or one role's, with the seats it plays and, when it learns, its optimiser."""

    #: The role (``""`` for the one shared model).
    role: str
    #: The seats it plays (with roles); the shared model plays whichever seat the league gives it.
    seats: list[str]
    backend: Any
    #: The model as ``accelerate`` prepared it (what the update runs).
    model: Any
    policy: LMPolicy
    #: ``None`` for a frozen role.
    optimizer: Any = None
    parameters: list[Any] = field(default_factory=list)
    #: A frozen copy of the initial model for the KL term (``None`` without it, or with LoRA, whose adapters switch off instead).
    reference: Any = None

    @property
    def trainable(self) -> bool:
        """Whether the update moves this policy."""
        return self.optimizer is not None


class LLMTrainer:
    """Runs :func:`train_llm`; its attributes expose the live policies, the league and the metrics for tests and benchmarks.

    ``learners`` holds one :class:`Learner` per role, or the one shared model under the role ``""``.
    """

    def __init__(self, config: LLMTrainConfig):
        import torch
        from accelerate import Accelerator

        config.check()
        self.config = config
        self.out = Path(config.out)
        self.out.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(config.seed)
        self.accelerator = Accelerator(cpu=config.device == "cpu", mixed_precision=config.mixed_precision)
        if config.roles:
            seats = role_seats(make_game(game_class(config.env_id), dict(config.env_kwargs)).players, config.roles)
            models = dict(config.roles)
        else:
            seats, models = {"": []}, {"": config.model}
        self.learners = {role: self._learner(role, seats[role], path, trainable=role not in config.frozen) for role, path in models.items()}
        #: The role of each seat (empty without roles).
        self.seat_roles = {seat: role for role, mine in seats.items() for seat in mine}
        strong = strong_agent(config.env_id)
        self.anchor_agents = list(config.anchor_agents) if config.anchor_agents is not None else sorted({"random", strong})
        self.eval_opponents = list(config.eval_opponents) if config.eval_opponents is not None else sorted({"random", strong})
        self.snapshots: list[LMPolicy] = []
        self.rng = np.random.default_rng(config.seed)
        self.estimator_state: dict[str, Any] = {}
        self.started = time.perf_counter()
        self.train_rows: list[dict[str, Any]] = []
        self.eval_rows: list[dict[str, Any]] = []

    def _learner(self, role: str, seats: list[str], path: str, trainable: bool) -> Learner:
        """Load one policy's model; a trainable one gets LoRA adapters (when asked), its KL reference and an optimiser."""
        import torch

        from parlour.wrappers.transformers_backend import TransformersBackend

        config = self.config
        device = config.device or str(self.accelerator.device)
        backend = TransformersBackend(path, device=device, dtype=config.dtype, max_new_tokens=config.max_new_tokens)
        model = backend.model
        optimizer, reference, parameters = None, None, []
        if trainable:
            if config.lora:
                from peft import LoraConfig, get_peft_model

                model = get_peft_model(
                    model, LoraConfig(r=config.lora_rank, lora_alpha=config.lora_alpha, target_modules="all-linear", task_type="CAUSAL_LM")
                )
            if config.kl_coef > 0 and not config.lora:
                reference = copy.deepcopy(model).eval()
                reference.requires_grad_(False)
            parameters = [p for p in model.parameters() if p.requires_grad]
            model, optimizer = self.accelerator.prepare(model, torch.optim.AdamW(parameters, lr=config.learning_rate))
        else:
            model.requires_grad_(False)
        model.eval()
        policy = LMPolicy(
            backend,
            self.accelerator.unwrap_model(model),
            mode=config.mode,
            temperature=config.temperature,
            max_new_tokens=config.max_new_tokens,
            history_turns=config.history_turns,
            name=role or "learner",
            seed=config.seed,
        )
        return Learner(role, seats, backend, model, policy, optimizer, parameters, reference)

    @property
    def shared(self) -> Learner:
        """The one shared model's :class:`Learner`; an ``AttributeError`` in a run with roles (read ``learners[role]``)."""
        if "" not in self.learners:
            raise AttributeError(f"this run trains a model per role ({', '.join(self.learners)}); read trainer.learners[role]")
        return self.learners[""]

    @property
    def policy(self) -> LMPolicy:
        """The shared model's live policy."""
        return self.shared.policy

    @property
    def model(self) -> Any:
        """The shared model, as ``accelerate`` prepared it."""
        return self.shared.model

    @property
    def optimizer(self) -> Any:
        """The shared model's optimiser."""
        return self.shared.optimizer

    @property
    def reference(self) -> Any:
        """The shared model's KL reference (see :attr:`Learner.reference`)."""
        return self.shared.reference

    @property
    def backend(self) -> Any:
        """The shared model's backend (its tokenizer)."""
        return self.shared.backend

    # ----------------------------------------------------------------- rollouts
    def league(self) -> tuple[list[tuple[str, Any]], list[float]]:
        """The opponents of this update (``None`` for the mirror) and their draw probabilities.

        Each kind's weight (mirror, snapshots, anchors) is split evenly among its
        members; a kind without members (no snapshot yet) drops out, and when
        none is left the learner plays itself.
        """
        config = self.config
        entries: list[tuple[str, Any, float]] = [("mirror", None, config.mirror)]
        for snapshot in self.snapshots:
            entries.append((snapshot.name, snapshot, config.snapshots / len(self.snapshots)))
        for name in self.anchor_agents:
            entries.append((name, name, config.anchors / len(self.anchor_agents)))
        entries = [entry for entry in entries if entry[2] > 0] or [("mirror", None, 1.0)]
        total = sum(weight for *_, weight in entries)
        return [(name, agent) for name, agent, _ in entries], [weight / total for *_, weight in entries]

    def play(self, update: int) -> list[Played]:
        """Play one update's episodes; returns them with the learners' turns.

        With roles every seat is played by its role's policy, and every role's turns are kept; the shared
        model plays one seat against a league member drawn per group of episodes.
        """
        config = self.config
        if self.seat_roles:
            agents: list[Any] = [learner.policy for learner in self.learners.values()]
            number = {seat: index for index, learner in enumerate(self.learners.values()) for seat in learner.seats}
            plan = self._plan(update, agents)
            lineup = [number[seat] for seat in plan.players]
            return list(Rollout(plan).play(range(config.episodes), seating=lambda episode: lineup, track=set(range(len(agents)))))
        entries, weights = self.league()
        opponents = [agent for _, agent in entries if agent is not None]
        agents = [self.policy, *opponents]
        league_number = {id(agent): i + 1 for i, agent in enumerate(opponents)}
        plan = self._plan(update, agents)
        groups = config.episodes // config.group_size
        seatings: list[list[int]] = []
        for _ in range(groups):
            _, agent = entries[int(self.rng.choice(len(entries), p=weights))]
            seat = int(self.rng.integers(len(plan.players)))
            opponent = 0 if agent is None else league_number[id(agent)]
            seatings.append([0 if s == seat else opponent for s in range(len(plan.players))])
        rollout = Rollout(plan)
        return list(rollout.play(range(config.episodes), seating=lambda episode: seatings[episode // config.group_size], track={0}))

    def _plan(self, update: int, agents: list[Any]) -> _GroupedPlan:
        """The update's plan for ``agents``, whose seating :meth:`play` chooses per episode."""
        config = self.config
        env_kwargs = dict(config.env_kwargs)
        if config.mode == "generate":
            env_kwargs.setdefault("error_allowance", config.max_invalid)
        seed = int(np.random.SeedSequence(config.seed, spawn_key=(2, update)).generate_state(1, np.uint64)[0] >> 1)
        # The plan is made for the first agent alone (a league may hold more agents than the game has seats);
        # the seating function of play() puts the agents in the seats.
        base = make_plan(config.env_id, [agents[0]], env_kwargs, seed=seed, rotate_seats=False, in_flight=config.episodes)
        settings = {f.name: getattr(base, f.name) for f in dataclasses.fields(Plan)}
        settings.update(specs=agents, names=agent_names([agent_name(agent) for agent in agents]))
        return _GroupedPlan(**settings, group_size=config.group_size)

    def table(self, played: Sequence[Played]) -> tuple[dict[str, np.ndarray], list[dict[str, Any]]]:
        """The turn table of the learners' decisions (see :mod:`~parlour.baselines.train.advantages`), with the ``role``
        of each (``""`` for the shared model), and their metadata."""
        config = self.config
        columns: dict[str, list[Any]] = {name: [] for name in ("episode", "env_id", "seed", "seat", "role", "turn", "reward", "state", "valid")}
        metadata: list[dict[str, Any]] = []
        for episode in played:
            record = episode.record
            steps = record["steps"]
            void = bool(steps) and steps[-1].get("error") is not None and any(t.seat == steps[-1]["player"] for t in episode.turns)
            for turn in episode.turns:
                reward = 0.0 if void else float(turn.reward)
                if not turn.valid:
                    reward -= config.invalid_penalty
                columns["episode"].append(record["episode"])
                columns["env_id"].append(config.env_id)
                columns["seed"].append(record["seed"])
                columns["seat"].append(turn.seat)
                columns["role"].append(self.seat_roles.get(turn.seat, ""))
                columns["turn"].append(turn.turn)
                columns["reward"].append(reward)
                columns["state"].append(view_hash(turn.view))
                columns["valid"].append(turn.valid)
                metadata.append(turn.metadata)
        table = {name: np.asarray(values) for name, values in columns.items()}
        totals: dict[tuple[int, str], float] = {}
        for episode, seat, reward in zip(columns["episode"], columns["seat"], columns["reward"]):
            totals[(episode, seat)] = totals.get((episode, seat), 0.0) + reward
        table["episode_return"] = np.array([totals[(e, s)] for e, s in zip(columns["episode"], columns["seat"])], dtype=np.float64)
        return table, metadata

    # ------------------------------------------------------------------ update
    def _trainable(self, metadata: Mapping[str, Any]) -> bool:
        """Whether a decision can move the policy: a choice among two or more moves, or a generated reply."""
        if metadata.get("mode") == "score_legal":
            return len(metadata["candidates"]) > 1
        return bool(metadata.get("completion_ids"))

    @staticmethod
    def _chunks(rows: Sequence[_Row], order: Sequence[int] | np.ndarray, size: int) -> list[list[int]]:
        """``order``'s rows in passes of at most ``size``, one mode each, sorted by length so that little of a pass is padding."""

        def key(i: int) -> tuple[bool, int]:
            meta = rows[i].metadata
            if meta["mode"] == "score_legal":
                return False, len(meta["prompt_ids"]) + sum(len(option) - 1 for option in meta["candidates"])
            return True, len(meta["prompt_ids"]) + len(meta["completion_ids"])

        chunks: list[list[int]] = []
        for i in sorted(order, key=key):
            if not chunks or len(chunks[-1]) == size or key(chunks[-1][0])[0] != key(i)[0]:
                chunks.append([])
            chunks[-1].append(int(i))
        return chunks

    def _logprobs(self, model: Any, rows: Sequence[_Row], pad_id: int) -> tuple[Any, Any]:
        """``(values, mask)`` of rows of one mode in one pass, with gradients when enabled.

        ``score_legal`` rows give the log-softmax over their candidates (rows x most candidates, the missing
        slots nearly -inf), ``generate`` rows their token log-probabilities (rows x longest reply, zero past
        each end); ``mask`` is true where a row has a value.
        """
        import torch

        prompts = [row.metadata["prompt_ids"] for row in rows]
        if rows[0].metadata["mode"] == "score_legal":
            batch = candidate_batch(prompts, [row.metadata["candidates"] for row in rows], pad_id)
            scored = candidate_scores(model, batch)
            return torch.log_softmax(scored.scores / self.config.temperature, dim=1), scored.present
        completions = [row.metadata["completion_ids"] for row in rows]
        completed = completion_scores(model, prompts, completions, pad_id, self.config.temperature)
        return completed.logprobs, completed.mask

    def _references(self, learner: Learner, rows: list[_Row]) -> Any:
        """Every row's :meth:`_logprobs` under the learner's initial policy (for the KL term): one tensor, a row per row."""
        import torch

        config = self.config
        pad_id = learner.policy.pad_id
        unwrapped = self.accelerator.unwrap_model(learner.model)
        widest = max(len(r.metadata["candidates"]) if r.metadata["mode"] == "score_legal" else len(r.metadata["completion_ids"]) for r in rows)
        device = next(unwrapped.parameters()).device
        refs = torch.zeros((len(rows), widest), device=device)
        for chunk in self._chunks(rows, range(len(rows)), config.micro_batch):
            with torch.no_grad():
                if config.lora:
                    with unwrapped.disable_adapter():
                        values, _ = self._logprobs(learner.model, [rows[i] for i in chunk], pad_id)
                else:
                    values, _ = self._logprobs(learner.reference, [rows[i] for i in chunk], pad_id)
            refs.index_copy_(0, to_device(np.array(chunk), device), torch.nn.functional.pad(values, (0, widest - values.shape[1])))
        return refs

    def _targets(self, rows: Sequence[_Row], width: int) -> np.ndarray:
        """Per row of one pass, the loss's constants as one array: the advantage, the old log-probabilities
        (``width`` columns; the chosen move's in the first for ``score_legal``) and, for ``score_legal``, the
        chosen move as a one-hot row of ``width``."""
        scored = rows[0].metadata["mode"] == "score_legal"
        targets = np.zeros((len(rows), 1 + width + (width if scored else 0)), dtype=np.float32)
        for index, row in enumerate(rows):
            targets[index, 0] = row.advantage
            if scored:
                targets[index, 1] = row.metadata["policy_logprob"]
                targets[index, 1 + width + row.metadata["choice"]] = 1.0
            else:
                targets[index, 1 : 1 + len(row.metadata["logprobs"])] = row.metadata["logprobs"]
        return targets

    def update(self, rows: list[_Row], role: str = "") -> dict[str, float]:
        """One update of ``role``'s policy (the shared model by default) on ``rows``; returns the mean loss, KL and clipped fraction.

        Each minibatch runs in passes of up to ``micro_batch`` rows of one mode, sorted by length; a pass's
        loss is computed for all its rows at once, and the figures stay on the device until the update ends.
        """
        import torch

        config = self.config
        if not rows:
            return {"loss": 0.0, "kl": 0.0, "clip_fraction": 0.0}
        learner = self.learners[role]
        device = next(self.accelerator.unwrap_model(learner.model).parameters()).device
        refs = self._references(learner, rows) if config.kl_coef > 0 else None
        epochs = config.ppo_epochs if config.loss == "ppo" else 1
        minibatch = config.minibatch or len(rows)
        losses, kl_sum, clipped = [], torch.zeros((), device=device), torch.zeros((), device=device)
        kl_rows = counted = 0
        order = np.arange(len(rows))
        for _ in range(epochs):
            if config.loss == "ppo":
                self.rng.shuffle(order)
            for start in range(0, len(rows), minibatch):
                indices = order[start : start + minibatch]
                n_scored = sum(1 for i in indices if rows[i].metadata["mode"] == "score_legal")
                n_tokens = sum(len(rows[i].metadata["completion_ids"]) for i in indices if rows[i].metadata["mode"] != "score_legal")
                learner.optimizer.zero_grad()
                total = torch.zeros((), device=device)
                for chunk in self._chunks(rows, indices, config.micro_batch):
                    batch = [rows[i] for i in chunk]
                    scored = batch[0].metadata["mode"] == "score_legal"
                    values, mask = self._logprobs(learner.model, batch, learner.policy.pad_id)
                    width = values.shape[1]
                    targets = to_device(self._targets(batch, width), device)
                    advantage = targets[:, :1]
                    if scored:
                        # One term per decision: the chosen move's log-probability under the policy.
                        current = (values * targets[:, 1 + width :]).sum(1, keepdim=True)
                        old, valid = targets[:, 1:2], torch.ones_like(current, dtype=torch.bool)
                        norm, counted = n_scored, counted + len(batch)
                    else:
                        current, old, valid = values, targets[:, 1 : 1 + width], mask
                        norm, counted = n_tokens, counted + int(sum(len(row.metadata["completion_ids"]) for row in batch))
                    if config.loss == "ppo":
                        ratio = torch.exp(current - old)
                        surrogate = torch.minimum(ratio * advantage, torch.clamp(ratio, 1 - config.clip, 1 + config.clip) * advantage)
                        clipped = clipped + (((ratio - 1).abs() > config.clip) & valid).sum()
                        term = -(surrogate * valid).sum()
                    else:
                        term = -(advantage * current * valid).sum()
                    if refs is not None:
                        ref = refs.index_select(0, to_device(np.array(chunk), device))[:, :width]
                        if scored:
                            kl = (values.exp() * (values - ref)).sum(1)
                        else:
                            q = ref - values
                            kl = ((torch.exp(q) - q - 1) * mask).sum(1)
                        kl_sum = kl_sum + (kl.detach() / valid.sum(1)).sum()
                        kl_rows += len(batch)
                        term = term + config.kl_coef * kl.sum()
                    loss = term / norm
                    self.accelerator.backward(loss)
                    total = total + loss.detach()
                if config.max_grad_norm:
                    self.accelerator.clip_grad_norm_(learner.parameters, config.max_grad_norm)
                learner.optimizer.step()
                losses.append(total)
        # The only waits on the device: once per update, for its figures.
        loss_values = torch.stack(losses).cpu().numpy()
        return {
            "loss": float(np.mean(loss_values)),
            "kl": float(kl_sum) / kl_rows if kl_rows else 0.0,
            "clip_fraction": float(clipped) / max(1, counted),
        }

    # -------------------------------------------------------------- evaluation
    def evaluate(self, update: int) -> list[dict[str, Any]]:
        """Play every evaluation opponent on the fixed evaluation seeds; one ``eval.csv`` row each.

        The shared model plays with seats rotated; with roles, each trainable role's policy plays its own
        seats with the opponent in all the others (one row per role and opponent).
        """
        config = self.config
        rows = []
        for learner in self.learners.values():
            if not learner.trainable:
                continue
            name = learner.role or "learner"
            policy = learner.policy.copy_with(learner.policy.model, greedy=config.eval_greedy, name=name)
            for opponent in self.eval_opponents:
                agents: Any = [policy, opponent]
                if learner.seats:
                    agents = {seat: policy if seat in learner.seats else opponent for seat in self.seat_roles}
                plan = make_plan(config.env_id, agents, dict(config.env_kwargs), seed=config.eval_seed, in_flight=config.eval_episodes)
                played = list(Rollout(plan).play(range(config.eval_episodes), track={plan.names.index(name)}))
                rows.append(self._summary(update, learner.role, opponent, played, name))
        if (
            not self.seat_roles
            and config.exploitability
            and config.mode == "score_legal"
            and exploitability_supported(config.env_id, config.env_kwargs)
        ):
            value = llm_exploitability(config.env_id, self.policy.copy_with(self.policy.model, greedy=config.eval_greedy))
            rows.append(
                {
                    "update": update,
                    "role": "",
                    "wall_s": round(time.perf_counter() - self.started, 3),
                    "opponent": "best response",
                    "exploitability": value,
                }
            )
        self.eval_rows.extend(rows)
        return rows

    def _summary(self, update: int, role: str, opponent: str, played: Sequence[Played], name: str) -> dict[str, Any]:
        wins = draws = losses = 0
        returns, invalid, entropy, lengths = [], [], [], []
        for episode in played:
            record = episode.record
            seats = [seat for seat, agent in record["agents"].items() if agent == name]
            winners = outcome_of(record).get("winners") or []
            if any(seat in winners for seat in seats):
                wins += 1
            elif winners:
                losses += 1
            else:
                draws += 1
            returns.append(float(np.mean([record["returns"][seat] for seat in seats])))
            for turn in episode.turns:
                invalid.append(not turn.valid)
                entropy.append(turn.metadata.get("entropy", 0.0))
                lengths.append(len(turn.metadata.get("completion_ids", ())))
        n = len(played)
        low, high = wilson(wins, n)
        return {
            "update": update,
            "role": role,
            "wall_s": round(time.perf_counter() - self.started, 3),
            "opponent": opponent,
            "episodes": n,
            "wins": wins,
            "draws": draws,
            "losses": losses,
            "win_rate": wins / n if n else 0.0,
            "win_low": low,
            "win_high": high,
            "mean_return": float(np.mean(returns)) if returns else 0.0,
            "invalid_rate": float(np.mean(invalid)) if invalid else 0.0,
            "entropy": float(np.mean(entropy)) if entropy else 0.0,
            "response_tokens": float(np.mean(lengths)) if lengths else 0.0,
        }

    # -------------------------------------------------------------------- loop
    @frozen_heap()
    def step(self, update: int) -> list[dict[str, Any]]:
        """Play one update's episodes and learn from them; returns the ``train.csv`` rows, one per role.

        Each role's advantages come from its own rows of the turn table (with its own estimator state), and
        each trainable role takes its own optimiser step; a frozen role's row has its play, and no loss. The
        update, like the rollout, keeps the garbage collector off the heap that was there before it
        (:func:`parlour.evaluation.heap.frozen_heap`).
        """
        config = self.config
        policies = [learner.policy for learner in self.learners.values()]
        started = time.perf_counter()
        model_s = sum(policy.usage["model_s"] for policy in policies)
        played = self.play(update)
        rollout_s = time.perf_counter() - started
        rollout_model_s = sum(policy.usage["model_s"] for policy in policies) - model_s
        table, metadata = self.table(played)
        rows = []
        for role, learner in self.learners.items():
            mine = table["role"] == role
            part = {name: column[mine] for name, column in table.items()}
            meta = [m for m, keep in zip(metadata, mine) if keep]
            stats, update_s = {"loss": 0.0, "kl": 0.0, "clip_fraction": 0.0}, 0.0
            if learner.trainable and meta:
                advantages, self.estimator_state[role] = compute_advantages(
                    config.estimator, part, self.estimator_state.get(role), **config.estimator_options
                )
                batch = [_Row(m, float(a)) for m, a in zip(meta, advantages) if self._trainable(m) and (a != 0 or config.kl_coef > 0)]
                started = time.perf_counter()
                stats = self.update(batch, role)
                update_s = time.perf_counter() - started
            rows.append(self._train_row(update, role, played, part, meta, stats, rollout_s, rollout_model_s, update_s))
        if not self.seat_roles and update % config.snapshot_every == 0 and config.snapshots > 0:
            self._snapshot(update)
        self._write_episodes(played)
        self.train_rows.extend(rows)
        return rows

    def _train_row(
        self,
        update: int,
        role: str,
        played: Sequence[Played],
        table: Mapping[str, np.ndarray],
        metadata: Sequence[Mapping[str, Any]],
        stats: Mapping[str, float],
        rollout_s: float,
        rollout_model_s: float,
        update_s: float,
    ) -> dict[str, Any]:
        """The ``train.csv`` row of one role: its play in the update's games (``table``, its turns) and its update."""
        returns, wins = [], []
        for episode in played:
            winners = outcome_of(episode.record).get("winners") or []
            for seat in {turn.seat for turn in episode.turns if self.seat_roles.get(turn.seat, "") == role}:
                returns.append(episode.record["returns"][seat])
                wins.append(seat in winners)
        return {
            "update": update,
            "role": role,
            "wall_s": round(time.perf_counter() - self.started, 3),
            "episodes": len(played),
            "decisions": len(metadata),
            "tokens": int(sum(len(m.get("prompt_ids", ())) + len(m.get("completion_ids", ())) for m in metadata)),
            "mean_return": float(np.mean(returns)) if returns else 0.0,
            "win_rate": float(np.mean(wins)) if wins else 0.0,
            "invalid_rate": float(np.mean(~table["valid"].astype(bool))) if len(metadata) else 0.0,
            "entropy": float(np.mean([m.get("entropy", 0.0) for m in metadata])) if metadata else 0.0,
            "response_tokens": float(np.mean([len(m.get("completion_ids", ())) for m in metadata])) if metadata else 0.0,
            "rollout_s": round(rollout_s, 3),
            "rollout_model_s": round(rollout_model_s, 3),
            "update_s": round(update_s, 3),
            **stats,
        }

    def _snapshot(self, update: int) -> None:
        frozen = copy.deepcopy(self.accelerator.unwrap_model(self.model)).eval()
        frozen.requires_grad_(False)
        self.snapshots.append(self.policy.copy_with(frozen, name=f"snapshot-{update}", seed=self.config.seed + update))
        del self.snapshots[: -self.config.max_snapshots]

    def _write_episodes(self, played: Sequence[Played]) -> None:
        if not self.config.keep_records:
            return
        with gzip.open(self.out / "episodes.jsonl.gz", "at", encoding="utf-8") as handle:
            for episode in played:
                handle.write(json.dumps(episode.record) + "\n")

    def run(self) -> dict[str, Any]:
        """Train for ``updates`` updates with evaluations, write the CSVs, plots and checkpoints; returns a summary.

        Ctrl-C saves the same files for the updates done so far and raises :class:`TrainingInterrupted`.
        """
        from tqdm.auto import tqdm

        config = self.config
        (self.out / "training.json").write_text(json.dumps(dataclasses.asdict(config), indent=2, sort_keys=True) + "\n", encoding="utf-8")
        (self.out / "episodes.jsonl.gz").unlink(missing_ok=True)
        first = self.evaluate(0)
        self._write_csv()
        bar = tqdm(range(1, config.updates + 1), desc=f"train llm {config.env_id}", disable=not config.progress, unit="update")
        latest = first
        try:
            for update in bar:
                rows = self.step(update)
                if update % config.eval_every == 0 or update == config.updates:
                    latest = self.evaluate(update)
                self._write_csv()
                shown = {f"return{_suffix(r['role'])}": f"{r['mean_return']:+.2f}" for r in rows}
                shown.update({f"entropy{_suffix(r['role'])}": f"{r['entropy']:.2f}" for r in rows})
                shown.update({f"win{_suffix(r['role'])}/{r['opponent']}": f"{r['win_rate']:.2f}" for r in latest if "win_rate" in r})
                exploits = [r["exploitability"] for r in latest if "exploitability" in r]
                if exploits:
                    shown["exploit"] = f"{exploits[-1]:.3f}"  # one figure: the last row that measured it
                bar.set_postfix(shown)
        except KeyboardInterrupt:
            # Ctrl-C keeps what the run has learnt: the models as they stand, the CSVs and the curves so far.
            bar.close()
            raise TrainingInterrupted(len(self.train_rows) // len(self.learners), self._finish(first, latest)) from None
        return self._finish(first, latest)

    def _finish(self, first: list[dict[str, Any]], latest: list[dict[str, Any]]) -> dict[str, Any]:
        """Write the CSVs, the checkpoints and the curves; the summary :meth:`run` returns.

        The shared model is saved to ``DIR/checkpoint`` (the summary's ``checkpoint``), each trainable role's
        model to ``DIR/ROLE``; ``checkpoints`` maps each saved role (``""`` for the shared model) to its folder.
        """
        config = self.config
        self._write_csv()
        checkpoints = {}
        for role, learner in self.learners.items():
            if learner.trainable:
                checkpoints[role] = str(self.out / (role or "checkpoint"))
                self.save(Path(checkpoints[role]), role)
        plot_learning(self.out / "eval.csv", self.out, title=f"LLM self-play on {config.env_id} ({config.mode}, {config.estimator}, {config.loss})")
        summary: dict[str, Any] = {"first": first, "last": latest, "checkpoints": checkpoints}
        if "" in checkpoints:
            summary["checkpoint"] = checkpoints[""]
        return summary

    def _write_csv(self) -> None:
        for name, columns, rows in (("train.csv", TRAIN_COLUMNS, self.train_rows), ("eval.csv", EVAL_COLUMNS, self.eval_rows)):
            with open(self.out / name, "w", newline="", encoding="utf-8") as handle:
                writer = csv.DictWriter(handle, fieldnames=columns)
                writer.writeheader()
                writer.writerows(rows)

    def save(self, folder: Path, role: str = "") -> None:
        """Save ``role``'s model (the shared one by default) as a Hugging Face folder (LoRA adapters merged into a
        copy), with its tokenizer and how it plays.

        The mode and the decoding written beside the weights are those of :meth:`evaluate`, so ``hf:FOLDER``
        plays as the evaluations measured it.
        """
        config = self.config
        learner = self.learners[role]
        model = self.accelerator.unwrap_model(learner.model)
        if config.lora and learner.trainable:
            model = copy.deepcopy(model).merge_and_unload()
        model.save_pretrained(folder)
        learner.backend.tokenizer.save_pretrained(folder)
        write_checkpoint_settings(
            folder,
            mode=config.mode,
            temperature=config.temperature,
            greedy=config.eval_greedy,
            max_new_tokens=config.max_new_tokens,
            history_turns=config.history_turns,
            env_id=config.env_id,
        )


def _suffix(role: str) -> str:
    """``/ROLE`` for a role's figure on the progress bar, nothing for the shared model's."""
    return f"/{role}" if role else ""


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :meth:`LLMTrainer.run` after ``updates`` updates; the checkpoint, CSVs and curves were saved,
    and ``summary`` is what the run would have returned (its last evaluation is the latest one made)."""

    def __init__(self, updates: int, summary: dict[str, Any]):
        super().__init__(f"training interrupted after {updates} update(s); checkpoint and curves saved")
        self.updates = updates
        self.summary = summary


def train_llm(config: LLMTrainConfig) -> dict[str, Any]:
    """Train an LLM by self-play as ``config`` says (see the module docstring); returns the first and last evaluations."""
    return LLMTrainer(config).run()
