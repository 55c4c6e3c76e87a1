"""Environment steps per second: parlour's games in text and vector mode, beside TextArena, PettingZoo and OpenSpiel.

Every suite runs in this one process on this machine, so the ratios are
meaningful even on a noisy shared machine. Each loop plays whole random games
for about ``--seconds`` and counts agent steps:

* parlour text: the PettingZoo AEC loop with the observation text rendered at
  every step (``env.last()``) and a random legal move from ``infos``;
* parlour vector: the same loop in vector mode, a random legal index from the mask;
* TextArena: ``ta.make("<Game>-v0-raw")`` (none of its action or formatting
  wrappers) with only its ``LLMObservationWrapper``, which renders the
  observation text an LLM sees, fetched every step; a random legal action in
  its own grammar read from the game state;
* PettingZoo classic: ``tictactoe_v3`` and ``connect_four_v3`` AEC loops, random legal index;
* OpenSpiel: random legal actions, observation string rendered every step.

Targets: text mode >= 3x TextArena on TicTacToe, KuhnPoker and LiarsDice;
vector mode >= 10x PettingZoo's ``tictactoe_v3``.

Run: ``.venv/bin/python benchmarks/env_throughput.py [--seconds 1.0]``.
"""

from __future__ import annotations

import argparse
import random
import time
import warnings
from typing import Callable

import numpy as np

import parlour
from parlour.envs.registry import all_games


def timed(loop: Callable[[float], int], seconds: float, repeats: int = 3) -> float:
    """Steps per second of ``loop(seconds)`` (which returns how many steps it made), best of ``repeats`` runs.

    The best run is the one least disturbed by whatever else the machine is doing.
    """
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        steps = loop(seconds)
        best = max(best, steps / (time.perf_counter() - start))
    return best


def aec_loop(env, choose: Callable[[str, dict, dict], object]) -> Callable[[float], int]:
    """Whole episodes through any PettingZoo AEC environment, ``choose(agent, observation, info)`` picking each action.

    parlour and PettingZoo classic run through this same loop, so they pay the same harness cost.
    """

    def loop(seconds: float) -> int:
        steps, episode = 0, 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            env.reset(seed=episode)
            episode += 1
            for agent in env.agent_iter():
                observation, _, termination, truncation, info = env.last()
                env.step(None if termination or truncation else choose(agent, observation, info))
                steps += 1
        return steps

    return loop


def random_legal_index(rng: random.Random) -> Callable[[str, dict, dict], int]:
    """A chooser of a uniformly random index allowed by the observation's action mask."""
    return lambda agent, observation, info: rng.choice(np.flatnonzero(observation["action_mask"]).tolist())


def parlour_loop(env_id: str, obs_mode: str) -> Callable[[float], int]:
    """Random play through parlour's AEC face: mask indices in vector mode, legal move strings in text mode."""
    env = parlour.make_aec(env_id, obs_mode=obs_mode)
    rng = random.Random(0)
    if obs_mode == "vector":
        return aec_loop(env, random_legal_index(rng))
    agents = {p: parlour.make_agent("random", env_id=env_id) for p in env.possible_agents}

    def choose(agent: str, observation: dict, info: dict) -> str:
        if info.get("legal_moves"):
            return rng.choice(info["legal_moves"])
        return agents[agent].act(env.match.agent_observation(agent))

    return aec_loop(env, choose)


def textarena_moves(name: str, env) -> list[str]:
    """Legal actions of a TextArena game in its own grammar, read from its state."""
    state = env.state.game_state
    if name == "TicTacToe":
        return [f"[{3 * r + c}]" for r in range(3) for c in range(3) if state["board"][r][c] == ""]
    if name == "KuhnPoker":
        return [f"[{k}]" for k in state["current_legal_action_tree"].keys()]
    if name == "ConnectFour":
        return [f"[col {c}]" for c in range(len(state["board"][0])) if state["board"][0][c] == "."]
    if name == "LiarsDice":
        bid = state["current_bid"]
        moves = [f"[bid {bid['quantity'] + 1}, {face}]" for face in range(max(1, bid["face_value"]), 7)]
        return moves + (["[call]"] if bid["quantity"] else [])
    if name == "Nim":
        return [f"[{i} {k}]" for i, pile in enumerate(state["piles"]) for k in range(1, pile + 1)]
    raise KeyError(name)


