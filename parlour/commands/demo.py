"""``parlour demo``: the product's main job on embedded defaults.

The built-in agents play every environment, seated as its category asks
(:func:`lineups`, from the environment's category, seats and roles only, so a
newly registered environment needs nothing here):

* single-agent tasks (search, coding, one seat): each scripted agent alone;
* cooperative games and tasks whose seats share one reward
  (``Game.shared_reward``, such as AskOrSearch): every agent in self-play (a
  whole team of it), and every pair of agents mixed (one seat each way round,
  seats rotated), so each agent is also seen with the baseline as its partner;
* games whose seats have roles some agents cannot take (a debate's judge, a
  search proposer): agents are seated by role, one line-up per combination of
  agents able to hold each role (seats fixed);
* other games: every pair of distinct scripted agents, seats rotated.

Every run is played for a challenge of the embedded SQLite leaderboard (so it
counts; the challenges' nonces derive from ``--seed``, so a demo is
reproducible), printed, and submitted. How many episodes is fixed before
any is played: ``--episodes`` per line-up, and for competitive games at least
``--game-episodes`` per environment shared by its line-ups (games rated per
role too, whose roles split an agent's episodes), since poker needs
hundreds of hands to tell an equilibrium from random play (Kuhn poker's
equilibrium gains 0.12 chips a hand against random, with a spread of over a
chip). Stopping when the result looks good would bias it; the leaderboard replays every episode and
is then served on localhost (or exported as a static site).

Running the same demo again (same environments, episodes, seed and game
versions, the same ``--out``) reuses what is already there: the bundles played,
the challenges they were played for, and the leaderboard that verified them,
listed in ``--out``'s ``demo.json``. So ``parlour demo --no-serve --export site/``
after ``make demo`` only writes the site, and an interrupted demo carries on
where it stopped. Other settings start afresh (``--out`` is cleared).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import parlour
from parlour.baselines import scripted_names
from parlour.envs.core.match import make_game
from parlour.envs.registry import game_class, list_envs

#: The file in ``--out`` naming the demo's settings and the bundles its leaderboard already holds.
MANIFEST = "demo.json"
#: Most line-ups played for one environment whose agents are seated by role.
MAX_ROLE_LINEUPS = 27


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour demo``."""
    parser = subparsers.add_parser("demo", help="the built-in agents on every environment, seated by its category, then the leaderboard")
    parser.add_argument("--episodes", type=int, default=50, help="episodes per line-up (default 50)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the nonces of the demo's own challenges, so a demo is reproducible (default 0)")
    parser.add_argument("--env", action="append", dest="envs", metavar="ENV_ID", help="only this environment (repeatable)")
    parser.add_argument("--out", default="results/demo", help="where bundles and the leaderboard database go (reused by a rerun with the same settings)")
    parser.add_argument("--game-episodes", type=int, default=600, help="episodes per competitive game at least, shared by its line-ups (default 600)")
    parser.add_argument("--workers", type=int, default=1, help="processes playing each line-up (default 1: short runs do not repay starting processes)")
    parser.add_argument("--host", default="127.0.0.1", help="address the leaderboard listens on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port the leaderboard listens on (default 8000)")
    parser.add_argument("--export", metavar="DIR", help="also write the leaderboard as a static site to DIR (reuses the bundles already played)")
    parser.add_argument("--no-serve", action="store_true", help="do not serve the leaderboard after the round-robin")
    parser.set_defaults(handler=run_demo)


@dataclass(frozen=True)
class Lineup:
    """One run of the demo: the agents (a list, seated by the runner's rule; or one per seat, fixed) and a label."""

    agents: tuple[str, ...]
    #: True: ``agents`` holds one agent per seat in seat order, seats fixed; False: the runner's rotated line-up.
    fixed: bool
    label: str

    def spec(self, players: list[str]) -> Any:
        """What :func:`parlour.evaluate` takes as ``agents``."""
        return dict(zip(players, self.agents)) if self.fixed else list(self.agents)


def seat_roles(players: list[str]) -> dict[str, list[str]]:
    """The seats of each role, roles in seat order (a role is a seat's name without its trailing number)."""
    from parlour.leaderboard.ratings import role_of

    roles: dict[str, list[str]] = {}
    for player in players:
        roles.setdefault(role_of(player), []).append(player)
    return roles


