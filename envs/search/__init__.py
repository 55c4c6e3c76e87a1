"""Search environments' foundation: a generated, contamination-free knowledge base with verified questions
(``world``), loaders for a user's own corpus and questions (``corpus``), and an embedded BM25 retriever
(``retriever``; building an index needs the ``search`` extra).
"""

from parlour.envs.search.corpus import CorpusFormatError, load_corpus, load_questions, write_jsonl
from parlour.envs.search.retriever import Hit, Retriever, text_hash
from parlour.envs.search.world import WORLD_V1, WORLD_V1_SHA256, Question, World

__all__ = [
    "WORLD_V1",
    "WORLD_V1_SHA256",
    "CorpusFormatError",
    "Hit",
    "Question",
    "Retriever",
    "World",
    "load_corpus",
    "load_questions",
    "text_hash",
    "write_jsonl",
]
