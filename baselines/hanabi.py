"""The ``convention`` agent for Hanabi: play what is known to fit, hint a teammate's playable card, discard the oldest unhinted card.

It reads only its observation's ``view`` (the public state, the teammates'
hands, what the hints say of every card, and the log of moves) and follows one
convention, which a team of ``convention`` agents shares:

* a hint is a *play signal*: among the cards it touches for the first time,
  the newest (the one drawn last) fits the fireworks as they are when the
  hint is given. A hint that touches only cards hinted before signals nothing.

On its turn it does the first of:

1. play a card of its own that is known to fit: every identity the hints and
   the visible cards leave possible fits (the lowest rank first); else a card
   signalled to it, if the identities it may have that fitted when the signal
   was given all still fit (none was played since);
2. with a hint token left, give a play signal: to the next teammate first, for
   a card that fits now, is not already signalled or known to its holder, and
   is no copy of a card another teammate is about to play; among the hints
   whose signal falls on that card, one that makes it known to fit, else the
   one touching the fewest new cards;
3. discard (when legal): a card known to be useless, else the oldest card
   nobody hinted, else the oldest card not signalled;
4. with every hint token unspent (discarding is illegal), a hint that
   signals nothing: one touching only hinted cards, else one whose signalled
   card is then known not to fit; failing both (any other hint would make a
   teammate play a card that does not fit), it plays the card of its own
   likeliest to fit.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.seeded import SeededAgent

ENV_ID = "parlour/Hanabi-v0"

Card = tuple[str, int]


class ConventionAgent(SeededAgent):
    """Hanabi's convention bot (see the module docstring); deterministic."""

    name = "convention"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The move for the position in ``observation["view"]``."""
        view = observation["view"]
        legal = list(observation["legal_moves"])
        me = view["player"]
        hand = view["hands"][me]
        fireworks = view["fireworks"]
        unseen = self._unseen(view)
        signals = self._signalled(view)

        playable = [i for i, card in enumerate(hand) if all(fits(c, fireworks) for c in self._plausible(card, unseen))]
        if playable:
            best = min(playable, key=lambda i: min(r for _, r in self._plausible(hand[i], unseen)))
            return f"play {best + 1}"
        for i, card in enumerate(hand):
            then = signals.get(card["id"])
            if then is not None:
                meant = [c for c in self._plausible(card, unseen) if fits(c, then)]
                if meant and all(fits(c, fireworks) for c in meant):
                    return f"play {i + 1}"

        if view["hint_tokens"] > 0:
            hint = self._play_hint(view, signals, legal)
            if hint is not None:
                return hint

        if any(move.startswith("discard") for move in legal):
            return f"discard {self._discard_slot(hand, unseen, fireworks, signals) + 1}"
        quiet = self._quiet_hint(view, legal)
        if quiet is not None:
            return quiet
        chances = [
            sum(unseen[c] for c in self._plausible(card, unseen) if fits(c, fireworks))
            / max(1, sum(unseen[c] for c in self._plausible(card, unseen)))
            for card in hand
        ]
        return f"play {chances.index(max(chances)) + 1}"

    # ------------------------------------------------------------- knowledge
    @staticmethod
    def _unseen(view: Mapping[str, Any]) -> dict[Card, int]:
        """Copies of each card not visible to this player: not played, not discarded, not in a teammate's hand."""
        counts = {(color, rank): view["copies"][rank - 1] for color in view["colors"] for rank in range(1, view["ranks"] + 1)}
        for color, level in view["fireworks"].items():
            for rank in range(1, level + 1):
                counts[(color, rank)] -= 1
        for name in view["discards"]:
            color, rank = name.split()
            counts[(color, int(rank))] -= 1
        for player, cards in view["hands"].items():
            if player != view["player"]:
                for card in cards:
                    counts[(card["color"], card["rank"])] -= 1
        return counts

    @staticmethod
    def _plausible(card: Mapping[str, Any], unseen: dict[Card, int]) -> list[Card]:
        """The identities the hints allow for one of its own cards, of which an unseen copy is left."""
        options = [(c, r) for c in card["colors"] for r in card["ranks"] if unseen.get((c, r), 0) > 0]
        return options or [(c, r) for c in card["colors"] for r in card["ranks"]]

    @staticmethod
    def _signalled(view: Mapping[str, Any]) -> dict[int, dict[str, int]]:
        """The cards play signals point at (per hint, the newest card it touched first), with the fireworks when each was given."""
        fireworks = dict.fromkeys(view["colors"], 0)
        signals: dict[int, dict[str, int]] = {}
        for entry in view["log"]:
            if entry["type"] == "hint" and entry["new"]:
                signals[max(entry["new"])] = dict(fireworks)
            elif entry["type"] == "play" and entry["success"]:
                color, rank = entry["card"].split()
                fireworks[color] = int(rank)
        return signals

    # ------------------------------------------------------------------ hints
    def _play_hint(self, view: Mapping[str, Any], signals: Mapping[int, Any], legal: list[str]) -> str | None:
        """A hint whose signal falls on a teammate's card that fits now, or ``None``."""
        players = view["players"]
        me = view["player"]
        fireworks = view["fireworks"]
        seat = players.index(me)
        # Cards already on their way to the fireworks: signalled, or known to fit by their holder.
        coming = {
            (card["color"], card["rank"])
            for player, cards in view["hands"].items()
            if player != me
            for card in cards
            if card["id"] in signals or _known_fit(card, fireworks)
        }
        for offset in range(1, len(players)):
            target = players[(seat + offset) % len(players)]
            cards = view["hands"][target]
            for card in sorted(cards, key=lambda c: c["rank"]):
                identity = (card["color"], card["rank"])
                if not fits(identity, fireworks) or card["id"] in signals or _known_fit(card, fireworks) or identity in coming:
                    continue
                options = []
                for value in (card["color"], str(card["rank"])):
                    move = f"hint {target} {value}"
                    if move not in legal:
                        continue
                    touched = [c for c in cards if value in (c["color"], str(c["rank"]))]
                    new = [c for c in touched if not c["clued"]]
                    if not new or max(c["id"] for c in new) != card["id"]:
                        continue
                    after = _narrowed(card, value)
                    options.append((not _known_fit(after, fireworks), len(new), move))
                if options:
                    return min(options)[2]
        return None

    def _quiet_hint(self, view: Mapping[str, Any], legal: list[str]) -> str | None:
        """A hint that signals no play (discarding is illegal and no play hint exists), or ``None``."""
        hints = [move for move in legal if move.startswith("hint")]
        fireworks = view["fireworks"]
        harmless: list[str] = []
        unplayable: list[str] = []
        for move in hints:
            _, target, value = move.split()
            cards = view["hands"][target]
            touched = [c for c in cards if value in (c["color"], str(c["rank"]))]
            new = [c for c in touched if not c["clued"]]
            if not new:
                harmless.append(move)
                continue
            focus = max(new, key=lambda c: c["id"])
            after = _narrowed(focus, value)
            if not any(fits((c, r), fireworks) for c in after["colors"] for r in after["ranks"]):
                unplayable.append(move)
        found = harmless or unplayable
        return found[0] if found else None

    # --------------------------------------------------------------- discards
    def _discard_slot(self, hand: list[Mapping[str, Any]], unseen: dict[Card, int], fireworks: Mapping[str, int], signals: Mapping[int, Any]) -> int:
        """A useless card, else the oldest card nobody hinted, else the oldest card not signalled, else the oldest."""
        for i, card in enumerate(hand):
            if all(rank <= fireworks[color] for color, rank in self._plausible(card, unseen)):
                return i
        for i, card in enumerate(hand):
            if not card["clued"]:
                return i
        for i, card in enumerate(hand):
            if card["id"] not in signals:
                return i
        return 0


def fits(card: Card, fireworks: Mapping[str, int]) -> bool:
    """Whether ``card`` would extend its firework now."""
    color, rank = card
    return fireworks[color] == rank - 1


def _known_fit(card: Mapping[str, Any], fireworks: Mapping[str, int]) -> bool:
    """Whether the hints alone tell a card's holder that it fits."""
    return all(fits((c, r), fireworks) for c in card["colors"] for r in card["ranks"])


def _narrowed(card: Mapping[str, Any], value: str) -> dict[str, Any]:
    """The holder's knowledge of a touched card after a hint of ``value`` (a colour or a rank)."""
    if value.isdigit():
        return {**card, "ranks": [int(value)]}
    return {**card, "colors": [value]}


register_scripted("convention", ENV_ID, ConventionAgent)
# A cooperative game: the easiest partner (who follows the hint conventions) first, a random one last.
register_ladder(ENV_ID, ["convention", "random"])
