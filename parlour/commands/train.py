"""``parlour train TRAINER ENV_ID``: train a baseline policy by self-play and watch it learn.

Each trainer is one subcommand, added by its own ``register_<trainer>``
function below, with its handler beside it:

* ``parlour train sb3 ENV_ID --steps N --out DIR``: ``sb3_contrib.MaskablePPO``
  on the environment's vector face against a league of its own snapshots and
  the scripted agents (:mod:`parlour.baselines.train.sb3`); the policy plays
  everywhere as ``sb3:DIR/policy.zip``.
* ``parlour train llm ENV_ID --model PATH_OR_ID --out DIR``: a ``transformers``
  causal LM by self-play against a league of itself, its snapshots and the
  scripted agents (:mod:`parlour.baselines.train.llm`); the checkpoint plays
  everywhere as ``hf:DIR/checkpoint``. ``--model ROLE=PATH`` once per role
  (``--frozen ROLE`` for a role that only plays), or ``--roles FILE.toml``
  (:func:`read_roles`), trains a model per role, each saved to ``DIR/ROLE``.

Every trainer writes into ``--out`` its policy, ``eval.csv`` (periodic
evaluation against fixed opponents), ``train.csv`` and the PNG plots, and
shows a progress bar.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import tomllib
from pathlib import Path
from typing import Any

from parlour.envs.core.errors import did_you_mean

#: The keys a role's table in a ``--roles`` file may hold.
ROLE_KEYS = ("model", "frozen")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour train`` and its trainers."""
    parser = subparsers.add_parser("train", help="train a baseline policy by self-play (sb3, llm) and plot its learning")
    trainers = parser.add_subparsers(dest="trainer", metavar="TRAINER", required=True)
    register_sb3(trainers)
    register_llm(trainers)


