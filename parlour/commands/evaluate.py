"""``parlour eval`` (evaluate agents, print the summary, write a bundle) and ``parlour play`` (a person against an agent).

Both check the environment id, its options and every agent spec (with its
options and name) before they start anything (no progress bar, no bundle
folder, no model loaded), so a typo costs nothing. A failed ``parlour eval``
removes the bundle it began when no episode made it into the bundle; one with
episodes stays, to resume.

Agent options and names. ``--agent-kwarg KEY=VALUE`` (repeatable) is an option
of the ``--agent`` (``mode=generate``, ``temperature=0.5``, ``failure_limit=3``,
...; see :func:`parlour.make_agent`), and ``--opponent-kwarg KEY=VALUE`` one of
the ``--opponent`` given just before it. ``--name`` names the agent in the
bundle and on a leaderboard (default: its spec, as ``parlour connect`` names
it too); a name must be canonical, visible, and not a built-in agent's or a
look-alike of one.

``parlour play`` tries each line the person types on a snapshot of the match
(``Match.snapshot`` / ``Match.restore``): text the engine rejects is undone and
asked for again, so a person's typos never use up the invalid-move allowance
that agents have. A side of a price negotiation is asked to confirm before it
accepts a price that costs it money. At the end the final state is shown and,
for negotiations, whether there was an agreement and the other sides' private
values.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Any

from parlour.agents import AgentSpec, agent_name, check_agent_spec, make_agent
from parlour.envs.core.agent import act_batch, reset_agent, wants_vector
from parlour.envs.core.match import Match
from parlour.envs.core.rendering import render_message
from parlour.envs.registry import game_class
from parlour.evaluation.results import EPISODES_FILE, SUMMARY_FILE, read_records

#: The files a run writes into its bundle folder (the summary through a temporary file).
BUNDLE_FILES = (SUMMARY_FILE, SUMMARY_FILE + ".tmp", EPISODES_FILE)
#: Keys of a player's view that hold what only that player knows, with their names, revealed when a negotiation ends.
PRIVATE_VIEW_KEYS = {"reservation": "reservation price", "values": "values"}


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (an evaluation of no episodes measures nothing)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour eval`` and ``parlour play``."""
    evaluate = subparsers.add_parser(
        "eval",
        help="evaluate agents on an environment and write a bundle",
        description="Play episodes between agents, print the summary table and write the bundle (rerun to resume).",
    )
    evaluate.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. parlour/TicTacToe-v0")
    evaluate.add_argument(
        "--agent",
        required=True,
        metavar="SPEC",
        help="the agent evaluated: a scripted name (random, minimax, ...; see `parlour list`), hf:FOLDER_OR_HUB_ID, "
        "openai:MODEL@URL (URL is the API root ending in /v1, e.g. http://localhost:8000/v1), sb3:POLICY.zip (from "
        "`parlour train sb3`) or python:module:factory "
        "(the module must be importable: PYTHONPATH)",
    )
    add_agent_options(evaluate)
    evaluate.add_argument(
        "--opponent",
        action="append",
        default=[],
        metavar="SPEC",
        help="an opponent, repeatable; the last one fills the remaining seats (default: random in multi-player games)",
    )
    evaluate.add_argument(
        "--opponent-kwarg",
        action=OpponentOption,
        default=[],
        metavar="KEY=VALUE",
        help="an option of the --opponent given just before it, repeatable (VALUE read as JSON, else text)",
    )
    evaluate.add_argument("--episodes", type=positive_int, default=100, help="number of episodes, at least 1 (default 100)")
    evaluate.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    evaluate.add_argument(
        "--out", metavar="DIR", help="bundle directory (episodes.jsonl, summary.json); default results/<Env>/<agent>-vs-<opponents>"
    )
    evaluate.add_argument("--workers", type=positive_int, default=1, help="worker processes (default 1)")
    evaluate.add_argument("--in-flight", type=positive_int, default=32, help="episodes played at once per process (default 32)")
    evaluate.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="spread the episodes over a Ray cluster, every CPU of every node playing (ADDRESS: the head's HOST:PORT, "
        "or 'auto' for the cluster started on this machine with ray start; default $RAY_ADDRESS or a new local "
        "instance); needs pip install 'parlour[ray]'",
    )
    evaluate.add_argument("--no-rotate", action="store_true", help="keep the line-up in seat order instead of rotating seats")
    evaluate.add_argument("--env-kwarg", action="append", default=[], metavar="KEY=VALUE", help="a game option (VALUE read as JSON, else text)")
    evaluate.add_argument("--quiet", action="store_true", help="no progress bar")
    evaluate.add_argument(
        "--csv", metavar="PATH", help="also write one row per episode and seat (reward, result, negotiation metrics) as CSV to PATH"
    )
    evaluate.add_argument(
        "--plot",
        metavar="PATH",
        help="also write a PNG of each agent's mean reward (and win or agreement rate) with 95%% intervals to PATH; needs "
        "matplotlib (pip install matplotlib; it comes with parlour[train])",
    )
    evaluate.add_argument(
        "--challenge",
        metavar="URL",
        help="play a challenge of the leaderboard at URL so the run counts there (token from $PARLOUR_TOKEN); the server sets "
        "the episodes and the seed",
    )
    evaluate.set_defaults(handler=run_eval)

    play = subparsers.add_parser(
        "play",
        help="play an environment in the terminal against an agent",
        description="You see exactly the text an LLM agent would see and type your moves; Ctrl-D quits.",
    )
    play.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. parlour/TicTacToe-v0")
    play.add_argument("--opponent", default="random", metavar="SPEC", help="who plays the other seats (default random)")
    play.add_argument(
        "--opponent-kwarg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of the opponent, repeatable (VALUE read as JSON, else text)",
    )
    play.add_argument("--seat", default="0", help="your seat: a player name or index (default 0, the first player)")
    play.add_argument("--seed", type=int, default=None, help="the game's seed (default: a fresh one)")
    play.add_argument("--env-kwarg", action="append", default=[], metavar="KEY=VALUE", help="a game option (VALUE read as JSON, else text)")
    play.set_defaults(handler=run_play)


