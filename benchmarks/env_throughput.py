"""Moves per CPU second: parlour's games in text and vector mode, beside TextArena, PettingZoo classic and OpenSpiel.

Every library runs in this one process, interleaved: each round plays every
library in turn on the same game for ``--seconds`` of CPU time, and a ratio
is taken within the round, so that the machine's load affects both sides of
it alike. The unit is the same everywhere: a *move*, an action that changes
the game (PettingZoo's closing ``step(None)`` calls and OpenSpiel's chance
outcomes are not moves). Whole random games are played, so every library's
episodes have the lengths its rules give, and the same rules give the same
lengths. Each library builds what its users read every move:

* parlour text: the PettingZoo AEC loop; the observation (text, typed
  messages, mask) is built by ``env.last()``, a random legal move string is read from ``infos``;
* parlour vector: the same loop in vector mode, a random legal index from the mask;
* TextArena: ``ta.make("<Game>-v0-raw")`` with only its ``LLMObservationWrapper``,
  which renders the observation text an LLM sees, fetched every move; a random
  legal action in its own grammar read from the game state;
* PettingZoo classic: ``tictactoe_v3`` and ``connect_four_v3`` AEC loops, a random legal index;
* OpenSpiel: its C++ games driven from a Python loop, a random legal action,
  the acting player's observation tensor built every move.

Printed: for each game and pair, the median ratio of moves per CPU second and
its range over the rounds, beside its target; a missed target is flagged.
Target: text mode >= 3x TextArena. Vector mode here is the one-episode AEC face,
printed for reference; the >= 10x PettingZoo target belongs to the batched vector
face and is measured by ``vector_throughput.py``.

Run: ``.venv/bin/python benchmarks/env_throughput.py [--rounds 5] [--seconds 0.4] [--games TicTacToe,...]``.
"""

from __future__ import annotations

import argparse
import importlib
import random
import statistics
import time
import warnings
from typing import Callable

import numpy as np

import parlour

#: A loop plays whole games for about the given CPU seconds and returns (moves, CPU seconds used).
Loop = Callable[[float], tuple[int, float]]

TEXTARENA_GAMES = ["TicTacToe", "KuhnPoker", "ConnectFour", "LiarsDice", "Nim"]
OPENSPIEL_NAMES = {"TicTacToe": "tic_tac_toe", "ConnectFour": "connect_four", "KuhnPoker": "kuhn_poker", "LeducHoldem": "leduc_poker", "LiarsDice": "liars_dice"}
PETTINGZOO_NAMES = {"TicTacToe": "tictactoe_v3", "ConnectFour": "connect_four_v3"}
TARGETS = {("text", "TextArena"): 3.0}


def aec_loop(env, choose: Callable[[str, dict, dict], object]) -> Loop:
    """Whole episodes through any PettingZoo AEC environment, ``choose(agent, observation, info)`` picking each move."""

    def loop(seconds: float) -> tuple[int, float]:
        moves, episode = 0, 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            env.reset(seed=episode)
            episode += 1
            for agent in env.agent_iter():
                observation, _, termination, truncation, info = env.last()
                if termination or truncation:
                    env.step(None)
                else:
                    env.step(choose(agent, observation, info))
                    moves += 1
        return moves, time.process_time() - start

    return loop


def random_legal_index(rng: random.Random) -> Callable[[str, dict, dict], int]:
    """A chooser of a uniformly random index allowed by the observation's action mask."""
    return lambda agent, observation, info: rng.choice(np.flatnonzero(observation["action_mask"]).tolist())


def parlour_loop(env_id: str, obs_mode: str) -> Loop:
    """Random play through parlour's AEC face: mask indices in vector mode, legal move strings in text mode."""
    env = parlour.make_aec(env_id, obs_mode=obs_mode)
    rng = random.Random(0)
    if obs_mode == "vector":
        return aec_loop(env, random_legal_index(rng))
    return aec_loop(env, lambda agent, observation, info: rng.choice(info["legal_moves"]))


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


