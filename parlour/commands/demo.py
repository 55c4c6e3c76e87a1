"""``parlour demo``: the product's main job on embedded defaults, served at once and filled in while it plays.

The built-in agents play every environment, seated as its category asks
(:func:`parlour.evaluation.seating.lineups`, from the environment's category,
seats and roles only, so a newly registered environment needs nothing here):
single-agent tasks alone, cooperative ones in self-play and mixed pairs, games
with roles some agents cannot take by role, other games in every pair with
seats rotated. Line-ups seating a privileged oracle are not played
(:func:`parlour.evaluation.seating.counted_lineups`).

Every run is played for a challenge of the embedded SQLite leaderboard (so it
counts; the challenges' nonces derive from ``--seed``, so a demo is
reproducible) and submitted, and the leaderboard is served on localhost from
the start: the server answers first, and the pages fill in as each run
verifies, the index showing the demo's progress (line-ups and episodes done of
each environment, and an ETA); the terminal shows one progress line per
environment.

How many episodes each line-up plays is fixed before any is played, from two
things, and the index states both for every environment (:func:`plan_demo`):

* what its figure needs: ``--episodes`` per line-up, and for competitive games
  (and games rated per role) at least ``--game-episodes`` per environment shared
  by its line-ups, since poker needs hundreds of hands to tell an equilibrium
  from random play (Kuhn poker's equilibrium gains 0.12 chips a hand against
  random, with a spread of over a chip); never below what a rank needs (each
  agent :data:`~parlour.leaderboard.ratings.MIN_EPISODES` episodes in each role
  it holds) unless fewer were asked for;
* what an episode costs: one probe episode of each line-up is played and
  verified first (not counted), its CPU time measured, and where the whole demo
  would take more than ``--budget`` CPU seconds in all (starting and measuring
  included, and :data:`RESERVE` of it kept for storing the runs and recomputing
  the ratings), the costliest environments are cut (water-filling: every
  environment keeps all it wants up to one level of seconds, the level chosen
  so the total fits), never below a rank's needs.

Stopping when the result looks good would bias it: nothing here looks at a
result before the counts are fixed. The leaderboard replays every episode.

Running the same demo again (same environments, episodes, budget, seed and game
versions, the same ``--out``) reuses what is already there: the plan of
episodes, the bundles played, the challenges they were played for, and the
leaderboard that verified them, listed in ``--out``'s ``demo.json``. So
``parlour demo --no-serve --export site/`` after ``make demo`` only writes the
site, and an interrupted demo carries on where it stopped. Other settings start
afresh (``--out`` is cleared).
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import random
import shutil
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import parlour
from parlour.envs.core.match import make_game
from parlour.envs.registry import game_class, list_envs
from parlour.evaluation.seating import Lineup, counted_lineups, episodes_per_lineup, seat_roles

if TYPE_CHECKING:
    from parlour.evaluation.results import AgentBlock
    from parlour.leaderboard.tables import RatingTable

#: The file in ``--out`` naming the demo's settings and the bundles its leaderboard already holds.
MANIFEST = "demo.json"
#: CPU seconds of play and verification the default demo spends in all: 5 minutes.
DEFAULT_BUDGET = 300.0
#: The share of ``--budget`` kept for what follows each run's verification (storing it, recomputing the ratings, a
#: poker table's exploitability with them), which no probe measures: the default demo spent 304 CPU s with none kept
#: and 313 s with 5% (benchmarks/demo_time.py on 2 cores), so about a tenth goes there.
RESERVE = 0.15
#: The seed of the probe episodes that measure an episode's cost: far from every counted seed (those derive from nonces).
PROBE_SEED = 2**40 + 35
#: A probe slower than this (seconds) is played once more and the faster taken: a first episode also pays for loading
#: its agents (a policy's framework, an engine's process), which later episodes do not.
WARM_PROBE = 0.25
#: Seconds between rewrites of the progress line on a terminal.
TICK = 1.0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour demo``."""
    parser = subparsers.add_parser(
        "demo", help="the built-in agents on every environment, seated by its category, served as a leaderboard while they play"
    )
    parser.add_argument("--episodes", type=int, default=50, help="episodes per line-up its figure wants (default 50)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the nonces of the demo's own challenges, so a demo is reproducible (default 0)")
    parser.add_argument("--env", action="append", dest="envs", metavar="ENV_ID", help="only this environment (repeatable)")
    parser.add_argument(
        "--out", default="results/demo", help="where bundles and the leaderboard database go (reused by a rerun with the same settings)"
    )
    parser.add_argument(
        "--game-episodes", type=int, default=600, help="episodes per competitive game its figure wants at least, shared by its line-ups (default 600)"
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=DEFAULT_BUDGET,
        help=f"CPU seconds of play and verification for the whole demo, shared out before play from each episode's measured "
        f"cost (default {DEFAULT_BUDGET:g}; 0: no limit, every line-up plays what its figure wants)",
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="processes playing each line-up (default 1: short runs do not repay starting processes)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address the leaderboard listens on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port the leaderboard listens on (default 8000)")
    parser.add_argument(
        "--export", metavar="DIR", help="also write the leaderboard as a static site to DIR once played (reuses the bundles already played)"
    )
    parser.add_argument("--no-serve", action="store_true", help="play, print and exit, without serving the leaderboard")
    parser.set_defaults(handler=run_demo)


