"""PriceNegotiation: a buyer and a seller haggle over one item (Fu et al. 2023), with an optional critic.

The ``seller`` values the item at a private reservation price (its cost: it
will not sell for less) and the ``buyer`` at a private reservation price (its
value: it will not pay more). Both are whole numbers drawn from the seed: the
seller's in [40, 100], the buyer's 20 to 100 above it, so a deal is always
possible; prices are whole numbers from 0 to ``max_price`` (200). Players
alternate, the seller first. On each turn a player writes free text and one
move:

* ``[offer] 120`` -- propose a price (``$120`` also works; a number with
  separators or an exponent, such as ``1,200`` or ``1e3``, is refused, never
  read as 1); it replaces the standing offer;
* ``[accept]`` -- accept the other side's standing offer: the item is sold at
  that price;
* ``[pass]`` -- talk only, no offer this turn.

Everything outside the move is delivered verbatim to the other side. The last
well-formed move in the text counts; text without one, a price outside
[0, max_price] or ``[accept]`` with no offer of the other side standing is an
invalid action. After ``deadline`` negotiator turns (default 20) without a
deal the game ends with no sale: an outcome of the rules, whereas the engine's
own ``max_turns`` option, if set, truncates the episode (critic turns count
there too).

Critic (``critic=True``): a third seat, ``critic``, sees the whole dialogue
(never a reservation price) and after every round (one turn of each side)
sends advice to the side named by ``advise`` (default ``"seller"``); its
action is the advice text itself (any non-blank text), delivered verbatim to
that side only. The critic's reward is the advised side's surplus; it is never
among the winners.

Rewards: on a sale at price p, the seller gets p - seller's reservation and the
buyer buyer's reservation - p (their surplus; either may be negative if it
accepts a bad price); with no sale both get 0. Winner: on a sale, the side
with the larger surplus (none on a tie or with no sale). A player exceeding
the invalid-action allowance gets -1 and the others 0; the other side wins
when a side forfeits, nobody when the critic does. The outcome's ``details``
hold the analysis of :mod:`parlour.envs.negotiation.analysis` over every whole
price, plus both reservation prices and the price.

Version history: v0, first release (the turn limit, first named ``max_turns``,
became ``deadline`` when the engine took that name for truncation).
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

SIDES = ("seller", "buyer")
SELLER_RANGE = (40, 100)
GAP_RANGE = (20, 100)

#: Largest ``max_price``: the end-of-game analysis enumerates every price.
MAX_PRICE = 10_000
# The price is group 3, the whole number as written (1,200 and 1e3 included), for whole_number to read or refuse.
MOVE = re.compile(rf"\[\s*+(offer|accept|pass)\s*+\](\s*+(?:\$\s*+)?(-?{NUMBER}))?", re.IGNORECASE)


@functools.lru_cache(maxsize=256)
def price_space(max_price: int, seller: int, buyer: int) -> NegotiationSpace:
    """The analysis of an instance (both surpluses at every whole price; no sale pays 0 each), built once per instance.

    The frontier and Nash solution over every price cost far more than the rest of the final step, and the same
    instance comes back in replays, branches from snapshots and other agents on the same seeds. The cache is bounded,
    as reservation prices make thousands of instances.
    """
    outcomes = [(float(p - seller), float(buyer - p)) for p in range(max_price + 1)]
    return NegotiationSpace(outcomes, (0.0, 0.0))


RULES = """You are the {player} in a price negotiation over one item.
Your private reservation price is {reservation}: {meaning}. The {other} has its own private reservation price, which you do not know.
Prices are whole numbers from 0 to {max_price}. Sides alternate turns, the seller first; at most {deadline} turns in all. With no deal by then, nobody gets anything.
Your reward is your surplus: {surplus}.
On your turn, write anything you like (it is sent to the {other} word for word) and end with one move:
  [offer] <price>   propose a price
  [accept]          accept the {other}'s standing offer
  [pass]            talk only, no offer this turn
