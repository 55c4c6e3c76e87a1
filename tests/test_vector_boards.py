"""The board games' batched rules agree move by move with their one-episode rules on random play.

Each game's batch class plays N episodes beside one :class:`parlour.Match` per
episode, both seats' moves drawn at random from the legal ones, for thousands
of moves: after every move the seat to act, the legal moves, both seats'
vector observations, the rewards and the ends must be the same
(:func:`tests.test_vector_face.assert_same_position`). In a simultaneous game
(Goofspiel) a move is a turn, every seat's move at once, and the batch's
random draws (the prizes turned up) are replayed into the one-episode game
(:class:`tests.test_vector_face.QueuedDraws`), which checks that it draws
from the same range at the same points. Each game also counts
the events its rules are made of (passes, captures, extra turns, repeated
positions, each kind of ending) on the one-episode side, and the check fails
unless every one of them happened, so that random play did reach them.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest

import parlour
from parlour.envs.core.vector import Streams
from tests.test_vector_face import QueuedDraws, assert_same_position, start_match

#: What one move did, read from the one-episode game before and after it, the move's index and what the game said
#: of it (its move message, then the outcome's reason if it ended the game): the names of its events.
Events = Callable[[parlour.Game, parlour.Game, int, str], list[str]]


def said_events(*phrases: str) -> Events:
    """Events named by the phrases the game's messages hold (each phrase is its own event's name)."""

    def events(before, after, action: int, said: str) -> list[str]:
        """The phrases in what the game said."""
        return [phrase for phrase in phrases if phrase in said]

    return events


def othello_events(before, after, action: int, said: str) -> list[str]:
    """A pass, or a disc that flipped more than one line's worth (several directions at once)."""
    if action == 64:
        return ["pass"]
    return ["big flip"] if (after.discs[before.turn].bit_count() - before.discs[before.turn].bit_count()) > 3 else []


def breakthrough_events(before, after, action: int, said: str) -> list[str]:
    """A capture, and a win by taking the last opposing piece."""
    _, destination = before._ends[action]
    if before.board[destination] != 1 - before.turn:
        return []
    return ["capture", "won by capturing all"] if after.pieces[1 - before.turn] == 0 else ["capture"]


no_events = said_events()
DOTS_EVENTS = said_events("closes 1 box", "closes 2 boxes")
PIG_EVENTS = said_events("rolls a 1", "stops and banks", "without a winner")
OWARE_EVENTS = said_events("capturing", "the position repeated", "has no legal move", "more than half", "both have captured half")
GOOFSPIEL_EVENTS = said_events("equal bids", "you take it")
#: Games whose one-episode rules are handed the batch's random draws through a queue (Goofspiel draws at its start too).
QUEUED = {"Goofspiel"}


#: (game, options, episodes stepped together, rounds, the events and endings that must happen).
CONFIGS = [
    ("Othello", {}, othello_events, 24, 150, {"pass", "big flip", "won by seat 0", "won by seat 1", "draw"}),
    ("Hex", {}, no_events, 24, 150, {"won by seat 0", "won by seat 1"}),
    ("Hex", {"board_size": 8}, no_events, 16, 200, {"won by seat 0", "won by seat 1"}),
    ("Breakthrough", {}, breakthrough_events, 24, 150, {"capture", "won by seat 0", "won by seat 1"}),
    ("Breakthrough", {"rows": 5, "columns": 3}, breakthrough_events, 24, 150, {"capture", "won by capturing all", "won by seat 0", "won by seat 1"}),
    ("Clobber", {}, no_events, 24, 150, {"won by seat 0", "won by seat 1"}),
    ("Clobber", {"rows": 3, "columns": 4}, no_events, 24, 150, {"won by seat 0", "won by seat 1"}),
    ("Mancala", {}, said_events("moves again", "capturing"), 24, 150, {"moves again", "capturing", "won by seat 0", "won by seat 1", "draw"}),
    ("Mancala", {"seeds": 12}, said_events("moves again", "capturing"), 24, 150, {"moves again", "capturing", "won by seat 0", "won by seat 1"}),
    (
        "Oware",
        {},
        OWARE_EVENTS,
        24,
        200,
        {"capturing", "the position repeated", "has no legal move", "more than half", "won by seat 0", "won by seat 1", "draw"},
    ),
    ("DotsAndBoxes", {}, DOTS_EVENTS, 24, 150, {"closes 1 box", "closes 2 boxes", "won by seat 0", "won by seat 1"}),  # 9 boxes: no draw
    ("DotsAndBoxes", {"num_rows": 1, "num_cols": 4}, DOTS_EVENTS, 24, 150, {"closes 1 box", "won by seat 0", "won by seat 1", "draw"}),
    ("Pig", {}, PIG_EVENTS, 24, 150, {"rolls a 1", "stops and banks", "won by seat 0", "won by seat 1"}),
    ("Pig", {"num_players": 3, "win_score": 20, "dice_outcomes": 3}, PIG_EVENTS, 24, 150, {"rolls a 1", "stops and banks", "won by seat 2"}),
    # So slow a climb that the games reach the horizon: draws.
    ("Pig", {"win_score": 200, "dice_outcomes": 2, "piglet": True}, PIG_EVENTS, 4, 1100, {"rolls a 1", "without a winner"}),
    (
        "Oware",
        {"houses": 3, "seeds": 2},
        OWARE_EVENTS,
        24,
        150,
        {"capturing", "the position repeated", "has no legal move", "won by seat 0", "won by seat 1", "draw"},
    ),
    ("Goofspiel", {}, GOOFSPIEL_EVENTS, 24, 150, {"equal bids", "you take it", "won by seat 0", "won by seat 1", "draw"}),
    (
        "Goofspiel",
        {"num_cards": 4, "points_order": "descending"},
        GOOFSPIEL_EVENTS,
        24,
        150,
        {"equal bids", "won by seat 0", "won by seat 1", "draw"},
    ),
    ("Goofspiel", {"num_cards": 2, "points_order": "ascending"}, GOOFSPIEL_EVENTS, 24, 150, {"equal bids", "won by seat 0", "won by seat 1", "draw"}),
]


