"""Chess: plies per CPU second of parlour's engine beside python-chess, the library it wraps, on the same random games.

Both sides play the *same games*: before timing, ``--games`` random games are
drawn once (seeds 0..n-1, a uniform choice among the legal moves, at most
``--max-plies`` plies) and each ply is kept twice, as the position of the
chosen move in parlour's legal-move list and in python-chess's own generation
order. The timed loops then replay them, each side doing per ply what a
random player on it must:

* parlour: the engine (:class:`~parlour.envs.core.match.Match`, which
  ``parlour.evaluate``, the faces and the trainers drive): the acting
  player's legal move names (``legal_moves_of``), the chosen one submitted
  (``submit``), which applies it, ends the game by its rules and books the
  step of the record;
* python-chess: ``list(board.legal_moves)``, the chosen move pushed, and the
  same end rules checked in the same order (no legal move: checkmate or
  stalemate; insufficient material; the fifty-move rule at 100 plies;
  threefold repetition; the ply limit), each game's legal moves generated once
  per ply, as a program written on python-chess alone would.

Every game is checked to end at the same ply with the same final position on
both sides before timing. The loops run interleaved in ``--rounds`` rounds of
``--seconds`` CPU seconds each (``time.process_time``, which a shared machine
disturbs less than wall time), and the ratio is taken within each round.
Printed: plies per CPU second of each side, and the median and range of the
ratio beside its target (issue 37: at least 0.9x of python-chess).

Run: ``.venv/bin/python benchmarks/chess_speed.py [--rounds 5] [--seconds 1] [--games 100] [--max-plies 200]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Callable, cast

import chess

from parlour.envs.core.match import Match
from parlour.envs.games.chess import Chess

TARGET = 0.9
#: A game as (parlour's position of the move, python-chess's position of the same move) per ply.
Game = list[tuple[int, int]]
#: A loop replays whole games for about the given CPU seconds and returns (plies, CPU seconds used).
Loop = Callable[[float], tuple[int, float]]


def draw_games(games: int, max_plies: int) -> list[Game]:
    """Random games, each ply kept as the chosen move's position in both libraries' legal-move lists."""
    match = Match(Chess, {"max_plies": max_plies})
    drawn = []
    for seed in range(games):
        rng = random.Random(seed)
        match.reset(seed)
        plies: Game = []
        while not match.over:
            player = match.acting()[0]
            legal = match.legal_moves_of(player)
            choice = rng.randrange(len(legal))
            theirs = [move.uci() for move in cast(Chess, match.game).board.legal_moves].index(legal[choice])
            plies.append((choice, theirs))
            match.submit(player, legal[choice])
        drawn.append(plies)
    return drawn


def python_chess_game(plies: Game, max_plies: int) -> tuple[int, str, str]:
    """One game replayed on python-chess alone: (plies played, why it ended, final FEN)."""
    board = chess.Board()
    moves = list(board.legal_moves)
    played = 0
    for _, choice in plies:
        board.push(moves[choice])
        played += 1
        moves = list(board.legal_moves)
        if not moves:
            return played, "checkmate" if board.is_check() else "stalemate", board.fen()
        if board.is_insufficient_material():
            return played, "insufficient_material", board.fen()
        if board.halfmove_clock >= 100:
            return played, "fifty_moves", board.fen()
        if board.is_repetition(3):
            return played, "threefold_repetition", board.fen()
        if played >= max_plies:
            return played, "max_plies", board.fen()
    raise AssertionError("a drawn game did not end on python-chess")


def check_games(drawn: list[Game], max_plies: int) -> None:
    """Raise unless every game ends at the same ply, for the same reason, in the same position on both sides."""
    match = Match(Chess, {"max_plies": max_plies})
    for seed, plies in enumerate(drawn):
        match.reset(seed)
        for choice, _ in plies:
            player = match.acting()[0]
            match.submit(player, match.legal_moves_of(player)[choice])
        assert match.outcome is not None
        details = match.outcome.details
        mine = (details["plies"], details["termination"], details["fen"])
        theirs = python_chess_game(plies, max_plies)
        if mine != theirs:
            raise AssertionError(f"game {seed}: parlour ended {mine}, python-chess {theirs}")


def parlour_loop(drawn: list[Game], max_plies: int) -> Loop:
    """parlour's engine replaying the games: the legal move names read, the chosen one submitted, every ply."""
    match = Match(Chess, {"max_plies": max_plies})

    def loop(seconds: float) -> tuple[int, float]:
        plies, episode = 0, 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            match.reset(episode)
            for choice, _ in drawn[episode % len(drawn)]:
                player = match.acting()[0]
                match.submit(player, match.legal_moves_of(player)[choice])
            plies += len(drawn[episode % len(drawn)])
            episode += 1
        return plies, time.process_time() - start

    return loop


def python_chess_loop(drawn: list[Game], max_plies: int) -> Loop:
    """python-chess replaying the games with the same end rules (:func:`python_chess_game`)."""

    def loop(seconds: float) -> tuple[int, float]:
        plies, episode = 0, 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            plies += python_chess_game(drawn[episode % len(drawn)], max_plies)[0]
            episode += 1
        return plies, time.process_time() - start

    return loop


def main() -> None:
    """Draw the games, check them on both sides, time both loops in interleaved rounds and print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per side per round (default 1)")
    parser.add_argument("--games", type=int, default=100, help="random games drawn and replayed (default 100)")
    parser.add_argument("--max-plies", type=int, default=200, help="the ply limit of every game (default 200)")
    args = parser.parse_args()
    drawn = draw_games(args.games, args.max_plies)
    check_games(drawn, args.max_plies)
    loops = {"parlour": parlour_loop(drawn, args.max_plies), "python-chess": python_chess_loop(drawn, args.max_plies)}
    rates: dict[str, list[float]] = {name: [] for name in loops}
    for _ in range(args.rounds):
        for name, loop in loops.items():
            plies, cpu = loop(args.seconds)
            rates[name].append(plies / cpu)
    ratios = [a / b for a, b in zip(rates["parlour"], rates["python-chess"])]
    median = statistics.median(ratios)
    print(f"Chess, {args.games} random games (max {args.max_plies} plies), plies per CPU second, median of {args.rounds} interleaved rounds")
    print(", ".join(f"{name} {statistics.median(r):,.0f}" for name, r in rates.items()))
    verdict = "met" if median >= TARGET else "MISSED"
    print(f"  parlour/python-chess: {median:.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]  target >= {TARGET:g}x: {verdict}")


if __name__ == "__main__":
    main()