def register_sb3(trainers: argparse._SubParsersAction) -> None:
    """Add ``parlour train sb3``."""
    from parlour.baselines.train.sb3 import SB3TrainConfig

    defaults = SB3TrainConfig(env_id="", out=Path("."))
    sb3 = trainers.add_parser(
        "sb3",
        help="MaskablePPO self-play on the vector face against a league (games with enumerable moves)",
        description="Train sb3_contrib.MaskablePPO by self-play against a league of its snapshots and the scripted agents "
        "(prioritised fictitious self-play, seat drawn per episode); write the policy (sb3:DIR/policy.zip), eval.csv, "
        "train.csv and learning curves to DIR.",
    )
    sb3.add_argument("env_id", metavar="ENV_ID", help="environment id with enumerable moves, e.g. parlour/TicTacToe-v0")
    sb3.add_argument("--steps", type=int, default=defaults.steps, help=f"learner steps to train for (default {defaults.steps})")
    sb3.add_argument("--out", required=True, metavar="DIR", help="where the policy, CSVs and plots go")
    sb3.add_argument("--seed", type=int, default=defaults.seed, help=f"seed of the whole run (default {defaults.seed})")
    sb3.add_argument("--env-kwarg", action="append", default=[], metavar="KEY=VALUE", help="a game option (VALUE read as JSON, else text)")
    sb3.add_argument("--n-envs", type=int, default=defaults.n_envs, help=f"environments stepped together (default {defaults.n_envs})")
    sb3.add_argument("--n-steps", type=int, default=defaults.n_steps, help=f"steps per environment per update (default {defaults.n_steps})")
    sb3.add_argument("--batch-size", type=int, default=defaults.batch_size, help=f"minibatch size (default {defaults.batch_size})")
    sb3.add_argument("--epochs", type=int, default=defaults.n_epochs, help=f"passes over each rollout (default {defaults.n_epochs})")
    sb3.add_argument("--lr", type=float, default=defaults.learning_rate, help=f"learning rate (default {defaults.learning_rate:g})")
    sb3.add_argument("--ent-coef", type=float, default=defaults.ent_coef, help=f"entropy bonus (default {defaults.ent_coef:g})")
    sb3.add_argument("--gae-lambda", type=float, default=defaults.gae_lambda, help=f"GAE lambda (default {defaults.gae_lambda:g})")
    sb3.add_argument(
        "--net", default=",".join(map(str, defaults.net)), metavar="SIZES", help="hidden layer sizes, comma-separated (default %(default)s)"
    )
    sb3.add_argument(
        "--snapshot-every", type=int, default=defaults.snapshot_every, help=f"steps between league snapshots (default {defaults.snapshot_every})"
    )
    sb3.add_argument("--eval-every", type=int, default=defaults.eval_every, help=f"steps between evaluations (default {defaults.eval_every})")
    sb3.add_argument(
        "--eval-episodes", type=int, default=defaults.eval_episodes, help=f"episodes per evaluation opponent (default {defaults.eval_episodes})"
    )
    sb3.add_argument("--eval-seed", type=int, default=defaults.eval_seed, help=f"base seed of every evaluation (default {defaults.eval_seed})")
    sb3.add_argument(
        "--opponent",
        action="append",
        dest="opponents",
        metavar="NAME",
        help="an evaluation opponent, repeatable (default: random and the strong agent)",
    )
    sb3.add_argument("--anchors", metavar="NAMES", help="scripted league members, comma-separated (default: every scripted agent fast enough)")
    sb3.add_argument("--pfsp-power", type=float, default=defaults.pfsp_power, help=f"PFSP weighting (1 - p)^power (default {defaults.pfsp_power:g})")
    sb3.add_argument(
        "--pfsp-floor", type=float, default=defaults.pfsp_floor, help=f"least PFSP weight of a league member (default {defaults.pfsp_floor:g})"
    )
    sb3.add_argument(
        "--max-snapshots", type=int, default=defaults.max_snapshots, help=f"snapshots kept in the league (default {defaults.max_snapshots})"
    )
    sb3.add_argument("--deterministic", action="store_true", help="the saved agent plays its most likely move instead of sampling")
    sb3.add_argument("--quiet", action="store_true", help="no progress bar")
    sb3.set_defaults(handler=run_sb3)


def run_sb3(args: argparse.Namespace) -> int:
    """Train, then print where everything went and the final evaluation."""
    from parlour.baselines.train.sb3 import SB3TrainConfig, train_sb3
    from parlour.commands.evaluate import parse_kwargs

    try:
        net = tuple(int(size) for size in args.net.split(","))
    except ValueError:
        raise ValueError(f"--net takes comma-separated layer sizes such as 64,64, got {args.net!r}") from None
    config = SB3TrainConfig(
        env_id=args.env_id,
        out=args.out,
        steps=args.steps,
        seed=args.seed,
        env_kwargs=parse_kwargs(args.env_kwarg),
        n_envs=args.n_envs,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.epochs,
        learning_rate=args.lr,
        ent_coef=args.ent_coef,
        gae_lambda=args.gae_lambda,
        net=net,
        snapshot_every=args.snapshot_every,
        eval_every=args.eval_every,
        eval_episodes=args.eval_episodes,
        eval_seed=args.eval_seed,
        opponents=args.opponents,
        anchors=args.anchors.split(",") if args.anchors else None,
        pfsp_power=args.pfsp_power,
        pfsp_floor=args.pfsp_floor,
        max_snapshots=args.max_snapshots,
        deterministic=args.deterministic,
        progress=not args.quiet,
        command=shlex.join(["parlour", *sys.argv[1:]]) if sys.argv[1:2] == ["train"] else "",
    )
    summary = train_sb3(config)
    print(f"trained {summary['metadata']['steps']} steps in {summary['train_seconds']:.0f} s")
    for row in summary["final"]:
        if "win_rate" in row:
            print(
                f"  vs {row['opponent']}: win {row['win_rate']:.2f} [{row['win_low']:.2f}, {row['win_high']:.2f}], "
                f"non-losing {row['non_loss_rate']:.2f}, mean return {row['mean_return']:+.3f} ({row['episodes']} episodes)"
            )
        else:
            print(f"  exploitability {row['exploitability']:.4f}")
    print(f"policy: sb3:{summary['policy']}  (parlour eval {args.env_id} --agent sb3:{summary['policy']})")
    print(f"curves: {', '.join(str(path) for path in summary['plots'])}")
    return 0


