"""stable-baselines3: the batched vector face as an SB3 ``VecEnv``, which ``sb3_contrib.MaskablePPO`` trains on.

::

    envs = gymnasium.make_vec("parlour/ConnectFour-v0", num_envs=64, obs_mode="vector", opponent="random", seat="random")
    model = MaskablePPO("MultiInputPolicy", sb3_vec_env(envs))

:func:`sb3_vec_env` steps the same episodes as the batched face
(:class:`parlour.envs.core.vector.VectorGame`), with SB3's conventions where
Gymnasium's differ: an ended episode restarts in the same step (Gymnasium's
vector face restarts it at the next one), its last observation in
``infos[i]["terminal_observation"]``. It needs the ``sb3`` extra
(``pip install 'parlour[sb3]'``); stable-baselines3 is imported only when a
view is first made.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv

from parlour.envs.core.vector import VectorGame


def sb3_vec_env(env: VectorEnv) -> Any:
    """A stable-baselines3 ``VecEnv`` view of a batched face (needs the ``sb3`` extra).

    ``env`` is what ``gymnasium.make_vec(..., obs_mode="vector")`` returned for a
    game with a batch class. The view steps the same episodes with SB3's
    conventions: an ended episode restarts in the same step, its last
    observation in ``infos[i]["terminal_observation"]``, ``"TimeLimit.truncated"``
    set when it was cut off; ``action_masks()`` (and ``env_method("action_masks")``,
    which ``sb3_contrib.MaskablePPO`` calls) gives the ``(N, n_moves)`` bool masks.
    ``seed(s)`` takes effect at the next ``reset()`` as ``reset(seed=s)`` of the batched face.
    """
    game = env.unwrapped
    if not isinstance(game, VectorGame):
        raise TypeError(f"sb3_vec_env takes the batched face (gymnasium.make_vec(..., obs_mode='vector')), got {type(game).__name__}")
    return _sb3_view_class()(game)


@functools.cache
def _sb3_view_class() -> type:
    """The SB3 view's class, made on first use so that parlour imports without stable-baselines3."""
    from stable_baselines3.common.vec_env import VecEnv

    class SB3VectorGame(VecEnv):
        """A :class:`VectorGame` as a stable-baselines3 ``VecEnv`` (see :func:`sb3_vec_env`)."""

        def __init__(self, game: VectorGame):
            self.game = game
            self.render_mode = None
            self._actions: np.ndarray | None = None
            super().__init__(game.num_envs, game.single_observation_space, game.single_action_space)

        def reset(self) -> dict[str, np.ndarray]:
            """Start every episode (with the seed given to ``seed()``, if any)."""
            seed = self._seeds[0]
            observations, _ = self.game.reset(seed=seed)
            self._reset_seeds()
            self.reset_infos = [{} for _ in range(self.num_envs)]
            return observations

        def step_async(self, actions: np.ndarray) -> None:
            """Hold the learner's actions for :meth:`step_wait`."""
            self._actions = self.game._check(actions)

        def step_wait(self) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, list[dict[str, Any]]]:
            """Play the held actions; ended episodes restart at once (SB3's convention)."""
            game = self.game
            if self._actions is None:
                raise RuntimeError("call step_async() before step_wait()")
            rewards, invalid = game._move((~game.over).nonzero()[0], self._actions)
            self._actions = None
            observations = game._observe()
            done = game.over.copy()
            infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            for i in invalid.nonzero()[0]:
                infos[i]["invalid_action"] = True
            ended = done.nonzero()[0]
            if ended.size:
                for i in ended:
                    infos[i]["terminal_observation"] = {key: value[i] for key, value in observations.items()}
                    infos[i]["TimeLimit.truncated"] = bool(game.truncated[i])
                game._start(ended)
                game._play_opponents(np.zeros(self.num_envs))
                observations = game._observe()
            return observations, rewards.astype(np.float32), done, infos

        def action_masks(self) -> np.ndarray:
            """``(N, n_moves)`` bool: the learner's legal moves in each episode."""
            return self.game.action_masks()

        def close(self) -> None:
            """Close the batched face."""
            self.game.close()

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            """An attribute of the batched face, once per episode asked for (the episodes share it)."""
            value = getattr(self, attr_name) if attr_name == "action_masks" else getattr(self.game, attr_name)
            return [value for _ in self._get_indices(indices)]

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            """Set an attribute of the batched face; the episodes share it, so only for all of them at once."""
            if len(list(self._get_indices(indices))) != self.num_envs:
                raise ValueError("the episodes of the batched face share their attributes: set them for all episodes (indices=None)")
            setattr(self.game, attr_name, value)

        def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
            """``action_masks`` per episode, as ``sb3_contrib.MaskablePPO`` asks for them; other methods are not per-episode here."""
            if method_name != "action_masks":
                raise AttributeError(f"the batched face's episodes have no method {method_name!r} of their own; only 'action_masks'")
            masks = self.action_masks()
            return [masks[i] for i in self._get_indices(indices)]

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            """No episode is wrapped: they are rows of arrays."""
            return [False for _ in self._get_indices(indices)]

    return SB3VectorGame