def rank_floors(env_id: str, runs: list[Lineup]) -> list[int]:
    """Episodes each line-up needs so that every agent in it has :data:`MIN_EPISODES` episodes in each role it holds.

    An agent's episodes add up over the line-ups it is in (per role, for line-ups seated by role). In a game rated per
    role with rotated seats, an agent beside another holds the rarest role in as few as that role's seats of the
    players' episodes, so its line-ups need that many times more; where roles are hidden (Mafia's teams, dealt each
    episode) the rarest is taken as one seat of all. An agent in self-play holds every role in every episode.
    """
    from parlour.leaderboard.ratings import MIN_EPISODES

    game_cls = game_class(env_id)
    players = list(make_game(game_cls, {}).players)
    roles = seat_roles(players)
    rated_by_role = (game_cls.category == "social" or game_cls.fixed_roles) and len(players) > 1
    rarest = min(len(seats) for seats in roles.values()) if len(roles) > 1 else 1
    split = len(players) / rarest if rated_by_role else 1.0

    def units(run: Lineup) -> list[tuple[str, str]]:
        if run.fixed:
            return [(name, role) for name, player in zip(run.agents, players) for role in [seat_role(roles, player)]]
        return [(name, "") for name in run.agents]

    appearances = collections.Counter(unit for run in runs for unit in set(units(run)))
    floors = []
    for run in runs:
        spread = split if not run.fixed and len(set(run.agents)) > 1 else 1.0
        floors.append(math.ceil(MIN_EPISODES * spread / min(appearances[unit] for unit in set(units(run)))))
    return floors


def seat_role(roles: dict[str, list[str]], player: str) -> str:
    """The role whose seats include ``player``."""
    return next(role for role, seats in roles.items() if player in seats)


def allot(
    wants: dict[str, list[int]], floors: dict[str, list[int]], costs: dict[str, list[float]], budget: float
) -> tuple[dict[str, list[int]], float | None]:
    """Episodes per line-up of each environment within ``budget`` seconds, and the level of seconds each environment was cut to.

    Water-filling: an environment whose line-ups want ``w`` seconds in all keeps them when ``w`` is under the level and is
    scaled down to the level otherwise, the level chosen so that the total is ``budget``; no line-up goes under its floor
    (or above what it wants). Level None: nothing was cut (no budget, or everything fits).
    """
    wanted = {env_id: sum(n * c for n, c in zip(wants[env_id], costs[env_id])) for env_id in wants}
    if budget <= 0 or sum(wanted.values()) <= budget:
        return {env_id: list(values) for env_id, values in wants.items()}, None
    # The level L solves sum(min(wanted, L)) = budget: walk up the sorted demands.
    level, spent, left = 0.0, 0.0, len(wanted)
    for demand in sorted(wanted.values()):
        if spent + demand * left > budget:
            level = (budget - spent) / left
            break
        spent += demand
        left -= 1
    planned = {}
    for env_id, values in wants.items():
        ratio = min(1.0, level / wanted[env_id]) if wanted[env_id] > 0 else 1.0
        planned[env_id] = [min(want, max(floor, math.ceil(want * ratio))) for want, floor in zip(values, floors[env_id])]
    return planned, level


