"""``parlour leaderboard serve|add-submitter|seed|show|export``, ``parlour submit`` and ``parlour connect``.

The database is ``--db URL`` (any SQLAlchemy URL), else ``$PARLOUR_LEADERBOARD_DB``,
else ``sqlite:///leaderboard.db`` in the current directory. ``serve`` and
``add-submitter`` create it when it is missing; ``show`` and ``export`` only
read one, so without ``--db`` or the variable they fall back to the demo's
database (``results/demo/leaderboard.db``, written by ``parlour demo``) and
otherwise say where to point. ``parlour submit`` reads the submitter token from
``$PARLOUR_TOKEN``, prints the page of each submission it stored, and exits
with status 1 when the server rejects a bundle. ``seed`` fills a new board
with the built-in agents' runs, so a fresh server is not empty: the line-ups
of ``parlour demo`` (:func:`parlour.evaluation.seating.lineups`), each played for a
challenge of the board and submitted through the same verification as any
other bundle (every episode replayed), as the submitter ``--submitter``
(default ``baselines``, created when missing). An environment that submitter
already holds runs of is skipped, so seeding again only adds what is missing.
``parlour connect AGENT --server URL --env ENV`` plays a live match: the
server runs the environment and the agent answers its turns over HTTP.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from parlour.commands.evaluate import add_agent_options, agent_spec

if TYPE_CHECKING:
    # Annotations only: the command line loads the leaderboard (SQLAlchemy, SciPy) when a command needs it.
    from parlour.leaderboard.api import Leaderboard
    from parlour.leaderboard.tables import OverallTable

DEFAULT_DB = "sqlite:///leaderboard.db"
#: Where ``parlour demo`` (with its default ``--out results/demo``) keeps its leaderboard.
DEMO_DB = Path("results/demo/leaderboard.db")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour leaderboard`` (with its subcommands) and ``parlour submit``."""
    parser = subparsers.add_parser("leaderboard", help="run and inspect a leaderboard")
    commands = parser.add_subparsers(dest="leaderboard_command", metavar="SUBCOMMAND", required=True, help="what to do")

    def with_db(sub: argparse.ArgumentParser) -> argparse.ArgumentParser:
        """Give a subcommand the --db option."""
        sub.add_argument(
            "--db",
            metavar="URL",
            help=f"SQLAlchemy database URL (default $PARLOUR_LEADERBOARD_DB, else {DEFAULT_DB}; show and export fall back "
            f"to the demo's sqlite:///{DEMO_DB})",
        )
        return sub

    serve = with_db(commands.add_parser("serve", help="serve the API and the web pages"))
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine only)")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    serve.add_argument("--max-bytes", type=int, default=64 * 1024 * 1024, help="largest accepted submission body")
    serve.add_argument("--rate-limit", type=int, default=60, help="submissions per minute and submitter")
    serve.add_argument("--quota-bytes", type=int, default=None, help="stored record bytes per submitter (default 512 MiB)")
    serve.add_argument("--quota-episodes", type=int, default=None, help="stored episodes per submitter (default 200000)")
    serve.add_argument(
        "--challenge-episodes", type=int, default=100, help="episodes of a challenge when the submitter asks for no count (default 100)"
    )
    serve.add_argument(
        "--turn-timeout", type=float, default=60.0, help="seconds a live match waits for a turn before playing it as invalid (default 60)"
    )
    serve.add_argument(
        "--live-episodes", type=int, default=100, help="episodes of every live match, fixed so nobody can stop when ahead (default 100)"
    )
    serve.set_defaults(handler=run_serve)

    add = with_db(commands.add_parser("add-submitter", help="create a submitter and print its token"))
    add.add_argument("name", help="the submitter's name")
    add.set_defaults(handler=run_add_submitter)

    seed = with_db(commands.add_parser("seed", help="store the built-in agents' verified runs on every environment (a fresh board is not empty)"))
    seed.add_argument("--episodes", type=int, default=50, help="episodes per line-up (default 50)")
    seed.add_argument(
        "--game-episodes",
        type=int,
        default=600,
        help="episodes per competitive game at least, shared by its line-ups, as in `parlour demo` (default 600)",
    )
    seed.add_argument("--env", action="append", dest="envs", metavar="ENV_ID", help="only this environment (repeatable; default all)")
    seed.add_argument("--submitter", default="baselines", help="the submitter the runs are stored under (default baselines)")
    seed.add_argument("--workers", type=int, default=1, help="processes playing each line-up (default 1)")
    seed.set_defaults(handler=run_seed)

    show = with_db(commands.add_parser("show", help="print the overall table, or one environment's"))
    show.add_argument("--env", help="environment id, e.g. parlour/TicTacToe-v0")
    # An id given without --env, as `parlour eval` takes it, is caught here so the error can name the flag.
    show.add_argument("given_env", nargs="?", metavar="ENV_ID", help="give it as --env ENV_ID (a bare id is refused with that hint)")
    show.set_defaults(handler=run_show)

    export = with_db(commands.add_parser("export", help="write the web pages as a static site"))
    export.add_argument("--out", required=True, help="output directory")
    export.set_defaults(handler=run_export)

    submit = subparsers.add_parser("submit", help="submit a bundle (or a directory of bundles) to a leaderboard")
    submit.add_argument("bundle", help="bundle directory written by Results.save, or a directory of them")
    submit.add_argument("--server", required=True, help="leaderboard base URL, e.g. http://127.0.0.1:8000")
    submit.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the verdict")
    submit.set_defaults(handler=run_submit)

    connect = subparsers.add_parser(
        "connect",
        help="play a live match on a leaderboard: the server runs the game, your agent answers turn by turn",
        description="The server keeps the seeds and the hidden state; the agent sees only its own observations. Token from $PARLOUR_TOKEN.",
    )
    connect.add_argument("agent", metavar="AGENT", help="the agent spec (a scripted name, hf:..., openai:...@URL, python:module:factory)")
    add_agent_options(connect)
    connect.add_argument("--server", required=True, help="leaderboard base URL, e.g. http://127.0.0.1:8000")
    connect.add_argument("--env", required=True, dest="env_id", metavar="ENV_ID", help="environment id, e.g. parlour/KuhnPoker-v0")
    connect.add_argument("--opponent", default="random", help="the built-in agent the server seats against yours (default random)")
    connect.add_argument("--episodes", type=int, default=None, help="episodes to play; a server plays a fixed count, and refuses any other")
    connect.set_defaults(handler=run_connect)