def register_llm(trainers: argparse._SubParsersAction) -> None:
    """Add ``parlour train llm``."""
    from parlour.baselines.train.advantages import ESTIMATORS
    from parlour.baselines.train.llm import LOSSES, LLMTrainConfig
    from parlour.wrappers.llm_policy import MODES

    defaults = LLMTrainConfig(env_id="", model="", out=".")
    llm = trainers.add_parser(
        "llm",
        help="a transformers causal LM by self-play against a league (score_legal or free-text generate mode)",
        description="Train a transformers causal LM by self-play against a league (itself, its snapshots, scripted anchors); "
        "write eval.csv, train.csv, learning curves, every training game (episodes.jsonl.gz) and the checkpoint "
        "(hf:DIR/checkpoint) to DIR. Runs on CPU, or on a GPU through accelerate when one is there. "
        "With a model per role (--model ROLE=PATH for every role; role R plays seat R and seats R_0, R_1, ...) each role "
        "has its own policy, advantages and optimiser, the roles play each other (no league), --frozen ROLE keeps a role's "
        "model as it is, and each trainable role is saved to DIR/ROLE (hf:DIR/ROLE), e.g. "
        "--model proposer=models/a --model solver=models/b --frozen solver, or the same roles in a TOML file given "
        'as --roles roles.toml: a table per role, [proposer] model = "models/a" and [solver] model = "models/b", '
        "frozen = true.",
    )
    llm.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. parlour/TicTacToe-v0")
    llm.add_argument(
        "--model",
        action="append",
        default=[],
        dest="models",
        metavar="[ROLE=]PATH_OR_ID",
        help="a local model folder or a Hugging Face hub id shared by every seat, or ROLE=PATH_OR_ID once per role",
    )
    llm.add_argument(
        "--roles",
        metavar="FILE.toml",
        help="a model per role from a TOML file: a table per role with model = PATH_OR_ID and optionally frozen = true",
    )
    llm.add_argument("--frozen", action="append", default=[], metavar="ROLE", help="a role whose model plays but does not learn, repeatable")
    llm.add_argument("--out", required=True, metavar="DIR", help="where the checkpoint, CSVs, plots and games go")
    llm.add_argument("--mode", choices=MODES, default=defaults.mode, help=f"score legal moves or generate free text (default {defaults.mode})")
    llm.add_argument("--estimator", choices=list(ESTIMATORS), default=defaults.estimator, help=f"advantage estimator (default {defaults.estimator})")
    llm.add_argument("--loss", choices=LOSSES, default=defaults.loss, help=f"policy loss (default {defaults.loss})")
    llm.add_argument("--updates", type=int, default=defaults.updates, help=f"policy updates (default {defaults.updates})")
    llm.add_argument("--episodes", type=int, default=defaults.episodes, help=f"episodes per update (default {defaults.episodes})")
    llm.add_argument(
        "--group-size", type=int, default=defaults.group_size, help=f"episodes sharing seed, seat and opponent (default {defaults.group_size})"
    )
    llm.add_argument("--lr", type=float, default=defaults.learning_rate, help=f"learning rate (default {defaults.learning_rate:g})")
    llm.add_argument("--kl-coef", type=float, default=defaults.kl_coef, help=f"weight of KL to the initial policy (default {defaults.kl_coef:g})")
    llm.add_argument("--clip", type=float, default=defaults.clip, help=f"PPO clip range (default {defaults.clip:g})")
    llm.add_argument(
        "--ppo-epochs", type=int, default=defaults.ppo_epochs, help=f"passes over each batch with --loss ppo (default {defaults.ppo_epochs})"
    )
    llm.add_argument("--minibatch", type=int, help="decisions per optimizer step (default: the whole batch)")
    llm.add_argument("--micro-batch", type=int, default=defaults.micro_batch, help=f"decisions per forward pass (default {defaults.micro_batch})")
    llm.add_argument("--temperature", type=float, default=defaults.temperature, help=f"policy temperature (default {defaults.temperature:g})")
    llm.add_argument(
        "--max-new-tokens", type=int, default=defaults.max_new_tokens, help=f"longest reply in generate mode (default {defaults.max_new_tokens})"
    )
    llm.add_argument(
        "--history-turns",
        type=int,
        default=defaults.history_turns,
        help=f"turns of the episode kept in the prompt (default {defaults.history_turns}; 0 for all)",
    )
    llm.add_argument(
        "--invalid-penalty",
        type=float,
        default=defaults.invalid_penalty,
        help=f"reward of an invalid action's turn (default -{defaults.invalid_penalty:g})",
    )
    llm.add_argument(
        "--max-invalid",
        type=int,
        default=defaults.max_invalid,
        help=f"invalid actions allowed per episode in generate mode (default {defaults.max_invalid})",
    )
    llm.add_argument(
        "--league",
        default=f"{defaults.mirror:g},{defaults.snapshots:g},{defaults.anchors:g}",
        metavar="M,S,A",
        help="weights of mirror, snapshots and anchors (default %(default)s)",
    )
    llm.add_argument("--anchors", metavar="NAMES", help="scripted league members, comma-separated (default: random and the strong agent)")
    llm.add_argument(
        "--snapshot-every", type=int, default=defaults.snapshot_every, help=f"updates between league snapshots (default {defaults.snapshot_every})"
    )
    llm.add_argument(
        "--max-snapshots", type=int, default=defaults.max_snapshots, help=f"snapshots kept in the league (default {defaults.max_snapshots})"
    )
    llm.add_argument("--eval-every", type=int, default=defaults.eval_every, help=f"updates between evaluations (default {defaults.eval_every})")
    llm.add_argument(
        "--eval-episodes", type=int, default=defaults.eval_episodes, help=f"episodes per evaluation opponent (default {defaults.eval_episodes})"
    )
    llm.add_argument("--eval-seed", type=int, default=defaults.eval_seed, help=f"base seed of every evaluation (default {defaults.eval_seed})")
    llm.add_argument("--eval-sample", action="store_true", help="evaluate by sampling moves instead of taking the most likely one")
    llm.add_argument(
        "--opponent",
        action="append",
        dest="opponents",
        metavar="NAME",
        help="an evaluation opponent, repeatable (default: random and the strong agent)",
    )
    llm.add_argument("--no-exploitability", action="store_true", help="skip the exploitability of KuhnPoker and LeducHoldem at evaluations")
    llm.add_argument("--seed", type=int, default=defaults.seed, help=f"seed of the whole run (default {defaults.seed})")
    llm.add_argument("--env-kwarg", action="append", default=[], metavar="KEY=VALUE", help="a game option (VALUE read as JSON, else text)")
    llm.add_argument("--lora", action="store_true", help="train LoRA adapters only (peft); the checkpoint has them merged")
    llm.add_argument("--lora-rank", type=int, default=defaults.lora_rank, help=f"LoRA rank (default {defaults.lora_rank})")
    llm.add_argument("--device", help="cpu, cuda, cuda:1, ... (default: the GPU when there is one)")
    llm.add_argument("--dtype", default=defaults.dtype, choices=("auto", "float32", "float16", "bfloat16"), help="weights dtype (default auto)")
    llm.add_argument(
        "--mixed-precision", default=defaults.mixed_precision, choices=("no", "fp16", "bf16"), help="accelerate's mixed precision (default no)"
    )
    llm.add_argument("--no-records", action="store_true", help="do not keep the training games in DIR/episodes.jsonl.gz")
    llm.add_argument("--quiet", action="store_true", help="no progress bar")
    llm.set_defaults(handler=run_llm)


