"""Search environments' foundation: a generated, contamination-free knowledge base with verified questions
(``world``), loaders for a user's own corpus and questions (``corpus``), and an embedded BM25 retriever
(``retriever``, needs the ``search`` extra).
"""
