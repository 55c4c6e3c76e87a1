"""Observation building shared by every face: the two modes and their spaces.

* ``text`` (default): ``{"text": str, "messages": [...]}``, plus ``"tools"`` for
  games with tools; actions are strings (tool calls included). A text
  observation carries no action mask (reading one raises a ``KeyError`` that
  says so): the legal moves are the strings in ``infos[agent]["legal_moves"]``,
  and the faces' ``action_mask(agent)`` builds the mask on demand for code
  that wants one in text mode.
* ``vector``: ``{"observation": Box, "action_mask": Box}`` and a ``Discrete``
  action, for games with enumerable moves (MaskablePPO and classical RL).

The text of an observation comes from :func:`parlour.envs.core.rendering.render`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from parlour.envs.core.rendering import render
from parlour.envs.core.spaces import MessagesSpace, TextSpace, ToolsSpace

if TYPE_CHECKING:
    from parlour.envs.core.match import Match

OBS_MODES = ("text", "vector")
RENDER_MODES = ("ansi", "human")
#: Longest observation or action text the spaces admit (characters).
MAX_TEXT = 1 << 22
#: What reading a text observation's ``action_mask`` raises.
NO_MASK = (
    "text observations carry no action mask: the legal moves are info['legal_moves'], and env.action_mask(agent) "
    "(action_masks() on the Gymnasium face) builds the mask on demand; obs_mode='vector' observations carry one"
)


class TextObservation(dict):
    """A text-mode observation: a plain dict (``text``, ``messages``, ``tools``) whose missing ``action_mask`` says where to find one."""

    __slots__ = ()

    def __missing__(self, key: str) -> Any:
        raise KeyError(NO_MASK if key == "action_mask" else key)


class Observer:
    """Builds one observation mode's spaces and observations for a match."""

    def __init__(self, match: Match, obs_mode: str, render_mode: str | None):
        game = match.game
        if obs_mode not in OBS_MODES:
            raise ValueError(f"obs_mode must be one of {OBS_MODES}, got {obs_mode!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of {RENDER_MODES} or None, got {render_mode!r}")
        if obs_mode == "vector" and not game.enumerable:
            raise ValueError(f"{game.name} has no enumerable moves in this configuration, so it has no vector mode; use obs_mode='text'")
        self.match = match
        self.obs_mode = obs_mode
        self.render_mode = render_mode
        self.vector = obs_mode == "vector"
        self.tool_specs = [tool.spec() for tool in match.tools.values()]
        n_moves = len(game.moves) if game.moves is not None else 0
        self.observation_spaces: dict[str, spaces.Space] = {}
        self.action_spaces: dict[str, spaces.Space] = {}
        for player in match.players:
            if self.vector:
                self.observation_spaces[player] = spaces.Dict(
                    {
                        "observation": spaces.Box(0.0, 1.0, (game.vector_size,), np.float32),
                        "action_mask": spaces.Box(0, 1, (n_moves,), np.int8),
                    }
                )
                self.action_spaces[player] = spaces.Discrete(n_moves)
            else:
                entries: dict[str, spaces.Space] = {"text": TextSpace(MAX_TEXT), "messages": MessagesSpace()}
                if self.tool_specs:
                    entries["tools"] = ToolsSpace(self.tool_specs)
                self.observation_spaces[player] = spaces.Dict(entries)
                self.action_spaces[player] = TextSpace(MAX_TEXT, moves=game.moves)

    def observe(self, player: str) -> dict[str, Any]:
        """The observation of ``player`` in this mode."""
        match = self.match
        if self.vector:
            return {"observation": match.game.vector(player), "action_mask": match.action_mask(player)}
        messages = match.messages(player)
        observation = TextObservation(text=render(messages), messages=messages)
        if self.tool_specs:
            observation["tools"] = [tool.spec() for tool in match.game.tools_for(player)]
        return observation

    def action_mask(self, player: str) -> np.ndarray:
        """The int8 mask of ``player``'s legal move indices, built on demand (text observations carry none).

        Raises ``ValueError`` for a game whose moves cannot be enumerated, which has no mask in any mode.
        """
        if self.match.game.moves is None:
            raise ValueError(f"{self.match.game.name} has no enumerable moves, so no action mask")
        return self.match.action_mask(player)

    def info(self, player: str) -> dict[str, Any]:
        """``infos[player]``: legal move strings in text mode (the mask carries them in vector mode)."""
        return self.match.info(player, with_legal_moves=not self.vector)

    def infos(self, players: list[str]) -> dict[str, dict[str, Any]]:
        """:meth:`info` of several players at once."""
        return self.match.infos(players, with_legal_moves=not self.vector)

    def render(self) -> str | None:
        """The ANSI picture of the state: returned in ``ansi`` mode, printed in ``human`` mode."""
        if self.render_mode is None:
            return None
        if not self.match.started:
            raise RuntimeError("call reset() before render()")
        picture = self.match.render()
        if self.render_mode == "human":
            print(picture)
            return None
        return picture
