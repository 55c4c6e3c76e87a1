"""Market: several traders with private values meet in a continuous double auction (Smith 1962; Gode and Sunder 1993).

Players ``player_0`` .. ``player_{n-1}``. ``difficulty`` (1 to 3, default 2)
sets the market: 3 traders and 2 goods, 4 traders and 3 goods, or 5 traders
and 4 goods, the goods taken in order from grain, wood, iron and cloth, whose
public base values are 10, 20, 30 and 40 coins a unit. Each trader holds 0 to
3 units of every good and 100 coins, and values a unit of each good privately:
a uniform integer within +-50% of its base value (a value per unit, the same
for every unit). Holdings, money and values are told only to their owner; the
order book and the trades are public. All draws come from the seed.

The game lasts ``rounds`` rounds (option, default 5, at most 100); in each,
the traders act once in seat order. Every turn's text must contain one move;
the last well-formed one counts and everything outside it is talk, delivered
verbatim to every other trader:

* ``[bid] wood 12``: an order to buy one unit of wood for at most 12 coins;
* ``[ask] wood 15``: an order to sell one unit of wood for at least 15 coins;
* ``[pass]``: only talk.

Prices are whole coins from 1 to :data:`MAX_PRICE`: a price written as a
fraction (``12.5``), with digit groups (``1,200``) or an exponent (``1e3``) is
an invalid action that says how to write it, never rounded. Good names are
case-insensitive, a plural ``s`` and a word ``at`` before the price are
tolerated. A trader has at most one bid and one ask per good: a new one
replaces its old one. A new order that crosses the book trades at once, one
unit, at the price of the standing order it meets (the best price, the
earliest order among equals), and the standing order is used up; otherwise it
is posted. So a trade's price is always the earlier order's, and a trader may
take a standing ask by bidding its price.

Orders are always covered: a bid is valid only if the trader's coins cover it
together with its other standing bids (a bid's coins are committed until it
is replaced or filled), an ask only if the trader holds a unit of the good,
and neither may meet the trader's own order on the other side. An order that
breaks these rules, an unknown good, a price out of range, or text without a
move is an invalid action. Because bids are committed and each unit is asked
for once, no standing order ever becomes impossible to fill.

Rewards, paid when the last round ends: each trader's surplus, the value at
its own values of the goods it gained (lost units count negatively) plus the
coins it gained, divided by its initial wealth (the value of its initial
goods at its values plus its 100 coins); so a reward lies in [-1, inf) and 0
means no net change. The trader with the highest reward wins (none on a tie).
A trader who exceeds the invalid-action allowance gets -1 (the least any trader
can end with) and the others are paid their rewards as they stand.

Outcome details: ``difficulty``; ``trades`` (how many); ``agreement`` (any
trade at all); ``surplus`` per trader and ``social_welfare`` (their sum), in
coins; ``max_social_welfare`` (the surplus of the efficient allocation, every
unit with a trader who values it most) and ``efficiency`` (the ratio, the
market's allocative efficiency, 1 when no trade could gain anything).

Version history: v0, first release.
"""

from __future__ import annotations

import re
from typing import Any

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import FrozenDict, freeze
from parlour.envs.core.game import Game, InvalidMove, int_option, winners_by_score
from parlour.envs.core.numbers import NUMBER, whole_number

GOODS = ("grain", "wood", "iron", "cloth")
#: Public base value of each good; private values lie within +-50% of it.
BASE_VALUES = (10, 20, 30, 40)
#: difficulty -> (traders, goods).
LEVELS = {1: (3, 2), 2: (4, 3), 3: (5, 4)}
#: Coins each trader starts with.
MONEY = 100
#: Most units of a good a trader starts with.
MAX_UNITS = 3
#: The highest price an order may name.
MAX_PRICE = 100

MOVE = re.compile(rf"\[(?P<side>bid|ask)\]\s*+(?::\s*+)?(?P<good>[a-z]++)\s++(?:at\s++)?(?P<price>{NUMBER})|\[(?P<pass>pass)\]", re.IGNORECASE)

