"""The command line's user errors: one format and exit status, "did you mean", fast failures, no leftover bundles."""

from __future__ import annotations

import argparse
import contextlib
import io
import socket
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from parlour.agents import check_agent_spec
from parlour.baselines import scripted_names
from parlour.cli import build_parser, main, subcommands
from parlour.evaluation.results import Results
from parlour.evaluation.runner import evaluate
from parlour.leaderboard.api import Leaderboard


class Crash:
    """How many moves :func:`crashing_agent` makes before it raises (``None``: never); shared by every copy."""

    after: int | None = None
    calls = 0


class CrashingAgent:
    """Plays the first legal move until :class:`Crash` says to fail, like an agent whose server goes away mid-run."""

    def act(self, observation: dict[str, Any]) -> str:
        """The first legal move, or a ``RuntimeError`` once the allowed moves are used up."""
        Crash.calls += 1
        if Crash.after is not None and Crash.calls > Crash.after:
            raise RuntimeError("the agent's server went away")
        return observation["legal_moves"][0]


def crashing_agent() -> CrashingAgent:
    """Factory for ``python:tests.test_cli_errors:crashing_agent``."""
    return CrashingAgent()


class GreedySeller:
    """A PriceNegotiation seller that always asks the highest price (200 by default), so a buyer who accepts overpays."""

    def act(self, observation: dict[str, Any]) -> str:
        """Ask the maximum price."""
        return f"Take it or leave it. [offer] {observation['view']['max_price']}"


def greedy_seller() -> GreedySeller:
    """Factory for ``python:tests.test_cli_errors:greedy_seller``."""
    return GreedySeller()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``parlour ARGV`` in this process: (exit status, stdout, stderr)."""
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def not_found_server() -> Iterator[int]:
    """An HTTP server on a free loopback port that answers 404 to everything; yields the port."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_error(404)

        do_POST = do_GET

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def assert_one_error_line(status: int, err: str, command: str, *fragments: str) -> None:
    """Exit status 2 and a single ``parlour COMMAND: error: ...`` line on stderr holding every fragment."""
    assert status == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"parlour {command}: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], err


# ------------------------------------------------------------------ 1. failed runs leave no bundle behind


def test_a_failed_eval_leaves_no_bundle_and_the_next_run_with_the_same_out_works(tmp_path, capsys) -> None:
    out = tmp_path / "runs" / "ttt"
    refused = f"openai:tiny@http://127.0.0.1:{free_port()}/v1"
    bad_specs = ["minimx", "hf:/nonexistent/model", refused, "python:tests.test_cli_errors:no_such_factory"]
    for spec in bad_specs:
        status, _, err = run(capsys, "eval", "parlour/TicTacToe-v0", "--agent", spec, "--episodes", "2", "--out", str(out))
        assert status == 2 and "parlour eval: error:" in err, (spec, err)
        # Checked before anything was drawn or created.
        assert "episode/s" not in err and not (tmp_path / "runs").exists(), spec
    assert run(capsys, "eval", "parlour/TicTacToe-v0", "--agent", "minimax", "--episodes", "2", "--out", str(out))[0] == 0
    assert len(Results.load(out).records) == 2


