"""The checks the bridges make on what a client sends before any of it reaches a game: seeds, seats, names.

A client's bad argument is its error, not the server's: each check raises :class:`BadArgument`, which names
the field and says what it accepts, so the OpenEnv server answers it with HTTP 422 (and the WebSocket error
message) and the MCP server with a tool error, never with an internal error and a traceback.
"""

from __future__ import annotations

from typing import Any, Sequence

#: The largest seed a client may give: seeds are stored as 64-bit signed integers by most trainers and databases.
MAX_SEED = 2**63 - 1
#: The longest episode id and seat name a client may give (OpenEnv's own cap on ``episode_id``).
MAX_NAME = 255


class BadArgument(ValueError):
    """A client's argument that cannot be used: ``field`` is its name, and the message says what is expected."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def seed_argument(value: Any, field: str = "seed") -> int:
    """``value`` as a seed: an integer from 0 to :data:`MAX_SEED` (a JSON number without a fraction, not a bool)."""
    # A float such as 3.0 is what a JSON encoder may write for an integer; NaN, infinities and fractions are not seeds.
    seed = int(value) if isinstance(value, float) and value.is_integer() else value
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise BadArgument(field, f"{field} must be an integer from 0 to {MAX_SEED}, got {value!r}")
    return seed


def seat_argument(value: Any, players: Sequence[str], field: str = "seat") -> str:
    """The player name of ``value``: one of ``players``, or an index into them (not a bool)."""
    if isinstance(value, str) and value in players:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(players):
        return players[value]
    raise BadArgument(field, f"{field} must be one of {list(players)} or an index from 0 to {len(players) - 1}, got {value!r}")


def text_argument(value: Any, field: str) -> str:
    """``value`` as a short text (an episode id, a name in the record): a string of 1 to :data:`MAX_NAME` characters."""
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_NAME:
        shown = repr(value) if not isinstance(value, str) else f"a string of {len(value)} characters"
        raise BadArgument(field, f"{field} must be a string of 1 to {MAX_NAME} characters, got {shown}")
    return value