def run_llm(args: argparse.Namespace) -> int:
    """Train, then print where everything went and the first and last evaluations."""
    from parlour.agents import check_hf_model
    from parlour.baselines.train.llm import LLMTrainConfig, TrainingInterrupted, train_llm
    from parlour.commands.evaluate import parse_kwargs

    try:
        mirror, snapshots, anchors = (float(weight) for weight in args.league.split(","))
    except ValueError:
        raise ValueError(f"--league takes three weights M,S,A (mirror, snapshots, anchors) such as 0.5,0.25,0.25, got {args.league!r}") from None
    model, roles = parse_models(args.models)
    frozen = list(args.frozen)
    if args.roles:
        if args.models:
            raise ValueError(f"give the models with --model or with --roles {args.roles}, not both")
        roles, frozen_in_file = read_roles(args.roles)
        frozen += [role for role in frozen_in_file if role not in frozen]
    elif not model and not roles:
        raise ValueError("give a model: --model PATH_OR_ID, --model ROLE=PATH_OR_ID once per role, or --roles FILE.toml")
    if model:
        check_hf_model(f"hf:{model}")
    for role, path in roles.items():
        try:
            check_hf_model(f"hf:{path}")
        except (ValueError, OSError) as error:
            raise type(error)(f"role {role!r}: {error}") from None
    config = LLMTrainConfig(
        env_id=args.env_id,
        model=model,
        roles=roles,
        frozen=frozen,
        out=args.out,
        mode=args.mode,
        estimator=args.estimator,
        loss=args.loss,
        updates=args.updates,
        episodes=args.episodes,
        group_size=args.group_size,
        learning_rate=args.lr,
        kl_coef=args.kl_coef,
        clip=args.clip,
        ppo_epochs=args.ppo_epochs,
        minibatch=args.minibatch,
        micro_batch=args.micro_batch,
        temperature=args.temperature,
        max_new_tokens=args.max_new_tokens,
        history_turns=args.history_turns or None,
        invalid_penalty=args.invalid_penalty,
        max_invalid=args.max_invalid,
        mirror=mirror,
        snapshots=snapshots,
        anchors=anchors,
        anchor_agents=args.anchors.split(",") if args.anchors else None,
        snapshot_every=args.snapshot_every,
        max_snapshots=args.max_snapshots,
        eval_every=args.eval_every,
        eval_episodes=args.eval_episodes,
        eval_opponents=args.opponents,
        eval_seed=args.eval_seed,
        eval_greedy=not args.eval_sample,
        exploitability=not args.no_exploitability,
        seed=args.seed,
        lora=args.lora,
        lora_rank=args.lora_rank,
        mixed_precision=args.mixed_precision,
        device=args.device,
        dtype=args.dtype,
        env_kwargs=parse_kwargs(args.env_kwarg),
        keep_records=not args.no_records,
        progress=not args.quiet,
        command=shlex.join(["parlour", *sys.argv[1:]]) if sys.argv[1:2] == ["train"] else "",
    )
    config.check()
    try:
        summary = train_llm(config)
    except TrainingInterrupted as interrupted:
        print_llm_summary(interrupted.summary, args, last="last evaluated")
        raise
    print_llm_summary(summary, args)
    return 0


