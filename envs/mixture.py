"""``parlour/Mixture-v0``: one Gymnasium environment over several games and difficulties, with an optional curriculum.

Each ``reset`` draws an environment from the entries' weights and a
difficulty level for it, then plays one episode of that environment's
Gymnasium face (:class:`parlour.envs.core.gym.GymGame`: the learner's seat,
the other seats played by agents resolved as that face resolves them)::

    env = gymnasium.make("parlour/Mixture-v0", entries=[
        {"env_id": "parlour/Sokoban-v0", "weight": 2, "levels": [1, 2, 3, 4, 5]},
        {"env_id": "parlour/Nim-v0", "opponent": "nim_sum", "levels": [{"heaps": [1, 2]}, {"heaps": [3, 5, 7]}]},
        {"env_id": "parlour/Chess-v0", "max_plies": 60,
         "levels": [{"opponent": parlour.AgentSpec("stockfish", {"skill": s, "depth": 1})} for s in (0, 5, 10)]},
    ], curriculum={"window": 20, "promote": 0.8})

An entry names an environment (``env_id``), its ``weight`` (default 1), its
``levels`` (easiest first; an int ``k`` means the game option
``difficulty=k``, a dict holds any options of the face: game options,
``opponent``, ``seat``; default one level with no options),
``level_weights`` (how levels are drawn without a curriculum; default
uniform) and any other key, an option every level shares (a level's own
options win). A string entry is ``{"env_id": that}``.

Observations stay text: ``{"text", "messages"}`` for every game, the action
is the reply's text, and ``info`` carries the game's own ``legal_moves``
and ``action_mask`` where it has them. Every ``reset`` and ``step`` info
says what was drawn: ``env_id``, ``level`` (its index) and
``difficulty`` (its options, agent specs written as their names and
options). :meth:`Mixture.record` is the episode's record with the same in
``record["mixture"]``, and ``parlour.replay`` re-executes it as any record.
:attr:`Mixture.history` lists every finished episode (env id, level,
difficulty, seed, return, success), so a training run that goes through the
mixture keeps the difficulty of every episode it trained on.

Curriculum (``curriculum=True`` or a dict of :class:`Curriculum`'s
options): each entry starts at its first level and the level is no longer
drawn. Each finished episode of an entry counts as a success when the
learner's return is above ``threshold`` (default 0: a win, a solved
puzzle). Once the entry's last ``window`` episodes at its current level are
all in and at least ``promote`` of them succeeded, the entry moves up a
level (if it has one) and its window starts afresh; with ``demote`` set, a
success rate at or below it moves the entry down a level the same way. The
rule reads only outcomes, and every draw comes from the generator seeded by
``reset(seed=...)``, so a seed reproduces the whole run.

Seeds: ``reset(seed=s)`` seeds the mixture's generator; each episode's
environment, level and game seed are drawn from it in that order, and the
game seed is the episode's ``reset(seed=...)`` of its Gymnasium face.

Version history: v0, first release.
"""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import gymnasium
import numpy as np

from parlour.envs.core.gym import GymGame
from parlour.envs.core.observation import MAX_TEXT
from parlour.envs.core.spaces import MessagesSpace, TextSpace
from parlour.envs.registry import game_class

if TYPE_CHECKING:
    from parlour.envs.core.record_types import Record

MIXTURE_ID = "parlour/Mixture-v0"


def describe(options: Mapping[str, Any]) -> dict[str, Any]:
    """A level's options as JSON values: an agent object or spec is written as its spec string (and options) or name."""
    described = {}
    for key, value in options.items():
        if hasattr(value, "spec") and hasattr(value, "kwargs"):
            value = {"spec": value.spec, "kwargs": dict(value.kwargs)} if value.kwargs else value.spec
        elif hasattr(value, "act"):
            value = str(getattr(value, "name", None) or type(value).__name__)
        described[key] = value
    return described


