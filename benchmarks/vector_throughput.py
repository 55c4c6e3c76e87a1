"""Moves per CPU second of the batched vector face, beside PettingZoo classic, OpenSpiel, pgx and parlour's one-episode vector face.

Measured as ``env_throughput.py`` measures: every library runs in this one
process, interleaved, each round playing every library in turn on the same game
for ``--seconds`` of CPU time; a ratio is taken within the round; the unit is a
*move*, an action that changes the game, by any seat, and every library
builds the acting player's observation at every move. The batched face
(``gymnasium.make_vec(..., obs_mode="vector")``) is stepped with a random
legal move per episode for the learner, drawn with numpy from the mask it
returns; the other seat is a batched policy that draws a random legal move
the same way from the observations and masks the face builds for it (the
built-in ``opponent="random"`` skips building them, so it is faster still);
its moves are both seats' (``VectorGame.moves_played``), so the autoreset
steps, whose actions are ignored, count only for the opponents' opening moves
they play. The other loops are ``env_throughput.py``'s: PettingZoo classic's
AEC loop and OpenSpiel's C++ games driven from Python, each building the
acting player's observation every move, and parlour's one-episode vector face
through the AEC loop.

Connect Four is also measured beside PufferLib's C Connect Four
(``pufferlib/ocean/connect4``), in *env steps*, N per ``step`` call on both
sides (the learner's move and the opponent's reply, or a restart). PufferLib
cannot be pip-installed offline (its build downloads raylib), so the benchmark
compiles that environment's own C files from a PufferLib source tree or sdist
(``--pufferlib PATH``; without it, from an installed ``pufferlib`` package if
there is one, else the comparison is skipped and says so) with the system C
compiler, a stub ``raylib.h`` (rendering is never called) and PufferLib's
release flags. Its opponent, a depth-3 negamax search in C, is replaced by a
uniformly random legal column drawn with C's ``rand()``, so both sides play
random against random: PufferLib's learner side is the same numpy
random-legal policy as parlour's, its mask read from the observation (a
column is legal while its top cell is empty); parlour's opponent is that
policy too, given the observations the face builds for it. The reference used
is printed.

The board games with batched rules (Othello, Hex, Breakthrough, Clobber,
Mancala, Oware, DotsAndBoxes, the dice game Pig and the card game Goofspiel) are measured beside OpenSpiel's C++ games with
the same rules and sizes (:data:`OPENSPIEL`: parlour's defaults, so Hex is
5x5 and Breakthrough 6x6 there too), both sides random against random.
Goofspiel is simultaneous: a turn is both seats' bids at once, one ``step``
of the batched face, one ``apply_actions`` of OpenSpiel's (after every
player's observation tensor), and two moves on every side, so its ratios
are per turn too.
Where ``pgx`` (JAX) has the game too (:data:`PGX`), it is measured on the
CPU as its documentation runs it: ``jax.jit(jax.vmap(env.step))`` over N
states, a random legal move per state drawn in JAX from the legal-action
mask, ended states replaced by new ones in the same jitted call, N moves per
call; pgx builds the mover's observation at every step (Hex is left out: see
:data:`PGX`). pgx is not
a dependency: the benchmark imports it from the environment, or from a
folder given with ``--pgx PATH`` (``pip install --target PATH jax jaxlib
pgx``), and otherwise says it skipped pgx and how to add it.

Printed: for each game the median moves per CPU second of each library, and
for N = 64 and N = 1024 the median ratio to each peer with its range over the
rounds, beside its target; a missed target is flagged. Targets: >= 10x
PettingZoo classic, >= 1x OpenSpiel, >= 0.5x PufferLib's C Connect Four at
N = 1024 (issue 25; at N = 64 for reference); >= 1x OpenSpiel for the board
games at N = 1024 (issue 37). pgx has no target: its ratios are for reference.

Run: ``.venv/bin/python benchmarks/vector_throughput.py [--rounds 5] [--seconds 0.4] [--games TicTacToe,...] [--sizes 64,1024] [--pufferlib pufferlib-3.0.0.tar.gz] [--pgx PATH]``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import pathlib
import random
import statistics
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import warnings
from typing import Any, Callable, cast

import gymnasium
import numpy as np
from env_throughput import (
    OPENSPIEL_NAMES,
    PETTINGZOO_NAMES,
    Loop,
    aec_loop,
    measure,
    openspiel_loop,
    pettingzoo_loop,
    random_legal_index,
    report_ratio,
)

import parlour
from parlour.envs.core.vector import VectorGame

GAMES = [
    "TicTacToe",
    "ConnectFour",
    "KuhnPoker",
    "LeducHoldem",
    "Nim",
    "Othello",
    "Hex",
    "Breakthrough",
    "Clobber",
    "Mancala",
    "Oware",
    "DotsAndBoxes",
    "Pig",
    "Goofspiel",
]
#: OpenSpiel's games, with parlour's default sizes where they differ from OpenSpiel's.
OPENSPIEL = {
    **OPENSPIEL_NAMES,
    "Nim": "nim(pile_sizes=3;5;7)",
    "Othello": "othello",
    "Hex": "hex(board_size=5)",
    "Breakthrough": "breakthrough(rows=6,columns=6)",
    "Clobber": "clobber(rows=5,columns=6)",
    "Mancala": "mancala",
    "Oware": "oware(num_houses_per_player=6,num_seeds_per_house=4)",
    "DotsAndBoxes": "dots_and_boxes(num_rows=3,num_cols=3)",
    "Pig": "pig(players=2,winscore=100,diceoutcomes=6)",
    "Goofspiel": "goofspiel(num_cards=13,points_order=random,returns_type=win_loss)",
}
#: The board games of issue 37, whose OpenSpiel target holds at this N only (the others' at every N).
BOARD_GAMES = ("Othello", "Hex", "Breakthrough", "Clobber", "Mancala", "Oware", "DotsAndBoxes", "Pig", "Goofspiel")
BOARD_TARGET_SIZE = 1024
#: pgx's games that parlour has, as (pgx module, environment class, its options) for parlour's default sizes.
PGX: dict[str, tuple[str, str, dict[str, Any]]] = {
    "TicTacToe": ("pgx.tic_tac_toe", "TicTacToe", {}),
    "ConnectFour": ("pgx.connect_four", "ConnectFour", {}),
    "Othello": ("pgx.othello", "Othello", {}),
}
# Not Hex: pgx 2.6.0's Hex takes a ``size`` but observes every board as 11x11 (its ``_observe`` reshapes 121 cells to
# ``(size, size)`` and fails for parlour's 5x5), and an 11x11 comparison would not be parlour's game.
TARGETS = {"PettingZoo": 10.0, "OpenSpiel": 1.0}
#: The target ratio to PufferLib's C Connect Four, at this N only.
PUFFER_TARGET = (1024, 0.5)
#: Just enough of raylib's interface for PufferLib's ocean headers to compile: the rendering code is never called.
RAYLIB_STUB = """#include <stdbool.h>
typedef struct Color { unsigned char r, g, b, a; } Color;
typedef struct Texture2D { unsigned int id; int width, height, mipmaps, format; } Texture2D;
typedef struct Rectangle { float x, y, width, height; } Rectangle;
typedef struct Vector2 { float x, y; } Vector2;
#define PURPLE (Color){200, 122, 255, 255}
#define BLACK (Color){0, 0, 0, 255}
#define WHITE (Color){255, 255, 255, 255}
#define KEY_ESCAPE 256
static inline bool IsKeyDown(int key) { return false; }
static inline void InitWindow(int width, int height, const char* title) {}
static inline void SetTargetFPS(int fps) {}
static inline Texture2D LoadTexture(const char* path) { return (Texture2D){0}; }
static inline void BeginDrawing(void) {}
static inline void EndDrawing(void) {}
static inline void ClearBackground(Color color) {}
static inline void DrawRectangle(int x, int y, int width, int height, Color color) {}
static inline void DrawCircle(int x, int y, float radius, Color color) {}
static inline void DrawTexturePro(Texture2D texture, Rectangle source, Rectangle dest, Vector2 origin, float rotation, Color tint) {}
static inline void CloseWindow(void) {}
"""
#: PufferLib's opponent move, a negamax search, is renamed and this one, a uniformly random legal column, takes its place.
RANDOM_OPPONENT = """int compute_env_move(CConnect4* env) {
    uint64_t piece_mask = env->player_pieces | env->env_pieces;
    int legal[7];
    int count = 0;
    for (int column = 0; column < 7; column++) {
        if (!invalid_move(column, piece_mask)) {
            legal[count++] = column;
        }
    }
    return count ? legal[rand() % count] : 0;
}

