"""The ``transformers`` backend: a local causal LM, batched generation with left padding, KV caches reused across turns.

KV reuse: the prompt of a conversation's next turn extends the prompt and
reply of its last one, so the backend keeps each sequence's key/value cache in
a :class:`~parlour.wrappers.kv_store.KVStore` and runs only the new suffix of
each prompt (see that module for how prefixes are found and batched).

torch and transformers are imported when a backend is built, never at
``import parlour``.
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import Any, cast

from parlour.wrappers.backend import Completion, Message
from parlour.wrappers.kv_store import KVStore, plain_cache
from parlour.wrappers.llm_policy import attention_kernels, output_cache

#: Token counts of message lists remembered by :meth:`TransformersBackend.count_tokens` (oldest dropped first).
COUNT_CACHE_SIZE = 1 << 14
#: Tokenised prompt heads remembered by :meth:`TransformersBackend.tokenize` (oldest dropped first).
HEAD_CACHE_SIZE = 1 << 12
#: How many messages shorter than a new conversation the remembered one it extends may be (a reply, a retry, tool results).
HEAD_LOOKBACK = 6
#: ``dtype`` names accepted besides ``"auto"``.
DTYPES = ("float32", "float16", "bfloat16")


class TransformersBackend:
    """A causal LM loaded with ``from_pretrained`` from a local folder (offline) or a hub id.

    Prompts go through the tokenizer's chat template when it has one, else a
    plain ``role: content`` transcript. A batch of conversations is one
    ``generate`` call with left padding. Sampling is reproducible under a seed:
    each call seeds torch inside a forked RNG, so global random state is left
    as it was.

    Args:
        model: a local folder or a hub id; a folder that exists is loaded with
            ``local_files_only`` so no network is touched.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...; default CUDA when available.
        dtype: ``"auto"`` (bfloat16 on CUDA when supported, else float32) or one of :data:`DTYPES`.
        max_new_tokens: the longest reply, in tokens.
        do_sample: sample (default) or decode greedily.
        temperature, top_p, top_k: sampling parameters (``top_k=0`` disables it).
        trust_remote_code: passed to ``from_pretrained``.
        kv_reuse: keep each sequence's KV cache and start later prompts that
            extend it from there (see the module docstring); models whose
            cache is not a plain ``DynamicCache`` (sliding windows, recurrent
            state) run without it. ``None`` (default): on a CPU only, where it
            measured 1.4-1.8x faster batched TicTacToe rollouts with a 2x64
            GPT-2 and 2.1-2.2x with a 4x256 one
            (``benchmarks/rollout_throughput.py``); on an H100 it measured
            0.45-0.55x (storing and gathering each row's cache is many small
            kernel launches per layer), so it is off there unless asked for.
        kv_cache_tokens: the most tokens whose KV cache is kept for reuse.

    Greedy decoding of a batch (left-padded) gives each prompt the tokens it decodes to alone in float32
    (tested on a CPU). In bfloat16 or float16 a batch's matrix shapes round differently from one prompt's,
    so where the two most likely tokens are within that rounding of each other the choice can differ:
    often with an untrained model, whose next-token distribution is nearly flat, rarely with a trained one
    (``benchmarks/rollout_throughput.py`` prints the share of identical moves). On a GPU, ``generate`` runs
    without cuDNN attention (:func:`~parlour.wrappers.llm_policy.attention_kernels`).

    ``usage`` accounts ``model_s`` (seconds in the model's ``generate``
    calls), ``prompt_tokens``, ``cached_tokens`` (prompt tokens taken from a
    stored cache instead of being run) and ``generate_calls``.
    """

    def __init__(
        self,
        model: str,
        *,
        device: str | None = None,
        dtype: str = "auto",
        max_new_tokens: int = 16,
        do_sample: bool = True,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = 0,
        trust_remote_code: bool = False,
        kv_reuse: bool | None = None,
        kv_cache_tokens: int = 1 << 16,
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if dtype != "auto" and dtype not in DTYPES:
            raise ValueError(f"dtype must be 'auto' or one of {DTYPES}, got {dtype!r}")
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        if dtype == "auto":
            on_cuda = self.device.type == "cuda"
            torch_dtype = torch.bfloat16 if on_cuda and torch.cuda.is_bf16_supported() else torch.float32
        else:
            torch_dtype = getattr(torch, dtype)
        local = Path(model).exists()
        if not local and (model.startswith((".", "/", "~")) or model.count("/") > 1):
            # Hub ids are "name" or "namespace/name"; anything else is a folder that is not there.
            raise FileNotFoundError(f"no model folder at {model!r} (and it is not a hub id such as 'namespace/name')")
        options: dict[str, Any] = {"local_files_only": local, "trust_remote_code": trust_remote_code}
        self.tokenizer = AutoTokenizer.from_pretrained(model, **options)
        # transformers wraps Module.to in a decorator whose annotation takes the model as its first argument.
        self.model = AutoModelForCausalLM.from_pretrained(model, dtype=torch_dtype, **options).to(self.device).eval()  # type: ignore[arg-type]
        # transformers 5 renamed generate's past_key_values to cache (the old name warns); older releases know only the old one.
        self.cache_argument = "cache" if "cache" in inspect.signature(self.model.forward).parameters else "past_key_values"
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            if self.tokenizer.eos_token is None:
                raise ValueError(f"the tokenizer of {model} has neither a pad nor an eos token; set one before batching")
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.name = f"hf:{model}"
        self.max_new_tokens = max_new_tokens
        self.context_limit: int | None = getattr(self.model.config, "max_position_embeddings", None)
        self.sampling: dict[str, Any] = {"do_sample": do_sample}
        if do_sample:
            self.sampling.update(temperature=temperature, top_p=top_p, top_k=top_k)
        self.has_chat_template = bool(getattr(self.tokenizer, "chat_template", None))
        if kv_cache_tokens < 0:
            raise ValueError(f"kv_cache_tokens must be >= 0, got {kv_cache_tokens}")
        if kv_reuse is None:
            kv_reuse = self.device.type == "cpu"
        self.kv_reuse = kv_reuse and kv_cache_tokens > 0 and plain_cache(self.model.config)
        self.kv_store = KVStore(self.device, self.tokenizer.pad_token_id, kv_cache_tokens)
        self._counts: dict[tuple[tuple[str, str], ...], int] = {}
        #: Conversation (as (role, content) pairs) -> (its prompt text up to the special token that opens its last
        #: turn, that text's ids), for :meth:`tokenize`.
        self._heads: dict[tuple[tuple[str, str], ...], tuple[str, list[int]]] = {}
        self._split_ids = _split_token_ids(self.tokenizer) if self.has_chat_template else frozenset()
        self.usage: dict[str, float] = {"model_s": 0.0, "prompt_tokens": 0, "cached_tokens": 0, "generate_calls": 0}

    def render(self, messages: list[Message], generation_prompt: bool = True) -> str:
        """The prompt text of ``messages``: the chat template, or a plain transcript when the tokenizer has none."""
        if self.has_chat_template:
            from jinja2.exceptions import TemplateError

            # With tokenize=False the template gives its text; transformers annotates every mode's result as one union.
            try:
                return cast(str, self.tokenizer.apply_chat_template(messages, add_generation_prompt=generation_prompt, tokenize=False))
            except TemplateError:
                # Some templates (Gemma, Mistral) reject a system role: fold it into the first user message.
                return cast(str, self.tokenizer.apply_chat_template(fold_system(messages), add_generation_prompt=generation_prompt, tokenize=False))
        transcript = "\n\n".join(f"{m['role']}: {m['content']}" for m in messages)
        return f"{transcript}\n\nassistant:" if generation_prompt else transcript

    def count_tokens(self, messages: list[Message]) -> int:
        """Prompt tokens of ``messages`` as rendered (without the generation prompt); remembered, since the agent's window asks for every turn on every call."""
        key = tuple((m["role"], m["content"]) for m in messages)
        count = self._counts.get(key)
        if count is None:
            count = len(self.tokenizer(self.render(messages, generation_prompt=False), add_special_tokens=False)["input_ids"])
            if len(self._counts) >= COUNT_CACHE_SIZE:
                self._counts.pop(next(iter(self._counts)))
            self._counts[key] = count
        return count

    def tokenize(self, conversations: list[list[Message]]) -> list[list[int]]:
        """The prompt ids of each conversation (rendered with the generation prompt), exactly as tokenising its whole text gives them.

        A conversation that extends one tokenised before (its earlier turns, then a reply and what came after) is
        tokenised only from the special token that opened that earlier prompt's last turn: a fast tokenizer splits
        special tokens out of the text before anything else, so the text before one tokenises the same whatever
        follows it. Templates without such tokens (and tokenizers that could merge across them) tokenise whole.
        """
        texts = [self.render(messages) for messages in conversations]
        if not self._split_ids:
            return self.tokenizer(texts, add_special_tokens=not self.has_chat_template)["input_ids"]
        heads = [self._head_of(messages, text) for messages, text in zip(conversations, texts)]
        tails = self.tokenizer([text[len(head) :] for text, (head, _) in zip(texts, heads)], add_special_tokens=False, return_offsets_mapping=True)
        prompts = []
        for messages, text, (head, head_ids), tail_ids, offsets in zip(conversations, texts, heads, tails["input_ids"], tails["offset_mapping"]):
            if head and not (tail_ids and tail_ids[0] in self._split_ids and offsets[0][0] == 0):
                # The new text does not open a turn where the remembered head ends: tokenise it whole.
                head, head_ids = "", []
                encoded = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
                tail_ids, offsets = encoded["input_ids"], encoded["offset_mapping"]
            ids = head_ids + tail_ids
            prompts.append(ids)
            # Where this prompt's last turn opens (its generation prompt): the next turn's prompt is tokenised from there.
            last = next((i for i in range(len(tail_ids) - 1, -1, -1) if tail_ids[i] in self._split_ids), None)
            if last is not None:
                if len(self._heads) >= HEAD_CACHE_SIZE:
                    self._heads.pop(next(iter(self._heads)))
                self._heads[_conversation_key(messages)] = (text[: len(head) + offsets[last][0]], ids[: len(head_ids) + last])
        return prompts

    def _head_of(self, messages: list[Message], text: str) -> tuple[str, list[int]]:
        """The remembered head (text and ids) of the longest earlier conversation this one extends, if ``text`` still begins with it."""
        for shorter in range(len(messages) - 1, max(0, len(messages) - 1 - HEAD_LOOKBACK), -1):
            head = self._heads.get(_conversation_key(messages[:shorter]))
            if head is not None and text.startswith(head[0]):
                return head
        return "", []

    def generate(self, conversations: list[list[Message]], seed: int | None = None) -> list[Completion]:
        """One completion per conversation, from a single batched ``generate`` call."""
        import torch

        prompts = self.tokenize(conversations)
        if self.context_limit is not None:
            # Last resort after the agent's window: keep the most recent tokens so generation never overflows.
            room = max(1, self.context_limit - self.max_new_tokens)
            prompts = [ids[-room:] for ids in prompts]
        reused = [self.kv_store.lookup(ids) if self.kv_reuse else (0, None) for ids in prompts]
        input_ids, attention_mask, cache, _ = self.kv_store.batch(prompts, reused)
        width = attention_mask.shape[1]
        devices = [self.device.index or 0] if self.device.type == "cuda" else []
        started = time.perf_counter()
        with torch.random.fork_rng(devices=devices), torch.inference_mode(), attention_kernels(self.device):
            if seed is not None:
                torch.manual_seed(seed)
            output = self.model.generate(
                input_ids=input_ids,
                attention_mask=attention_mask,
                **{self.cache_argument: cache},
                max_new_tokens=self.max_new_tokens,
                pad_token_id=self.tokenizer.pad_token_id,
                eos_token_id=self.tokenizer.eos_token_id,
                return_dict_in_generate=True,
                **self.sampling,
            )
        self.usage["model_s"] += time.perf_counter() - started
        self.usage["generate_calls"] += 1
        generated = output.sequences[:, width:].tolist()
        completions = []
        for row, (tokens, ids) in enumerate(zip(generated, prompts)):
            length = tokens.index(self.tokenizer.eos_token_id) + 1 if self.tokenizer.eos_token_id in tokens else len(tokens)
            if self.kv_reuse:
                self.kv_store.keep(output_cache(output), row, attention_mask[row], ids + tokens[:length])
            # One sequence of ids decodes to one text (transformers' annotation also covers a batch's list).
            text = cast(str, self.tokenizer.decode(tokens[:length], skip_special_tokens=True))
            completions.append(Completion(text=text, prompt_tokens=len(ids), completion_tokens=length))
        self.usage["prompt_tokens"] += sum(len(ids) for ids in prompts)
        self.usage["cached_tokens"] += sum(n for n, _ in reused)
        return completions

    def clear_kv_cache(self) -> None:
        """Drop every stored KV cache (e.g. after the model's weights changed)."""
        self.kv_store.clear()


def _conversation_key(messages: list[Message]) -> tuple[tuple[str, str], ...]:
    """A hashable key of a conversation."""
    return tuple((m["role"], m["content"]) for m in messages)


def _split_token_ids(tokenizer: Any) -> frozenset[int]:
    """The ids of the special tokens a fast tokenizer splits the text on before tokenising it: text before one
    tokenises the same whatever follows. Tokens that strip the space before them or match only after
    normalisation are left out; a slow tokenizer gives none."""
    if not getattr(tokenizer, "is_fast", False):
        return frozenset()
    added = getattr(tokenizer, "added_tokens_decoder", {})
    return frozenset(index for index, token in added.items() if token.special and not token.lstrip and not token.normalized and not token.single_word)


def fold_system(messages: list[Message]) -> list[Message]:
    """``messages`` without a system message: its content is prepended to the first user message."""
    if not messages or messages[0]["role"] != "system":
        return messages
    system, rest = messages[0]["content"], list(messages[1:])
    if rest and rest[0]["role"] == "user":
        return [{"role": "user", "content": f"{system}\n\n{rest[0]['content']}"}, *rest[1:]]
    return [{"role": "user", "content": system}, *rest]