The last move in your text counts. Example:
  This is a fine item, barely used. [offer] 150"""

CRITIC_RULES = """You are the critic in a price negotiation between a seller and a buyer over one item.
You see the whole dialogue. After every round you advise the {advised}: whatever you write is sent to the {advised} word for word, and to nobody else.
Your reward is the {advised}'s surplus, so help it get a good deal. Prices are whole numbers from 0 to {max_price}; the negotiation lasts at most {deadline} turns.
Example advice: Hold firm near your last offer; the other side is conceding quickly."""


class PriceNegotiation(Game):
    """Bilateral price haggling over one item with private reservation prices; see the module docstring."""

    name = "PriceNegotiation"
    reference_agents = ("boulware", "random")
    description = "A buyer and a seller with private reservation prices haggle over one item; an optional critic advises one side."
    category = "negotiation"
    zero_sum = False

    def __init__(
        self,
        *,
        deadline: int = 20,
        max_price: int = 200,
        critic: bool = False,
        advise: str = "seller",
    ):
        int_option("deadline", deadline, 2)
        # The lowest max_price is the highest buyer reservation price.
        int_option("max_price", max_price, SELLER_RANGE[1] + GAP_RANGE[1], MAX_PRICE)
        if not isinstance(critic, bool):
            raise ValueError(f"critic must be True or False, got {critic!r}")
        if advise not in SIDES:
            raise ValueError(f"advise must be one of {SIDES}, got {advise!r}")
        self.deadline = deadline
        self.max_price = max_price
        self.critic = critic
        self.advise = advise
        self.players = [*SIDES, "critic"] if critic else list(SIDES)
        self.reservation: dict[str, int] = {}
        self.turn = 0
        self.critic_due = False
        # Read-only entries in a tuple that only grows: every view shares it instead of copying it.
        self.offers: tuple[FrozenDict, ...] = ()
        self.dialogue: list[str] = []
        self.price: int | None = None

    def start(self, ctx: Context) -> None:
        """Draw both reservation prices."""
        seller = int(ctx.rng.integers(SELLER_RANGE[0], SELLER_RANGE[1] + 1))
        buyer = seller + int(ctx.rng.integers(GAP_RANGE[0], GAP_RANGE[1] + 1))
        self.reservation = {"seller": seller, "buyer": buyer}
        self.turn = 0
        self.critic_due = False
        self.offers = ()
        self.dialogue = []
        self.price = None

    # ----------------------------------------------------------------- helpers
    def surplus(self, side: str, price: float) -> float:
        """``side``'s surplus at ``price``."""
        r = self.reservation[side]
        return float(price - r if side == "seller" else r - price)

    def standing(self) -> dict[str, Any] | None:
        """The latest offer, ``{"player": side, "price": p}``, or ``None``."""
        return self.offers[-1] if self.offers else None

    def _say(self, ctx: Context, text: str, to: list[str], kind: str, sender: str, words: str | None = None) -> None:
        """Tell ``to`` (and the critic, if any) what ``sender`` did, or relay its ``words``; keep the line in the dialogue the critic sees."""
        self.dialogue.append(text)
        targets = [*to, "critic"] if self.critic and "critic" not in to else to
        if words is None:
            ctx.tell(text, to=targets, kind=kind, sender=sender)
        else:
            ctx.say(sender, words, to=targets)

    # -------------------------------------------------------------------- text
    def to_move(self) -> list[str]:
        """The critic after each round when present, otherwise the sides in turn, the seller first."""
        if self.critic_due:
            return ["critic"]
        return [SIDES[self.turn % 2]]

    def rules(self, player: str) -> str:
        """Rules and, for a side, its own reservation price."""
        if player == "critic":
            return CRITIC_RULES.format(advised=self.advise, max_price=self.max_price, deadline=self.deadline)
        meaning = "you will not sell for less" if player == "seller" else "you will not pay more"
        surplus = "the price minus your reservation price" if player == "seller" else "your reservation price minus the price"
        return RULES.format(
            player=player,
            other=self.other(player),
            reservation=self.reservation[player],
            meaning=meaning,
            max_price=self.max_price,
            deadline=self.deadline,
            surplus=surplus,
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The clock and the standing offer."""
        standing = self.standing()
        offer = "No offer stands yet." if standing is None else f"Standing offer: {standing['player']} at {standing['price']}."
        if player == "critic":
            return f"Round {self.turn // 2} is over; {self.deadline - self.turn} turns left. {offer}\nWrite your advice to the {self.advise}."
        return f"Turn {self.turn + 1} of {self.deadline}. {offer}\nWrite your message and end with [offer] <price>, [accept] or [pass]."

    def parse(self, player: str, text: str) -> dict[str, Any]:
        """Advice for the critic; for a side, the last well-formed move and the talk around it."""
        if player == "critic":
            if not text.strip():
                raise InvalidMove("Write some advice (any non-blank text).")
            return {"move": "advise", "talk": text}
        for found in reversed(list(MOVE.finditer(text))):
            kind = found.group(1).lower()
            end = found.end() if kind == "offer" else found.start(2) if found.group(2) else found.end()
            talk = (text[: found.start()] + text[end:]).strip()
            if kind == "offer":
                if found.group(3) is None:
                    continue
                price = whole_number(
                    found.group(3), 0, self.max_price, f"Prices are whole numbers from 0 to {self.max_price}, got {{written}}.", "[offer] 12"
                )
                return {"move": "offer", "price": price, "talk": talk}
            if kind == "accept":
                standing = self.standing()
                if standing is None or standing["player"] == player:
                    raise InvalidMove("There is no offer of the other side to accept; use [offer] <price> or [pass].")
            return {"move": kind, "talk": talk}
        raise InvalidMove("No move found. End with [offer] <price>, [accept] or [pass].")

    # ------------------------------------------------------------------- rules
    def apply(self, ctx: Context, moves: dict[str, dict[str, Any]]) -> None:
        """Deliver talk and advice, record offers, close a sale; end at the deadline."""
        ((player, move),) = moves.items()
        if player == "critic":
            self.critic_due = False
            ctx.say(player, move["talk"], to=self.advise)
            return
        other = self.other(player)
        if move["talk"]:
            self._say(ctx, f'{player} says: "{move["talk"]}"', to=[other], kind="talk", sender=player, words=move["talk"])
        self.turn += 1
        if move["move"] == "offer":
            self.offers += (FrozenDict(player=player, price=move["price"]),)
            self._say(ctx, f"{player} offers {move['price']}.", to=list(SIDES), kind="move", sender=player)
        elif move["move"] == "accept":
            standing = self.standing()
            assert standing is not None
            self._say(ctx, f"{player} accepts {other}'s offer of {standing['price']}.", to=list(SIDES), kind="move", sender=player)
            self.price = standing["price"]
            self._end(ctx, agreed=True, reason=f"sold at {self.price}")
            return
        else:
            self._say(ctx, f"{player} makes no offer this turn.", to=[other], kind="move", sender=player)
        if self.turn >= self.deadline:
            self._end(ctx, agreed=False, reason=f"no deal within {self.deadline} turns")
        elif self.critic and self.turn % 2 == 0:
            self.critic_due = True

    def analysis(self, agreed: bool) -> dict[str, Any]:
        """The negotiation report over every whole price, with the reservation prices and the price."""
        utilities = {side: self.surplus(side, self.price) if agreed and self.price is not None else 0.0 for side in SIDES}
        report = price_space(self.max_price, self.reservation["seller"], self.reservation["buyer"]).report(utilities, agreed)
        report["reservation"] = {side: float(r) for side, r in self.reservation.items()}
        report["price"] = float(self.price) if agreed and self.price is not None else None
        return report

    def _end(self, ctx: Context, agreed: bool, reason: str) -> None:
        """Pay the surpluses (the critic its side's) and finish; on a sale the side with the larger surplus wins."""
        report = self.analysis(agreed)
        rewards = dict(report["utilities"])
        if self.critic:
            rewards["critic"] = rewards[self.advise]
        leaders = winners_by_score(report["utilities"])
        winners = leaders if agreed and len(leaders) == 1 else []
        ctx.finish(rewards, winners=winners, reason=reason, details=report)

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """-1 to the offender, 0 to the others; the analysis treats it as no sale.

        The other side wins when a side forfeits; the critic, never a winner, makes nobody win by forfeiting.
        """
        rewards = {p: -1.0 if p == player else 0.0 for p in self.players}
        winners = [self.other(player)] if player in SIDES else []
        ctx.finish(rewards, winners=winners, reason=reason, details=self.analysis(agreed=False))

    # ------------------------------------------------------------------- views
    def view(self, player: str) -> dict[str, Any]:
        """The public offers (a shared, read-only tuple) and clock, plus a side's own reservation price (the critic gets the dialogue)."""
        view: dict[str, Any] = {
            "player": player,
            "turn": self.turn,
            "deadline": self.deadline,
            "max_price": self.max_price,
            "offers": self.offers,
            "standing": self.standing(),
        }
        if player == "critic":
            view["advise"] = self.advise
            view["dialogue"] = list(self.dialogue)
        else:
            view["reservation"] = self.reservation[player]
        return view

    def render(self) -> str:
        """Both reservation prices, the offers, the turns played and the sale, if any."""
        lines = [f"seller reservation {self.reservation['seller']}, buyer reservation {self.reservation['buyer']}"]
        lines += [f"  {o['player']} offers {o['price']}" for o in self.offers]
        lines.append(f"{self.turn} of {self.deadline} turns played")
        if self.price is not None:
            lines.append(f"sold at {self.price}")
        return "\n".join(lines)
