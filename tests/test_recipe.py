"""The README's recipe, step by step: a model to try, a list to search, clear refusals, and training that can be stopped.

Each test is one promise the README makes to a new user: ``parlour tiny-model``
builds a model ``hf:`` plays without warnings, ``parlour list`` filters and
speaks JSON, ``--episodes 0`` is refused, Ctrl-C during ``parlour train llm``
keeps the checkpoint and the plots, and ``--format hf`` writes what chat
templates read.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

import parlour
from parlour.cli import main
from parlour.envs.registry import all_games

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TTT = "parlour/TicTacToe-v0"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A model built by the documented command (its tokenizer trained on TicTacToe's prompts), and what it printed."""
    pytest.importorskip("transformers")
    folder = tmp_path_factory.mktemp("tiny") / "model"
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main(["tiny-model", str(folder), "--env", TTT]) == 0
    return folder, printed.getvalue()


@pytest.fixture
def tiny(built: tuple[Path, str]) -> Path:
    """The folder of the model ``parlour tiny-model`` built."""
    return built[0]


def test_tiny_model_command_builds_a_model_that_hf_plays_without_warnings(built: tuple[Path, str]) -> None:
    tiny, printed = built
    assert (tiny / "config.json").exists() and (tiny / "tokenizer.json").exists()
    assert f"agent spec: hf:{tiny}" in printed and "261k parameters" in printed
    with warnings.catch_warnings():
        # A normal hf: run, generation included, raises no deprecation or future warning of ours or the libraries'.
        warnings.simplefilter("error", FutureWarning)
        warnings.simplefilter("error", DeprecationWarning)
        results = parlour.evaluate(TTT, [f"hf:{tiny}", "random"], episodes=2, seed=0, progress=False)
    assert len(results.records) == 2


def test_tiny_model_command_refuses_a_width_its_heads_do_not_divide(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tiny-model", str(tmp_path / "m"), "--width", "10", "--heads", "3"]) == 2
    assert "--heads must divide --width" in capsys.readouterr().err and not (tmp_path / "m").exists()


def test_list_filters_by_word_and_category_and_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "poker"]) == 0
    printed = capsys.readouterr().out
    assert "parlour/KuhnPoker-v0" in printed and "parlour/LeducHoldem-v0" in printed and "TicTacToe" not in printed
    assert main(["list", "--category", "negotiation", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {entry["id"] for entry in listed} == {game.env_id() for game in all_games() if game.category == "negotiation"}
    assert {"parlour/Bargaining-v0", "parlour/Commons-v0", "parlour/Ultimatum-v0"} <= {entry["id"] for entry in listed}
    commons = next(entry for entry in listed if entry["id"] == "parlour/Commons-v0")
    assert commons["category"] == "negotiation" and "sustainable" in commons["agents"] and commons["players"]
    assert main(["list", "--category", "negotation"]) == 2
    assert "did you mean 'negotiation'" in capsys.readouterr().err


@pytest.mark.parametrize("episodes", ["0", "-3"])
def test_eval_refuses_fewer_than_one_episode(episodes: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["eval", TTT, "--agent", "random", "--opponent", "random", "--episodes", episodes, "--out", str(tmp_path / "b")])
    assert raised.value.code == 2
    assert "--episodes: must be at least 1" in capsys.readouterr().err and not (tmp_path / "b").exists()


def test_ctrl_c_during_llm_training_saves_the_checkpoint_and_the_plots(tiny: Path, tmp_path: Path) -> None:
    pytest.importorskip("accelerate")
    out = tmp_path / "run"
    command = [
        sys.executable,
        "-m",
        "parlour.cli",
        "train",
        "llm",
        TTT,
        "--model",
        str(tiny),
        "--out",
        str(out),
        "--updates",
        "1000",
        "--episodes",
        "4",
        "--group-size",
        "2",
        "--eval-episodes",
        "2",
        "--eval-every",
        "1000",
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--quiet",
    ]
    # A shell starts background jobs with SIGINT ignored, and Python keeps that: give the trainer the default back,
    # so that it sees Ctrl-C however this suite was started.
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        # Interrupt once training is under way: its first update is in train.csv.
        train_csv = out / "train.csv"
        while process.poll() is None and not (train_csv.exists() and len(train_csv.read_text().splitlines()) > 1):
            time.sleep(0.2)
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and f"hf:{out / 'checkpoint'}" in stdout
    assert (out / "checkpoint" / "config.json").exists() and (out / "learning.png").exists()
    # The checkpoint plays.
    results = parlour.evaluate(TTT, [f"hf:{out / 'checkpoint'}", "random"], episodes=1, seed=0, progress=False)
    assert results.records[0]["agents"]["player_0"] == f"hf:{out / 'checkpoint'}"


#: A tool-aware chat template written the way Qwen2.5's and Hermes' are: the tools and each call's arguments
#: rendered with ``tojson``, so they must be JSON objects, not JSON text.
TOOL_TEMPLATE = (
    "{% for tool in tools %}<tool>{{ tool | tojson }}</tool>\n{% endfor %}"
    "{% for message in messages %}<|{{ message['role'] }}|>{{ message['content'] or '' }}"
    "{% for call in message['tool_calls'] or [] %}<tool_call>{{ {'name': call['function']['name'], "
    "'arguments': call['function']['arguments']} | tojson }}</tool_call>{% endfor %}\n{% endfor %}"
)


def test_hf_export_holds_tools_as_a_list_and_arguments_as_objects_for_chat_templates(tiny: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    from transformers import AutoTokenizer

    results = parlour.evaluate("parlour/Search-v0", ["oracle"], episodes=1, seed=1, env_kwargs={"world_seed": 3, "world_size": 600}, progress=False)
    bundle = results.save(tmp_path / "search")
    assert main(["export", str(bundle), "--format", "hf", "--out", str(tmp_path / "hf")]) == 0
    row = datasets.load_from_disk(str(tmp_path / "hf"))[0]
    assert isinstance(row["tools"], list) and {tool["function"]["name"] for tool in row["tools"]} >= {"search", "answer"}
    calls = [call for message in row["messages"] for call in message["tool_calls"] or []]
    assert calls and all(isinstance(call["function"]["arguments"], dict) for call in calls)
    rendered = AutoTokenizer.from_pretrained(tiny).apply_chat_template(
        row["messages"], tools=row["tools"], chat_template=TOOL_TEMPLATE, tokenize=False
    )
    first = calls[0]["function"]
    assert f"<tool_call>{json.dumps({'name': first['name'], 'arguments': first['arguments']})}</tool_call>" in rendered
