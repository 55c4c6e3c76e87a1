"""Scripted DonorGame agents: ``always_give``, ``never_give``, ``discriminator``, ``generous_discriminator``, ``imitator`` and ``random``.

Every agent writes its strategy as ``[strategy] <name>: <description>``, so
others (the ``imitator``, or an LLM) can read which strategy a survivor played.

* ``always_give`` gives half its resources to everyone.
* ``never_give`` gives nothing.
* ``discriminator`` keeps a reputation rule: it gives half to a recipient in
  good standing and nothing to one in bad standing. A recipient is in good
  standing if it has not donated yet this generation, if its last donation was
  above 0%, or if its last donation was a justified refusal (0% to someone who
  had itself given 0% before) and it gave something in one of the donations
  the history shows. Requiring a gift besides the justified refusal matters:
  one level of history cannot tell a justified refusal from a never-giver
  refusing a discriminator who had just refused, which lets never-givers pass
  (measured: 3 discriminators against 3 never-givers earn 33 each to the
  never-givers' 95 with the bare rule, 65 to 48 with this one).
* ``generous_discriminator`` (the game's reference agent) keeps the same standing rule and
  gives everything to a recipient in good standing. The leaderboard rates a cooperative game
  by the team's wealth (each agent's mean return over its partners, itself included), and a
  gift of a share ``s`` grows the pair's wealth by ``s`` times the donor's resources: giving
  half, the discriminator does no better than ``random``, whose uniform gifts average half as
  well (issue 22: 253.4 to random's 272.8 on the demo's board); giving all, it doubles its
  kind's wealth every round and still starves never-givers.
* ``imitator`` is a cultural learner: as a new individual it adopts the
  strategy of the richest survivor whose strategy it recognises (one of the
  four above), and in the first generation (or when nothing is recognised)
  one of the first three at random. With ``strategies=False`` it cannot read strategies
  and keeps its random pick for the whole episode.
* ``random`` writes a random strategy line and gives a uniformly random share.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.baselines.seeded import SeededAgent
from parlour.envs.social.donor_game import SHARES

ENV_ID = "parlour/DonorGame-v0"
#: The share the giving strategies give, in percent (the generous discriminator gives everything).
GENEROUS = 50

DESCRIPTIONS = {
    "always_give": f"always_give: I give {GENEROUS}% of my resources to every recipient.",
    "never_give": "never_give: I never give anything.",
    "discriminator": (
        f"discriminator: I give {GENEROUS}% to recipients in good standing (no donation yet, a gift last time, or a refusal "
        "of someone who had refused by one who gave recently) and nothing to the others."
    ),
    "generous_discriminator": (
        "generous_discriminator: I give 100% to recipients in good standing (no donation yet, a gift last time, or a "
        "refusal of someone who had refused by one who gave recently) and nothing to the others."
    ),
}
#: The strategies an imitator picks from at random when it recognises none (the classic three of the paper).
CLASSIC = ("always_give", "discriminator", "never_give")


def good_standing(history: list[dict[str, Any]]) -> bool:
    """Whether a recipient with this history (most recent first) deserves a gift under the standing rule."""
    if not history:
        return True
    last = history[0]
    return last["share"] > 0 or (last["recipient_share"] == 0 and any(action["share"] > 0 for action in history))


def decide(strategy: str, view: Mapping[str, Any]) -> str:
    """The ``give N%`` move of a named strategy for the recipient in ``view``."""
    if strategy == "generous_discriminator" and good_standing(view["recipient_history"]):
        return "give 100%"
    if strategy == "always_give" or (strategy == "discriminator" and good_standing(view["recipient_history"])):
        return f"give {GENEROUS}%"
    return "give 0%"


def recognise(text: str | None) -> str | None:
    """The strategy name a strategy text starts with, if it is one of the scripted strategies."""
    if not text:
        return None
    head = text.strip().split(":", 1)[0].strip().lower()
    return head if head in DESCRIPTIONS else None


class StrategyAgent(SeededAgent):
    """Plays one fixed named strategy and writes it as its strategy."""

    def __init__(self, strategy: str, env_id: str | None = None, seed: int | None = None):
        super().__init__(env_id, seed)
        self.name = strategy
        self.strategy = strategy

    def act(self, observation: Mapping[str, Any]) -> str:
        """Its strategy line in a strategy phase, its donation otherwise."""
        view = observation["view"]
        if view["phase"] == "strategy":
            return f"[strategy] {DESCRIPTIONS[self.strategy]}"
        return decide(self.strategy, view)


class ImitatorAgent(SeededAgent):
    """Copies the richest recognisable survivor's strategy whenever it is born; see the module docstring."""

    name = "imitator"

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        super().__init__(env_id, seed)
        self.fallback: str | None = None

    def reset(self, seed: int | None = None) -> None:
        """Reseed and forget the pick of the last episode."""
        super().reset(seed)
        self.fallback = None

    def pick(self) -> str:
        """A uniformly random classic strategy name."""
        return CLASSIC[int(self.rng.integers(len(CLASSIC)))]

    def act(self, observation: Mapping[str, Any]) -> str:
        """Adopt and write a strategy when born; otherwise donate by the strategy it wrote (or its random pick)."""
        view = observation["view"]
        if view["phase"] == "strategy":
            learned = [name for s in view["survivors"] if (name := recognise(s["strategy"])) is not None]
            return f"[strategy] {DESCRIPTIONS[learned[0] if learned else self.pick()]}"
        strategy = recognise(view["strategy"])
        if strategy is None:
            if self.fallback is None:
                self.fallback = self.pick()
            strategy = self.fallback
        return decide(strategy, view)


class DonorRandomAgent(RandomAgent):
    """A random strategy line; a uniformly random share to give."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """``[strategy] ...`` in a strategy phase, ``give N%`` with N uniform over the allowed shares otherwise."""
        if observation["view"]["phase"] == "strategy":
            return f"[strategy] I give whatever comes to mind ({int(self.rng.integers(1000))})."
        return f"give {SHARES[int(self.rng.integers(len(SHARES)))]}%"


for strategy_name in DESCRIPTIONS:
    register_scripted(strategy_name, ENV_ID, lambda env_id=None, seed=None, _name=strategy_name: StrategyAgent(_name, env_id, seed))
register_scripted("imitator", ENV_ID, ImitatorAgent)
register_scripted("random", ENV_ID, DonorRandomAgent)
# Weakest first by what the other donors leave the learner: generous donors most, never_give nothing.
register_ladder(ENV_ID, ["generous_discriminator", "always_give", "discriminator", "imitator", "never_give"])