void compute_observation("""


def random_legal(rng: np.random.Generator) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A batched policy: a uniformly random legal move per row of the int8 masks (any index for a row without one)."""

    def policy(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        # The legal move with the largest random key.
        return (rng.random(masks.shape) * masks).argmax(axis=1)

    return policy


def batched_loop(env_id: str, num_envs: int, unit: str = "moves") -> Loop:
    """The batched vector face, both seats playing random legal moves from the observations it builds.

    Counted in ``unit``: ``"moves"`` by both seats, or ``"steps"``, ``num_envs`` per ``step`` call.
    """
    rng = np.random.default_rng(0)
    learner = random_legal(rng)
    envs = gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", obs_mode="vector", opponent=random_legal(rng))
    game = cast(VectorGame, envs.unwrapped)
    observations, _ = envs.reset(seed=0)

    def loop(seconds: float) -> tuple[int, float]:
        nonlocal observations
        before = game.moves_played
        steps = 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            # Ended episodes (all-zero masks) take any index: the next step restarts them and ignores it.
            observations, *_ = envs.step(learner(observations["observation"], observations["action_mask"]))
            steps += num_envs
        return (game.moves_played - before if unit == "moves" else steps), time.process_time() - start

    return loop


def openspiel_simultaneous_loop(name: str) -> Loop:
    """Random legal play of an OpenSpiel simultaneous-move game from Python: each turn every player's observation tensor, then all moves at once.

    Counted as the other loops count: a move per player per turn.
    """
    import pyspiel

    game = pyspiel.load_game(name)
    rng = random.Random(0)
    players = range(game.num_players())

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
                for player in players:
                    state.observation_tensor(player)
                state.apply_actions([rng.choice(state.legal_actions(player)) for player in players])
                moves += len(players)
        return moves, time.process_time() - start

    return loop


def puffer_source(path: str | None, scratch: pathlib.Path) -> pathlib.Path | None:
    """PufferLib's ``ocean`` folder: from ``path`` (a source tree, or an sdist unpacked into ``scratch``), else from an installed ``pufferlib``, else ``None``."""
    if path is None:
        spec = importlib.util.find_spec("pufferlib")
        if spec is None or spec.origin is None:
            return None
        ocean = pathlib.Path(spec.origin).parent / "ocean"
        # A wheel may ship the compiled environments without their C sources.
        return ocean if (ocean / "connect4" / "connect4.h").is_file() else None
    root = pathlib.Path(path)
    if root.is_file():
        unpacked = scratch / "source"
        with tarfile.open(root) as archive:
            archive.extractall(
                unpacked, members=[m for m in archive.getmembers() if "/pufferlib/ocean/" in m.name and m.name.endswith((".c", ".h"))], filter="data"
            )
        root = unpacked
    found = sorted(root.rglob("ocean/connect4/connect4.h"))
    if not found:
        raise SystemExit(f"--pufferlib {path}: no pufferlib/ocean/connect4/connect4.h in it")
    return found[0].parent.parent


def build_puffer_connect4(ocean: pathlib.Path, scratch: pathlib.Path) -> Any:
    """PufferLib's C Connect Four compiled in ``scratch`` from ``ocean`` with the random opponent (see the module docstring); its binding module."""
    build = scratch / "build"
    (build / "connect4").mkdir(parents=True)
    (build / "env_binding.h").write_text((ocean / "env_binding.h").read_text())
    (build / "connect4" / "binding.c").write_text((ocean / "connect4" / "binding.c").read_text())
    (build / "connect4" / "raylib.h").write_text(RAYLIB_STUB)
    header = (ocean / "connect4" / "connect4.h").read_text()
    for anchor in ("int compute_env_move(CConnect4* env) {", "void compute_observation("):
        if header.count(anchor) != 1:
            raise SystemExit(f"PufferLib's connect4.h has changed: {anchor!r} is not there once, so its opponent cannot be replaced")
    header = header.replace("int compute_env_move(CConnect4* env) {", "int negamax_env_move(CConnect4* env) {").replace(
        "void compute_observation(", RANDOM_OPPONENT
    )
    (build / "connect4" / "connect4.h").write_text(header)
    target = build / f"binding{sysconfig.get_config_var('EXT_SUFFIX')}"
    # PufferLib's own release flags (its setup.py).
    flags = ["-O2", "-flto", "-fwrapv", "-DNPY_NO_DEPRECATED_API=NPY_1_7_API_VERSION", "-DPLATFORM_DESKTOP", "-w"]
    includes = [f"-I{sysconfig.get_paths()['include']}", f"-I{np.get_include()}"]
    compiler = sysconfig.get_config_var("CC") or "cc"
    subprocess.run(
        [*compiler.split(), *flags, "-shared", "-fPIC", *includes, str(build / "connect4" / "binding.c"), "-o", str(target), "-lm"], check=True
    )
    spec = importlib.util.spec_from_file_location("binding", target)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def puffer_loop(binding: Any, num_envs: int) -> Loop:
    """PufferLib's C Connect Four stepped as its ``Connect4.step`` does, the learner a random legal column; env steps, ``num_envs`` per call."""
    rng = np.random.default_rng(0)
    learner = random_legal(rng)
    observations = np.zeros((num_envs, 42), dtype=np.float32)
    actions = np.zeros(num_envs, dtype=np.int32)
    # The C side keeps pointers into these buffers, so the loop holds them all.
    rewards, terminals, truncations = np.zeros(num_envs, np.float32), np.zeros(num_envs, np.uint8), np.zeros(num_envs, np.uint8)
    handle = binding.vec_init(observations, actions, rewards, terminals, truncations, num_envs, 0)
    binding.vec_reset(handle, 0)

    def loop(seconds: float) -> tuple[int, float]:
        assert rewards.size == terminals.size == truncations.size == num_envs  # held for the C side
        steps = 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            # The observation is column-major, six cells a column, bottom first: a column is legal while its top cell is empty.
            actions[:] = learner(observations, observations[:, 5::6] == 0)
            binding.vec_step(handle)
            steps += num_envs
        return steps, time.process_time() - start

    return loop


def pgx_available(path: str | None) -> bool:
    """Whether pgx imports, from ``path`` (put first on ``sys.path``) if given, else from the environment."""
    if path is not None:
        if not pathlib.Path(path).is_dir():
            raise SystemExit(f"--pgx {path}: no such folder; make one with: pip install --target {path} jax jaxlib pgx")
        sys.path.insert(0, path)
    return importlib.util.find_spec("pgx") is not None and importlib.util.find_spec("jax") is not None


def pgx_loop(name: str, num_envs: int) -> Loop:
    """pgx's ``name`` on the CPU: N states stepped by one jitted call, random legal moves, ended states replaced (see the module docstring)."""
    import jax
    import jax.numpy as jnp

    module, cls, options = PGX[name]
    env = getattr(importlib.import_module(module), cls)(**options)
    init, step = jax.vmap(env.init), jax.vmap(env.step)

    def play(state: Any, key: Any) -> tuple[Any, Any]:
        key, move_key, init_key = jax.random.split(key, 3)
        actions = jax.random.categorical(move_key, jnp.where(state.legal_action_mask, 0.0, -jnp.inf))
        state = step(state, actions)
        done = state.terminated | state.truncated
        fresh = init(jax.random.split(init_key, num_envs))
        # Each field of an ended state is taken from a new one, the done flags broadcast over the field's other axes.
        state = jax.tree_util.tree_map(lambda new, old: jnp.where(done.reshape(done.shape + (1,) * (old.ndim - 1)), new, old), fresh, state)
        return state, key

    play = jax.jit(play)
    key = jax.random.PRNGKey(0)
    state = jax.jit(init)(jax.random.split(key, num_envs))
    state, key = play(state, key)  # compiled here, outside the timed loop
    jax.block_until_ready(state)

    def loop(seconds: float) -> tuple[int, float]:
        nonlocal state, key
        moves = 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            state, key = play(state, key)
            jax.block_until_ready(state)
            moves += num_envs
        return moves, time.process_time() - start

    return loop


def libraries(name: str, sizes: list[int], puffer: Any = None, pgx: bool = False) -> dict[str, Loop]:
    """The loops to compare for the game ``name``; ``puffer``: PufferLib's compiled Connect Four, if any; ``pgx``: whether pgx imports."""
    env_id = f"parlour/{name}-v0"
    loops: dict[str, Loop] = {f"batched N={n}": batched_loop(env_id, n) for n in sizes}
    if name == "ConnectFour" and puffer is not None:
        for n in sizes:
            loops[f"batched steps N={n}"] = batched_loop(env_id, n, unit="steps")
            loops[f"PufferLib C N={n}"] = puffer_loop(puffer, n)
    loops["one-episode vector"] = aec_loop(parlour.make_aec(env_id, obs_mode="vector"), random_legal_index(random.Random(0)))
    if name in PETTINGZOO_NAMES:
        loops["PettingZoo"] = pettingzoo_loop(PETTINGZOO_NAMES[name])
    if name in OPENSPIEL:
        try:
            simultaneous = parlour.game_class(env_id).simultaneous
            loops["OpenSpiel"] = (openspiel_simultaneous_loop if simultaneous else openspiel_loop)(OPENSPIEL[name])
        except ImportError:
            pass
    if pgx and name in PGX:
        for n in sizes:
            loops[f"pgx N={n}"] = pgx_loop(name, n)
    return loops


def main() -> None:
    """Measure every game's libraries in interleaved rounds and print rates and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--seconds", type=float, default=0.4, help="CPU seconds per library per round (default 0.4)")
    parser.add_argument("--games", default=",".join(GAMES), help="comma-separated game names")
    parser.add_argument("--sizes", default="64,1024", help="comma-separated numbers of episodes stepped together (default 64,1024)")
    parser.add_argument("--pufferlib", help="a PufferLib source tree or sdist (pufferlib-3.0.0.tar.gz) to build its C Connect Four from")
    parser.add_argument("--pgx", help="a folder holding jax, jaxlib and pgx (pip install --target PATH jax jaxlib pgx), for the pgx comparison")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    games = args.games.split(",")
    pgx = any(name in PGX for name in games) and pgx_available(args.pgx)
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="puffer-connect4-") as scratch:
        ocean = puffer_source(args.pufferlib, pathlib.Path(scratch)) if "ConnectFour" in games else None
        # Loaded, the compiled module no longer needs its file.
        puffer = build_puffer_connect4(ocean, pathlib.Path(scratch)) if ocean is not None else None
    missed = 0
    print(f"moves per CPU second, median of {args.rounds} interleaved rounds of {args.seconds}s each")
    if puffer is not None:
        print(
            f"Connect Four reference: PufferLib's C Connect Four built from {args.pufferlib or ocean}, random opponent; its rows count env steps per CPU second\n"
        )
    elif "ConnectFour" in games:
        print("Connect Four reference: none (no PufferLib source: pass --pufferlib pufferlib-3.0.0.tar.gz, PyPI's sdist)\n")
    else:
        print()
    if any(name in PGX for name in games) and not pgx:
        print(f"pgx: skipped (pgx and jax do not import); to add it: pip install --target PATH jax jaxlib pgx, then --pgx PATH ({', '.join(PGX)})\n")
    for name in games:
        rates = measure(libraries(name, sizes, puffer, pgx), args.rounds, args.seconds)
        print(name + ": " + ", ".join(f"{library} {statistics.median(r):,.0f}" for library, r in rates.items()))
        for size in sizes:
            for peer in ("PettingZoo", "OpenSpiel", "one-episode vector", f"pgx N={size}"):
                if peer in rates:
                    target = None if name in BOARD_GAMES and size != BOARD_TARGET_SIZE else TARGETS.get(peer)
                    missed += report_ratio(f"batched N={size}", peer, rates, target, separator=" / ")
            if f"PufferLib C N={size}" in rates:
                target = PUFFER_TARGET[1] if size == PUFFER_TARGET[0] else None
                missed += report_ratio(f"batched steps N={size}", f"PufferLib C N={size}", rates, target, separator=" / ")
    print(f"\n{missed} target(s) missed")


if __name__ == "__main__":
    main()
