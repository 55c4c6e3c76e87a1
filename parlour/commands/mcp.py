"""``parlour mcp ENV_ID``: serve one seat of an environment as an MCP server over stdio (see :mod:`parlour.bridges.mcp_server`).

An MCP-capable harness launches it as a subprocess and plays through its
tools: ``start``, then the game's own tools (or ``move``) until an answer says
``done``; that answer's structured content holds the episode's record.
"""

from __future__ import annotations

import argparse
import json


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour mcp``."""
    parser = subparsers.add_parser("mcp", help="serve one seat of an environment as an MCP server over stdio, for MCP-capable agent harnesses")
    parser.add_argument("env_id", metavar="ENV_ID", help="the environment, e.g. parlour/Search-v0")
    parser.add_argument("--seat", default="0", help="the client's seat: an index or a player name (default 0)")
    parser.add_argument(
        "--opponent",
        default=None,
        help="agent spec for the other seats (default: the game's own, such as ServiceDesk's customer simulator, else random)",
    )
    parser.add_argument("--env-kwargs", default="{}", metavar="JSON", help="the game's and the engine's options, as a JSON object")
    parser.set_defaults(handler=run_mcp)


def run_mcp(args: argparse.Namespace) -> int:
    """Check the arguments, then serve until the client closes stdin; without the bridge's libraries, one error naming the extra."""
    from parlour.bridges import load_bridge

    mcp_server = load_bridge("mcp")
    # Both import once the bridge has loaded: anyio comes with mcp, serve_stdio beside mcp_server.
    import anyio

    from parlour.bridges.mcp_server import serve_stdio

    options = json.loads(args.env_kwargs)
    if not isinstance(options, dict):
        raise ValueError(f"--env-kwargs must be a JSON object, got {args.env_kwargs!r}")
    seat = int(args.seat) if args.seat.isdigit() else args.seat
    server = mcp_server(args.env_id, seat=seat, opponent=args.opponent, env_kwargs=options)
    anyio.run(serve_stdio, server)
    return 0
