"""Agent specs with options and names: a trained LLM plays as it was trained, options come from the command line, one agent has one name.

The checkpoint is the tiny model of :mod:`parlour.wrappers.tiny_model` saved by
the LLM trainer (untrained: these tests are about how a checkpoint is played,
not how well), so ``hf:CHECKPOINT`` is loaded exactly as a user's would be.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("accelerate")

import parlour  # noqa: E402
from parlour import AgentSpec, agent_name, make_agent  # noqa: E402
from parlour.agents import check_agent_spec  # noqa: E402
from parlour.baselines.train.llm import LLMTrainConfig, LLMTrainer  # noqa: E402
from parlour.cli import main  # noqa: E402
from parlour.wrappers.llm_agent import LLMAgent  # noqa: E402
from parlour.wrappers.llm_policy import LMPolicy  # noqa: E402
from parlour.wrappers.tiny_model import game_corpus, make_tiny_model  # noqa: E402
from tests.test_leaderboard_live import live_server  # noqa: E402, F401  (the served leaderboard fixture)
from tests.test_leaderboard_server import cli  # noqa: E402

ENV = "parlour/TicTacToe-v0"

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``score_legal`` checkpoint as ``parlour train llm`` saves it, trained with temperature 0.7 and evaluated greedily."""
    root = tmp_path_factory.mktemp("checkpoint")
    model = make_tiny_model(root / "model", corpus=game_corpus(ENV), vocab_size=1000)
    config = LLMTrainConfig(
        env_id=ENV, model=model, out=str(root / "run"), temperature=0.7, max_new_tokens=6, device="cpu", dtype="float32", progress=False
    )
    LLMTrainer(config).save(root / "run" / "checkpoint")
    return root / "run" / "checkpoint"


def steps_of(bundle: Path, name: str) -> list[dict]:
    """The steps that the agent called ``name`` played in the bundle's episodes."""
    records = [json.loads(line) for line in (bundle / "episodes.jsonl").read_text().splitlines()]
    return [step for record in records for step in record["steps"] if record["agents"][step["player"]] == name]


