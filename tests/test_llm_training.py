"""The LLM self-play trainer on CPU with a tiny GPT-2 built in the test (no download).

The tiny model's tokenizer is trained on TicTacToe's own prompts, so a prompt
is about 190 tokens, as a real tokenizer would make it. The learning test
trains in ``score_legal`` mode, with one torch thread and deterministic
algorithms, and measures the greedy win rate against ``random`` on 200 fixed
evaluation episodes (seats rotated) before and after.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("accelerate")

import parlour  # noqa: E402
from parlour.baselines.train.llm import LLMTrainConfig, LLMTrainer  # noqa: E402
from parlour.envs.core.match import Match  # noqa: E402
from parlour.envs.registry import game_class  # noqa: E402
from parlour.wrappers.llm_policy import LMPolicy, candidate_logprobs, completion_logprobs  # noqa: E402
from parlour.wrappers.tiny_model import game_corpus, make_tiny_model  # noqa: E402
from parlour.wrappers.transformers_backend import TransformersBackend  # noqa: E402

ENV = "parlour/TicTacToe-v0"


pytestmark = pytest.mark.usefixtures("deterministic_torch")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The tiny model's folder, built once for this file."""
    return make_tiny_model(tmp_path_factory.mktemp("tiny_ttt"), corpus=game_corpus(ENV), vocab_size=1000)