def add_agent_options(parser: argparse.ArgumentParser) -> None:
    """Give a command that takes an agent spec its ``--agent-kwarg`` and ``--name`` options."""
    parser.add_argument(
        "--agent-kwarg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of the agent, repeatable (VALUE read as JSON, else text): for hf: mode=score_legal|generate, "
        "temperature, greedy, max_new_tokens, ...; for openai: max_response_bytes, failure_limit, ... (an hf: checkpoint "
        "of `parlour train llm` plays as it was trained unless told otherwise)",
    )
    parser.add_argument(
        "--name",
        help="the agent's name in the bundle and on a leaderboard (default: its spec); not a built-in agent's name or a look-alike",
    )


class OpponentOption(argparse.Action):
    """``--opponent-kwarg KEY=VALUE``: kept with the number of the ``--opponent`` given just before it."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, value: Any, option: str | None = None) -> None:
        """Append ``(opponent number, KEY=VALUE)``; an error naming the fix when no ``--opponent`` came before."""
        opponents = getattr(namespace, "opponent", None) or []
        if not opponents:
            parser.error(f"{option} applies to the --opponent before it: give --opponent SPEC first")
        setattr(namespace, self.dest, [*getattr(namespace, self.dest), (len(opponents) - 1, value)])


def parse_kwargs(pairs: list[str], option: str = "--env-kwarg") -> dict[str, Any]:
    """``["key=value", ...]`` as a dict; each value is read as JSON (numbers, booleans, lists) or else kept as text."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"{option} takes KEY=VALUE, got {pair!r} (e.g. {option} {key or 'name'}=VALUE)")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def agent_spec(spec: str, pairs: list[str], name: str | None = None, option: str = "--agent-kwarg") -> str | AgentSpec:
    """``spec`` with the options ``pairs`` and ``name``: the spec string itself when there are neither."""
    if not pairs and name is None:
        return spec
    return AgentSpec(spec, parse_kwargs(pairs, option), None if name is None else checked_name(name))


