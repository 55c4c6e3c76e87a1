"""The BM25 retriever: deterministic results, id tie-breaks, the on-disk cache, no pickle, and recall on the world."""

from __future__ import annotations

import hashlib
import json
import math
import sys

import numpy as np
import pytest

from parlour.envs.search import retriever as retriever_module
from parlour.envs.search.retriever import Hit, Retriever, text_hash
from parlour.envs.search.world import World


@pytest.fixture(scope="module")
def world() -> World:
    """A world big enough that names and terms repeat across passages."""
    return World.generate(0, 2000)


@pytest.fixture(scope="module")
def built(world, tmp_path_factory) -> Retriever:
    """One retriever over the world, built into a fresh cache."""
    return Retriever(world.passages, tmp_path_factory.mktemp("cache"))


def test_results_are_deterministic(world, built, tmp_path):
    queries = [q.question for q in world.questions(40, seed=3)]
    rebuilt = Retriever(world.passages, tmp_path)
    assert not rebuilt.loaded_from_cache
    for query in queries:
        first = built.search(query, k=10)
        assert first == built.search(query, k=10) == rebuilt.search(query, k=10)
        assert [h.score for h in first] == sorted((h.score for h in first), reverse=True)
        assert len(first) == 10


def test_ties_are_broken_by_document_id(tmp_path):
    # Identical documents stored out of id order: only an explicit tie-break returns them sorted by id.
    passages = [{"id": f"d{i}", "title": "Same", "text": "amber lantern harbour"} for i in (7, 3, 9, 1, 5)]
    passages.append({"id": "d0", "title": "Other", "text": "amber lantern harbour amber lantern harbour quay"})
    passages.append({"id": "d2", "title": "Unrelated", "text": "granite orchard"})
    retriever = Retriever(passages, tmp_path)
    hits = retriever.search("lantern harbour", k=4)
    same = [h for h in hits if h.title == "Same"]
    assert [h.doc_id for h in same] == sorted(h.doc_id for h in same)
    assert len({h.score for h in same}) == 1
    # The cut at k falls inside the tie: the lowest ids of the tie make it in.
    assert [h.doc_id for h in retriever.search("amber", k=3) if h.title == "Same"] == ["d1", "d3"]
    assert [h.doc_id for h in retriever.search("amber lantern harbour", k=10)] == ["d0", "d1", "d3", "d5", "d7", "d9"]


def test_scores_follow_the_lucene_bm25_formula(tmp_path):
    texts = ["amber lantern lantern", "amber quay", "granite orchard quay quay quay", "lantern"]
    passages = [{"id": str(i), "title": "", "text": text} for i, text in enumerate(texts)]
    retriever = Retriever(passages, tmp_path, k1=1.2, b=0.7)
    docs = [t.split() for t in texts]
    average = sum(map(len, docs)) / len(docs)

    def bm25(query: list[str], doc: list[str]) -> float:
        total = 0.0
        for term in query:
            df = sum(term in d for d in docs)
            tf = doc.count(term)
            idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
            total += idf * tf / (tf + 1.2 * (1 - 0.7 + 0.7 * len(doc) / average))
        return total

    for query in (["lantern"], ["amber", "quay"], ["quay", "lantern", "orchard"]):
        hits = retriever.search(" ".join(query), k=4)
        expected = sorted(((bm25(query, d), str(i)) for i, d in enumerate(docs) if bm25(query, d) > 0), key=lambda pair: (-pair[0], pair[1]))
        assert [h.doc_id for h in hits] == [doc_id for _, doc_id in expected]
        assert [h.score for h in hits] == pytest.approx([score for score, _ in expected], rel=1e-5)


def test_only_matching_passages_are_returned(tmp_path):
    passages = [{"id": "a", "title": "A", "text": "amber lantern"}, {"id": "b", "title": "B", "text": "granite quay"}]
    retriever = Retriever(passages, tmp_path)
    assert [h.doc_id for h in retriever.search("lanterns", k=5)] == ["a"]
    assert retriever.search("the of and", k=5) == []
    assert retriever.search("zzzqqq", k=5) == []
    with pytest.raises(ValueError, match="k must be at least 1"):
        retriever.search("amber", k=0)


