"""What the search games share: their corpora, loaded once per process, and the ``search`` and ``open`` tools.

Corpora. A game names its corpus with options (see :func:`corpus_spec`):

* ``"world"``: a generated :class:`~parlour.envs.search.world.World`;
  ``world_seed=0, world_size=8000`` is ``WORLD_V1``, the leaderboard's corpus,
  and any other seed or size a training world. Questions are drawn from it
  per episode, every one verified symbolically.
* ``"jsonl"``: the user's ``corpus_file`` (``{"id", "title", "text"}`` per
  line) and ``questions_file`` (``{"question", "answers"}``), the shape
  Search-R1 and FlashRAG use.

Games are constructed often (every episode of an evaluation builds one), so
:func:`load_corpus` keeps each corpus in a module-level cache keyed by its
spec, and each BM25 index in one keyed by the corpus fingerprint (the hash
over every passage that also names its index on disk). A game holds only its
:class:`CorpusSpec`; its loaded corpus is dropped when the game is pickled
(snapshots, clones) and found again in the cache.

Tools. ``search(query, k)`` returns the ``k`` best passages (BM25, ties by
id; ``k`` from 1 to ``max_k``), each with its id and title and its text cut
to :data:`SNIPPET_WORDS` words; ``open(doc_id)`` returns one whole passage.
Every call is logged as an entry of the episode's retrieval log (the tool,
its arguments, the ids it returned and the sha256 of their texts), which the
games put into their outcome details so that records keep what each agent
was shown. The log is the one state a tool call changes: it never changes a
tool's answer or the rules, and replay re-runs every call in order, so it is
rebuilt exactly.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.game import int_option
from parlour.envs.core.tools import Tool
from parlour.envs.search.corpus import load_corpus as read_corpus_file
from parlour.envs.search.corpus import load_questions
from parlour.envs.search.retriever import Hit, Retriever, corpus_hash
from parlour.envs.search.world import KIND_HOPS, KINDS, MAX_HOPS, WORLD_V1, World

CORPORA = ("world", "jsonl")
DEFAULT_K = 5
#: Upper bound of the ``max_k`` option (and so of any search's ``k``).
MAX_K_LIMIT = 50
#: Words of a passage a search result shows; ``open`` shows it whole.
SNIPPET_WORDS = 100
#: Longest query ``search`` accepts (characters).
MAX_QUERY_CHARS = 500


@dataclass(frozen=True)
class CorpusSpec:
    """Which corpus a game plays on: ``kind`` is ``"world"`` (with its seed and size) or ``"jsonl"`` (with two files)."""

    kind: str
    world_seed: int = WORLD_V1["seed"]
    world_size: int = WORLD_V1["n_passages"]
    corpus_file: str | None = None
    questions_file: str | None = None


def world_corpus_spec(world_seed: int, world_size: int) -> CorpusSpec:
    """The spec of a generated world from the ``world_seed`` and ``world_size`` options; ``ValueError`` for a bad value."""
    return CorpusSpec("world", int_option("world_seed", world_seed, 0), int_option("world_size", world_size, 60, 1_000_000))


def corpus_spec(corpus: str, world_seed: int, world_size: int, corpus_file: str | None, questions_file: str | None) -> CorpusSpec:
    """The validated spec for a game's corpus options; ``ValueError`` saying what to change otherwise."""
    if corpus not in CORPORA:
        raise ValueError(f"corpus must be one of {CORPORA}, got {corpus!r}")
    if corpus == "world":
        if corpus_file is not None or questions_file is not None:
            raise ValueError("corpus_file and questions_file are for corpus='jsonl'; the world corpus is generated")
        return world_corpus_spec(world_seed, world_size)
    if (world_seed, world_size) != (WORLD_V1["seed"], WORLD_V1["n_passages"]):
        raise ValueError("world_seed and world_size are for corpus='world'; a jsonl corpus comes from its files")
    files = []
    for name, value in (("corpus_file", corpus_file), ("questions_file", questions_file)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"corpus='jsonl' needs {name}, the path of a JSON Lines file")
        if not os.path.isfile(value):
            raise ValueError(f"{name} {value!r} is not a file")
        files.append(str(Path(value).resolve()))
    return CorpusSpec("jsonl", corpus_file=files[0], questions_file=files[1])