RULES = """You are {player}, one of {n} traders ({players}) in a market for {goods}. It lasts {rounds} rounds; in each, every trader acts once, in that order.
Public base values per unit: {bases}. Each trader's own values lie within 50% of them and are private, like its holdings and coins.
Your private values per unit: {values}.
You hold: {holdings}, and {money} coins.
Your reward at the end is your surplus: the value, at your own values, of the goods you gained (minus those you lost), plus the coins you gained, divided by your initial wealth ({wealth}). The trader with the highest reward wins.
Each turn, write anything you like (it reaches every other trader word for word) and include exactly one move (the last one counts):
  [bid] wood 12    an order to buy one unit of wood for at most 12 coins
  [ask] wood 15    an order to sell one unit of wood for at least 15 coins
  [pass]           just talk
Prices are whole coins from 1 to {max_price}. You have at most one bid and one ask per good; a new one replaces the old. An order that meets a standing order of another trader (a bid at or above its ask, an ask at or below its bid) trades one unit at once, at the standing order's price; otherwise it waits in the public order book.
Your coins must cover all your standing bids together, you must hold a unit to ask, and you may not bid at or above your own ask (or ask at or below your own bid).
Example turn: "Anyone selling iron cheap? [bid] iron 24\""""


def goods_text(goods: tuple[str, ...], counts: list[int]) -> str:
    """Holdings in words, e.g. ``2 grain, 0 wood``."""
    return ", ".join(f"{n} {g}" for g, n in zip(goods, counts))