def test_cache_hit_loads_without_rebuilding(world, tmp_path, monkeypatch):
    first = Retriever(world.passages, tmp_path)
    assert not first.loaded_from_cache
    assert first.index_dir == tmp_path / "bm25" / first.hash
    files = {path: path.stat().st_mtime_ns for path in first.index_dir.iterdir()}

    def no_rebuild(self):
        raise AssertionError("the index was rebuilt although it is cached")

    monkeypatch.setattr(Retriever, "_build_and_save", no_rebuild)
    second = Retriever(world.passages, tmp_path)
    assert second.loaded_from_cache and second.index_dir == first.index_dir
    assert {path: path.stat().st_mtime_ns for path in second.index_dir.iterdir()} == files
    query = world.questions(1, hops=1, kinds=["bridge"], seed=0)[0].question
    assert second.search(query, k=5) == first.search(query, k=5)
    # Any change to the corpus is a different index.
    changed = [dict(p) for p in world.passages]
    changed[0]["text"] += " Amended."
    with pytest.raises(AssertionError, match="rebuilt"):
        Retriever(changed, tmp_path)


def test_incomplete_cache_is_rebuilt(world, tmp_path):
    first = Retriever(world.passages[:300], tmp_path)
    (first.index_dir / "parlour.json").unlink()
    second = Retriever(world.passages[:300], tmp_path)
    assert not second.loaded_from_cache
    assert (second.index_dir / "parlour.json").exists()
    assert Retriever(world.passages[:300], tmp_path).loaded_from_cache


def test_cache_location_comes_from_parlour_cache(world, tmp_path, monkeypatch):
    monkeypatch.setenv("PARLOUR_CACHE", str(tmp_path / "elsewhere"))
    retriever = Retriever(world.passages[:200])
    assert retriever.index_dir == tmp_path / "elsewhere" / "bm25" / retriever.hash
    assert retriever.index_dir.is_dir()


def test_cache_holds_no_pickle(built):
    files = list(built.index_dir.iterdir())
    assert files
    for path in files:
        assert path.suffix in {".npy", ".json"}, path
        if path.suffix == ".npy":
            # Raises if the array could only be read by unpickling.
            assert np.load(path, allow_pickle=False).dtype != object
        else:
            json.loads(path.read_text())


def test_gold_passage_of_one_hop_questions_is_in_top_five(world, built):
    asked = world.questions(150, hops=1, kinds=["bridge", "yesno"], seed=5)
    found = sum(q.gold[0][0] in {h.doc_id for h in built.search(q.question, k=5)} for q in asked)
    assert found / len(asked) >= 0.9


def test_get_and_text_hash(world, built):
    passage = world.passages[17]
    assert built.get(passage["id"]) == passage
    with pytest.raises(KeyError, match="no passage with id"):
        built.get("missing")
    assert text_hash(passage) == hashlib.sha256(passage["text"].encode()).hexdigest() == text_hash(passage["text"])
    assert text_hash(passage) != text_hash(world.passages[18])
    hit = built.search(passage["title"], k=1)[0]
    assert isinstance(hit, Hit)
    assert (hit.doc_id, hit.title, hit.text) == (passage["id"], passage["title"], passage["text"])


def test_malformed_passages_are_refused(tmp_path):
    with pytest.raises(ValueError, match="appears twice"):
        Retriever([{"id": "a", "title": "", "text": "x"}, {"id": "a", "title": "", "text": "y"}], tmp_path)
    with pytest.raises(ValueError, match="passage 1 has no text"):
        Retriever([{"id": "a", "title": "", "text": "x"}, {"id": "b", "title": ""}], tmp_path)


def test_missing_extra_names_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "bm25s", None)
    with pytest.raises(ImportError, match=r"pip install 'parlour\[search\]'"):
        retriever_module.Retriever([{"id": "a", "title": "", "text": "x"}], tmp_path)