def parse_models(values: list[str]) -> tuple[str, dict[str, str]]:
    """``--model`` values as ``(shared model, {role: model})``: one plain ``PATH``, or ``ROLE=PATH`` once per role.

    A value is ``ROLE=PATH`` when the text before its first ``=`` is a seat-like name (letters, digits, ``_``, ``-``).
    """
    roles: dict[str, str] = {}
    plain = []
    for value in values:
        role, equals, path = value.partition("=")
        if equals and role and path and re.fullmatch(r"[A-Za-z][\w-]*", role):
            if role in roles:
                raise ValueError(f"--model gives role {role!r} twice ({roles[role]} and {path}); give each role one model")
            roles[role] = path
        else:
            plain.append(value)
    if plain and (roles or len(plain) > 1):
        raise ValueError(f"--model takes one shared PATH or ROLE=PATH once per role, not {values}")
    return (plain[0] if plain else ""), roles


def read_roles(path: str | Path) -> tuple[dict[str, str], list[str]]:
    """A ``--roles`` TOML file as ``({role: model}, [frozen roles])``: one table per role, in the file's order::

        [proposer]
        model = "models/a"        # a folder or a hub id, as --model takes it (relative to the working directory)

        [solver]
        model = "models/b"
        frozen = true             # plays, never learns (default false)

    Errors name the file and the fix: a file that is not TOML or repeats a key (TOML's own error, with its line),
    a role that is not a table, a role without a ``model``, a key other than :data:`ROLE_KEYS`, a ``frozen`` that
    is not true or false. Which roles the game has is checked with the game (``LLMTrainConfig.check``).
    """
    path = Path(path)
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"--roles: no file {str(path)!r}") from None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f'--roles {path}: not valid TOML ({error}); each role is a table such as [solver] with model = "PATH"') from None
    if not table:
        raise ValueError(f'--roles {path}: no roles; give a table per role such as [solver] with model = "PATH"')
    roles: dict[str, str] = {}
    frozen: list[str] = []
    for role, entry in table.items():
        if not isinstance(entry, dict):
            raise ValueError(f'--roles {path}: {role!r} is not a role table; write [{role}] and below it model = "PATH"')
        unknown = sorted(set(entry) - set(ROLE_KEYS))
        if unknown:
            guesses = [f"{key!r}{did_you_mean(key, ROLE_KEYS)}" for key in unknown]
            raise ValueError(f"--roles {path}: role {role!r} has unknown keys {', '.join(guesses)}; a role takes {' and '.join(ROLE_KEYS)}")
        model = entry.get("model")
        if not isinstance(model, str) or not model:
            raise ValueError(f'--roles {path}: role {role!r} has no model; add model = "PATH_OR_HUB_ID" to [{role}]')
        if not isinstance(entry.get("frozen", False), bool):
            raise ValueError(f"--roles {path}: role {role!r} has frozen = {entry['frozen']!r}; write frozen = true or false")
        roles[role] = model
        if entry.get("frozen", False):
            frozen.append(role)
    return roles, frozen


def print_llm_summary(summary: dict[str, Any], args: argparse.Namespace, last: str = "after") -> None:
    """The first and last evaluations (the last one labelled ``last``), and where the checkpoints and the curves are."""
    for label, rows in (("before", summary["first"]), (last, summary["last"])):
        for row in rows:
            if "exploitability" in row:
                print(f"  {label}: exploitability {row['exploitability']:.4f} chips per hand")
                continue
            print(
                f"  {label}{' ' + row['role'] if row['role'] else ''} vs {row['opponent']}: win {row['win_rate']:.2f} [{row['win_low']:.2f}, {row['win_high']:.2f}], "
                f"mean return {row['mean_return']:+.3f}, invalid {row['invalid_rate']:.3f} ({row['episodes']} episodes)"
            )
    for role, folder in summary["checkpoints"].items():
        label = f"checkpoint of {role}" if role else "checkpoint"
        print(f"{label}: hf:{folder}  (parlour eval {args.env_id} --agent hf:{folder})")
    print(f"curves: {args.out}/learning.png, {args.out}/learning_time.png")