def database_url(args: argparse.Namespace, existing: bool) -> str:
    """The database to use: ``--db``, ``$PARLOUR_LEADERBOARD_DB``, or the default; see the module docstring.

    With ``existing`` (commands that only read), a SQLite file that is not there
    is an error rather than a new empty leaderboard, and without ``--db`` or the
    variable the demo's database is the fallback.
    """
    url = args.db or os.environ.get("PARLOUR_LEADERBOARD_DB")
    if not existing:
        return url or DEFAULT_DB
    if url is None:
        default_file = _sqlite_file(DEFAULT_DB)
        if default_file is not None and default_file.exists():
            return DEFAULT_DB
        if DEMO_DB.exists():
            print(f"{args.command_prog}: using the demo's leaderboard {DEMO_DB} (pass --db to choose another)", file=sys.stderr)
            return f"sqlite:///{DEMO_DB}"
        raise FileNotFoundError(
            f"no leaderboard database here ({_sqlite_file(DEFAULT_DB)}): pass --db sqlite:///PATH (or a postgresql:// URL), "
            f"set PARLOUR_LEADERBOARD_DB, or run `parlour demo`, which writes {DEMO_DB}"
        )
    path = _sqlite_file(url)
    if path is not None and not path.exists():
        raise FileNotFoundError(f"no leaderboard database at {path}; check --db (`parlour demo` writes {DEMO_DB})")
    return url


def _sqlite_file(url: str) -> Path | None:
    """The file of a ``sqlite:///PATH`` URL; ``None`` for other databases and in-memory SQLite."""
    if not url.startswith("sqlite"):
        return None
    database = url.split("://", 1)[-1].removeprefix("/").split("?", 1)[0]
    return Path(database) if database and database != ":memory:" else None


def _board(args: argparse.Namespace, existing: bool = False) -> Leaderboard:
    """The leaderboard at the database the arguments name."""
    from parlour.leaderboard.api import Leaderboard

    return Leaderboard(database_url(args, existing))


def run_serve(args: argparse.Namespace) -> int:
    """Serve the leaderboard until interrupted."""
    from parlour.leaderboard.api import Leaderboard
    from parlour.leaderboard.server import serve
    from parlour.leaderboard.store import Quota

    url = database_url(args, existing=False)
    limits = {"max_bytes": args.quota_bytes, "max_episodes": args.quota_episodes}
    quota = Quota(**{key: value for key, value in limits.items() if value is not None})
    board = Leaderboard(url, quota=quota, challenge_episodes=args.challenge_episodes)
    print(f"parlour leaderboard on http://{args.host}:{args.port}/ (database {url})", flush=True)
    serve(
        board,
        args.host,
        args.port,
        max_bytes=args.max_bytes,
        rate_limit=args.rate_limit,
        turn_timeout=args.turn_timeout,
        live_episodes=args.live_episodes,
    )
    return 0


