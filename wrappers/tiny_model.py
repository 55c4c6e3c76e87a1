"""A tiny random causal LM with a trained tokenizer and a chat template, saved like a real checkpoint.

``parlour tiny-model OUT_DIR`` builds one; tests, benchmarks and the README's
examples load it through ``from_pretrained`` (``hf:OUT_DIR``), the same path a
user's model takes, without any download. Its weights are random: it plays
badly until ``parlour train llm`` teaches it a game.
"""

from __future__ import annotations

from pathlib import Path

#: A ChatML-style template, so that prompts go through ``apply_chat_template`` as with real chat models.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

#: Text the tokenizer is trained on: game vocabulary, so common words become single tokens.
CORPUS = [
    "You are playing Tic-tac-toe. Reply with the cell you choose, for example: b2",
    "Board: a1 a2 a3 b1 b2 b3 c1 c2 c3. Empty cells: a1, b2, c3. Invalid action: No move found. Try again.",
    'I think the best move is \\boxed{b2}. Let me play [accept] or {"tool": "search", "arguments": {}}',
    "<think>The centre is strong.</think> My move: c3. The opponent plays a1; you are X, your opponent O.",
]


def game_corpus(env_id: str, games: int = 6) -> list[str]:
    """System prompts and turn texts of a few random games of ``env_id``: a tokenizer trained on them makes
    that game's prompts about as many tokens long as a real tokenizer would."""
    import random

    from parlour.envs.core.match import Match
    from parlour.envs.registry import game_class
    from parlour.wrappers.extraction import FORMAT_HINTS
    from parlour.wrappers.prompting import system_prompt

    corpus: list[str] = []
    for seed in range(games):
        match = Match(game_class(env_id))
        match.reset(seed)
        rng = random.Random(seed)

        # The defaults bind this game's match and generator: play_until calls decide before the loop moves on.
        def decide(player: str, match: Match = match, rng: random.Random = rng) -> str:
            observation = match.agent_observation(player)
            corpus.extend(system_prompt(observation, FORMAT_HINTS["auto"]))
            return rng.choice(observation["legal_moves"])

        match.play_until(decide)
    return corpus


def make_tiny_model(
    path: str | Path, corpus: list[str] | None = None, vocab_size: int = 400, n_embd: int = 64, n_layer: int = 2, n_head: int = 2
) -> str:
    """Build a small GPT-2 (2 layers of width 64 by default) and a byte-level BPE tokenizer with a chat template, save both to ``path``.

    The tokenizer is trained on ``corpus`` (default: a few game sentences) with
    ``vocab_size`` entries; a larger domain corpus gives a real tokenizer's
    characters per token; ``n_embd``, ``n_layer`` and ``n_head`` size the model
    (GPT-2 small is 768, 12, 12), for benchmarks. The weights are deterministic (seeded inside a forked
    RNG, so global random state is untouched). Returns the folder as a string,
    ready for ``hf:<folder>``.
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=special, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tokenizer.train_from_iterator((corpus or CORPUS) * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token="<|im_start|>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)

    config = GPT2Config(
        vocab_size=len(fast),
        n_positions=2048,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = GPT2LMHeadModel(config)
    model.save_pretrained(folder)
    return str(folder)
