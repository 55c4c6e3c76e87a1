"""The list of parlour environments and their registration in Gymnasium and PettingZoo.

``import parlour`` calls :func:`register_all`, after which every game is
available as ``parlour/<Name>-v<version>`` through ``gymnasium.make``,
``gymnasium.make_vec``, ``pettingzoo.make("aec", ...)`` and
``pettingzoo.make("parallel", ...)``.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

import gymnasium
import pettingzoo

from parlour.envs.core.aec import AECGame
from parlour.envs.core.game import Game
from parlour.envs.core.gym import GymGame
from parlour.envs.core.parallel import ParallelGame

#: Packages whose modules hold the games, one game per module.
GAME_PACKAGES = ["parlour.envs.games", "parlour.envs.negotiation"]


@functools.cache
def all_games() -> tuple[type[Game], ...]:
    """Every parlour game class: each module of :data:`GAME_PACKAGES` defines one, found by discovery."""
    games: list[type[Game]] = []
    for package_name in GAME_PACKAGES:
        package = importlib.import_module(package_name)
        for module_info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            module = importlib.import_module(f"{package_name}.{module_info.name}")
            for value in vars(module).values():
                if isinstance(value, type) and issubclass(value, Game) and value.__module__ == module.__name__:
                    games.append(value)
    return tuple(games)


def list_envs() -> list[str]:
    """The ids of all parlour environments."""
    return [game.env_id() for game in all_games()]


def game_class(env_id: str) -> type[Game]:
    """The game class registered as ``env_id``; ``KeyError`` naming the known ids otherwise."""
    for game in all_games():
        if game.env_id() == env_id:
            return game
    raise KeyError(f"unknown environment {env_id!r}; known: {', '.join(list_envs())}")


def make_aec(env_id: str, **kwargs) -> AECGame:
    """A parlour environment's PettingZoo AEC face (same as ``pettingzoo.make("aec", env_id, ...)``)."""
    return AECGame(game_class(env_id), **kwargs)


def make_parallel(env_id: str, **kwargs) -> ParallelGame:
    """A parlour environment's PettingZoo Parallel face (same as ``pettingzoo.make("parallel", env_id, ...)``)."""
    return ParallelGame(game_class(env_id), **kwargs)


def register_all() -> None:
    """Register every game with Gymnasium and PettingZoo (idempotent)."""
    for game in all_games():
        env_id = game.env_id()
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(id=env_id, entry_point=functools.partial(GymGame, game))
        pettingzoo.register("aec", env_id, entry_point=functools.partial(AECGame, game))
        pettingzoo.register("parallel", env_id, entry_point=functools.partial(ParallelGame, game))