def run_connect(args: argparse.Namespace) -> int:
    """Play a live match and print the server's result."""
    from parlour.agents import check_agent_spec, make_agent
    from parlour.envs.registry import game_class
    from parlour.leaderboard.live import connect

    game_class(args.env_id)
    # The same spec, options and name as `parlour eval` takes, so one agent has one name on both paths.
    spec = agent_spec(args.agent, args.agent_kwarg, args.name)
    for warning in check_agent_spec(spec, args.env_id):
        print(f"{args.command_prog}: warning: {warning}", file=sys.stderr)
    result = connect(make_agent(spec, env_id=args.env_id), args.server, args.env_id, opponent=args.opponent, episodes=args.episodes)
    means = ", ".join(f"{name} {value:+.3f}" for name, value in result["returns"].items())
    print(f"live match stored as submission {result['submission']}: {result['episodes']} episodes, mean return {means} (seed {result['seed']})")
    return 0


def run_seed(args: argparse.Namespace) -> int:
    """Play the demo's line-ups of each environment for challenges of the board at ``--db`` and submit them."""
    from parlour.envs.core.match import make_game
    from parlour.envs.registry import game_class, list_envs
    from parlour.evaluation.rollout import make_plan
    from parlour.evaluation.runner import evaluate
    from parlour.evaluation.seating import counted_lineups, episodes_per_lineup
    from parlour.leaderboard.api import Leaderboard

    if args.episodes < 1:
        raise ValueError(f"--episodes must be at least 1, got {args.episodes}")
    env_ids = args.envs or list_envs()
    for env_id in env_ids:
        game_class(env_id)  # an unknown id fails here, with the registry's "did you mean", before anything is played
    # The board's own runs: any episode count is a challenge it issues to itself.
    board = Leaderboard(database_url(args, existing=False), min_challenge_episodes=1)
    if board.store.submitter(args.submitter) is None:
        board.add_submitter(args.submitter)
    page = board.store.submitter(args.submitter)
    assert page is not None  # added just above if it was missing
    seeded = {submission["env_id"] for submission in page["submissions"]}
    stored = 0
    for env_id in env_ids:
        if env_id in seeded:
            print(f"{env_id}: already seeded by {args.submitter}, skipped")
            continue
        runs, oracles = counted_lineups(env_id)
        if oracles:
            print(f"{env_id}: {', '.join(run.label for run in oracles)} not stored (a privileged oracle, never counted)")
        players = list(make_game(game_class(env_id), {}).players)
        episodes = episodes_per_lineup(env_id, len(runs), args.episodes, args.game_episodes)
        for lineup in runs:
            plan = make_plan(env_id, lineup.spec(players), {}, 0, not lineup.fixed)
            challenge = board.issue_challenge(args.submitter, env_id, plan.names, episodes, plan.lineup, plan.rotate_seats)
            results = evaluate(env_id, lineup.spec(players), workers=args.workers, challenge=challenge, progress=False)
            answer = board.submit(results, args.submitter)
            assert isinstance(answer, dict)  # one run is one bundle: one answer, not a list
            stored += answer["new_episodes"]
            print(f"{env_id} {lineup.label}: {answer['new_episodes']} episodes verified and stored (submission {answer['submission']})")
    print(f"seeded {stored} counted episodes as {args.submitter}")
    return 0


def run_add_submitter(args: argparse.Namespace) -> int:
    """Create a submitter and print its token, once: alone on stdout, and as a ready ``export`` line on stderr."""
    token = _board(args).add_submitter(args.name)
    print(token)
    print(
        f"Submitter {args.name!r} created. The token is shown only once; to submit as {args.name}, run:\n  export PARLOUR_TOKEN={token}",
        file=sys.stderr,
    )
    return 0


def _format_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(line, widths)).rstrip() for line in [header, *rows]]
    return "\n".join(lines)


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _print_overall(table: OverallTable) -> None:
    """An overall (or category) table: the reference row, each agent's score and interval, and what is not normalised."""
    rows = [
        [
            str(k),
            row["agent"],
            _num(row["score"]),
            f"[{_num(row['low'])}, {_num(row['high'])}]",
            f"{row['environments']}/{len(table['environments'])}",
        ]
        for k, row in enumerate(table["rows"], 1)
    ]
    if table["reference"] is not None:
        reference = table["reference"]
        rows.insert(0, ["-", reference["agent"], _num(reference["score"]), f"[{_num(reference['low'])}, {_num(reference['high'])}]", "all"])
    print(_format_table(["#", "agent", "score", "95% interval", "envs"], rows))
    if table["unnormalised"]:
        print("not normalised: " + "; ".join(f"{env_id} ({table['reasons'][env_id]})" for env_id in table["unnormalised"]))


