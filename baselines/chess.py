"""``stockfish`` for Chess: the Stockfish engine (Debian's ``stockfish`` package) at a set skill and depth.

Stockfish is a system package, installed by ``scripts/system_packages.sh``
(``make test`` and ``make demo`` run it; otherwise ``sudo apt-get install
stockfish``); Debian puts it at ``/usr/games/stockfish``, outside most
``PATH``\\ s, and :func:`stockfish_path` looks there too. The agent talks UCI
to it over a pipe (:class:`Engine`): no thread of its own, so a process
that ends without closing the agent still exits (the engine then reads the
pipe's end and quits).

Strength has two dials. ``depth`` (default 8) is the engine's search depth
in plies. ``skill`` (0-20, default 20) weakens the choice as Stockfish's own
"Skill Level" does: below 20 the engine scores its best ``MULTIPV`` moves
and the agent picks one at random, weighted by ``exp(score / T)`` with ``T``
growing from 0 at skill 20 to ``(20 - skill) * SKILL_CENTIPAWNS`` centipawns.
The draw comes from the agent's seeded generator, not the clock Stockfish's
option reads, and every search starts from an empty hash table on one
thread, so a seed reproduces the agent's games.

Version history: v0, first release.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import weakref
from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.seeded import SeededAgent

#: Where Debian's ``stockfish`` package installs the engine (``/usr/games`` is often not on ``PATH``).
DEBIAN_STOCKFISH = "/usr/games/stockfish"
#: Why a Stockfish test or run cannot go on without the engine, and what to run.
MISSING = "Stockfish is not installed: run scripts/system_packages.sh as root, or sudo apt-get install stockfish"
#: Candidate moves scored below skill 20.
MULTIPV = 4
#: Centipawns of softmax temperature per skill level below 20.
SKILL_CENTIPAWNS = 15
#: A mate's score in centipawns, above any material count.
MATE_SCORE = 100_000


def stockfish_path() -> str | None:
    """The Stockfish executable: ``stockfish`` on ``PATH``, else Debian's ``/usr/games/stockfish``; ``None`` if neither."""
    found = shutil.which("stockfish")
    if found:
        return found
    return DEBIAN_STOCKFISH if os.access(DEBIAN_STOCKFISH, os.X_OK) else None


def _kill(process: subprocess.Popen) -> None:
    """Stop an engine process that is still running, and reap it."""
    if process.poll() is None:
        process.kill()
        process.wait()


class Engine:
    """A Stockfish process spoken to in UCI over pipes: one thread, a small hash, and an empty hash before every search.

    Args:
        path: the executable.
    """

    def __init__(self, path: str):
        self.process = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        # An engine nobody closed (an agent copied per episode, then dropped) must not outlive its object: each holds
        # about 85 MB, and a demo that leaked one per episode ran the machine out of memory.
        weakref.finalize(self, _kill, self.process)
        self.send("uci")
        self.wait("uciok")
        self.send("setoption name Threads value 1")
        self.send("setoption name Hash value 16")
        self.multipv = 0

    def send(self, command: str) -> None:
        """Write one UCI command."""
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def wait(self, token: str) -> list[str]:
        """The engine's lines up to the first that starts with ``token`` (included); ``RuntimeError`` if it exits first."""
        assert self.process.stdout is not None
        lines = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"Stockfish exited (status {self.process.poll()}) before answering {token!r}")
            lines.append(line.strip())
            if line.startswith(token):
                return lines

    def best(self, start_fen: str, moves: list[str], depth: int, multipv: int) -> list[tuple[str, int]]:
        """The ``multipv`` best moves after ``moves`` from ``start_fen`` at ``depth``, best first, with centipawn scores for the mover."""
        if multipv != self.multipv:
            self.send(f"setoption name MultiPV value {multipv}")
            self.multipv = multipv
        # ucinewgame empties the hash, so the answer depends on the position alone, not on earlier searches.
        self.send("ucinewgame")
        self.send("isready")
        self.wait("readyok")
        self.send(f"position fen {start_fen}" + (f" moves {' '.join(moves)}" if moves else ""))
        self.send(f"go depth {depth}")
        found: dict[int, tuple[str, int]] = {}
        for line in self.wait("bestmove"):
            words = line.split()
            if words[0] != "info" or "pv" not in words or "score" not in words or "bound" in line:
                continue
            rank = int(words[words.index("multipv") + 1]) if "multipv" in words else 1
            kind, value = words[words.index("score") + 1], int(words[words.index("score") + 2])
            score = value if kind == "cp" else (MATE_SCORE - value if value > 0 else -MATE_SCORE - value)
            # Later lines are deeper searches: the last line of each rank is the answer at the full depth.
            found[rank] = (words[words.index("pv") + 1], score)
        if not found:
            raise RuntimeError(f"Stockfish found no move after {moves[-3:]} from {start_fen}")
        return [found[rank] for rank in sorted(found)]

    def close(self) -> None:
        """Ask the engine to quit and wait for it."""
        if self.process.poll() is None:
            try:
                self.send("quit")
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()


class StockfishAgent(SeededAgent):
    """Plays the move Stockfish finds at ``depth``, or a score-weighted pick among its best at ``skill`` below 20.

    Args:
        env_id: the environment (Chess).
        seed: the generator's seed (reset every episode by the runner).
        skill: 0 (weakest) to 20 (the engine's best move); see the module docstring.
        depth: search depth in plies, 1 or more.
        path: the engine's executable; default :func:`stockfish_path`.
    """

    name = "stockfish"

    def __init__(self, env_id: str | None = None, seed: int | None = None, skill: int = 20, depth: int = 8, path: str | None = None):
        if not isinstance(skill, int) or isinstance(skill, bool) or not 0 <= skill <= 20:
            raise ValueError(f"skill must be an int from 0 to 20, got {skill!r}")
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            raise ValueError(f"depth must be a positive int, got {depth!r}")
        self.skill, self.depth = skill, depth
        found = path or stockfish_path()
        if found is None:
            raise RuntimeError(MISSING)
        self.path: str = found
        self._engine: Engine | None = None
        super().__init__(env_id, seed)

    def act(self, observation: Mapping[str, Any]) -> str:
        """The chosen move, in UCI, for the position of the player's view."""
        if self._engine is None:
            self._engine = Engine(self.path)
        view = observation["view"]
        candidates = self._engine.best(view["start_fen"], view["moves"], self.depth, 1 if self.skill == 20 else MULTIPV)
        if len(candidates) == 1:
            return candidates[0][0]
        temperature = (20 - self.skill) * SKILL_CENTIPAWNS
        best = max(score for _, score in candidates)
        weights = [math.exp((score - best) / temperature) for _, score in candidates]
        total = sum(weights)
        return candidates[int(self.rng.choice(len(candidates), p=[w / total for w in weights]))][0]

    def close(self) -> None:
        """Stop the engine process (a later move starts another)."""
        if self._engine is not None:
            self._engine.close()
            self._engine = None

    def __getstate__(self) -> dict[str, Any]:
        """The agent without its engine process (snapshots pickle opponents); a copy starts its own when it first acts."""
        state = dict(self.__dict__)
        state["_engine"] = None
        return state


register_scripted("stockfish", "parlour/Chess-v0", StockfishAgent)
register_ladder(
    "parlour/Chess-v0",
    ["random", ("stockfish", {"skill": 0, "depth": 1}), ("stockfish", {"skill": 10, "depth": 4}), ("stockfish", {"skill": 20, "depth": 8})],
)
