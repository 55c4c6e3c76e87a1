"""Every example in the README runs, every command it shows runs as written (here or in a named test), and the
README lists every environment.

Python blocks run as they stand, each in a fresh folder. Shell blocks run line by line in a fresh folder, in
order, as a user would type them, with ``.venv/bin/parlour`` as this interpreter's ``parlour``. Three kinds
of command do not run here, and :data:`ELSEWHERE` names the test that runs each: ``make`` (it is what runs
this suite), the leaderboard's (they need a server) and ``parlour demo`` (minutes). Long commands run with
the sizes :data:`SHRUNK` lists, flag by flag; every other flag is the README's.
"""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

import parlour

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
EXAMPLES = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)
SHELL_BLOCKS = re.findall(r"```sh\n(.*?)```", README, flags=re.DOTALL)
#: The README's counted path for your own agent: one block that writes a module, starts a server in the background and
#: exports a token, so it runs in bash as a whole (test_readme_counted_path_ends_with_your_agent_in_the_overall_table),
#: not line by line as the others do.
COUNTED_PATH = next(block for block in SHELL_BLOCKS if "parlour connect" in block)
LINE_BLOCKS = [block for block in SHELL_BLOCKS if block is not COUNTED_PATH]


def commands(block: str) -> list[str]:
    """The commands of a shell block, one per line, without their trailing comments."""
    return [re.split(r"\s+#\s", line)[0].strip() for line in block.splitlines() if line.strip()]


def subcommand_names() -> set[str]:
    """Every ``parlour`` subcommand path (``list``, ``train llm``, ...): in running text, a name, not a command to run."""
    from parlour.cli import build_parser, subcommands

    return {sub.prog.removeprefix("parlour ") for sub in subcommands(build_parser())}


#: Commands in running text that can be typed as they stand: not a bare subcommand name, no placeholder in capitals.
INLINE = sorted(
    {
        command
        for command in re.findall(r"`((?:\.venv/bin/)?parlour [^`]*)`", README)
        if command.removeprefix(".venv/bin/").removeprefix("parlour ") not in subcommand_names() and not re.search(r"\b[A-Z]{2,}\b", command)
    }
)

#: Commands that run in another test (file, test function), because they need a server, take minutes or are
#: what runs this suite. Each named test must exist.
ELSEWHERE = {
    "make demo": ("tests/test_demo_first_run.py", "test_the_default_demo_serves_its_index_within_30_seconds_and_shows_its_progress"),
    "make test": ("tests/test_layers.py", None),  # .ci/run is `make test`: this suite, test_layers.py included
    # The contract tier: every test that conftest's hook does not mark slow.
    "make test-fast": ("tests/conftest.py", "pytest_collection_modifyitems"),
    ".venv/bin/parlour demo --no-serve --export site/": ("tests/test_cli.py", "test_demo_export_reuses_the_bundles_already_played"),
    ".venv/bin/parlour submit results/ttt --server http://localhost:8000": (
        "tests/test_leaderboard_server.py",
        "test_end_to_end_evaluate_save_submit_show",
    ),
    "parlour leaderboard serve --db sqlite:///board.db": (
        "tests/test_readme.py",
        "test_readme_counted_path_ends_with_your_agent_in_the_overall_table",
    ),
}

#: Flags run smaller than the README's, per command: (command prefix, flag) -> value run here.
SHRUNK = {
    # 100k steps take half a minute plus evaluations on a CPU; a few updates show the command and its outputs.
    ("parlour train sb3", "--steps"): "4096",
    ("parlour train sb3", "--eval-every"): "2048",
    # 12 updates of 64 games take minutes on a CPU (the README says how long); the learning itself is
    # tests/test_llm_training.py's test_score_legal_learns_tictactoe_against_random_and_plays_as_hf_spec.
    ("parlour train llm", "--updates"): "1",
    ("parlour train llm", "--episodes"): "8",
    ("parlour train llm", "--eval-every"): "1",
    ("parlour train llm", "--eval-episodes"): "4",
    # 100 games of a language model against minimax.
    ("parlour eval parlour/TicTacToe-v0 --agent hf:", "--episodes"): "4",
}

#: What the person types in `parlour play parlour/LiarsDice-v0`: call a bid when there is one, else bid on;
#: text the game refuses is asked for again, so the game reaches its end.
FACES = ["ones", "twos", "threes", "fours", "fives", "sixes"]
PLAY_INPUT = ("liar\n" + "".join(f"{count} {face}\n" for count in range(1, 11) for face in FACES)) * 30

