"""Ultimatum: a proposer offers a split of a pie, a responder takes it or leaves it; one-shot or iterated.

Each round the proposer offers the responder a whole share of a pie of size
``pie`` (default 10) and keeps the rest; the responder accepts (both get their
shares) or rejects (both get nothing that round). ``rounds`` (default 1) sets
how many rounds are played. With ``alternate=True`` the players are
``player_0`` and ``player_1`` and swap roles every round (``player_0``
proposes first); otherwise they are ``proposer`` and ``responder`` throughout.

Moves, with free text around them that is delivered verbatim to the other
player (the last well-formed move counts):

* proposer: ``[offer] 3`` -- give the responder 3 and keep ``pie - 3`` (a
  number with separators or an exponent, such as ``1,000`` or ``1e3``, is
  refused, never read as 1);
* responder: ``[accept]`` or ``[reject]``.

Text without a well-formed move, a move of the other role, or an offer outside
[0, pie] is an invalid action.

Rewards: each round's shares, paid when the responder answers. A player
exceeding the invalid-action allowance ends the game with a total of -1
(below anything reachable, whatever it had earned); the other keeps its
shares. ``pie * rounds`` is at most 10,000, which keeps the end-of-game
analysis over every split fast. The outcome's
``details`` hold the analysis of :mod:`parlour.envs.negotiation.analysis` over
the totals of a game in which every round is accepted (every split of
``rounds * pie``), with ``agreement`` meaning every round was accepted, plus
``accepted_rounds`` and the per-round ``history``.

Version history: v0, first release.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import FrozenDict
from parlour.envs.core.game import Game, InvalidMove, int_option, winners_by_score
from parlour.envs.core.numbers import NUMBER, whole_number
from parlour.envs.negotiation.analysis import NegotiationSpace

#: Largest ``pie * rounds``: the analysis enumerates every split of the whole game's pies.
MAX_TOTAL = 10_000
# The share is group 3, the whole number as written (1,200 and 1e3 included), for whole_number to read or refuse.
MOVE = re.compile(rf"\[\s*+(offer|accept|reject)\s*+\](\s*+(?:\$\s*+)?(-?{NUMBER}))?", re.IGNORECASE)


@functools.lru_cache(maxsize=8)
def split_space(whole: int) -> NegotiationSpace:
    """The analysis of every split of ``whole`` between two players (no deal pays 0 each), built once per size.

    Its frontier has ``whole + 1`` points (up to 10,001), far more work than the rest of a game's final step.
    """
    return NegotiationSpace([(float(whole - x), float(x)) for x in range(whole + 1)], (0.0, 0.0))


RULES = """You are {player} in the ultimatum game against {other}; {schedule}.
Each round the proposer offers the responder a whole share of a pie of {pie} and keeps the rest. If the responder accepts, both get their shares; if it rejects, both get nothing that round.
Anything you write is sent to {other} word for word; end with your move. The last move in your text counts.
  as proposer:  [offer] <share for the responder, 0 to {pie}>
  as responder: [accept] or [reject]
Example (proposer): Let's both do well this time. [offer] 4"""


