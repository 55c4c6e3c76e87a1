"""The generated knowledge base: determinism, passages, decoys, checked questions, and the JSONL loaders."""

from __future__ import annotations

import collections
import dataclasses
import json
import random
import re

import numpy as np
import pytest

from parlour.envs.search.corpus import CorpusFormatError, load_corpus, load_questions, write_jsonl
from parlour.envs.search.world import KINDS, WORLD_V1, WORLD_V1_SHA256, World


def mentions(text: str, phrase: str) -> bool:
    """``phrase`` as whole words in ``text``, case-insensitive: the tests' own check, independent of the module's."""
    return re.search(r"(?<!\w)" + re.escape(phrase.lower()) + r"(?!\w)", text.lower()) is not None


@pytest.fixture(scope="module")
def worlds() -> list[World]:
    """Twenty small worlds, one per seed."""
    return [World.generate(seed, 400) for seed in range(20)]


@pytest.fixture(scope="module")
def questions(worlds: list[World]) -> list[tuple[World, object]]:
    """Forty questions of every kind from each small world."""
    return [(world, q) for seed, world in enumerate(worlds) for q in world.questions(40, seed=seed)]


def test_generation_is_deterministic_by_seed():
    a, b, c = World.generate(7, 600), World.generate(7, 600), World.generate(8, 600)
    assert a.passages == b.passages
    assert a.entities == b.entities and a.decoys == b.decoys
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()
    assert a.questions(30, seed=1) == b.questions(30, seed=1)
    assert a.questions(30, seed=1) != a.questions(30, seed=2)


def test_generation_leaves_global_random_state_alone():
    np.random.seed(123)
    random.seed(123)
    expected = (np.random.random(), random.random())
    np.random.seed(123)
    random.seed(123)
    world = World.generate(3, 300)
    world.questions(20, seed=0)
    assert (np.random.random(), random.random()) == expected


def test_passages_have_ids_titles_and_50_to_80_words():
    world = World.generate(5, 3000)
    assert len(world.passages) == 3000
    ids = [p["id"] for p in world.passages]
    assert len(set(ids)) == 3000
    assert all(re.fullmatch(r"w5-\d{6}", i) for i in ids)
    assert {p["title"] for p in world.passages} == {e.name for e in world.entities.values()}
    lengths = [len(p["text"].split()) for p in world.passages]
    assert min(lengths) >= 50 and max(lengths) <= 80
    for passage in world.passages:
        assert mentions(passage["text"], passage["title"])


def test_entity_names_are_unique_and_decoys_nearly_match():
    world = World.generate(11, 2000)
    names = [e.name for e in world.entities.values()]
    assert len(set(names)) == len(names)
    titles = {p["title"] for p in world.passages}
    assert len(world.decoys) >= 0.05 * len(names)
    for decoy, original in world.decoys:
        a, b = world.name(decoy), world.name(original)
        assert world.entities[decoy].kind == world.entities[original].kind
        assert a in titles and b in titles
        assert len(a) == len(b)
        differences = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        assert len(differences) == 1
        # The first syllable (at least a consonant and a vowel of the distinctive word) is shared.
        word_start = a.rfind(" ", 0, differences[0]) + 1
        assert differences[0] - word_start >= 2


def test_questions_cover_every_kind_and_hop_count(questions):
    seen = collections.Counter((q.kind, q.hops) for _, q in questions)
    assert {kind for kind, _ in seen} == set(KINDS)
    assert {hops for kind, hops in seen if kind == "bridge"} == {1, 2, 3, 4}
    assert {hops for kind, hops in seen if kind == "count"} == {1, 2, 3}
    assert {q.answer for _, q in questions if q.kind == "yesno"} == {"yes", "no"}


def test_questions_have_one_answer_and_correct_hops(questions):
    for world, q in questions:
        world.verify(q)
        assert len(q.gold) == q.hops
        if q.kind == "comparison":
            assert q.hops == 2 and len(q.entities) == 2
            values = [int(next(iter(world.resolve(e, q.path))).replace(",", "")) for e in q.entities]
            assert values[0] != values[1]
            continue
        assert len(q.path) == q.hops
        ends = world.resolve(q.entities[0], q.path)
        assert len(ends) == 1
        end = next(iter(ends))
        if q.kind == "yesno":
            assert q.answer == ("yes" if q.candidate == end else "no")
        else:
            assert q.answer == world.name(end)
        # Walk the path by hand: every hop's gold passage names both ends of that hop, and no two hops share one.
        node = q.entities[0]
        for step, gold in zip(q.path, q.gold):
            (target,) = world.resolve(node, [step])
            for passage_id in gold:
                text = world.passage(passage_id)["text"]
                if step.startswith("#"):
                    assert mentions(text, world.name(node))
                else:
                    assert mentions(text, world.name(node)) and mentions(text, world.name(target))
            node = target
        flat = [p for hop in q.gold for p in hop]
        assert len(flat) == len(set(flat))


def test_answers_never_appear_in_questions(questions):
    for world, q in questions:
        if q.kind == "comparison":
            # The answer is one of the two options the question names.
            assert q.answer in {world.name(e) for e in q.entities}
        else:
            assert not mentions(q.question, q.answer), q


