"""The one registry of parlour environments, and their registration in Gymnasium and PettingZoo.

Three ways in, one registry out:

* parlour's own games: every module of :data:`GAME_PACKAGES` defines one game,
  found by discovery, so adding a game touches no shared file;
* games published by other packages: the entry-point group ``parlour.games``
  (each entry point loads a :class:`Game` subclass, or a module whose games are all taken);
* a user's game at run time: ``parlour.register(MyGame)`` (also usable as a class decorator).

``import parlour`` loads the first two. After that every game is available as
``parlour/<Name>-v<version>`` through ``gymnasium.make``, ``gymnasium.make_vec`` (batched, for
games with a ``batch`` class, see :mod:`parlour.envs.core.vector`),
``pettingzoo.make("aec", ...)`` and ``pettingzoo.make("parallel", ...)``, and
:func:`game_class` resolves its id for replay, evaluation, scripted agents and
the leaderboard alike.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import pkgutil
import re
import types

import gymnasium
import pettingzoo

from parlour.envs.core.aec import AECGame
from parlour.envs.core.game import Game
from parlour.envs.core.gym import GymGame
from parlour.envs.core.parallel import ParallelGame
from parlour.envs.core.plugins import load_published
from parlour.envs.core.vector import make_vector_env

#: Packages whose modules hold parlour's own games, one game per module.
GAME_PACKAGES = [
    "parlour.envs.games",
    "parlour.envs.negotiation",
    "parlour.envs.search",
    "parlour.envs.coding",
    "parlour.envs.social",
    "parlour.envs.puzzles",
    "parlour.envs.agentic",
]
#: The entry-point group through which other packages publish games.
ENTRY_POINT_GROUP = "parlour.games"

_GAMES: dict[str, type[Game]] = {}


def register(game_cls: type[Game]) -> type[Game]:
    """Register ``game_cls`` as ``parlour/<name>-v<version>`` in parlour, Gymnasium and PettingZoo; returns it.

    Registering the same class again does nothing; a class of the same module
    and name replaces its earlier self (a reloaded module). Another game under a
    taken id is refused: bump its ``version`` or pick another ``name``.
    """
    if not (isinstance(game_cls, type) and issubclass(game_cls, Game)) or game_cls is Game:
        raise TypeError(f"register() takes a subclass of parlour.Game, got {game_cls!r}")
    if not isinstance(getattr(game_cls, "name", None), str) or not game_cls.name.isidentifier():
        raise ValueError(f"{game_cls.__qualname__} needs a class attribute name, an identifier such as 'MyGame'")
    if not isinstance(game_cls.version, int) or isinstance(game_cls.version, bool) or game_cls.version < 0:
        raise ValueError(f"{game_cls.__qualname__}.version must be a non-negative int, got {game_cls.version!r}")
    env_id = game_cls.env_id()
    known = _GAMES.get(env_id)
    if known is game_cls:
        return game_cls
    if known is not None and (known.__module__, known.__qualname__) != (game_cls.__module__, game_cls.__qualname__):
        raise ValueError(
            f"{env_id} is already registered by {known.__module__}.{known.__qualname__}; give your game another name or a higher version"
        )
    _GAMES[env_id] = game_cls
    gymnasium.registry.pop(env_id, None)
    # A game with batched rules (a ``batch`` class) also gets the batched vector face (envs/core/vector.py).
    vector = functools.partial(make_vector_env, game_cls) if game_cls.batch is not None else None
    # gym.make returns the face itself, so snapshot(), restore() and record() work on it: Gymnasium's wrappers
    # do not forward attributes, and the face already refuses a step before reset and passes check_env.
    gymnasium.register(
        id=env_id, entry_point=functools.partial(GymGame, game_cls), vector_entry_point=vector, order_enforce=False, disable_env_checker=True
    )
    for kind, face in (("aec", AECGame), ("parallel", ParallelGame)):
        getattr(pettingzoo, f"{kind}_registry").pop(env_id, None)
        pettingzoo.register(kind, env_id, entry_point=functools.partial(face, game_cls))
    return game_cls


def _games_of(module: types.ModuleType) -> list[type[Game]]:
    """The game classes a module defines (not those it imports)."""
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value) and issubclass(value, Game) and value is not Game and value.__module__ == module.__name__
    ]


def _register_published(published: type[Game] | types.ModuleType) -> None:
    """Register what a ``parlour.games`` entry point names: a game class, or every game of a module."""
    for game_cls in _games_of(published) if isinstance(published, types.ModuleType) else [published]:
        register(game_cls)


@functools.cache
def _load() -> None:
    """Register parlour's own games, then those published under :data:`ENTRY_POINT_GROUP` (once)."""
    for package_name in GAME_PACKAGES:
        package = importlib.import_module(package_name)
        for module_info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            for game_cls in _games_of(importlib.import_module(f"{package_name}.{module_info.name}")):
                register(game_cls)
    load_published(ENTRY_POINT_GROUP, _register_published)
    # The mixture is no game of the registry (it plays several); Gymnasium loads it by name, on first use only.
    gymnasium.register(id="parlour/Mixture-v0", entry_point="parlour.envs.mixture:Mixture", order_enforce=False, disable_env_checker=True)