@dataclass
class Entry:
    """One environment of a mixture: its weight, its levels (easiest first) and the options its levels share."""

    env_id: str
    weight: float = 1.0
    levels: list[dict[str, Any]] = field(default_factory=lambda: [{}])
    level_weights: list[float] | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, spec: Any) -> Entry:
        """An entry from a string (the env id), a dict (see the module docstring) or an :class:`Entry`."""
        if isinstance(spec, Entry):
            return spec
        if isinstance(spec, str):
            spec = {"env_id": spec}
        if not isinstance(spec, Mapping) or not isinstance(spec.get("env_id"), str):
            raise ValueError(f"a mixture entry is an env id or a dict with 'env_id', got {spec!r}")
        spec = dict(spec)
        env_id = spec.pop("env_id")
        game_class(env_id)  # a KeyError naming the closest ids, now rather than at the first draw
        weight = spec.pop("weight", 1.0)
        levels = [{"difficulty": level} if isinstance(level, int) and not isinstance(level, bool) else level for level in spec.pop("levels", [{}])]
        if not levels or not all(isinstance(level, Mapping) for level in levels):
            raise ValueError(f"{env_id}: levels must be a non-empty list of ints (difficulty) or dicts of options, got {levels!r}")
        level_weights = spec.pop("level_weights", None)
        entry = cls(env_id, weight, [dict(level) for level in levels], level_weights, spec)
        entry.check()
        return entry

    def check(self) -> None:
        """``ValueError`` for a weight that is not positive or level weights that do not fit the levels."""
        if not isinstance(self.weight, (int, float)) or isinstance(self.weight, bool) or not self.weight > 0:
            raise ValueError(f"{self.env_id}: weight must be a positive number, got {self.weight!r}")
        if self.level_weights is not None:
            weights = self.level_weights
            if len(weights) != len(self.levels) or not all(isinstance(w, (int, float)) and w >= 0 for w in weights) or not sum(weights) > 0:
                raise ValueError(f"{self.env_id}: level_weights must be {len(self.levels)} non-negative numbers, not all 0, got {weights!r}")


@dataclass
class Curriculum:
    """The rule that raises an entry's level from the learner's recent success rate (see the module docstring).

    Args:
        window: episodes at a level that are judged together.
        promote: the success rate over a full window that moves the entry up a level.
        demote: the success rate at or below which it moves down a level; ``None`` never lowers it.
        threshold: a return above this is a success.
    """

    window: int = 20
    promote: float = 0.8
    demote: float | None = None
    threshold: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.window, int) or isinstance(self.window, bool) or self.window < 1:
            raise ValueError(f"curriculum window must be a positive int, got {self.window!r}")
        if not 0 < self.promote <= 1:
            raise ValueError(f"curriculum promote must be in (0, 1], got {self.promote!r}")
        if self.demote is not None and not 0 <= self.demote < self.promote:
            raise ValueError(f"curriculum demote must be in [0, promote), got {self.demote!r}")


