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
output per move, solved none of 100 test tasks after 20,000 steps. What learns is :class:`HouseholdPolicy`, a
:class:`WordPolicy`: a softmax over the admissible moves whose score is a sum over each
move's words of a linear function of the vector observation, trained by REINFORCE on the training half of the
one-room houses with the shaped reward, and measured by the success of its own sampled moves on 200 tasks of the
test half (at zero weights, as it starts, it is the uniform random agent). It runs on numpy, so a seed gives one
result; each seed takes about 35 s of one core:

=============== ====================================================== ======== ====================================== ======
world           case                                                   episodes success before -> after, seeds 0-4      margin
=============== ====================================================== ======== ====================================== ======
household       Household, difficulty 1 (one room), split test         4800     0.005 -> 0.130 0.175 0.165 0.190 0.180 0.06
=============== ====================================================== ======== ====================================== ======

Services (issue 34) has no enumerable moves: a move is a tool call with JSON arguments. It is learnable over the menu
of :func:`parlour.baselines.services.candidate_calls`, an honest, bounded action set that an agent builds from what it
was shown (the request's quoted texts, paths, dates, times and amounts, the tools' schemas, every value the tool
results showed; ``finish`` plain, with ``impossible``, or with an answer from the results; at most 300 calls), never
from the goal: picking the right calls from it carries out 0.97 of the difficulty-1 tasks
(``tests/test_services_menu.py``). What learns is :class:`MenuPolicy`, a :class:`WordPolicy` over the menu: a call's
words are its tool, its form and where each argument's value came from (the request, or a result's JSON key and the
values beside it that the request names); the features are the request's words and the turn's calls so far. It is
trained by REINFORCE with an entropy bonus on the training split at difficulty 1 (one request; success only), one
call per step, and measured by the success of its sampled calls on 300 tasks of the test split, over all tasks and
over those whose request some tool can do (declaring every request impossible wins about 0.16 of all tasks and none
of those; a policy over ``finish`` and ``finish`` with ``impossible`` alone learned exactly that, so the test checks
both gains). At zero weights it is uniform over the menu. Each seed takes 40-60 s of one core:

=============== ====================================================== ======== ====================================== ======
world           case                                                   episodes success before -> after, seeds 0-4      margin
=============== ====================================================== ======== ====================================== ======
tool use        Services, difficulty 1 (one request), split test       2400     0.057 -> 0.417 0.307 0.433 0.383 0.380 0.12
tool use        the same, only the requests some tool can do           2400     0.012 -> 0.308 0.178 0.332 0.269 0.277 0.08
=============== ====================================================== ======== ====================================== ======

The tests train seeds 0, 1 and 2. TicTacToe is trained with ``MaskablePPO`` in ``tests/test_sb3_training.py``,
and a tiny LM learns it in ``score_legal`` mode in ``tests/test_llm_training.py``.

