"""KV-cache reuse in the transformers backend: the same greedy tokens as running every prompt afresh, with prefixes taken from the store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

torch = pytest.importorskip("torch")

import parlour
from parlour.wrappers import TransformersBackend
from parlour.wrappers.backend import Message
from tests.tiny_lm import make_tiny_model


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The tiny model's folder, built once for this file."""
    return make_tiny_model(tmp_path_factory.mktemp("tiny_lm_kv"))


@pytest.fixture(autouse=True, scope="module")
def one_thread() -> Iterator[None]:
    """One torch thread: the model is tiny and the cores are shared."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def backends(model_dir: str) -> tuple[TransformersBackend, TransformersBackend]:
    """Greedy backends with and without KV reuse."""
    options = {"device": "cpu", "do_sample": False, "max_new_tokens": 6}
    return TransformersBackend(model_dir, kv_reuse=True, **options), TransformersBackend(model_dir, kv_reuse=False, **options)


def test_multi_turn_batches_give_the_same_tokens(model_dir: str) -> None:
    """Conversations of different lengths, growing turn by turn, joined by a fresh one mid-way: identical replies, prefixes reused."""
    reuse, plain = backends(model_dir)
    chats: list[list[Message]] = [
        [{"role": "system", "content": "You play Tic-tac-toe as X."}, {"role": "user", "content": "Board: empty. Your move."}],
        [{"role": "system", "content": "You play Nim. Take one to three stones from a heap; the last stone wins, so count carefully."}, {"role": "user", "content": "Heaps: 3 4 5."}],
        [{"role": "system", "content": "You play Kuhn poker."}, {"role": "user", "content": "You hold K."}],
    ]
    for turn in range(3):
        if turn == 1:
            chats.append([{"role": "system", "content": "You bargain over 10 coins."}, {"role": "user", "content": "Offer?"}])
        with_reuse = reuse.generate(chats)
        without = plain.generate(chats)
        assert [c.text for c in with_reuse] == [c.text for c in without]
        assert [c.completion_tokens for c in with_reuse] == [c.completion_tokens for c in without]
        assert [c.prompt_tokens for c in with_reuse] == [c.prompt_tokens for c in without]
        for chat, completion in zip(chats, with_reuse):
            chat += [{"role": "assistant", "content": completion.text}, {"role": "user", "content": f"Turn {turn + 2}: your move."}]
    assert plain.usage["cached_tokens"] == 0
    # Every conversation after its first turn starts from its stored prefix: at least its previous prompt.
    assert reuse.usage["cached_tokens"] > reuse.usage["prompt_tokens"] / 2


def test_cut_prefix_and_bounded_store(model_dir: str) -> None:
    """A prompt that shares only part of a stored sequence reuses that part; the store keeps within its token budget."""
    reuse, plain = backends(model_dir)
    reuse.kv_cache_tokens = 200
    base: list[Message] = [{"role": "system", "content": "You play a long game with many rules. " * 4}]
    reuse.generate([[*base, {"role": "user", "content": "First question."}]])
    other = [[*base, {"role": "user", "content": "A different question altogether."}]]
    assert [c.text for c in reuse.generate(other)] == [c.text for c in plain.generate(other)]
    assert reuse.usage["cached_tokens"] > 0
    assert reuse._stored_tokens <= 200


def test_episodes_identical_with_and_without_reuse(model_dir: str) -> None:
    """Whole evaluations of the hf agent, greedy, many episodes in flight: the same records with KV reuse on and off."""
    records = []
    for kv_reuse in (True, False):
        agent = parlour.make_agent(f"hf:{model_dir}", device="cpu", do_sample=False, max_new_tokens=4, kv_reuse=kv_reuse, max_retries=1)
        results = parlour.evaluate("parlour/TicTacToe-v0", [agent, "random"], episodes=4, seed=3, in_flight=4, progress=False)
        records.append(results.records)
        if kv_reuse:
            assert agent.backend.usage["cached_tokens"] > 0
    assert records[0] == records[1]
