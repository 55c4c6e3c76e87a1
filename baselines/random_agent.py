"""The ``random`` agent: uniform over the legal moves.

Games whose moves cannot always be enumerated register their own ``random``
agent (a subclass that writes a well-formed random move when ``legal_moves``
is ``None``) with :func:`parlour.baselines.register_scripted`; an entry for a
specific environment takes precedence over this generic one.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent


class RandomAgent(SeededAgent):
    """Plays a uniformly random legal move."""

    name = "random"

    def act(self, observation: Mapping[str, Any]) -> str:
        """A random legal move; subclasses override :meth:`free_move` for non-enumerable turns."""
        legal = observation.get("legal_moves")
        if legal:
            return legal[int(self.rng.integers(len(legal)))]
        return self.free_move(observation)

    def move_probabilities(self, observation: Mapping[str, Any]) -> dict[str, float]:
        """Uniform over the legal moves (empty on a turn whose moves are not enumerable); the leaderboard's exploitability reads it."""
        legal = observation.get("legal_moves") or []
        return {move: 1.0 / len(legal) for move in legal}

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A well-formed random move on a turn whose moves are not enumerable."""
        raise ValueError(f"the generic random agent cannot invent a move for {observation.get('env_id')}; it has no legal move list")


register_scripted("random", "*", RandomAgent)
