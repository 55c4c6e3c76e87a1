"""The agentic worlds side by side: each scripted agent's success at every difficulty, and the pieces their speed
benchmarks share.

For every agentic world (Household, Shop, SQL, Services, ServiceDesk) this
plays each of its scripted agents (``expert`` and the honest baselines; in
ServiceDesk the agent seat, beside the scripted ``customer``) for
``--episodes`` episodes per difficulty, seeds 0..n-1 on the default split
(``test``), on the engine directly, and prints the success rates beside the
issues' targets: the expert at least 0.99 at every difficulty, random play at
most 0.05 (Household, Shop) or 0.02 (SQL, Services, ServiceDesk) at
difficulty 3. Each world's own ``benchmarks/<world>_speed.py`` adds what only
it measures (reset and step costs, rewards, hostile queries, pass^k) and
plays through :func:`outcomes` here.

Run: ``.venv/bin/python benchmarks/agentic_worlds.py [--episodes 200] [--world Shop-v0]``.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import parlour
from parlour.baselines import make_scripted
from parlour.envs.core.game import Outcome
from parlour.envs.core.match import Match

#: Each world's scripted agents to compare (the agent seat's, in ServiceDesk) and random play's ceiling at difficulty 3.
WORLDS: dict[str, tuple[tuple[str, ...], float]] = {
    "parlour/Household-v0": (("expert", "random"), 0.05),
    "parlour/Shop-v0": (("expert", "first_result", "random"), 0.05),
    "parlour/SQL-v0": (("expert", "pattern", "random"), 0.02),
    "parlour/Services-v0": (("expert", "literal", "random"), 0.02),
    "parlour/ServiceDesk-v0": (("expert", "compliant", "random"), 0.02),
}
#: The scripted agents that hold a world's other seats, whoever is measured.
PARTNERS = {"parlour/ServiceDesk-v0": {"customer": "customer"}}
EXPERT_TARGET = 0.99


def pin_one_core() -> None:
    """Run this process on one core (its first allowed CPU), as the speed targets are stated per core."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile of ``values``."""
    return float(np.percentile(values, q))


def outcomes(env_id: str, agent_name: str, difficulty: int, episodes: int) -> list[Outcome]:
    """The outcomes of ``agent_name`` playing ``episodes`` episodes (seeds 0..episodes-1) of ``env_id`` at ``difficulty``.

    ``agent_name`` holds the first seat; any other seat is held by the world's scripted partner (ServiceDesk's
    ``customer``), each agent reset from the episode's seed (the partner from ``2 * seed + 1``).
    """
    match = Match(parlour.game_class(env_id), {"difficulty": difficulty})
    first, *others = match.players
    partners = PARTNERS.get(env_id, {})
    seats = {first: make_scripted(agent_name, env_id), **{seat: make_scripted(partners[seat], env_id) for seat in others}}
    results = []
    for seed in range(episodes):
        match.reset(seed)
        for offset, agent in enumerate(seats.values()):
            agent.reset(seed * 2 + offset if others else seed)
        match.play_until(lambda seat: seats[seat].act(match.agent_observation(seat)))
        assert match.outcome is not None
        results.append(match.outcome)
    return results


def succeeded(outcome: Outcome) -> bool:
    """Whether the world counts the episode a success: ``details["success"]``, or in SQL (whose details have no such
    key) a winner, which it names exactly when the result matched."""
    if "success" in outcome.details:
        return outcome.details["success"] is True
    return bool(outcome.winners)


def success_rate(env_id: str, agent_name: str, difficulty: int, episodes: int) -> float:
    """The share of :func:`outcomes` that the world counts a success (:func:`succeeded`)."""
    return sum(map(succeeded, outcomes(env_id, agent_name, difficulty, episodes))) / episodes


def main() -> None:
    """Print every world's success table, each agent beside the targets."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=200, help="episodes per world, difficulty and agent")
    parser.add_argument("--world", action="append", default=[], help="only this world (repeatable), e.g. Shop-v0")
    args = parser.parse_args()
    pin_one_core()
    chosen = [env_id for env_id in WORLDS if not args.world or env_id.removeprefix("parlour/") in args.world or env_id in args.world]
    missed = 0
    for env_id in chosen:
        agents, random_ceiling = WORLDS[env_id]
        print(f"\n{env_id}: success over {args.episodes} episodes per difficulty (seeds 0..{args.episodes - 1}, split test)")
        print("difficulty  " + "  ".join(f"{name:>12}" for name in agents))
        for difficulty in range(1, 6):
            rates = {name: success_rate(env_id, name, difficulty, args.episodes) for name in agents}
            flags = []
            if rates["expert"] < EXPERT_TARGET:
                flags.append(f"expert MISSED (target >= {EXPERT_TARGET})")
            if difficulty == 3 and rates["random"] > random_ceiling:
                flags.append(f"random MISSED (target <= {random_ceiling})")
            missed += len(flags)
            print(f"{difficulty:>10}  " + "  ".join(f"{rate:>12.3f}" for rate in rates.values()) + ("  " + "; ".join(flags) if flags else ""))
    print(f"\n{missed} target(s) missed")


if __name__ == "__main__":
    main()
