"""The ``nash`` agent for KuhnPoker: a closed-form Nash equilibrium.

Kuhn (1950) found every equilibrium: one parameter ``alpha`` in [0, 1/3] sets
``player_0``'s strategy, and ``player_1`` has a single one.

* ``player_0``, first action: bets a Jack with probability ``alpha`` (a bluff),
  never bets a Queen, bets a King with probability ``3 * alpha``. After
  check-bet: folds a Jack, calls with a Queen with probability ``alpha + 1/3``,
  calls with a King.
* ``player_1``, after a check: bets a Jack with probability 1/3, checks a
  Queen, bets a King. Facing a bet: folds a Jack, calls with a Queen with
  probability 1/3, calls with a King.

Every member of the family is worth -1/18 per hand to ``player_0``. The
default ``alpha`` is 1/6, the middle of the family.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.games.kuhn_poker import CARDS

DEFAULT_ALPHA = 1 / 6


def nash_probabilities(card: str, history: Sequence[str], alpha: float = DEFAULT_ALPHA) -> dict[str, float]:
    """The equilibrium's probabilities of the two legal moves for the player holding ``card`` after ``history``."""
    if not 0 <= alpha <= 1 / 3:
        raise ValueError(f"alpha must lie in [0, 1/3], got {alpha!r}")
    rank = CARDS.index(card)
    situation = tuple(history)
    if situation == ():
        bet = (alpha, 0.0, 3 * alpha)[rank]
        return {"check": 1.0 - bet, "bet": bet}
    if situation == ("check",):
        bet = (1 / 3, 0.0, 1.0)[rank]
        return {"check": 1.0 - bet, "bet": bet}
    if situation == ("bet",):
        call = (0.0, 1 / 3, 1.0)[rank]
    elif situation == ("check", "bet"):
        call = (0.0, alpha + 1 / 3, 1.0)[rank]
    else:
        raise ValueError(f"no decision follows the actions {list(history)}")
    return {"fold": 1.0 - call, "call": call}


class NashAgent(SeededAgent):
    """Samples its moves from the ``alpha`` member of Kuhn poker's equilibrium family."""

    name = "nash"

    def __init__(self, env_id: str | None = None, seed: int | None = None, alpha: float = DEFAULT_ALPHA):
        nash_probabilities("J", (), alpha)  # validates alpha now rather than at the first move
        self.alpha = alpha
        super().__init__(env_id, seed)

    def move_probabilities(self, observation: Mapping[str, Any]) -> dict[str, float]:
        """The equilibrium probabilities of the legal moves for the player's card and the actions so far (the leaderboard's exploitability reads them)."""
        view = observation["view"]
        return nash_probabilities(view["card"], view["history"], self.alpha)

    def act(self, observation: Mapping[str, Any]) -> str:
        """A move drawn from :meth:`move_probabilities`."""
        probabilities = self.move_probabilities(observation)
        moves = list(probabilities)
        return moves[int(self.rng.choice(len(moves), p=list(probabilities.values())))]


register_scripted("nash", "parlour/KuhnPoker-v0", NashAgent)
register_ladder("parlour/KuhnPoker-v0", ["random", "nash"])