def all_games() -> tuple[type[Game], ...]:
    """Every registered game class: parlour's own first, then published and user-registered ones."""
    _load()
    return tuple(_GAMES.values())


def list_envs() -> list[str]:
    """The ids of all registered environments."""
    _load()
    return list(_GAMES)


def game_class(env_id: str) -> type[Game]:
    """The game class registered as ``env_id``; a ``KeyError`` with the closest known ids otherwise."""
    _load()
    game_cls = _GAMES.get(env_id)
    if game_cls is not None:
        return game_cls
    known = list(_GAMES)
    hint = ""
    if isinstance(env_id, str):
        close = closest_env_ids(env_id, known)
        if close:
            hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)"
    raise KeyError(f"unknown environment {env_id!r}{hint}; known: {', '.join(known)}")


def _bare(text: str) -> str:
    """An id or a name as a person might type it: lowercase letters and digits only (``tic-tac-toe`` is ``tictactoe``)."""
    return "".join(char for char in text.lower() if char.isalnum())


def closest_env_ids(given: str, known: list[str]) -> list[str]:
    """The registered ids a mistyped ``given`` most likely means: the same game name whatever its case, punctuation,
    ``parlour/`` prefix or version (``tictactoe``, ``TicTacToe-v1``), else a name it begins (``kuhn``), else the
    closest spellings."""
    name = re.sub(r"-v\d+$", "", given.removeprefix("parlour/"), flags=re.IGNORECASE)
    bare = _bare(name)
    names = {env_id: _bare(env_id.removeprefix("parlour/").rsplit("-v", 1)[0]) for env_id in known}
    same = [env_id for env_id, known_name in names.items() if known_name == bare]
    if same or not bare:
        return same
    begun = [env_id for env_id, known_name in names.items() if len(bare) >= 3 and known_name.startswith(bare)]
    if begun:
        return begun[:3]
    by_name = difflib.get_close_matches(bare, list(names.values()), n=3, cutoff=0.6)
    return [env_id for close in by_name for env_id, known_name in names.items() if known_name == close][:3]


def make_aec(env_id: str, **kwargs) -> AECGame:
    """A parlour environment's PettingZoo AEC face (same as ``pettingzoo.make("aec", env_id, ...)``)."""
    return AECGame(game_class(env_id), **kwargs)


def make_parallel(env_id: str, **kwargs) -> ParallelGame:
    """A parlour environment's PettingZoo Parallel face (same as ``pettingzoo.make("parallel", env_id, ...)``)."""
    return ParallelGame(game_class(env_id), **kwargs)


def register_all() -> None:
    """Register parlour's own games and the published ones with Gymnasium and PettingZoo (idempotent)."""
    _load()
