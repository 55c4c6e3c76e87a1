"""TRL's GRPOTrainer trains through parlour.bridges.trl's environment_factory: real training steps on CPU with a tiny model.

The tiny model is random, so its generation is steered towards well-formed tool calls with a sequence bias
(transformers' ``sequence_bias``, a plain generation option): after ``<|im_start|>assistant`` it writes one of a
few candidate calls, picked at random. Everything else is TRL's own loop: parsing the calls, calling the
environment's methods, masking the tool answers, scoring with ``get_reward`` and updating the weights.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")

import parlour  # noqa: E402
from parlour.bridges.trl import environment_class, rows  # noqa: E402
from parlour.wrappers.tiny_model import make_tiny_model  # noqa: E402

CELLS = ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]
CALL = '<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'
#: Per environment: its options, the candidate calls, and the dataset's seeds (Search: questions answered yes or no).
CASES = {
    "parlour/TicTacToe-v0": ({"error_allowance": 20}, [CALL.format(name="move", arguments=f'{{"move": "{c}"}}') for c in CELLS], range(8)),
    "parlour/Search-v0": (
        {},
        [
            CALL.format(name="search", arguments='{"query": "capital", "k": 1}'),
            CALL.format(name="answer", arguments='{"text": "yes"}'),
            CALL.format(name="answer", arguments='{"text": "no"}'),
        ],
        [0, 7, 8, 13, 17, 22, 25, 27],
    ),
}


def test_tools_are_typed_documented_methods() -> None:
    from transformers.utils import get_json_schema

    cls = environment_class("parlour/Search-v0")
    tools = [
        name for name, _ in inspect.getmembers(cls, predicate=inspect.isfunction) if not name.startswith("_") and name not in ("reset", "get_reward")
    ]
    assert tools == ["answer", "open", "search"]
    schema = get_json_schema(cls.search)["function"]
    assert schema["parameters"]["properties"]["k"]["type"] == "integer" and schema["parameters"]["required"] == ["query"]
    assert [
        name
        for name, _ in inspect.getmembers(environment_class("parlour/TicTacToe-v0"), predicate=inspect.isfunction)
        if not name.startswith("_") and name not in ("reset", "get_reward")
    ] == ["move"]


def test_reset_plays_the_other_seats_and_keeps_the_record() -> None:
    records: list[dict] = []
    env = environment_class("parlour/TicTacToe-v0", records=records)()
    first = env.reset(seed=3, seat="1", opponent="random", prompt=[{"role": "user", "content": "ignored"}])
    assert "You are O" in first and "plays" in first  # X moved before the learner's first turn
    while not env.finished:
        legal = env._face.match.legal_moves_of(env._face.player)
        env.move(move=legal[0])
    with pytest.raises(ValueError, match="over"):
        env.move(move="a1")
    assert env.get_reward() == sum(env.turn_rewards) and len(records) == 1
    assert records[0]["turn_rewards"] == {"player_1": env.turn_rewards}
    parlour.replay(records[0])
    env.reset(seed=4)
    assert env.get_reward() == -1.0  # stopped before the end: unfinished_reward
    assert len(records) == 2 and not records[1]["done"]


def test_turn_rewards_count_what_the_learner_was_paid_before_its_first_move() -> None:
    # Hanabi pays every seat for each card played; in the second seat the learner is paid for the opening play before
    # it moves (seed 1: random plays a card first), which the step rewards never carried, so the turn rewards missed it.
    env = environment_class("parlour/Hanabi-v0")()
    paid_first = 0
    for seed in range(12):
        env.reset(seed=seed, seat=1, opponent="random")
        while not env.finished:
            env.move(move=env._face.match.legal_moves_of(env._face.player)[0])
        record = env.record
        opening = sum(step.get("rewards", {}).get("player_1", 0.0) for step in record["steps"][:1])
        paid_first += opening != 0
        assert sum(env.turn_rewards) == pytest.approx(env.get_reward()) and record["turn_rewards"] == {"player_1": env.turn_rewards}
    assert paid_first  # the case this test is about happened


@pytest.mark.parametrize("env_id", sorted(CASES))
def test_grpo_trains_through_the_environment(tmp_path: Path, env_id: str) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl.chat_template_utils import qwen3_chat_template

    torch.set_num_threads(1)
    options, calls, seeds = CASES[env_id]
    probe = environment_class(env_id, env_kwargs=options)()
    corpus = calls * 3 + [probe.reset(seed=seed) for seed in range(3)]
    corpus.append(probe.move(move="b2") if "TicTacToe" in env_id else probe.search(query="capital", k=1))
    folder = make_tiny_model(tmp_path / "tiny", corpus=corpus, vocab_size=1000)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = qwen3_chat_template  # a template TRL knows how to parse tool calls from
    head = tokenizer("<|im_start|>assistant\n", add_special_tokens=False)["input_ids"]
    bias = {}
    for call in calls:
        ids = tokenizer("<|im_start|>assistant\n" + call + "<|im_end|>", add_special_tokens=False)["input_ids"]
        assert ids[: len(head)] == head
        bias.update({tuple(ids[: k + 1]): 100.0 for k in range(len(head), len(ids))})

    records: list[dict] = []
    seen: list[list[list[float]]] = []

    def turn_rewards(environments, **_):
        seen.append([list(env.turn_rewards) for env in environments])
        return [0.0 for _ in environments]

    dataset = rows(len(seeds)).map(lambda row, index: {"seed": seeds[index]}, with_indices=True)
    model = AutoModelForCausalLM.from_pretrained(folder)
    before = [parameter.detach().clone() for parameter in model.parameters()]
    args = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=600,
        max_steps=2,
        learning_rate=1e-2,
        report_to=[],
        use_cpu=True,
        bf16=False,
        save_strategy="no",
        logging_steps=1,
        generation_kwargs={"sequence_bias": bias},
        max_tool_calling_iterations=8,
    )
    trainer = trl.GRPOTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        reward_funcs=[turn_rewards],
        environment_factory=environment_class(env_id, env_kwargs=options, records=records, unfinished_reward=-0.5),
    )
    trainer.train()

    assert trainer.state.global_step == 2
    logs = [entry for entry in trainer.state.log_history if "reward" in entry]
    assert all(entry["tools/call_frequency"] >= 1 for entry in logs)
    assert len(records) == 8 and any(record["done"] for record in records)
    for record in records:
        parlour.replay(record)
    # The reward functions saw the same per-turn rewards the records keep, one list per rollout.
    assert [r["turn_rewards"][r["players"][0]] for r in records] == [turns for batch in seen for turns in batch]
    name = f"rewards/{Path(env_id).name.split('-')[0]}Environment/mean"
    returns = [record["returns"][record["players"][0]] if record["done"] else -0.5 for record in records]
    assert [entry[name] for entry in logs] == pytest.approx([sum(returns[:4]) / 4, sum(returns[4:]) / 4])
    # Different moves earned different returns, so GRPO had advantages to learn from and the weights moved.
    assert max(entry["reward_std"] for entry in logs) > 0
    assert any(not torch.equal(old, new) for old, new in zip(before, model.parameters()))
