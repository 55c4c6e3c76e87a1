"""Colonel Blotto.

Two players, ``player_0`` and ``player_1``, each secretly split ``soldiers``
soldiers (default 10) over ``fields`` battlefields (default 3, named A, B, C,
...), both at once. A field is won by the player who sent more soldiers to it
(equal numbers: nobody wins it); the round is won by the player who won more
fields (equal counts: a tied round). Option ``rounds`` (default 1) plays
several rounds; the player who won more rounds wins the game.

Allocations give every field's number of soldiers, in field order, summing to
``soldiers``: ``4 3 3``, ``4,3,3``, ``4-3-3``, ``[4, 3, 3]``, or labelled
``A4 B3 C3`` / ``A: 4, B: 3, C: 3`` (labels in any order, each once).
Reasoning around the allocation is tolerated: the last well-formed one in the
text counts. The canonical move name is the space-separated form (``4 3 3``);
the ``Discrete`` actions are every composition of ``soldiers`` into ``fields``
parts in lexicographic order (66 with the defaults), when there are at most
5000 of them; larger configurations are text-only (no vector mode). Vector
observation: the fraction of rounds played, own and opponent's rounds won over
``rounds``, then own and opponent's previous allocations over ``soldiers``.

Rewards (zero-sum), paid at the end of each round: +1 to the round's winner
and -1 to its loser, 0 each for a tied round. A player who exceeds the
invalid-action allowance forfeits: rewards at that step set its return to
``-rounds`` and the opponent's to ``+rounds``, as if every round were lost.

Version history: v0, first release.
"""

from __future__ import annotations

import itertools
import math
import re
import string

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import FrozenDict
from parlour.envs.core.game import Game, InvalidMove, int_option

#: Most moves for which the game is enumerable (has a ``Discrete`` action).
MAX_ENUMERABLE = 5000
MAX_FIELDS = 26
MAX_SOLDIERS = 10_000
MAX_ROUNDS = 1000

# Numbers are separated by a comma, semicolon, slash or dash, or by spaces alone; never by nothing,
# which would let a long digit string split in exponentially many ways.
SEPARATOR = r"(?:\s*[,;/\-]\s*|\s+)"
# A run ends before a letter or a decimal point, but a full stop after it is fine.
END = r"(?!\.?\d|\w)"
NUMBER_RUN = re.compile(rf"(?<![\w.\-])\d+(?:{SEPARATOR}\d+)*{END}")
LABELLED_ENTRY = r"[A-Za-z]\s*+(?:[:=]\s*+)?\d++"
LABELLED_RUN = re.compile(rf"(?<!\w){LABELLED_ENTRY}(?:{SEPARATOR}{LABELLED_ENTRY})*{END}")
LABELLED_PARTS = re.compile(r"([A-Za-z])\s*+(?:[:=]\s*+)?(\d++)")

RULES = """You are playing Colonel Blotto as {player}, against one opponent, for {rounds} round(s).
Each round both players secretly split {soldiers} soldiers over {fields} battlefields named {labels}, at the same time.
A battlefield is won by whoever sent more soldiers to it (a tie wins it for nobody). A round is won by whoever wins more battlefields. Whoever wins more rounds wins the game.
Reply with the number of soldiers for each battlefield, in order {labels}, summing to {soldiers}, for example: {example}"""


def compositions(total: int, parts: int) -> list[tuple[int, ...]]:
    """Every way to write ``total`` as an ordered sum of ``parts`` non-negative ints, lexicographically."""
    result = []
    for bars in itertools.combinations(range(total + parts - 1), parts - 1):
        edges = (-1, *bars, total + parts - 1)
        result.append(tuple(edges[i + 1] - edges[i] - 1 for i in range(parts)))
    return result


def allocation_name(allocation: tuple[int, ...] | list[int]) -> str:
    """The canonical move name of an allocation: its numbers separated by spaces."""
    return " ".join(str(n) for n in allocation)


