"""Observation building shared by every face: the two modes, their spaces, and rendering.

* ``text`` (default): ``{"text": str, "messages": [...]}``, plus ``"action_mask"``
  for games with enumerable moves and ``"tools"`` for games with tools;
  actions are strings (tool calls included).
* ``vector``: ``{"observation": Box, "action_mask": Box}`` and a ``Discrete``
  action, for games with enumerable moves (MaskablePPO and classical RL).

Rendering (:func:`render`) is the one place typed messages become the text an
LLM reads, and it keeps player words from passing for anything else. A
player's words (a ``talk`` message, made by ``Context.say``) become one line,
``sender: "words"``, the words as a JSON string literal: quotes, backslashes,
newlines and every other line break are escaped, so they can neither close
their frame nor start a line of their own. Every other message is the
environment's and opens with :data:`ENV_MARK`, which a player cannot produce:
the mark (and the characters that look like it or like the frame's quotes)
are escaped inside frames too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from parlour.envs.core.context import Message
from parlour.envs.core.spaces import MessagesSpace, TextSpace, ToolsSpace

if TYPE_CHECKING:
    from parlour.envs.core.match import Match

OBS_MODES = ("text", "vector")
RENDER_MODES = ("ansi", "human")
#: Longest observation or action text the spaces admit (characters).
MAX_TEXT = 1 << 22
#: Opens every environment message in rendered text; inside a player's frame it is escaped, so only the environment writes it.
ENV_MARK = "\u25b6"
#: Characters that look like :data:`ENV_MARK` or like the frame's quotes.
LOOK_ALIKES = "\u25b7\u25b8\u25b9\u25ba\u25bb\u27a4\u2bc8\u201c\u201d\u201e\u201f\u2033\u2036\uff02"
#: What :func:`quote` escapes beyond JSON's own escapes: the line breaks JSON leaves alone (``str.splitlines`` and
#: many readers break lines at them), lone surrogates (which no UTF-8 reader accepts), the mark and its look-alikes.
_ESCAPED = re.compile(f"[\u0085\u2028\u2029\ud800-\udfff{ENV_MARK}{LOOK_ALIKES}]")


def quote(words: str) -> str:
    """``words`` as one JSON string literal that holds no line break, no :data:`ENV_MARK` and no look-alike quote."""
    return _ESCAPED.sub(lambda found: f"\\u{ord(found.group()):04x}", json.dumps(words, ensure_ascii=False))


def render_message(message: Message) -> str:
    """One message as the text an LLM reads: a player's words framed as ``sender: "words"``, anything else marked as the environment's."""
    if message["kind"] == "talk":
        return f"{message['sender']}: {quote(message['text'])}"
    return f"{ENV_MARK} {message['text']}"


def render(messages: Iterable[Message]) -> str:
    """The text of an observation: its messages rendered (see :func:`render_message`), separated by blank lines."""
    return "\n\n".join([render_message(message) for message in messages])


class Observer:
    """Builds one observation mode's spaces and observations for a match."""

    def __init__(self, match: Match, obs_mode: str, render_mode: str | None):
        game = match.game
        if obs_mode not in OBS_MODES:
            raise ValueError(f"obs_mode must be one of {OBS_MODES}, got {obs_mode!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of {RENDER_MODES} or None, got {render_mode!r}")
        if obs_mode == "vector" and not game.enumerable:
            raise ValueError(
                f"{game.name} has no enumerable moves in this configuration, so it has no vector mode; use obs_mode='text'"
            )
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
                if game.moves is not None:
                    entries["action_mask"] = spaces.Box(0, 1, (n_moves,), np.int8)
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
        observation: dict[str, Any] = {"text": render(messages), "messages": messages}
        if match.game.moves is not None:
            observation["action_mask"] = match.action_mask(player)
        if self.tool_specs:
            observation["tools"] = [tool.spec() for tool in match.game.tools_for(player)]
        return observation

    def info(self, player: str) -> dict[str, Any]:
        """``infos[player]``: legal move strings in text mode (the mask carries them in vector mode)."""
        return self.match.infos([player], with_legal_moves=not self.vector)[player]

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
