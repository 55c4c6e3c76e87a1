"""``stockfish`` for Chess: the Stockfish engine (Debian's ``stockfish`` package) at a set skill and depth.

Stockfish is a system package, installed by ``scripts/system_packages.sh``
(``make test`` and ``make demo`` run it; otherwise ``sudo apt-get install
stockfish``); Debian puts it at ``/usr/games/stockfish``, outside most
``PATH``\\ s, and :func:`stockfish_path` looks there too. The agent talks UCI
to it through python-chess's ``chess.engine``.

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
import weakref
from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.games.chess import chess_module

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


def modules() -> tuple[Any, Any]:
    """python-chess's ``chess`` and ``chess.engine`` modules (an ImportError naming the extra without them)."""
    chess_module()
    import chess
    import chess.engine

    return chess, chess.engine


def stockfish_path() -> str | None:
    """The Stockfish executable: ``stockfish`` on ``PATH``, else Debian's ``/usr/games/stockfish``; ``None`` if neither."""
    found = shutil.which("stockfish")
    if found:
        return found
    return DEBIAN_STOCKFISH if os.access(DEBIAN_STOCKFISH, os.X_OK) else None


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
        self.path = path or stockfish_path()
        if self.path is None:
            raise RuntimeError(MISSING)
        self._engine: Any = None
        super().__init__(env_id, seed)

    def engine(self) -> Any:
        """The running engine, started on first use (one thread, a small hash) and stopped with the agent."""
        if self._engine is None:
            _, engines = modules()
            engine = engines.SimpleEngine.popen_uci(self.path)
            engine.configure({"Threads": 1, "Hash": 16})
            # The callback holds the engine, not the agent: the agent can be collected, and its engine then quits.
            weakref.finalize(self, engine.quit)
            self._engine = engine
        return self._engine

    def act(self, observation: Mapping[str, Any]) -> str:
        """The chosen move, in UCI, for the position of the player's view."""
        chess, engines = modules()
        view = observation["view"]
        board = chess.Board(view["start_fen"])
        for move in view["moves"]:
            board.push_uci(move)
        multipv = 1 if self.skill == 20 else MULTIPV
        # A fresh game object makes python-chess send ucinewgame, which empties the hash: the result depends on the position alone.
        lines = self.engine().analyse(board, engines.Limit(depth=self.depth), multipv=multipv, game=object())
        candidates = [(line["pv"][0], line["score"].relative.score(mate_score=MATE_SCORE)) for line in lines if line.get("pv")]
        if len(candidates) == 1 or self.skill == 20:
            return candidates[0][0].uci()
        temperature = (20 - self.skill) * SKILL_CENTIPAWNS
        best = max(score for _, score in candidates)
        weights = [math.exp((score - best) / temperature) for _, score in candidates]
        total = sum(weights)
        pick = int(self.rng.choice(len(candidates), p=[w / total for w in weights]))
        return candidates[pick][0].uci()

    def __getstate__(self) -> dict[str, Any]:
        """The agent without its engine process (snapshots pickle opponents); a copy starts its own when it first acts."""
        state = dict(self.__dict__)
        state["_engine"] = None
        return state


register_scripted("stockfish", "parlour/Chess-v0", StockfishAgent)
