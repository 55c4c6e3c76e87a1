"""The transformers backend end to end: a tiny GPT-2 saved to disk and loaded as ``hf:<folder>``."""

from __future__ import annotations

from typing import Any

import gymnasium
import pytest
import torch

import parlour
from parlour.envs.core.match import Match
from parlour.envs.registry import game_class
from parlour.wrappers import LLMAgent, TransformersBackend
from parlour.wrappers.tiny_model import make_tiny_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The tiny model's folder, built once for this file."""
    return make_tiny_model(tmp_path_factory.mktemp("tiny_lm"))


def observation(index: int) -> dict[str, Any]:
    """A first tic-tac-toe observation of episode ``index``, as the runner sends it."""
    match = Match(game_class("parlour/TicTacToe-v0"))
    match.reset(seed=index)
    return {**match.agent_observation("player_0"), "episode": index}


def test_loads_from_folder_with_chat_template(model_dir: str) -> None:
    agent = parlour.make_agent(f"hf:{model_dir}", max_new_tokens=4, device="cpu", dtype="float32")
    backend = agent.backend
    assert isinstance(backend, TransformersBackend) and agent.name == f"hf:{model_dir}"
    assert backend.tokenizer.padding_side == "left" and backend.context_limit == 2048
    assert agent.max_context_tokens == 2048 - 4
    prompt = backend.render([{"role": "system", "content": "rules"}, {"role": "user", "content": "move"}])
    assert prompt == "<|im_start|>system\nrules<|im_end|>\n<|im_start|>user\nmove<|im_end|>\n<|im_start|>assistant\n"


def test_plays_games_end_to_end(model_dir: str) -> None:
    env = gymnasium.make("parlour/TicTacToe-v0", opponent=f"hf:{model_dir}")
    agent = env.unwrapped.opponents["player_1"]
    observation_, info = env.reset(seed=0)
    done = False
    while not done:
        observation_, reward, done, truncated, info = env.step(info["legal_moves"][0])
    assert info["outcome"]["reason"]
    decisions = sum(step["player"] == "player_1" for step in env.unwrapped.match.steps)

    # Several episodes at once through act_batch, conversations keyed by episode, the agent in both seats.
    matches = [Match(game_class("parlour/TicTacToe-v0")) for _ in range(3)]
    for seed, match in enumerate(matches):
        match.reset(seed=seed)
    while any(not m.over for m in matches):
        live = [(i, m) for i, m in enumerate(matches) if not m.over]
        actions = agent.act_batch([{**m.agent_observation(m.acting()[0]), "episode": i} for i, m in live])
        for (_, match), action in zip(live, actions):
            match.submit(match.acting()[0], action)
    assert {key[0] for key in agent.conversations} == {None, 0, 1, 2}
    for match in matches:
        assert match.outcome is not None and all(isinstance(step["action"], str) for step in match.steps)
    decisions += sum(len(match.steps) for match in matches)

    stats = agent.stats()
    assert stats["calls"] == decisions + stats["retries"]
    assert stats["batches"] < stats["calls"]
    assert stats["retries"] <= stats["parse_failures"] <= stats["calls"]
    assert stats["prompt_tokens"] > 0 and 0 < stats["completion_tokens"] <= 16 * stats["calls"]
    assert stats["latency_s"] > 0


def test_batch_of_32_is_one_left_padded_generate_and_reproducible(model_dir: str, monkeypatch: pytest.MonkeyPatch) -> None:
    observations = [observation(i) for i in range(32)]
    observations[5] = {**observations[5], "text": observations[5]["text"] + " Think carefully."}
    agent = parlour.make_agent(f"hf:{model_dir}", seed=7, max_retries=0)
    model = agent.backend.model
    calls: list[dict[str, torch.Tensor]] = []
    real_generate = model.generate

    def spy(**kwargs: Any) -> torch.Tensor:
        calls.append(kwargs)
        return real_generate(**kwargs)

    monkeypatch.setattr(model, "generate", spy)
    rng_state = torch.get_rng_state()
    first = agent.act_batch(observations)
    assert torch.equal(rng_state, torch.get_rng_state())  # sampling used a forked RNG
    assert len(calls) == 1 and calls[0]["input_ids"].shape[0] == 32
    mask = calls[0]["attention_mask"]
    assert bool(mask[:, -1].all()) and not bool(mask[:, 0].all())  # left padding
    assert len(first) == 32 and all(isinstance(action, str) for action in first)

    again = parlour.make_agent(f"hf:{model_dir}", seed=7, max_retries=0).act_batch(observations)
    other = parlour.make_agent(f"hf:{model_dir}", seed=8, max_retries=0).act_batch(observations)
    assert again == first
    assert other != first


def test_window_keeps_prompts_within_budget(model_dir: str) -> None:
    backend = TransformersBackend(model_dir, max_new_tokens=2)
    agent = LLMAgent(backend, max_context_tokens=300, max_retries=0, seed=1)
    budget_prompts = []
    for turn in range(6):
        text = f"Turn {turn}. Board: a1 a2 a3 b1 b2 b3 c1 c2 c3. " * 4
        agent.act({"text": text, "legal_moves": ["a1"], "player": "player_0", "env_id": "parlour/TicTacToe-v0"})
        budget_prompts.append(agent.stats()["prompt_tokens"])
    per_call = [b - a for a, b in zip([0, *budget_prompts], budget_prompts)]
    assert max(per_call) <= 300
    assert per_call[-1] < sum(backend.count_tokens(turn) for turn in next(iter(agent.conversations.values())).turns)


def test_plain_transcript_without_chat_template(model_dir: str) -> None:
    backend = TransformersBackend(model_dir, max_new_tokens=3)
    backend.has_chat_template = False
    assert backend.render([{"role": "user", "content": "hi"}]) == "user: hi\n\nassistant:"
    (completion,) = backend.generate([[{"role": "user", "content": "hi"}]], seed=0)
    assert 0 < completion.completion_tokens <= 3 and completion.prompt_tokens > 0


def test_greedy_decoding_ignores_the_seed(model_dir: str) -> None:
    backend = TransformersBackend(model_dir, max_new_tokens=4, do_sample=False)
    conversations = [[{"role": "user", "content": "Empty cells: a1, b2."}], [{"role": "user", "content": "Play."}]]
    first = [c.text for c in backend.generate(conversations, seed=0)]
    assert [c.text for c in backend.generate(conversations, seed=1)] == first
    # Left padding must not change a row's greedy continuation.
    assert backend.generate(conversations[1:], seed=2)[0].text == first[1]
