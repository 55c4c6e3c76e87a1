"""``parlour list``: the environments with their players, category, description and scripted agents.

``parlour list WORD`` keeps the environments whose id, category or
description contains WORD (any case), ``--category`` those of one category,
and ``--json`` prints them as a JSON list of objects (``id``, ``category``,
``players``, ``description``, ``agents``) for scripts.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from parlour.baselines import scripted_names
from parlour.envs.core.errors import did_you_mean
from parlour.envs.core.match import make_game
from parlour.envs.registry import all_games


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour list``."""
    parser = subparsers.add_parser("list", help="list the environments and the scripted agents that play them")
    parser.add_argument("word", nargs="?", metavar="WORD", help="keep environments whose id, category or description contains WORD (any case)")
    parser.add_argument(
        "--category", metavar="CATEGORY", help="keep one category (game, negotiation, search, coding, cooperation, social, puzzle, agentic)"
    )
    parser.add_argument("--json", action="store_true", help="print a JSON list of {id, category, players, description, agents}")
    parser.set_defaults(handler=run_list)


def environments() -> list[dict[str, Any]]:
    """Every registered environment as ``{id, category, players, description, agents}``."""
    found = []
    for game_cls in all_games():
        env_id = game_cls.env_id()
        found.append(
            {
                "id": env_id,
                "category": game_cls.category,
                "players": list(make_game(game_cls, {}).players),
                "description": game_cls.description,
                "agents": scripted_names(env_id),
            }
        )
    return found


def run_list(args: argparse.Namespace) -> int:
    """Print the chosen environments: a table with their agents, or JSON."""
    rows = environments()
    if args.category is not None:
        categories = sorted({row["category"] for row in rows})
        if args.category not in categories:
            raise ValueError(f"no category {args.category!r}{did_you_mean(args.category, categories)}; categories: {', '.join(categories)}")
        rows = [row for row in rows if row["category"] == args.category]
    if args.word:
        word = args.word.lower()
        rows = [row for row in rows if any(word in str(row[key]).lower() for key in ("id", "category", "description"))]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no environment matches; `parlour list` shows them all")
        return 0
    table = [(row["id"], row["category"], ", ".join(row["players"])) for row in rows]
    widths = [max(len(cells[i]) for cells in [("environment", "category", "players"), *table]) for i in range(3)]
    print("  ".join(h.ljust(w) for h, w in zip(("environment", "category", "players"), widths)) + "  description")
    for cells, row in zip(table, rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(cells, widths)) + f"  {row['description']}")
        print(f"  agents: {', '.join(row['agents'])}")
    return 0
