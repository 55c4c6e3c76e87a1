"""Read-only values for views: a game shares them with every view instead of copying them each time.

A game's ``view(player)`` is built for every observation, so a view that
copies a history costs more at every step of a long episode. A history kept
as a tuple of :class:`FrozenDict` entries can go into every view as it is:
nothing an agent does to its view reaches the game, and the game never
changes an entry, only replaces the tuple by a longer one (``history +=
(entry,)`` copies references, not entries). Both stay JSON-ready: ``json``
writes a tuple as a list and a :class:`FrozenDict` as an object, and a
:class:`FrozenDict` compares equal to a ``dict`` with the same items.
"""

from __future__ import annotations

from typing import Any, NoReturn


class FrozenDict(dict):
    """A ``dict`` whose items cannot change: every mutating method raises ``TypeError``.

    ``dict(frozen)`` (or ``frozen.copy()``) is an ordinary, mutable copy.
    """

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Refuse a change: the dict is shared with the game and every other view."""
        raise TypeError(f"this {type(self).__name__} is read-only (it is shared with the game); change a copy: dict(value)")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[type, tuple[dict[str, Any]]]:
        """Pickle and copy through the constructor: the default would refill the dict with ``__setitem__``."""
        return (type(self), (dict(self),))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


def freeze(value: Any) -> Any:
    """A read-only copy of ``value`` all the way down: dicts become :class:`FrozenDict`, lists and tuples tuples."""
    if isinstance(value, dict):
        return FrozenDict({key: freeze(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(item) for item in value)
    return value
