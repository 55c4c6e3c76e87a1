"""Reference agents: ``random`` for every game and strong scripted agents per game.

Each module of this package registers its agents at import with
:func:`register_scripted`; the modules are imported on the first lookup.
:func:`make_scripted` builds an agent by name, and :func:`parlour.make_agent`
resolves agent spec strings (``"random"``, ``"minimax"``, ...) through it.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Any, Callable

from parlour.envs.core.errors import did_you_mean

#: name -> {env_id or "*": factory(env_id=..., **kwargs) -> agent}
_SCRIPTED: dict[str, dict[str, Callable[..., Any]]] = {}
#: env_id -> its opponent ladder, weakest first: (scripted name, options) per rung.
_LADDERS: dict[str, list[tuple[str, dict[str, Any]]]] = {}


def register_scripted(name: str, env_ids: list[str] | str, factory: Callable[..., Any]) -> None:
    """Register ``factory`` as the agent ``name`` for ``env_ids`` ("*" for every environment).

    An entry for a specific environment takes precedence over a "*" entry.
    """
    for env_id in [env_ids] if isinstance(env_ids, str) else env_ids:
        _SCRIPTED.setdefault(name, {})[env_id] = factory


def register_ladder(env_id: str, rungs: list[str | tuple[str, dict[str, Any]]]) -> None:
    """Declare ``env_id``'s opponent ladder, weakest first: each rung a scripted agent's name, or ``(name, options)``.

    ``gymnasium.make(env_id, difficulty=k)`` then plays rung ``k`` in the other seats (games with a ``difficulty``
    option of their own use that instead). ``tests/test_ladders.py`` checks that each rung is a scripted agent of the
    game and that the ladder climbs: ``random`` in seat 0 earns no more against a rung than against the one below
    it (in a cooperative game, then, the best partner is the weakest rung).
    """
    _LADDERS[env_id] = [(rung, {}) if isinstance(rung, str) else (rung[0], dict(rung[1])) for rung in rungs]


def opponent_ladder(env_id: str) -> list[tuple[str, dict[str, Any]]]:
    """``env_id``'s opponent ladder, weakest first, as ``(name, options)``; ``[("random", {})]`` where none is declared."""
    _load_all()
    return list(_LADDERS.get(env_id, [("random", {})]))


@functools.cache
def _load_all() -> None:
    for module_info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module_info.name}")


def scripted_names(env_id: str) -> list[str]:
    """Names of the scripted agents that can play ``env_id``."""
    _load_all()
    return sorted(name for name, by_env in _SCRIPTED.items() if env_id in by_env or "*" in by_env)


def make_scripted(name: str, env_id: str, **kwargs: Any) -> Any:
    """Build the scripted agent ``name`` for ``env_id``; ``ValueError`` listing the available ones otherwise."""
    _load_all()
    by_env = _SCRIPTED.get(name, {})
    factory = by_env.get(env_id) or by_env.get("*")
    if factory is None:
        available = scripted_names(env_id)
        raise ValueError(f"no agent {name!r} for {env_id}{did_you_mean(name, available)}; available: {', '.join(available)}")
    return factory(env_id=env_id, **kwargs)