def cpu_seconds() -> float:
    """CPU seconds used by this process and its child processes: those ended (``os.times``) and, on Linux, those still
    running (an engine such as Stockfish stays up between moves), read from ``/proc``."""
    used = os.times()
    # process_time, not os.times' own fields: those count whole clock ticks, too coarse for a cheap game's episode.
    total = time.process_time() + used.children_user + used.children_system
    try:
        tick = os.sysconf("SC_CLK_TCK")
        children = {pid for task in Path("/proc/self/task").iterdir() for pid in (task / "children").read_text().split()}
        for pid in children:
            # Fields after the command's closing parenthesis: utime and stime are the 12th and 13th (clock ticks).
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
    except (OSError, ValueError, IndexError):
        pass  # no /proc (not Linux), or a child that ended meanwhile: the running children go uncounted
    return total


def probe_cost(env_id: str, run: Lineup, players: list[str]) -> float:
    """CPU seconds to play and verify one episode of ``run`` (a probe episode, never counted; see :data:`WARM_PROBE`).

    CPU, not wall time: a machine loaded by other work stretches the wall time, not what an episode costs.
    """
    from parlour.evaluation.runner import evaluate
    from parlour.leaderboard.verify import as_bundle, verify_bundle

    def once() -> float:
        start = cpu_seconds()
        results = evaluate(env_id, run.spec(players), episodes=1, seed=PROBE_SEED, rotate_seats=not run.fixed, progress=False)
        verify_bundle(as_bundle(results), None)
        return cpu_seconds() - start

    first = once()
    return min(first, once()) if first > WARM_PROBE else first


def plan_demo(env_ids: list[str], args: argparse.Namespace, progress: DemoProgress) -> dict[str, Any]:
    """Each environment's line-ups and the episodes each plays, fixed before play (see the module docstring); JSON-ready."""
    entries: dict[str, dict[str, Any]] = {}
    wants, floors, costs = {}, {}, {}
    for env_id in env_ids:
        progress.status(f"measuring what an episode costs: {env_id}")
        players = list(make_game(game_class(env_id), {}).players)
        runs, oracles = counted_lineups(env_id)
        want = episodes_per_lineup(env_id, len(runs), args.episodes, args.game_episodes)
        entries[env_id] = {
            "oracles": [run.label for run in oracles],
            "lineups": [{"label": run.label, "agents": list(run.agents), "fixed": run.fixed} for run in runs],
        }
        if not runs:
            continue
        wants[env_id] = [want] * len(runs)
        floors[env_id] = rank_floors(env_id, runs)
        costs[env_id] = [probe_cost(env_id, run, players) for run in runs] if args.budget > 0 else [0.0] * len(runs)
    # Starting and measuring are spent already, and each run's verification is followed by bookkeeping (storing it,
    # recomputing its environment's ratings) that no probe measured: the episodes get what is left of the budget.
    spent = cpu_seconds()
    episodes_budget = max(args.budget * (1 - RESERVE) - spent, 1e-9) if args.budget > 0 else 0.0
    planned, level = allot(wants, floors, costs, episodes_budget)
    for env_id, entry in entries.items():
        for k, lineup in enumerate(entry["lineups"]):
            lineup.update(episodes=planned[env_id][k], want=wants[env_id][k], floor=floors[env_id][k], cost=costs[env_id][k])
        entry["note"] = plan_note(entry, args.budget, level)
    budget_note = (
        f"{spent:.0f} s went to starting and measuring, {RESERVE:.0%} is kept for storing the runs and recomputing the ratings, "
        f"and the episodes have the remaining {episodes_budget:.0f} s"
        if args.budget > 0
        else "no budget: every line-up plays what its figure wants"
    )
    return {"budget": args.budget, "budget_note": budget_note, "level": level, "envs": entries}


def plan_note(entry: dict[str, Any], budget: float, level: float | None) -> str:
    """One environment's plan in words: episodes per line-up, what its figure wants, a rank's floor, an episode's cost, any cut."""
    runs = entry["lineups"]
    if not runs:
        return "not played: no scripted agents can fill its seats"
    counts = sorted({run["episodes"] for run in runs})
    played = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
    note = f"{played} episodes per line-up ({len(runs)} line-up{'s' if len(runs) > 1 else ''}), fixed before play: its figure wants {runs[0]['want']}"
    if budget <= 0:
        return note + "; no time budget, so nothing was cut"
    cost = sum(run["cost"] for run in runs) / len(runs)
    note += f", a rank needs {min(run['floor'] for run in runs)}; an episode costs {cost * 1000:.0f} ms of CPU to play and verify (a probe episode of each line-up)"
    if any(run["episodes"] < run["want"] for run in runs):
        note += f"; cut to fit the demo's budget of {budget:g} CPU s ({level:.1f} s for this environment)"
    return note


