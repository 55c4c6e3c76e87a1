"""A trainable LLM policy: a ``transformers`` causal LM as a parlour agent that returns :class:`Action`\\ s.

The LLM trainer (:mod:`parlour.baselines.train.llm`) plays and learns with it,
and ``hf:`` agent specs build it in ``score_legal`` mode
(:func:`parlour.wrappers.make_llm_agent`), so a checkpoint is evaluated with
the policy it was trained as.

Two action modes:

* ``score_legal``: the policy is a softmax over the legal moves. Each legal
  move ``m`` is scored by its log-likelihood under the model given the prompt,
  ``s(m) = sum_t log p(m_t | prompt, m_<t)`` over the move's tokens and the
  end-of-turn token, and ``pi(m) = softmax(s / temperature)``. Exact, no invalid
  moves, and one forward pass per batch of decisions: each prompt is followed
  by all its legal moves under a tree-shaped attention mask, so the prompt
  runs once and its keys and values are shared, never copied per move. Every
  candidate token's log-probability comes out of one gather over the pass and
  the candidates' sums out of one scatter, and the whole batch's results reach
  the host in one copy (:func:`candidate_batch`, :func:`candidate_scores`).
* ``generate``: free text sampled from the model (``temperature``, up to
  ``max_new_tokens``), read by the extractors of
  :mod:`parlour.wrappers.extraction`; for negotiation and talk, where moves
  cannot be enumerated. A reply without a move is played as it is, so the
  environment's invalid-action policy sees it.

In ``score_legal`` mode the policy keeps each conversation's key/value cache
across turns when its backend reuses caches (by default on a CPU; see
:mod:`parlour.wrappers.kv_store`): a turn runs only the tokens added since the
last one. The store belongs to the policy and its model; it is emptied when the
model's weights change (an optimiser step, a loaded state) and not used while
the model is in training mode. On a GPU, attention runs without the cuDNN
kernel (:func:`attention_kernels`), and inputs are copied there without waiting
(:func:`to_device`).

Prompts are built as :class:`parlour.wrappers.LLMAgent` builds them (the
system prompt with the rules from :func:`~parlour.wrappers.prompting.system_prompt`,
one :class:`~parlour.wrappers.prompting.Conversation` per episode and player,
the tokenizer's chat template through
:meth:`~parlour.wrappers.transformers_backend.TransformersBackend.render`),
keeping the last ``history_turns`` turns.

Each action's metadata holds ``prompt_ids``, ``completion_ids`` (the chosen
move's or the reply's tokens, ending with the end-of-turn token when it was
produced), per-token ``logprobs`` of the completion under the model (scaled by
the temperature in ``generate`` mode), ``policy_logprob`` (the log-probability
of the action under the policy: of the chosen move in the softmax, or the
sum of the token log-probabilities), ``entropy`` (of the softmax over legal
moves, or the mean per-token entropy of the reply), ``mode``, and in
``score_legal`` mode ``candidates`` (every legal move's tokens) and ``choice``.
The trainer (:mod:`parlour.baselines.train.llm`) recomputes the same
quantities with gradients from these ids.
"""

from __future__ import annotations

import copy
import functools
import inspect
import time
from collections.abc import Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from parlour.envs.core.agent import Action
from parlour.wrappers.backend import Message
from parlour.wrappers.extraction import Extractor, default_extraction, resolve_extractor, strip_reasoning
from parlour.wrappers.kv_store import KVStore, layout, plain_cache, stack_cache
from parlour.wrappers.prompting import SYSTEM_TEMPLATE, Conversation, EpisodeConversations

#: The action modes.
MODES = ("score_legal", "generate")
#: Decisions per scoring pass on a CPU by default: 32 decisions of 5 candidates scored 4 at a time took
#: 0.55-0.85x the CPU time of one pass of 32, with 2x64 and 4x256 GPT-2s and prompts of 40 to 400 tokens.
CPU_SCORE_BATCH = 4


