"""The ``parlour`` command line.

Each module of :mod:`parlour.commands` adds its subcommands through a
``register(subparsers)`` function, so subsystems own their commands.

Every user error (an unknown environment, agent or option, a bad value, a
missing file, an unreachable server) is one line on stderr,
``parlour <command>: error: ...``, and exit status 2, as argparse reports its
own usage errors. A handler signals one by raising; ``PARLOUR_DEBUG=1`` shows
the traceback instead.
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
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", help="the command to run (see COMMAND --help)")
    for module_info in sorted(pkgutil.iter_modules(parlour.commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"parlour.commands.{module_info.name}").register(subparsers)
    for command in subcommands(parser):
        # The innermost subcommand's name ("parlour leaderboard show") prefixes its errors.
        command.set_defaults(command_prog=command.prog)
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction) and not action.help:
                # A group of subcommands ("parlour doctor CHECK") is described by its choices, listed under it.
                action.help = f"one of: {', '.join(action.choices)}"
    return parser


def subcommands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every subcommand parser under ``parser``, at any depth, parents before their children."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += [sub, *subcommands(sub)]
    return found


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except BrokenPipeError:
        # Whoever read the output (`parlour list | head`) has gone: nothing is wrong, and stdout must not be flushed again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt as interrupted:
        # A command that saved its work on Ctrl-C (parlour train llm) says what it kept.
        print(f"\n{args.command_prog}: interrupted{f': {interrupted}' if str(interrupted) else ''}", file=sys.stderr)
        return 130
    except Exception as error:
        # Unknown environments, bad agent specs or options, unreachable servers, missing files: one line, no
        # traceback, unless the user asks for it.
        if os.environ.get("PARLOUR_DEBUG"):
            raise
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"{args.command_prog}: error: {message} (set PARLOUR_DEBUG=1 for the traceback)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
