"""DonorGame: indirect reciprocity over generations with cultural evolution (Vallinder and Hughes, 2024).

``num_players`` individuals (option, 3 to 16, default 6; ``player_0`` ..)
play ``generations`` generations (default 3) of ``rounds`` rounds each
(default 6). Every generation starts with ``initial_resources`` each (default
10) and a fresh history.

Each round every player is a donor once and a recipient once: the players are
shuffled into a ring from the seed and each donates to the next. All donors
decide at once, seeing their recipient's recent history: its last ``history``
donations this generation (default 3), each with the round, whom it gave to,
what share of its resources it gave, and what that recipient had given in its
own donation before. A donor gives a share of its resources in steps of 10%:
``give 0%`` .. ``give 100%`` (``give 30`` also reads as 30%; the last such move
in the text counts, so reasoning before it is tolerated). The recipient gets
the gift times ``multiplier`` (default 2): giving creates wealth, keeping is
individually better in the round.

Cultural evolution: after every generation but the last, the players are
ranked by resources (ties broken from the seed) and the top half (rounded
down) survive; the others are replaced by new individuals in the same seats.
With ``strategies=True`` (default) every new individual first writes a
strategy, ``[strategy] <text>`` (at most 1000 characters), having seen the
survivors' strategies; survivors keep theirs. Everyone's own strategy is shown
in each donation prompt. Moves are then free text (no vector face). With
``strategies=False`` there is no strategy phase, the ``give N%`` moves are
enumerable and the vector face exists.

Rewards: each player's resources at the end of each generation, paid then;
the return is their sum. Nobody wins: the game is a social dilemma scored by
its outcome details, and its players form one team, ``population``. A player
who exceeds the invalid-action allowance ends the game: its return becomes -1
(below anything reachable); the others keep what they were paid.

Outcome details: ``cooperation_rate`` (the mean share given over every
donation), ``give_rate`` (the fraction of donations above 0%),
``total_resources`` (the players' resources summed over every generation's
end), ``final_resources`` (those of the last generation played),
``generations`` (per generation: ``cooperation_rate``, ``give_rate``,
``total_resources``, ``resources``, ``survivors`` and ``strategies``) and
``generations_played``.

Vector face (``strategies=False``): the generation and round fractions, the
player's resources as ``r / (r + initial_resources)``, then per history slot
(most recent first) whether it holds a donation, the share given, whether that
donation's recipient had donated before and what it had given.

Version history: v0, first release.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, InvalidMove, int_option
from parlour.envs.core.numbers import NUMBER, whole_number

SHARES = tuple(range(0, 101, 10))
# At most three digits before any decimal part or separator (give 1000% is no donation), then the number as written.
GIVE_PATTERN = re.compile(rf"(?<![\w])give\s*+(?=\d{{1,3}}(?!\d))({NUMBER})\s*+%?", re.IGNORECASE)
STRATEGY_PATTERN = re.compile(r"\[\s*+strategy\s*+\]", re.IGNORECASE)
MAX_STRATEGY = 1000
MAX_HISTORY = 5

RULES = """You are {player}, one of {n} individuals ({players}) in the donor game, played over {generations} generation(s) of {rounds} rounds.
Every generation starts with {initial:g} resources each. Each round every individual is a donor once and a recipient once, paired at random. As a donor you give a share of your current resources to your recipient, who receives {multiplier:g} times what you give. Giving creates wealth for the group; keeping is better for you in the round.
Before you decide you see your recipient's last {history} donations this generation: to whom it gave, what share, and what that individual had given before.
At the end of each generation but the last, the richer half survive; the others are replaced by new individuals in their seats, who learn the survivors' strategies. Your reward is your resources at the end of every generation, added up.
{strategy_clause}To donate, reply with give and a share in steps of 10%, from "give 0%" to "give 100%", for example: give 30%"""

STRATEGY_CLAUSE = """At the start of your life you write a strategy: reply "[strategy] your strategy in words" (at most {limit} characters). You are reminded of it before every donation; survivors keep theirs.
"""


class DonorGame(Game):
    """Donors give a share of their resources, multiplied, seeing the recipient's history; see the module docstring."""

    name = "DonorGame"
    reference_agents = ("generous_discriminator", "random")
    description = "Indirect reciprocity: donors give to recipients whose history they see; the richer half survive each generation."
    category = "cooperation"
    zero_sum = False
    simultaneous = True

    def __init__(
        self,
        *,
        num_players: int = 6,
        generations: int = 3,
        rounds: int = 6,
        initial_resources: float = 10.0,
        multiplier: float = 2.0,
        history: int = 3,
        strategies: bool = True,
    ):
        self.num_players = int_option("num_players", num_players, 3, 16)
        self.generations = int_option("generations", generations, 1, 50)
        self.rounds = int_option("rounds", rounds, 1, 50)
        self.history = int_option("history", history, 0, MAX_HISTORY)
        for option, value, low in (("initial_resources", initial_resources, 0.0), ("multiplier", multiplier, 1.0)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= low or value > 1000:
                raise ValueError(f"{option} must be a number above {low:g} and at most 1000, got {value!r}")
        if not isinstance(strategies, bool):
            raise ValueError(f"strategies must be True or False, got {strategies!r}")
        self.initial_resources = float(initial_resources)
        self.multiplier = float(multiplier)
        self.strategies = strategies
        self.players = [f"player_{i}" for i in range(num_players)]
        self.moves = None if strategies else [f"give {share}%" for share in SHARES]
        self.vector_size = 3 + 4 * self.history
        self.generation = 0
        self.round = 0
        self.phase = "donate"
        self.newcomers: list[str] = []
        self.resources: dict[str, float] = {}
        self.strategy: dict[str, str] = {}
        self.recipient: dict[str, str] = {}
        self.actions: dict[str, list[dict[str, Any]]] = {}
        self.donations: list[float] = []
        self.past: list[dict[str, Any]] = []
        self.survivors: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ setup
    def start(self, ctx: Context) -> None:
        """Generation 1: everyone is new (and writes a strategy first, if strategies are on)."""
        self.generation = 0
        self.donations = []
        self.past = []
        self.survivors = []
        self.strategy = {}
        self.begin_generation(ctx, list(self.players))

    def begin_generation(self, ctx: Context, newcomers: list[str]) -> None:
        """Fresh resources and histories; the newcomers write strategies, or the first round is paired."""
        self.resources = {p: self.initial_resources for p in self.players}
        self.actions = {p: [] for p in self.players}
        self.round = 0
        self.newcomers = newcomers
        for player in newcomers:
            self.strategy.pop(player, None)
        if self.strategies:
            self.phase = "strategy"
            for survivor in self.survivors:
                if survivor["strategy"]:
                    ctx.tell(f"The strategy of {survivor['player']}, a survivor of the last generation, follows.", to=newcomers)
                    ctx.say(survivor["player"], survivor["strategy"], to=newcomers)
        else:
            self.begin_round(ctx)

    def begin_round(self, ctx: Context) -> None:
        """Shuffle the players into a ring; each donates to the next."""
        self.phase = "donate"
        order = [self.players[int(i)] for i in ctx.rng.permutation(self.num_players)]
        self.recipient = {donor: order[(k + 1) % len(order)] for k, donor in enumerate(order)}

    # ------------------------------------------------------------------- text
    def to_move(self) -> list[str]:
        """The newcomers in a strategy phase; everyone in a round."""
        return list(self.newcomers) if self.phase == "strategy" else self.players

    def rules(self, player: str) -> str:
        """Rules, the parameters and the strategy phase if on."""
        clause = STRATEGY_CLAUSE.format(limit=MAX_STRATEGY) if self.strategies else ""
        return RULES.format(
            player=player,
            n=self.num_players,
            players=", ".join(self.players),
            generations=self.generations,
            rounds=self.rounds,
            initial=self.initial_resources,
            multiplier=self.multiplier,
            history=self.history,
            strategy_clause=clause,
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """A strategy request with the survivors' strategies, or this round's recipient and its history."""
        head = f"Generation {self.generation + 1} of {self.generations}"
        if self.phase == "strategy":
            lines = [f"{head}: you are a new individual. Write your strategy: [strategy] ..."]
            if self.survivors:
                survivors = ", ".join(
                    f"{s['player']} ({s['resources']:g} resources{'' if s['strategy'] else ', no strategy'})" for s in self.survivors
                )
                lines.append(
                    f"The survivors of the last generation, richest first: {survivors}. Their strategies were relayed to you in their own words."
                )
            return "\n".join(lines)
        recipient = self.recipient[player]
        lines = [f"{head}, round {self.round + 1} of {self.rounds}. You have {self.resources[player]:g} resources."]
        if self.strategies:
            lines.append(f"Your strategy: {self.strategy.get(player, '')}")
        lines.append(f"You are the donor; your recipient is {recipient}. {self.describe(recipient)}")
        lines.append("Reply with give N% (N = 0, 10, ..., 100).")
        return "\n".join(lines)

    def describe(self, player: str) -> str:
        """``player``'s recent donations in words, most recent first."""
        recent = self.recent(player)
        if not self.history:
            return "No history is shown in this game."
        if not recent:
            return f"{player} has not donated yet this generation."
        parts = []
        for action in recent:
            before = "had not donated before" if action["recipient_share"] is None else f"had given {action['recipient_share']}% before"
            parts.append(f"in round {action['round']} it gave {action['share']}% to {action['recipient']}, who {before}")
        return f"Recent history of {player}: " + "; ".join(parts) + "."

    def recent(self, player: str) -> list[dict[str, Any]]:
        """``player``'s last ``history`` donations this generation, most recent first."""
        return self.actions[player][::-1][: self.history]

    def legal_actions(self, player: str) -> list[int]:
        """Every share is always allowed (``strategies=False``)."""
        return list(range(len(SHARES)))

    def parse(self, player: str, text: str) -> str:
        """``give N%`` (the last one in the text) in a round; the strategy text after the last tag in a strategy phase."""
        if self.phase == "strategy":
            tags = list(STRATEGY_PATTERN.finditer(text))
            if not tags:
                raise InvalidMove('No strategy found. Reply "[strategy] " followed by your strategy in words.')
            strategy = text[tags[-1].end() :].strip()
            if not strategy:
                raise InvalidMove("Your strategy is empty. Write it after [strategy].")
            if len(strategy) > MAX_STRATEGY:
                raise InvalidMove(f"Your strategy has {len(strategy)} characters; the limit is {MAX_STRATEGY}.")
            return strategy
        found = GIVE_PATTERN.findall(text)
        if not found:
            raise InvalidMove("No donation found. Reply with give N%, N one of 0, 10, ..., 100 (for example: give 30%).")
        # 12.5 is refused, not read as 12.
        refusal = "give {written}% is not allowed: give a multiple of 10 from 0% to 100%."
        share = whole_number(found[-1], 0, 100, refusal, "give 30%")
        if share not in SHARES:
            raise InvalidMove(refusal.format(written=share))
        return f"give {share}%"

    # ------------------------------------------------------------------ rules
    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Record the strategies, or make every donation of the round at once; end generations and the game."""
        if self.phase == "strategy":
            for player in self.newcomers:
                self.strategy[player] = moves[player]
            self.newcomers = []
            self.begin_round(ctx)
            return
        shares = {donor: int(move[len("give ") : -1]) for donor, move in moves.items()}
        start = dict(self.resources)
        for donor, share in shares.items():
            recipient = self.recipient[donor]
            # Never more than the donor had: x * 100 / 100 can round above x, which left about -1e-15 resources.
            gift = min(start[donor], start[donor] * share / 100)
            self.resources[donor] -= gift
            self.resources[recipient] += self.multiplier * gift
            previous = self.actions[recipient][-1]["share"] if self.actions[recipient] else None
            self.actions[donor].append({"round": self.round + 1, "recipient": recipient, "share": share, "recipient_share": previous})
            self.donations.append(share / 100)
        for donor, share in shares.items():
            recipient = self.recipient[donor]
            benefactor = next(d for d, r in self.recipient.items() if r == donor)
            received = self.multiplier * start[benefactor] * shares[benefactor] / 100
            ctx.tell(
                f"Round {self.round + 1}: you gave {share}% ({start[donor] * share / 100:.4g}) to {recipient}; "
                f"{benefactor} gave you {shares[benefactor]}%, which brought you {received:.4g}. You have {self.resources[donor]:.4g} resources.",
                to=donor,
            )
        self.round += 1
        if self.round < self.rounds:
            self.begin_round(ctx)
            return
        self.end_generation(ctx)

    def end_generation(self, ctx: Context) -> None:
        """Pay the generation's resources, select the survivors, and start the next generation or end the game."""
        for player in self.players:
            ctx.reward(player, self.resources[player])
        given = self.donations[-self.rounds * self.num_players :]
        ranking = sorted(self.players, key=lambda p: (-self.resources[p], float(ctx.rng.random())))
        keep = ranking[: self.num_players // 2]
        self.past.append(
            {
                "cooperation_rate": float(np.mean(given)),
                "give_rate": float(np.mean([g > 0 for g in given])),
                "total_resources": sum(self.resources.values()),
                "resources": dict(self.resources),
                "survivors": keep if self.generation + 1 < self.generations else [],
                "strategies": dict(self.strategy),
            }
        )
        self.generation += 1
        standings = ", ".join(f"{p} {self.resources[p]:.4g}" for p in ranking)
        if self.generation == self.generations:
            ctx.tell(f"The last generation ended. Resources: {standings}.")
            ctx.finish(reason=f"all {self.generations} generation(s) were played", teams={"population": list(self.players)}, details=self.report())
            return
        self.survivors = [{"player": p, "resources": self.resources[p], "strategy": self.strategy.get(p, "")} for p in keep]
        replaced = [p for p in self.players if p not in keep]
        ctx.tell(
            f"Generation {self.generation} ended. Resources: {standings}. Survivors: {', '.join(keep)}. "
            f"Replaced by new individuals: {', '.join(replaced)}."
        )
        for player in replaced:
            ctx.tell(f"You ({player}) did not survive; you are now a new individual in generation {self.generation + 1}.", to=player)
        self.begin_generation(ctx, replaced)

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The offender's return becomes -1; the others keep what they were paid; nobody wins."""
        paid = sum(generation["resources"][player] for generation in self.past)
        ctx.finish({player: -1.0 - paid}, reason=reason, teams={"population": list(self.players)}, details=self.report())

    def report(self) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        return {
            "cooperation_rate": float(np.mean(self.donations)) if self.donations else 0.0,
            "give_rate": float(np.mean([d > 0 for d in self.donations])) if self.donations else 0.0,
            "total_resources": sum(generation["total_resources"] for generation in self.past),
            "final_resources": self.past[-1]["total_resources"] if self.past else 0.0,
            "generations": [dict(generation) for generation in self.past],
            "generations_played": len(self.past),
        }

    # ------------------------------------------------------------------ views
    def view(self, player: str) -> dict[str, Any]:
        """What ``player`` knows: the phase, its resources and strategy, its recipient's recent history, the
        survivors of the last generation (richest first, with their strategies) and the parameters."""
        recipient = self.recipient.get(player) if self.phase == "donate" else None
        return {
            "player": player,
            "phase": self.phase,
            "generation": self.generation,
            "generations": self.generations,
            "round": self.round,
            "rounds": self.rounds,
            "resources": self.resources[player],
            "strategy": self.strategy.get(player),
            "recipient": recipient,
            "recipient_history": [dict(action) for action in self.recent(recipient)] if recipient else [],
            "survivors": [dict(s) for s in self.survivors],
            "multiplier": self.multiplier,
            "initial_resources": self.initial_resources,
        }

    def vector(self, player: str) -> np.ndarray:
        """The generation and round fractions, own resources, and the recipient's history slots."""
        values = np.zeros(self.vector_size, dtype=np.float32)
        values[0] = self.generation / self.generations
        values[1] = self.round / self.rounds
        own = self.resources[player]
        values[2] = own / (own + self.initial_resources)
        if self.phase == "donate":
            for slot, action in enumerate(self.recent(self.recipient[player])):
                base = 3 + 4 * slot
                values[base] = 1.0
                values[base + 1] = action["share"] / 100
                if action["recipient_share"] is not None:
                    values[base + 2] = 1.0
                    values[base + 3] = action["recipient_share"] / 100
        return values

    def render(self) -> str:
        """Generation, round, phase and everyone's resources."""
        resources = ", ".join(f"{p}: {r:.4g}" for p, r in self.resources.items())
        generation = min(self.generation + 1, self.generations)
        return f"generation {generation}/{self.generations}, round {min(self.round + 1, self.rounds)}/{self.rounds} ({self.phase}); {resources}"