def fields_won(mine: list[int], theirs: list[int]) -> int:
    """How many fields ``mine`` wins against ``theirs``."""
    return sum(1 for a, b in zip(mine, theirs) if a > b)


class ColonelBlotto(Game):
    """Colonel Blotto for two players over one or more rounds; see the module docstring."""

    name = "ColonelBlotto"
    reference_agents = ("nash", "random")
    description = "Secretly split soldiers over battlefields; win more fields than the opponent to win the round."
    zero_sum = True
    fixed_rules = True
    simultaneous = True

    def __init__(self, *, fields: int = 3, soldiers: int = 10, rounds: int = 1):
        for option, value, low, high in (
            ("fields", fields, 2, MAX_FIELDS),
            ("soldiers", soldiers, 1, MAX_SOLDIERS),
            ("rounds", rounds, 1, MAX_ROUNDS),
        ):
            int_option(option, value, low, high)
        self.fields = fields
        self.soldiers = soldiers
        self.rounds = rounds
        self.labels = list(string.ascii_uppercase[:fields])
        self.players = ["player_0", "player_1"]
        if math.comb(soldiers + fields - 1, fields - 1) <= MAX_ENUMERABLE:
            self.moves = [allocation_name(a) for a in compositions(soldiers, fields)]
        self.vector_size = 3 + 2 * fields
        self.round = 0
        self.history: list[dict[str, list[int]]] = []
        self._clear_views()
        self.wins = {p: 0 for p in self.players}

    def _clear_views(self) -> None:
        """Empty the per-player histories that views share (see :mod:`parlour.envs.core.frozen`).

        Each player's rounds are kept as it sees them, in a tuple of read-only entries that grows by one each
        round, so a view holds it as it is instead of copying every past allocation.
        """
        self.rounds_seen: dict[str, tuple[FrozenDict, ...]] = {p: () for p in self.players}

    def start(self, ctx: Context) -> None:
        """Round 1, no allocations yet."""
        self.round = 0
        self.history = []
        self._clear_views()
        self.wins = {p: 0 for p in self.players}

    def example(self) -> str:
        """A valid allocation: soldiers spread as evenly as possible, extras on the first fields."""
        base, extra = divmod(self.soldiers, self.fields)
        return allocation_name([base + (i < extra) for i in range(self.fields)])

    def rules(self, player: str) -> str:
        """Rules, the sizes and an example allocation."""
        labels = ", ".join(self.labels)
        return RULES.format(player=player, rounds=self.rounds, soldiers=self.soldiers, fields=self.fields, labels=labels, example=self.example())

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The round and the score."""
        me, them = self.wins[player], self.wins[self.other(player)]
        return (
            f"Round {self.round + 1} of {self.rounds}. Rounds won: you {me}, opponent {them}.\n"
            f"Your allocation of {self.soldiers} soldiers over {', '.join(self.labels)}:"
        )

    def legal_actions(self, player: str) -> list[int]:
        """Every allocation is always legal."""
        assert self.moves is not None
        return list(range(len(self.moves)))

    def parse(self, player: str, text: str) -> str:
        """The last well-formed allocation in the text, if it sums to ``soldiers``."""
        candidates: list[tuple[int, list[int]]] = []
        for run in NUMBER_RUN.finditer(text):
            numbers = [int(n) for n in re.findall(r"\d+", run.group())]
            if len(numbers) == self.fields:
                candidates.append((run.end(), numbers))
        for run in LABELLED_RUN.finditer(text):
            parts = LABELLED_PARTS.findall(run.group())
            entries = {label.upper(): int(n) for label, n in parts}
            if len(parts) == self.fields and sorted(entries) == self.labels:
                candidates.append((run.end(), [entries[label] for label in self.labels]))
        if not candidates:
            raise InvalidMove(
                f"No allocation found. Reply with {self.fields} numbers of soldiers, one per battlefield "
                f"({', '.join(self.labels)}), summing to {self.soldiers}, for example: {self.example()}"
            )
        allocation = max(candidates, key=lambda c: c[0])[1]
        if sum(allocation) != self.soldiers:
            raise InvalidMove(f"Your allocation {allocation_name(allocation)} uses {sum(allocation)} soldiers; it must use exactly {self.soldiers}.")
        return allocation_name(allocation)

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Reveal both allocations, score the round, and end the game after the last round."""
        allocations = {p: [int(n) for n in moves[p].split()] for p in self.players}
        self.history.append(allocations)
        frozen = {p: tuple(allocations[p]) for p in self.players}
        for player in self.players:
            self.rounds_seen[player] += (FrozenDict(you=frozen[player], opponent=frozen[self.other(player)]),)
        first, second = self.players
        won = {p: fields_won(allocations[p], allocations[self.other(p)]) for p in self.players}
        round_winner = first if won[first] > won[second] else second if won[second] > won[first] else None
        if round_winner is not None:
            self.wins[round_winner] += 1
            ctx.reward(round_winner, 1.0)
            ctx.reward(self.other(round_winner), -1.0)
        for player in self.players:
            them = self.other(player)
            result = "a tied round" if round_winner is None else "you win the round" if round_winner == player else "your opponent wins the round"
            ctx.tell(
                f"Round {self.round + 1}: you sent {self.allocation_text(allocations[player])}; "
                f"your opponent sent {self.allocation_text(allocations[them])}. "
                f"Fields won: you {won[player]}, opponent {won[them]}: {result}.",
                to=player,
            )
        self.round += 1
        if self.round < self.rounds:
            return
        a, b = self.wins[first], self.wins[second]
        # Equal rounds won is a draw, not a shared win: nobody wins.
        winners = [first] if a > b else [second] if b > a else []
        ctx.finish(winners=winners, reason=f"all {self.rounds} round(s) were played ({a} to {b} rounds won)")

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The offender's return becomes ``-rounds`` and the opponent's ``+rounds``."""
        them = self.other(player)
        current = self.wins[player] - self.wins[them]
        penalty = -self.rounds - current
        ctx.finish({player: penalty, them: -penalty}, winners=[them], reason=reason)

    def allocation_text(self, allocation: list[int]) -> str:
        """An allocation with its field labels, e.g. ``A4 B3 C3``."""
        return " ".join(f"{label}{n}" for label, n in zip(self.labels, allocation))

    def view(self, player: str) -> dict:
        """The sizes, the round, both players' past allocations and rounds won; never a pending allocation.

        The history is a shared, read-only tuple (the game only ever replaces it by a longer one).
        """
        them = self.other(player)
        return {
            "fields": self.fields,
            "soldiers": self.soldiers,
            "round": self.round,
            "rounds": self.rounds,
            "history": self.rounds_seen[player],
            "wins": {"you": self.wins[player], "opponent": self.wins[them]},
        }

    def vector(self, player: str) -> np.ndarray:
        """Round fraction, both players' rounds won, then both previous allocations (zero before round 2)."""
        them = self.other(player)
        values = np.zeros(self.vector_size, dtype=np.float32)
        values[:3] = (self.round / self.rounds, self.wins[player] / self.rounds, self.wins[them] / self.rounds)
        if self.history:
            last = self.history[-1]
            values[3 : 3 + self.fields] = np.asarray(last[player]) / self.soldiers
            values[3 + self.fields :] = np.asarray(last[them]) / self.soldiers
        return values

    def render(self) -> str:
        """Every round's allocations, the rounds won, and the round under way while rounds remain."""
        first, second = self.players
        lines = [
            f"round {i + 1}: {first} {self.allocation_text(a[first])} | {second} {self.allocation_text(a[second])}"
            for i, a in enumerate(self.history)
        ]
        lines.append(f"rounds won: {first} {self.wins[first]}, {second} {self.wins[second]}")
        if self.round < self.rounds:
            lines.append(f"round {self.round + 1} of {self.rounds}")
        return "\n".join(lines)
