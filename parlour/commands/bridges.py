"""``parlour bridges``: every bridge to another trainer or harness, with its extra and whether it is installed here.

The list is :func:`parlour.bridges.bridges`: parlour's own and those installed
packages publish under the entry-point group ``parlour.bridges``. Listing them
imports none of their libraries, so it answers at once.
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour bridges``."""
    parser = subparsers.add_parser("bridges", help="list the bridges to other trainers and harnesses, their extras and whether each is installed")
    parser.set_defaults(handler=run_bridges)


def run_bridges(args: argparse.Namespace) -> int:
    """Print one line per bridge (name, installed, extra, summary), then how to install those that are not."""
    from parlour.bridges import bridges

    found = bridges()
    missing = {name: bridge.missing() for name, bridge in found.items()}
    rows = [(name, "no" if missing[name] else "yes", bridge.extra, bridge.summary) for name, bridge in found.items()]
    widths = [max(len(row[k]) for row in [("bridge", "installed", "extra", ""), *rows]) for k in range(3)]
    for row in [("bridge", "installed", "extra", "summary"), *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[3])
    for name, modules in missing.items():
        if modules:
            print(f"{name} needs {', '.join(modules)}: {found[name].install_hint()}")
    return 0
