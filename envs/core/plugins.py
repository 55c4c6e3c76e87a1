"""What other packages publish under parlour's entry-point groups: games, agent schemes and bridges."""

from __future__ import annotations

import warnings
from importlib.metadata import entry_points
from typing import Any, Callable


def load_published(group: str, register: Callable[[Any], object]) -> None:
    """Load every entry point of ``group`` and hand what it names to ``register``.

    An entry point that fails to load, or whose object ``register`` refuses, is left out with a warning that
    names it: another package's broken plugin must not take parlour, or the other plugins, down with it.
    """
    for entry in entry_points(group=group):
        try:
            register(entry.load())
        except Exception as error:  # noqa: BLE001 - any failure of foreign code is reported, not raised
            warnings.warn(f"{group} entry point {entry.name!r} ({entry.value}) failed to load: {error}", stacklevel=3)