class Ultimatum(Game):
    """The ultimatum game, one-shot or iterated, with fixed or alternating roles; see the module docstring."""

    name = "Ultimatum"
    reference_agents = ("boulware", "random")
    description = "Split a pie: the proposer offers a share, the responder accepts or both get nothing; one-shot or iterated."
    category = "negotiation"
    zero_sum = False

    def __init__(self, *, pie: int = 10, rounds: int = 1, alternate: bool = False):
        int_option("pie", pie, 1)
        int_option("rounds", rounds, 1)
        if pie * rounds > MAX_TOTAL:
            raise ValueError(f"pie * rounds must be at most {MAX_TOTAL}, got {pie} * {rounds}")
        if not isinstance(alternate, bool):
            raise ValueError(f"alternate must be True or False, got {alternate!r}")
        self.pie = pie
        self.rounds = rounds
        self.alternate = alternate
        self.players = ["player_0", "player_1"] if alternate else ["proposer", "responder"]
        self.round = 0
        self.offer: int | None = None
        # Read-only entries in a tuple that only grows: every view shares it instead of copying it.
        self.history: tuple[FrozenDict, ...] = ()

    def start(self, ctx: Context) -> None:
        """Round 1, no offer yet."""
        self.round = 0
        self.offer = None
        self.history = ()

    # ----------------------------------------------------------------- helpers
    def proposer(self) -> str:
        """Who proposes in the current round."""
        return self.players[self.round % 2] if self.alternate else self.players[0]

    def responder(self) -> str:
        """Who responds in the current round."""
        return self.other(self.proposer())

    # -------------------------------------------------------------------- text
    def to_move(self) -> list[str]:
        """The proposer until it has offered, then the responder."""
        return [self.proposer() if self.offer is None else self.responder()]

    def rules(self, player: str) -> str:
        """Rules and the player's role(s)."""
        rounds = "one round" if self.rounds == 1 else f"{self.rounds} rounds"
        if self.alternate:
            first = "you propose first" if player == self.players[0] else "you respond first"
            schedule = f"{rounds}, roles swap every round and {first}"
        else:
            schedule = f"{rounds}, and you are the {player} in every round"
        return RULES.format(player=player, other=self.other(player), schedule=schedule, pie=self.pie)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The round, and the offer to answer if responding."""
        head = f"Round {self.round + 1} of {self.rounds}."
        if self.offer is None:
            return f"{head} You propose: end with [offer] <share for {self.other(player)}, 0 to {self.pie}>."
        return f"{head} {self.other(player)} offers you {self.offer} of {self.pie}. End with [accept] or [reject]."

    def parse(self, player: str, text: str) -> dict[str, Any]:
        """The last well-formed move of the player's current role, and the talk around it."""
        proposing = self.offer is None
        for found in reversed(list(MOVE.finditer(text))):
            kind = found.group(1).lower()
            if (kind == "offer") != proposing or (kind == "offer" and found.group(3) is None):
                continue
            end = found.end() if kind == "offer" else found.start(2) if found.group(2) else found.end()
            talk = (text[: found.start()] + text[end:]).strip()
            if kind == "offer":
                share = whole_number(found.group(3), 0, self.pie, f"Offer a whole share from 0 to {self.pie}, got {{written}}.", "[offer] 12")
                return {"move": "offer", "share": share, "talk": talk}
            return {"move": kind, "talk": talk}
        expected = f"[offer] <0 to {self.pie}>" if proposing else "[accept] or [reject]"
        raise InvalidMove(f"No move found: as {'proposer' if proposing else 'responder'}, end with {expected}.")

    # ------------------------------------------------------------------- rules
    def apply(self, ctx: Context, moves: dict[str, dict[str, Any]]) -> None:
        """Record the offer, or settle the round on the answer; end after the last round."""
        ((player, move),) = moves.items()
        other = self.other(player)
        if move["talk"]:
            ctx.say(player, move["talk"], to=other)
        if move["move"] == "offer":
            self.offer = move["share"]
            ctx.tell(f"{player} offers {other} {self.offer} of {self.pie}.", kind="move", sender=player)
            return
        share = self.offer
        assert share is not None
        accepted = move["move"] == "accept"
        proposer = other
        self.history += (FrozenDict(proposer=proposer, offer=share, accepted=accepted),)
        if accepted:
            ctx.reward(proposer, self.pie - share)
            ctx.reward(player, share)
        ctx.tell(f"{player} {'accepts' if accepted else 'rejects'} the offer of {share}.", kind="move", sender=player)
        self.round += 1
        self.offer = None
        if self.round >= self.rounds:
            leaders = winners_by_score(self.totals())
            winners = leaders if len(leaders) == 1 else []
            ctx.finish(winners=winners, reason=f"{self.rounds} round(s) played", details=self.analysis())

    def totals(self) -> dict[str, float]:
        """Each player's winnings so far."""
        totals = {p: 0.0 for p in self.players}
        for entry in self.history:
            if entry["accepted"]:
                totals[entry["proposer"]] += self.pie - entry["offer"]
                totals[self.other(entry["proposer"])] += entry["offer"]
        return totals

    def analysis(self) -> dict[str, Any]:
        """The negotiation report over every split of the whole game's pies, with the round history."""
        accepted = sum(entry["accepted"] for entry in self.history)
        report = split_space(self.rounds * self.pie).report(self.totals(), accepted == self.rounds)
        report["accepted_rounds"] = accepted
        report["history"] = [dict(entry) for entry in self.history]
        return report

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The offender's total drops to -1, below anything reachable; the other keeps its shares and wins."""
        ctx.finish({player: -1.0 - self.totals()[player]}, winners=[self.other(player)], reason=reason, details=self.analysis())

    # ------------------------------------------------------------------- views
    def view(self, player: str) -> dict[str, Any]:
        """Everything is public: the pie, the rounds, the current offer and the history (shared, read-only)."""
        return {
            "player": player,
            "pie": self.pie,
            "round": self.round,
            "rounds": self.rounds,
            "role": "proposer" if player == self.proposer() else "responder",
            "offer": self.offer,
            "history": self.history,
        }

    def render(self) -> str:
        """The rounds played and the offer awaiting an answer, if any."""
        lines = [f"pie {self.pie}, round {min(self.round + 1, self.rounds)}/{self.rounds}"]
        for entry in self.history:
            lines.append(f"  {entry['proposer']} offers {entry['offer']}: {'accepted' if entry['accepted'] else 'rejected'}")
        if self.offer is not None:
            lines.append(f"  {self.proposer()} offers {self.offer}: unanswered")
        return "\n".join(lines)
