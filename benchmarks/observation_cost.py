"""Does a step cost more late in a long episode than early on? Step plus observation, first moves against last.

A *move* here is what a rollout does for one decision: build the acting
player's observation (``Match.agent_observation``: text, typed messages,
legal moves and the structured ``view``), then ``Match.submit`` its action.
Each game is played once with a cheap scripted policy that never ends it
early, and three windows of that one script are timed in CPU time:

* ``first``: the first ``--window`` moves after ``reset``;
* ``last``: the ``--window`` moves before the final one;
* ``final``: the final move alone (the end-of-game analysis runs there).

Each window starts from a snapshot (``Match.restore``, not timed) and is
replayed for about ``--seconds`` of CPU time per round; rounds interleave
every window of every game, so the machine's load touches both sides of a
ratio alike. Printed per game: the mean CPU time of a move in each window
(median over rounds) and the ratios ``last/first`` and ``final/first``,
median and range over the rounds. Target: ``last/first`` <= 2 for the
5000-round IteratedPrisonersDilemma and the 3000-turn Bargaining (issue 21);
the other games are reported beside them. The ``final`` window replays one
instance, so PriceNegotiation and Ultimatum time their analysis with the
instance's part already cached (``NegotiationSpace``), as a replay, a branch
or another agent on the same seed finds it.

Run: ``.venv/bin/python benchmarks/observation_cost.py [--rounds 5] [--seconds 0.2] [--window 50] [--games IPD,...]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from dataclasses import dataclass
from typing import Callable, cast

from parlour.envs.core.match import Match, Snapshot
from parlour.envs.negotiation.bargaining import Bargaining
from parlour.envs.negotiation.commons import Commons
from parlour.envs.negotiation.ultimatum import Ultimatum
from parlour.envs.registry import game_class
from parlour.envs.social.graph_coordination import GraphCoordination

#: A scripted policy: the action text of ``player`` at move ``index`` of the episode, given the match.
Policy = Callable[[Match, str, int], str]
TARGET = 2.0
#: Moves replayed, untimed, before a late window.
WARM_UP = 10


@dataclass
class Case:
    """One long episode to measure: the environment, its options and a policy that keeps it going to its end."""

    label: str
    env_id: str
    options: dict
    policy: Policy
    target: bool = False


def ipd(match: Match, player: str, index: int) -> str:
    """Cooperate two moves in three: both choices show up in the history."""
    return "defect" if index % 3 == 0 else "cooperate"


def bargaining(match: Match, player: str, index: int) -> str:
    """Talk, then propose keeping everything on one turn and nothing on the next: never a deal."""
    pool = cast(Bargaining, match.game).pool
    counts = pool if index % 2 else [0] * len(pool)
    return f"Let us split it fairly. [propose] {', '.join(map(str, counts))}"


def price_negotiation(match: Match, player: str, index: int) -> str:
    """Each side keeps offering a price the other will not take (neither ever accepts)."""
    return f"I cannot move much further. [offer] {190 if player == 'seller' else 10}"


def resource_trade(match: Match, player: str, index: int) -> str:
    """A counter-offer every turn (it ends the standing offer), so no trade ever executes."""
    return "How about this? [offer] I give 1 wheat; you give 1 ore"


def graph_coordination(match: Match, player: str, index: int) -> str:
    """The same message to every neighbour each round, then a colour."""
    if cast(GraphCoordination, match.game).answering:
        return "[answer] Group 1"
    return f"[all] {player} picks group 1"


def ultimatum(match: Match, player: str, index: int) -> str:
    """Offer 4 of 10; the responder accepts every other offer."""
    if cast(Ultimatum, match.game).offer is None:
        return "Fair enough. [offer] 4"
    return "[accept]" if index % 4 == 1 else "[reject]"


def colonel_blotto(match: Match, player: str, index: int) -> str:
    """Two allocations in turn, so rounds are won, lost and tied."""
    return "4 3 3" if index % 4 < 2 else "3 3 4"


def split_maze(match: Match, player: str, index: int) -> str:
    """A message to the partner and a step that keeps the token where it is (the goal is never reached)."""
    return f"I see walls to the east, turn {index // 2}. [step] stay"


def commons(match: Match, player: str, index: int) -> str:
    """Talk, then a harvest the stock regrows from (5 players take 5 each of 100)."""
    return "[harvest] 5" if cast(Commons, match.game).phase == "harvest" else "[say] Let us keep the stock high."


CASES = [
    Case("IPD", "parlour/IteratedPrisonersDilemma-v0", {"rounds": 5000}, ipd, target=True),
    Case("Bargaining", "parlour/Bargaining-v0", {"deadline": 3000}, bargaining, target=True),
    Case("PriceNegotiation", "parlour/PriceNegotiation-v0", {"deadline": 3000}, price_negotiation),
    Case("ResourceTrade", "parlour/ResourceTrade-v0", {"deadline": 1000}, resource_trade),
    Case("GraphCoordination", "parlour/GraphCoordination-v0", {"num_players": 32, "rounds": 100}, graph_coordination),
    Case("Ultimatum", "parlour/Ultimatum-v0", {"rounds": 1000}, ultimatum),
    Case("Commons", "parlour/Commons-v0", {"rounds": 1000}, commons),
    Case("ColonelBlotto", "parlour/ColonelBlotto-v0", {"rounds": 1000}, colonel_blotto),
    Case("SplitMaze", "parlour/SplitMaze-v0", {"mode": "pair", "turn_limit": 2000}, split_maze),
]


class Episode:
    """One scripted episode of a case: its moves, played once, and snapshots where the timed windows start."""

    def __init__(self, case: Case, window: int, seed: int = 0):
        self.match = match = Match(game_class(case.env_id), case.options)
        match.reset(seed=seed)
        self.moves: list[tuple[str, str]] = []
        # The move counts at which a state starts: a window must start there, where a snapshot can be taken.
        boundaries: list[int] = []
        while not match.over:
            boundaries.append(len(self.moves))
            # A simultaneous state asks every acting player before any of them moves, as a rollout does.
            actions = [(player, case.policy(match, player, len(self.moves) + k)) for k, player in enumerate(match.acting())]
            for player, action in actions:
                self.moves.append((player, action))
                match.submit(player, action)
                if match.steps[-1]["error"] is not None:
                    raise RuntimeError(f"{case.label}: the scripted move {action!r} was refused: {match.steps[-1]['error']}")
                if match.over:
                    break
        last = len(self.moves)
        final = boundaries[-1]
        self.first = (0, next(b for b in boundaries if b >= min(window, final)))
        self.last = (next(b for b in boundaries if b >= final - window), final)
        self.final = (final, last)
        if self.first[1] <= self.first[0] or self.last[1] <= self.last[0]:
            raise RuntimeError(f"{case.label}: the episode of {last} moves is too short for windows of {window}")
        # The late windows start from a snapshot some moves earlier: the moves right after a restore run on
        # memory the restore has just written, and would be timed colder than the same moves in a rollout.
        warm = next(b for b in reversed(boundaries) if b <= max(self.last[0] - WARM_UP, 0))
        self.warm = {self.first: 0, self.last: warm, self.final: warm}
        # Snapshots only where a window is replayed from: one per state would pickle the growing state thousands of times.
        self.starts: dict[int, Snapshot] = {}
        match.reset(seed=seed)
        for index in range(last):
            if index in (0, warm):
                self.starts[index] = match.snapshot()
            match.submit(*self.moves[index])

    def play(self, span: tuple[int, int]) -> float:
        """CPU seconds of the moves in ``span`` (observation, then submit), replayed from a snapshot before it."""
        match, moves = self.match, self.moves
        warm = self.warm[span]
        match.restore(self.starts[warm])
        # The restore allocated the whole state: collect now, so the timed moves do not pay for it.
        gc.collect()
        for player, action in moves[warm : span[0]]:
            match.agent_observation(player)
            match.submit(player, action)
        start = time.process_time()
        for player, action in moves[span[0] : span[1]]:
            match.agent_observation(player)
            match.submit(player, action)
        return time.process_time() - start

    def per_move(self, span: tuple[int, int], seconds: float) -> float:
        """Mean CPU seconds per move of ``span``, replayed (at least 3 times) for about ``seconds`` of CPU time in all.

        The time counted against ``seconds`` includes the untimed restores, so a short window late in a long
        episode is replayed fewer times rather than for minutes.
        """
        spent, moves, plays = 0.0, 0, 0
        start = time.process_time()
        while time.process_time() - start < seconds or plays < 3:
            spent += self.play(span)
            moves += span[1] - span[0]
            plays += 1
        return spent / moves


def fmt(seconds: float) -> str:
    """A duration in microseconds or milliseconds."""
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def ratio(late: list[float], early: list[float]) -> str:
    """The median and range of ``late / early``, round by round."""
    values = [a / b for a, b in zip(late, early)]
    return f"{statistics.median(values):.2f}x [{min(values):.2f}-{max(values):.2f}]"


def main() -> None:
    """Play every case once, then time its windows in interleaved rounds and print costs and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--seconds", type=float, default=0.2, help="CPU seconds per window per round (default 0.2)")
    parser.add_argument("--window", type=int, default=50, help="moves in the first and last windows (default 50)")
    parser.add_argument("--games", default=",".join(case.label for case in CASES), help="comma-separated case labels")
    args = parser.parse_args()
    chosen = args.games.split(",")
    cases = [case for case in CASES if case.label in chosen]
    episodes = {case.label: Episode(case, args.window) for case in cases}
    times: dict[str, dict[str, list[float]]] = {case.label: {"first": [], "last": [], "final": []} for case in cases}
    for _ in range(args.rounds):
        for case in cases:
            episode = episodes[case.label]
            for name in ("first", "last", "final"):
                times[case.label][name].append(episode.per_move(getattr(episode, name), args.seconds))
    print(f"CPU time per move (observation + submit), median of {args.rounds} interleaved rounds of {args.seconds}s per window\n")
    missed = 0
    for case in cases:
        t = times[case.label]
        episode = episodes[case.label]
        verdict = ""
        if case.target:
            late = statistics.median(a / b for a, b in zip(t["last"], t["first"]))
            verdict = f"  target last/first <= {TARGET:g}x: {'MISSED' if late > TARGET else 'met'}"
            missed += late > TARGET
        print(
            f"{case.label} ({len(episode.moves)} moves): first {fmt(statistics.median(t['first']))}, "
            f"last {fmt(statistics.median(t['last']))}, final {fmt(statistics.median(t['final']))}"
        )
        print(f"  last/first {ratio(t['last'], t['first'])}, final/first {ratio(t['final'], t['first'])}{verdict}")
    print(f"\n{missed} target(s) missed")


if __name__ == "__main__":
    main()
