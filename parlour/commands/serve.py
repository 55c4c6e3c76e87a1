"""``parlour serve ENV_ID``: serve an environment to OpenEnv clients (TRL, Unsloth, SkyRL, torchforge, ART, ...).

Each WebSocket session (``/ws``) plays one seat of an episode; ``--opponent``
names who plays the others, ``client`` for other connected sessions. The
guards (a cap per client address, idle and turn timeouts, one memory budget
for the sandboxes) have flags with the defaults given in ``--help``. See
:mod:`parlour.bridges.openenv_server` for the routes, payloads and records;
its libraries come with ``pip install 'parlour[bridges]'``.
"""

from __future__ import annotations

import argparse

from parlour.commands.evaluate import parse_kwargs


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour serve``."""
    parser = subparsers.add_parser("serve", help="serve an environment over OpenEnv's HTTP and WebSocket API, one seat per client session")
    parser.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. parlour/TicTacToe-v0")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--max-sessions", type=int, default=64, metavar="N", help="concurrent client sessions (default 64)")
    parser.add_argument(
        "--opponent",
        nargs="+",
        default=None,
        metavar="SPEC",
        help="who plays the other seats: one agent spec for all (random, a scripted baseline, sb3:PATH, hf:PATH, ...) "
        "or one per other seat in seat order; 'client' for another connected client (default: the game's own, "
        "such as ServiceDesk's customer simulator, else random)",
    )
    parser.add_argument("--seat", default="0", help="the clients' seat against agents: a player name or index (default 0); a reset may pick another")
    parser.add_argument(
        "--pair-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long a client waits at reset for the other clients of its episode (default 60)",
    )
    parser.add_argument(
        "--max-sessions-per-client",
        type=int,
        default=16,
        metavar="N",
        help="concurrent sessions one client address (the connection's peer; behind a reverse proxy, the proxy's) "
        "may hold (default 16), so that no client takes every slot",
    )
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="close a session whose client sends nothing for this long; its seat forfeits (default 300)",
    )
    parser.add_argument(
        "--turn-timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="with --opponent client: a seat told to act that sends nothing for this long while another client waits on it forfeits (default 120)",
    )
    parser.add_argument(
        "--sandbox-memory-mb",
        type=int,
        default=None,
        metavar="MB",
        help="memory budget for the sandboxes of all episodes together (coding games; default half this "
        "machine's memory): a new episode beyond it is refused with HTTP 503",
    )
    parser.add_argument("--env-kwarg", action="append", default=[], metavar="KEY=VALUE", help="a game option (VALUE read as JSON, else text)")
    parser.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C; without the bridge's libraries, one error naming the extra to install."""
    from parlour.bridges import load_bridge

    if args.max_sessions < 1:
        raise ValueError(f"--max-sessions must be at least 1, got {args.max_sessions}")
    serve = load_bridge("openenv")
    seat = int(args.seat) if args.seat.isdigit() else args.seat
    serve(
        args.env_id,
        host=args.host,
        port=args.port,
        max_sessions=args.max_sessions,
        opponent=args.opponent,
        seat=seat,
        options=parse_kwargs(args.env_kwarg),
        pair_timeout=args.pair_timeout,
        max_sessions_per_client=args.max_sessions_per_client,
        idle_timeout=args.idle_timeout,
        turn_timeout=args.turn_timeout,
        sandbox_memory_mb=args.sandbox_memory_mb,
    )
    return 0
