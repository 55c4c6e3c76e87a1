"""Learnable, checked (issue 24): in every family of environments with a vector face, a small policy trained for a
fixed budget plays clearly better than its untrained self, so an environment that cannot teach anything is caught.

Each case trains sb3-contrib's ``MaskablePPO`` (``MultiInputPolicy``, n_steps 256, batch 64, 4 epochs) on the
Gymnasium face in vector mode for a fixed number of steps, from seed 0, with one torch thread and torch's
deterministic algorithms, and measures the greedy policy's mean return on the same fixed evaluation seeds before
and after. Budgets are steps, never seconds, so nothing depends on the machine's speed; these four cases take under
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

The household (issue 33) has 18,353 moves, of which about 15 are admissible each turn, and pays success only at
the end of a task of up to 30 steps: ``MaskablePPO`` as above (on the observation alone, shaped reward), with one
output per move, solved none of 100 test tasks after 20,000 steps. What learns is :class:`WordPolicy`, a softmax over the admissible moves whose score is a sum over each
move's words of a linear function of the vector observation, trained by REINFORCE on the training half of the
one-room houses with the shaped reward, and measured by the success of its own sampled moves on 200 tasks of the
test half (at zero weights, as it starts, it is the uniform random agent). It runs on numpy, so a seed gives one
result; each seed takes about 35 s of one core:

=============== ====================================================== ======== ====================================== ======
world           case                                                   episodes success before -> after, seeds 0-4      margin
=============== ====================================================== ======== ====================================== ======
household       Household, difficulty 1 (one room), split test         4800     0.005 -> 0.130 0.175 0.165 0.190 0.180 0.06
=============== ====================================================== ======== ====================================== ======

The test trains seeds 0, 1 and 2. TicTacToe is trained with ``MaskablePPO`` in ``tests/test_sb3_training.py``,
and a tiny LM learns it in ``score_legal`` mode in ``tests/test_llm_training.py``.

Not covered, and why: the negotiation games (Bargaining, Commons, Market, PriceNegotiation, ResourceTrade,
Ultimatum), the search tasks (AskOrSearch, Search, SearchSelfPlay), the coding tasks (Code, CodeProposerSolver,
CoderTester) and the free-text social and cooperation games (Debate, Mafia, DonorGame, GraphCoordination,
SplitMaze). Their moves are free text or tool calls, not an enumerable set, so there is neither a masked action
space for a policy nor a legal-move list for ``score_legal`` to rank, and teaching a tiny LM to write well-formed
offers, queries or programs from nothing takes far more than a CPU test's budget. The same holds for the tool
worlds of issue 34, SQL, Services and ServiceDesk (none is enumerable). At Services' difficulty 1 the one reach
of two fixed replies, ``finish`` and ``finish`` with ``impossible``, is the requests no tool can do: a logistic
policy over the request's words went from 0.090 to 0.158 success on 400 test tasks for every seed 0-4, but only
by learning to declare every request impossible (both replies earn 0 on a possible one), which tests nothing of
the world but that one reward, so it is not kept as a test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium
import numpy as np
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


# ---------------------------------------------------------------------------------------------- Household

HOUSEHOLD = "parlour/Household-v0"
#: One step of an episode as the learner keeps it: features, admissible moves, the choice's index among them,
#: the policy's probabilities of them, and the reward.
Step = tuple[np.ndarray, np.ndarray, int, np.ndarray, float]
#: Training seeds of the household case; each one's lift is in the module docstring's second table.
HOUSEHOLD_SEEDS = (0, 1, 2)
#: Training episodes (on the training half, shaped rewards) and evaluation episodes (the test half, success only).
HOUSEHOLD_TRAINING, HOUSEHOLD_EPISODES = 4800, 200
#: Half the smallest lift measured over training seeds 0-4 (0.125, seed 0; see the module docstring), rounded down.
HOUSEHOLD_MARGIN = 0.06


def move_words(move: str) -> set[str]:
    """The words of a command and its numbered names: ``take apple 1 from cabinet 2`` gives ``take``, ``apple``,
    ``from``, ``cabinet``, ``apple 1`` and ``cabinet 2`` (a number names one of a kind, so it stays with its word)."""
    words = move.split()
    return set(words) | {f"{word} {number}" for word, number in zip(words, words[1:]) if number.isdigit()}


class WordPolicy:
    """A softmax policy over the admissible moves of an enumerable game's vector face, trained by REINFORCE.

    A move's score is the sum, over its words (:func:`move_words`), of a linear function of the observation
    vector: one weight row per word of the game's move catalogue, so what is learned for ``cabinet 2`` or
    ``heat`` holds in every command that says it, and 18,353 moves cost 299 rows. It reads what the vector
    face gives a player (the observation and the mask) and the public names of the ``Discrete`` actions; no
    knowledge of the game is written in. The baseline is a linear value of the observation; steps are Adam's.
    With zero weights, as it starts, it is the uniform random agent over the admissible moves.
    """

    def __init__(self, moves: list[str], size: int, seed: int, learning_rate: float = 0.005, value_rate: float = 0.1):
        vocabulary = {word: index for index, word in enumerate(sorted(set().union(*map(move_words, moves))))}
        self.words = [np.array(sorted(vocabulary[word] for word in move_words(move))) for move in moves]
        self.weights = np.zeros((len(vocabulary), size + 1))
        self.value = np.zeros(size + 1)
        self.moment, self.second, self.updates = np.zeros_like(self.weights), np.zeros_like(self.weights), 0
        self.rng = np.random.default_rng(seed)
        self.learning_rate, self.value_rate = learning_rate, value_rate

    def probabilities(self, x: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """The policy's probabilities of the ``legal`` moves (indices into the catalogue) given features ``x``."""
        per_word = self.weights @ x
        scores = np.array([per_word[self.words[move]].sum() for move in legal])
        weights = np.exp(scores - scores.max())
        return weights / weights.sum()

    def episode(self, env: gymnasium.Env, seed: int, rng: np.random.Generator) -> tuple[float, list[Step]]:
        """One episode sampled from the policy with ``rng``: its return and each step's (features, legal moves,
        choice, probabilities, reward)."""
        observation, _ = env.reset(seed=seed)
        total, steps, done = 0.0, [], False
        while not done:
            x = np.append(observation["observation"].astype(np.float64), 1.0)
            legal = np.flatnonzero(observation["action_mask"])
            probabilities = self.probabilities(x, legal)
            choice = int(rng.choice(len(legal), p=probabilities))
            observation, reward, terminated, truncated, _ = env.step(int(legal[choice]))
            total += float(reward)
            steps.append((x, legal, choice, probabilities, float(reward)))
            done = terminated or truncated
        return total, steps

    def train(self, env: gymnasium.Env, episodes: int, batch: int = 16, discount: float = 0.97) -> None:
        """``episodes`` episodes on seeds drawn from the policy's generator, one update per ``batch`` of them."""
        for _ in range(episodes // batch):
            gradient, value_gradient, count = np.zeros_like(self.weights), np.zeros_like(self.value), 0
            for _ in range(batch):
                _, steps = self.episode(env, int(self.rng.integers(2**31)), self.rng)
                future = 0.0
                for x, legal, choice, probabilities, reward in reversed(steps):
                    future = reward + discount * future
                    advantage = future - self.value @ x
                    value_gradient += advantage * x
                    count += 1
                    # The gradient of log pi(choice) for each word's row: (chosen's count - expected count) * x.
                    coefficient = np.zeros(len(self.weights))
                    coefficient[self.words[legal[choice]]] += 1.0
                    words = [self.words[move] for move in legal]
                    np.add.at(coefficient, np.concatenate(words), -np.repeat(probabilities, [len(w) for w in words]))
                    rows, columns = np.flatnonzero(coefficient), np.flatnonzero(x)
                    gradient[np.ix_(rows, columns)] += advantage * np.outer(coefficient[rows], x[columns])
            self.ascend(gradient / count)
            self.value += self.value_rate * value_gradient / count

    def ascend(self, gradient: np.ndarray) -> None:
        """One Adam step up ``gradient``."""
        self.updates += 1
        self.moment = 0.9 * self.moment + 0.1 * gradient
        self.second = 0.999 * self.second + 0.001 * gradient**2
        step = (self.moment / (1 - 0.9**self.updates)) / (np.sqrt(self.second / (1 - 0.999**self.updates)) + 1e-8)
        self.weights += self.learning_rate * step

    def success_rate(self, env: gymnasium.Env, episodes: int) -> float:
        """The share of ``episodes`` evaluation episodes (fixed seeds, moves sampled from a fixed generator) won."""
        rng = np.random.default_rng(EVAL_SEED)
        return sum(self.episode(env, EVAL_SEED + index, rng)[0] > 0 for index in range(episodes)) / episodes


@pytest.mark.slow
@pytest.mark.parametrize("seed", HOUSEHOLD_SEEDS)
def test_a_word_policy_learns_the_one_room_household(seed: int) -> None:
    """Issue 33: trained on the training half of one-room houses with shaped rewards, the policy solves more of
    the test half's tasks than it did untrained (the uniform random agent), by a margin every seed clears."""
    train = gymnasium.make(HOUSEHOLD, obs_mode="vector", difficulty=1, split="train", reward="shaped")
    test = gymnasium.make(HOUSEHOLD, obs_mode="vector", difficulty=1)
    game = train.unwrapped.match.game
    policy = WordPolicy(list(game.moves), game.vector_size, seed)
    before = policy.success_rate(test, HOUSEHOLD_EPISODES)
    policy.train(train, HOUSEHOLD_TRAINING)
    after = policy.success_rate(test, HOUSEHOLD_EPISODES)
    print(f"seed {seed}: success {before:.3f} -> {after:.3f}")
    lift = after - before
    assert lift >= HOUSEHOLD_MARGIN, f"seed {seed}: success {before:.3f} -> {after:.3f} after {HOUSEHOLD_TRAINING} episodes, below {HOUSEHOLD_MARGIN}"