TEXTARENA_GAMES = ["TicTacToe", "KuhnPoker", "ConnectFour", "LiarsDice", "Nim"]


def textarena_loop(name: str) -> Callable[[float], int]:
    """Random legal play through TextArena's raw environment."""
    import textarena as ta

    from textarena.wrappers import LLMObservationWrapper

    base = ta.make(f"{name}-v0-raw")
    rng = random.Random(0)

    def loop(seconds: float) -> int:
        steps, episode = 0, 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            env = LLMObservationWrapper(base)  # its history is per wrapper, so one per episode
            env.reset(num_players=2, seed=episode)
            episode += 1
            done = False
            while not done:
                env.get_observation()
                done, _ = env.step(rng.choice(textarena_moves(name, env)))
                steps += 1
        return steps

    return loop


def pettingzoo_loop(name: str) -> Callable[[float], int]:
    """Random legal play through a PettingZoo classic AEC environment (its default wrappers included)."""
    import importlib

    env = importlib.import_module(f"pettingzoo.classic.{name}").env()
    return aec_loop(env, random_legal_index(random.Random(0)))


def openspiel_loop(name: str) -> Callable[[float], int]:
    """Random legal play through OpenSpiel, rendering the acting player's observation (or information state) string."""
    import pyspiel

    game = pyspiel.load_game(name)
    rng = random.Random(0)
    render = "observation_string" if game.get_type().provides_observation_string else "information_state_string"

    def loop(seconds: float) -> int:
        steps = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    actions, probabilities = zip(*state.chance_outcomes())
                    state.apply_action(rng.choices(actions, probabilities)[0])
                    continue
                getattr(state, render)(state.current_player())
                state.apply_action(rng.choice(state.legal_actions()))
                steps += 1
        return steps

    return loop


OPENSPIEL_NAMES = {
    "TicTacToe": "tic_tac_toe",
    "ConnectFour": "connect_four",
    "KuhnPoker": "kuhn_poker",
    "LeducHoldem": "leduc_poker",
    "LiarsDice": "liars_dice",
}
PETTINGZOO_NAMES = {"TicTacToe": "tictactoe_v3", "ConnectFour": "connect_four_v3"}


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per run; each figure is the best of 3 runs")
    args = parser.parse_args()
    warnings.simplefilter("ignore")

    header = f"{'game':<26}{'text':>10}{'vector':>10}{'TextArena':>11}{'PZ':>9}{'OpenSpiel':>11}{'text/TA':>9}{'vec/PZ':>8}"
    print(header)
    print("-" * len(header))
    for game in all_games():
        name = game.name
        text = timed(parlour_loop(game.env_id(), "text"), args.seconds)
        enumerable = parlour.make_aec(game.env_id()).match.game.enumerable
        vector = timed(parlour_loop(game.env_id(), "vector"), args.seconds) if enumerable else None
        textarena = timed(textarena_loop(name), args.seconds) if name in TEXTARENA_GAMES else None
        pz = timed(pettingzoo_loop(PETTINGZOO_NAMES[name]), args.seconds) if name in PETTINGZOO_NAMES else None
        try:
            spiel = timed(openspiel_loop(OPENSPIEL_NAMES[name]), args.seconds) if name in OPENSPIEL_NAMES else None
        except ImportError:
            spiel = None

        def cell(value: float | None, width: int) -> str:
            return f"{value:>{width}.0f}" if value is not None else f"{'-':>{width}}"

        def ratio(a: float | None, b: float | None) -> str:
            return f"{a / b:>7.1f}x" if a is not None and b is not None else f"{'-':>8}"

        print(
            f"{game.env_id():<26}{cell(text, 10)}{cell(vector, 10)}{cell(textarena, 11)}{cell(pz, 9)}{cell(spiel, 11)}"
            f"{ratio(text, textarena):>9}{ratio(vector, pz)}"
        )
    print("\nsteps per second; text/TA = parlour text over TextArena raw, vec/PZ = parlour vector over PettingZoo classic")


if __name__ == "__main__":
    main()
