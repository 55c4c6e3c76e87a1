"""ResourceTrade: two traders swap bundles of resources they value privately (TextArena's SimpleNegotiation).

Players ``player_0`` and ``player_1`` each hold 1 to ``max_count`` (option,
default 3, at most 5) units of every resource (wheat, wood, sheep, brick,
ore). Each player values a unit of each resource privately: a uniform integer
within +-50% of the public base values 5, 10, 15, 25, 40. Inventories are
public; values are told only to their owner. All draws come from the seed.

Players alternate for ``deadline`` (option, default 10, at most 1000) turns
in all, ``player_0`` first; the game then ends and pays out (an outcome of the
rules: the engine's own ``max_turns`` option, if set, truncates the episode
instead, unpaid). Every turn's text must contain one move; the last
well-formed one counts, and everything outside it is talk, delivered verbatim
to the other player:

* ``[offer] I give 2 wheat, 1 wood; you give 3 ore`` proposes a trade (either
  side may be ``nothing``, not both). The offerer must hold what it gives and
  the other player what it is asked for. The offer stands until the other
  player's next turn.
* ``[accept]`` executes the standing offer made to you. Inventories change
  only through accepted trades, so an offer that was feasible when made is
  still feasible when accepted.
* ``[deny]`` rejects the standing offer made to you.
* ``[pass]`` only talks. Any reply other than ``[accept]`` (a counter-offer,
  ``[deny]``, ``[pass]``) ends the standing offer.

Resource names are case-insensitive and a plural ``s`` is tolerated. Text
without a move, an offer of resources not held, or ``[accept]``/``[deny]``
with no offer standing is an invalid action.

Rewards, paid when the turns run out: each player's change in inventory value
at its own values, normalised by its initial inventory value, so a reward is a
relative gain in [-1, inf) and 0 means no net change. Winner: the player with
the higher reward (``None`` on a tie). A player who exceeds the invalid-action
allowance gets -1 and the other 0 (the core default); trades made stand but
are not paid.

Outcome details: :func:`parlour.envs.negotiation.analysis.negotiation_report`
plus ``trades`` (how many trades executed). Its feasible outcomes are the
reallocations of the pooled inventory (any of them is reachable with one
trade), in reward units, disagreement = no trade (0, 0). Only the Pareto-
undominated reallocations are passed, built resource by resource (the frontier
of a sum of independent choices lies in the sum of their frontiers): that
keeps the set small while leaving the frontier, the utility range, the welfare
maximum and the Nash product maximum exact. ``max_count`` is capped at 5 so
that this analysis stays well under a second.

Version history: v0, first release (the turn limit, first named ``max_turns``,
became ``deadline`` when the engine took that name for truncation).
"""

from __future__ import annotations

import re
from typing import Any

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import FrozenDict, freeze
from parlour.envs.core.game import Game, InvalidMove, int_option, winners_by_score
from parlour.envs.negotiation.analysis import negotiation_report, pareto_frontier

RESOURCES = ("wheat", "wood", "sheep", "brick", "ore")
#: Public base value of each resource; private values lie within +-50% of it.
BASE_VALUES = (5, 10, 15, 25, 40)

_ITEM = r"\d++\s++[a-z]++"
_BUNDLE = rf"(?:nothing|{_ITEM}(?:\s*+(?:,|and)\s*+{_ITEM})*+)"
MOVE_PATTERN = re.compile(
    rf"\[(?P<tag>accept|deny|pass)\]"
    rf"|\[offer\]\s*+(?::\s*+)?i\s++give\s++(?P<give>{_BUNDLE})\s*+(?:[;,.]\s*+)?(?:and\s++)?you\s++give\s++(?P<get>{_BUNDLE})",
    re.IGNORECASE,
)
_ITEM_PATTERN = re.compile(r"(\d+)\s+([a-z]+)", re.IGNORECASE)

RULES = """You are {player} in a resource trading game with {other}. You play {order}; the game lasts {deadline} turns in all (both players' turns counted).
Resources: wheat, wood, sheep, brick, ore. Inventories are public; each player's value of a unit of each resource is private. Base values are wheat 5, wood 10, sheep 15, brick 25, ore 40; each player's own values lie within 50% of them.
Your private values per unit: {values}.
Your inventory: {mine}. {other}'s inventory: {theirs}.
Your reward at the end is the change in the value of your inventory at your own values, divided by its initial value ({initial}). The player with the higher reward wins.
Each turn, write anything you like to {other} and include exactly one move (the last one counts; everything else is delivered to {other} word for word):
  [offer] I give 2 wheat, 1 wood; you give 3 ore   (propose a trade; a side may be "nothing")
  [accept]   (accept the offer {other} just made you; the trade executes)
  [deny]     (reject the offer {other} just made you)
  [pass]     (just talk)
An offer stands until the other player's next turn; any reply but [accept] ends it.
Example turn: "Ore is scarce for me. [offer] I give 3 wheat; you give 1 ore\""""


def bundle_text(bundle: dict[str, int]) -> str:
    """A bundle in the move grammar, e.g. ``2 wheat, 1 ore``; ``nothing`` when empty."""
    return ", ".join(f"{n} {r}" for r, n in bundle.items()) or "nothing"