def _pad_left(sequences: Sequence[Sequence[int]], pad_id: int, device: Any) -> tuple[Any, Any, Any]:
    """Left-padded ids, attention mask and position ids (counting real tokens only) of ``sequences``."""
    import torch

    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, sequence in enumerate(sequences):
        if sequence:
            ids[row, width - len(sequence) :] = torch.tensor(list(sequence), dtype=torch.long)
            mask[row, width - len(sequence) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids.to(device), mask.to(device), positions.to(device)


@functools.cache
def _keeps_some_logits(model_class: type[Any]) -> bool:
    """Whether the model's ``forward`` takes ``logits_to_keep``, to project only the last positions onto the vocabulary.

    A scoring pass needs the logits of the last prompt token and of the candidates' tokens only; projecting
    every position is a large share of a small model's work and a batch-by-width-by-vocabulary tensor.
    """
    return "logits_to_keep" in inspect.signature(model_class.forward).parameters


#: Attention implementations that take a custom (tree-shaped) 4-d mask, and the mask's form for each.
TREE_MASKS = {"sdpa": "bool", "eager": "additive"}


def _tree_mask(model: Any, segments: Any, prefix: int) -> Any:
    """The 4-d attention mask of a scoring pass: causal over the columns, a candidate's tokens seeing the prompt and their own candidate only.

    ``segments`` gives each column's part: -1 padding, 0 the prompt, ``j`` the ``j``-th candidate; the queries are
    the columns after ``prefix`` (the cached ones are keys only). Every column sees itself, so no query is left
    with nothing to attend to (padding stays finite and masked out of everything else).
    """
    import torch

    implementation = getattr(model.config, "_attn_implementation", None) or "eager"
    form = TREE_MASKS.get(implementation)
    if form is None:
        raise ValueError(
            f"score_legal scores candidates with a custom attention mask, which {implementation!r} attention does not take; "
            f"load the model with attn_implementation='sdpa' (or 'eager')"
        )
    width = segments.shape[1]
    column = torch.arange(width, device=segments.device)
    query = column[prefix:].unsqueeze(1)
    keys = segments.unsqueeze(1)
    seen = (column.unsqueeze(0) <= query).unsqueeze(0) & (keys >= 0) & ((keys == 0) | (keys == segments[:, prefix:].unsqueeze(2)))
    seen |= (column.unsqueeze(0) == query).unsqueeze(0)
    seen = seen.unsqueeze(1)
    if form == "bool":
        return seen
    dtype = next(model.parameters()).dtype
    return torch.zeros(seen.shape, dtype=dtype, device=seen.device).masked_fill(~seen, torch.finfo(dtype).min)


#: Columns of a scoring or update pass are a multiple of this: aligned widths keep attention kernels off their padding
#: copies and give few distinct shapes.
ALIGN = 16
#: The score of a candidate slot a decision does not have: its softmax weight is exactly 0 and, unlike -inf,
#: differences and products with it stay finite, so padded slots never turn a loss or its gradient into NaN.
FILL = -1e9


def to_device(array: np.ndarray, device: Any) -> Any:
    """A numpy array as a tensor on ``device``; to a GPU through pinned memory without waiting.

    A plain copy from pageable memory waits for everything queued on the GPU first (a stream synchronisation):
    one per small tensor was thousands per update.
    """
    import torch

    tensor = torch.from_numpy(np.ascontiguousarray(array))
    if device.type != "cuda":
        return tensor.to(device)
    return tensor.pin_memory().to(device, non_blocking=True)


def attention_kernels(device: Any) -> Any:
    """The context to run a model in: on a GPU, scaled-dot-product attention without the cuDNN kernel.

    On an H100 the cuDNN kernel took 3.2 ms of host time per call with a custom mask (an execution plan per
    new shape, and every batch has a new one); the flash kernel (plain causal) and the memory-efficient one
    (any mask) need no plan.
    """
    import contextlib

    if device.type != "cuda":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])


def output_cache(output: Any) -> Any:
    """The key/value cache a model's forward or ``generate`` returned: ``cache`` since transformers 5 renamed
    ``past_key_values`` (reading the old name warns), the old name before."""
    return output["cache"] if "cache" in output.keys() else output.past_key_values