@functools.cache
def can_play(env_id: str, agent: str, seat: str) -> bool:
    """Whether scripted ``agent`` can hold ``seat`` of ``env_id``: one episode with ``random`` in the other seats runs without error."""
    players = list(make_game(game_class(env_id), {}).players)
    seating = {player: agent if player == seat else "random" for player in players}
    try:
        parlour.evaluate(env_id, seating, episodes=1, seed=0, progress=False)
    except Exception:  # noqa: BLE001 - an agent refusing a seat (or failing in it) is what is probed
        return False
    return True


def lineups(env_id: str, names: list[str] | None = None) -> list[Lineup]:
    """The demo's runs for ``env_id``, by its category, seats and roles (see the module docstring).

    ``names``: the scripted agents to seat, sorted (default: all of the environment's), so a
    reference agent can be measured against ``random`` seated as the leaderboard seats it.
    """
    game_cls = game_class(env_id)
    players = list(make_game(game_cls, {}).players)
    names = scripted_names(env_id) if names is None else names
    if len(players) == 1:
        return [Lineup((name,), False, name) for name in names]
    roles = seat_roles(players)
    if len(roles) > 1:
        able = {role: [name for name in names if all(can_play(env_id, name, seat) for seat in seats)] for role, seats in roles.items()}
        if any(len(agents) < len(names) for agents in able.values()):
            if not all(able.values()):
                return []  # some role has no scripted agent able to hold it: nothing to play
            runs = []
            for choice in itertools.islice(itertools.product(*able.values()), MAX_ROLE_LINEUPS):
                by_role = dict(zip(roles, choice))
                agents = tuple(by_role[role] for player in players for role, seats in roles.items() if player in seats)
                runs.append(Lineup(agents, True, "-".join(f"{role}={name}" for role, name in by_role.items())))
            return runs
    pairs = [Lineup((a, b), False, f"{a}-vs-{b}") for a, b in itertools.combinations(names, 2)]
    # A shared reward makes a rotated pair's agents score alike: only self-play tells the team of one agent from another's.
    if game_cls.category == "cooperation" or game_cls.shared_reward:
        return [Lineup((name,), False, f"{name}-team") for name in names] + [
            Lineup(lineup.agents, False, lineup.label.replace("-vs-", "-with-")) for lineup in pairs
        ]
    return pairs


def counted_lineups(env_id: str) -> tuple[list[Lineup], list[Lineup]]:
    """The demo's line-ups of ``env_id`` that a leaderboard counts, and apart those it refuses: line-ups seating a
    privileged oracle (Code's ``reference``), an upper bound measured locally (``parlour eval``), never counted."""
    from parlour.leaderboard.verify import privileged

    runs = lineups(env_id)
    oracles = [run for run in runs if any(privileged(env_id, name) for name in run.agents)]
    return [run for run in runs if run not in oracles], oracles


