"""What Bargaining and DealOrWalk share: two players split a pool of items by proposing what the proposer keeps.

Both read the same moves (``[propose] 2 books, 1 hat, 0 balls``, ``[accept]``,
``[pass]``), show the standing proposal alike and settle a deal alike; each
game adds its own rules text, its payoffs without a deal and any move of its
own (DealOrWalk's ``[walk]``).
"""

from __future__ import annotations

import itertools
import re
from typing import Any, ClassVar, Sequence

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import FrozenDict
from parlour.envs.core.game import InvalidMove, winners_by_score
from parlour.envs.core.numbers import LISTED_NUMBER, whole_number
from parlour.envs.negotiation.analysis import negotiation_report

COUNT = re.compile(rf"({LISTED_NUMBER})\s*([a-z]+)?", re.IGNORECASE)


def read_counts(body: str, names: Sequence[str]) -> list[int] | None:
    """Counts per item type from ``2 books, 1 hat, 0 balls`` (any order, plurals read) or bare ``2, 1, 0``, one per
    type in ``names``; ``None`` if malformed (a type missing, repeated or unknown). A count that is no whole number
    (``1.5``, ``-1``, ``1e3``) is an :class:`InvalidMove` saying so, never read as its first digits."""
    pairs = COUNT.findall(body)
    if len(pairs) != len(names):
        return None
    if all(not name for _, name in pairs):
        written = [count for count, _ in pairs]
    else:
        keep: dict[int, str] = {}
        for count, name in pairs:
            singular = name.lower().rstrip("s") if name else ""
            if singular not in names or names.index(singular) in keep:
                return None
            keep[names.index(singular)] = count
        written = [keep[i] for i in range(len(names))]
    example = "[propose] " + ", ".join(f"1 {name}" for name in names)
    return [whole_number(count, 0, None, "Counts are whole numbers of items, 0 or more, got {written}.", example) for count in written]


def bundle_text(counts: Sequence[int], names: Sequence[str]) -> str:
    """``2 books, 1 hat, 0 balls``."""
    return ", ".join(f"{c} {n}{'' if c == 1 else 's'}" for c, n in zip(counts, names))