@functools.cache
def _cache_argument(model_class: type[Any]) -> str:
    """The name ``forward`` takes a key/value cache by: ``cache`` since transformers 5 renamed ``past_key_values``."""
    return "cache" if "cache" in inspect.signature(model_class.forward).parameters else "past_key_values"


@dataclass
class CandidateBatch:
    """A scoring pass laid out on the host by :func:`candidate_batch`: everything the device needs, in numpy.

    ``grid`` holds the rows' token ids, segments (-1 padding, 0 prompt, ``j`` candidate ``j``) and positions;
    the model is fed the columns after ``prefix`` (the cached ones) and its logits kept for the last ``kept``.
    ``gather`` holds, per candidate token in order (decision, candidate, token): the flat index of the logits
    that predict it, the token, and its candidate's slot (``decision * most + candidate``). ``counts`` are
    the candidates per decision, ``lengths`` the tokens per candidate.
    """

    grid: np.ndarray
    prefix: int
    kept: int
    gather: np.ndarray
    counts: np.ndarray
    lengths: np.ndarray
    most: int
    prompts: list[list[int]]
    cache: Any = None


@dataclass
class CandidateScores:
    """What :func:`candidate_scores` gives: tensors on the model's device, differentiable when gradients are on.

    ``scores`` (decisions x most candidates): each candidate's summed token log-likelihood, :data:`FILL` in
    the slots a decision does not have (``present`` is false there); ``tokens``: every candidate token's
    log-probability, flat in the order of ``batch.gather``.
    """

    scores: Any
    present: Any
    tokens: Any
    batch: CandidateBatch


def candidate_batch(
    prompts: Sequence[Sequence[int]], candidates: Sequence[Sequence[Sequence[int]]], pad_id: int, reused: Sequence[tuple[int, Any]] | None = None
) -> CandidateBatch:
    """Lay out one scoring pass (see :func:`candidate_scores`) on the host; ``reused`` is what a KV store found per prompt."""
    if any(not option for options in candidates for option in options):
        raise ValueError("a candidate move has no tokens")
    rows = [list(prompt) for prompt in prompts]
    reused = list(reused) if reused is not None else [(0, None)] * len(rows)
    # A candidate's last token is only predicted, never fed: nothing is scored after it.
    tails = [sum(len(option) - 1 for option in options) for options in candidates]
    prefix, width, columns = layout([len(p) + t for p, t in zip(rows, tails)], [n for n, _ in reused], ALIGN)
    grid = np.zeros((3, len(rows), width), dtype=np.int64)
    grid[0], grid[1] = pad_id, -1
    most = max((len(options) for options in candidates), default=0)
    kept = max(tails, default=0) + 1
    flat: list[int] = []
    tokens: list[int] = []
    slots: list[int] = []
    lengths: list[int] = []
    for index, (prompt, options, tail, where) in enumerate(zip(rows, candidates, tails, columns)):
        fed = [option[:-1] for option in options]
        grid[0, index, where] = prompt + [token for part in fed for token in part]
        grid[1, index, where] = np.repeat(np.arange(len(options) + 1), [len(prompt), *map(len, fed)])
        grid[2, index, where] = np.concatenate([np.arange(len(prompt)), *[np.arange(len(prompt), len(prompt) + len(part)) for part in fed]])
        # Token t of a candidate is predicted at the last prompt token (t = 0) or at the candidate's token t - 1.
        last = index * kept + kept - tail - 1
        start = last + 1
        for number, option in enumerate(options):
            flat += [last, *range(start, start + len(option) - 1)]
            tokens += option
            slots += [index * most + number] * len(option)
            lengths.append(len(option))
            start += len(option) - 1
    gather = np.array([flat, tokens, slots], dtype=np.int64).reshape(3, -1)
    counts = np.array([len(options) for options in candidates], dtype=np.int64)
    return CandidateBatch(grid, prefix, kept, gather, counts, np.array(lengths, dtype=np.int64), most, rows, stack_cache(reused, prefix))


