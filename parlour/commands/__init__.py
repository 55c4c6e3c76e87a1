"""Subcommands of the ``parlour`` command line, one module per subsystem, each with ``register(subparsers)``."""