class Mixture(gymnasium.Env):
    """A single-seat Gymnasium environment that draws a game and a difficulty at every reset; see the module docstring.

    Args:
        entries: the environments (strings, dicts or :class:`Entry`), at least one.
        curriculum: ``None`` (levels drawn from ``level_weights``), ``True`` (the default :class:`Curriculum`),
            a dict of its options, or a :class:`Curriculum`.
        render_mode: ``None``, ``"ansi"`` or ``"human"``, handed to every environment.
    """

    metadata = {"render_modes": [None, "ansi", "human"]}

    def __init__(self, entries: Sequence[Any], curriculum: Any = None, render_mode: str | None = None):
        if isinstance(entries, (str, Mapping)) or not entries:
            raise ValueError("entries must be a non-empty list of mixture entries (env ids or dicts)")
        self.entries = [Entry.parse(entry) for entry in entries]
        if curriculum is True:
            curriculum = Curriculum()
        elif isinstance(curriculum, Mapping):
            curriculum = Curriculum(**curriculum)
        elif curriculum is not None and not isinstance(curriculum, Curriculum):
            raise ValueError(f"curriculum must be None, True, a dict of Curriculum options or a Curriculum, got {curriculum!r}")
        self.curriculum: Curriculum | None = curriculum
        self.render_mode = render_mode
        weights = np.array([entry.weight for entry in self.entries], dtype=float)
        self._weights = weights / weights.sum()
        self.observation_space = gymnasium.spaces.Dict({"text": TextSpace(MAX_TEXT), "messages": MessagesSpace()})
        self.action_space = TextSpace(MAX_TEXT)
        #: Each entry's current curriculum level (its index into the entry's levels).
        self.levels = [0] * len(self.entries)
        self._windows: list[deque[bool]] = [deque(maxlen=curriculum.window if curriculum else 1) for _ in self.entries]
        #: Every finished episode: ``episode``, ``env_id``, ``level``, ``difficulty``, ``seed``, ``return``, ``success``.
        self.history: list[dict[str, Any]] = []
        self._faces: dict[tuple[int, int], GymGame] = {}
        self.env: GymGame | None = None
        self.current: dict[str, Any] = {}
        self._episode = -1

    def face(self, entry_index: int, level: int) -> GymGame:
        """The Gymnasium face of an entry at a level, built once and reused by later episodes."""
        key = (entry_index, level)
        if key not in self._faces:
            entry = self.entries[entry_index]
            options = {**entry.options, **entry.levels[level]}
            self._faces[key] = GymGame(game_class(entry.env_id), render_mode=self.render_mode, **options)
        return self._faces[key]

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Draw an environment, a level and a game seed, and start that episode; ``info`` says what was drawn."""
        super().reset(seed=seed)
        rng = self.np_random
        entry_index = int(rng.choice(len(self.entries), p=self._weights))
        entry = self.entries[entry_index]
        if self.curriculum is not None:
            level = self.levels[entry_index]
        elif entry.level_weights is not None:
            weights = np.array(entry.level_weights, dtype=float)
            level = int(rng.choice(len(entry.levels), p=weights / weights.sum()))
        else:
            level = int(rng.integers(len(entry.levels)))
        game_seed = int(rng.integers(1 << 62))
        self.env = self.face(entry_index, level)
        self._episode += 1
        self.current = {
            "episode": self._episode,
            "env_id": entry.env_id,
            "level": level,
            "difficulty": describe({**entry.options, **entry.levels[level]}),
            "seed": game_seed,
            "entry": entry_index,
        }
        observation, info = self.env.reset(seed=game_seed)
        return self._text(observation), self._info(info)

    def step(self, action: Any):
        """Play the learner's reply in the current episode; at its end the history and the curriculum take its result."""
        if self.env is None:
            raise RuntimeError("call reset() before step()")
        observation, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            self._finish()
        return self._text(observation), reward, terminated, truncated, self._info(info)

    def _finish(self) -> None:
        """Book the episode that just ended, and move its entry's level by the curriculum's rule."""
        env = self.env
        assert env is not None
        entry_index = self.current["entry"]
        threshold = self.curriculum.threshold if self.curriculum is not None else 0.0
        # The learner's return as the game booked it, whatever was paid before its first move or after its last.
        total = float(env.match.returns[env.player])
        success = total > threshold
        self.history.append(
            copy.deepcopy({key: value for key, value in self.current.items() if key != "entry"}) | {"return": total, "success": success}
        )
        curriculum = self.curriculum
        if curriculum is None:
            return
        window = self._windows[entry_index]
        window.append(success)
        if len(window) < curriculum.window:
            return
        rate = sum(window) / len(window)
        level = self.levels[entry_index]
        if rate >= curriculum.promote and level + 1 < len(self.entries[entry_index].levels):
            self.levels[entry_index] = level + 1
            window.clear()
        elif curriculum.demote is not None and rate <= curriculum.demote and level > 0:
            self.levels[entry_index] = level - 1
            window.clear()

    @staticmethod
    def _text(observation: Mapping[str, Any]) -> dict[str, Any]:
        """The text part of a face's observation, the same keys for every game."""
        return {"text": observation["text"], "messages": observation["messages"]}

    def _info(self, info: dict[str, Any]) -> dict[str, Any]:
        """The face's info, with what this episode drew (and its mask, which the observation leaves out)."""
        env = self.env
        assert env is not None
        # Not the episode's index: the same seed and action must give the same info (Gymnasium's checker), whatever ran before.
        extra = copy.deepcopy({key: self.current[key] for key in ("env_id", "level", "difficulty")})
        if env.match.game.moves is not None and not env.match.over:
            extra["action_mask"] = env.action_masks()
        return {**info, **extra}

    def record(self) -> Record:
        """The current episode's record, with what the mixture drew in ``record["mixture"]``; ``parlour.replay`` takes it."""
        if self.env is None:
            raise RuntimeError("call reset() before record()")
        record = self.env.record()
        record["mixture"] = copy.deepcopy({key: self.current[key] for key in ("episode", "env_id", "level", "difficulty")})
        return record

    def render(self) -> str | None:
        """The current game's rendering (see ``render_mode``)."""
        if self.env is None:
            raise RuntimeError("call reset() before render()")
        return self.env.render()