def test_a_run_failing_before_its_first_episode_removes_its_bundle(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(Crash, "after", 0)
    out = tmp_path / "runs" / "ttt"
    argv = ["eval", "parlour/TicTacToe-v0", "--agent", "python:tests.test_cli_errors:crashing_agent", "--episodes", "2", "--quiet"]
    status, _, err = run(capsys, *argv, "--out", str(out))
    assert_one_error_line(status, err, "eval", "the agent's server went away")
    assert not (tmp_path / "runs").exists()


def test_a_run_failing_after_some_episodes_stays_resumable(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(Crash, "calls", 0)
    monkeypatch.setattr(Crash, "after", 6)
    out = tmp_path / "ttt"
    argv = ["eval", "parlour/TicTacToe-v0", "--agent", "python:tests.test_cli_errors:crashing_agent", "--episodes", "4"]
    argv += ["--in-flight", "1", "--quiet", "--out", str(out)]
    status, _, err = run(capsys, *argv)
    assert status == 2 and "rerun the same command to resume" in err
    kept = len(Results.load(out).records)
    assert 1 <= kept < 4
    monkeypatch.setattr(Crash, "after", None)
    assert run(capsys, *argv)[0] == 0
    assert [record["episode"] for record in Results.load(out).records] == [0, 1, 2, 3]


# ------------------------------------------------------------------ 2. did you mean


def test_unknown_environments_agents_and_options_suggest_the_closest(tmp_path, capsys) -> None:
    status, _, err = run(capsys, "eval", "parlour/TicTacToo-v0", "--agent", "random")
    assert_one_error_line(status, err, "eval", "did you mean 'parlour/TicTacToe-v0'")
    status, _, err = run(capsys, "play", "TicTacToe-v0")
    assert_one_error_line(status, err, "play", "did you mean 'parlour/TicTacToe-v0'")
    status, _, err = run(capsys, "eval", "parlour/TicTacToe-v0", "--agent", "minimx", "--out", str(tmp_path / "b"))
    assert_one_error_line(status, err, "eval", "no agent 'minimx'", "did you mean 'minimax'")
    status, _, err = run(capsys, "play", "parlour/Nim-v0", "--opponent", "nimsum")
    assert_one_error_line(status, err, "play", "did you mean 'nim_sum'")
    status, _, err = run(capsys, "eval", "parlour/Nim-v0", "--agent", "nim_sum", "--env-kwarg", "misre=true", "--out", str(tmp_path / "b"))
    assert_one_error_line(status, err, "eval", "'misre' (did you mean 'misere'?)")
    db = tmp_path / "board.db"
    Leaderboard(f"sqlite:///{db}")
    status, _, err = run(capsys, "leaderboard", "show", "--env", "parlour/TicTacToo-v0", "--db", f"sqlite:///{db}")
    assert_one_error_line(status, err, "leaderboard show", "did you mean 'parlour/TicTacToe-v0'")


# ------------------------------------------------------------------ 3. one format, exit status 2


def test_malformed_options_and_seats_are_usage_errors(capsys, monkeypatch) -> None:
    status, _, err = run(capsys, "eval", "parlour/Nim-v0", "--agent", "nim_sum", "--env-kwarg", "misere")
    assert_one_error_line(status, err, "eval", "--env-kwarg takes KEY=VALUE, got 'misere'")
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    status, _, err = run(capsys, "play", "parlour/TicTacToe-v0", "--seat", "7")
    assert_one_error_line(status, err, "play", "--seat must be one of player_0, player_1", "got '7'")


def test_python_specs_say_the_module_must_be_importable(capsys) -> None:
    status, _, err = run(capsys, "eval", "parlour/TicTacToe-v0", "--agent", "python:nomod:f")
    assert_one_error_line(status, err, "eval", "'python:nomod:f'", "must be importable", "PYTHONPATH")
    status, _, err = run(capsys, "eval", "parlour/TicTacToe-v0", "--agent", "python:tests.test_cli_errors:nothing_here")
    assert_one_error_line(status, err, "eval", "has no function or class 'nothing_here'")


def test_openai_urls_must_be_the_api_root(capsys, monkeypatch) -> None:
    port = free_port()
    status, _, err = run(capsys, "eval", "parlour/TicTacToe-v0", "--agent", f"openai:tiny@http://127.0.0.1:{port}")
    assert_one_error_line(status, err, "eval", "has no path", f"use http://127.0.0.1:{port}/v1")
    status, _, err = run(capsys, "eval", "parlour/TicTacToe-v0", "--agent", f"openai:tiny@http://127.0.0.1:{port}/v1/chat/completions")
    assert_one_error_line(status, err, "eval", f"not the endpoint: http://127.0.0.1:{port}/v1")
    with not_found_server() as live:
        # Another path is allowed (some providers mount the API elsewhere) but warned about.
        assert check_agent_spec(f"openai:tiny@http://127.0.0.1:{live}/v1", "parlour/TicTacToe-v0") == []
        monkeypatch.setattr(sys, "stdin", io.StringIO(""))
        status, _, err = run(capsys, "play", "parlour/TicTacToe-v0", "--opponent", f"openai:tiny@http://127.0.0.1:{live}/api")
    assert status == 0
    assert err.startswith("parlour play: warning: ") and "does not end in /v1" in err


def test_an_unreachable_hub_model_fails_in_seconds(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    spec = "hf:parlour-test-nobody/made-up-model-7f3a"
    started = time.monotonic()
    status, _, err = run(capsys, "eval", "parlour/TicTacToe-v0", "--agent", spec, "--out", str(tmp_path / "b"))
    assert time.monotonic() - started < 10
    # Offline this says the hub cannot be reached; online, that the model is not there.
    assert_one_error_line(status, err, "eval", "'parlour-test-nobody/made-up-model-7f3a'", "Hugging Face hub")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    status, _, err = run(capsys, "eval", "parlour/TicTacToe-v0", "--agent", spec, "--out", str(tmp_path / "b"))
    assert_one_error_line(status, err, "eval", "HF_HUB_OFFLINE is set")
    assert not (tmp_path / "b").exists()


def test_submit_to_a_server_that_is_not_running_says_how_to_start_one(tmp_path, capsys, monkeypatch) -> None:
    evaluate("parlour/Nim-v0", ["nim_sum", "random"], episodes=2, out=tmp_path / "bundle", progress=False)
    monkeypatch.setenv("PARLOUR_TOKEN", "plr_test")
    port = free_port()
    status, _, err = run(capsys, "submit", str(tmp_path / "bundle"), "--server", f"http://127.0.0.1:{port}")
    assert_one_error_line(status, err, "submit", "cannot reach", f"`parlour leaderboard serve --db sqlite:///leaderboard.db --port {port}`")
    monkeypatch.delenv("PARLOUR_TOKEN")
    status, _, err = run(capsys, "submit", str(tmp_path / "bundle"), "--server", f"http://127.0.0.1:{port}")
    assert_one_error_line(status, err, "submit", "set PARLOUR_TOKEN")


def test_add_submitter_prints_a_ready_export_line(tmp_path, capsys) -> None:
    status, out, err = run(capsys, "leaderboard", "add-submitter", "alice", "--db", f"sqlite:///{tmp_path / 'lb.db'}")
    token = out.strip()
    assert status == 0 and token.startswith("plr_")
    assert f"\n  export PARLOUR_TOKEN={token}\n" in err
    status, _, err = run(capsys, "leaderboard", "add-submitter", "alice", "--db", f"sqlite:///{tmp_path / 'lb.db'}")
    assert status == 2 and err.startswith("parlour leaderboard add-submitter: error: ")


def test_show_without_db_finds_the_demo_or_says_where_to_point(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PARLOUR_LEADERBOARD_DB", raising=False)
    status, _, err = run(capsys, "leaderboard", "show")
    assert_one_error_line(status, err, "leaderboard show", "no leaderboard database here", "--db", "results/demo/leaderboard.db")
    assert not (tmp_path / "leaderboard.db").exists()
    status, _, err = run(capsys, "leaderboard", "export", "--out", "site", "--db", "sqlite:///missing.db")
    assert_one_error_line(status, err, "leaderboard export", "no leaderboard database at missing.db")
    assert not (tmp_path / "missing.db").exists()
    (tmp_path / "results" / "demo").mkdir(parents=True)
    Leaderboard("sqlite:///results/demo/leaderboard.db")
    status, out, err = run(capsys, "leaderboard", "show")
    assert status == 0 and "using the demo's leaderboard" in err and "agent" in out
    assert not (tmp_path / "leaderboard.db").exists()


def test_list_shows_each_environments_scripted_agents(capsys) -> None:
    status, out, _ = run(capsys, "list")
    lines = out.splitlines()
    nim = next(i for i, line in enumerate(lines) if line.startswith("parlour/Nim-v0 "))
    expected = ["agents:", "nim_sum,", "ppo,", "random"] if "ppo" in scripted_names("parlour/Nim-v0") else ["agents:", "nim_sum,", "random"]
    assert status == 0 and lines[nim + 1].split() == expected


def test_every_option_of_every_command_has_a_description() -> None:
    parser = build_parser()
    missing = []
    for command in [parser, *subcommands(parser)]:
        for action in command._actions:
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{command.prog} {'/'.join(action.option_strings) or action.dest}")
            if isinstance(action, argparse._SubParsersAction):
                missing += [f"{command.prog} {choice.dest}" for choice in action._choices_actions if not choice.help]
    assert missing == []


# ------------------------------------------------------------------ 5. play at the terminal


def play(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], typed: str, *argv: str) -> tuple[int, str]:
    """``parlour play ARGV`` with ``typed`` as the person's input: (exit status, stdout)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    status = main(["play", *argv])
    return status, capsys.readouterr().out


def test_typos_at_the_terminal_do_not_use_up_the_allowance(monkeypatch, capsys) -> None:
    moves = ["b2", "a1", "b1", "c1", "a2", "c2", "a3", "b3", "c3"]
    typed = "zz\nplease b9\n" + "\n".join(moves) + "\n"
    status, printed = play(
        monkeypatch, capsys, typed, "parlour/TicTacToe-v0", "--opponent", "minimax", "--seed", "0", "--env-kwarg", "error_allowance=0"
    )
    assert status == 0
    assert printed.count("Invalid action:") >= 2 and "do not count against the allowance" in printed
    assert "exceeded the invalid-action allowance" not in printed
    assert "player_0 (X) plays b2." in printed
    # The final board follows the result.
    assert "Final state:" in printed and "(game over:" in printed.split("Final state:")[1]


def test_a_buyer_confirms_before_paying_more_than_its_value_and_sees_the_sellers_cost(monkeypatch, capsys) -> None:
    status, printed = play(
        monkeypatch,
        capsys,
        "[accept]\nn\nI accept. [accept]\ny\n",
        "parlour/PriceNegotiation-v0",
        "--seat",
        "buyer",
        "--opponent",
        "python:tests.test_cli_errors:greedy_seller",
        "--seed",
        "0",
    )
    assert status == 0
    value = int(printed.split("Your private reservation price is ")[1].split(":")[0])
    assert value < 200
    assert printed.count(f"Warning: accepting 200 pays more than your value: your reservation price is {value}") == 2
    assert "Not accepted." in printed
    ending = printed.split("Final state:")[1]
    assert "sold at 200: agreement." in ending and f"Your total reward: {value - 200}." in ending
    assert "seller's private reservation price: " in ending
    assert "Winner:" not in printed


def test_a_negotiation_without_a_deal_says_no_agreement(monkeypatch, capsys) -> None:
    status, printed = play(
        monkeypatch,
        capsys,
        "Too much. [pass]\n",
        "parlour/PriceNegotiation-v0",
        "--seat",
        "buyer",
        "--opponent",
        "python:tests.test_cli_errors:greedy_seller",
        "--seed",
        "1",
        "--env-kwarg",
        "deadline=2",
    )
    assert status == 0
    assert "no deal within 2 turns: no agreement." in printed
    assert "seller's private reservation price: " in printed and "Winner:" not in printed
    assert "Warning" not in printed


def test_bargaining_reveals_the_other_sides_item_values(monkeypatch, capsys) -> None:
    status, printed = play(monkeypatch, capsys, "[pass]\n" * 12, "parlour/Bargaining-v0", "--opponent", "random", "--seed", "3")
    assert status == 0
    ending = printed.split("Final state:")[1]
    assert "agreement" in ending and "player_1's private values: " in ending and " per " in ending


def test_eof_at_the_confirmation_quits(monkeypatch, capsys) -> None:
    status, printed = play(
        monkeypatch,
        capsys,
        "[accept]\n",
        "parlour/PriceNegotiation-v0",
        "--seat",
        "buyer",
        "--opponent",
        "python:tests.test_cli_errors:greedy_seller",
        "--seed",
        "0",
    )
    assert status == 0 and "Warning: accepting 200" in printed and printed.rstrip().endswith("Quit.")