def test_candidate_and_completion_logprobs_match_a_plain_forward(model_dir: str) -> None:
    backend = TransformersBackend(model_dir, device="cpu", dtype="float32")
    model = backend.model
    prompts = [[5, 6, 7, 8, 9, 10], [11, 12, 13], [20] * 7]
    candidates = [[[3, 4, 2], [5, 2]], [[7, 2]], [[8, 9, 10, 2], [1, 2], [4, 2]]]

    def plain(prompt: list[int], completion: list[int]) -> torch.Tensor:
        with torch.no_grad():
            logits = model(torch.tensor([prompt + completion])).logits[0]
        scores = torch.log_softmax(logits, -1)
        return torch.stack([scores[len(prompt) - 1 + t, token] for t, token in enumerate(completion)])

    with torch.no_grad():
        scored = candidate_logprobs(model, prompts, candidates, backend.tokenizer.pad_token_id)
        completed, entropies = completion_logprobs(model, prompts, [options[0] for options in candidates], backend.tokenizer.pad_token_id)
    for prompt, options, per_candidate in zip(prompts, candidates, scored):
        assert len(per_candidate) == len(options)
        for option, logprobs in zip(options, per_candidate):
            torch.testing.assert_close(logprobs, plain(prompt, option), atol=1e-5, rtol=0)
    for prompt, options, logprobs, entropy in zip(prompts, candidates, completed, entropies):
        torch.testing.assert_close(logprobs, plain(prompt, options[0]), atol=1e-5, rtol=0)
        assert entropy.shape == logprobs.shape and bool((entropy > 0).all())


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_one_pass_candidate_scores_and_their_gradients_match_separate_forwards(model_dir: str, attention: str) -> None:
    """The tree-masked pass (every candidate after its prompt in one row) against one plain forward per candidate, gradients included."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, attn_implementation=attention).eval()
    prompts = [[5, 6, 7, 8, 9, 10, 11, 12], [13, 14], [20] * 5]
    candidates = [[[3, 4, 2], [2], [5, 6, 7, 2]], [[7, 2], [8, 2]], [[9, 2]]]
    scored = candidate_logprobs(model, prompts, candidates, 0)
    tree_total = sum(t.sum() for per in scored for t in per)
    tree_total.backward()
    tree_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    plain_total = 0.0
    for prompt, options, per in zip(prompts, candidates, scored):
        for option, logprobs in zip(options, per):
            scores = torch.log_softmax(model(torch.tensor([prompt + option])).logits[0], -1)
            expected = torch.stack([scores[len(prompt) - 1 + t, token] for t, token in enumerate(option)])
            torch.testing.assert_close(logprobs, expected, atol=1e-5, rtol=0)
            plain_total = plain_total + expected.sum()
    plain_total.backward()
    for tree_grad, parameter in zip(tree_grads, model.parameters()):
        torch.testing.assert_close(tree_grad, parameter.grad, atol=1e-4, rtol=1e-3)


def test_attention_without_custom_masks_is_refused_with_the_fix(model_dir: str) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    model.config._attn_implementation = "flash_attention_2"
    with pytest.raises(ValueError, match="attn_implementation='sdpa'"):
        candidate_logprobs(model, [[5, 6]], [[[2]]], 0)


def test_score_legal_policy_is_a_softmax_over_legal_moves(model_dir: str) -> None:
    backend = TransformersBackend(model_dir, device="cpu", dtype="float32")
    policy = LMPolicy(backend, seed=0)
    matches = [Match(game_class(ENV)) for _ in range(3)]
    for seed, match in enumerate(matches):
        match.reset(seed)
        match.submit("player_0", "b2")
    actions = policy.act_batch([{**match.agent_observation("player_1"), "episode": i} for i, match in enumerate(matches)])
    for action in actions:
        meta = action.metadata
        assert action.text in ["a1", "c1", "a2", "c2", "a3", "b3", "c3", "b1"]
        assert meta["mode"] == "score_legal" and len(meta["candidates"]) == 8
        assert meta["completion_ids"] == meta["candidates"][meta["choice"]] and meta["completion_ids"][-1] == policy.eos_id
        assert meta["policy_logprob"] < 0 and 0 < meta["entropy"] <= torch.log(torch.tensor(8.0)).item() + 1e-6
        assert meta["prompt_ids"][-3:] == backend.tokenizer("<|im_start|>assistant\n", add_special_tokens=False)["input_ids"][-3:]
    # The conversation keeps the chosen move as the model's reply; greedy play takes the most likely move.
    assert policy.conversations[(0, "player_1")].turns[-1][-1] == {"role": "assistant", "content": actions[0].text}
    greedy = policy.copy_with(policy.model, greedy=True)
    again = greedy.act_batch([{**matches[0].agent_observation("player_1"), "episode": 9}])[0].metadata
    with torch.no_grad():
        (options,) = candidate_logprobs(policy.model, [again["prompt_ids"]], [again["candidates"]], policy.pad_id)
    totals = [float(t.sum()) for t in options]
    assert again["choice"] == totals.index(max(totals))
    assert again["policy_logprob"] == pytest.approx(max(totals) - float(torch.logsumexp(torch.tensor(totals), 0)), abs=1e-5)


def test_score_legal_learns_tictactoe_against_random_and_plays_as_hf_spec(model_dir: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    config = LLMTrainConfig(
        env_id=ENV,
        model=model_dir,
        out=str(out),
        updates=12,
        episodes=64,
        group_size=8,
        learning_rate=1e-3,
        mirror=0.25,
        snapshots=0.0,
        anchors=0.75,
        anchor_agents=["random"],
        eval_every=12,
        eval_episodes=200,
        eval_opponents=["random"],
        device="cpu",
        dtype="float32",
        progress=False,
    )
    summary = LLMTrainer(config).run()
    before, after = summary["first"][0], summary["last"][0]
    gain = after["win_rate"] - before["win_rate"]
    print(
        f"win rate vs random: {before['win_rate']:.2f} [{before['win_low']:.2f}, {before['win_high']:.2f}] -> "
        f"{after['win_rate']:.2f} [{after['win_low']:.2f}, {after['win_high']:.2f}], {after['wall_s']:.0f} s"
    )
    # Seeds 0-4 (100 evaluation games) went from 0.50 to 0.60-0.78 at this learning rate; at 3e-3 seed 0 did not
    # learn (0.47). Another machine's rounding is another path from the same seed, so the bar sits below them all.
    assert gain >= 0.05, (before, after)

    with open(out / "eval.csv", newline="") as handle:
        evals = list(csv.DictReader(handle))
    assert [row["update"] for row in evals] == ["0", "12"]
    with open(out / "train.csv", newline="") as handle:
        train = list(csv.DictReader(handle))
    assert [int(row["update"]) for row in train] == list(range(1, 13))
    assert all(float(row["invalid_rate"]) == 0.0 for row in train)
    assert (out / "learning.png").stat().st_size > 10_000 and (out / "learning_time.png").exists()
    assert json.loads((out / "training.json").read_text())["env_id"] == ENV
    with gzip.open(out / "episodes.jsonl.gz", "rt") as handle:
        records = [json.loads(line) for line in handle]
    assert len(records) == 12 * 64
    assert parlour.replay(records[-1])["returns"] == records[-1]["returns"]

    # The checkpoint is a Hugging Face folder: hf:PATH plays it like any other agent.
    results = parlour.evaluate(ENV, [f"hf:{out / 'checkpoint'}", "random"], episodes=4, seed=0, progress=False)
    assert len(results.records) == 4 and results.records[0]["agents"]["player_0"] == f"hf:{out / 'checkpoint'}"


def test_generate_mode_with_lora_ppo_and_kl_trains_and_penalises_invalid_turns(model_dir: str, tmp_path: Path) -> None:
    pytest.importorskip("peft")
    config = LLMTrainConfig(
        env_id=ENV,
        model=model_dir,
        out=str(tmp_path / "gen"),
        mode="generate",
        loss="ppo",
        kl_coef=0.05,
        lora=True,
        learning_rate=1e-3,
        updates=1,
        episodes=4,
        group_size=2,
        max_new_tokens=4,
        max_invalid=2,
        invalid_penalty=0.25,
        estimator="gigpo",
        eval_episodes=2,
        device="cpu",
        dtype="float32",
        progress=False,
    )
    trainer = LLMTrainer(config)
    lora = {name: p.detach().clone() for name, p in trainer.model.named_parameters() if p.requires_grad}
    assert lora and all("lora" in name for name in lora)
    played = trainer.play(1)
    table, metadata = trainer.table(played)
    assert all(m["mode"] == "generate" and 0 < len(m["completion_ids"]) <= 4 for m in metadata)
    invalid = ~table["valid"].astype(bool)
    assert invalid.any()
    # An invalid turn costs the penalty on its own turn; an episode the learner forfeited by invalid actions is void.
    for episode in played:
        steps = episode.record["steps"]
        void = steps[-1]["error"] is not None
        rows = [i for i, e in enumerate(table["episode"]) if e == episode.record["episode"]]
        for i, turn in zip(rows, episode.turns):
            expected = (0.0 if void else turn.reward) - (0.25 if not turn.valid else 0.0)
            assert table["reward"][i] == pytest.approx(expected)
    (row,) = trainer.step(2)
    assert row["decisions"] > 0 and row["kl"] >= 0.0 and 0.0 <= row["clip_fraction"] <= 1.0
    assert any(not torch.equal(before, p) for name, p in trainer.model.named_parameters() if name in lora for before in [lora[name]])
    trainer.save(tmp_path / "merged")
    assert (tmp_path / "merged" / "config.json").exists() and not (tmp_path / "merged" / "adapter_config.json").exists()


def test_config_errors_name_the_fix(model_dir: str, tmp_path: Path) -> None:
    base = {"env_id": ENV, "model": model_dir, "out": str(tmp_path)}
    with pytest.raises(ValueError, match="multiple of group_size"):
        LLMTrainConfig(**base, episodes=10, group_size=4).check()
    with pytest.raises(ValueError, match="choose one of grpo"):
        LLMTrainConfig(**base, estimator="a2c").check()
    with pytest.raises(ValueError, match="use --mode generate"):
        LLMTrainConfig(**{**base, "env_id": "parlour/Bargaining-v0"}).check()


def test_roles_cover_every_seat_once_and_config_errors_name_the_fix(model_dir: str, tmp_path: Path) -> None:
    from parlour.baselines.train.llm import role_seats

    assert role_seats(["proposer", "solver_0", "solver_1"], {"solver": "b", "proposer": "a"}) == {
        "solver": ["solver_0", "solver_1"],
        "proposer": ["proposer"],
    }
    with pytest.raises(ValueError, match="seat 'player_1': no role plays it"):
        role_seats(["player_0", "player_1"], {"player_0": "a"})
    with pytest.raises(ValueError, match="roles player, player_0 both claim it"):
        role_seats(["player_0", "player_1"], {"player": "a", "player_0": "b"})
    with pytest.raises(ValueError, match="roles solver play no seat"):
        role_seats(["proposer"], {"proposer": "a", "solver": "b"})
    base = {"env_id": ENV, "out": str(tmp_path)}
    roles = {"player_0": model_dir, "player_1": model_dir}
    with pytest.raises(ValueError, match="not both or neither"):
        LLMTrainConfig(**base, model=model_dir, roles=roles).check()
    with pytest.raises(ValueError, match="is not one of"):
        LLMTrainConfig(**base, model=model_dir, frozen=["player_1"]).check()
    with pytest.raises(ValueError, match="every role is frozen"):
        LLMTrainConfig(**base, model="", roles=roles, frozen=["player_0", "player_1"]).check()
    with pytest.raises(ValueError, match="no role plays it"):
        LLMTrainConfig(**base, model="", roles={"player_0": model_dir}).check()


def test_cli_trains_and_prints_the_checkpoint_spec(model_dir: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from parlour.cli import main

    out = tmp_path / "cli"
    argv = [
        "train",
        "llm",
        "parlour/Nim-v0",
        "--model",
        model_dir,
        "--out",
        str(out),
        "--updates",
        "1",
        "--episodes",
        "4",
        "--group-size",
        "2",
        "--estimator",
        "turn_rtg",
        "--loss",
        "ppo",
        "--eval-episodes",
        "2",
        "--league",
        "0.5,0,0.5",
        "--anchors",
        "random",
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--quiet",
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert f"checkpoint: hf:{out / 'checkpoint'}" in printed and "after vs nim_sum" in printed and "after vs random" in printed
    settings = json.loads((out / "training.json").read_text())
    assert settings["estimator"] == "turn_rtg" and settings["anchor_agents"] == ["random"] and settings["mirror"] == 0.5
    assert main([*argv[:-1], "--league", "1,2"]) == 2
    assert "--league takes three weights" in capsys.readouterr().err


def test_cli_trains_a_model_per_role_and_prints_each_trainable_checkpoint(model_dir: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from parlour.cli import main

    out = tmp_path / "cli-roles"
    argv = [
        "train",
        "llm",
        "parlour/Nim-v0",
        "--model",
        f"player_0={model_dir}",
        "--model",
        f"player_1={model_dir}",
        "--frozen",
        "player_1",
        "--out",
        str(out),
        "--updates",
        "1",
        "--episodes",
        "4",
        "--group-size",
        "2",
        "--eval-episodes",
        "2",
        "--opponent",
        "random",
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--quiet",
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert f"checkpoint of player_0: hf:{out / 'player_0'}" in printed and "after player_0 vs random" in printed
    assert "player_1:" not in printed and (out / "player_0" / "parlour_agent.json").exists() and (out / "learning.png").exists()
    settings = json.loads((out / "training.json").read_text())
    assert settings["roles"] == {"player_0": model_dir, "player_1": model_dir} and settings["frozen"] == ["player_1"]
    assert main([*argv, "--model", model_dir]) == 2
    assert "one shared PATH or ROLE=PATH" in capsys.readouterr().err


def test_league_weights_split_within_each_kind_and_fall_back_to_the_mirror(model_dir: str, tmp_path: Path) -> None:
    config = LLMTrainConfig(env_id=ENV, model=model_dir, out=str(tmp_path), mirror=0.0, snapshots=1.0, anchors=0.0, device="cpu", dtype="float32")
    trainer = LLMTrainer(config)
    assert trainer.league() == ([("mirror", None)], [1.0])
    trainer._snapshot(3)
    entries, weights = trainer.league()
    assert [name for name, _ in entries] == ["snapshot-3"] and weights == [1.0]
    assert entries[0][1].model is not trainer.policy.model and not any(p.requires_grad for p in entries[0][1].model.parameters())
    trainer.config.mirror, trainer.config.anchors = 0.5, 0.5
    entries, weights = trainer.league()
    assert [name for name, _ in entries] == ["mirror", "snapshot-3", "minimax", "random"]
    assert weights == pytest.approx([0.25, 0.5, 0.125, 0.125])


def test_exploitability_of_the_llm_on_kuhn_poker_replays_each_information_state(tmp_path: Path) -> None:
    pytest.importorskip("pyspiel")
    from parlour.baselines.train.llm import llm_exploitability, llm_tabular_policy, seed_for_deal

    folder = make_tiny_model(tmp_path / "tiny")
    policy = LMPolicy(TransformersBackend(folder, device="cpu", dtype="float32"))
    table, prompts = llm_tabular_policy("parlour/KuhnPoker-v0", policy)
    assert len(prompts) == len(table.states) == 12
    names = {0: "Jack", 1: "Queen", 2: "King"}
    for state, prompt in zip(table.states, prompts):
        # The replayed conversation tells the acting player the card OpenSpiel dealt it, and no other card.
        card = state.full_history()[state.current_player()].action
        told = re.findall(r"Your card(?: is the|:) (Jack|Queen|King)", policy.tokenizer.decode(prompt))
        assert told and set(told) == {names[card]}
        probs = table.action_probability_array[table.state_lookup[state.information_state_string()]]
        assert probs.sum() == pytest.approx(1.0) and (probs[state.legal_actions()] > 0).all()
    assert seed_for_deal("parlour/KuhnPoker-v0", [2, 0]) == seed_for_deal("parlour/KuhnPoker-v0", [2, 0])
    value = llm_exploitability("parlour/KuhnPoker-v0", policy)
    # A near-uniform policy is far from Kuhn's equilibrium but loses at most the pot.
    assert 0.05 < value < 2.0


def test_kl_to_a_frozen_copy_of_the_initial_model_starts_at_zero_and_grows(model_dir: str, tmp_path: Path) -> None:
    config = LLMTrainConfig(
        env_id=ENV,
        model=model_dir,
        out=str(tmp_path),
        kl_coef=0.1,
        learning_rate=1e-2,
        episodes=8,
        group_size=4,
        mirror=0.0,
        snapshots=0.0,
        anchors=1.0,
        anchor_agents=["random"],
        device="cpu",
        dtype="float32",
        progress=False,
    )
    trainer = LLMTrainer(config)
    assert trainer.reference is not None and not any(p.requires_grad for p in trainer.reference.parameters())
    (first,) = trainer.step(1)
    assert first["kl"] == pytest.approx(0.0, abs=1e-6)
    (second,) = trainer.step(2)
    assert second["kl"] > 1e-6


def test_an_update_runs_with_the_heap_before_it_frozen_for_the_garbage_collector(model_dir: str, tmp_path: Path) -> None:
    import gc

    config = LLMTrainConfig(
        env_id=ENV,
        model=model_dir,
        out=str(tmp_path),
        episodes=4,
        group_size=2,
        mirror=0.0,
        snapshots=0.0,
        anchors=1.0,
        anchor_agents=["random"],
        device="cpu",
        dtype="float32",
        progress=False,
    )
    trainer = LLMTrainer(config)
    seen: list[int] = []
    update = trainer.update

    def recording(*args: Any, **kwargs: Any) -> dict[str, float]:
        seen.append(gc.get_freeze_count())
        return update(*args, **kwargs)

    trainer.update = recording  # type: ignore[method-assign]
    trainer.step(1)
    assert seen and min(seen) > 0, "the update walked the whole heap in its full collections"
    assert gc.get_freeze_count() == 0


def test_scoring_in_smaller_passes_gives_the_same_policy(model_dir: str) -> None:
    """score_batch only splits the forward passes: the same moves and log-probabilities whatever its value; a bad value is refused."""
    backend = TransformersBackend(model_dir, device="cpu", dtype="float32")
    matches = [Match(game_class(ENV)) for _ in range(5)]
    for seed, match in enumerate(matches):
        match.reset(seed)
        match.submit("player_0", ["b2", "a1", "c3", "a3", "c1"][seed])
    observations = [{**match.agent_observation("player_1"), "episode": i} for i, match in enumerate(matches)]
    assert LMPolicy(backend).score_batch == 4  # a CPU's default
    results = []
    for size in (1, 2, 100):
        actions = LMPolicy(backend, greedy=True, score_batch=size).act_batch(observations)
        results.append(([a.text for a in actions], [a.metadata["policy_logprob"] for a in actions]))
    for moves, logprobs in results[1:]:
        assert moves == results[0][0]
        assert logprobs == pytest.approx(results[0][1], abs=1e-5)
    with pytest.raises(ValueError, match="score_batch"):
        LMPolicy(backend, score_batch=0)


def test_parlour_eval_of_the_checkpoint_reproduces_the_trainers_last_evaluation(model_dir: str, tmp_path: Path) -> None:
    """Issue 22: the trainer reported 0.64 against random in score_legal mode, and `parlour eval --agent hf:CHECKPOINT`
    then played free text with every move invalid. The checkpoint now plays as the trainer's evaluation played it:
    on the evaluation's seed, the same games."""
    from parlour.cli import main

    out = tmp_path / "run"
    config = LLMTrainConfig(
        env_id=ENV,
        model=model_dir,
        out=str(out),
        updates=1,
        episodes=8,
        group_size=4,
        learning_rate=3e-3,
        eval_every=1,
        eval_episodes=20,
        eval_opponents=["random"],
        device="cpu",
        dtype="float32",
        progress=False,
    )
    last = LLMTrainer(config).run()["last"][0]
    spec, bundle = f"hf:{out / 'checkpoint'}", tmp_path / "eval"
    assert (
        main(
            [
                "eval",
                ENV,
                "--agent",
                spec,
                "--opponent",
                "random",
                "--episodes",
                "20",
                "--seed",
                str(config.eval_seed),
                "--out",
                str(bundle),
                "--quiet",
            ]
        )
        == 0
    )
    records = [json.loads(line) for line in (bundle / "episodes.jsonl").read_text().splitlines()]
    results = {"wins": 0, "draws": 0, "losses": 0}
    returns, invalid = [], 0
    for record in records:
        (seat,) = [seat for seat, name in record["agents"].items() if name == spec]
        winners = record["outcome"].get("winners") or []
        results["wins" if seat in winners else "losses" if winners else "draws"] += 1
        returns.append(record["returns"][seat])
        invalid += sum(step["error"] is not None for step in record["steps"] if step["player"] == seat)
    assert invalid == 0 and results == {key: last[key] for key in results}
    assert sum(returns) / len(returns) == pytest.approx(last["mean_return"])