def test_eval_plays_a_score_legal_checkpoint_as_trained(checkpoint: Path, tmp_path: Path) -> None:
    # The issue: the trainer's own evaluation scored legal moves, but `parlour eval --agent hf:CHECKPOINT` generated
    # free text and every move was invalid.
    spec = f"hf:{checkpoint}"
    out = tmp_path / "as-trained"
    assert main(["eval", ENV, "--agent", spec, "--episodes", "4", "--out", str(out), "--quiet"]) == 0
    mine = steps_of(out, spec)
    assert mine and all(step["error"] is None for step in mine)

    # --agent-kwarg switches to free text (the untrained model then writes no moves).
    out = tmp_path / "generate"
    assert (
        main(
            [
                "eval",
                ENV,
                "--agent",
                spec,
                "--agent-kwarg",
                "mode=generate",
                "--agent-kwarg",
                "max_retries=0",
                "--episodes",
                "2",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    mine = steps_of(out, spec)
    assert mine and any(step["error"] is not None for step in mine)


def test_a_checkpoint_loads_the_mode_and_decoding_it_was_trained_and_evaluated_with(checkpoint: Path) -> None:
    saved = json.loads((checkpoint / "parlour_agent.json").read_text())
    assert saved["mode"] == "score_legal" and saved["temperature"] == 0.7 and saved["greedy"] is True
    policy = make_agent(f"hf:{checkpoint}", device="cpu")
    assert isinstance(policy, LMPolicy) and policy.mode == "score_legal" and policy.greedy and policy.temperature == 0.7
    assert policy.history_turns == 1 and policy.name == f"hf:{checkpoint}"
    # Options override the checkpoint's; generate mode keeps its decoding (greedy, 6 tokens, one turn, no re-asking).
    sampled = make_agent(f"hf:{checkpoint}", device="cpu", greedy=False, temperature=2.0)
    assert isinstance(sampled, LMPolicy) and not sampled.greedy and sampled.temperature == 2.0
    free = make_agent(f"hf:{checkpoint}", device="cpu", mode="generate")
    assert isinstance(free, LLMAgent) and free.max_retries == 0 and free.max_turns == 1
    assert free.backend.max_new_tokens == 6 and free.backend.sampling == {"do_sample": False}


def test_a_plain_model_still_generates_and_can_score_legal_moves(checkpoint: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    make_tiny_model(plain, corpus=game_corpus(ENV), vocab_size=1000)
    assert isinstance(make_agent(f"hf:{plain}", device="cpu"), LLMAgent)
    scorer = make_agent(f"hf:{plain}", device="cpu", mode="score_legal")
    assert isinstance(scorer, LMPolicy) and scorer.mode == "score_legal" and not scorer.greedy and scorer.name == f"hf:{plain}"


def test_misspelt_or_misplaced_options_fail_before_anything_loads(checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = f"hf:{checkpoint}"
    with pytest.raises(ValueError, match="did you mean 'temperature'"):
        check_agent_spec(AgentSpec(spec, kwargs={"temprature": 0.5}), ENV)
    with pytest.raises(ValueError, match="mode must be one of score_legal, generate"):
        check_agent_spec(AgentSpec(spec, kwargs={"mode": "scored"}), ENV)
    # An option of the other mode is named as such.
    with pytest.raises(ValueError, match="max_retries is an option of mode=generate"):
        check_agent_spec(AgentSpec(spec, kwargs={"max_retries": 1}), ENV)
    out = tmp_path / "never"
    assert main(["eval", ENV, "--agent", spec, "--agent-kwarg", "temprature=0.5", "--out", str(out), "--quiet"]) == 2
    assert "did you mean 'temperature'" in capsys.readouterr().err and not out.exists()
    with pytest.raises(SystemExit) as usage:
        main(["eval", ENV, "--agent", "random", "--opponent-kwarg", "x=1", "--opponent", "random"])
    assert usage.value.code == 2
    assert "give --opponent SPEC first" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no option 'depth'.*'random'"):
        check_agent_spec(AgentSpec("random", kwargs={"depth": 2}), ENV)


def test_backend_and_circuit_breaker_settings_are_agent_options() -> None:
    spec = AgentSpec("openai:tiny@http://127.0.0.1:9/v1", kwargs={"max_response_bytes": 4096, "failure_limit": 2})
    agent = make_agent(spec)
    assert agent.failure_limit == 2 and agent.backend.max_response_bytes == 4096
    with pytest.raises(ValueError, match="did you mean 'failure_limit'"):
        check_agent_spec(AgentSpec(spec.spec, kwargs={"failure_limt": 2}), ENV)


def test_opponent_kwargs_go_to_the_opponent_before_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    connect_four = "parlour/ConnectFour-v0"
    out = tmp_path / "bundle"
    assert (
        main(
            [
                "eval",
                connect_four,
                "--agent",
                "random",
                "--opponent",
                "minimax",
                "--opponent-kwarg",
                "depth=1",
                "--episodes",
                "2",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    assert steps_of(out, "minimax")
    out = tmp_path / "never"
    assert main(["eval", connect_four, "--agent", "random", "--opponent", "minimax", "--opponent-kwarg", "dept=1", "--out", str(out), "--quiet"]) == 2
    assert "did you mean 'depth'" in capsys.readouterr().err and not out.exists()


class KingOnly:
    """A player with a name of its own, built by a ``python:`` factory."""

    name = "KingOnly"

    def __init__(self):
        self.inner = parlour.make_agent("random", env_id=ENV)

    def reset(self, seed=None):
        """Reseed the random play."""
        self.inner.reset(seed=seed)

    def act(self, observation):
        """A random legal move."""
        return self.inner.act(observation)


def make_king_only() -> KingOnly:
    """The ``python:`` factory of :class:`KingOnly`."""
    return KingOnly()


FACTORY = "python:tests.test_agent_specs:make_king_only"


def test_one_agent_has_one_name_on_every_path(live_server, tmp_path: Path, capsys, monkeypatch) -> None:
    # The issue: the same code was 'python:my_pkg:make_agent' from eval and 'KingOnly' from connect.
    base, token = live_server
    assert agent_name(FACTORY) == agent_name(make_agent(FACTORY)) == FACTORY
    out = tmp_path / "eval"
    assert main(["eval", ENV, "--agent", FACTORY, "--episodes", "1", "--out", str(out), "--quiet"]) == 0
    assert steps_of(out, FACTORY)
    status, printed, _ = cli(capsys, monkeypatch, "connect", FACTORY, "--server", base, "--env", ENV, token=token)
    assert status == 0 and FACTORY in printed

    # --name names it on both paths, and in the API.
    out = tmp_path / "named"
    assert main(["eval", ENV, "--agent", FACTORY, "--name", "king-only", "--episodes", "1", "--out", str(out), "--quiet"]) == 0
    assert steps_of(out, "king-only")
    status, printed, _ = cli(capsys, monkeypatch, "connect", FACTORY, "--name", "king-only", "--server", base, "--env", ENV, token=token)
    assert status == 0 and "king-only" in printed
    results = parlour.evaluate(ENV, [AgentSpec(FACTORY, name="king-only"), "random"], episodes=1, progress=False)
    assert results.agents == ["king-only", "random"]
    assert make_agent(FACTORY, name="king-only").name == "king-only"


def test_names_are_checked_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, reason in (("Minimax", "looks like 'minimax'"), ("minimax", "a built-in agent's name"), ("a\u200bb", "U+200B")):
        out = tmp_path / "never"
        assert main(["eval", ENV, "--agent", FACTORY, "--name", name, "--out", str(out), "--quiet"]) == 2
        assert reason in capsys.readouterr().err and not out.exists()
