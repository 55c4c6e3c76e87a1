"""Shared fixtures: the list of environments and their observation modes, one torch thread for tiny models, and
deterministic torch for learning tests; a test that needs bubblewrap where it is not installed is skipped."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

import parlour
from parlour.envs.registry import all_games

#: Each phase of a test has a time limit that fails that test alone (tests/phase_timeout.py).
pytest_plugins = ["tests.phase_timeout"]


def env_modes() -> list[tuple[str, str]]:
    """(env_id, obs_mode) pairs for every registered environment and every mode it supports."""
    pairs = []
    for game in all_games():
        pairs.append((game.env_id(), "text"))
        if parlour.make_aec(game.env_id()).match.game.enumerable:
            pairs.append((game.env_id(), "vector"))
    return pairs


ENV_IDS = parlour.list_envs()
ENV_MODES = env_modes()


#: The slow tier, whole modules: learning and measurement experiments, whole demos, trainers, worker processes and
#: clusters, real browsers, and plays of many episodes per environment. ``make test`` runs every tier;
#: ``make test-fast`` (``-m "not slow"``) the contract tests. A single slow test elsewhere is marked ``slow`` itself.
SLOW_MODULES = frozenset(
    {
        "test_learnability",
        "test_llm_training",
        "test_sb3_training",
        "test_sb3_trainer",
        "test_ppo_baselines",
        "test_train_roles",
        "test_bridge_trl",
        "test_trl_adapter",
        "test_kv_reuse",
        "test_llm_transformers",
        "test_agent_specs",
        "test_leaderboard_demo",
        "test_demo_first_run",
        "test_recipe",
        "test_readme",
        "test_executors",
        "test_workers",
        "test_reference_agents",
        "test_returns",
        "test_seeds_property",
        "test_vector_boards",
        "test_agentic_paths",
        "test_shop_browser",
        "test_leaderboard_web",
        "test_watch_play",
        "test_sandbox_hardening",
        "test_sandbox_budget",
        "test_coder_tester_budget",
        "test_live_erase",
        "test_leaderboard_live",
        "test_leaderboard_coding",
        "test_export_command",
    }
)


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker of the tests that take minutes on a loaded machine (deselect them with ``-m "not slow"``)."""
    config.addinivalue_line("markers", "slow: takes minutes on a loaded machine; deselect with -m 'not slow'")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test of :data:`SLOW_MODULES` ``slow``."""
    for item in items:
        if item.module is not None and item.module.__name__.rpartition(".")[2] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """A test that fails only because a system package is not installed (bubblewrap for the coding environments
    of a parametrised test over every environment, Stockfish for chess's strong agent) is reported as skipped,
    with the install line, as the README promises."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.excinfo is not None:
        from parlour.baselines.chess import MISSING as STOCKFISH_MISSING
        from parlour.baselines.chess import stockfish_path
        from parlour.sandbox import BWRAP, SandboxUnavailable

        if call.excinfo.errisinstance(SandboxUnavailable) and shutil.which(BWRAP) is None:
            missing = f"SANDBOX MISSING: {call.excinfo.value}"
        elif STOCKFISH_MISSING in str(call.excinfo.value) and stockfish_path() is None:
            missing = f"STOCKFISH MISSING: {STOCKFISH_MISSING}"
        else:
            return
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {missing}")


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """One torch thread for a module's tests: their models are tiny and the cores are shared, so more threads only contend."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def deterministic_torch() -> Iterator[None]:
    """One thread and torch's deterministic algorithms for a module's learning tests, so a fixed seed gives one
    result on a machine whatever its core count or load (another CPU's kernels may still round differently:
    learning tests keep margins measured over seeds)."""
    import torch

    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    yield
    torch.use_deterministic_algorithms(deterministic)
    torch.set_num_threads(threads)