def checked_name(name: str) -> str:
    """``name`` if a leaderboard would take it for one's own agent; else ``ValueError`` saying what to change.

    The rules are the leaderboard's (:func:`parlour.leaderboard.verify.check_name`: canonical, visible, no look-alike
    of a built-in agent), checked here so that a run is not played under a name its submission would be refused for.
    """
    from parlour.leaderboard.verify import Rejected, builtin_base, check_name

    try:
        check_name(name, "--name")
    except Rejected as refused:
        raise ValueError(refused.reason) from None
    if builtin_base(name) is not None:
        raise ValueError(f"--name {name!r} is a built-in agent's name; name your own agent differently")
    return name


def eval_specs(args: argparse.Namespace) -> list[str | AgentSpec]:
    """The agent and the opponents of ``parlour eval``, each with its ``--*-kwarg`` options and the agent's ``--name``."""
    opponents: list[list[str]] = [[] for _ in args.opponent]
    for number, pair in args.opponent_kwarg:
        opponents[number].append(pair)
    return [agent_spec(args.agent, args.agent_kwarg, args.name)] + [
        agent_spec(spec, pairs, option="--opponent-kwarg") for spec, pairs in zip(args.opponent, opponents)
    ]


def prepare(args: argparse.Namespace, specs: list[Any]) -> Match:
    """A match of ``args.env_id`` with ``args.env_kwarg`` once the id, the options and every agent spec check out.

    Raises with a message naming the fix (closest environment id, option or
    agent name); warnings about specs go to stderr.
    """
    match = Match(game_class(args.env_id), parse_kwargs(args.env_kwarg))
    for spec in specs:
        for warning in check_agent_spec(spec, args.env_id):
            print(f"{args.command_prog}: warning: {warning}", file=sys.stderr)
    return match


def run_eval(args: argparse.Namespace) -> int:
    """Evaluate, print the summary table, write the bundle; a failed run leaves no bundle without episodes."""
    from parlour.evaluation.runner import evaluate

    agent, *opponents = eval_specs(args)
    match = prepare(args, [agent, *opponents])
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise ValueError("--plot needs matplotlib: pip install matplotlib (it comes with parlour[train]), or leave out --plot")
    opponents = opponents or (["random"] if len(match.players) > 1 else [])
    out = Path(args.out or default_bundle_dir(args.env_id, [agent, *opponents]))
    created = [path for path in (out / name for name in BUNDLE_FILES) if not path.exists()] + missing_folders(out)
    try:
        results = evaluate(
            args.env_id,
            [agent, *opponents],
            episodes=args.episodes,
            seed=args.seed,
            rotate_seats=not args.no_rotate,
            env_kwargs=match.options,
            workers=args.workers,
            in_flight=args.in_flight,
            out=out,
            progress=not args.quiet,
            challenge=args.challenge,
            executor="local" if args.ray is None else "ray",
            ray_address=args.ray or None,
        )
    except BaseException:
        kept = len(read_records(out / EPISODES_FILE))
        if kept:
            print(f"{args.command_prog}: {kept} episode(s) kept in {out}: rerun the same command to resume", file=sys.stderr)
        else:
            remove_created(created)
        raise
    print(results.table())
    print(f"bundle: {out}")
    if args.csv:
        print(f"csv: {results.to_csv(args.csv)}")
    if args.plot:
        print(f"plot: {results.plot(args.plot)}")
    failures = results.failures()
    if failures["episodes"]:
        # The bundle is written, but its affected episodes do not measure the agent: say so and fail the command.
        print(
            f"{args.command_prog}: {len(failures['episodes'])} of {len(results.records)} episode(s) had turns an agent could not "
            f"decide ({failures['turns']} turns; reasons in {out / SUMMARY_FILE}); rerun the same command to play them again",
            file=sys.stderr,
        )
        return 1
    return 0


