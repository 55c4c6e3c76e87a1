"""The ``parlour`` command line.

Each module of :mod:`parlour.commands` adds its subcommands through a
``register(subparsers)`` function, so subsystems own their commands.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

import parlour
import parlour.commands


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand of :mod:`parlour.commands`."""
    parser = argparse.ArgumentParser(prog="parlour", description=parlour.__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"parlour {parlour.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_info in sorted(pkgutil.iter_modules(parlour.commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"parlour.commands.{module_info.name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except Exception as error:
        # Unknown environments, bad agent specs or options, unreachable servers, missing files: one line, no
        # traceback, unless the user asks for it.
        if os.environ.get("PARLOUR_DEBUG"):
            raise
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"parlour {args.command}: error: {message} (set PARLOUR_DEBUG=1 for the traceback)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
