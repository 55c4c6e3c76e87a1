"""The SB3 self-play trainer: ``sb3_contrib.MaskablePPO`` on a game's vector face against a league.

``parlour train sb3 ENV_ID --steps N --out DIR`` calls :func:`train_sb3`.

Self-play. Every episode the learner takes a seat drawn uniformly, so it
always learns from its own perspective in every seat, and the other seats are
played by one member of a :class:`~parlour.baselines.train.league.League`
drawn by prioritised fictitious self-play: frozen snapshots of the learner
(the first, its untrained self, then one every ``snapshot_every`` steps) and
scripted anchors (every scripted agent of the game by default; anchors slower
than ``anchor_budget_ms`` per move are left out unless named, since the
learner would wait on them). Each member gets a fresh copy per seat and
episode; snapshots sample from their policy. The learner sees only its own
seat (:class:`SelfPlayEnv`, a Gymnasium environment over the game's
Gymnasium face), and illegal moves are masked.

Seeing that it learns. Before the first update, every ``eval_every`` steps and
after the last update, the learner (playing as the saved agent will:
sampling, or greedy with ``deterministic``) plays each evaluation opponent
(``random`` and the game's strong agent by default) for ``eval_episodes``
episodes with seats rotated on fixed seeds (``eval_seed``); at the end it also
plays its first snapshot. ``DIR/eval.csv`` gets one row per opponent and
evaluation (:data:`~parlour.baselines.train.evaluation.EVAL_COLUMNS`): win
rate with its Wilson interval, non-losing rate, mean return, invalid-move rate
and entropy; for KuhnPoker and LeducHoldem a ``best response`` row holds the
exploitability (OpenSpiel). ``DIR/train.csv`` gets PPO's own metrics per
update, ``DIR/learning.png`` and ``DIR/learning_time.png`` the curves
(:mod:`parlour.baselines.train.plots`), ``DIR/league.json`` the final league.

The policy. ``DIR/policy.zip`` (MaskablePPO's own format) and
``DIR/policy.json`` beside it (environment, options, moves, how it plays, the
command, seed, steps and training time) make the agent spec
``sb3:DIR/policy.zip``.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import json
import math
import platform
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from parlour.baselines import make_scripted, scripted_names
from parlour.baselines.sb3_agent import METADATA_FORMAT, PolicyAgent
from parlour.baselines.train.evaluation import EVAL_COLUMNS, TRAINED_AGENTS, evaluate_agent, strong_agent
from parlour.baselines.train.league import League, Member
from parlour.envs.core.agent import reset_agent, wants_vector
from parlour.envs.core.gym import GymGame
from parlour.envs.core.match import make_game
from parlour.envs.registry import game_class

#: The columns of ``train.csv``.
TRAIN_COLUMNS = (
    "update",
    "timesteps",
    "wall_s",
    "steps_per_s",
    "episodes",
    "mean_return",
    "win_rate",
    "entropy",
    "approx_kl",
    "clip_fraction",
    "value_loss",
    "policy_loss",
    "league_size",
    "env_share",
)
#: SB3 logger keys read into ``train.csv`` after each update.
_SB3_KEYS = {
    "entropy": "train/entropy_loss",
    "approx_kl": "train/approx_kl",
    "clip_fraction": "train/clip_fraction",
    "value_loss": "train/value_loss",
    "policy_loss": "train/policy_gradient_loss",
}


@dataclass
class SB3TrainConfig:
    """Settings of :func:`train_sb3` (see the module docstring); each is a ``parlour train sb3`` option."""

    env_id: str
    out: Path
    #: Environment steps of the learner to train for.
    steps: int = 100_000
    seed: int = 0
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    #: Environments stepped together (``DummyVecEnv``, one process).
    n_envs: int = 16
    #: Steps per environment per PPO update.
    n_steps: int = 64
    batch_size: int = 128
    n_epochs: int = 10
    learning_rate: float = 2e-3
    gamma: float = 1.0
    gae_lambda: float = 1.0
    ent_coef: float = 0.01
    #: Hidden layer sizes of the policy and value networks.
    net: tuple[int, ...] = (128, 128)
    snapshot_every: int = 10_000
    eval_every: int = 10_000
    eval_episodes: int = 100
    eval_seed: int = 12_345
    #: Evaluation opponents (default: ``random`` and the game's strong agent).
    opponents: list[str] | None = None
    #: Scripted league anchors (default: every scripted agent of the game that is fast enough).
    anchors: list[str] | None = None
    anchor_budget_ms: float = 2.0
    pfsp_power: float = 0.5
    #: The least PFSP weight of a member (before normalising), so no member is starved.
    pfsp_floor: float = 0.4
    max_snapshots: int = 20
    #: How the saved agent plays: the most likely move (True) or a sample (False).
    deterministic: bool = False
    progress: bool = True
    #: The command line that started the run, recorded in ``policy.json``.
    command: str = ""
    torch_threads: int = 1

    def __post_init__(self) -> None:
        self.out = Path(self.out)
        for name in ("steps", "n_envs", "n_steps", "batch_size", "n_epochs", "snapshot_every", "eval_every", "eval_episodes", "max_snapshots"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {self.seed!r}")
        if self.n_envs * self.n_steps < 2:
            raise ValueError("n_envs * n_steps must be at least 2 (PPO needs a batch)")
        if not self.net or any(size < 1 for size in self.net):
            raise ValueError(f"net must list positive layer sizes, got {self.net!r}")


class _Seat:
    """An agent for one other seat that plays whichever league member the trainer put in it for this episode."""

    def __init__(self) -> None:
        self.agent: Any = None

    @property
    def needs_vector(self) -> bool:
        """Whether the current member asks for the vector observation."""
        return wants_vector(self.agent)

    def reset(self, seed: int | None = None) -> None:
        """Reset the current member with the seat's seed."""
        reset_agent(self.agent, seed)

    def act(self, observation: Any) -> Any:
        """The current member's action."""
        return self.agent.act(observation)