def missing_folders(path: Path) -> list[Path]:
    """``path`` and those of its parents that do not exist yet, deepest first (what writing a bundle there creates)."""
    missing = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    return missing


def remove_created(created: list[Path]) -> None:
    """Remove the files and then the (now empty) folders of ``created``: what a failed run wrote for a bundle with no episode.

    Such a bundle only holds the failed run's settings, and a rerun with other
    settings (a fixed agent spec) would refuse it as another evaluation. Files
    that were there before the run are never in ``created``.
    """
    for path in created:
        if path.is_file():
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def default_bundle_dir(env_id: str, specs: list[Any]) -> str:
    """``results/<Env>/<agent>-vs-<opponent>...``, each agent by name with its options, characters unsafe in file names replaced.

    The options are in the folder's name so that a run with other options starts a bundle of its own instead of
    resuming one whose agents have the same names but played otherwise.
    """
    labels = []
    for spec in specs:
        options = spec.kwargs if isinstance(spec, AgentSpec) else {}
        labels.append(" ".join([agent_name(spec), *(f"{key}={json.dumps(value)}" for key, value in sorted(options.items()))]))
    name = "-vs-".join(re.sub(r"[^\w.=-]+", "_", label).strip("_") for label in labels)
    return str(Path("results") / env_id.split("/")[-1] / name)


def run_play(args: argparse.Namespace) -> int:
    """Play one episode at the terminal; the other seats are played by the opponent agent."""
    spec = agent_spec(args.opponent, args.opponent_kwarg, option="--opponent-kwarg")
    match = prepare(args, [spec])
    players = match.players
    seat = players[int(args.seat)] if args.seat.isdigit() and int(args.seat) < len(players) else args.seat
    if seat not in players:
        raise ValueError(f"--seat must be one of {', '.join(players)} or an index below {len(players)}, got {args.seat!r}")
    opponent = make_agent(spec, env_id=args.env_id)
    match.reset(args.seed)
    reset_agent(opponent, match.seed)
    print(f"{args.env_id}, seed {match.seed}: you are {seat}; the other seats are played by {args.opponent}. Ctrl-D quits.\n")
    while not match.over:
        # Everyone acting now decides on the same position (simultaneous games), so observe before submitting.
        decisions = [(player, match.agent_observation(player, player != seat and wants_vector(opponent))) for player in match.acting()]
        for player, observation in decisions:
            if match.over:
                break
            if player == seat:
                print(observation["text"])
                if not play_turn(match, seat):
                    print("\nQuit.")
                    return 0
            else:
                observation["episode"] = 0
                (action,) = act_batch(opponent, [observation])
                match.submit(player, action)
    print_ending(match, seat)
    return 0


def play_turn(match: Match, seat: str) -> bool:
    """Read the person's move and submit it, asking again while the engine rejects it; ``False`` on end of input.

    Each line is submitted on a snapshot of the match: a rejected one is undone
    (the invalid-move allowance is for agents, not for a person's typos) and its
    reason shown. A price acceptance that loses the person money is confirmed first.
    """
    while True:
        try:
            text = input("> ")
        except EOFError:
            return False
        print()
        warning = costly_acceptance(match, seat, text)
        if warning is not None:
            print(warning)
            try:
                sure = input("Accept anyway? [y/N] ").strip().lower() in ("y", "yes")
            except EOFError:
                return False
            print()
            if not sure:
                print("Not accepted. Type another move.")
                continue
        snapshot = match.snapshot()
        match.submit(seat, text)
        error = match.last_error.get(seat)
        if error is None:
            return True
        match.restore(snapshot)
        print(f"Invalid action: {error} Try again (typing mistakes here do not count against the allowance).")