def textarena_loop(name: str) -> Loop:
    """Random legal play through TextArena's raw environment, the LLM's observation text rendered every move."""
    import textarena as ta
    from textarena.wrappers import LLMObservationWrapper

    base = ta.make(f"{name}-v0-raw")
    rng = random.Random(0)

    def loop(seconds: float) -> tuple[int, float]:
        moves, episode = 0, 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            env = LLMObservationWrapper(base)  # its history is per wrapper, so one per episode
            env.reset(num_players=2, seed=episode)
            episode += 1
            done = False
            while not done:
                env.get_observation()
                done, _ = env.step(rng.choice(textarena_moves(name, env)))
                moves += 1
        return moves, time.process_time() - start

    return loop


def pettingzoo_loop(name: str) -> Loop:
    """Random legal play through a PettingZoo classic AEC environment (its default wrappers included)."""
    env = importlib.import_module(f"pettingzoo.classic.{name}").env()
    return aec_loop(env, random_legal_index(random.Random(0)))


def openspiel_loop(name: str) -> Loop:
    """Random legal play through OpenSpiel from Python, the acting player's observation tensor built every move."""
    import pyspiel

    game = pyspiel.load_game(name)
    rng = random.Random(0)

    def loop(seconds: float) -> tuple[int, float]:
        moves = 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    actions, probabilities = zip(*state.chance_outcomes())
                    state.apply_action(rng.choices(actions, probabilities)[0])
                    continue
                state.observation_tensor(state.current_player())
                state.apply_action(rng.choice(state.legal_actions()))
                moves += 1
        return moves, time.process_time() - start

    return loop


def libraries(name: str) -> dict[str, Loop]:
    """The loops to compare for the game ``name``."""
    env_id = f"parlour/{name}-v0"
    loops: dict[str, Loop] = {"text": parlour_loop(env_id, "text")}
    if parlour.make_aec(env_id).match.game.enumerable:
        loops["vector"] = parlour_loop(env_id, "vector")
    if name in TEXTARENA_GAMES:
        loops["TextArena"] = textarena_loop(name)
    if name in PETTINGZOO_NAMES:
        loops["PettingZoo"] = pettingzoo_loop(PETTINGZOO_NAMES[name])
    if name in OPENSPIEL_NAMES:
        try:
            loops["OpenSpiel"] = openspiel_loop(OPENSPIEL_NAMES[name])
        except ImportError:
            pass
    return loops


def measure(loops: dict[str, Loop], rounds: int, seconds: float) -> dict[str, list[float]]:
    """Moves per CPU second of each loop in each of ``rounds`` rounds, every loop playing ``seconds`` in turn per round."""
    rates: dict[str, list[float]] = {library: [] for library in loops}
    for _ in range(rounds):
        for library, loop in loops.items():
            moves, cpu = loop(seconds)
            rates[library].append(moves / cpu)
    return rates


def report_ratio(mine: str, peer: str, rates: dict[str, list[float]], target: float | None, separator: str = "/") -> bool:
    """Print the median and range of ``mine``'s rate over ``peer``'s, round by round, beside ``target``; whether it is missed."""
    ratios = [a / b for a, b in zip(rates[mine], rates[peer])]
    verdict = ""
    missed = False
    if target is not None:
        missed = statistics.median(ratios) < target
        verdict = f"  target >= {target:g}x: {'MISSED' if missed else 'met'}"
    print(f"  {mine}{separator}{peer}: {statistics.median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]{verdict}")
    return missed


def main() -> None:
    """Measure every game's libraries in interleaved rounds and print rates and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--seconds", type=float, default=0.4, help="CPU seconds per library per round (default 0.4)")
    parser.add_argument("--games", default="TicTacToe,ConnectFour,KuhnPoker,LiarsDice,Nim,LeducHoldem", help="comma-separated game names")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    missed = 0
    print(f"moves per CPU second, median of {args.rounds} interleaved rounds of {args.seconds}s each\n")
    for name in args.games.split(","):
        rates = measure(libraries(name), args.rounds, args.seconds)
        print(name + ": " + ", ".join(f"{library} {statistics.median(r):,.0f}" for library, r in rates.items()))
        for mine in ("text", "vector"):
            for peer in ("TextArena", "PettingZoo", "OpenSpiel"):
                if mine in rates and peer in rates:
                    missed += report_ratio(mine, peer, rates, TARGETS.get((mine, peer)))
    print(f"\n{missed} target(s) missed")


if __name__ == "__main__":
    main()
