"""The ``reasoner`` agent for Avalon: one rules-based player for every role, reading only its view.

* Servant: it keeps a suspicion score per other player from the public
  record: a failed quest's fails are shared among its other members, and a
  vote against a quest's result (approving a team that failed, rejecting one
  that succeeded) adds half a fail. It proposes itself
  with the least suspected players and approves a team only if it is on it
  (two unknown players are clean one time in six, itself and one unknown one
  time in two) and no other member is suspected more than the least suspected
  other player.
* Merlin: it proposes itself with good players, and votes as a servant would
  (its knowledge shows only in its proposals): voting on what it knows made
  it the assassin's easy pick.
* Evil (assassin and minion): it proposes itself with good players, approves
  exactly the teams with an evil player, and on a quest plays ``fail`` if it
  is the lowest-seated evil member of the team (one fail is enough, and a
  second would tell good that both are on it). As the assassin it names the
  good player whose votes and proposals best fit knowing the evil players
  (approving clean teams, rejecting tainted ones): that player acts like merlin.
* Every good player approves the proposal after four rejections (a
  fifth rejection hands evil the game), and every evil player rejects it.

Ties are broken with the agent's seeded generator.

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.social.avalon import MAX_REJECTIONS

ENV_ID = "parlour/Avalon-v0"
#: Suspicion added for a vote that went against a quest's result (approving a team that failed, rejecting one that succeeded).
VOTE_WEIGHT = 0.5


def suspicion(view: Mapping[str, Any]) -> dict[str, float]:
    """How suspect each other player is, from the quests and votes (see the module docstring)."""
    me = view["player"]
    scores = {p: 0.0 for p in view["players"] if p != me}
    for quest in view["quests"]:
        if quest["success"]:
            continue
        others = [p for p in quest["team"] if p != me]
        for p in others:
            scores[p] += quest["fails"] / len(others)
    # The team of every proposal that went on a quest, and whether that quest succeeded.
    outcomes = {(q["quest"], tuple(q["team"])): q["success"] for q in view["quests"]}
    for proposal in view["proposals"]:
        success = outcomes.get((proposal["quest"], tuple(proposal["team"])))
        if success is None:
            continue
        for p, vote in proposal["votes"].items():
            if p != me and (vote == "approve") != success:
                scores[p] += VOTE_WEIGHT
    return scores


def merlin_likeness(view: Mapping[str, Any], player: str) -> int:
    """How many of ``player``'s votes and proposals fit knowing the evil players (approve or propose clean teams only)."""
    evil = set(view["evil"])
    fits = 0
    for proposal in view["proposals"]:
        clean = not evil & set(proposal["team"])
        vote = proposal["votes"].get(player)
        if vote is not None:
            fits += (vote == "approve") == clean
        if proposal["leader"] == player:
            fits += clean
    return fits


class AvalonReasoner(SeededAgent):
    """The ``reasoner`` for every Avalon role; see the module docstring."""

    name = "reasoner"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The move for the phase, by role."""
        view = observation["view"]
        evil = set(view["evil"] or ())
        me = view["player"]
        phase = view["phase"]
        if phase == "assassinate":
            good = [p for p in view["players"] if p not in evil]
            order = self.rng.permutation(len(good))
            return f"assassinate {max(good, key=lambda p: (merlin_likeness(view, p), int(order[good.index(p)])))}"
        if phase == "quest":
            if view["team"] == "good":
                return "success"
            return "fail" if min((p for p in view["team_proposed"] if p in evil), key=view["players"].index) == me else "success"
        if phase == "propose":
            return "propose " + " ".join(self._team(view, evil))
        if view["rejections"] == MAX_REJECTIONS - 1:
            return "reject" if view["team"] == "evil" else "approve"
        team = set(view["team_proposed"])
        if view["team"] == "evil":
            return "approve" if team & evil else "reject"
        scores = suspicion(view)
        floor = min(scores.values())
        trusted = me in team and all(scores.get(p, floor) <= floor for p in team)
        return "approve" if trusted else "reject"

    def _team(self, view: Mapping[str, Any], evil: set[str]) -> list[str]:
        """Itself and the players it would send: good ones if it knows them, else the least suspected."""
        me = view["player"]
        others = [p for p in view["players"] if p != me]
        order = self.rng.permutation(len(others))
        tiebreak = {p: int(order[i]) for i, p in enumerate(others)}
        if view["evil"] is not None:
            pool = sorted((p for p in others if p not in evil), key=tiebreak.__getitem__)
        else:
            scores = suspicion(view)
            pool = sorted(others, key=lambda p: (scores[p], tiebreak[p]))
        chosen = [me, *pool[: view["quest_size"] - 1]]
        return sorted(chosen, key=view["players"].index)


register_scripted("reasoner", ENV_ID, AvalonReasoner)
register_ladder(ENV_ID, ["random", "reasoner"])
