"""``parlour list``: the environments with their players, category, description and scripted agents."""

from __future__ import annotations

import argparse

from parlour.baselines import scripted_names
from parlour.envs.core.match import make_game
from parlour.envs.registry import all_games


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour list``."""
    parser = subparsers.add_parser("list", help="list the environments and the scripted agents that play them")
    parser.set_defaults(handler=run_list)


def run_list(args: argparse.Namespace) -> int:
    """Print one line per environment, then the names of its scripted agents (usable as agent specs)."""
    rows = []
    for game_cls in all_games():
        game = make_game(game_cls, {})
        players = ", ".join(game.players)
        rows.append((game_cls.env_id(), game_cls.category, players, game_cls.description))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    header = ("environment", "category", "players")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)) + "  description")
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths)) + "  " + row[3])
        print(f"  agents: {', '.join(scripted_names(row[0]))}")
    return 0
