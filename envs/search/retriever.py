"""An embedded BM25 retriever over a list of passages, with its index cached on disk by content hash.

``Retriever(passages)`` indexes ``{"id", "title", "text"}`` passages (title and
text together) with `bm25s <https://github.com/xhluca/bm25s>`_: words of two or
more characters, lower-cased, Lucene's English stop words removed, Snowball
English stemming from PyStemmer. The index is built once per corpus: it is
saved under ``<cache>/bm25/<hash>``, where ``<hash>`` is the sha256 of the
index format, the BM25 parameters and every passage's id, title and text, and ``<cache>`` is the
``cache_dir`` argument, else ``$PARLOUR_CACHE``, else ``~/.cache/parlour``.
The saved index is numpy arrays (loaded with ``allow_pickle=False``) and JSON,
so loading a cache never runs pickle.

``search(query, k)`` returns the ``k`` best-scoring passages that share at
least one term with the query, best first, ties broken by passage id, so the
same query on the same corpus always gives the same list.

bm25s and PyStemmer come with the ``search`` extra: ``pip install 'parlour[search]'``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

INDEX_FORMAT = 1
"""Version of tokenisation, parameters and layout on disk; part of the cache key, so a change makes old caches miss."""

_MANIFEST = "parlour.json"
_WORD = re.compile(r"(?u)\b\w\w+\b")
# Lucene's English stop words, as bm25s ships them (bm25s.stopwords.STOPWORDS_EN).
_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with".split()
)


@dataclass(frozen=True)
class Hit:
    """One search result: the passage's id, its BM25 score for the query, its title and its text."""

    doc_id: str
    score: float
    title: str
    text: str


def text_hash(doc: Mapping[str, Any] | str) -> str:
    """sha256 (hex) of a passage's ``text`` (or of a string), for records that must pin what an agent was shown."""
    text = doc if isinstance(doc, str) else doc["text"]
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def corpus_hash(passages: Sequence[Mapping[str, Any]], settings: str = "") -> str:
    """The cache key of an index: sha256 of the index format, ``settings`` and every passage's id, title and text."""
    digest = hashlib.sha256(f"parlour-bm25 format {INDEX_FORMAT} {settings}\0".encode())
    for passage in passages:
        for field in ("id", "title", "text"):
            digest.update(str(passage.get(field, "")).encode("utf-8"))
            digest.update(b"\0")
    return digest.hexdigest()