def hop_option(hops: int | Sequence[int] | None, kinds: Sequence[str] | None, corpus: str) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The validated ``(hops, kinds)`` of world questions (``None``: all); ``ValueError`` for a bad value or one that no kind has."""
    if corpus != "world":
        if hops is not None or kinds is not None:
            raise ValueError("hops and kinds choose world questions; a jsonl corpus brings its own questions")
        return (), ()
    wanted = tuple(range(1, MAX_HOPS + 1)) if hops is None else (hops,) if isinstance(hops, int) and not isinstance(hops, bool) else hops
    if not isinstance(wanted, (list, tuple)) or not wanted:
        raise ValueError(f"hops must be an int from 1 to {MAX_HOPS}, a non-empty list of them, or None, got {hops!r}")
    chosen_hops = tuple(sorted({int_option("hops", h, 1, MAX_HOPS) for h in wanted}))
    chosen_kinds = KINDS if kinds is None else kinds
    if not isinstance(chosen_kinds, (list, tuple)) or not chosen_kinds or any(k not in KINDS for k in chosen_kinds):
        raise ValueError(f"kinds must be a non-empty list of {list(KINDS)} or None, got {kinds!r}")
    chosen_kinds = tuple(k for k in KINDS if k in chosen_kinds)
    if not any(set(chosen_hops) & set(KIND_HOPS[kind]) for kind in chosen_kinds):
        offered = ", ".join(f"{kind} {list(KIND_HOPS[kind])}" for kind in chosen_kinds)
        raise ValueError(f"no question of kinds {list(chosen_kinds)} has {list(chosen_hops)} hops; hops per kind: {offered}")
    return chosen_hops, chosen_kinds


def max_k_option(max_k: Any) -> int:
    """The ``max_k`` option (the largest ``k`` a search may ask for), from 1 to :data:`MAX_K_LIMIT`; ``ValueError`` otherwise."""
    return int_option("max_k", max_k, 1, MAX_K_LIMIT)


def float_option(name: str, value: Any, low: float, high: float) -> float:
    """``value`` as a float if it is a number (not a bool) in [low, high]; ``ValueError`` naming the option otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ValueError(f"{name} must be a number from {low:g} to {high:g}, got {value!r}")
    return float(value)


class Corpus:
    """One loaded corpus: its passages behind a BM25 retriever, and its questions (a World's, or a file's)."""

    def __init__(self, spec: CorpusSpec, passages: list[dict[str, str]], world: World | None, questions: list[dict[str, Any]] | None) -> None:
        """Index ``passages`` (or find their index in the process cache); use :func:`load_corpus` rather than this."""
        self.spec = spec
        self.world = world
        self.questions = questions
        self.fingerprint = corpus_hash(passages)
        retriever = _RETRIEVERS.get(self.fingerprint)
        if retriever is None:
            retriever = _RETRIEVERS[self.fingerprint] = Retriever(passages)
        self.retriever = retriever
        self._passages = {passage["id"]: passage for passage in passages}

    def __len__(self) -> int:
        """How many passages the corpus holds."""
        return len(self._passages)

    @property
    def example_id(self) -> str:
        """The id of the first passage, to show what ids look like."""
        return next(iter(self._passages))

    def passage(self, doc_id: str) -> dict[str, str] | None:
        """The passage with id ``doc_id`` (do not mutate it), or ``None``."""
        return self._passages.get(doc_id)

    def search(self, query: str, k: int, exclude: frozenset[str] = frozenset()) -> list[Hit]:
        """The ``k`` best passages for ``query``, leaving out the ids in ``exclude``."""
        hits = self.retriever.search(query, k + len(exclude))
        return [hit for hit in hits if hit.doc_id not in exclude][:k]

    def draw_question(self, rng: np.random.Generator, hops: Sequence[int], kinds: Sequence[str]) -> dict[str, Any]:
        """A question drawn with ``rng``: ``{"id", "question", "answers", "kind", "hops", "gold"}``.

        From a world, a fresh verified question of the given hops and kinds
        (``gold``: the ids of the passages stating each hop); from a file, one
        of its questions uniformly (``kind``, ``hops`` and ``gold`` are ``None``).
        """
        if self.world is not None:
            question = self.world.questions(1, hops=hops, kinds=kinds, seed=int(rng.integers(1 << 62)))[0]
            return {
                "id": question.id,
                "question": question.question,
                "answers": [question.answer],
                "kind": question.kind,
                "hops": question.hops,
                "gold": [list(g) for g in question.gold],
            }
        assert self.questions is not None
        picked = self.questions[int(rng.integers(len(self.questions)))]
        return {"id": picked["id"], "question": picked["question"], "answers": list(picked["answers"]), "kind": None, "hops": None, "gold": None}