def costly_acceptance(match: Match, seat: str, text: str) -> str | None:
    """A warning when ``text`` accepts a standing price past ``seat``'s own reservation price, else ``None``.

    That is a buyer paying more than its value or a seller selling below its
    cost (PriceNegotiation): legal, but a loss the person may not have meant.
    """
    view = match.game.view(seat)
    reservation, standing = view.get("reservation"), view.get("standing")
    if seat not in ("buyer", "seller") or reservation is None or not standing or standing.get("player") == seat:
        return None
    try:
        move = match.game.parse(seat, text)
    except Exception:
        # Unreadable text is not an acceptance; the engine reports why when it is submitted.
        return None
    if not (isinstance(move, dict) and move.get("move") == "accept"):
        return None
    price = standing["price"]
    loss = price - reservation if seat == "buyer" else reservation - price
    if loss <= 0:
        return None
    deal = "pays more than your value" if seat == "buyer" else "sells below your cost"
    return f"Warning: accepting {price} {deal}: your reservation price is {reservation}, so you would lose {loss:g}."


def print_ending(match: Match, seat: str) -> None:
    """The person's last messages, the final state and, for a negotiation, the agreement and the others' private values."""
    negotiation = match.game.category == "negotiation"
    for message in match.messages(seat):
        # A negotiation's result is an agreement or none, not the engine's "Winner: ..." line.
        if not (negotiation and message["kind"] == "outcome"):
            print(render_message(message))
    print(f"\nFinal state:\n{match.render()}")
    if negotiation:
        print()
        print("\n".join(negotiation_ending(match, seat)))


def negotiation_ending(match: Match, seat: str) -> list[str]:
    """How a negotiation ended for ``seat``: agreement or not, its reward, and what the other sides kept private."""
    outcome = match.outcome
    assert outcome is not None
    details = outcome.details or {}
    result = ""
    if "agreement" in details:
        result = ": agreement" if details["agreement"] else ": no agreement"
    lines = [f"Game over: {outcome.reason}{result}. Your total reward: {match.returns[seat]:g}."]
    lines.extend(negotiation_metric_lines(details, seat))
    for other in match.players:
        if other == seat:
            continue
        view = match.game.view(other)
        for key, label in PRIVATE_VIEW_KEYS.items():
            if key in view:
                lines.append(f"{other}'s private {label}: {private_text(view[key], view.get('items'))}.")
    return lines


def negotiation_metric_lines(details: dict[str, Any], seat: str) -> list[str]:
    """The outcome analysis of a negotiation (utility, welfare, Pareto and Nash distances) as lines; none without one."""
    if "pareto_distance" not in details:
        return []
    lines = []
    utilities = details.get("utilities") or {}
    if seat in utilities:
        lines.append(f"Your utility: {utilities[seat]:g}.")
    if "social_welfare" in details:
        best = details.get("max_social_welfare")
        lines.append(f"Social welfare: {details['social_welfare']:g}" + (f" (best possible {best:g})." if best is not None else "."))
    optimal = "Pareto optimal" if details.get("pareto_optimal") else "not Pareto optimal"
    lines.append(f"The result is {optimal}: distance to the Pareto frontier {details['pareto_distance']:.3f} (0 on it, 1 at most).")
    if "nash_distance" in details:
        nash = details.get("nash_solution") or {}
        solution = ", ".join(f"{player} {value:g}" for player, value in nash.items())
        lines.append(f"Distance to the Nash bargaining solution ({solution}): {details['nash_distance']:.3f}.")
    return lines


def private_text(value: Any, names: list[str] | None) -> str:
    """A private value as text: per-item values are named after the items when the view names them."""
    if isinstance(value, list) and names and len(names) == len(value):
        return ", ".join(f"{v} per {name}" for v, name in zip(value, names))
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