Not covered, and why: the negotiation games (Bargaining, Commons, Market, PriceNegotiation, ResourceTrade,
Ultimatum), the search tasks (AskOrSearch, Search, SearchSelfPlay), the coding tasks (Code, CodeProposerSolver,
CoderTester) and the free-text social and cooperation games (Debate, Mafia, DonorGame, GraphCoordination,
SplitMaze). Their moves are free text or tool calls, not an enumerable set, so there is neither a masked action
space for a policy nor a legal-move list for ``score_legal`` to rank, and teaching a tiny LM to write well-formed
offers, queries or programs from nothing takes far more than a CPU test's budget. The same holds for the other
tool worlds of issue 34, SQL (a query is free text) and ServiceDesk (so is a reply to the customer), which have no
menu yet.
"""

from __future__ import annotations

import json
import re
import zlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import gymnasium
import numpy as np
import pytest

import parlour  # noqa: F401  (registers the parlour environments with Gymnasium)
from parlour.baselines.services import Call, Transcript, call, sightings
from parlour.envs.agentic.services import Services
from parlour.envs.core.match import Match
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
#: One step of an episode as the learner keeps it: features, the candidates (each an array of word rows), the
#: choice's index among them, the policy's probabilities of them, and the reward.
Step = tuple[np.ndarray, list[np.ndarray], int, np.ndarray, float]
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


class WordPolicy(ABC):
    """A softmax policy over each step's candidate moves, trained by REINFORCE.

    A candidate is a set of words (rows of the weights); its score is the sum, over its words, of a linear function of
    the step's feature vector, so what is learned for a word holds in every move that says it. A subclass plays an
    episode (:meth:`episode`): it says which words each candidate has and what the feature vector is. The baseline is
    a linear value of the features; steps are Adam's. With zero weights, as it starts, it is the uniform random agent
    over the candidates.
    """

    #: The weight of the entropy bonus in each step's gradient (0: plain REINFORCE).
    entropy = 0.0

    def __init__(self, rows: int, size: int, seed: int, learning_rate: float = 0.005, value_rate: float = 0.1):
        self.weights = np.zeros((rows, size))
        self.value = np.zeros(size)
        self.moment, self.second, self.updates = np.zeros_like(self.weights), np.zeros_like(self.weights), 0
        self.rng = np.random.default_rng(seed)
        self.learning_rate, self.value_rate = learning_rate, value_rate

    def probabilities(self, x: np.ndarray, candidates: list[np.ndarray]) -> np.ndarray:
        """The policy's probabilities of the ``candidates`` (each its word rows) given features ``x``."""
        per_word = self.weights @ x
        scores = np.array([per_word[words].sum() for words in candidates])
        weights = np.exp(scores - scores.max())
        return weights / weights.sum()

    @abstractmethod
    def episode(self, env: Any, seed: int, rng: np.random.Generator) -> tuple[float, list[Step]]:
        """One episode of ``env`` from ``seed``, moves sampled from the policy with ``rng``: its return and its steps."""

    def train(self, env: Any, episodes: int, batch: int = 16, discount: float = 0.97) -> None:
        """``episodes`` episodes on seeds drawn from the policy's generator, one update per ``batch`` of them."""
        for _ in range(episodes // batch):
            gradient, value_gradient, count = np.zeros_like(self.weights), np.zeros_like(self.value), 0
            for _ in range(batch):
                _, steps = self.episode(env, int(self.rng.integers(2**31)), self.rng)
                future = 0.0
                for x, candidates, choice, probabilities, reward in reversed(steps):
                    future = reward + discount * future
                    advantage = future - self.value @ x
                    value_gradient += advantage * x
                    count += 1
                    # The gradient of log pi(choice) for each word's row: (chosen's count - expected count) * x.
                    coefficient = np.zeros(len(self.weights))
                    coefficient[candidates[choice]] += 1.0
                    np.add.at(coefficient, np.concatenate(candidates), -np.repeat(probabilities, [len(w) for w in candidates]))
                    rows, columns = np.flatnonzero(coefficient), np.flatnonzero(x)
                    gradient[np.ix_(rows, columns)] += advantage * np.outer(coefficient[rows], x[columns])
                    if self.entropy:
                        # The gradient of the choice's entropy, -p_i (log p_i + H) per candidate, spread on its words.
                        logs = np.log(probabilities)
                        bonus = np.zeros(len(self.weights))
                        share = -probabilities * (logs - probabilities @ logs)
                        np.add.at(bonus, np.concatenate(candidates), np.repeat(share, [len(w) for w in candidates]))
                        rows = np.flatnonzero(bonus)
                        gradient[np.ix_(rows, columns)] += self.entropy * np.outer(bonus[rows], x[columns])
            self.ascend(gradient / count)
            self.value += self.value_rate * value_gradient / count

    def ascend(self, gradient: np.ndarray) -> None:
        """One Adam step up ``gradient``."""
        self.updates += 1
        self.moment = 0.9 * self.moment + 0.1 * gradient
        self.second = 0.999 * self.second + 0.001 * gradient**2
        step = (self.moment / (1 - 0.9**self.updates)) / (np.sqrt(self.second / (1 - 0.999**self.updates)) + 1e-8)
        self.weights += self.learning_rate * step

    def success_rate(self, env: Any, episodes: int) -> float:
        """The share of ``episodes`` evaluation episodes (fixed seeds, moves sampled from a fixed generator) won."""
        rng = np.random.default_rng(EVAL_SEED)
        return sum(self.episode(env, EVAL_SEED + index, rng)[0] > 0 for index in range(episodes)) / episodes


class HouseholdPolicy(WordPolicy):
    """The word policy over the admissible moves of an enumerable game's vector face.

    A move's words are :func:`move_words`: one weight row per word of the game's move catalogue, so 18,353 moves cost
    299 rows; the features are the observation vector and a constant. It reads what the vector face gives a player
    (the observation and the mask) and the public names of the ``Discrete`` actions; no knowledge of the game is
    written in.
    """

    def __init__(self, moves: list[str], size: int, seed: int, learning_rate: float = 0.005, value_rate: float = 0.1):
        vocabulary = {word: index for index, word in enumerate(sorted(set().union(*map(move_words, moves))))}
        super().__init__(len(vocabulary), size + 1, seed, learning_rate, value_rate)
        self.words = [np.array(sorted(vocabulary[word] for word in move_words(move))) for move in moves]

    def episode(self, env: gymnasium.Env, seed: int, rng: np.random.Generator) -> tuple[float, list[Step]]:
        """One episode sampled from the policy with ``rng``: its return and each step's (features, legal moves' words,
        choice, probabilities, reward)."""
        observation, _ = env.reset(seed=seed)
        total, steps, done = 0.0, [], False
        while not done:
            x = np.append(observation["observation"].astype(np.float64), 1.0)
            legal = np.flatnonzero(observation["action_mask"])
            candidates = [self.words[move] for move in legal]
            probabilities = self.probabilities(x, candidates)
            choice = int(rng.choice(len(legal), p=probabilities))
            observation, reward, terminated, truncated, _ = env.step(int(legal[choice]))
            total += float(reward)
            steps.append((x, candidates, choice, probabilities, float(reward)))
            done = terminated or truncated
        return total, steps


@pytest.mark.slow
@pytest.mark.parametrize("seed", HOUSEHOLD_SEEDS)
def test_a_word_policy_learns_the_one_room_household(seed: int) -> None:
    """Issue 33: trained on the training half of one-room houses with shaped rewards, the policy solves more of
    the test half's tasks than it did untrained (the uniform random agent), by a margin every seed clears."""
    train = gymnasium.make(HOUSEHOLD, obs_mode="vector", difficulty=1, split="train", reward="shaped")
    test = gymnasium.make(HOUSEHOLD, obs_mode="vector", difficulty=1)
    game = train.unwrapped.match.game
    policy = HouseholdPolicy(list(game.moves), game.vector_size, seed)
    before = policy.success_rate(test, HOUSEHOLD_EPISODES)
    policy.train(train, HOUSEHOLD_TRAINING)
    after = policy.success_rate(test, HOUSEHOLD_EPISODES)
    print(f"seed {seed}: success {before:.3f} -> {after:.3f}")
    lift = after - before
    assert lift >= HOUSEHOLD_MARGIN, f"seed {seed}: success {before:.3f} -> {after:.3f} after {HOUSEHOLD_TRAINING} episodes, below {HOUSEHOLD_MARGIN}"


# ---------------------------------------------------------------------------------------------- Services

#: Training seeds of the Services case; each one's lift is in the module docstring's third table.
SERVICES_SEEDS = (0, 1, 2)
#: Training episodes (the training split, success only) and evaluation episodes (the test split).
SERVICES_TRAINING, SERVICES_EPISODES = 2400, 300
#: Half the smallest lift measured over training seeds 0-4 (seed 1's: 0.250 over all tasks, 0.166 over the requests
#: some tool can do; see the module docstring), rounded down.
SERVICES_MARGIN, SERVICES_POSSIBLE_MARGIN = 0.12, 0.08
_LETTERS = re.compile(r"[a-z]+")


def bucket(word: str, size: int) -> int:
    """A stable bucket of ``word`` among ``size`` (CRC-32: Python's own string hash changes from run to run)."""
    return zlib.crc32(word.encode()) % size


def answer_text(value: Any) -> str:
    """A value as the menu writes it into an answer: a string itself, a number as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


class MenuPolicy(WordPolicy):
    """The word policy over the Services menu (:func:`parlour.baselines.services.candidate_calls`), built from what
    the player was shown (:class:`parlour.baselines.services.Transcript`) and nothing else.

    The features are the request's words and what the turn did so far (each tool called, how many calls, whether
    the last was refused), each hashed into buckets, and a constant. A call's words, hashed into :attr:`ROWS` rows,
    are its tool, its form (the arguments it fills), whether it repeats a call made, and for each argument where its
    value came from: an enum's or a flag's value itself; else the request (and the two words before it there), or a
    result (the JSON key and shape it came under, and its record's links to the request: how many of the values
    beside it the request names, the two words before the first, or a link through another value's record), and
    whether the value's last word is a word of the request. Nothing of the world's goal or generator is written in.
    """

    REQUEST, STATE, ROWS = 128, 32, 2048
    #: Without the bonus the policy settles early on a few kinds of request and stops trying calls on the others.
    entropy = 0.1

    def __init__(self, seed: int, learning_rate: float = 0.02, value_rate: float = 0.1):
        super().__init__(self.ROWS, self.REQUEST + self.STATE + 1, seed, learning_rate, value_rate)
        self.cache: dict[str, int] = {}

    def row(self, word: str) -> int:
        """The weight row of a call's word."""
        found = self.cache.get(word)
        if found is None:
            found = self.cache[word] = bucket(word, self.ROWS)
        return found

    def probabilities(self, x: np.ndarray, candidates: list[np.ndarray]) -> np.ndarray:
        """As :meth:`WordPolicy.probabilities`, reading only the rows the candidates name and the features that are
        not zero (a menu names a few hundred of the 4,096 rows, and a request a few dozen words)."""
        columns = np.flatnonzero(x)
        rows = np.concatenate(candidates)
        per_word = self.weights[np.ix_(rows, columns)] @ x[columns]
        scores = np.add.reduceat(per_word, np.cumsum([0] + [len(words) for words in candidates[:-1]]))
        weights = np.exp(scores - scores.max())
        return weights / weights.sum()

    def context(self, transcript: Transcript, made: list[Call]) -> np.ndarray:
        """The features: the request's words, the tools called this turn, how many calls, the last refusal, a constant."""
        x = np.zeros(self.REQUEST + self.STATE + 1)
        for word in _LETTERS.findall(transcript.instruction.lower()):
            x[bucket(word, self.REQUEST)] = 1.0
        state = [f"called {name}" for name, _ in made] + [f"calls {min(len(made), 3)}"]
        if made and transcript.results and transcript.results[-1].startswith('{"error"'):
            state.append("refused")
        for word in state:
            x[self.REQUEST + bucket(word, self.STATE)] = 1.0
        x[-1] = 1.0
        return x

    @staticmethod
    def origins(transcript: Transcript) -> dict[str, list[str]]:
        """Where each value seen came from, in words (see the class docstring), keyed by its :func:`answer_text`."""
        request = transcript.instruction.lower()
        words = set(_LETTERS.findall(request))
        seen = sightings(transcript.instruction, transcript.results)
        stated = [s.value for s in seen if s.from_request]

        def before(text: str) -> list[str]:
            at = request.find(text.lower())
            return [f"after {word}" for word in _LETTERS.findall(request[:at])[-2:]] if at >= 0 else []

        def named(value: Any) -> bool:
            if isinstance(value, str):
                return len(value) >= 3 and value.lower() in request
            return value in stated

        origins: dict[str, set[str]] = {}
        for s in seen:
            found = origins.setdefault(answer_text(s.value), set())
            if s.from_request:
                found |= {"request", *before(answer_text(s.value) if not isinstance(s.value, float) else f"{s.value:.2f}")}
                continue
            found |= {f"key {s.key}", f"shape {s.shape}"}
            links = [value for value in s.record if named(value)]
            if links:
                found |= {f"linked {min(len(links), 2)}", *(f"linked {word}" for word in before(answer_text(links[0])))}
            if isinstance(s.value, str) and (tail := _LETTERS.findall(s.value.lower())) and tail[-1] in words:
                found.add("tail")
        linked = {value for value, found in origins.items() if any(word.startswith("linked ") for word in found)}
        for s in seen:
            if not s.from_request and any(answer_text(value) in linked for value in s.record if isinstance(value, str)):
                origins[answer_text(s.value)].add("linked twice")
        return {value: sorted(found) for value, found in origins.items()}

    def episode(self, env: Match, seed: int, rng: np.random.Generator) -> tuple[float, list[Step]]:
        """One episode sampled from the policy with ``rng``, one call per step: its return and its steps."""
        env.reset(seed)
        transcript, made, done = Transcript(), [], []
        steps: list[Step] = []
        while not env.over:
            transcript.read(env.agent_observation("player_0"))
            enums = {
                (spec["function"]["name"], name)
                for spec in transcript.tools
                for name, schema in spec["function"]["parameters"]["properties"].items()
                if "enum" in schema or schema.get("type") == "boolean"
            }
            origins = self.origins(transcript)
            menu = transcript.menu()
            rows: dict[tuple[str, str, type, Any], list[int]] = {}
            candidates = []
            for name, arguments in menu:
                words = {self.row(f"tool {name}"), self.row(f"form {name} {' '.join(arguments)}")}
                if (name, arguments) in done:
                    words |= {self.row(f"repeat {name}"), self.row("repeat")}
                for argument, value in arguments.items():
                    key = (name, argument, type(value), value)
                    if key not in rows:
                        text = answer_text(value)
                        described = [f"= {text}"] if (name, argument) in enums else origins.get(text, [])
                        # Each origin twice: for this tool's argument, and for any argument (what holds of
                        # values from the request or from a linked record in one tool then helps in the others).
                        rows[key] = [self.row(f"{where} {word}") for word in described for where in (f"{name}.{argument}", "any")]
                    words.update(rows[key])
                candidates.append(np.array(sorted(words)))
            x = self.context(transcript, made)
            probabilities = self.probabilities(x, candidates)
            choice = int(rng.choice(len(menu), p=probabilities))
            name, arguments = menu[choice]
            reward = env.submit("player_0", call(name, **arguments)).get("player_0", 0.0)
            steps.append((x, candidates, choice, probabilities, reward))
            done.append((name, arguments))
            made = [] if name == "finish" else made + [(name, arguments)]
        return env.returns["player_0"], steps

    def success_rates(self, env: Match, episodes: int) -> tuple[float, float]:
        """As :meth:`WordPolicy.success_rate`, and the share won of those episodes whose request some tool can do (where
        a policy that learned only to declare every request impossible wins nothing)."""
        rng = np.random.default_rng(EVAL_SEED)
        won, possible = [], []
        for index in range(episodes):
            won.append(self.episode(env, EVAL_SEED + index, rng)[0] > 0)
            possible.append(not env.game.world.turns[0].impossible)
        return float(np.mean(won)), float(np.mean([w for w, p in zip(won, possible) if p]))


@pytest.mark.slow
@pytest.mark.parametrize("seed", SERVICES_SEEDS)
def test_a_word_policy_over_the_menu_learns_services_easiest_level(seed: int) -> None:
    """Issue 34: trained on the training split of Services at difficulty 1 (success only), the policy over the
    honest menu carries out more of the test split's tasks than it did untrained (uniform over the menu), by a
    margin every seed clears."""
    train = Match(Services, {"difficulty": 1, "split": "train"})
    test = Match(Services, {"difficulty": 1})
    policy = MenuPolicy(seed)
    before, before_possible = policy.success_rates(test, SERVICES_EPISODES)
    policy.train(train, SERVICES_TRAINING)
    after, after_possible = policy.success_rates(test, SERVICES_EPISODES)
    measured = f"seed {seed}: success {before:.3f} -> {after:.3f}, on possible requests {before_possible:.3f} -> {after_possible:.3f}"
    print(measured)
    assert after - before >= SERVICES_MARGIN, f"{measured} after {SERVICES_TRAINING} episodes: gain below {SERVICES_MARGIN}"
    assert after_possible - before_possible >= SERVICES_POSSIBLE_MARGIN, f"{measured}: the gain is not on requests the tools can do"
