"""``parlour eval`` (evaluate agents, print the summary, write a bundle) and ``parlour play`` (a person against an agent)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from parlour.agents import make_agent
from parlour.envs.core.agent import act_batch, reset_agent
from parlour.envs.core.match import Match
from parlour.envs.registry import game_class


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour eval`` and ``parlour play``."""
    evaluate = subparsers.add_parser(
        "eval",
        help="evaluate agents on an environment and write a bundle",
        description="Play episodes between agents, print the summary table and write the bundle (rerun to resume).",
    )
    evaluate.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. parlour/TicTacToe-v0")
    evaluate.add_argument("--agent", required=True, metavar="SPEC", help="the agent evaluated (random, minimax, hf:PATH, openai:MODEL@URL, python:module:factory)")
    evaluate.add_argument(
        "--opponent",
        action="append",
        default=[],
        metavar="SPEC",
        help="an opponent, repeatable; the last one fills the remaining seats (default: random in multi-player games)",
    )
    evaluate.add_argument("--episodes", type=int, default=100, help="number of episodes (default 100)")
    evaluate.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    evaluate.add_argument(
        "--out", metavar="DIR", help="bundle directory (episodes.jsonl, summary.json); default results/<Env>/<agent>-vs-<opponents>"
    )
    evaluate.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    evaluate.add_argument("--in-flight", type=int, default=32, help="episodes played at once per process (default 32)")
    evaluate.add_argument("--no-rotate", action="store_true", help="keep the line-up in seat order instead of rotating seats")
    evaluate.add_argument("--env-kwarg", action="append", default=[], metavar="KEY=VALUE", help="a game option (VALUE read as JSON, else text)")
    evaluate.add_argument("--quiet", action="store_true", help="no progress bar")
    evaluate.set_defaults(handler=run_eval)

    play = subparsers.add_parser(
        "play",
        help="play an environment in the terminal against an agent",
        description="You see exactly the text an LLM agent would see and type your moves; Ctrl-D quits.",
    )
    play.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. parlour/TicTacToe-v0")
    play.add_argument("--opponent", default="random", metavar="SPEC", help="who plays the other seats (default random)")
    play.add_argument("--seat", default="0", help="your seat: a player name or index (default 0, the first player)")
    play.add_argument("--seed", type=int, default=None, help="the game's seed (default: a fresh one)")
    play.add_argument("--env-kwarg", action="append", default=[], metavar="KEY=VALUE", help="a game option (VALUE read as JSON, else text)")
    play.set_defaults(handler=run_play)


def parse_kwargs(pairs: list[str]) -> dict[str, Any]:
    """``["key=value", ...]`` as a dict; each value is read as JSON (numbers, booleans, lists) or else kept as text."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--env-kwarg takes KEY=VALUE, got {pair!r}")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def run_eval(args: argparse.Namespace) -> int:
    """Evaluate, print the summary table, write the bundle."""
    from parlour.leaderboard.runner import evaluate

    env_kwargs = parse_kwargs(args.env_kwarg)
    opponents = list(args.opponent)
    if not opponents and len(Match(game_class(args.env_id), env_kwargs).players) > 1:
        opponents = ["random"]
    out = args.out or default_bundle_dir(args.env_id, [args.agent, *opponents])
    results = evaluate(
        args.env_id,
        [args.agent, *opponents],
        episodes=args.episodes,
        seed=args.seed,
        rotate_seats=not args.no_rotate,
        env_kwargs=env_kwargs,
        workers=args.workers,
        in_flight=args.in_flight,
        out=out,
        progress=not args.quiet,
    )
    print(results.table())
    print(f"bundle: {out}")
    return 0


def default_bundle_dir(env_id: str, specs: list[str]) -> str:
    """``results/<Env>/<agent>-vs-<opponent>...``, with characters unsafe in file names replaced."""
    name = "-vs-".join(re.sub(r"[^\w.-]+", "_", spec).strip("_") for spec in specs)
    return str(Path("results") / env_id.split("/")[-1] / name)


def run_play(args: argparse.Namespace) -> int:
    """Play one episode at the terminal; the other seats are played by the opponent agent."""
    match = Match(game_class(args.env_id), parse_kwargs(args.env_kwarg))
    players = match.players
    seat = players[int(args.seat)] if args.seat.isdigit() and int(args.seat) < len(players) else args.seat
    if seat not in players:
        raise SystemExit(f"--seat must be one of {players} or an index below {len(players)}, got {args.seat!r}")
    opponent = make_agent(args.opponent, env_id=args.env_id)
    match.reset(args.seed)
    reset_agent(opponent, match.seed)
    print(f"{args.env_id}, seed {match.seed}: you are {seat}; the other seats are played by {args.opponent}. Ctrl-D quits.\n")
    while not match.over:
        # Everyone acting now decides on the same position (simultaneous games), so observe before submitting.
        decisions = [(player, match.agent_observation(player)) for player in match.acting()]
        for player, observation in decisions:
            if match.over:
                break
            observation["episode"] = 0
            if player == seat:
                print(observation["text"])
                try:
                    action = input("> ")
                except EOFError:
                    print("\nQuit.")
                    return 0
                print()
            else:
                (action,) = act_batch(opponent, [observation])
            match.submit(player, action)
    print(match.observation_text(seat))
    return 0
