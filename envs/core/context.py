"""The context a game speaks through, and the typed messages it sends.

:class:`Context` is the whole of the engine a game sees: it is handed to
``Game.start`` and ``Game.apply`` (and ``Game.forfeit``), and holds the
episode's random generator and the ledger the engine reads after each move:
messages per player, rewards of the step, eliminations and the ending.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np

#: The kinds of message: the rules and role, the prompt for a move, what happened in the game, a player's
#: move or talk, the answer to a tool call, feedback on an invalid action, and the end of the game.
MESSAGE_KINDS = ("rules", "prompt", "event", "move", "talk", "tool_result", "feedback", "outcome")
_KINDS = frozenset(MESSAGE_KINDS)


class Message(TypedDict):
    """One message in a player's observation, a plain dict.

    ``sender`` is a player, or ``None`` for the game itself; ``to`` lists the
    players it went to, or is ``None`` when it went to everyone; ``kind`` is one
    of :data:`MESSAGE_KINDS`. A ``talk`` message holds a player's own words,
    verbatim, and its ``sender`` is that player (only :meth:`Context.say` makes
    one); every other kind is written by the game or the engine (a ``move``
    message names the player it is about as its ``sender``). The rendered text
    frames the words of a ``talk`` message and marks everything else as the
    environment's (see :mod:`parlour.envs.core.observation`). A message is made
    once and shared by the inboxes and observations of everyone it went to:
    treat it as read-only.
    """

    sender: str | None
    to: list[str] | None
    kind: str
    text: str


@dataclass
class Ending:
    """What a game asked for when it ended the episode; the engine turns it into the :class:`Outcome`."""

    winners: list[str]
    reason: str
    details: dict[str, Any]
    teams: dict[str, list[str]] | None
    winning_team: str | None
    truncated: bool


class Context:
    """A game's handle on the engine during one episode.

    Args:
        players: the game's players.
        rng: the episode's random generator, seeded at ``reset``.
    """

    def __init__(self, players: list[str], rng: np.random.Generator):
        self.rng = rng
        self.players = players
        self.inboxes: dict[str, list[Message]] = {player: [] for player in players}
        self.step_rewards: dict[str, float] = {}
        self.eliminated: dict[str, str] = {}
        self.ending: Ending | None = None
        #: Tool calls each player has made this episode (answered ones; a final tool's call is a move, not counted).
        self.tool_calls: dict[str, int] = {player: 0 for player in players}

    @property
    def over(self) -> bool:
        """Whether the game has ended (finished or truncated)."""
        return self.ending is not None

    def tell(self, text: str, to: str | list[str] | tuple[str, ...] | None = None, *, kind: str = "event", sender: str | None = None) -> None:
        """Send the game's ``text`` to one player, a list of players (a team's channel, a whisper), or everyone (``None``).

        ``kind`` types the message (see :data:`MESSAGE_KINDS`; ``"move"`` for a
        move announced); ``sender`` is the player the message is about, if any.
        ``text`` is the game's own: a player's words go through :meth:`say`,
        never into ``text``, so ``kind="talk"`` is refused here.
        """
        if kind not in _KINDS:
            raise ValueError(f"message kind must be one of {MESSAGE_KINDS}, got {kind!r}")
        if kind == "talk":
            raise ValueError("a player's words go through ctx.say(player, words, to=...), which frames them; tell is for the game's own text")
        message: Message = {"sender": sender, "to": None, "kind": kind, "text": text}
        if to is None:  # _send's commonest case, written out: games tell everyone something every move
            for inbox in self.inboxes.values():
                inbox.append(message)
            return
        self._send(message, to)

    def say(self, player: str, words: str, to: str | list[str] | tuple[str, ...] | None = None) -> None:
        """Relay ``player``'s own ``words`` (talk, a question, a program's output: anything a player wrote or made) to ``to``.

        The one way a player's text reaches others: a ``talk`` message whose
        ``sender`` is ``player``, rendered as a frame its words cannot close or
        imitate (see :func:`parlour.envs.core.rendering.render`). A game never
        puts a player's text into :meth:`tell`'s ``text``; what the environment
        adds (whose turn, which round) goes in a message of its own.
        """
        if player not in self.inboxes:
            raise ValueError(f"{player!r} is not a player")
        self._send({"sender": player, "to": None, "kind": "talk", "text": words}, to)

    def _send(self, message: Message, to: str | list[str] | tuple[str, ...] | None) -> None:
        """Put ``message`` into the inboxes of ``to`` (everyone when ``None``), naming them in its ``to``."""
        if to is None:
            for inbox in self.inboxes.values():
                inbox.append(message)
            return
        targets = [to] if isinstance(to, str) else list(to)
        message["to"] = targets
        for player in targets:
            self.inboxes[player].append(message)

    def reward(self, player: str, amount: float) -> None:
        """Pay ``amount`` to ``player`` at the current step."""
        self.step_rewards[player] = self.step_rewards.get(player, 0.0) + float(amount)

    def finish(
        self,
        rewards: dict[str, float] | None = None,
        *,
        reason: str,
        winners: list[str] | tuple[str, ...] | None = None,
        teams: dict[str, list[str]] | None = None,
        winning_team: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        """End the episode, paying the final ``rewards``.

        ``winners`` are the players who won (none: a draw or nobody won). A team
        game gives ``teams`` (team name to players) and the ``winning_team``,
        whose players are then the winners unless ``winners`` says otherwise.
        The outcome's scores are the returns, filled in by the engine.
        """
        if self.ending is not None:
            raise RuntimeError("the game has already ended")
        if winning_team is not None:
            if teams is None or winning_team not in teams:
                raise ValueError(f"winning_team {winning_team!r} is not one of the teams {sorted(teams or {})}")
            if winners is None:
                winners = teams[winning_team]
        for player, amount in (rewards or {}).items():
            self.reward(player, amount)
        self.ending = Ending(list(winners or []), reason, dict(details or {}), teams, winning_team, truncated=False)

    def eliminate(self, player: str, reason: str) -> None:
        """Take ``player`` out of the game: it is terminated at once on every face and never acts again.

        Pay its final reward with :meth:`reward` in the same step: nothing reaches it afterwards.
        """
        if player not in self.inboxes:
            raise ValueError(f"{player!r} is not a player")
        self.eliminated.setdefault(player, reason)

    def truncate(self, reason: str, details: dict[str, Any] | None = None) -> None:
        """Cut the episode off without a result of the rules (a time limit): every face reports ``truncated``."""
        if self.ending is None:
            self.ending = Ending([], reason, dict(details or {}), None, None, truncated=True)
