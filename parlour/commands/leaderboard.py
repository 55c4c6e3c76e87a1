"""``parlour leaderboard serve|add-submitter|show|export`` and ``parlour submit``.

The database is ``--db URL`` (any SQLAlchemy URL), else ``$PARLOUR_LEADERBOARD_DB``,
else ``sqlite:///leaderboard.db`` in the current directory. ``parlour submit``
reads the submitter token from ``$PARLOUR_TOKEN`` and exits with status 1 when
the server rejects a bundle.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

DEFAULT_DB = "sqlite:///leaderboard.db"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour leaderboard`` (with its subcommands) and ``parlour submit``."""
    parser = subparsers.add_parser("leaderboard", help="run and inspect a leaderboard")
    commands = parser.add_subparsers(dest="leaderboard_command", metavar="SUBCOMMAND", required=True)

    def with_db(sub: argparse.ArgumentParser) -> argparse.ArgumentParser:
        """Give a subcommand the --db option."""
        sub.add_argument("--db", default=os.environ.get("PARLOUR_LEADERBOARD_DB", DEFAULT_DB), help="SQLAlchemy database URL")
        return sub

    serve = with_db(commands.add_parser("serve", help="serve the API and the web pages"))
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--max-bytes", type=int, default=64 * 1024 * 1024, help="largest accepted submission body")
    serve.add_argument("--rate-limit", type=int, default=60, help="submissions per minute and submitter")
    serve.set_defaults(handler=run_serve)

    add = with_db(commands.add_parser("add-submitter", help="create a submitter and print its token"))
    add.add_argument("name")
    add.set_defaults(handler=run_add_submitter)

    show = with_db(commands.add_parser("show", help="print the overall table, or one environment's"))
    show.add_argument("--env", help="environment id, e.g. parlour/TicTacToe-v0")
    show.set_defaults(handler=run_show)

    export = with_db(commands.add_parser("export", help="write the web pages as a static site"))
    export.add_argument("--out", required=True, help="output directory")
    export.set_defaults(handler=run_export)

    submit = subparsers.add_parser("submit", help="submit a bundle (or a directory of bundles) to a leaderboard")
    submit.add_argument("bundle", help="bundle directory written by Results.save, or a directory of them")
    submit.add_argument("--server", required=True, help="leaderboard base URL, e.g. http://127.0.0.1:8000")
    submit.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the verdict")
    submit.set_defaults(handler=run_submit)


def _board(args: argparse.Namespace) -> Any:
    from parlour.leaderboard.api import Leaderboard

    return Leaderboard(args.db)


def run_serve(args: argparse.Namespace) -> int:
    """Serve the leaderboard until interrupted."""
    print(f"parlour leaderboard on http://{args.host}:{args.port}/ (database {args.db})", flush=True)
    _board(args).serve(args.host, args.port, max_bytes=args.max_bytes, rate_limit=args.rate_limit)
    return 0


def run_add_submitter(args: argparse.Namespace) -> int:
    """Create a submitter and print its token, once."""
    try:
        token = _board(args).add_submitter(args.name)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(token)
    return 0


def _format_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(line, widths)).rstrip() for line in [header, *rows]]
    return "\n".join(lines)


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def run_show(args: argparse.Namespace) -> int:
    """Print a leaderboard table to the terminal."""
    board = _board(args)
    if args.env is None:
        table = board.ratings()
        rows = [[str(k), row["agent"], _num(row["score"]), f"{row['environments']}/{len(table['environments'])}"]
                for k, row in enumerate(table["rows"], 1)]
        print(_format_table(["#", "agent", "score", "envs"], rows))
        if table["unnormalised"]:
            print(f"\nnot normalised (a reference baseline is missing): {', '.join(table['unnormalised'])}")
        return 0
    if args.env not in board.store.env_ids():
        print(f"error: no episodes of {args.env!r} on this leaderboard", file=sys.stderr)
        return 1
    table = board.ratings(args.env)
    rows = [[str(k), row["agent"], _num(row["rating"]), f"[{_num(row['low'])}, {_num(row['high'])}]", str(row["games"])]
            for k, row in enumerate(table["rows"], 1)]
    value = "rating" if table["kind"] == "bradley-terry" else "mean"
    print(f"{args.env} ({table['kind']}, {table['episodes']} episodes)")
    print(_format_table(["#", "agent", value, "95% interval", "games"], rows))
    return 0


def run_export(args: argparse.Namespace) -> int:
    """Write the static site."""
    pages = _board(args).export(args.out)
    print(f"wrote {len(pages)} pages under {args.out}")
    return 0


def run_submit(args: argparse.Namespace) -> int:
    """Send each bundle to the server; status 1 if any is rejected, 2 for a usage or connection problem."""
    import httpx

    from parlour.leaderboard.verify import bundle_dirs, load_bundle

    token = os.environ.get("PARLOUR_TOKEN")
    if not token:
        print("error: set PARLOUR_TOKEN to your submitter token", file=sys.stderr)
        return 2
    try:
        directories = bundle_dirs(args.bundle)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    url = args.server.rstrip("/") + "/api/submissions"
    status = 0
    for directory in directories:
        body = json.dumps(load_bundle(directory))
        try:
            response = httpx.post(url, content=body, timeout=args.timeout,
                                  headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        except httpx.HTTPError as error:
            print(f"error: cannot reach {url}: {error}", file=sys.stderr)
            return 2
        try:
            answer = response.json()
        except ValueError:
            answer = {"detail": response.text[:500]}
        if response.is_success:
            print(f"{directory}: accepted, {answer['new_episodes']} new episode(s), {answer['duplicates']} already stored")
        else:
            print(f"{directory}: rejected ({response.status_code}): {answer.get('detail', answer)}", file=sys.stderr)
            status = 1
    return status