_CORPORA: dict[tuple, Corpus] = {}
_RETRIEVERS: dict[str, Retriever] = {}


def _file_key(path: str) -> tuple[str, int, int]:
    """A file's identity for the cache: its path, modification time and size (an edited file is read again)."""
    status = os.stat(path)
    return path, status.st_mtime_ns, status.st_size


def load_corpus(spec: CorpusSpec) -> Corpus:
    """The corpus ``spec`` names, from this process's cache or loaded (and indexed) now."""
    if spec.kind == "world":
        key: tuple = ("world", spec.world_seed, spec.world_size)
    else:
        assert spec.corpus_file is not None and spec.questions_file is not None
        key = ("jsonl", _file_key(spec.corpus_file), _file_key(spec.questions_file))
    corpus = _CORPORA.get(key)
    if corpus is None:
        if spec.kind == "world":
            world = World.generate(spec.world_seed, spec.world_size)
            corpus = Corpus(spec, world.passages, world, None)
        else:
            assert spec.corpus_file is not None and spec.questions_file is not None  # a jsonl spec has both (corpus_spec)
            corpus = Corpus(spec, read_corpus_file(spec.corpus_file), None, load_questions(spec.questions_file))
        _CORPORA[key] = corpus
    return corpus


class UsesCorpus:
    """Mixin for search games: ``self.corpus`` loads ``self.corpus_spec`` on first use; pickling leaves it out.

    A game with this mixin is cheap to construct (``parlour list`` builds every
    game) and cheap to snapshot: a copy finds the corpus in the process cache.
    """

    corpus_spec: CorpusSpec

    @property
    def corpus(self) -> Corpus:
        """The loaded corpus of this game."""
        corpus = self.__dict__.get("_corpus")
        if corpus is None:
            corpus = self.__dict__["_corpus"] = load_corpus(self.corpus_spec)
        return corpus

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_corpus", None)
        return state

    def retrieval_view(self, log: Sequence[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        """What a player's view shows of its retrieval log: ``retrieved`` (the passages as it was shown them, see
        :func:`retrieved_passages`) and ``calls`` (each entry as :func:`shown_call` gives it)."""
        return {
            # An empty log shows nothing, so it needs no corpus.
            "retrieved": retrieved_passages(self.corpus, log) if log else [],
            "calls": [shown_call(entry) for entry in log],
        }


# ------------------------------------------------------------------ tools


def search_tool(max_k: int) -> Tool:
    """The ``search(query, k)`` tool, ``k`` from 1 to ``max_k`` (default :data:`DEFAULT_K`)."""
    return Tool(
        "search",
        f"Search the corpus with BM25 (keyword matching). Returns the k best passages (default {min(DEFAULT_K, max_k)}, "
        f"at most {max_k}), each with its id, title and text.",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS, "description": "keywords, e.g. names"},
                "k": {"type": "integer", "minimum": 1, "maximum": max_k, "description": "how many passages to return"},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    )


OPEN_TOOL = Tool(
    "open",
    "Read one passage in full, by the id a search returned.",
    {
        "type": "object",
        "properties": {"doc_id": {"type": "string", "minLength": 1, "maxLength": 200, "description": "a passage id"}},
        "required": ["doc_id"],
        "additionalProperties": False,
    },
)


def retrieval_tools(max_k: int) -> list[Tool]:
    """The tools every searching player has, in the order the games offer them: ``search`` and ``open``."""
    return [search_tool(max_k), OPEN_TOOL]


def answer_tool(description: str) -> Tool:
    """The final ``answer(text)`` tool: calling it is the player's move."""
    return Tool(
        "answer",
        description,
        {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "the answer alone: a name, a number, yes or no"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        final=True,
    )


def texts_hash(passages: Iterable[Mapping[str, str]]) -> str:
    """sha256 (hex) of the passages' texts in order, each followed by a NUL: what a record keeps of what was shown."""
    digest = hashlib.sha256()
    for passage in passages:
        digest.update(passage["text"].encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def _snippet(text: str) -> str:
    """``text`` cut to :data:`SNIPPET_WORDS` words, with an ellipsis when cut."""
    words = text.split()
    return text if len(words) <= SNIPPET_WORDS else " ".join(words[:SNIPPET_WORDS]) + " ..."


def run_search(corpus: Corpus, arguments: Mapping[str, Any], exclude: frozenset[str] = frozenset()) -> tuple[str, dict[str, Any]]:
    """Answer a ``search`` call: the result text and the retrieval-log entry."""
    query = arguments["query"]
    k = arguments.get("k", DEFAULT_K)
    hits = corpus.search(query, k, exclude)
    entry = {
        "tool": "search",
        "query": query,
        "k": k,
        "ids": [hit.doc_id for hit in hits],
        "text_sha256": texts_hash({"text": hit.text} for hit in hits),
    }
    if not hits:
        return f"search {query!r}: no passage shares a word with the query; try other words (names work best).", entry
    lines = [f"search {query!r} (k={k}): {len(hits)} passage(s)"]
    for rank, hit in enumerate(hits, start=1):
        lines.append(f"[{rank}] {hit.doc_id} | {hit.title}\n{_snippet(hit.text)}")
    return "\n\n".join(lines), entry


def run_open(corpus: Corpus, arguments: Mapping[str, Any], exclude: frozenset[str] = frozenset()) -> tuple[str, dict[str, Any]]:
    """Answer an ``open`` call: the whole passage and the log entry; ``InvalidMove`` for an id the player cannot open."""
    doc_id = arguments["doc_id"].strip()
    passage = corpus.passage(doc_id)
    if passage is None or doc_id in exclude:
        raise InvalidMove(f"open: there is no passage with id {doc_id[:80]!r}; use an id a search returned (ids look like {corpus.example_id!r}).")
    entry = {"tool": "open", "doc_id": doc_id, "ids": [doc_id], "text_sha256": texts_hash([passage])}
    return f"{doc_id} | {passage['title']}\n{passage['text']}", entry


def run_tool(corpus: Corpus, name: str, arguments: Mapping[str, Any], exclude: frozenset[str] = frozenset()) -> tuple[str, dict[str, Any]]:
    """Answer a call of one of the :func:`retrieval_tools` (``name`` is ``"search"`` or ``"open"``), leaving out the
    ids in ``exclude``: the result text and the retrieval-log entry."""
    return (run_search if name == "search" else run_open)(corpus, arguments, exclude)


def shown_call(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A retrieval-log entry as a player's view shows it: all but the sha256 of the texts, which is for records."""
    return {key: value for key, value in entry.items() if key != "text_sha256"}


def retrieved_passages(corpus: Corpus, log: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Every passage the log's calls returned, once each, in the order first seen, as the player was shown it:
    ``{"id", "title", "text"}`` with the snippet a search showed, or the whole text once opened."""
    seen: dict[str, dict[str, str]] = {}
    for entry in log:
        for doc_id in entry["ids"]:
            passage = corpus.passage(doc_id)
            assert passage is not None
            text = passage["text"] if entry["tool"] == "open" else _snippet(passage["text"])
            if doc_id not in seen or entry["tool"] == "open":
                seen[doc_id] = {"id": doc_id, "title": passage["title"], "text": text}
    return list(seen.values())