def candidate_scores(model: Any, batch: CandidateBatch, kv_store: KVStore | None = None) -> CandidateScores:
    """Score every candidate of every decision of ``batch`` in one forward pass (differentiable with gradients on).

    A row holds the prompt, then each candidate but its last token, one after another; a tree-shaped attention
    mask (:func:`_tree_mask`) lets a candidate's tokens see the prompt and their own candidate's earlier tokens
    only, at the positions they would have right after the prompt. So the prompt runs once and its keys and
    values are never copied per candidate. The log-probabilities of all candidate tokens come out of one
    gather, and the candidates' sums out of one scatter: no tensor per decision or candidate, no wait on the
    device. With a ``kv_store`` (inference only), the batch was laid out from its lookups, and each prompt's
    cache is stored for the next turn.
    """
    import torch

    device = next(model.parameters()).device
    grid, gather, counts = batch.grid, batch.gather, batch.counts
    # One copy to the device for all of the pass's integers.
    payload = to_device(np.concatenate([grid.ravel(), gather.ravel(), counts]), device)
    ids, segments, positions = payload[: grid.size].view(grid.shape)
    flat, tokens, slots = payload[grid.size : grid.size + gather.size].view(gather.shape)
    prefix, kept = batch.prefix, batch.kept
    # mypy does not see a class as Hashable (type[Any] against the protocol's __hash__), which every class is.
    options: dict[str, Any] = {"logits_to_keep": kept} if _keeps_some_logits(type(model)) else {}  # type: ignore[arg-type]
    if batch.cache is not None:
        options[_cache_argument(type(model))] = batch.cache  # type: ignore[arg-type]
    with attention_kernels(device):
        out = model(
            input_ids=ids[:, prefix:],
            attention_mask=_tree_mask(model, segments, prefix),
            position_ids=positions[:, prefix:],
            use_cache=kv_store is not None,
            **options,
        )
    if kv_store is not None:
        for index, prompt in enumerate(batch.prompts):
            kv_store.keep(output_cache(out), index, segments[index] >= 0, prompt)
    logits = out.logits[:, -kept:]
    picked = logits.reshape(-1, logits.shape[-1]).index_select(0, flat).float()
    token_logprobs = picked.gather(1, tokens.unsqueeze(1)).squeeze(1) - picked.logsumexp(-1)
    n = grid.shape[1]
    sums = token_logprobs.new_zeros(n * batch.most).index_add(0, slots, token_logprobs).view(n, batch.most)
    present = torch.arange(batch.most, device=device) < payload[-n:].unsqueeze(1)
    return CandidateScores(sums.masked_fill(~present, FILL), present, token_logprobs, batch)


def candidate_logprobs(
    model: Any, prompts: Sequence[Sequence[int]], candidates: Sequence[Sequence[Sequence[int]]], pad_id: int, kv_store: KVStore | None = None
) -> list[list[Any]]:
    """Per decision, per candidate: the 1-d tensor of the candidate's token log-probabilities given the prompt.

    :func:`candidate_scores` of one :func:`candidate_batch`, split per candidate; differentiable when called
    with gradients enabled. With a ``kv_store`` (inference only), each prompt starts from the cache of its
    longest stored prefix and its own cache is stored for the next turn.
    """
    reused = [kv_store.lookup(list(prompt)) for prompt in prompts] if kv_store is not None else None
    scored = candidate_scores(model, candidate_batch(prompts, candidates, pad_id, reused), kv_store)
    parts = list(scored.tokens.split(scored.batch.lengths.tolist()))
    ends = np.cumsum([len(options) for options in candidates]).tolist()
    return [parts[end - len(options) : end] for options, end in zip(candidates, ends)]


@dataclass
class CompletionScores:
    """What :func:`completion_scores` gives: per decision (rows) and completion token (columns), zero past each end.

    ``logprobs`` and ``entropies`` (``None`` unless asked for) are tensors on the model's device; ``mask`` is true
    at each completion's tokens; ``lengths`` (numpy) are the completions' lengths.
    """

    logprobs: Any
    entropies: Any
    mask: Any
    lengths: np.ndarray


