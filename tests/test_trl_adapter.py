"""TRL's GRPOTrainer trains on a parlour environment through ParlourPositions (CPU, the tiny model, no download)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")

from parlour.baselines.train.trl_adapter import ParlourPositions  # noqa: E402
from parlour.wrappers.tiny_model import make_tiny_model  # noqa: E402

ENV = "parlour/TicTacToe-v0"


def test_positions_prompts_and_play_out_rewards() -> None:
    positions = ParlourPositions(ENV, episodes=2, seed=0, invalid_penalty=0.5)
    assert len(positions) == len(positions.dataset()) > 4
    first = positions.prompts[0]
    assert [m["role"] for m in first] == ["system", "user"] and "Tic-tac-toe" in first[0]["content"]
    later = next(i for i, p in enumerate(positions.prompts) if len(p) > 2)
    assert [m["role"] for m in positions.prompts[later]][-3:] == ["user", "assistant", "user"]
    # A legal move is played out to the end; the same move at the same position gets the same play-out.
    legal = positions.legal[0]
    scores = [positions.score(0, move) for move in legal]
    assert all(score in (-1.0, 0.0, 1.0) for score in scores)
    assert scores == [positions.score(0, move) for move in legal]
    assert positions.score(0, "I take the centre: b2") == positions.score(0, "b2")
    assert positions.score(0, "nowhere") == -0.5
    # The play-out is real: from the position before X's winning move, winning is worth +1.
    win = next(i for i, snapshot in enumerate(positions.snapshots) if positions.legal[i] is not None and len(positions.legal[i]) <= 5)
    assert max(positions.score(win, move) for move in positions.legal[win]) >= min(positions.score(win, move) for move in positions.legal[win])
    rewards = positions.reward(completions=[[{"role": "assistant", "content": legal[0]}], "zz"], position=[0, 0])
    assert rewards == [scores[0], -0.5]


def test_grpo_trainer_smoke(tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    folder = make_tiny_model(tmp_path / "tiny")
    positions = ParlourPositions(ENV, episodes=2, seed=0)
    calls: list[list[float]] = []

    def reward(**kwargs):
        values = positions.reward(**kwargs)
        calls.append(values)
        return values

    model = AutoModelForCausalLM.from_pretrained(folder)
    args = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=4,
        max_steps=1,
        learning_rate=1e-3,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        logging_steps=1,
    )
    trainer = trl.GRPOTrainer(
        model=model, reward_funcs=reward, args=args, train_dataset=positions.dataset(), processing_class=AutoTokenizer.from_pretrained(folder)
    )
    trainer.train()
    assert trainer.state.global_step == 1
    assert calls and len(calls[0]) == 4 and all(-1.0 <= value <= 1.0 for value in calls[0])
    logged = trainer.state.log_history[0]
    assert logged["reward"] == pytest.approx(sum(calls[0]) / 4)
    trainer.save_model(str(tmp_path / "trained"))
    assert (tmp_path / "trained" / "config.json").exists()


def test_docstring_example_runs_on_cpu_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import parlour.baselines.train.trl_adapter as adapter

    torch.set_num_threads(1)
    make_tiny_model(tmp_path / "tiny")
    monkeypatch.chdir(tmp_path)
    example = adapter.__doc__.split("::", 1)[1].split("\n\n")[1]
    namespace = {"ParlourPositions": ParlourPositions}
    exec(textwrap.dedent(example), namespace)
    assert namespace["trainer"].state.global_step == 2