class PoolSplit:
    """The moves, text and settlement of a two-player pool split, mixed into a game before ``Game``.

    The game keeps ``players``, ``pool``, ``values`` (per seat), ``names``,
    ``turn`` (turns played), ``deadline`` and ``proposals``, and gives
    :meth:`no_deal`. It is no ``Game`` itself, so the registry, which registers
    every game class of this package, does not take it for one.
    """

    #: ``[move] counts``: the move's name in group 1, a proposal's counts in group 2.
    move_pattern: ClassVar[re.Pattern[str]]
    #: The error for ``[accept]`` with no proposal of the other player standing.
    no_proposal: ClassVar[str]
    #: The error for text without a well-formed move; ``{items}`` is the item types.
    no_move: ClassVar[str]

    players: list[str]
    pool: list[int]
    values: list[list[int]]
    names: list[str]
    turn: int
    deadline: int
    proposals: tuple[FrozenDict, ...]

    def no_deal(self) -> dict[str, float]:
        """Each player's payoff when no deal is made."""
        raise NotImplementedError

    # ----------------------------------------------------------------- helpers
    def seat(self, player: str) -> int:
        """``player``'s index."""
        return self.players.index(player)

    def value(self, player: str, counts: Sequence[int]) -> int:
        """What ``counts`` items are worth to ``player``."""
        return sum(v * c for v, c in zip(self.values[self.seat(player)], counts))

    def standing(self) -> FrozenDict | None:
        """The latest proposal, ``{"player": proposer, "keep": counts}``, or ``None``."""
        return self.proposals[-1] if self.proposals else None

    def rest(self, keep: Sequence[int]) -> list[int]:
        """The items left to the other player when ``keep`` is kept."""
        return [p - k for p, k in zip(self.pool, keep)]

    # -------------------------------------------------------------------- text
    def to_move(self) -> list[str]:
        """Players alternate, ``player_0`` first."""
        return [self.players[self.turn % 2]]

    def standing_text(self, player: str) -> str:
        """The standing proposal as ``player`` sees it, valued with its own values."""
        standing = self.standing()
        if standing is None:
            return "No proposal stands yet."
        if standing["player"] == player:
            return f"Your proposal stands: you keep {bundle_text(standing['keep'], self.names)}."
        yours = self.rest(standing["keep"])
        return f"{standing['player']}'s proposal stands: you would get {bundle_text(yours, self.names)}, worth {self.value(player, yours)} to you."

    def parse(self, player: str, text: str) -> dict[str, Any]:
        """The last well-formed move, and the talk around it."""
        for found in reversed(list(self.move_pattern.finditer(text))):
            kind = found.group(1).lower()
            end = found.end() if kind == "propose" else found.start(2)
            talk = (text[: found.start()] + text[end:]).strip()
            if kind == "propose":
                keep = read_counts(found.group(2), self.names)
                if keep is None:
                    continue
                if any(k > p for k, p in zip(keep, self.pool)):
                    raise InvalidMove(f"You cannot keep more than the pool holds ({bundle_text(self.pool, self.names)}).")
                return {"move": "propose", "keep": keep, "talk": talk}
            if kind == "accept":
                standing = self.standing()
                if standing is None or standing["player"] == player:
                    raise InvalidMove(self.no_proposal)
            return {"move": kind, "talk": talk}
        raise InvalidMove(self.no_move.format(items=", ".join(self.names)))

    def private_note(self, player: str) -> str:
        """What :meth:`render` adds to ``player``'s values line."""
        return ""

    def render(self) -> str:
        """The instance, both players' values (and :meth:`private_note`), the proposals and the turns played."""
        lines = [f"Pool: {bundle_text(self.pool, self.names)}"]
        for p, values in zip(self.players, self.values):
            lines.append(f"{p} values: {', '.join(f'{v}/{n}' for v, n in zip(values, self.names))}{self.private_note(p)}")
        for proposal in self.proposals:
            lines.append(f"  {proposal['player']} keeps {bundle_text(proposal['keep'], self.names)}")
        lines.append(f"{self.turn} of {self.deadline} turns played")
        return "\n".join(lines)

    # ------------------------------------------------------------------- rules
    def apply(self, ctx: Context, moves: dict[str, dict[str, Any]]) -> None:
        """Deliver the talk, then record the proposal, close the deal or play the game's own move; end at the deadline."""
        ((player, move),) = moves.items()
        other = self.players[1 - self.seat(player)]
        if move["talk"]:
            ctx.say(player, move["talk"], to=other)
        self.turn += 1
        kind = move["move"]
        if kind == "propose":
            keep = move["keep"]
            self.proposals += (FrozenDict(player=player, keep=tuple(keep)),)
            ctx.tell(
                f"{player} proposes: {player} keeps {bundle_text(keep, self.names)}; {other} gets {bundle_text(self.rest(keep), self.names)}.",
                kind="move",
                sender=player,
            )
        elif kind == "accept":
            standing = self.standing()
            assert standing is not None
            ctx.tell(f"{player} accepts {other}'s proposal.", kind="move", sender=player)
            self.accept(ctx, player, standing)
            return
        elif kind == "pass":
            ctx.tell(f"{player} makes no proposal this turn.", to=other, kind="move", sender=player)
        else:
            self.own_move(ctx, player, kind)
            return
        if self.turn >= self.deadline:
            self.end(ctx, self.no_deal(), agreed=False, reason=f"no deal within {self.deadline} turns")

    def accept(self, ctx: Context, player: str, standing: FrozenDict) -> None:
        """Close the deal ``player`` accepted: each side gets the value of its share."""
        proposer = standing["player"]
        utilities = {proposer: float(self.value(proposer, standing["keep"])), player: float(self.value(player, self.rest(standing["keep"])))}
        self.end(ctx, {p: utilities[p] for p in self.players}, agreed=True, reason=f"{player} accepted {proposer}'s proposal")

    def own_move(self, ctx: Context, player: str, kind: str) -> None:
        """Play a move of the game's own, one its ``move_pattern`` reads beyond propose, accept and pass."""
        raise NotImplementedError(kind)

    def report(self, utilities: dict[str, float], agreed: bool) -> dict[str, Any]:
        """The negotiation report over every split of the pool, from the no-deal payoffs."""
        outcomes = [
            (self.value("player_0", share), self.value("player_1", self.rest(share)))
            for share in itertools.product(*(range(c + 1) for c in self.pool))
        ]
        return negotiation_report(utilities, outcomes, self.no_deal(), agreed)

    def end(self, ctx: Context, utilities: dict[str, float], agreed: bool, reason: str) -> None:
        """Pay ``utilities`` and finish; a deal's sole best-off player wins, nobody wins a tie or without a deal."""
        leaders = winners_by_score(utilities)
        ctx.finish(utilities, winners=leaders if agreed and len(leaders) == 1 else [], reason=reason, details=self.report(utilities, agreed))
