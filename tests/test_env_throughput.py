"""The text benchmark's engine+reads loop reads what the AEC face's ``last()`` gives (issue 37).

``benchmarks/env_throughput.py`` prints ``text/engine+reads`` as the share of the text loop's speed that the AEC
face's own bookkeeping leaves; that holds only if the loop builds the same infos and observations as the face.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.core.observation import Observer
from parlour.envs.registry import game_class


def load_benchmark():
    """``benchmarks/env_throughput.py`` as a module, loaded from its file (the benchmarks are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("env_throughput", Path(__file__).resolve().parent.parent / "benchmarks" / "env_throughput.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


env_throughput = load_benchmark()


@pytest.mark.parametrize("name", sorted(env_throughput.SHARED))
def test_face_reads_are_what_the_aec_face_gives(name):
    options = env_throughput.SHARED[name][0]
    mine, _ = env_throughput.shared_scripts(name, episodes=3)
    env = parlour.make_aec(f"parlour/{name}-v0", **options)
    match = Match(game_class(f"parlour/{name}-v0"), options)
    observer = Observer(match, "text", None)
    reads = 0
    for seed, script in enumerate(mine):
        env.reset(seed=seed)
        match.reset(seed)
        moves = iter(script)
        for agent in env.agent_iter():
            observation, _, termination, truncation, info = env.last()
            if termination or truncation:
                # The closing reads the benchmark makes for every player once the episode is over.
                assert match.over and (info, observation) == env_throughput.face_reads(observer, agent)
                env.step(None)
                continue
            assert match.acting()[0] == agent
            assert (info, observation) == env_throughput.face_reads(observer, agent)
            move = next(moves)
            env.step(move)
            match.submit(agent, move)
            reads += 1
    assert reads > 0