class DemoProgress:
    """What the demo has played so far, read by the served index and the terminal's progress lines (thread-safe).

    The episodes of the line-up being played are counted from its bundle as they are written.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.state = "planning"
        self.message = "starting"
        self.error: str | None = None
        self.plan: dict[str, Any] | None = None
        self.done: dict[str, list[int]] = {}
        self.current: tuple[str, int, Path] | None = None
        self.started = time.monotonic()
        self.playing_since: float | None = None

    def status(self, message: str) -> None:
        """Say what the demo is doing before play (measuring costs)."""
        with self._lock:
            self.message = message

    def start(self, plan: dict[str, Any]) -> None:
        """Play begins on ``plan``."""
        with self._lock:
            self.plan, self.state, self.playing_since = plan, "playing", time.monotonic()

    def begin(self, env_id: str, index: int, bundle: Path) -> None:
        """Line-up ``index`` of ``env_id`` starts, writing its bundle to ``bundle``."""
        with self._lock:
            self.current = (env_id, index, bundle)

    def finish(self, env_id: str, index: int) -> None:
        """Line-up ``index`` of ``env_id`` is played and verified."""
        with self._lock:
            self.done.setdefault(env_id, []).append(index)
            self.current = None

    def end(self, error: str | None = None) -> None:
        """Play is over (or failed with ``error``)."""
        with self._lock:
            self.state, self.error = ("failed", error) if error else ("done", None)

    def _playing_now(self, env_id: str) -> int:
        """Episodes written so far by the line-up of ``env_id`` being played (0 if none is)."""
        if self.current is None or self.current[0] != env_id:
            return 0
        try:
            with (self.current[2] / "episodes.jsonl").open("rb") as handle:
                return sum(1 for _ in handle)
        except OSError:
            return 0

    def snapshot(self) -> dict[str, Any]:
        """The demo's progress: state, each environment's line-ups and episodes done of its total and its plan, and ETAs."""
        with self._lock:
            plan = self.plan
            environments, total, played, cost_total, cost_done = [], 0, 0, 0.0, 0.0
            for env_id, entry in (plan or {"envs": {}})["envs"].items():
                runs = entry["lineups"]
                finished = self.done.get(env_id, [])
                episodes = sum(run["episodes"] for run in runs)
                now = self._playing_now(env_id)
                done = sum(runs[k]["episodes"] for k in finished) + now
                cost = sum(run["episodes"] * run.get("cost", 0.0) for run in runs)
                spent = sum(runs[k]["episodes"] * runs[k].get("cost", 0.0) for k in finished)
                if self.current is not None and self.current[0] == env_id:
                    spent += now * runs[self.current[1]].get("cost", 0.0)
                state = "done" if len(finished) == len(runs) else "playing" if self.current and self.current[0] == env_id else "waiting"
                environments.append(
                    {
                        "env_id": env_id,
                        "lineups": len(runs),
                        "lineups_done": len(finished),
                        "episodes": episodes,
                        "episodes_done": done,
                        "state": state,
                        "note": entry.get("note", ""),
                        "planned_s": cost,
                        "done_s": spent,
                    }
                )
                total, played, cost_total, cost_done = total + episodes, played + done, cost_total + cost, cost_done + spent
            elapsed = time.monotonic() - (self.playing_since or self.started)
            # Planned seconds run at the pace seen so far (a loaded machine is slower than its probes said).
            pace = elapsed / cost_done if cost_done > 0 and self.playing_since else 1.0
            for item in environments:
                item["eta_s"] = (item["planned_s"] - item["done_s"]) * pace
            return {
                "state": self.state,
                "message": self.message,
                "error": self.error,
                "budget": (plan or {}).get("budget"),
                "budget_note": (plan or {}).get("budget_note", ""),
                "environments": environments,
                "episodes": total,
                "episodes_done": played,
                "environments_done": sum(item["state"] == "done" for item in environments),
                "eta_s": (cost_total - cost_done) * pace if plan else None,
                "elapsed_s": elapsed,
            }


def progress_line(snapshot: dict[str, Any], env_id: str) -> str:
    """The terminal's line for ``env_id``: its line-ups and episodes done of their totals, and the ETA of it and of the demo."""
    from parlour.leaderboard.site import duration

    envs = snapshot["environments"]
    number = next(k for k, item in enumerate(envs, 1) if item["env_id"] == env_id)
    item = envs[number - 1]
    eta = "done" if item["state"] == "done" else f"ETA {duration(item['eta_s'])}"
    return (
        f"[{number:>{len(str(len(envs)))}}/{len(envs)}] {env_id:<36} {item['lineups_done']}/{item['lineups']} line-ups  "
        f"{item['episodes_done']}/{item['episodes']} episodes  {eta}  ·  demo {snapshot['episodes_done']}/{snapshot['episodes']} "
        f"episodes, ETA {duration(snapshot['eta_s'])}"
    )


