"""``parlour doctor sandbox``: check, on this machine, that the code sandbox contains what it runs.

It runs every probe of :func:`parlour.sandbox_probes.run_probes` in real sandboxes, one per attack class (the network,
host files, the environment, privileges and namespaces, each family of an attack list against the seccomp filter,
kept apart from the deny-list so that a filter missing any entry fails, each family of the masked /proc files, a
uid and budget per sandbox and the same view in every slot, fork and memory bombs, pipe buffers, forged verdicts,
CPU, time and output limits, neighbours, zombies, signals, state carried between runs), and prints one PASS or
FAIL line per probe with its evidence. Exit status 0 only if every probe passes; 1 if one fails or no sandbox can start.
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour doctor`` and its checks."""
    parser = subparsers.add_parser("doctor", help="check that parts of parlour work on this machine")
    checks = parser.add_subparsers(dest="doctor_check", metavar="CHECK", required=True)
    sandbox = checks.add_parser("sandbox", help="run containment probes on the code sandbox (bubblewrap); exit status 0 if all pass")
    sandbox.add_argument(
        "--bwrap",
        default=None,
        metavar="PATH",
        help="the bubblewrap executable to test (default: bwrap on PATH)",
    )
    sandbox.set_defaults(handler=run_sandbox)


def run_sandbox(args: argparse.Namespace) -> int:
    """Print PASS or FAIL and the evidence for each probe; 0 if all passed."""
    from parlour.sandbox import SandboxUnavailable
    from parlour.sandbox_probes import run_probes

    try:
        probes = run_probes(bwrap=args.bwrap)
    except SandboxUnavailable as error:
        print(f"FAIL  sandbox: {error}")
        return 1
    for probe in probes:
        print(f"{'PASS' if probe.passed else 'FAIL'}  {probe.name} -- {probe.detail}")
    failed = sum(not probe.passed for probe in probes)
    print(f"{len(probes) - failed} of {len(probes)} probes passed")
    return 1 if failed else 0
