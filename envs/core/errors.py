"""The exceptions of the game protocol."""

from __future__ import annotations


class InvalidMove(Exception):
    """Raised by :meth:`parlour.Game.parse` (or a tool call's checks) when an action is malformed or illegal.

    The message is shown to the player, so it should say what is accepted.
    """


class ReplayMismatch(Exception):
    """A record does not reproduce: it was tampered with, or comes from other rules."""