class ProgressPrinter:
    """One progress line per environment on ``stream``: rewritten in place every :data:`TICK` seconds on a terminal,
    and written once when the environment is done (the only line where ``stream`` is not a terminal)."""

    def __init__(self, progress: DemoProgress, stream: TextIO):
        self.progress = progress
        self.stream = stream
        self.live = stream.isatty()
        self._env: str | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        if self.live:
            self._thread = threading.Thread(target=self._tick, name="parlour-demo-progress", daemon=True)
            self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(TICK):
            with self._lock:
                if self._env is not None:
                    self.stream.write("\r\x1b[K" + progress_line(self.progress.snapshot(), self._env))
                    self.stream.flush()

    def playing(self, env_id: str) -> None:
        """``env_id`` is being played."""
        with self._lock:
            self._env = env_id

    def done(self, env_id: str) -> None:
        """``env_id`` is played: its final line."""
        with self._lock:
            self._env = None
            self.stream.write(("\r\x1b[K" if self.live else "") + progress_line(self.progress.snapshot(), env_id) + "\n")
            self.stream.flush()

    def close(self) -> None:
        """Stop rewriting the line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def run_demo(args: argparse.Namespace) -> int:
    """Serve the leaderboard at once (unless ``--no-serve``), and play every environment's line-ups into it."""
    from parlour.leaderboard.api import Leaderboard

    if args.episodes < 1:
        raise ValueError(f"--episodes must be at least 1, got {args.episodes}")
    if args.budget < 0:
        raise ValueError(f"--budget must be 0 (no limit) or a number of seconds, got {args.budget:g}")
    env_ids = args.envs or list_envs()
    # Each unknown id fails with the registry's "did you mean".
    versions = {env_id: game_class(env_id).version for env_id in env_ids}
    settings = {
        "envs": versions,
        "episodes": args.episodes,
        "seed": args.seed,
        "game_episodes": args.game_episodes,
        "budget": args.budget,
        "parlour_version": parlour.__version__,
    }
    out = Path(args.out)
    manifest = _read_manifest(out)
    if manifest.get("settings") != settings:
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        manifest = {"settings": settings, "submitted": [], "challenges": {}}
    # The demo's runs are its own: the challenge size is what the demo asks for.
    # A real leaderboard draws its nonces at random; the demo's come from --seed, so the same demo plays the same games.
    nonces = random.Random(args.seed)
    board = Leaderboard(
        f"sqlite:///{(out / 'leaderboard.db').resolve()}",
        min_challenge_episodes=1,
        max_open_challenges=10_000,
        nonces=lambda: nonces.randbytes(32).hex(),
    )
    if board.store.submitter("demo") is None:
        board.add_submitter("demo")
    from parlour.evaluation.results import write_json

    write_json(out / MANIFEST, manifest)
    progress = DemoProgress()
    if args.no_serve:
        return play_demo(board, env_ids, args, manifest, progress)
    from parlour.leaderboard.server import serve

    def play() -> None:
        try:
            play_demo(board, env_ids, args, manifest, progress)
        except Exception:  # noqa: BLE001 - the server goes on serving what was played; the page and the terminal say why play stopped
            progress.end(traceback.format_exc(limit=3))
            traceback.print_exc()

    print(f"leaderboard at http://{args.host}:{args.port}/  (filled in as the demo plays; Ctrl-C to stop)", flush=True)
    threading.Thread(target=play, name="parlour-demo", daemon=True).start()
    serve(board, args.host, args.port, progress=progress.snapshot)
    return 0


