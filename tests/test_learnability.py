"""Learnable, checked (issue 24): in every family of environments with a vector face, a small policy trained for a
fixed budget plays clearly better than its untrained self, so an environment that cannot teach anything is caught.

Each case trains sb3-contrib's ``MaskablePPO`` (``MultiInputPolicy``, n_steps 256, batch 64, 4 epochs) on the
Gymnasium face in vector mode for a fixed number of steps, from seed 0, with one torch thread and torch's
deterministic algorithms, and measures the greedy policy's mean return on the same fixed evaluation seeds before
and after. Budgets are steps, never seconds, so nothing depends on the machine's speed; the whole file takes under
a minute on two cores. Each margin sits below the gain of every training seed from 0 to 4 (another CPU's
kernels may round differently, and then a run is in effect another seed):

=============== ====================================================== ====== ======== ============================= ======
family          case                                                   steps  episodes gains, training seeds 0-4     margin
=============== ====================================================== ====== ======== ============================= ======
board games     Hex 3x3 as the first player against ``random``         3000   200      0.49 0.83 0.70 0.65 0.99      0.3
puzzles         TowerOfHanoi, difficulty 1 (3 disks, reward 1 or 0)    15000  100      1.00 0.63 0.87 0.63 1.00      0.4
cooperation     Hanabi, small preset, beside ``convention``            6000   100      0.91 0.91 1.22 1.03 1.17      0.5
social          Avalon, a role dealt each episode, four ``random``     20000  400      0.31 0.49 0.13 0.38 0.34      0.1
=============== ====================================================== ====== ======== ============================= ======

TicTacToe is trained the same way in ``tests/test_sb3_training.py``, and a tiny LM learns it in ``score_legal``
mode in ``tests/test_llm_training.py``.

Not covered, and why: the negotiation games (Bargaining, Commons, Market, PriceNegotiation, ResourceTrade,
Ultimatum), the search tasks (AskOrSearch, Search, SearchSelfPlay), the coding tasks (Code, CodeProposerSolver,
CoderTester) and the free-text social and cooperation games (Debate, Mafia, DonorGame, GraphCoordination,
SplitMaze). Their moves are free text or tool calls, not an enumerable set, so there is neither a masked action
space for a policy nor a legal-move list for ``score_legal`` to rank, and teaching a tiny LM to write well-formed
offers, queries or programs from nothing takes far more than a CPU test's budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium
import pytest

import parlour  # noqa: F401  (registers the parlour environments with Gymnasium)
from tests.test_sb3_training import LastMask

sb3_contrib = pytest.importorskip("sb3_contrib")

pytestmark = pytest.mark.usefixtures("deterministic_torch")

#: Evaluation episodes are seeded from here on, apart from the seeds training draws.
EVAL_SEED = 10_000


@dataclass(frozen=True)
class Case:
    """One family's representative: the environment, its face's options, the training budget and the gain it must show."""

    family: str
    env_id: str
    options: dict[str, Any] = field(default_factory=dict)
    steps: int = 3000
    episodes: int = 100
    margin: float = 0.3


CASES = [
    Case("board games", "parlour/Hex-v0", {"board_size": 3, "opponent": "random"}, steps=3000, episodes=200, margin=0.3),
    Case("puzzles", "parlour/TowerOfHanoi-v0", {"difficulty": 1}, steps=15000, episodes=100, margin=0.4),
    Case("cooperation", "parlour/Hanabi-v0", {"opponent": "convention"}, steps=6000, episodes=100, margin=0.5),
    Case("social", "parlour/Avalon-v0", {"opponent": "random"}, steps=20000, episodes=400, margin=0.1),
]


def greedy_return(model: Any, env: gymnasium.Env, episodes: int) -> float:
    """The mean return of the model's most likely legal moves over ``episodes`` episodes on fixed seeds."""
    total = 0.0
    for episode in range(episodes):
        observation, _ = env.reset(seed=EVAL_SEED + episode)
        done = False
        while not done:
            mask = observation["action_mask"].astype(bool)
            action, _ = model.predict(observation, action_masks=mask, deterministic=True)
            observation, reward, terminated, truncated, _ = env.step(int(action))
            total += float(reward)
            done = terminated or truncated
    return total / episodes


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.family)
def test_a_small_policy_learns_each_family(case: Case) -> None:
    env = LastMask(gymnasium.make(case.env_id, obs_mode="vector", **case.options))
    model = sb3_contrib.MaskablePPO("MultiInputPolicy", env, n_steps=256, batch_size=64, n_epochs=4, seed=0, device="cpu")
    before = greedy_return(model, env, case.episodes)
    model.learn(total_timesteps=case.steps)
    after = greedy_return(model, env, case.episodes)
    assert after - before >= case.margin, f"{case.env_id}: {before:.3f} -> {after:.3f} after {case.steps} steps, gain below {case.margin}"
