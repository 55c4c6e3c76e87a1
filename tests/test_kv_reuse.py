"""KV-cache reuse in the transformers backend: the same greedy tokens as running every prompt afresh, with prefixes taken from the store."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import parlour
from parlour.wrappers import TransformersBackend
from parlour.wrappers.backend import Message
from parlour.wrappers.tiny_model import make_tiny_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The tiny model's folder, built once for this file."""
    return make_tiny_model(tmp_path_factory.mktemp("tiny_lm_kv"))


def backends(model_dir: str) -> tuple[TransformersBackend, TransformersBackend]:
    """Greedy backends with and without KV reuse."""
    options = {"device": "cpu", "do_sample": False, "max_new_tokens": 6}
    return TransformersBackend(model_dir, kv_reuse=True, **options), TransformersBackend(model_dir, kv_reuse=False, **options)


def test_multi_turn_batches_give_the_same_tokens(model_dir: str) -> None:
    """Conversations of different lengths, growing turn by turn, joined by a fresh one mid-way: identical replies, prefixes reused."""
    reuse, plain = backends(model_dir)
    chats: list[list[Message]] = [
        [{"role": "system", "content": "You play Tic-tac-toe as X."}, {"role": "user", "content": "Board: empty. Your move."}],
        [
            {"role": "system", "content": "You play Nim. Take one to three stones from a heap; the last stone wins, so count carefully."},
            {"role": "user", "content": "Heaps: 3 4 5."},
        ],
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
    reuse.kv_store.capacity = 200
    base: list[Message] = [{"role": "system", "content": "You play a long game with many rules. " * 4}]
    reuse.generate([[*base, {"role": "user", "content": "First question."}]])
    other = [[*base, {"role": "user", "content": "A different question altogether."}]]
    assert [c.text for c in reuse.generate(other)] == [c.text for c in plain.generate(other)]
    assert reuse.usage["cached_tokens"] > 0
    assert reuse.kv_store.tokens <= 200


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


def score_legal_policies(model_dir: str):
    """Greedy score_legal policies on backends with and without KV reuse (the same weights)."""
    from parlour.wrappers.llm_policy import LMPolicy

    reuse, plain = backends(model_dir)
    return (
        LMPolicy(reuse, mode="score_legal", greedy=True, history_turns=None, name="reuse"),
        LMPolicy(plain, mode="score_legal", greedy=True, history_turns=None, name="plain"),
    )


def decisions(policy, env_id: str, seeds: range) -> list[tuple[str, float]]:
    """The policy's (move, log-probability under the policy) at every decision of greedy episodes against random, several in flight."""
    seen: list[tuple[str, float]] = []
    act_batch = policy.act_batch

    def recording(observations):
        actions = act_batch(observations)
        seen.extend((action.text, action.metadata["policy_logprob"]) for action in actions)
        return actions

    policy.act_batch = recording
    results = parlour.evaluate(env_id, [policy, "random"], episodes=len(seeds), seed=seeds.start, in_flight=len(seeds), progress=False)
    policy.act_batch = act_batch
    return seen, results.records


def test_score_legal_reuse_gives_the_same_moves_and_log_probabilities(model_dir: str) -> None:
    """The trainer's policy with its conversations' caches kept: the same greedy episodes, the same policy log-probabilities."""
    reuse, plain = score_legal_policies(model_dir)
    with_reuse, records_reuse = decisions(reuse, "parlour/TicTacToe-v0", range(4))
    without, records_plain = decisions(plain, "parlour/TicTacToe-v0", range(4))
    assert [move for move, _ in with_reuse] == [move for move, _ in without]
    assert [step["move"] for r in records_reuse for step in r["steps"]] == [step["move"] for r in records_plain for step in r["steps"]]
    assert torch.allclose(torch.tensor([p for _, p in with_reuse]), torch.tensor([p for _, p in without]), atol=1e-4)
    assert plain.kv_store is None and plain.usage["cached_tokens"] == 0
    # Every turn after an episode's first starts from the stored prompt of the turn before.
    assert reuse.usage["cached_tokens"] > reuse.usage["prompt_tokens"] / 2


def test_changed_weights_empty_the_policy_store(model_dir: str) -> None:
    """After an in-place update of the weights (as an optimiser step makes), stored caches are not used: results match a fresh run."""
    reuse, plain = score_legal_policies(model_dir)
    decisions(reuse, "parlour/Nim-v0", range(2))
    assert len(reuse.kv_store) > 0
    with torch.no_grad():
        for model in (reuse.model, plain.model):
            for parameter in model.parameters():
                parameter.mul_(1.5)
    again_reuse, _ = decisions(reuse, "parlour/Nim-v0", range(2))
    again_plain, _ = decisions(plain, "parlour/Nim-v0", range(2))
    assert torch.allclose(torch.tensor([p for _, p in again_reuse]), torch.tensor([p for _, p in again_plain]), atol=1e-4)
    # A copy acting with another model gets its own, empty store.
    assert reuse.copy_with(plain.model).kv_store is not reuse.kv_store


#: Chat templates for the tokenisation test: ChatML (the tiny model's), a Llama-3-like layout (header tokens around the
#: role, an end-of-turn token), and one whose rendering of earlier turns changes as the conversation grows.
TEMPLATES = {
    "chatml": None,
    "llama3_like": (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}<|im_end|>\n\n{{ m['content'] }}<|endoftext|>{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant<|im_end|>\n\n{% endif %}"
    ),
    "unstable": (
        "<|im_start|>system\nturn {{ messages|length }}<|im_end|>\n"
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    ),
}


@pytest.mark.parametrize("template", list(TEMPLATES))
def test_prompts_are_tokenised_from_the_last_turn_exactly_as_whole_texts(model_dir: str, template: str) -> None:
    """Growing conversations (awkward text, literal special tokens, a branch, a window that drops turns): the ids of
    tokenising only what follows the last turn's opening equal those of the whole text, and only that much is tokenised
    (a template that re-renders earlier turns differently is tokenised whole, and still right)."""
    import random

    backend = TransformersBackend(model_dir, device="cpu", do_sample=False, max_new_tokens=4)
    tokenizer = backend.tokenizer
    if TEMPLATES[template] is not None:
        tokenizer.chat_template = TEMPLATES[template]
    lengths: list[int] = []

    class Recording:
        """The tokenizer, noting the length of every text it is given."""

        def __call__(self, texts, **options):
            lengths.extend(len(text) for text in (texts if isinstance(texts, list) else [texts]))
            return tokenizer(texts, **options)

        def __getattr__(self, name):
            return getattr(tokenizer, name)

    backend.tokenizer = Recording()
    rng = random.Random(7)
    pieces = ["Board:\n", " . X O ", "\n\n", "  ", "<|im_start|>", "<|im_end|>", "é€", "move b2", "\t", "Legal: a1, b2."]
    chats = [[{"role": "system", "content": "Rules " * 20}, {"role": "user", "content": "Your move."}] for _ in range(3)]
    for turn in range(6):
        if turn == 2:
            chats.append([*chats[0][:-1], {"role": "user", "content": "A branch of the first."}])
        if turn == 4:
            chats.append([chats[1][0], *chats[1][-3:]])
        lengths.clear()
        ids = backend.tokenize(chats)
        whole = [tokenizer(backend.render(chat), add_special_tokens=False)["input_ids"] for chat in chats]
        assert ids == whole
        whole_texts = sum(len(backend.render(chat)) for chat in chats)
        if turn >= 1 and template != "unstable":
            assert sum(lengths) < whole_texts / 2
        if template == "unstable":
            assert sum(lengths) >= whole_texts
        for chat in chats:
            reply = "".join(rng.choice(pieces) for _ in range(6))
            chat += [{"role": "assistant", "content": reply}, {"role": "user", "content": "".join(rng.choice(pieces) for _ in range(8))}]


def test_greedy_batched_decoding_gives_the_tokens_of_one_at_a_time(model_dir: str) -> None:
    """Issue 25: greedy decoding of a left-padded batch of prompts of different lengths yields, token for token, what
    each prompt decodes to alone (float32 on a CPU; the backend's docstring gives the tolerance in half precision),
    through the backend with and without KV reuse and through the trainer's policy in generate mode."""
    from parlour.wrappers.llm_policy import LMPolicy

    chats: list[list[Message]] = [
        [{"role": "system", "content": "You play Nim. " * n}, {"role": "user", "content": f"Heaps: {n} {n + 2}. Your move."}] for n in (1, 4, 9, 2, 6)
    ]
    for kv_reuse in (False, True):
        backend = TransformersBackend(model_dir, device="cpu", do_sample=False, max_new_tokens=8, kv_reuse=kv_reuse)
        batched = backend.generate(chats)
        alone = [backend.generate([chat])[0] for chat in chats]
        assert [(c.text, c.completion_tokens) for c in batched] == [(c.text, c.completion_tokens) for c in alone]
    policy = LMPolicy(TransformersBackend(model_dir, device="cpu", kv_reuse=False), mode="generate", greedy=True, max_new_tokens=8)
    observations = [{"episode": i, "player": "player_0", "text": chat[1]["content"], "env_id": "parlour/Nim-v0"} for i, chat in enumerate(chats)]
    together = policy.act_batch(observations)
    single = [policy.copy_with(policy.model).act_batch([observation])[0] for observation in observations]
    assert [a.metadata["completion_ids"] for a in together] == [a.metadata["completion_ids"] for a in single]
    assert sum((a.metadata["logprobs"] for a in together), []) == pytest.approx(sum((a.metadata["logprobs"] for a in single), []), abs=1e-5)