def run_show(args: argparse.Namespace) -> int:
    """Print a leaderboard table to the terminal, with the one sentence on its intervals the pages give."""
    from parlour.evaluation.results import INTERVAL_SENTENCE

    if args.given_env is not None:
        raise ValueError(f"show takes the environment as --env: parlour leaderboard show --env {args.given_env}")
    board = _board(args, existing=True)
    if args.env is None:
        from parlour.leaderboard.ratings import CATEGORY_TITLES

        overall = board.ratings()
        print("normalised score: random 0, each environment's strongest measured reference 100; an environment not played counts 0")
        _print_overall(overall)
        print(INTERVAL_SENTENCE)
        # Each category's table under its heading, as the index page has them.
        for category, scope in overall.get("categories", {}).items():
            print(f"\n{CATEGORY_TITLES.get(category, 'Other')}")
            _print_overall(scope)
        return 0
    stored = board.store.env_ids()
    if args.env not in stored:
        from parlour.envs.registry import game_class

        # An id that is not installed at all gets the registry's "did you mean".
        game_class(args.env)
        raise ValueError(f"no episodes of {args.env!r} on this leaderboard; it has: {', '.join(stored) or 'none yet'}")
    table = board.ratings(args.env)
    poker = "exploitability" in table
    # A table rated per role ranks each role apart: the role column says which ranking a rank belongs to.
    by_role = table["kind"] == "roles"
    # The method's display rule (parlour.leaderboard.ratings.METHODS), the same the pages use.
    digits = table["digits"]
    rows = [
        [str(row["rank"]) if row["rank"] else "prov.", row["agent"]]
        + ([row["role"]] if by_role else [])
        + ([_num(row["exploitability"], 3) if row["exploitability"] is not None else "unknown"] if poker else [])
        + [_num(row["rating"], digits), f"[{_num(row['low'], digits)}, {_num(row['high'], digits)}]", str(row["episodes"])]
        for row in table["rows"]
    ]
    print(f"{args.env} ({table['method']}, {table['episodes']} counted episodes): {table['sentence']}")
    headers = ["#", "agent"] + (["role"] if by_role else []) + (["exploitability"] if poker else []) + [table["value"], "95% interval", "episodes"]
    print(_format_table(headers, rows))
    if by_role:
        print(f"ranked within each role: {', '.join(table['roles'])}")
    print(INTERVAL_SENTENCE)
    for row in table["rows"]:
        if row["provisional"]:
            print(f"prov. {row['agent']}{' as ' + row['role'] if by_role else ''}: provisional, not ranked ({row['provisional']})")
        if poker and row["exploitability"] is None:
            print(f"{row['agent']}: exploitability {row['exploitability_note']}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    """Write the static site."""
    from parlour.leaderboard.site import export_site

    pages = export_site(_board(args, existing=True), args.out)
    print(f"wrote {len(pages)} pages under {args.out}")
    return 0


def run_submit(args: argparse.Namespace) -> int:
    """Send each bundle to the server; status 1 if any is rejected, 2 for a usage or connection problem."""
    import httpx

    from parlour.leaderboard.verify import bundle_dirs, load_bundle

    token = os.environ.get("PARLOUR_TOKEN")
    if not token:
        raise ValueError("set PARLOUR_TOKEN to your submitter token (`parlour leaderboard add-submitter NAME` prints one)")
    directories = bundle_dirs(args.bundle)
    url = args.server.rstrip("/") + "/api/submissions"
    status = 0
    for directory in directories:
        body = json.dumps(load_bundle(directory))
        try:
            response = httpx.post(
                url, content=body, timeout=args.timeout, headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
            )
        except httpx.ConnectError as error:
            raise ConnectionError(f"cannot reach {url} ({error}): is the leaderboard running? Start one with {_serve_hint(args.server)}") from None
        except httpx.TimeoutException:
            raise TimeoutError(f"no verdict from {url} within {args.timeout:g} s; a large bundle may need a longer --timeout") from None
        except httpx.HTTPError as error:
            raise ConnectionError(f"cannot submit to {url}: {error}") from None
        try:
            answer = response.json()
        except ValueError:
            answer = {"detail": response.text[:500]}
        if response.is_success:
            counted = "counted" if answer.get("counted") else "self-reported (no challenge), kept out of the ratings"
            print(f"{directory}: accepted, {answer['new_episodes']} new episode(s), {answer['duplicates']} already stored; {counted}")
            if answer.get("submission") is not None:
                print(f"  {args.server.rstrip('/')}/submission/{answer['submission']}.html")
        else:
            print(f"{directory}: rejected ({response.status_code}): {answer.get('detail', answer)}", file=sys.stderr)
            status = 1
    return status


def _serve_hint(server: str) -> str:
    """The command that serves a leaderboard where ``server`` points."""
    parts = urlsplit(server)
    command = f"`parlour leaderboard serve --db {DEFAULT_DB}"
    if parts.hostname and parts.hostname not in ("127.0.0.1", "localhost"):
        command += f" --host {parts.hostname}"
    if parts.port and parts.port != 8000:
        command += f" --port {parts.port}"
    return command + "`"