def learner_score(outcome: Mapping[str, Any] | None, seat: str) -> float:
    """1 if ``seat`` won, 1/2 for a draw (or a cut-off episode), 0 if it lost."""
    if outcome is None or outcome.get("truncated"):
        return 0.5
    winners = outcome.get("winners") or []
    if not winners:
        return 0.5
    return 1.0 if seat in winners else 0.0


class SelfPlayEnv(gymnasium.Env):
    """One learner seat per episode, drawn uniformly; the other seats played by a league member (see the module docstring).

    Observations are the seat's vector (``Box``), actions move indices;
    ``action_masks()`` gives the legal ones (``sb3_contrib.MaskablePPO`` reads it).
    ``env_seconds`` adds up the time spent in ``reset`` and ``step``: the game
    and the league's agents, everything but the learner (throughput accounting).
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, env_id: str, league: League, seed: int, env_kwargs: dict[str, Any] | None = None):
        game_cls = game_class(env_id)
        options = dict(env_kwargs or {})
        game = make_game(game_cls, dict(options))
        moves = game.moves
        if moves is None:
            raise ValueError(f"{env_id} has no enumerable moves, so no vector face to train MaskablePPO on")
        self.players = list(game.players)
        self.league = league
        self.faces: list[tuple[GymGame, list[_Seat]]] = []
        for index, player in enumerate(self.players):
            seats = {other: _Seat() for other in self.players if other != player}
            self.faces.append((GymGame(game_cls, opponent=seats, seat=index, obs_mode="vector", **options), list(seats.values())))
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, (game.vector_size,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(len(moves))
        self.rng = np.random.default_rng(seed)
        self.face: GymGame = self.faces[0][0]
        self.member: Member | None = None
        self.mask = np.ones(len(moves), dtype=bool)
        self.env_seconds = 0.0
        self.episodes = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Draw the learner's seat and the opponent, and play until the learner is to act."""
        started = time.perf_counter()
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        while True:
            face, seats = self.faces[int(self.rng.integers(len(self.faces)))]
            member = self.league.draw(self.rng)
            for seat in seats:
                seat.agent = self.league.opponent(member)
            observation, info = face.reset(seed=int(self.rng.integers(1 << 62)))
            self.face, self.member = face, member
            if not face.match.over:
                break
            # The game ended before the learner's first move: nothing to learn, but the league hears of it.
            self._finish()
        self.mask = observation["action_mask"].astype(bool)
        self.env_seconds += time.perf_counter() - started
        return observation["observation"], info

    def step(self, action: Any):
        """Play the learner's move index, then the other seats until the learner is to act again or the game ends."""
        started = time.perf_counter()
        observation, reward, terminated, truncated, info = self.face.step(int(action))
        self.mask = observation["action_mask"].astype(bool)
        if terminated or truncated:
            assert self.member is not None  # reset() draws the opponent before the learner's first move
            info["score"] = self._finish()
            info["opponent"] = self.member.name
        self.env_seconds += time.perf_counter() - started
        return observation["observation"], float(reward), terminated, truncated, info

    def _finish(self) -> float:
        match = self.face.match
        score = learner_score(match.outcome.to_dict() if match.outcome is not None else None, self.face.player)
        assert self.member is not None  # reset() draws the opponent before a game can end
        self.league.report(self.member, score)
        self.episodes += 1
        return score

    def action_masks(self) -> np.ndarray:
        """The learner's legal move indices now, as a boolean mask."""
        return self.mask


