"""The exceptions of the game protocol, and the "did you mean" hint that errors for a misspelt name share."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class InvalidMove(Exception):
    """Raised by :meth:`parlour.Game.parse` (or a tool call's checks) when an action is malformed or illegal.

    The message is shown to the player, so it should say what is accepted.
    """


class ReplayMismatch(Exception):
    """A record does not reproduce: it was tampered with, or comes from other rules."""


def did_you_mean(given: str, known: Iterable[str], suffix: str = "") -> str:
    """`` (did you mean 'closest'?)`` for the known name closest to ``given`` (difflib's, written with ``suffix``), or ``""``.

    The hint goes right after the name an error quotes: ``f"no bridge {name!r}{did_you_mean(name, known)}; ..."``.
    """
    close = difflib.get_close_matches(given, list(known), n=1)
    return f" (did you mean {close[0] + suffix!r}?)" if close else ""
