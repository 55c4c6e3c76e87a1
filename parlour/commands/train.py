"""``parlour train TRAINER ENV_ID``: train a baseline policy by self-play and watch it learn.

Each trainer is one subcommand, added by its own ``register_<trainer>``
function below, with its handler beside it:

* ``parlour train sb3 ENV_ID --steps N --out DIR``: ``sb3_contrib.MaskablePPO``
  on the environment's vector face against a league of its own snapshots and
  the scripted agents (:mod:`parlour.baselines.train.sb3`); the policy plays
  everywhere as ``sb3:DIR/policy.zip``.

Every trainer writes into ``--out`` its policy, ``eval.csv`` (periodic
evaluation against fixed opponents), ``train.csv`` and the PNG plots, and
shows a progress bar.
"""

from __future__ import annotations

import argparse
import shlex
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour train`` and its trainers."""
    parser = subparsers.add_parser("train", help="train a baseline policy by self-play (sb3) and plot its learning")
    trainers = parser.add_subparsers(dest="trainer", metavar="TRAINER", required=True)
    register_sb3(trainers)


def register_sb3(trainers: argparse._SubParsersAction) -> None:
    """Add ``parlour train sb3``."""
    from parlour.baselines.train.sb3 import SB3TrainConfig

    defaults = SB3TrainConfig(env_id="", out=".")
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
    sb3.add_argument("--net", default=",".join(map(str, defaults.net)), metavar="SIZES", help="hidden layer sizes, comma-separated (default %(default)s)")
    sb3.add_argument("--snapshot-every", type=int, default=defaults.snapshot_every, help=f"steps between league snapshots (default {defaults.snapshot_every})")
    sb3.add_argument("--eval-every", type=int, default=defaults.eval_every, help=f"steps between evaluations (default {defaults.eval_every})")
    sb3.add_argument("--eval-episodes", type=int, default=defaults.eval_episodes, help=f"episodes per evaluation opponent (default {defaults.eval_episodes})")
    sb3.add_argument("--eval-seed", type=int, default=defaults.eval_seed, help=f"base seed of every evaluation (default {defaults.eval_seed})")
    sb3.add_argument("--opponent", action="append", dest="opponents", metavar="NAME", help="an evaluation opponent, repeatable (default: random and the strong agent)")
    sb3.add_argument("--anchors", metavar="NAMES", help="scripted league members, comma-separated (default: every scripted agent fast enough)")
    sb3.add_argument("--pfsp-power", type=float, default=defaults.pfsp_power, help=f"PFSP weighting (1 - p)^power (default {defaults.pfsp_power:g})")
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