def offer_text(give: dict[str, int], get: dict[str, int]) -> str:
    """The ``[offer]`` move for giving ``give`` and getting ``get``."""
    return f"[offer] I give {bundle_text(give)}; you give {bundle_text(get)}"


def inventory_text(counts: list[int]) -> str:
    """An inventory in words, e.g. ``3 wheat, 1 wood, ...``."""
    return ", ".join(f"{n} {r}" for r, n in zip(RESOURCES, counts))


def _parse_bundle(text: str) -> dict[str, int]:
    """Counts per resource of a bundle written in the grammar; ``InvalidMove`` on an unknown resource."""
    bundle: dict[str, int] = {}
    for count, word in _ITEM_PATTERN.findall(text):
        name = word.lower()
        if name not in RESOURCES and name.endswith("s") and name[:-1] in RESOURCES:
            name = name[:-1]
        if name not in RESOURCES:
            raise InvalidMove(f"Unknown resource '{word}'. Resources: {', '.join(RESOURCES)}.")
        if int(count) > 0:
            bundle[name] = bundle.get(name, 0) + int(count)
    return {r: bundle[r] for r in RESOURCES if r in bundle}


class ResourceTrade(Game):
    """Two-player bundle trading with private values; see the module docstring for the grammar and rewards."""

    name = "ResourceTrade"
    reference_agents = ("boulware", "random")
    description = "Two traders with private resource values swap bundles for a fixed number of turns."
    category = "negotiation"
    zero_sum = False

    def __init__(self, *, deadline: int = 10, max_count: int = 3):
        int_option("deadline", deadline, 1, 1000)
        int_option("max_count", max_count, 1, 5)
        self.deadline = deadline
        self.max_count = max_count
        self.players = ["player_0", "player_1"]
        self.values: dict[str, list[int]] = {}
        self.initial: dict[str, list[int]] = {}
        self.inventory: dict[str, list[int]] = {}
        self.turn = 0
        # Read-only, so that views share them: the history is a tuple that only grows.
        self.standing: FrozenDict | None = None
        self.history: tuple[FrozenDict, ...] = ()
        self.trades = 0

    def start(self, ctx: Context) -> None:
        """Deal inventories and private values."""
        rng = ctx.rng
        self.values = {}
        self.initial = {}
        for player in self.players:
            self.values[player] = [int(b + rng.integers(-(b // 2), b // 2 + 1)) for b in BASE_VALUES]
            self.initial[player] = [int(n) for n in rng.integers(1, self.max_count + 1, size=len(RESOURCES))]
        self.inventory = {p: list(c) for p, c in self.initial.items()}
        self.turn = 0
        self.standing = None
        self.history = ()
        self.trades = 0

    def value(self, player: str, counts: list[int]) -> int:
        """Value of ``counts`` at ``player``'s private values."""
        return sum(v * n for v, n in zip(self.values[player], counts))

    def gain(self, player: str) -> float:
        """``player``'s reward now: change in inventory value over its initial value."""
        start = self.value(player, self.initial[player])
        return (self.value(player, self.inventory[player]) - start) / start

    def to_move(self) -> list[str]:
        """Players alternate, ``player_0`` first."""
        return [self.players[self.turn % 2]]

    def rules(self, player: str) -> str:
        """Rules, the player's private values and both inventories."""
        other = self.other(player)
        return RULES.format(
            player=player,
            other=other,
            order="first" if player == self.players[0] else "second",
            deadline=self.deadline,
            values=self.values_text(player),
            mine=inventory_text(self.inventory[player]),
            theirs=inventory_text(self.inventory[other]),
            initial=self.value(player, self.initial[player]),
        )

    def values_text(self, player: str) -> str:
        """``player``'s private values as stated to it, e.g. ``wheat=5, wood=12, ...``."""
        return ", ".join(f"{r}={v}" for r, v in zip(RESOURCES, self.values[player]))

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """Turn, inventories, the standing offer and the moves."""
        other = self.other(player)
        lines = [
            f"Turn {self.turn + 1} of {self.deadline}. Your values: {self.values_text(player)}.",
            f"Your inventory: {inventory_text(self.inventory[player])}. {other}'s inventory: {inventory_text(self.inventory[other])}.",
        ]
        if self.standing is not None and self.standing["to"] == player:
            lines.append(
                f"{other}'s standing offer to you: {other} gives {bundle_text(self.standing['give'])}; "
                f"you give {bundle_text(self.standing['get'])}. Reply [accept], [deny], a counter [offer], or [pass]."
            )
        else:
            lines.append("Make an [offer] I give ...; you give ..., or [pass].")
        return "\n".join(lines)

    def parse(self, player: str, text: str) -> dict[str, Any]:
        """The last well-formed move in ``text`` and the talk around it; ``InvalidMove`` if there is none or it breaks a rule."""
        found = list(MOVE_PATTERN.finditer(text))
        if not found:
            raise InvalidMove("No move found. Include one of: [offer] I give 2 wheat; you give 1 ore | [accept] | [deny] | [pass].")
        match = found[-1]
        talk = (text[: match.start()] + text[match.end() :]).strip()
        tag = match.group("tag")
        if tag is not None:
            kind = tag.lower()
            if kind in ("accept", "deny") and (self.standing is None or self.standing["to"] != player):
                raise InvalidMove(f"There is no offer to {kind}. Make an [offer] or [pass].")
            return {"type": kind, "talk": talk}
        give, get = _parse_bundle(match.group("give")), _parse_bundle(match.group("get"))
        if not give and not get:
            raise InvalidMove("An offer must give or ask for something.")
        for owner, bundle, whose in ((player, give, "You hold"), (self.other(player), get, f"{self.other(player)} holds")):
            for resource, count in bundle.items():
                held = self.inventory[owner][RESOURCES.index(resource)]
                if count > held:
                    raise InvalidMove(f"{whose} only {held} {resource}, not {count}.")
        return {"type": "offer", "give": give, "get": get, "talk": talk}

    def apply(self, ctx: Context, moves: dict[str, dict[str, Any]]) -> None:
        """Deliver the talk, then make, accept or reject an offer; pay out after the last turn."""
        ((player, move),) = moves.items()
        other = self.other(player)
        if move["talk"]:
            ctx.say(player, move["talk"], to=other)
        kind = move["type"]
        event: dict[str, Any] = {"turn": self.turn, "player": player, "type": kind}
        if kind == "offer":
            self.standing = freeze({"from": player, "to": other, "give": move["give"], "get": move["get"]})
            event.update(to=other, give=move["give"], get=move["get"])
            ctx.tell(
                f"{player} offers: {player} gives {bundle_text(move['give'])}; {other} gives {bundle_text(move['get'])}.",
                kind="move",
                sender=player,
            )
        elif kind == "accept":
            assert self.standing is not None
            self.execute(self.standing)
            ctx.tell(f"{player} accepts: the trade is done.", kind="move", sender=player)
            self.standing = None
        else:
            if kind == "deny":
                ctx.tell(f"{player} rejects the offer.", kind="move", sender=player)
            self.standing = None
        self.history += (freeze(event),)
        self.turn += 1
        if self.turn >= self.deadline:
            self.end(ctx)

    def execute(self, offer: dict[str, Any]) -> None:
        """Move the offered bundles between the two inventories."""
        for resource, count in offer["give"].items():
            i = RESOURCES.index(resource)
            self.inventory[offer["from"]][i] -= count
            self.inventory[offer["to"]][i] += count
        for resource, count in offer["get"].items():
            i = RESOURCES.index(resource)
            self.inventory[offer["to"]][i] -= count
            self.inventory[offer["from"]][i] += count
        self.trades += 1

    def end(self, ctx: Context) -> None:
        """Pay each player's relative gain and report the analysis; the higher gain wins, a tie is a draw."""
        rewards = {p: self.gain(p) for p in self.players}
        leaders = winners_by_score(rewards)
        details = negotiation_report(rewards, self.feasible_outcomes(), {p: 0.0 for p in self.players}, self.trades > 0)
        details["trades"] = self.trades
        ctx.finish(
            rewards,
            winners=leaders if len(leaders) == 1 else [],
            reason=f"the turns ran out after {self.trades} trade(s)",
            details=details,
        )

    def feasible_outcomes(self) -> list[tuple[float, ...]]:
        """The Pareto-undominated reallocations of the pooled inventory, in reward units (see the module docstring)."""
        first, second = self.players
        scale = [self.value(p, self.initial[p]) for p in self.players]
        frontier: list[tuple[float, ...]] = [(0.0, 0.0)]
        for i in range(len(RESOURCES)):
            held = (self.initial[first][i], self.initial[second][i])
            pooled = sum(held)
            choices = [(self.values[first][i] * (k - held[0]), self.values[second][i] * (pooled - k - held[1])) for k in range(pooled + 1)]
            frontier = pareto_frontier([(a + x, b + y) for a, b in frontier for x, y in choices])
        return [(a / scale[0], b / scale[1]) for a, b in frontier]

    def view(self, player: str) -> dict[str, Any]:
        """Own values, both inventories, the turn, the standing offer and the public offer history (shared, read-only)."""
        other = self.other(player)
        return {
            "player": player,
            "values": list(self.values[player]),
            "inventory": list(self.inventory[player]),
            "other_inventory": list(self.inventory[other]),
            "initial_inventory": list(self.initial[player]),
            "turn": self.turn,
            "deadline": self.deadline,
            "standing_offer": self.standing,
            "history": self.history,
        }

    def render(self) -> str:
        """Both players' values and inventories, the turns played and the standing offer."""
        lines = [f"{self.turn} of {self.deadline} turns played, trades: {self.trades}"]
        for player in self.players:
            lines.append(
                f"{player}: values {self.values_text(player)}; inventory {inventory_text(self.inventory[player])}; gain {self.gain(player):+.3f}"
            )
        if self.standing is not None:
            lines.append(
                f"standing offer: {offer_text(self.standing['give'], self.standing['get'])} ({self.standing['from']} -> {self.standing['to']})"
            )
        return "\n".join(lines)