def probe_speed(env_id: str, name: str, env_kwargs: dict[str, Any], episodes: int = 4) -> float:
    """Milliseconds per move of the scripted agent ``name`` over a few episodes against ``random``."""
    from parlour.evaluation import evaluate

    results = evaluate(env_id, [name, "random"], episodes=episodes, seed=0, env_kwargs=env_kwargs, progress=False)
    stats = results.stats[results.agents[0]]
    return 1000.0 * stats["act_seconds"] / max(1, stats["decisions"])


def choose_anchors(config: SB3TrainConfig) -> tuple[list[str], list[str]]:
    """The scripted league anchors and, when chosen by default, the ones left out for being slow (with their speed)."""
    available = [name for name in scripted_names(config.env_id) if name not in TRAINED_AGENTS]
    if config.anchors is not None:
        unknown = [name for name in config.anchors if name not in available]
        if unknown:
            raise ValueError(f"no scripted agent {unknown[0]!r} for {config.env_id}; available anchors: {', '.join(available)}")
        return list(config.anchors), []
    kept, slow = [], []
    for name in available:
        speed = probe_speed(config.env_id, name, config.env_kwargs)
        if speed <= config.anchor_budget_ms:
            kept.append(name)
        else:
            slow.append(f"{name} ({speed:.1f} ms per move)")
    return kept, slow


def _write_csv(path: Path, columns: Sequence[str], rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({key: _cell(row.get(key)) for key in columns})


def _cell(value: Any) -> Any:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6g}"
    return "" if value is None else value