@pytest.mark.parametrize("mode", ["score_legal", "generate"])
def test_batched_update_gives_the_per_row_loss_and_gradients(model_dir: str, tmp_path: Path, mode: str) -> None:
    """Issue 25: the update computes its loss for whole passes (rows sorted by length, one gather per pass) and must
    give what the per-row formula of the module docstring gives: PPO's clipped surrogate and the KL term, rows
    scored one at a time, with the live model moved away from the reference so that the KL term is not zero."""
    from parlour.baselines.train.llm import _Row

    config = LLMTrainConfig(
        env_id=ENV,
        model=model_dir,
        out=str(tmp_path),
        mode=mode,
        loss="ppo",
        ppo_epochs=1,
        kl_coef=0.5,
        clip=0.01,
        episodes=8,
        group_size=4,
        micro_batch=3,
        max_new_tokens=4,
        max_grad_norm=0.0,
        anchor_agents=["random"],
        device="cpu",
        dtype="float32",
        progress=False,
    )
    trainer = LLMTrainer(config)
    _, metadata = trainer.table(trainer.play(1))
    rows = [_Row(meta, float(index % 3 - 1)) for index, meta in enumerate(metadata) if trainer._trainable(meta)]
    model = trainer.model
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))

    def per_row(net: torch.nn.Module, row: _Row) -> torch.Tensor:
        meta = row.metadata
        if mode == "score_legal":
            (per_token,) = candidate_logprobs(net, [meta["prompt_ids"]], [meta["candidates"]], trainer.policy.pad_id)
            return torch.log_softmax(torch.stack([t.sum() for t in per_token]), dim=0)
        (logprobs,), _ = completion_logprobs(net, [meta["prompt_ids"]], [meta["completion_ids"]], trainer.policy.pad_id)
        return logprobs

    norm = len(rows) if mode == "score_legal" else sum(len(row.metadata["completion_ids"]) for row in rows)
    total, kls = torch.zeros(()), []
    for row in rows:
        logp = per_row(model, row)
        with torch.no_grad():
            ref = per_row(trainer.reference, row)
        if mode == "score_legal":
            current, old = logp[row.metadata["choice"]].unsqueeze(0), torch.tensor([row.metadata["policy_logprob"]])
            kl = (logp.exp() * (logp - ref)).sum()
        else:
            current, old = logp, torch.tensor(row.metadata["logprobs"])
            q = ref - logp
            kl = (torch.exp(q) - q - 1).sum()
        ratio = torch.exp(current - old)
        surrogate = torch.minimum(ratio * row.advantage, torch.clamp(ratio, 1 - config.clip, 1 + config.clip) * row.advantage)
        kls.append(float(kl.detach()) / current.numel())
        total = total + (-surrogate.sum() + config.kl_coef * kl) / norm
    total.backward()
    expected = [parameter.grad.clone() for parameter in model.parameters()]
    trainer.optimizer.step = lambda: None  # keep the gradients of the update to compare
    stats = trainer.update(rows)
    assert stats["loss"] == pytest.approx(float(total), abs=1e-5)
    assert stats["kl"] == pytest.approx(sum(kls) / len(kls), rel=1e-4) and stats["kl"] > 0
    for want, parameter in zip(expected, model.parameters()):
        torch.testing.assert_close(parameter.grad, want, atol=1e-5, rtol=1e-4)