def play_demo(board: Any, env_ids: list[str], args: argparse.Namespace, manifest: dict[str, Any], progress: DemoProgress) -> int:
    """Plan the episodes (or reuse the manifest's plan), then play, submit and print every line-up; export at the end."""
    from parlour.evaluation.results import Results, write_json
    from parlour.evaluation.rollout import make_plan
    from parlour.evaluation.runner import evaluate
    from parlour.leaderboard.site import export_site

    out = Path(args.out)
    plan = manifest.get("plan")
    if plan is None:
        plan = manifest["plan"] = plan_demo(env_ids, args, progress)
        write_json(out / MANIFEST, manifest)
    progress.start(plan)
    printer = ProgressPrinter(progress, sys.stderr)
    try:
        for env_id in env_ids:
            entry = plan["envs"][env_id]
            players = list(make_game(game_class(env_id), {}).players)
            if entry["oracles"]:
                print(
                    f"\n{env_id}: not played for the leaderboard: {', '.join(entry['oracles'])} (a privileged oracle, "
                    "an upper bound to measure locally with `parlour eval`, never counted)"
                )
            if not entry["lineups"]:
                print(f"\n{env_id}: skipped, no scripted agents can fill its seats")
                continue
            printer.playing(env_id)
            rows = []
            for index, item in enumerate(entry["lineups"]):
                lineup = Lineup(tuple(item["agents"]), item["fixed"], item["label"])
                bundle = out / env_id.replace("/", "__") / lineup.label
                key = bundle.relative_to(out).as_posix()
                progress.begin(env_id, index, bundle)
                if key in manifest["submitted"]:
                    results = Results.load(bundle)
                else:
                    challenge = manifest["challenges"].get(key)
                    if challenge is None:
                        run = make_plan(env_id, lineup.spec(players), {}, 0, not lineup.fixed)
                        challenge = board.issue_challenge("demo", env_id, run.names, item["episodes"], run.lineup, run.rotate_seats)
                        manifest["challenges"][key] = challenge
                        write_json(out / MANIFEST, manifest)
                    results = evaluate(env_id, lineup.spec(players), workers=args.workers, out=bundle, challenge=challenge, progress=False)
                    board.submit(bundle, "demo")
                    manifest["submitted"].append(key)
                    write_json(out / MANIFEST, manifest)
                progress.finish(env_id, index)
                summary = results.summary
                for name in results.agents:
                    others = [other for other in results.agents if other != name]
                    rows.append((name, ("with " if lineup.fixed else "vs ") + (", ".join(others) if others else "itself/alone"), summary[name]))
            printer.done(env_id)
            print_round_robin(env_id, rows)
            print_table(board.ratings(env_id))
    finally:
        printer.close()
    progress.end()
    print_overall(board.ratings())
    if args.export:
        export_site(board, args.export, progress.snapshot)
        print(f"static leaderboard written to {Path(args.export).resolve()}/index.html")
    return 0


def _read_manifest(out: Path) -> dict[str, Any]:
    """The manifest of the demo in ``out``; empty when there is none (or it cannot be read: the demo then starts afresh)."""
    try:
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) and isinstance(manifest.get("submitted"), list) else {}


def print_round_robin(env_id: str, rows: list[tuple[str, str, AgentBlock]]) -> None:
    """One environment's runs: win/draw/loss and mean reward of each agent in each line-up."""
    print(f"\n{env_id}")
    print(f"  {'agent':<18}{'line-up':<34}{'win':>6}{'draw':>6}{'loss':>6}{'mean reward':>14}")
    for name, opponent, block in rows:
        wdl = f"{block['win_rate']:>6.0%}{block['draw_rate']:>6.0%}{block['loss_rate']:>6.0%}" if "win_rate" in block else f"{'-':>6}" * 3
        print(f"  {name[:17]:<18}{opponent[:33]:<34}{wdl}{block['mean_reward']:>+14.3f}")
    if any("win_rate" not in block for _, _, block in rows):
        from parlour.evaluation.results import DASH_NOTES

        print(f'  "-": {DASH_NOTES["win/draw/loss"]}')


def print_table(table: RatingTable) -> None:
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