def completion_scores(
    model: Any,
    prompts: Sequence[Sequence[int]],
    completions: Sequence[Sequence[int]],
    pad_id: int,
    temperature: float = 1.0,
    entropies: bool = False,
) -> CompletionScores:
    """The completions' token log-probabilities (and per-token entropies) under ``softmax(logits / temperature)``, in one pass.

    Rows are right-padded and run with no attention mask: plain causal attention, the fast path of every
    attention kernel, since a real token never sees the padding after it and positions count from the row's
    start. The logits are projected only from the first column any completion needs, and the log-probabilities
    of every completion token come out of one gather. Differentiable when called with gradients enabled.
    """
    import torch

    device = next(model.parameters()).device
    n = len(prompts)
    lengths = np.array([len(c) for c in completions], dtype=np.int64)
    longest = int(lengths.max(initial=0))
    if longest == 0:
        empty = torch.zeros((n, 0), device=device)
        return CompletionScores(empty, empty if entropies else None, empty.bool(), lengths)
    sizes = [len(p) + len(c) for p, c in zip(prompts, completions)]
    width = -(-max(sizes) // ALIGN) * ALIGN
    # Any token may pad (no real token sees it), but not the model's own pad token: with no mask, transformers warns of that one.
    filler = pad_id if pad_id != getattr(model.config, "pad_token_id", None) else (pad_id + 1) % model.config.vocab_size
    ids = np.full((n, width), filler, dtype=np.int64)
    starts = [len(p) - 1 for p in prompts]
    first = min(start for start, length in zip(starts, lengths) if length)
    kept = width - first
    flat: list[int] = []
    tokens: list[int] = []
    slots: list[int] = []
    for row, (prompt, completion, start) in enumerate(zip(prompts, completions, starts)):
        ids[row, : sizes[row]] = [*prompt, *completion]
        # The logits at position t predict token t + 1.
        flat += range(row * kept + start - first, row * kept + start - first + len(completion))
        tokens += completion
        slots += range(row * longest, row * longest + len(completion))
    payload = to_device(np.concatenate([ids.ravel(), np.array([flat, tokens, slots], dtype=np.int64).ravel(), lengths]), device)
    index = payload[n * width : -n].view(3, -1)
    # mypy does not see a class as Hashable (type[Any] against the protocol's __hash__), which every class is.
    options = {"logits_to_keep": kept} if _keeps_some_logits(type(model)) else {}  # type: ignore[arg-type]
    with attention_kernels(device):
        logits = model(input_ids=payload[: n * width].view(n, width), **options).logits[:, -kept:]
    scores = torch.log_softmax(logits.reshape(-1, logits.shape[-1]).index_select(0, index[0]).float() / temperature, dim=-1)
    picked = scores.gather(1, index[1].unsqueeze(1)).squeeze(1)
    mask = torch.arange(longest, device=device) < payload[-n:].unsqueeze(1)
    logprobs = picked.new_zeros(n * longest).index_copy(0, index[2], picked).view(n, longest)
    entropy = None
    if entropies:
        entropy = picked.new_zeros(n * longest).index_copy(0, index[2], -(scores.exp() * scores).sum(-1)).view(n, longest)
    return CompletionScores(logprobs, entropy, mask, lengths)


def completion_logprobs(
    model: Any, prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]], pad_id: int, temperature: float = 1.0
) -> tuple[list[Any], list[Any]]:
    """Per decision: the completion's token log-probabilities and per-token entropies (:func:`completion_scores`, split per row)."""
    scored = completion_scores(model, prompts, completions, pad_id, temperature, entropies=True)
    return (
        [scored.logprobs[row, :length] for row, length in enumerate(scored.lengths.tolist())],
        [scored.entropies[row, :length] for row, length in enumerate(scored.lengths.tolist())],
    )


