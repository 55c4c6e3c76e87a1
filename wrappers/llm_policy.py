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
  runs once and its keys and values are shared, never copied per move.
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
the model is in training mode.

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
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from parlour.envs.core.agent import Action
from parlour.wrappers.backend import Message
from parlour.wrappers.extraction import Extractor, default_extraction, resolve_extractor, strip_reasoning
from parlour.wrappers.kv_store import KVStore, pack, plain_cache
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
def _keeps_some_logits(model_class: type) -> bool:
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


def candidate_logprobs(
    model: Any, prompts: Sequence[Sequence[int]], candidates: Sequence[Sequence[Sequence[int]]], pad_id: int, kv_store: KVStore | None = None
) -> list[list[Any]]:
    """Per decision, per candidate: the 1-d tensor of the candidate's token log-probabilities given the prompt.

    One forward pass scores every candidate of every decision. A row holds the prompt, then each candidate
    but its last token, one after another; a tree-shaped attention mask (:func:`_tree_mask`) lets a
    candidate's tokens see the prompt and their own candidate's earlier tokens only, at the positions they
    would have right after the prompt. So the prompt runs once and its keys and values are never copied
    per candidate. Differentiable when called with gradients enabled. With a ``kv_store`` (inference
    only), each prompt starts from the cache of its longest stored prefix and its own cache is stored for
    the next turn.
    """
    import torch

    if any(not option for options in candidates for option in options):
        raise ValueError("a candidate move has no tokens")
    device = next(model.parameters()).device
    prompts = [list(prompt) for prompt in prompts]
    reused = [kv_store.lookup(prompt) for prompt in prompts] if kv_store is not None else [(0, None)] * len(prompts)
    rows, segments, positions = [], [], []
    for prompt, options in zip(prompts, candidates):
        row, segment, position = list(prompt), [0] * len(prompt), list(range(len(prompt)))
        for number, option in enumerate(options, 1):
            fed = list(option[:-1])
            row += fed
            segment += [number] * len(fed)
            position += range(len(prompt), len(prompt) + len(fed))
        rows.append(row)
        segments.append(segment)
        positions.append(position)
    ids, valid, cache, columns = pack(rows, reused, pad_id, device)
    prefix, width = max(n for n, _ in reused), ids.shape[1]
    segment_grid = np.full((len(rows), width), -1, dtype=np.int64)
    position_grid = np.zeros((len(rows), width), dtype=np.int64)
    for index, where in enumerate(columns):
        segment_grid[index, where] = segments[index]
        position_grid[index, where] = positions[index]
    # The candidates sit at the right end of every row: only the last prompt token's logits and theirs are needed.
    tails = [len(row) - len(prompt) for row, prompt in zip(rows, prompts)]
    kept = max(tails) + 1
    out = model(
        input_ids=ids[:, prefix:],
        attention_mask=_tree_mask(model, torch.from_numpy(segment_grid).to(device), prefix),
        position_ids=torch.from_numpy(position_grid[:, prefix:]).to(device),
        past_key_values=cache,
        use_cache=kv_store is not None,
        **({"logits_to_keep": kept} if _keeps_some_logits(type(model)) else {}),
    )
    if kv_store is not None:
        for index, prompt in enumerate(prompts):
            kv_store.keep(out.past_key_values, index, valid[index], prompt)
    logprobs = torch.log_softmax(out.logits[:, -kept:].float(), dim=-1)
    result: list[list[Any]] = []
    for index, (options, tail) in enumerate(zip(candidates, tails)):
        last = kept - tail - 1
        start = last + 1
        scored = []
        for option in options:
            # Token t of a candidate is predicted at the last prompt token (t = 0) or at the candidate's token t - 1.
            at = [last, *range(start, start + len(option) - 1)]
            scored.append(logprobs[index, at, list(option)])
            start += len(option) - 1
        result.append(scored)
    return result