def default_cache_dir() -> Path:
    """``$PARLOUR_CACHE`` when set, else ``~/.cache/parlour``: the root that holds ``bm25/<hash>`` indexes."""
    configured = os.environ.get("PARLOUR_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "parlour"


def _import_bm25() -> tuple[Any, Any]:
    """The ``bm25s`` and ``Stemmer`` modules, or an ImportError that says how to install them."""
    try:
        import bm25s
        import Stemmer
    except ImportError as error:
        raise ImportError(f"the search retriever needs bm25s and PyStemmer ({error.name} is missing): pip install 'parlour[search]'") from error
    return bm25s, Stemmer


class _Analyzer:
    """Text to index terms: lower-case words, stop words dropped, Snowball English stems (memoised per word)."""

    def __init__(self, stemmer_module: Any) -> None:
        self._stemmer = stemmer_module.Stemmer("english")
        self._stems: dict[str, str] = {}

    def words(self, text: str) -> list[str]:
        """The words of ``text`` that are indexed, before stemming."""
        return [word for word in _WORD.findall(text.lower()) if word not in _STOPWORDS]

    def terms(self, texts: Sequence[str]) -> list[list[str]]:
        """Stemmed terms of each text; every distinct new word is stemmed once, in one call."""
        words = [self.words(text) for text in texts]
        unseen = sorted({word for doc in words for word in doc if word not in self._stems})
        self._stems.update(zip(unseen, self._stemmer.stemWords(unseen)))
        return [[self._stems[word] for word in doc] for doc in words]


class Retriever:
    """BM25 search over ``passages`` (mappings with ``id``, ``title`` and ``text``; ids unique).

    The index is loaded from ``<cache_dir>/bm25/<corpus hash>`` when present,
    else built and saved there; ``loaded_from_cache`` says which happened and
    ``index_dir`` where it lives. ``k1`` and ``b`` are the BM25 parameters
    (Lucene's scoring).
    """

    def __init__(
        self,
        passages: Sequence[Mapping[str, Any]],
        cache_dir: str | os.PathLike[str] | None = None,
        *,
        k1: float = 1.5,
        b: float = 0.75,
    ) -> None:
        """Index ``passages``, or load their index from the cache; raise ValueError on malformed passages."""
        self._bm25s, stemmer_module = _import_bm25()
        self._analyzer = _Analyzer(stemmer_module)
        self._passages = [_checked(passage, i) for i, passage in enumerate(passages)]
        if not self._passages:
            raise ValueError("a Retriever needs at least one passage")
        self._position: dict[str, int] = {}
        for i, passage in enumerate(self._passages):
            first = self._position.get(passage["id"])
            if first is not None:
                raise ValueError(f"passage id {passage['id']!r} appears twice (positions {first} and {i})")
            self._position[passage["id"]] = i
        # Rank of each passage in id order: the tie-breaker of search().
        ranks = np.empty(len(self._passages), dtype=np.int64)
        ranks[sorted(range(len(self._passages)), key=lambda i: self._passages[i]["id"])] = np.arange(len(ranks))
        self._id_rank = ranks
        self.k1, self.b = k1, b
        self.hash = corpus_hash(self._passages, f"k1={k1} b={b}")
        root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
        self.index_dir = root / "bm25" / self.hash
        cached = self._load()
        self.loaded_from_cache = cached is not None
        #: The bm25s index (bm25s has no type information).
        self._bm25: Any = cached if cached is not None else self._build_and_save()
        self._vocab: dict[str, int] = self._bm25.vocab_dict

    def __len__(self) -> int:
        """How many passages are indexed."""
        return len(self._passages)

    def get(self, doc_id: str) -> dict[str, str]:
        """The passage with id ``doc_id`` (a copy); KeyError if there is none."""
        if doc_id not in self._position:
            raise KeyError(f"no passage with id {doc_id!r}")
        return dict(self._passages[self._position[doc_id]])

    def search(self, query: str, k: int = 5) -> list[Hit]:
        """The ``k`` best passages for ``query`` that match at least one of its terms, best first.

        Equal scores are ordered by passage id (string order), so results never
        depend on the order of ties inside numpy. A query with no indexed term returns ``[]``.
        """
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        term_ids = [self._vocab[term] for term in self._analyzer.terms([query])[0] if term in self._vocab]
        if not term_ids:
            return []
        scores = self._scores(term_ids)
        matching = np.flatnonzero(scores > 0)
        if matching.size > k:
            # Keep everything that ties with the k-th score, so the id tie-break below sees the whole tie.
            kth = np.partition(scores[matching], matching.size - k)[matching.size - k]
            matching = matching[scores[matching] >= kth]
        best = matching[np.lexsort((self._id_rank[matching], -scores[matching]))[:k]]
        return [Hit(self._passages[i]["id"], float(scores[i]), self._passages[i]["title"], self._passages[i]["text"]) for i in best.tolist()]

    def _scores(self, term_ids: Sequence[int]) -> np.ndarray:
        """Every passage's BM25 score for the query terms ``term_ids`` (repeated terms count again)."""
        index = self._bm25.scores
        data, indices, indptr = index["data"], index["indices"], index["indptr"]
        scores = np.zeros(len(self._passages), dtype=data.dtype)
        for term in term_ids:
            start, end = indptr[term], indptr[term + 1]
            # A passage appears at most once in a term's column, so plain fancy-index addition is exact; it is
            # an order of magnitude faster than the np.add.at of bm25s's numpy backend on large corpora.
            scores[indices[start:end]] += data[start:end]
        return scores

    def _published(self) -> bool:
        """Whether ``index_dir`` holds a complete index of this corpus: its manifest, written last, says so."""
        try:
            manifest = json.loads((self.index_dir / _MANIFEST).read_text())
        except (OSError, ValueError):
            return False
        return manifest.get("hash") == self.hash and manifest.get("num_docs") == len(self._passages)

    def _load(self) -> Any | None:
        """The cached index if a complete one for this corpus is on disk, else None."""
        if not self._published():
            return None
        try:
            return self._bm25s.BM25.load(str(self.index_dir), mmap=False, allow_pickle=False)
        except (OSError, ValueError):
            return None

    def _build_and_save(self) -> Any:
        """Build the index, then publish it in the cache with one rename, so readers never see half an index."""
        bm25 = self._bm25s.BM25(k1=self.k1, b=self.b)
        bm25.index(self._analyzer.terms([p["title"] + "\n" + p["text"] for p in self._passages]), show_progress=False)
        self.index_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{self.hash[:16]}-", dir=self.index_dir.parent))
        try:
            bm25.save(str(staging), allow_pickle=False, show_progress=False)
            manifest = {"format": INDEX_FORMAT, "hash": self.hash, "num_docs": len(self._passages), "k1": self.k1, "b": self.b}
            (staging / _MANIFEST).write_text(json.dumps(manifest, indent=1))
            if self.index_dir.exists() and not self._published():
                shutil.rmtree(self.index_dir, ignore_errors=True)
            try:
                staging.rename(self.index_dir)
            except OSError:
                # Another process published the same index meanwhile; theirs is identical, so keep it.
                pass
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return bm25


def _checked(passage: Mapping[str, Any], position: int) -> dict[str, str]:
    """``passage`` reduced to string ``id``, ``title`` and ``text``; ValueError naming the position if it lacks any."""
    if not isinstance(passage, Mapping):
        raise ValueError(f"passage {position} is a {type(passage).__name__}, not a mapping with id, title and text")
    missing = [field for field in ("id", "title", "text") if field not in passage]
    if missing:
        raise ValueError(f"passage {position} has no {', '.join(missing)}")
    return {field: str(passage[field]) for field in ("id", "title", "text")}