def train_sb3(config: SB3TrainConfig) -> dict[str, Any]:
    """Train a MaskablePPO policy by self-play against a league (see the module docstring); returns the final summary.

    The summary holds the output paths, the training time, the final
    evaluation rows (including the one against the first snapshot) and the
    final league table.
    """
    try:
        import torch
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.monitor import Monitor
        from stable_baselines3.common.vec_env import DummyVecEnv
    except ImportError:
        raise ImportError("parlour train sb3 needs stable-baselines3 and sb3-contrib: pip install 'parlour[sb3,train]'") from None
    from tqdm.auto import tqdm

    from parlour.baselines.train.plots import plot_learning
    from parlour.evaluation import exploitability as exploit

    game = make_game(game_class(config.env_id), dict(config.env_kwargs))
    if game.moves is None:
        raise ValueError(f"{config.env_id} has no enumerable moves, so no vector face to train MaskablePPO on")
    moves = list(game.moves)
    opponents = config.opponents or list(dict.fromkeys(["random", strong_agent(config.env_id)]))
    for name in opponents:
        if name not in scripted_names(config.env_id):
            raise ValueError(f"no scripted agent {name!r} for {config.env_id}; available: {', '.join(scripted_names(config.env_id))}")
    config.out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(config.torch_threads)
    anchors, slow = choose_anchors(config)
    if slow and config.progress:
        print(f"league: left out {', '.join(slow)}: slower than {config.anchor_budget_ms:g} ms per move (name them with --anchors to include)")

    league = League(power=config.pfsp_power, floor=config.pfsp_floor, max_snapshots=config.max_snapshots)
    for name in anchors:
        league.add(name, make_scripted(name, config.env_id), "scripted")
    seeds = np.random.SeedSequence(config.seed).spawn(config.n_envs)
    envs = [SelfPlayEnv(config.env_id, league, int(s.generate_state(1)[0]), config.env_kwargs) for s in seeds]
    vec_env = DummyVecEnv([functools.partial(Monitor, env) for env in envs])
    model = MaskablePPO(
        "MlpPolicy",
        vec_env,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        learning_rate=config.learning_rate,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        ent_coef=config.ent_coef,
        policy_kwargs={"net_arch": list(config.net)},
        seed=config.seed,
        device="cpu",
        verbose=0,
    )
    learner = PolicyAgent(model.policy, moves, name="learner", deterministic=config.deterministic)
    eval_rows: list[dict[str, Any]] = []
    train_rows: list[dict[str, Any]] = []
    timing = {"eval_seconds": 0.0}
    started = time.perf_counter()
    cpu_started = time.process_time()
    measure_exploitability = exploit.supported(config.env_id, config.env_kwargs)

    def snapshot(timesteps: int) -> PolicyAgent:
        # A new network with the learner's weights (deepcopy trips over tensors SB3 keeps from the last update).
        frozen = model.policy_class(model.observation_space, model.action_space, model.lr_schedule, **model.policy_kwargs)
        frozen.load_state_dict(model.policy.state_dict())
        frozen.set_training_mode(False)
        agent = PolicyAgent(frozen, moves, name=f"snapshot@{timesteps}")
        league.add(agent.name, agent, "snapshot")
        return agent

    def evaluate(update: int, timesteps: int, extra: Sequence[Any] = ()) -> list[dict[str, Any]]:
        model.policy.set_training_mode(False)
        learner.refresh()
        wall = time.perf_counter() - started
        eval_started = time.perf_counter()
        rows = evaluate_agent(config.env_id, learner, [*opponents, *extra], config.eval_episodes, config.eval_seed, config.env_kwargs)
        if measure_exploitability:
            value = exploit.exploitability(config.env_id, learner.probabilities, moves)
            rows.append({"opponent": "best response", "exploitability": value})
        for row in rows:
            row.update(update=update, timesteps=timesteps, wall_s=wall)
        eval_rows.extend(rows)
        _write_csv(config.out / "eval.csv", EVAL_COLUMNS + ("exploitability",), eval_rows)
        timing["eval_seconds"] += time.perf_counter() - eval_started
        return rows

    class Callback(BaseCallback):
        """Progress bar, snapshots, periodic evaluation and the per-update metrics."""

        def __init__(self) -> None:
            super().__init__()
            self.bar: Any = None
            self.updates = 0
            self.last_eval = 0
            self.last_snapshot = 0
            self.rollout_started = 0.0
            self.rollout_share = math.nan
            self.env_seconds = 0.0
            self.returns: list[float] = []
            self.scores: list[float] = []

        def _on_training_start(self) -> None:
            self.bar = tqdm(total=config.steps, unit="step", desc=f"train {config.env_id}", disable=not config.progress)
            self.first = snapshot(0)
            rows = evaluate(0, 0)
            self._show(rows)

        def _on_rollout_start(self) -> None:
            # SB3 starts a rollout first at step 0, then after each update: count the update that just ended.
            if self.num_timesteps > 0:
                self.update_done()
            self.rollout_started = time.perf_counter()
            self.env_seconds = sum(env.env_seconds for env in envs)

        def _on_step(self) -> bool:
            self.bar.update(self.training_env.num_envs)
            for info in self.locals.get("infos", ()):
                if "episode" in info:
                    self.returns.append(float(info["episode"]["r"]))
                if "score" in info:
                    self.scores.append(float(info["score"]))
            return True

        def _on_rollout_end(self) -> None:
            elapsed = time.perf_counter() - self.rollout_started
            self.rollout_share = (sum(env.env_seconds for env in envs) - self.env_seconds) / elapsed if elapsed else math.nan

        def _log_update(self) -> None:
            values = self.model.logger.name_to_value
            row: dict[str, Any] = {
                "update": self.updates,
                "timesteps": self.num_timesteps,
                "wall_s": time.perf_counter() - started,
                "episodes": len(self.scores),
                "mean_return": float(np.mean(self.returns)) if self.returns else math.nan,
                "win_rate": float(np.mean([s == 1.0 for s in self.scores])) if self.scores else math.nan,
                "league_size": len(league.members),
                "env_share": self.rollout_share,
            }
            row["steps_per_s"] = self.num_timesteps / row["wall_s"]
            for column, key in _SB3_KEYS.items():
                row[column] = float(values[key]) if key in values else math.nan
            if not math.isnan(row["entropy"]):
                row["entropy"] = -row["entropy"]  # SB3 logs the entropy loss, the negative mean entropy
            train_rows.append(row)
            self.returns, self.scores = [], []
            _write_csv(config.out / "train.csv", TRAIN_COLUMNS, train_rows)

        def update_done(self) -> None:
            """Count an update and log its metrics (SB3 keeps them until the next rollout ends); snapshot and evaluate when due."""
            self.updates += 1
            self._log_update()
            if self.num_timesteps - self.last_snapshot >= config.snapshot_every:
                self.last_snapshot = self.num_timesteps
                snapshot(self.num_timesteps)
            if self.num_timesteps - self.last_eval >= config.eval_every and self.num_timesteps < config.steps:
                self.last_eval = self.num_timesteps
                self._show(evaluate(self.updates, self.num_timesteps))

        def _show(self, rows: list[dict[str, Any]]) -> None:
            shown = {row["opponent"]: f"{row['win_rate']:.2f}" for row in rows if "win_rate" in row}
            for row in rows:
                if "exploitability" in row:
                    shown["exploit"] = f"{row['exploitability']:.3f}"
            self.bar.set_postfix(shown, refresh=True)

    callback = Callback()
    try:
        model.learn(total_timesteps=config.steps, callback=callback)
        callback.update_done()
        train_seconds = time.perf_counter() - started
        cpu_seconds = time.process_time() - cpu_started
        final = evaluate(callback.updates, model.num_timesteps, extra=[callback.first])
    finally:
        if callback.bar is not None:
            callback.bar.close()
    policy_file = config.out / "policy.zip"
    model.save(policy_file)
    metadata = {
        "format": METADATA_FORMAT,
        "env_id": config.env_id,
        "env_kwargs": config.env_kwargs,
        "moves": moves,
        "vector_size": int(game.vector_size),
        "deterministic": config.deterministic,
        "command": config.command,
        "seed": config.seed,
        "steps": int(model.num_timesteps),
        "updates": callback.updates,
        "train_seconds": round(train_seconds, 1),
        "eval_seconds": round(timing["eval_seconds"], 1),
        # CPU time of this process: wall time alone overstates the cost on a machine shared with other work.
        "cpu_seconds": round(cpu_seconds, 1),
        "machine": f"{platform.machine()}, {platform.system()}, torch threads {config.torch_threads}",
        "settings": {k: (list(v) if isinstance(v, tuple) else str(v) if isinstance(v, Path) else v) for k, v in dataclasses.asdict(config).items()},
        "final_evaluation": [{k: row[k] for k in row if k not in ("update", "timesteps", "wall_s")} for row in final],
    }
    (config.out / "policy.json").write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")
    (config.out / "league.json").write_text(json.dumps(league.table(), indent=2) + "\n", encoding="utf-8")
    plots = plot_learning(config.out / "eval.csv", config.out, title=f"{config.env_id}: MaskablePPO self-play")
    return {
        "policy": policy_file,
        "metadata": metadata,
        "eval_csv": config.out / "eval.csv",
        "train_csv": config.out / "train.csv",
        "plots": plots,
        "final": final,
        "league": league.table(),
        "train_seconds": train_seconds,
        "eval_seconds": timing["eval_seconds"],
        "env_seconds": sum(env.env_seconds for env in envs),
    }
