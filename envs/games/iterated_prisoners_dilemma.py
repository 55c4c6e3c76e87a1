"""Iterated prisoner's dilemma.

Two players, ``player_0`` and ``player_1``, play ``rounds`` rounds (default
10). In each round both choose at once, without seeing the other's choice:
``cooperate`` or ``defect``. Payoffs (option ``payoffs``, ``[T, R, P, S]``,
default ``[5, 3, 1, 0]``, with T > R > P > S): both cooperate, R each; both
defect, P each; a defector facing a cooperator gets T and the cooperator S.
Each player learns the other's choice only after both have chosen.

With ``communication=True`` each round starts with a talk phase: both players
write one free-text message at once (at most 1000 characters), and each
message is delivered verbatim to the other player before the decision phase.
Moves are then not enumerable (text only, no vector mode).

Moves: ``cooperate`` or ``defect``; reasoning around the word is tolerated and
the last of the two words in the text counts. Without communication the
``Discrete`` actions are 0 = cooperate, 1 = defect; the vector observation
holds, for each of the last three rounds (most recent first), whether it was
played, whether the player defected and whether the opponent defected, then
the fraction of rounds already played.

Rewards (general-sum): each round's payoff is paid at the end of that round.
The winner is the player with the higher total; a tie is a draw (no winner).
A player who exceeds the invalid-action allowance forfeits: a reward at that
step sets its total to ``rounds * min(S, 0) - 1`` (-1 with the default
payoffs), below any total a player can reach; the opponent keeps its payoffs.

Version history: v0, first release.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import FrozenDict
from parlour.envs.core.game import Game, InvalidMove, int_option

CHOICES = ["cooperate", "defect"]
#: Past rounds described in the vector observation.
HISTORY = 3
MAX_MESSAGE = 1000
MAX_ROUNDS = 10_000

#: A view's history entry for each pair of choices: read-only, so every round and every view shares the same four.
SEEN = {(mine, theirs): FrozenDict(you=mine, opponent=theirs) for mine in CHOICES for theirs in CHOICES}

CHOICE_PATTERN = re.compile(r"(?<![\w])(cooperate|defect)(?![\w])", re.IGNORECASE)

RULES = """You are playing the iterated prisoner's dilemma as {player}, against one opponent, for {rounds} rounds.
Each round both players choose at the same time, without seeing the other's choice: cooperate or defect.
Payoffs per round: both cooperate: {R} each. Both defect: {P} each. If one defects and the other cooperates, the defector gets {T} and the cooperator {S}.
Your goal is to earn as many points as you can over all rounds; you see the other's choice after each round.
{reply}"""

DECIDE_REPLY = "Reply with your choice, for example: cooperate"

TALK_REPLY = """Each round starts with a talk phase: you write one free-text message (at most {limit} characters) and your opponent sees it exactly as written, before both of you decide. Messages are not binding.
In the talk phase reply with your message, for example: I will cooperate as long as you do.
In the decision phase reply with your choice, for example: cooperate"""


class IteratedPrisonersDilemma(Game):
    """The repeated prisoner's dilemma, optionally with a talk phase each round; see the module docstring."""

    name = "IteratedPrisonersDilemma"
    reference_agents = ("always_defect", "random")
    description = "Repeated simultaneous choice to cooperate or defect, optionally with cheap talk before each round."
    zero_sum = False
    fixed_rules = True
    simultaneous = True

    def __init__(
        self,
        *,
        rounds: int = 10,
        payoffs: Sequence[float] = (5, 3, 1, 0),
        communication: bool = False,
    ):
        int_option("rounds", rounds, 1, MAX_ROUNDS)
        if (
            isinstance(payoffs, (str, bytes))
            or not isinstance(payoffs, Sequence)
            or len(payoffs) != 4
            or not all(isinstance(p, (int, float)) and not isinstance(p, bool) and np.isfinite(p) for p in payoffs)
        ):
            raise ValueError(f"payoffs must be four numbers [T, R, P, S], got {payoffs!r}")
        temptation, reward, punishment, sucker = (float(p) for p in payoffs)
        if not temptation > reward > punishment > sucker:
            raise ValueError(f"payoffs [T, R, P, S] must satisfy T > R > P > S to be a prisoner's dilemma, got {payoffs!r}")
        if not isinstance(communication, bool):
            raise ValueError(f"communication must be True or False, got {communication!r}")
        self.rounds = rounds
        self.payoffs = {"T": temptation, "R": reward, "P": punishment, "S": sucker}
        self.communication = communication
        self.players = ["player_0", "player_1"]
        self.moves = None if communication else list(CHOICES)
        self.vector_size = 3 * HISTORY + 1
        self.round = 0
        self.phase = "decide"
        self.history: list[dict[str, str]] = []
        self.messages: list[dict[str, str]] = []
        self.totals = {p: 0.0 for p in self.players}
        self._clear_views()

    def _clear_views(self) -> None:
        """Empty the per-player histories that views show (see :mod:`parlour.envs.core.frozen`).

        Each player's rounds and received messages are kept as it sees them, in lists of read-only entries
        that grow by one each round: a round appends, at the same cost in round 8,000 as in round 1. A view
        shows them as tuples, copied when a view first reads them after they grew and shared by every
        later view until the next round (``_copies``), so nothing an agent does to a view reaches the game.
        """
        self.rounds_seen: dict[str, list[FrozenDict]] = {p: [] for p in self.players}
        self.messages_received: dict[str, list[str]] = {p: [] for p in self.players}
        self._copies: dict[tuple[str, str], tuple] = {}

    def _copy(self, name: str, player: str) -> tuple:
        """``player``'s list ``name`` (``rounds_seen`` or ``messages_received``) as a tuple, copied once per length."""
        items = getattr(self, name)[player]
        copy = self._copies.get((name, player))
        if copy is None or len(copy) != len(items):
            copy = self._copies[name, player] = tuple(items)
        return copy

    def start(self, ctx: Context) -> None:
        """Round 1, in the talk phase when communication is on."""
        self.round = 0
        self.phase = "talk" if self.communication else "decide"
        self.history = []
        self.messages = []
        self.totals = {p: 0.0 for p in self.players}
        self._clear_views()

    def rules(self, player: str) -> str:
        """Rules, payoffs and the talk phase if any."""
        reply = TALK_REPLY.format(limit=MAX_MESSAGE) if self.communication else DECIDE_REPLY
        return RULES.format(player=player, rounds=self.rounds, reply=reply, **{k: f"{v:g}" for k, v in self.payoffs.items()})

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The round, the scores so far, and what to send now."""
        me, them = self.totals[player], self.totals[self.other(player)]
        header = f"Round {self.round + 1} of {self.rounds}. Your total: {me:g}; opponent's total: {them:g}."
        if self.phase == "talk":
            return f"{header}\nTalk phase: write your message to your opponent (at most {MAX_MESSAGE} characters)."
        return f"{header}\nDecide: reply with cooperate or defect."

    def legal_actions(self, player: str) -> list[int]:
        """Both choices are always legal (no communication)."""
        return [0, 1]

    def parse(self, player: str, text: str) -> str:
        """A message in the talk phase; otherwise the last ``cooperate`` or ``defect`` in the text."""
        if self.phase == "talk":
            if len(text) > MAX_MESSAGE:
                raise InvalidMove(f"Your message has {len(text)} characters; the limit is {MAX_MESSAGE}.")
            return text
        found = CHOICE_PATTERN.findall(text)
        if not found:
            raise InvalidMove("No choice found. Reply with cooperate or defect.")
        return found[-1].lower()

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Deliver both messages, or score both choices and move to the next round."""
        if self.phase == "talk":
            self.messages.append(dict(moves))
            for player in self.players:
                self.messages_received[player].append(moves[self.other(player)])
            for player in self.players:
                them = self.other(player)
                ctx.say(them, moves[them], to=player)
            self.phase = "decide"
            return
        self.history.append(dict(moves))
        for player in self.players:
            self.rounds_seen[player].append(SEEN[moves[player], moves[self.other(player)]])
        first, second = self.players
        gains = {first: self.payoff(moves[first], moves[second]), second: self.payoff(moves[second], moves[first])}
        for player in self.players:
            them = self.other(player)
            ctx.reward(player, gains[player])
            self.totals[player] += gains[player]
            ctx.tell(
                f"Round {self.round + 1}: you chose {moves[player]}, your opponent chose {moves[them]}. "
                f"You get {gains[player]:g}, your opponent {gains[them]:g}.",
                to=player,
            )
        self.round += 1
        if self.round < self.rounds:
            self.phase = "talk" if self.communication else "decide"
            return
        a, b = self.totals[first], self.totals[second]
        # A tie is a draw, not a shared win: nobody wins.
        winners = [first] if a > b else [second] if b > a else []
        ctx.finish(winners=winners, reason=f"all {self.rounds} rounds were played ({a:g} to {b:g})")

    def payoff(self, mine: str, theirs: str) -> float:
        """The payoff of choosing ``mine`` against ``theirs``."""
        key = {("cooperate", "cooperate"): "R", ("cooperate", "defect"): "S", ("defect", "cooperate"): "T", ("defect", "defect"): "P"}
        return self.payoffs[key[(mine, theirs)]]

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The offender's total drops below anything reachable; the opponent keeps its payoffs."""
        floor = self.rounds * min(self.payoffs["S"], 0.0) - 1.0
        ctx.finish({player: floor - self.totals[player]}, winners=[self.other(player)], reason=reason)

    def view(self, player: str) -> dict:
        """The round, phase, both players' past choices and the messages received; never a pending choice.

        The history and messages are read-only tuples, shared by the views of a round (see :meth:`_clear_views`).
        """
        them = self.other(player)
        return {
            "round": self.round,
            "rounds": self.rounds,
            "phase": self.phase,
            "communication": self.communication,
            "history": self._copy("rounds_seen", player),
            "messages_received": self._copy("messages_received", player),
            "totals": {"you": self.totals[player], "opponent": self.totals[them]},
        }

    def vector(self, player: str) -> np.ndarray:
        """The last rounds (played, own defection, opponent's defection), most recent first, then the round fraction."""
        them = self.other(player)
        values = np.zeros(self.vector_size, dtype=np.float32)
        for slot, moves in enumerate(reversed(self.history[-HISTORY:])):
            values[3 * slot : 3 * slot + 3] = (1.0, moves[player] == "defect", moves[them] == "defect")
        values[-1] = self.round / self.rounds
        return values

    def render(self) -> str:
        """Every round played, the totals, and the round and phase under way while rounds remain."""
        first, second = self.players
        lines = [f"round {i + 1}: {m[first]:<9} {m[second]}" for i, m in enumerate(self.history)]
        lines.append(f"totals: {first} {self.totals[first]:g}, {second} {self.totals[second]:g}")
        if self.round < self.rounds:
            lines.append(f"round {self.round + 1} of {self.rounds}, {self.phase} phase")
        return "\n".join(lines)