def ending(rewards: list[float]) -> str:
    """How an episode ended, from its last rewards: the seat paid most, if it alone was."""
    best = max(rewards)
    if rewards.count(best) > 1:
        return "draw"
    return f"won by seat {rewards.index(best)}"


class BatchDice:
    """A one-episode game's generator that casts the die the batch cast for episode ``i`` (the batch rolls first)."""

    def __init__(self, batch, i: int):
        self.batch, self.i = batch, i

    def integers(self, low: int, high: int) -> int:
        """The batch's last roll there, which must be a face of the game's die."""
        face = int(self.batch.last_roll[self.i])
        assert low <= face < high, (face, low, high)
        return face


def start(game_cls, options: dict, batch, i: int, draws: QueuedDraws | None) -> parlour.Match:
    """A Match playing episode ``i`` of the batch from its start, with the batch's dice where the game rolls any, or its queued ``draws``."""
    match = start_match(game_cls if draws is None else draws.replaying(game_cls, i), options, batch, i)
    if hasattr(batch, "last_roll"):
        match.ctx.rng = BatchDice(batch, i)
    return match


def cross_check(name: str, options: dict, events: Events, n: int, rounds: int) -> Counter:
    """Random play of ``n`` episodes for ``rounds`` moves each, the batch beside the matches; the events seen."""
    game_cls = parlour.game_class(f"parlour/{name}-v0")
    batch = game_cls.batch(game_cls(**options), n)
    streams = Streams(5, n)
    draws = QueuedDraws(n, streams) if name in QUEUED else None
    rows = np.arange(n)
    batch.reset(rows, streams if draws is None else draws)
    matches = [start(game_cls, options, batch, i, draws) for i in range(n)]
    rng = random.Random(5)
    seen: Counter = Counter()
    for _ in range(rounds):
        assert_same_position(batch, matches, rows)
        legal = batch.legal(rows)
        if batch.simultaneous:
            actions = np.array([[rng.choice(np.flatnonzero(seat).tolist()) for seat in episode] for episode in legal])
        else:
            actions = np.array([rng.choice(np.flatnonzero(legal[i]).tolist()) for i in range(n)])
        rewards, ended = batch.step(rows, actions)
        for i in range(n):
            match = matches[i]
            before = match.game.clone()
            if batch.simultaneous:
                # Every seat's move of the turn; the last one plays it, and what the game said is in its player's inbox.
                for seat, player in enumerate(list(match.acting())):
                    paid = match.submit(player, int(actions[i, seat]))
                said = " ".join(message["text"] for message in match.ctx.inboxes[player])
                action = -1
            else:
                (player,) = match.acting()
                paid = match.submit(player, int(actions[i]))
                said = next(message["text"] for message in reversed(match.ctx.inboxes[player]) if message["kind"] == "move")
                action = int(actions[i])
            assert [paid.get(p, 0.0) for p in match.players] == rewards[i].tolist(), (i, paid, rewards[i])
            assert ended[i] == match.over, (i, ended[i], match.over)
            if match.over:
                said += " | " + match.outcome.reason
            seen.update(events(before, match.game, action, said))
            seen["move"] += 1
            if match.over:
                seen[ending(rewards[i].tolist())] += 1
        # The last position of an ended episode too: the learner's final observation is read from it.
        assert_same_position(batch, matches, rows)
        restart = np.flatnonzero(ended)
        if restart.size:
            batch.reset(restart, streams if draws is None else draws)
            for i in restart:
                matches[i] = start(game_cls, options, batch, i, draws)
    return seen


@pytest.mark.parametrize("name, options, events, n, rounds, expected", CONFIGS, ids=[f"{c[0]}{c[1] or ''}" for c in CONFIGS])
def test_batched_rules_agree_with_the_game_on_random_play(name, options, events, n, rounds, expected):
    seen = cross_check(name, options, events, n, rounds)
    assert seen["move"] >= 3000
    missing = expected - set(seen)
    assert not missing, (missing, seen)