def episodes_per_lineup(env_id: str, lineups: int, episodes: int, game_episodes: int) -> int:
    """Episodes of each line-up: ``episodes``, or for a competitive game, and a game rated per role, enough for
    ``game_episodes`` in all: a role splits an agent's episodes (Mafia's random held the mafia side in 8 of 20), and an
    agent under the leaderboard's minimum in a role is provisional there."""
    game_cls = game_class(env_id)
    rated_by_role = game_cls.category == "social" or game_cls.fixed_roles
    if (game_cls.category != "game" and not rated_by_role) or len(make_game(game_cls, {}).players) == 1:
        return episodes
    return max(episodes, -(-game_episodes // max(lineups, 1)))


def run_demo(args: argparse.Namespace) -> int:
    """Play every environment's line-ups for challenges, build the leaderboard, then serve or export it."""
    from parlour.leaderboard.api import Leaderboard
    from parlour.leaderboard.server import serve
    from parlour.leaderboard.site import export_site
    from parlour.evaluation.results import Results, write_json
    from parlour.evaluation.runner import evaluate
    from parlour.evaluation.rollout import make_plan

    if args.episodes < 1:
        raise ValueError(f"--episodes must be at least 1, got {args.episodes}")
    env_ids = args.envs or list_envs()
    # Each unknown id fails with the registry's "did you mean".
    versions = {env_id: game_class(env_id).version for env_id in env_ids}
    settings = {"envs": versions, "episodes": args.episodes, "seed": args.seed, "game_episodes": args.game_episodes, "parlour_version": parlour.__version__}
    out = Path(args.out)
    manifest = _read_manifest(out)
    fresh = manifest.get("settings") != settings
    if fresh:
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        manifest = {"settings": settings, "submitted": [], "challenges": {}}
    manifest.setdefault("challenges", {})
    # The demo's runs are its own: the challenge size is what the demo asks for.
    # A real leaderboard draws its nonces at random; the demo's come from --seed, so the same demo plays the same games.
    nonces = random.Random(args.seed)
    board = Leaderboard(
        f"sqlite:///{(out / 'leaderboard.db').resolve()}", min_challenge_episodes=1, max_open_challenges=10_000,
        nonces=lambda: nonces.randbytes(32).hex(),
    )
    if fresh:
        board.add_submitter("demo")
        write_json(out / MANIFEST, manifest)

    for env_id in env_ids:
        players = list(make_game(game_class(env_id), {}).players)
        runs, oracles = counted_lineups(env_id)
        if oracles:
            print(f"\n{env_id}: not played for the leaderboard: {', '.join(run.label for run in oracles)} (a privileged oracle, "
                  "an upper bound to measure locally with `parlour eval`, never counted)")
        if not runs:
            print(f"\n{env_id}: skipped, no scripted agents can fill its seats")
            continue
        rows = []
        episodes = episodes_per_lineup(env_id, len(runs), args.episodes, args.game_episodes)
        for lineup in runs:
            bundle = out / env_id.replace("/", "__") / lineup.label
            key = bundle.relative_to(out).as_posix()
            if key in manifest["submitted"]:
                results = Results.load(bundle)
            else:
                challenge = manifest["challenges"].get(key)
                if challenge is None:
                    plan = make_plan(env_id, lineup.spec(players), {}, 0, not lineup.fixed)
                    challenge = board.issue_challenge("demo", env_id, plan.names, episodes, plan.lineup, plan.rotate_seats)
                    manifest["challenges"][key] = challenge
                    write_json(out / MANIFEST, manifest)
                results = evaluate(env_id, lineup.spec(players), workers=args.workers, out=bundle, challenge=challenge, progress=False)
                board.submit(bundle, "demo")
                manifest["submitted"].append(key)
                write_json(out / MANIFEST, manifest)
            summary = results.summary
            for name in results.agents:
                others = [other for other in results.agents if other != name]
                rows.append((name, ("with " if lineup.fixed else "vs ") + (", ".join(others) if others else "itself/alone"), summary[name]))
        print_round_robin(env_id, rows)
        print_table(board.ratings(env_id))

    print_overall(board.ratings())
    if args.export:
        export_site(board, args.export)
        print(f"static leaderboard written to {Path(args.export).resolve()}/index.html")
    if not args.no_serve:
        print(f"leaderboard at http://{args.host}:{args.port}/  (Ctrl-C to stop)")
        serve(board, args.host, args.port)
    return 0


def _read_manifest(out: Path) -> dict[str, Any]:
    """The manifest of the demo in ``out``; empty when there is none (or it cannot be read: the demo then starts afresh)."""
    try:
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) and isinstance(manifest.get("submitted"), list) else {}


def print_round_robin(env_id: str, rows: list[tuple[str, str, dict]]) -> None:
    """One environment's runs: win/draw/loss and mean reward of each agent in each line-up."""
    print(f"\n{env_id}")
    print(f"  {'agent':<18}{'line-up':<34}{'win':>6}{'draw':>6}{'loss':>6}{'mean reward':>14}")
    for name, opponent, block in rows:
        wdl = "".join(f"{block[k]:>6.0%}" for k in ("win_rate", "draw_rate", "loss_rate")) if "win_rate" in block else f"{'-':>6}" * 3
        print(f"  {name[:17]:<18}{opponent[:33]:<34}{wdl}{block['mean_reward']:>+14.3f}")
    if any("win_rate" not in block for _, _, block in rows):
        from parlour.evaluation.results import DASH_NOTES

        print(f'  "-": {DASH_NOTES["win/draw/loss"]}')


def print_table(table: dict) -> None:
    """The environment's rating table: method, then each agent's value and 95% interval (per role where it is rated per role)."""
    print(f"  rating: {table['method']} ({table['episodes']} counted episodes)")
    for row in table["rows"]:
        name = f"{row['agent']} as {row['role']}" if row.get("role") else row["agent"]
        print(f"    {name[:28]:<30}{row['rating']:>10.3f}   [{row['low']:.3f}, {row['high']:.3f}]")


def print_overall(table: dict) -> None:
    """The leaderboard's overall table."""
    rows = table.get("rows", [])
    if not rows:
        return
    print("\nOverall leaderboard (normalised score: random = 0, strongest measured reference = 100; 95% interval; environments covered)")
    for row in rows:
        print(f"  {row['agent'][:20]:<22}{row['score']:>8.1f}  [{row['low']:.1f}, {row['high']:.1f}]  {row['environments']} environment(s)")