class LMPolicy(EpisodeConversations):
    """A causal LM that plays parlour games and returns :class:`Action`\\ s with token ids and log-probabilities.

    Args:
        backend: a :class:`~parlour.wrappers.transformers_backend.TransformersBackend`,
            for its tokenizer and chat template (and its model unless ``model`` is given).
        model: the model to act with (a trainer's live model, a snapshot); default ``backend.model``.
        mode: ``"score_legal"`` or ``"generate"`` (see the module docstring); in
            ``score_legal`` mode an observation without legal moves is answered in ``generate`` mode.
        temperature: of the softmax over legal moves, or of sampling.
        greedy: take the most likely move (or decode greedily) instead of sampling.
        max_new_tokens: the longest reply in ``generate`` mode.
        history_turns: keep this many turns of the episode in the prompt (``None``: all).
        extraction: extractor name or function for ``generate`` mode (default per environment).
        system_template: the system prompt's first line, as for :class:`~parlour.wrappers.LLMAgent`.
        name: the agent's name in records.
        seed: seeds sampling (``reset(seed=...)`` reseeds it).
        score_batch: decisions scored per forward pass in ``score_legal`` mode. ``None`` (default):
            :data:`CPU_SCORE_BATCH` on a CPU, where larger batches of long rows measured slower (their
            attention weights outgrow the caches), and all at once on a GPU.
    """

    def __init__(
        self,
        backend: Any,
        model: Any = None,
        *,
        mode: str = "score_legal",
        temperature: float = 1.0,
        greedy: bool = False,
        max_new_tokens: int = 32,
        history_turns: int | None = 1,
        extraction: str | Extractor | None = None,
        system_template: str = SYSTEM_TEMPLATE,
        name: str = "llm",
        seed: int | None = None,
        score_batch: int | None = None,
    ):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        if history_turns is not None and history_turns < 1:
            raise ValueError(f"history_turns must be >= 1 or None, got {history_turns}")
        self.backend = backend
        self.tokenizer = backend.tokenizer
        self.model = model if model is not None else backend.model
        self.mode = mode
        self.temperature = temperature
        self.greedy = greedy
        self.max_new_tokens = max_new_tokens
        self.history_turns = history_turns
        if score_batch is not None and score_batch < 1:
            raise ValueError(f"score_batch must be >= 1 or None, got {score_batch}")
        on_cpu = next(self.model.parameters()).device.type == "cpu"
        self.score_batch = score_batch if score_batch is not None else (CPU_SCORE_BATCH if on_cpu else None)
        self.extraction = extraction
        self.system_template = system_template
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.conversations: dict[tuple[Hashable, str], Conversation] = {}
        #: Accounting: seconds in the model's forward passes and generation, decisions, prompt and completion tokens,
        #: and prompt tokens taken from stored caches instead of being run (``score_legal`` with KV reuse).
        self.usage: dict[str, float] = {"model_s": 0.0, "decisions": 0, "prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0}
        self._move_ids: dict[str, list[int]] = {}
        eos = self.tokenizer.eos_token_id
        if eos is None:
            raise ValueError("the tokenizer has no eos token; set one so that moves and replies can end")
        self.eos_id = int(eos)
        self.pad_id = int(self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos)
        self.kv_store = self._new_kv_store()
        self._weights_seen: tuple = ()

    def stats(self) -> dict[str, float]:
        """The accounting (:attr:`usage`), which an evaluation sums over its agents' copies."""
        return dict(self.usage)

    def _new_kv_store(self) -> KVStore | None:
        """A store for this policy's model when its backend reuses caches and the model's cache allows it."""
        if not getattr(self.backend, "kv_reuse", False) or not plain_cache(self.model.config):
            return None
        return KVStore(next(self.model.parameters()).device, self.pad_id, self.backend.kv_store.capacity)

    def _usable_kv_store(self) -> KVStore | None:
        """The store, emptied first if the weights changed since it was filled; ``None`` while the model trains."""
        store = self.kv_store
        if store is None or self.model.training:
            return None
        # In-place updates (optimiser steps, load_state_dict) bump a tensor's version; a swapped tensor moves.
        weights = tuple((p.data_ptr(), p._version) for p in self.model.parameters())
        if weights != self._weights_seen:
            store.clear()
            self._weights_seen = weights
        return store

    def copy_with(self, model: Any, **changes: Any) -> "LMPolicy":
        """A policy like this one (fresh conversations) acting with ``model``, with some options changed."""
        other = copy.copy(self)
        other.model = model
        other.conversations = {}
        other.usage = dict.fromkeys(self.usage, 0)
        other.rng = np.random.default_rng(changes.pop("seed", None))
        other.kv_store = other._new_kv_store()
        other._weights_seen = ()
        for key, value in changes.items():
            if not hasattr(other, key):
                raise AttributeError(f"LMPolicy has no option {key!r}")
            setattr(other, key, value)
        return other

    # ------------------------------------------------------------------ tokens
    def move_ids(self, move: str) -> list[int]:
        """The tokens of a legal move as a reply: the move, then the end-of-turn token."""
        ids = self._move_ids.get(move)
        if ids is None:
            ids = self._move_ids[move] = [*self.tokenizer(move, add_special_tokens=False)["input_ids"], self.eos_id]
        return ids

    def prompt_ids(self, messages: list[Message]) -> list[int]:
        """The prompt tokens of ``messages`` with the generation prompt, cut to the model's context if needed."""
        return self.prompts_ids([messages])[0]

    def prompts_ids(self, conversations: list[list[Message]]) -> list[list[int]]:
        """:meth:`prompt_ids` of several conversations in one call to the tokenizer."""
        prompts = self.backend.tokenize(conversations)
        limit = self.backend.context_limit
        if limit is not None:
            # Keep the most recent tokens and room for the reply, as the backend does.
            prompts = [ids[-max(1, limit - self.max_new_tokens) :] for ids in prompts]
        return [list(ids) for ids in prompts]

    # ------------------------------------------------------------------ acting
    def act(self, observation: Mapping[str, Any]) -> Action:
        """The action for one observation."""
        return self.act_batch([observation])[0]

    def act_batch(self, observations: list[Mapping[str, Any]]) -> list[Action]:
        """Actions for many observations (of distinct conversations) with one forward pass per mode."""
        import torch

        keys = [(obs.get("episode"), str(obs.get("player"))) for obs in observations]
        if len(set(keys)) != len(keys):
            raise ValueError("act_batch got two observations of the same (episode, player); give each episode its own 'episode' id")
        extractors = [self._extractor(obs) for obs in observations]
        conversations = [self._observe(key, obs, name) for key, obs, (name, _) in zip(keys, observations, extractors)]
        prompts = self.prompts_ids([c.messages(self.history_turns) for c in conversations])
        actions: list[Action | None] = [None] * len(observations)
        scored = [i for i, obs in enumerate(observations) if self.mode == "score_legal" and obs.get("legal_moves")]
        free = [i for i in range(len(observations)) if i not in set(scored)]
        with torch.no_grad():
            if scored:
                for i, action in zip(scored, self._score([observations[i]["legal_moves"] for i in scored], [prompts[i] for i in scored])):
                    actions[i] = action
            if free:
                for i, action in zip(
                    free, self._generate([prompts[i] for i in free], [observations[i] for i in free], [extractors[i][1] for i in free])
                ):
                    actions[i] = action
        # The scored and the free observations together are all of them: every slot holds an Action now.
        decided = cast(list[Action], actions)
        self.usage["decisions"] += len(decided)
        for action in decided:
            self.usage["prompt_tokens"] += len(action.metadata["prompt_ids"])
            self.usage["completion_tokens"] += len(action.metadata["completion_ids"])
        for conversation, action in zip(conversations, decided):
            conversation.reply(action.metadata.pop("reply"))
        return decided

    @contextmanager
    def _model_time(self) -> Iterator[None]:
        """Count the time inside as the model's (``usage["model_s"]``): its forward passes and ``generate`` calls,
        up to the copy of their results to the host (which waits for the device), and nothing of the policy's own code."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.usage["model_s"] += time.perf_counter() - started

    def _score(self, legal: list[list[str]], prompts: list[list[int]]) -> list[Action]:
        import torch

        candidates = [[self.move_ids(move) for move in moves] for moves in legal]
        store = self._usable_kv_store()
        reused = store.reused_tokens if store is not None else 0
        size = self.score_batch or len(prompts)
        actions = []
        for start in range(0, len(prompts), size):
            chunk_prompts, chunk_candidates = prompts[start : start + size], candidates[start : start + size]
            found = [store.lookup(prompt) for prompt in chunk_prompts] if store is not None else None
            batch = candidate_batch(chunk_prompts, chunk_candidates, self.pad_id, found)
            with self._model_time():
                scored = candidate_scores(self.model, batch, store)
                log_policy = torch.log_softmax(scored.scores / self.temperature, dim=1)
                # One copy to the host for the whole pass: every decision's policy and every candidate token.
                host = torch.cat([log_policy.ravel(), scored.tokens]).cpu().numpy()
            policies, token_logprobs = host[: log_policy.numel()].reshape(log_policy.shape), host[log_policy.numel() :]
            ends = np.cumsum(batch.lengths)
            first = 0
            for row, (moves, options, prompt) in enumerate(zip(legal[start : start + size], chunk_candidates, chunk_prompts)):
                logp = policies[row, : len(options)]
                probs = np.exp(logp).astype(np.float64)
                choice = int(np.argmax(probs)) if self.greedy else int(self.rng.choice(len(moves), p=probs / probs.sum()))
                end = ends[first + choice]
                metadata = {
                    "mode": "score_legal",
                    "prompt_ids": prompt,
                    "completion_ids": options[choice],
                    "logprobs": token_logprobs[end - len(options[choice]) : end].tolist(),
                    "policy_logprob": float(logp[choice]),
                    "entropy": float(-(probs * logp).sum()),
                    "candidates": options,
                    "choice": choice,
                    "reply": moves[choice],
                }
                actions.append(Action(moves[choice], metadata))
                first += len(options)
        if store is not None:
            self.usage["cached_tokens"] += store.reused_tokens - reused
        return actions

    def _generate(self, prompts: list[list[int]], observations: list[Mapping[str, Any]], extractors: list[Extractor]) -> list[Action]:
        import torch

        device = next(self.model.parameters()).device
        ids, mask, _ = _pad_left(prompts, self.pad_id, device)
        sampling: dict[str, Any] = (
            {"do_sample": False} if self.greedy else {"do_sample": True, "temperature": self.temperature, "top_k": 0, "top_p": 1.0}
        )
        devices = [device.index or 0] if device.type == "cuda" else []
        with self._model_time(), torch.random.fork_rng(devices=devices), attention_kernels(device):
            torch.manual_seed(int(self.rng.integers(1 << 31)))
            output = self.model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=self.max_new_tokens,
                pad_token_id=self.pad_id,
                eos_token_id=self.eos_id,
                **sampling,
            )
            generated = output[:, ids.shape[1] :].tolist()
        completions = []
        for tokens in generated:
            length = tokens.index(self.eos_id) + 1 if self.eos_id in tokens else len(tokens)
            completions.append(tokens[:length])
        with self._model_time():
            scored = completion_scores(self.model, prompts, completions, self.pad_id, self.temperature, entropies=True)
            logprobs, entropies = torch.stack([scored.logprobs, scored.entropies]).cpu().numpy()
        actions = []
        for row, (prompt, completion, obs, extractor) in enumerate(zip(prompts, completions, observations, extractors)):
            reply = strip_reasoning(self.tokenizer.decode(completion, skip_special_tokens=True))
            move = extractor(reply, obs.get("legal_moves"))
            lp, ent = logprobs[row, : len(completion)], entropies[row, : len(completion)]
            metadata = {
                "mode": "generate",
                "prompt_ids": prompt,
                "completion_ids": completion,
                "logprobs": lp.tolist(),
                "policy_logprob": float(lp.sum()),
                "entropy": float(ent.mean()) if len(ent) else 0.0,
                "reply": reply,
            }
            actions.append(Action(move if move is not None else reply, metadata))
        return actions

    # --------------------------------------------------------------- internals
    def _extractor(self, observation: Mapping[str, Any]) -> tuple[str, Extractor]:
        choice = self.extraction if self.extraction is not None else default_extraction(observation.get("env_id"))
        return resolve_extractor(choice)