def test_no_single_passage_links_the_question_to_its_answer(worlds, questions):
    checked = 0
    texts = {id(world): [(p["title"] + " " + p["text"]).lower() for p in world.passages] for world in worlds}
    for world, q in questions:
        if q.kind not in ("bridge", "yesno") or q.hops < 2:
            continue
        end = world.name(next(iter(world.resolve(q.entities[0], q.path)))).lower()
        start = world.name(q.entities[0]).lower()
        for text in texts[id(world)]:
            # The substring test only skips the slower whole-word test where it cannot match.
            if start in text and end in text:
                assert not (mentions(text, start) and mentions(text, end)), (q, text)
        checked += 1
    assert checked >= 100


def test_verify_rejects_broken_questions():
    world = World.generate(2, 600)
    (bridge,) = world.questions(1, hops=3, kinds=["bridge"], seed=0)
    (count,) = world.questions(1, hops=1, kinds=["count"], seed=0)
    (comparison,) = world.questions(1, kinds=["comparison"], seed=0)
    wrong_end = next(e.name for e in world.entities.values() if e.name != bridge.answer)
    broken = [
        dataclasses.replace(bridge, answer=wrong_end),
        dataclasses.replace(bridge, question=f"{bridge.question} Is it {bridge.answer}?"),
        dataclasses.replace(bridge, gold=bridge.gold[::-1]),
        dataclasses.replace(bridge, hops=2),
        dataclasses.replace(bridge, path=("member_of",) * 3),
        dataclasses.replace(count, answer=str(int(count.answer) + 1)),
        dataclasses.replace(
            comparison,
            answer=world.name(comparison.entities[0])
            if comparison.answer != world.name(comparison.entities[0])
            else world.name(comparison.entities[1]),
        ),
    ]
    for question in broken:
        with pytest.raises(ValueError):
            world.verify(question)


def test_resolve_reports_ambiguity_and_dead_ends():
    world = World.generate(4, 600)
    country = next(e.id for e in world.entities.values() if e.kind == "country")
    assert len(world.resolve(country, ["~located_in"])) >= 1
    cities = world.resolve(country, ["~located_in"])
    assert all(world.entities[c].kind == "city" for c in cities)
    assert world.resolve(country, ["born_in"]) == frozenset()
    with pytest.raises(ValueError, match="unknown step"):
        world.resolve(country, ["lives_in"])


def test_world_v1_is_the_frozen_leaderboard_corpus():
    assert dict(WORLD_V1) == {"seed": 0, "n_passages": 8000}
    assert World.generate(**WORLD_V1).fingerprint() == WORLD_V1_SHA256
    with pytest.raises(TypeError):
        WORLD_V1["seed"] = 1  # type: ignore[index]


def test_corpus_round_trip(tmp_path):
    world = World.generate(1, 300)
    corpus_file, questions_file = tmp_path / "corpus.jsonl", tmp_path / "questions.jsonl"
    write_jsonl(corpus_file, world.passages)
    assert load_corpus(corpus_file) == world.passages
    asked = world.questions(10, seed=0)
    write_jsonl(questions_file, [q.to_dict() for q in asked])
    loaded = load_questions(questions_file)
    assert [(x["id"], x["question"], x["answers"]) for x in loaded] == [(q.id, q.question, [q.answer]) for q in asked]


def test_corpus_accepts_flashrag_shapes(tmp_path):
    corpus_file, questions_file = tmp_path / "wiki.jsonl", tmp_path / "nq.jsonl"
    corpus_file.write_text(json.dumps({"id": 0, "contents": '"Tavelon"\nTavelon is a city.'}) + "\n\n")
    questions_file.write_text(json.dumps({"question": "Where?", "golden_answers": ["Tavelon"]}) + "\n")
    assert load_corpus(corpus_file) == [{"id": "0", "title": "Tavelon", "text": "Tavelon is a city."}]
    assert load_questions(questions_file) == [{"id": "nq-1", "question": "Where?", "answers": ["Tavelon"]}]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"id": "a", "title": "A", "text": "x"}', '{"id": "b", "title": "B", "text": '], r":2: invalid JSON"),
        (['{"id": "a", "title": "A", "text": "x"}', "[1, 2]"], r":2: expected a JSON object, got list"),
        (['{"id": "a", "title": "A", "text": "x"}', '{"id": "b", "title": "B"}'], r":2: missing 'text'"),
        (['{"id": "a", "title": "A", "text": "x"}', "", '{"id": "a", "title": "B", "text": "y"}'], r":3: id 'a' already used on line 1"),
        (['{"id": ["a"], "title": "A", "text": "x"}'], r":1: 'id' must be a string or an integer"),
        (['{"id": "a", "title": "A", "text": 5}'], r":1: 'text' must be a string, got int"),
        ([""], r": no passages"),
    ],
)
def test_corpus_errors_name_file_and_line(tmp_path, lines, message):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CorpusFormatError, match=re.escape(str(path)) + message):
        load_corpus(path)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"answers": ["x"]}, r":2: missing 'question'"),
        ({"question": "Q?"}, r":2: missing 'answers'"),
        ({"question": "Q?", "answers": "x"}, r":2: 'answers' must be a non-empty list of strings"),
        ({"question": "Q?", "golden_answers": []}, r":2: 'golden_answers' must be a non-empty list of strings"),
    ],
)
def test_question_errors_name_file_and_line(tmp_path, record, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"question": "Fine?", "answers": ["yes"]}) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(CorpusFormatError, match=re.escape(str(path)) + message):
        load_questions(path)


def test_non_utf8_line_is_reported(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"id": "a", "title": "A", "text": "x"}\n{"id": "b", "title": "\xe9", "text": "y"}\n')
    with pytest.raises(CorpusFormatError, match=re.escape(str(path)) + r":2: not UTF-8"):
        load_corpus(path)