def test_a_model_per_role_trains_the_trainable_role_and_leaves_the_frozen_one_bit_for_bit(model_dir: str, tmp_path: Path) -> None:
    """Issue 23: two tiny models in two roles of TicTacToe (player_0 learns, player_1 is frozen). The trainable
    role's weights move and its loss is logged on its own train.csv rows; the frozen role's weights do not change
    at all; every game records each role's policy in its seat and replays; the trainable role is saved to OUT/ROLE."""
    from transformers import AutoModelForCausalLM

    second = make_tiny_model(tmp_path / "second", corpus=game_corpus(ENV), vocab_size=1000, n_embd=32)
    out = tmp_path / "roles"
    config = LLMTrainConfig(
        env_id=ENV,
        model="",
        roles={"player_0": model_dir, "player_1": second},
        frozen=["player_1"],
        out=str(out),
        updates=2,
        episodes=8,
        group_size=4,
        learning_rate=1e-2,
        eval_every=2,
        eval_episodes=4,
        eval_opponents=["random"],
        device="cpu",
        dtype="float32",
        progress=False,
    )
    trainer = LLMTrainer(config)
    learner, frozen = trainer.learners["player_0"], trainer.learners["player_1"]
    assert learner.seats == ["player_0"] and frozen.seats == ["player_1"] and learner.trainable and not frozen.trainable
    before = {role: {name: p.detach().clone() for name, p in trainer.learners[role].model.named_parameters()} for role in trainer.learners}
    summary = trainer.run()

    moved = [name for name, p in learner.model.named_parameters() if not torch.equal(p, before["player_0"][name])]
    assert moved
    for name, parameter in frozen.model.named_parameters():
        assert torch.equal(parameter, before["player_1"][name]), name
    with open(out / "train.csv", newline="") as handle:
        train = list(csv.DictReader(handle))
    assert [(row["update"], row["role"]) for row in train] == [("1", "player_0"), ("1", "player_1"), ("2", "player_0"), ("2", "player_1")]
    assert all(float(row["loss"]) != 0.0 for row in train if row["role"] == "player_0")
    assert all(float(row["loss"]) == 0.0 and int(row["decisions"]) > 0 for row in train if row["role"] == "player_1")
    assert {(row["role"], row["opponent"]) for row in summary["last"]} == {("player_0", "random")}

    with gzip.open(out / "episodes.jsonl.gz", "rt") as handle:
        records = [json.loads(line) for line in handle]
    assert len(records) == 2 * 8 and all(r["agents"] == {"player_0": "player_0", "player_1": "player_1"} for r in records)
    for record in records[-4:]:
        assert parlour.replay(record)["returns"] == record["returns"]

    assert summary["checkpoints"] == {"player_0": str(out / "player_0")} and not (out / "player_1").exists()
    assert json.loads((out / "player_0" / "parlour_agent.json").read_text())["mode"] == "score_legal"
    saved = AutoModelForCausalLM.from_pretrained(out / "player_0")
    for name, parameter in saved.named_parameters():
        torch.testing.assert_close(parameter, dict(learner.model.named_parameters())[name], atol=0, rtol=0)