def completion_logprobs(
    model: Any, prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]], pad_id: int, temperature: float = 1.0
) -> tuple[list[Any], list[Any]]:
    """Per decision: the completion's token log-probabilities and per-token entropies under ``softmax(logits / temperature)``.

    Differentiable when called with gradients enabled.
    """
    import torch

    device = next(model.parameters()).device
    sequences = [list(p) + list(c) for p, c in zip(prompts, completions)]
    ids, mask, positions = _pad_left(sequences, pad_id, device)
    logits = model(input_ids=ids, attention_mask=mask, position_ids=positions).logits.float() / temperature
    width = ids.shape[1]
    logprobs, entropies = [], []
    for row, completion in enumerate(completions):
        n = len(completion)
        if n == 0:
            logprobs.append(logits.new_zeros(0))
            entropies.append(logits.new_zeros(0))
            continue
        # The logits at position t predict token t + 1; the completion fills the last n positions.
        scores = torch.log_softmax(logits[row, width - n - 1 : width - 1], dim=-1)
        target = ids[row, width - n :]
        logprobs.append(scores.gather(1, target.unsqueeze(1)).squeeze(1))
        entropies.append(-(scores.exp() * scores).sum(-1))
    return logprobs, entropies


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
        started = time.perf_counter()
        with torch.no_grad():
            if scored:
                for i, action in zip(scored, self._score([observations[i]["legal_moves"] for i in scored], [prompts[i] for i in scored])):
                    actions[i] = action
            if free:
                for i, action in zip(free, self._generate([prompts[i] for i in free], [observations[i] for i in free], [extractors[i][1] for i in free])):
                    actions[i] = action
        self.usage["model_s"] += time.perf_counter() - started
        self.usage["decisions"] += len(actions)
        for action in actions:
            self.usage["prompt_tokens"] += len(action.metadata["prompt_ids"])
            self.usage["completion_tokens"] += len(action.metadata["completion_ids"])
        for conversation, action in zip(conversations, actions):
            conversation.reply(action.metadata.pop("reply"))
        return actions  # type: ignore[return-value]

    def _score(self, legal: list[list[str]], prompts: list[list[int]]) -> list[Action]:
        import torch

        candidates = [[self.move_ids(move) for move in moves] for moves in legal]
        store = self._usable_kv_store()
        reused = store.reused_tokens if store is not None else 0
        size = self.score_batch or len(prompts)
        token_logprobs = []
        for start in range(0, len(prompts), size):
            token_logprobs += candidate_logprobs(self.model, prompts[start : start + size], candidates[start : start + size], self.pad_id, kv_store=store)
        if store is not None:
            self.usage["cached_tokens"] += store.reused_tokens - reused
        actions = []
        for moves, options, prompt, per_token in zip(legal, candidates, prompts, token_logprobs):
            scores = torch.stack([t.sum() for t in per_token]) / self.temperature
            log_policy = torch.log_softmax(scores, dim=0)
            probs = log_policy.exp().cpu().numpy().astype(np.float64)
            choice = int(np.argmax(probs)) if self.greedy else int(self.rng.choice(len(moves), p=probs / probs.sum()))
            entropy = float(-(probs * log_policy.cpu().numpy()).sum())
            metadata = {
                "mode": "score_legal",
                "prompt_ids": prompt,
                "completion_ids": options[choice],
                "logprobs": per_token[choice].tolist(),
                "policy_logprob": float(log_policy[choice]),
                "entropy": entropy,
                "candidates": options,
                "choice": choice,
                "reply": moves[choice],
            }
            actions.append(Action(moves[choice], metadata))
        return actions

    def _generate(self, prompts: list[list[int]], observations: list[Mapping[str, Any]], extractors: list[Extractor]) -> list[Action]:
        import torch

        device = next(self.model.parameters()).device
        ids, mask, _ = _pad_left(prompts, self.pad_id, device)
        sampling: dict[str, Any] = {"do_sample": False} if self.greedy else {"do_sample": True, "temperature": self.temperature, "top_k": 0, "top_p": 1.0}
        devices = [device.index or 0] if device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(int(self.rng.integers(1 << 31)))
            output = self.model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=self.max_new_tokens,
                pad_token_id=self.pad_id,
                eos_token_id=self.eos_id,
                **sampling,
            )
        completions = []
        for tokens in output[:, ids.shape[1] :].tolist():
            length = tokens.index(self.eos_id) + 1 if self.eos_id in tokens else len(tokens)
            completions.append(tokens[:length])
        logprobs, entropies = completion_logprobs(self.model, prompts, completions, self.pad_id, self.temperature)
        actions = []
        for prompt, completion, lp, ent, obs, extractor in zip(prompts, completions, logprobs, entropies, observations, extractors):
            reply = strip_reasoning(self.tokenizer.decode(completion, skip_special_tokens=True))
            move = extractor(reply, obs.get("legal_moves"))
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

