"""Key/value caches kept across a conversation's turns, so that each turn runs only what is new.

The prompt of a conversation's next turn extends the prompt (and reply) of its
last one. :class:`KVStore` keeps, for each token sequence it was given, the
model's key/value cache of those tokens; for a new prompt it finds the stored
sequence sharing the longest token prefix with it and hands back that cache
cut to the prefix, so only the new suffix goes through the model. Prefixes are
matched on token ids, so a reply that re-tokenises differently, a window that
dropped turns or a conversation that shares only the system prompt still
reuse exactly what matches.

In a batch (:func:`pack`), each row's cached prefix is left-padded to
the longest one and its new suffix left-padded after it; the attention mask
hides both paddings and position ids count real tokens only, so every row sees
exactly the positions and keys it would see alone. The store is bounded by
``capacity`` tokens (least recently used sequences go first).

The transformers backend (``generate``) and the LLM trainer's policy
(``score_legal``) each keep one, for the model they run.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, NamedTuple

import numpy as np

#: One stored sequence's cache: per layer, (keys, values) of shape (heads, tokens, head_dim).
Layers = list[tuple[Any, Any]]


class BatchLayout(NamedTuple):
    """Where a batch's tokens go (:func:`layout`): the width of the cached prefixes, the whole width, and each row's
    token columns."""

    prefix: int
    width: int
    columns: list[Any]


class PackedBatch(NamedTuple):
    """A batch ready for the model (:func:`pack`): token ids and attention mask over the :func:`layout` width, the
    ``DynamicCache`` of the rows' prefixes (``None`` when no row reuses anything) and each row's token columns."""

    input_ids: Any
    attention_mask: Any
    cache: Any
    columns: list[Any]


class KVStore:
    """Per-sequence KV caches of one model, found again by longest common token prefix.

    Args:
        device: the torch device the model runs on (batches are built there).
        pad_id: the token id that pads rows (masked out).
        capacity: the most tokens whose caches are kept.
    """

    def __init__(self, device: Any, pad_id: int, capacity: int):
        if capacity < 0:
            raise ValueError(f"the KV store's capacity must be >= 0 tokens, got {capacity}")
        self.device = device
        self.pad_id = pad_id
        self.capacity = capacity
        #: Tokens held now (the sum of the stored sequences' lengths).
        self.tokens = 0
        #: Prompt tokens that lookups have taken from the store so far (not run through the model).
        self.reused_tokens = 0
        self._store: OrderedDict[tuple[int, ...], Layers] = OrderedDict()
        #: The stored sequences as one padded matrix, for :meth:`lookup`; ``None`` after a change.
        self._matrix: tuple[list[tuple[int, ...]], Any] | None = None

    def __len__(self) -> int:
        return len(self._store)

    def lookup(self, ids: list[int]) -> tuple[int, Layers | None]:
        """``(n, layers)``: the stored cache sharing the longest prefix with ``ids``, cut to that prefix of ``n`` tokens.

        At most ``len(ids) - 1`` tokens are taken, since the last prompt token must run to give its logits;
        ``(0, None)`` when nothing matches. Every stored sequence is compared at once, as rows of one matrix.
        """
        keys, matrix = self._prefix_matrix()
        n = min(matrix.shape[1], len(ids) - 1) if keys else 0
        if n <= 0:
            return 0, None
        same = matrix[:, :n] == np.asarray(ids[:n])
        lengths = np.where(same.all(axis=1), n, same.argmin(axis=1))
        row = int(lengths.argmax())
        best = int(lengths[row])
        if best <= 0:
            return 0, None
        match = keys[row]
        self._store.move_to_end(match)
        self.reused_tokens += best
        return best, [(k[:, :best], v[:, :best]) for k, v in self._store[match]]

    def _prefix_matrix(self) -> tuple[list[tuple[int, ...]], Any]:
        """The stored token sequences as the rows of one matrix padded with -1 (built again only after the store changed)."""
        if self._matrix is None:
            keys = list(self._store)
            matrix = np.full((len(keys), max((len(key) for key in keys), default=0)), -1, dtype=np.int64)
            for row, key in enumerate(keys):
                matrix[row, : len(key)] = key
            self._matrix = (keys, matrix)
        return self._matrix

    def batch(self, prompts: list[list[int]], reused: list[tuple[int, Layers | None]]) -> PackedBatch:
        """``(input_ids, attention_mask, cache, columns)`` for ``prompts`` given what :meth:`lookup` found for each (see :func:`pack`)."""
        return pack(prompts, reused, self.pad_id, self.device)

    def keep(self, cache: Any, row: int, mask: Any, tokens: list[int]) -> None:
        """Store the cache of ``tokens`` from ``row`` of a batch run with ``mask`` (and possibly generated after).

        The cache holds every position fed to the model: the masked-in prompt, then each generated token but
        the last; ``tokens`` are the prompt and whatever of the reply is to be kept.
        """
        import torch

        positions = torch.nonzero(mask, as_tuple=True)[0]
        generated = torch.arange(mask.shape[0], cache.get_seq_length(), device=mask.device)
        index = torch.cat([positions, generated])[: len(tokens)]
        key = tuple(tokens[: len(index)])
        if key in self._store:
            self._store.move_to_end(key)
            return
        self._matrix = None
        self._store[key] = [(layer.keys[row][:, index], layer.values[row][:, index]) for layer in cache.layers]
        self.tokens += len(key)
        # A sequence that this one extends is now redundant.
        for other in [k for k in self._store if len(k) < len(key) and k[-1] == key[len(k) - 1] and key[: len(k)] == k]:
            self.tokens -= len(other)
            del self._store[other]
        while self.tokens > self.capacity and self._store:
            evicted, _ = self._store.popitem(last=False)
            self.tokens -= len(evicted)

    def clear(self) -> None:
        """Drop every stored cache (the model's weights changed, or memory is wanted back)."""
        self._store.clear()
        self._matrix = None
        self.tokens = 0


def layout(lengths: list[int], cached: list[int], multiple: int = 1) -> BatchLayout:
    """``(prefix width, width, columns)`` of a batch of rows of ``lengths`` tokens whose first ``cached`` come from a cache.

    Each row's cached prefix is right-aligned in the first ``prefix width`` columns and the rest of the row
    right-aligned in the columns after, whose number is rounded up to a ``multiple`` (aligned widths keep
    attention kernels off their padding copies and give few distinct shapes); ``columns[row]`` lists the
    column of each of the row's tokens.
    """
    prefix = max(cached)
    suffix = max(length - n for length, n in zip(lengths, cached))
    width = prefix + -(-suffix // multiple) * multiple
    columns = [np.concatenate([np.arange(prefix - n, prefix), np.arange(width - (length - n), width)]) for length, n in zip(lengths, cached)]
    return BatchLayout(prefix, width, columns)


def pack(rows: list[list[int]], reused: list[tuple[int, Layers | None]], pad_id: int, device: Any) -> PackedBatch:
    """``(input_ids, attention_mask, cache, columns)`` for ``rows``, the first ``n`` tokens of each taken from the cache found for it.

    The ids and mask span the whole :func:`layout` width; the model is fed the columns after the prefix width
    (the longest ``n``). ``cache`` is a ``DynamicCache`` of the prefixes, or ``None`` when no row reuses
    anything; ``columns`` are each row's token columns (see :func:`layout`).
    """
    import torch

    cached, width, columns = layout([len(row) for row in rows], [n for n, _ in reused])
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for index, (row, where) in enumerate(zip(rows, columns)):
        ids[index, where] = row
        mask[index, where] = 1
    input_ids = torch.from_numpy(ids).to(device)
    attention_mask = torch.from_numpy(mask).to(device)
    return PackedBatch(input_ids, attention_mask, stack_cache(reused, cached), columns)


def stack_cache(reused: list[tuple[int, Layers | None]], prefix: int) -> Any:
    """A ``DynamicCache`` of the rows' cached prefixes, each right-aligned in ``prefix`` columns; ``None`` when nothing is reused."""
    from transformers import DynamicCache

    if prefix == 0:
        return None
    cache = DynamicCache()
    first = next(layers for _, layers in reused if layers is not None)
    for layer, (k0, v0) in enumerate(first):
        # Each row's cached prefix is copied into place; the left padding stays zero (and masked out).
        keys = k0.new_zeros((len(reused), k0.shape[0], prefix, k0.shape[2]))
        values = v0.new_zeros((len(reused), v0.shape[0], prefix, v0.shape[2]))
        for index, (n, layers) in enumerate(reused):
            if n:
                assert layers is not None  # a row reuses tokens only from the cache found for it
                keys[index, :, prefix - n :] = layers[layer][0]
                values[index, :, prefix - n :] = layers[layer][1]
        cache.update(keys, values, layer)
    return cache


def plain_cache(config: Any) -> bool:
    """Whether a model's cache is a plain per-layer key/value cache that can be cut and stacked (no sliding window, no recurrent state)."""
    text = getattr(config, "get_text_config", lambda: config)()
    if getattr(text, "sliding_window", None) or getattr(text, "layer_types", None) and set(text.layer_types) != {"full_attention"}:
        return False
    return not getattr(text, "is_encoder_decoder", False)