class Market(Game):
    """A continuous double auction among 3-5 traders with private values; see the module docstring."""

    name = "Market"
    reference_agents = ("shading", "random")
    description = (
        "Several traders with private values post bids and asks in a continuous double auction; "
        "difficulty 1-3 (default 2): 3 traders and 2 goods, 4 and 3, or 5 and 4."
    )
    category = "negotiation"
    zero_sum = False

    def __init__(self, *, difficulty: int = 2, rounds: int = 5):
        self.difficulty = int_option("difficulty", difficulty, 1, len(LEVELS))
        self.rounds = int_option("rounds", rounds, 1, 100)
        traders, kinds = LEVELS[difficulty]
        self.players = [f"player_{i}" for i in range(traders)]
        self.goods = GOODS[:kinds]
        self.bases = BASE_VALUES[:kinds]
        self.values: dict[str, list[int]] = {}
        self.initial: dict[str, list[int]] = {}
        self.holdings: dict[str, list[int]] = {}
        self.money: dict[str, int] = {}
        self.turn = 0
        self.clock = 0
        # Read-only and small (one bid and one ask per trader and good), so every view shares it.
        self.orders: tuple[FrozenDict, ...] = ()
        # Read-only entries in a tuple that only grows: views share it instead of copying it.
        self.trades: tuple[FrozenDict, ...] = ()

    def start(self, ctx: Context) -> None:
        """Draw each trader's private values and holdings; everyone starts with the same coins."""
        rng = ctx.rng
        self.values, self.initial = {}, {}
        for player in self.players:
            self.values[player] = [int(b + rng.integers(-(b // 2), b // 2 + 1)) for b in self.bases]
            self.initial[player] = [int(n) for n in rng.integers(0, MAX_UNITS + 1, size=len(self.goods))]
        self.holdings = {p: list(c) for p, c in self.initial.items()}
        self.money = {p: MONEY for p in self.players}
        self.turn = 0
        self.clock = 0
        self.orders = ()
        self.trades = ()

    # ----------------------------------------------------------------- helpers
    def value(self, player: str, counts: list[int]) -> int:
        """Value of ``counts`` units at ``player``'s private values."""
        return sum(v * n for v, n in zip(self.values[player], counts))

    def wealth(self, player: str) -> int:
        """``player``'s initial wealth: its initial goods at its own values plus its starting coins."""
        return self.value(player, self.initial[player]) + MONEY

    def surplus(self, player: str) -> int:
        """``player``'s surplus in coins now: value gained in goods plus coins gained."""
        gained = [h - i for h, i in zip(self.holdings[player], self.initial[player])]
        return self.value(player, gained) + self.money[player] - MONEY

    def order(self, player: str, good: str, side: str) -> FrozenDict | None:
        """``player``'s standing order on ``side`` of ``good``'s book, if any."""
        return next((o for o in self.orders if o["player"] == player and o["good"] == good and o["side"] == side), None)

    def committed(self, player: str, but: str | None = None) -> int:
        """Coins ``player``'s standing bids commit, leaving out its bid on ``but`` (the one a new bid replaces)."""
        return sum(o["price"] for o in self.orders if o["player"] == player and o["side"] == "bid" and o["good"] != but)

    def best(self, good: str, side: str, excluding: str) -> FrozenDict | None:
        """The best standing order on ``side`` of ``good`` of a trader other than ``excluding``: best price, then earliest."""
        sign = -1 if side == "bid" else 1
        found = [o for o in self.orders if o["good"] == good and o["side"] == side and o["player"] != excluding]
        return min(found, key=lambda o: (sign * o["price"], o["time"]), default=None)

    def book_text(self) -> str:
        """The order book, one good a line, best prices first."""
        lines = []
        for good in self.goods:
            bids = sorted((o for o in self.orders if o["good"] == good and o["side"] == "bid"), key=lambda o: (-o["price"], o["time"]))
            asks = sorted((o for o in self.orders if o["good"] == good and o["side"] == "ask"), key=lambda o: (o["price"], o["time"]))
            bid_text = ", ".join(f"{o['price']} ({o['player']})" for o in bids) or "none"
            ask_text = ", ".join(f"{o['price']} ({o['player']})" for o in asks) or "none"
            lines.append(f"  {good}: bids {bid_text}; asks {ask_text}")
        return "\n".join(lines)

    def values_text(self, player: str) -> str:
        """``player``'s private values as told to it, e.g. ``grain 12, wood 18``."""
        return ", ".join(f"{g} {v}" for g, v in zip(self.goods, self.values[player]))

    # -------------------------------------------------------------------- text
    def to_move(self) -> list[str]:
        """Traders act in seat order, round after round."""
        return [self.players[self.turn % len(self.players)]]

    def rules(self, player: str) -> str:
        """Rules, the trader's private values, holdings and coins."""
        return RULES.format(
            player=player,
            n=len(self.players),
            players=", ".join(self.players),
            goods=", ".join(self.goods),
            rounds=self.rounds,
            bases=", ".join(f"{g} {b}" for g, b in zip(self.goods, self.bases)),
            values=self.values_text(player),
            holdings=goods_text(self.goods, self.holdings[player]),
            money=self.money[player],
            wealth=self.wealth(player),
            max_price=MAX_PRICE,
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The round, the trader's private position and the public order book."""
        return (
            f"Round {self.turn // len(self.players) + 1} of {self.rounds}. Your values: {self.values_text(player)}.\n"
            f"You hold {goods_text(self.goods, self.holdings[player])} and {self.money[player]} coins "
            f"({self.committed(player)} committed to your bids).\nOrder book:\n{self.book_text()}\n"
            "Reply with [bid] GOOD PRICE, [ask] GOOD PRICE or [pass]."
        )

    def parse(self, player: str, text: str) -> dict[str, Any]:
        """The last well-formed move and the talk around it; ``InvalidMove`` if there is none or it breaks a rule."""
        found = list(MOVE.finditer(text))
        if not found:
            raise InvalidMove(f"No move found. Include one of: [bid] {self.goods[0]} 12 | [ask] {self.goods[0]} 15 | [pass].")
        match = found[-1]
        talk = (text[: match.start()] + text[match.end() :]).strip()
        if match.group("pass"):
            return {"type": "pass", "talk": talk}
        side = match.group("side").lower()
        word = match.group("good").lower()
        good = word[:-1] if word not in self.goods and word.endswith("s") and word[:-1] in self.goods else word
        if good not in self.goods:
            raise InvalidMove(f"Unknown good '{word}'. Goods: {', '.join(self.goods)}.")
        # 12.5, 1,200 and 1e3 are refused with a hint, never read as 12 or 1.
        price = whole_number(
            match.group("price"),
            1,
            MAX_PRICE,
            f"A price must be a whole number of coins from 1 to {MAX_PRICE}, got {{written}}.",
            f"[{side}] {good} 12",
        )
        if side == "bid":
            free = self.money[player] - self.committed(player, but=good)
            if price > free:
                raise InvalidMove(
                    f"Your coins do not cover this bid: {self.money[player]} coins, {self.money[player] - free} committed to your other bids."
                )
            own = self.order(player, good, "ask")
            if own is not None and price >= own["price"]:
                raise InvalidMove(f"A bid of {price} would meet your own ask of {own['price']} on {good}.")
        else:
            if not self.holdings[player][self.goods.index(good)]:
                raise InvalidMove(f"You hold no {good} to sell.")
            own = self.order(player, good, "bid")
            if own is not None and price <= own["price"]:
                raise InvalidMove(f"An ask of {price} would meet your own bid of {own['price']} on {good}.")
        return {"type": side, "good": good, "price": price, "talk": talk}

    # ------------------------------------------------------------------- rules
    def apply(self, ctx: Context, moves: dict[str, dict[str, Any]]) -> None:
        """Deliver the talk, then match or post the order; pay out after the last round."""
        ((player, move),) = moves.items()
        if move["talk"]:
            ctx.say(player, move["talk"], to=[p for p in self.players if p != player])
        if move["type"] == "pass":
            ctx.tell(f"{player} passes.", kind="move", sender=player)
        else:
            self.place(ctx, player, move["type"], move["good"], move["price"])
        self.turn += 1
        if self.turn >= self.rounds * len(self.players):
            self.end(ctx)

    def place(self, ctx: Context, player: str, side: str, good: str, price: int) -> None:
        """Replace ``player``'s order on that side of ``good``, then trade against the best crossing order or post it."""
        self.orders = tuple(o for o in self.orders if not (o["player"] == player and o["good"] == good and o["side"] == side))
        verb = "bids" if side == "bid" else "asks"
        ctx.tell(f"{player} {verb} {price} for one {good}.", kind="move", sender=player)
        opposite = self.best(good, "ask" if side == "bid" else "bid", excluding=player)
        if opposite is not None and (opposite["price"] <= price if side == "bid" else opposite["price"] >= price):
            buyer, seller = (player, opposite["player"]) if side == "bid" else (opposite["player"], player)
            self.orders = tuple(o for o in self.orders if o is not opposite)
            i = self.goods.index(good)
            self.holdings[buyer][i] += 1
            self.holdings[seller][i] -= 1
            self.money[buyer] -= opposite["price"]
            self.money[seller] += opposite["price"]
            self.trades += (freeze({"turn": self.turn, "good": good, "price": opposite["price"], "buyer": buyer, "seller": seller}),)
            ctx.tell(f"Trade: {buyer} buys one {good} from {seller} at {opposite['price']}.")
            return
        self.orders += (freeze({"player": player, "good": good, "side": side, "price": price, "time": self.clock}),)
        self.clock += 1

    def efficient_welfare(self) -> int:
        """The surplus, in coins, of the efficient allocation: every unit with a trader who values it most."""
        gain = 0
        for i in range(len(self.goods)):
            top = max(self.values[p][i] for p in self.players)
            gain += sum((top - self.values[p][i]) * self.initial[p][i] for p in self.players)
        return gain

    def report(self) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        surplus = {p: self.surplus(p) for p in self.players}
        welfare, best = sum(surplus.values()), self.efficient_welfare()
        return {
            "difficulty": self.difficulty,
            "trades": len(self.trades),
            "agreement": bool(self.trades),
            "surplus": surplus,
            "social_welfare": welfare,
            "max_social_welfare": best,
            "efficiency": welfare / best if best else 1.0,
        }

    def end(self, ctx: Context) -> None:
        """Pay each trader its surplus over its initial wealth; the sole best-off trader wins."""
        rewards = {p: self.surplus(p) / self.wealth(p) for p in self.players}
        leaders = winners_by_score(rewards)
        ctx.finish(
            rewards,
            winners=leaders if len(leaders) == 1 else [],
            reason=f"the market closed after {len(self.trades)} trade(s)",
            details=self.report(),
        )

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """-1 to the offender; the others are paid their rewards as they stand, the sole best-off of them wins."""
        rewards = {p: -1.0 if p == player else self.surplus(p) / self.wealth(p) for p in self.players}
        leaders = winners_by_score({p: r for p, r in rewards.items() if p != player})
        ctx.finish(rewards, winners=leaders if len(leaders) == 1 else [], reason=reason, details=self.report())

    # ------------------------------------------------------------------- views
    def view(self, player: str) -> dict[str, Any]:
        """Own values, holdings and coins, the public order book and trades (shared, read-only), and the clock."""
        return {
            "player": player,
            "players": list(self.players),
            "goods": list(self.goods),
            "base_values": list(self.bases),
            "values": list(self.values[player]),
            "holdings": list(self.holdings[player]),
            "money": self.money[player],
            "initial_holdings": list(self.initial[player]),
            "turn": self.turn,
            "round": self.turn // len(self.players),
            "rounds": self.rounds,
            "max_price": MAX_PRICE,
            "orders": self.orders,
            "trades": self.trades,
        }

    def render(self) -> str:
        """Every trader's values, holdings, coins and surplus, and the order book."""
        lines = [f"turn {self.turn} of {self.rounds * len(self.players)}, trades: {len(self.trades)}"]
        for player in self.players:
            lines.append(
                f"{player}: values {self.values_text(player)}; holds {goods_text(self.goods, self.holdings[player])}, "
                f"{self.money[player]} coins; surplus {self.surplus(player):+d}"
            )
        lines.append(self.book_text())
        return "\n".join(lines)
