"""``parlour demo``: the product's main job on embedded defaults.

The built-in agents play each other on every environment (every pairing of
the environment's scripted agents, seats rotated), the round-robin tables are
printed, the bundles are submitted to an embedded SQLite leaderboard that
replays every episode, and the leaderboard is served on localhost (or exported
as a static site).

Running the same demo again (same environments, episodes, seed and game
versions, the same ``--out``) reuses what is already there: the bundles played
and the leaderboard that verified them, listed in ``--out``'s ``demo.json``. So
``parlour demo --no-serve --export site/`` after ``make demo`` only writes the
site, and an interrupted demo carries on where it stopped. Other settings start
afresh (``--out`` is cleared).
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import parlour
from parlour.baselines import scripted_names
from parlour.envs.registry import game_class, list_envs

#: The file in ``--out`` naming the demo's settings and the bundles its leaderboard already holds.
MANIFEST = "demo.json"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour demo``."""
    parser = subparsers.add_parser("demo", help="round-robin of the built-in agents on every environment, then the leaderboard")
    parser.add_argument("--episodes", type=int, default=50, help="episodes per pairing (default 50)")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the first pairing; each next pairing adds 1 (default 0)")
    parser.add_argument("--env", action="append", dest="envs", metavar="ENV_ID", help="only this environment (repeatable)")
    parser.add_argument("--out", default="results/demo", help="where bundles and the leaderboard database go (reused by a rerun with the same settings)")
    parser.add_argument("--workers", type=int, default=1, help="processes playing each pairing (default 1: short pairings do not repay starting processes)")
    parser.add_argument("--host", default="127.0.0.1", help="address the leaderboard listens on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port the leaderboard listens on (default 8000)")
    parser.add_argument("--export", metavar="DIR", help="also write the leaderboard as a static site to DIR (reuses the bundles already played)")
    parser.add_argument("--no-serve", action="store_true", help="do not serve the leaderboard after the round-robin")
    parser.set_defaults(handler=run_demo)


def pairings(env_id: str) -> list[tuple[str, str]]:
    """Every pair of distinct scripted agents of ``env_id``."""
    return list(itertools.combinations(scripted_names(env_id), 2))


def run_demo(args: argparse.Namespace) -> int:
    """Play the round-robin, build the leaderboard, then serve or export it."""
    from parlour.leaderboard.api import Leaderboard
    from parlour.leaderboard.results import Results, write_json
    from parlour.leaderboard.runner import evaluate

    if args.episodes < 1:
        raise ValueError(f"--episodes must be at least 1, got {args.episodes}")
    env_ids = args.envs or list_envs()
    # Each unknown id fails with the registry's "did you mean".
    versions = {env_id: game_class(env_id).version for env_id in env_ids}
    settings = {"envs": versions, "episodes": args.episodes, "seed": args.seed, "parlour_version": parlour.__version__}
    out = Path(args.out)
    manifest = _read_manifest(out)
    fresh = manifest.get("settings") != settings
    if fresh:
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        manifest = {"settings": settings, "submitted": []}
    board = Leaderboard(f"sqlite:///{(out / 'leaderboard.db').resolve()}")
    if fresh:
        board.add_submitter("demo")
        write_json(out / MANIFEST, manifest)

    for env_id in env_ids:
        rows = []
        for index, (first, second) in enumerate(pairings(env_id)):
            agents = [first, second]
            bundle = out / env_id.replace("/", "__") / f"{first}-vs-{second}"
            key = bundle.relative_to(out).as_posix()
            if key in manifest["submitted"]:
                results = Results.load(bundle)
            else:
                results = evaluate(
                    env_id, agents, episodes=args.episodes, seed=args.seed + index, workers=args.workers, out=bundle
                )
                board.submit(bundle, "demo")
                manifest["submitted"].append(key)
                write_json(out / MANIFEST, manifest)
            summary = results.summary
            for name in (first, second):
                rows.append((name, "vs " + (second if name == first else first), summary[name]))
        print_round_robin(env_id, rows)

    print_overall(board.ratings())
    if args.export:
        board.export(args.export)
        print(f"static leaderboard written to {Path(args.export).resolve()}/index.html")
    if not args.no_serve:
        print(f"leaderboard at http://{args.host}:{args.port}/  (Ctrl-C to stop)")
        board.serve(args.host, args.port)
    return 0


def _read_manifest(out: Path) -> dict[str, Any]:
    """The manifest of the demo in ``out``; empty when there is none (or it cannot be read: the demo then starts afresh)."""
    try:
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) and isinstance(manifest.get("submitted"), list) else {}


def print_round_robin(env_id: str, rows: list[tuple[str, str, dict]]) -> None:
    """One environment's table: win/draw/loss and mean reward of each agent in each pairing."""
    print(f"\n{env_id}")
    print(f"  {'agent':<18}{'opponent':<22}{'win':>6}{'draw':>6}{'loss':>6}{'mean reward':>14}")
    for name, opponent, block in rows:
        wdl = "".join(f"{block[k]:>6.0%}" for k in ("win_rate", "draw_rate", "loss_rate")) if "win_rate" in block else f"{'-':>6}" * 3
        print(f"  {name:<18}{opponent:<22}{wdl}{block['mean_reward']:>+14.3f}")


def print_overall(table: dict) -> None:
    """The leaderboard's overall table."""
    rows = table.get("rows", [])
    if not rows:
        return
    print("\nOverall leaderboard (normalised score: random = 0, best scripted = 100)")
    for row in rows:
        print(f"  {row['agent']:<18}{row['score']:>8.1f}   over {row['environments']} environment(s)")