#: Files the README says a command writes, checked after the block that runs it.
WRITES = {
    "parlour tiny-model models/tiny": ["models/tiny/config.json", "models/tiny/tokenizer.json"],
    "parlour eval parlour/TicTacToe-v0 --agent hf:models/tiny": ["results/ttt/summary.json", "results/ttt/episodes.jsonl"],
    "parlour train sb3": ["runs/ttt/policy.zip", "runs/ttt/policy.json", "runs/ttt/eval.csv", "runs/ttt/train.csv"],
    "parlour train llm parlour/TicTacToe-v0 --model player_0=": [
        "runs/ttt-roles/train.csv",
        "runs/ttt-roles/eval.csv",
        "runs/ttt-roles/player_0/config.json",
        "runs/ttt-roles/player_0/parlour_agent.json",
    ],
    "parlour train llm parlour/TicTacToe-v0 --model models/": [
        "runs/ttt-llm/eval.csv",
        "runs/ttt-llm/train.csv",
        "runs/ttt-llm/learning.png",
        "runs/ttt-llm/learning_time.png",
        "runs/ttt-llm/episodes.jsonl.gz",
        "runs/ttt-llm/checkpoint/config.json",
    ],
}


def as_run(command: str) -> list[str]:
    """The argv this test runs for a README command: this interpreter's parlour, and the shrunk flags."""
    argv = shlex.split(command)
    assert argv[0] in ("parlour", ".venv/bin/parlour"), f"no way to run {command!r}: add it to ELSEWHERE"
    typed = "parlour " + shlex.join(argv[1:])
    for (prefix, flag), value in SHRUNK.items():
        if typed.startswith(prefix) and flag in argv:
            argv[argv.index(flag) + 1] = value
    return [sys.executable, "-m", "parlour.cli", *argv[1:]]


def plain(command: str) -> str:
    """The command without the ``.venv/bin/`` prefix."""
    return command.removeprefix(".venv/bin/")


def test_readme_has_examples_and_the_two_commands():
    assert len(EXAMPLES) >= 3
    assert "make demo" in README and "make test" in README


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_readme_example_runs(index, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples write where a user would: models/, runs/
    exec(compile(EXAMPLES[index], f"README example {index + 1}", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip(), "every README example prints something"


def test_every_command_elsewhere_is_in_the_readme_and_its_test_exists():
    shown = {command for block in LINE_BLOCKS for command in commands(block)} | set(INLINE)
    assert set(ELSEWHERE) <= shown, f"ELSEWHERE names commands the README no longer shows: {set(ELSEWHERE) - shown}"
    for command, (path, name) in ELSEWHERE.items():
        source = (ROOT / path).read_text()
        functions = {node.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef)}
        assert name is None or name in functions, f"{command!r}: {path} has no {name}"


def run_commands(lines: list[str], folder: Path) -> None:
    """Run README command lines in ``folder`` in order; each must exit 0 and write what the README says."""
    for command in lines:
        if command in ELSEWHERE:
            continue
        stdin = PLAY_INPUT if plain(command).startswith("parlour play") else None
        done = subprocess.run(as_run(command), cwd=folder, input=stdin, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        for prefix, files in WRITES.items():
            if plain(command).startswith(prefix):
                missing = [name for name in files if not (folder / name).exists()]
                assert not missing, f"{command} did not write {missing}"


@pytest.mark.parametrize("index", range(len(LINE_BLOCKS)))
def test_readme_shell_block_runs(index, tmp_path):
    run_commands(commands(LINE_BLOCKS[index]), tmp_path)


def test_readme_counted_path_ends_with_your_agent_in_the_overall_table(tmp_path):
    # Issue 35: the README's way to get your own agent counted (eval --challenge, then submit) was refused with a 422,
    # and once the user found connect, the agent was in no table of the index. The block runs in bash as written, its
    # server on a free port instead of 8000, with one addition a person does not need: after the line that starts the
    # server in the background, bash waits until it answers, and at the end it stops it.
    from tests.pg import free_port
    from tests.test_leaderboard_server import server

    port = free_port()
    lines = []
    for line in COUNTED_PATH.replace("8000", str(port)).replace(".venv/bin/", f"{Path(sys.executable).parent}/").splitlines():
        lines.append(line)
        if re.split(r"\s+#\s", line)[0].rstrip().endswith("&"):
            lines.append(
                f'{sys.executable} -c \'import httpx, time\nfor _ in range(600):\n    try:\n        httpx.get("http://127.0.0.1:{port}/")\n'
                f"        break\n    except httpx.TransportError:\n        time.sleep(0.2)'"
            )
    script = "set -e\ntrap 'kill $(jobs -p) 2>/dev/null' EXIT\n" + "\n".join(lines)
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    # connect shows a progress bar, not a line per episode.
    assert "live episode" not in done.stdout + done.stderr and "100/100" in done.stderr
    with server(f"sqlite:///{tmp_path}/board.db") as (base, _):
        index = httpx.get(base + "/", timeout=120).text
    assert 'id="overall"' in index, index[-6000:]
    overall = index[index.index('id="overall"') : index.index("</table>", index.index('id="overall"'))]
    assert "python:my_pkg:make_agent" in overall


def test_readme_inline_commands_run(tmp_path):
    assert "parlour list poker" in INLINE
    run_commands(INLINE, tmp_path)


@pytest.mark.parametrize("env_id", parlour.list_envs())
def test_readme_lists_every_environment(env_id):
    assert f"`{env_id}`" in README
