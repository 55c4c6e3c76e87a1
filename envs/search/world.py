"""A procedurally generated, contamination-free knowledge base and the multi-hop questions it answers.

``World.generate(seed, n_passages)`` invents a small world (countries, cities,
people, organisations, books and films) whose names are built from syllables,
so no model has seen any of it in pre-training, and writes every fact down in
short encyclopaedia-style passages (50 to 80 words, several paraphrases per
relation, filler sentences that name nothing). Each entity has exactly one
passage, titled with its name; the passage states the facts that lead *out of*
that entity along a question path (a book's passage says who wrote it, a
person's passage where they were born). Consecutive hops of a path therefore
always sit in different passages.

Some entities are *decoys*: their name differs from another entity's by one
letter after a shared first syllable ("Tavelon" and "Tavilon"), so an agent
that matches names loosely picks up the wrong facts.

Relations (subject, relation, object), each functional in the direction a
question path follows it; ``~r`` follows ``r`` backwards::

    city located_in country       person born_in city
    city capital_of country       person member_of organisation
    person leader_of country      organisation founded_by person
    person author_of book         organisation headquartered_in city
    person director_of film       organisation part_of organisation
    book published_by organisation
    film produced_by organisation

Attributes (final hops, literal values): ``birth_year`` (person),
``population`` (city), ``independence_year`` (country), ``year_founded``
(organisation), ``year_published`` (book), ``year_released`` (film).

Question kinds, each checked symbolically against the facts by
:meth:`World.verify` before it is handed out:

* ``bridge``: follow a path of 1 to 4 hops from a named entity; the answer is
  the unique node at its end, its text is not in the question, and (from two
  hops on) no passage that names the start entity contains it.
* ``yesno``: a bridge path and a candidate value; the answer is ``yes`` when
  the path ends at the candidate. The same leak check applies to the true
  value.
* ``count``: how many members an organisation has (reached directly or by a
  bridge path); the evidence for the last hop is every member's passage.
* ``comparison``: which of two named entities was born, founded, published or
  released earlier, or has the larger population; two hops (one lookup each).
  The answer is necessarily one of the two names in the question, so instead
  of the answer-not-in-question check, the two values must differ.

Everything random comes from ``numpy.random.Generator`` objects seeded from
the world's seed; nothing touches global random state.
"""

from __future__ import annotations

import hashlib
import re
import types
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

WORLD_V1: Mapping[str, int] = types.MappingProxyType({"seed": 0, "n_passages": 8000})
"""The leaderboard's corpus: ``World.generate(**WORLD_V1)``. Frozen: results on it are only comparable while it is."""

WORLD_V1_SHA256 = "7d3bb1a8daa573aa99bab0e15f561ed6060e173311a385bd04b3933fa2798e3e"
"""``World.generate(**WORLD_V1).fingerprint()``, pinned so that a change to the generator, or to numpy's random
streams in a future release, cannot silently change the leaderboard's corpus."""

KINDS = ("bridge", "yesno", "count", "comparison")
MAX_HOPS = 4
KIND_HOPS: Mapping[str, tuple[int, ...]] = types.MappingProxyType(
    {"bridge": (1, 2, 3, 4), "yesno": (1, 2, 3, 4), "count": (1, 2, 3), "comparison": (2,)}
)
"""The hop counts each question kind comes in."""

ENTITY_KINDS = ("country", "city", "person", "organisation", "book", "film")

RELATIONS: Mapping[str, tuple[str, str]] = types.MappingProxyType(
    {
        "located_in": ("city", "country"),
        "capital_of": ("city", "country"),
        "leader_of": ("person", "country"),
        "born_in": ("person", "city"),
        "member_of": ("person", "organisation"),
        "founded_by": ("organisation", "person"),
        "headquartered_in": ("organisation", "city"),
        "part_of": ("organisation", "organisation"),
        "author_of": ("person", "book"),
        "published_by": ("book", "organisation"),
        "director_of": ("person", "film"),
        "produced_by": ("film", "organisation"),
    }
)
"""Relation name -> (subject kind, object kind)."""

ATTRIBUTES: Mapping[str, str] = types.MappingProxyType(
    {
        "birth_year": "person",
        "population": "city",
        "independence_year": "country",
        "year_founded": "organisation",
        "year_published": "book",
        "year_released": "film",
    }
)
"""Attribute name -> the kind of entity it describes."""

# The hops a question path may take out of each kind of entity: every one is
# functional (at most one target), which is what makes a path's end unique.
_RELATION_STEPS: Mapping[str, tuple[str, ...]] = {
    "country": ("~capital_of", "~leader_of"),
    "city": ("located_in",),
    "person": ("born_in", "member_of"),
    "organisation": ("founded_by", "headquartered_in", "part_of"),
    "book": ("~author_of", "published_by"),
    "film": ("~director_of", "produced_by"),
}
_ATTRIBUTE_OF: Mapping[str, str] = {kind: attribute for attribute, kind in ATTRIBUTES.items()}

# Share of each kind among the entities (one passage each); people take the rest.
_SHARES = {"country": 0.02, "city": 0.13, "organisation": 0.14, "book": 0.12, "film": 0.08}
_MEMBER_SHARE = 0.7
_BRANCH_SHARE = 0.35
_DECOY_SHARE = 0.08
_MIN_PASSAGES = 60
_WORDS = (50, 80)
_TRIES_PER_QUESTION = 50

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "gr", "kr", "st", "tr", "th", "sh", "ch", "vr")
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou")
_CODAS = ("", "", "n", "r", "l", "s", "m", "th", "nd", "sk")
_VOWEL_LETTERS = "aeiou"
_CONSONANT_LETTERS = "bdfgklmnprstvz"

_BOOK_NOUNS = (
    "Letters",
    "Orchard",
    "Tides",
    "Lantern",
    "Silence",
    "Harvest",
    "Winter",
    "Archive",
    "Mirror",
    "Voyage",
    "Embers",
    "Gardens",
    "Ledger",
    "Salt",
    "Ashes",
    "Bells",
    "Compass",
    "Shadows",
)
_FILM_NOUNS = ("Nights", "Road", "Harbour", "Summer", "Crossing", "Echoes", "Frontier", "Station", "Rain", "Horizon", "Wires", "Lights")
_ORGANISATION_KINDS = ("Institute", "Guild", "Society", "Company", "Academy", "Collective", "Union", "Foundation", "League", "Trust")
_ADJECTIVES = (
    "quiet",
    "bright",
    "careful",
    "gentle",
    "restless",
    "stern",
    "lively",
    "modest",
    "remarkable",
    "unusual",
    "sober",
    "generous",
    "patient",
    "bold",
    "elegant",
    "sombre",
    "playful",
    "austere",
)

# Fact sentences: {s} and {o} are the relation's subject and object, {v} an attribute's value.
_FACT_TEMPLATES: Mapping[str, tuple[str, ...]] = {
    "located_in": (
        "{s} is a city in {o}.",
        "{s} lies within the borders of {o}.",
        "Situated in {o}, {s} grew from a river crossing into a sizeable city.",
        "The city of {s} belongs to {o}.",
    ),
    "capital_of": ("The capital of {o} is {s}.", "{o} is governed from its capital, {s}.", "{s} has served as the capital of {o} for generations."),
    "leader_of": ("{o} is currently led by {s}.", "The head of state of {o} is {s}.", "{s} serves as the leader of {o}."),
    "born_in": ("{s} was born in {o}.", "{s} grew up in {o}, the city of their birth.", "The birthplace of {s} is {o}.", "{s} is a native of {o}."),
    "member_of": (
        "{s} is a member of {o}.",
        "{s} belongs to {o}.",
        "{s} joined {o} and has remained a member ever since.",
        "Among the members of {o} is {s}.",
    ),
    "founded_by": ("{s} was founded by {o}.", "{o} founded {s}.", "The founder of {s} was {o}.", "{s} owes its existence to its founder, {o}."),
    "headquartered_in": ("{s} has its headquarters in {o}.", "{s} is headquartered in {o}.", "The main offices of {s} are in {o}."),
    "author_of": ("{o} is a book written by {s}.", "{s} wrote {o}.", "{o} was written by {s}.", "The author of {o} is {s}."),
    "director_of": ("{o} is a film directed by {s}.", "{s} directed {o}.", "The director of {o} was {s}."),
    "part_of": ("{s} is a branch of {o}.", "{s} operates as part of {o}.", "{s} was set up as a division of {o}."),
    "published_by": ("{s} was published by {o}.", "{o} brought out {s}.", "The publisher of {s} is {o}."),
    "produced_by": ("{s} was produced by {o}.", "{o} produced {s}.", "Production of {s} was financed by {o}."),
    "birth_year": ("{s} was born in the year {v}.", "{s} came into the world in {v}.", "Records give {v} as the year of birth of {s}."),
    "population": ("{s} has a population of about {v}.", "Around {v} people live in {s}.", "The population of {s} stands at roughly {v}."),
    "independence_year": (
        "{s} declared its independence in {v}.",
        "{s} was established as a state in {v}.",
        "The founding of {s} as a nation dates to {v}.",
    ),
    "year_founded": ("{s} was founded in {v}.", "{s} was established in {v}.", "The origins of {s} go back to {v}, the year it was set up."),
    "year_published": ("{s} was first published in {v}.", "{s} appeared in print in {v}.", "The first edition of {s} came out in {v}."),
    "year_released": ("{s} was released in {v}.", "{s} premiered in {v}.", "{s} reached cinemas in {v}."),
}

# Filler sentences pad passages to length; they name no entity and hold no number, so they add no facts.
_FILLERS: Mapping[str, tuple[str, ...]] = {
    "country": (
        "It is a land of {adj} plains, dark forests and long river valleys.",
        "Its people speak several closely related dialects of a common tongue.",
        "Farming and fishing remain important across much of the countryside.",
        "The coastline is dotted with small harbours, reefs and old lighthouses.",
        "Its history is marked by long periods of {adj} peace and sudden unrest.",
        "Mountain passes connect it to its neighbours in the north and east.",
        "The national cuisine is known for its {adj} breads and slow stews.",
        "Its flag shows a simple pattern of coloured bands and a single star.",
        "Rail lines link most of its larger towns to the main ports.",
        "Scholars describe its political tradition as {adj} and cautious.",
    ),
    "city": (
        "Its old quarter is a maze of {adj} lanes and small courtyards.",
        "Visitors often remark on the {adj} light over the rooftops in the evening.",
        "The river that runs through it once carried most of the regional trade.",
        "Markets fill the central square on most mornings of the week.",
        "Its streets are lined with {adj} houses built from local stone.",
        "The city is known for its narrow bridges and quiet walled gardens.",
        "Local festivals draw crowds from the surrounding valleys each summer.",
        "Much of its wealth came from the workshops along the waterfront.",
        "A ring of hills shelters it from the worst of the winter winds.",
        "Residents take pride in a {adj} tradition of street music and theatre.",
    ),
    "person": (
        "They were known among colleagues for a {adj} and methodical manner.",
        "Friends described them as {adj}, curious and more than a little stubborn.",
        "Much of their early life was spent reading, walking and travelling.",
        "They kept detailed notebooks on almost everything they saw and heard.",
        "Later in life they gave frequent public lectures to large audiences.",
        "Their surviving letters reveal a {adj} sense of humour.",
        "They rarely spoke about their private life in interviews.",
        "Contemporaries remember them as a {adj} and persuasive speaker.",
        "They spent long periods working in remote villages far from home.",
        "Their influence on younger colleagues was considerable and lasting.",
    ),
    "organisation": (
        "It began as a small circle of enthusiasts and grew steadily.",
        "Its work focuses on {adj} research and on public education.",
        "The organisation publishes a regular bulletin for its supporters.",
        "Its meetings are known for their long and {adj} debates.",
        "Its yearly gathering draws visitors from far beyond its home town.",
        "It funds scholarships for young people from poor families.",
        "Critics have called its methods {adj} but undeniably effective.",
        "Its archives hold thousands of letters, maps and photographs.",
        "It is governed by an elected council that meets every season.",
        "Its emblem, a {adj} bird in flight, appears on all its publications.",
    ),
    "book": (
        "Critics praised its {adj} prose and careful structure.",
        "The story follows a single family across several generations.",
        "It has since been translated into many languages.",
        "Readers often single out its {adj} and unexpected ending.",
        "The book was a modest success when it first appeared.",
        "It is still read and discussed in schools across the region.",
        "Its central theme is the tension between duty and freedom.",
        "Several of its chapters were first circulated as pamphlets.",
        "The narrative moves between a crowded port and the open countryside.",
        "Some reviewers found its tone {adj}, others merely cold.",
    ),
    "film": (
        "The film was shot largely on location over a single season.",
        "Critics admired its {adj} photography and patient editing.",
        "Its score was written for a small string ensemble.",
        "The story centres on two siblings separated by a long war.",
        "It became a {adj} success at the box office.",
        "Audiences were divided over its slow and deliberate pacing.",
        "It has since been restored and screened at many festivals.",
        "The cast was made up mostly of unknown newcomers.",
        "Its final scene remains among the most discussed of its era.",
        "Reviewers called its central performance {adj} and unforgettable.",
    ),
}

# Question phrasing. {x} is the noun phrase for the node a hop starts from; {c} a yes/no candidate.
_NOUN_PHRASES: Mapping[str, tuple[str, ...]] = {
    "located_in": ("the country in which {x} lies", "the country where {x} is located"),
    "born_in": ("the birthplace of {x}", "the city where {x} was born"),
    "member_of": ("the organisation that {x} belongs to", "the organisation {x} is a member of"),
    "founded_by": ("the founder of {x}", "the person who founded {x}"),
    "headquartered_in": ("the city where {x} is headquartered", "the headquarters city of {x}"),
    "~author_of": ("the author of {x}", "the person who wrote {x}"),
    "~director_of": ("the director of {x}", "the person who directed {x}"),
    "~capital_of": ("the capital of {x}", "the capital city of {x}"),
    "~leader_of": ("the leader of {x}", "the head of state of {x}"),
    "part_of": ("the parent organisation of {x}", "the organisation that {x} is part of"),
    "published_by": ("the publisher of {x}", "the organisation that published {x}"),
    "produced_by": ("the producer of {x}", "the organisation that produced {x}"),
}
_QUESTIONS: Mapping[str, tuple[str, ...]] = {
    "located_in": ("In which country is {x} located?", "Which country is {x} in?"),
    "born_in": ("In which city was {x} born?", "What is the birthplace of {x}?"),
    "member_of": ("Which organisation is {x} a member of?", "What organisation does {x} belong to?"),
    "founded_by": ("Who founded {x}?", "Who was the founder of {x}?"),
    "headquartered_in": ("In which city is {x} headquartered?", "Where are the headquarters of {x}?"),
    "~author_of": ("Who wrote {x}?", "Who is the author of {x}?"),
    "~director_of": ("Who directed {x}?", "Who was the director of {x}?"),
    "~capital_of": ("What is the capital of {x}?", "Which city is the capital of {x}?"),
    "~leader_of": ("Who leads {x}?", "Who is the leader of {x}?"),
    "part_of": ("Which organisation is {x} part of?", "What is the parent organisation of {x}?"),
    "published_by": ("Who published {x}?", "Which organisation published {x}?"),
    "produced_by": ("Which organisation produced {x}?", "Who produced {x}?"),
    "birth_year": ("In what year was {x} born?", "When was {x} born?"),
    "population": ("What is the population of {x}?", "How many people live in {x}?"),
    "independence_year": ("In what year did {x} become independent?", "When was {x} established as a state?"),
    "year_founded": ("In what year was {x} founded?", "When was {x} established?"),
    "year_published": ("In what year was {x} first published?", "When did {x} first appear in print?"),
    "year_released": ("In what year was {x} released?", "When did {x} premiere?"),
}
_YES_NO: Mapping[str, str] = {
    "located_in": "Is {x} located in {c}?",
    "born_in": "Was {x} born in {c}?",
    "member_of": "Is {x} a member of {c}?",
    "founded_by": "Was {x} founded by {c}?",
    "headquartered_in": "Is {x} headquartered in {c}?",
    "~author_of": "Was {x} written by {c}?",
    "~director_of": "Was {x} directed by {c}?",
    "~capital_of": "Is {c} the capital of {x}?",
    "~leader_of": "Is {x} led by {c}?",
    "part_of": "Is {x} part of {c}?",
    "published_by": "Was {x} published by {c}?",
    "produced_by": "Was {x} produced by {c}?",
    "birth_year": "Was {x} born in {c}?",
    "population": "Does {x} have a population of about {c}?",
    "independence_year": "Did {x} become independent in {c}?",
    "year_founded": "Was {x} founded in {c}?",
    "year_published": "Was {x} first published in {c}?",
    "year_released": "Was {x} released in {c}?",
}
_COUNT_QUESTIONS = ("How many members does {x} have?", "How many people are members of {x}?", "How many members belong to {x}?")
# attribute -> (question templates over two names {a} and {b}, whether the larger value wins)
_COMPARISONS: Mapping[str, tuple[tuple[str, ...], bool]] = {
    "birth_year": (("Who was born earlier, {a} or {b}?", "Which of {a} and {b} is older?"), False),
    "year_founded": (("Which was founded earlier, {a} or {b}?", "Which is older, {a} or {b}?"), False),
    "independence_year": (("Which became independent earlier, {a} or {b}?",), False),
    "year_published": (("Which was published first, {a} or {b}?",), False),
    "year_released": (("Which film was released first, {a} or {b}?",), False),
    "population": (("Which city has the larger population, {a} or {b}?",), True),
}

TEMPLATES: Mapping[str, Any] = types.MappingProxyType(
    {
        "facts": _FACT_TEMPLATES,
        "noun_phrases": _NOUN_PHRASES,
        "questions": _QUESTIONS,
        "yes_no": _YES_NO,
        "count": _COUNT_QUESTIONS,
        "comparisons": _COMPARISONS,
    }
)
"""The language the world is written in: fact sentences (``{s}``, ``{o}``, ``{v}``), the noun phrases and
questions that name a path (``{x}`` the phrase a hop starts from, ``{c}`` a yes/no candidate), count questions,
and comparisons (attribute -> (templates over ``{a}`` and ``{b}``, whether the larger value wins)). It holds no
fact: agents that read passages and proposers that write questions use it as the grammar of the world's text."""

# bm25s's English stop words: a name equal to one would be invisible to the retriever.
_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with".split()
)
# Invented names must not collide with the English the passages and questions are written in.
_RESERVED = _STOPWORDS | frozenset(
    re.findall(
        r"[a-z]+",
        " ".join(
            [
                *(t for ts in _FACT_TEMPLATES.values() for t in ts),
                *(t for ts in _FILLERS.values() for t in ts),
                *(t for ts in _NOUN_PHRASES.values() for t in ts),
                *(t for ts in _QUESTIONS.values() for t in ts),
                *_YES_NO.values(),
                *_COUNT_QUESTIONS,
                *(t for ts, _ in _COMPARISONS.values() for t in ts),
                *_BOOK_NOUNS,
                *_FILM_NOUNS,
                *_ORGANISATION_KINDS,
                *_ADJECTIVES,
                "yes",
            ]
        ).lower(),
    )
)

_TOKEN = re.compile(r"\w+")


def _tokens(text: str) -> list[str]:
    """Lower-case word tokens, as the symbolic leak checks compare texts."""
    return _TOKEN.findall(text.lower())


def _mentions(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as whole words (case-insensitive)."""
    return re.search(r"(?<!\w)" + re.escape(phrase.lower()) + r"(?!\w)", text.lower()) is not None


@dataclass(frozen=True)
class Entity:
    """An invented entity: ``id`` such as ``"city:12"``, its ``kind`` (one of ``ENTITY_KINDS``) and its ``name``."""

    id: str
    kind: str
    name: str


@dataclass(frozen=True)
class Question:
    """A question over a :class:`World`, with everything needed to check it and to grade retrieval.

    ``path`` holds the hops followed from ``entities[0]`` (relations, ``~relation``
    for a relation followed backwards, an attribute, or ``#member_of`` for a
    count); a comparison applies its single attribute hop to both entities.
    ``gold`` holds, for each hop, the ids of the passages that state it.
    ``candidate`` is the node a yes/no question asks about.
    """

    id: str
    kind: str
    question: str
    answer: str
    hops: int
    path: tuple[str, ...]
    entities: tuple[str, ...]
    gold: tuple[tuple[str, ...], ...]
    candidate: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record in the shape of Search-R1/FlashRAG question files (``question``, ``answers``) plus
        this question's provenance."""
        return {
            "id": self.id,
            "question": self.question,
            "answers": [self.answer],
            "kind": self.kind,
            "hops": self.hops,
            "path": list(self.path),
            "entities": list(self.entities),
            "gold": [list(passages) for passages in self.gold],
            "candidate": self.candidate,
        }


class _Draws:
    """Pre-drawn random integers handed out one at a time: numpy's per-call overhead would dominate generation."""

    def __init__(self, rng: np.random.Generator, count: int) -> None:
        self._values = rng.integers(0, 2**31 - 1, size=count, dtype=np.int64).tolist()
        self._next = 0

    def below(self, bound: int) -> int:
        """A draw in ``[0, bound)``; the modulo bias is below 2**-20 for every bound used here."""
        value = self._values[self._next] % bound
        self._next += 1
        return value


class World:
    """A generated knowledge base: entities, the passages that state their facts, and the facts themselves.

    Build one with :meth:`World.generate`. ``passages`` is the corpus (dicts
    with ``id``, ``title``, ``text``) a retriever indexes; the facts behind it
    answer :meth:`resolve` and :meth:`verify`, and :meth:`questions` samples
    verified questions.
    """

    def __init__(
        self,
        seed: int,
        entities: Sequence[Entity],
        passages: Sequence[Mapping[str, str]],
        passage_facts: Sequence[Sequence[tuple[str, str, str]]],
        decoys: Sequence[tuple[str, str]],
    ) -> None:
        """Assemble a world from its parts; use :meth:`World.generate` rather than calling this directly.

        ``passage_facts[i]`` lists the (subject, relation, object) facts that
        ``passages[i]`` states; the knowledge base is exactly these facts.
        """
        self.seed = seed
        self.passages: list[dict[str, str]] = [dict(p) for p in passages]
        self.entities: dict[str, Entity] = {entity.id: entity for entity in entities}
        self.decoys: list[tuple[str, str]] = list(decoys)
        """(decoy id, id of the entity whose name it nearly copies)."""
        self._by_kind: dict[str, list[str]] = {kind: [] for kind in ENTITY_KINDS}
        for entity in entities:
            self._by_kind[entity.kind].append(entity.id)
        self._by_name: dict[str, list[str]] = {}
        for entity in entities:
            self._by_name.setdefault(entity.name.lower(), []).append(entity.id)
        self._forward: dict[tuple[str, str], list[str]] = {}
        self._inverse: dict[tuple[str, str], list[str]] = {}
        self._fact_passage: dict[tuple[str, str, str], str] = {}
        for passage, facts in zip(self.passages, passage_facts):
            for subject, relation, obj in facts:
                self._forward.setdefault((relation, subject), []).append(obj)
                if relation in RELATIONS:
                    self._inverse.setdefault((relation, obj), []).append(subject)
                self._fact_passage[(subject, relation, obj)] = passage["id"]
        self._passage_index = {passage["id"]: i for i, passage in enumerate(self.passages)}
        self._word_passages: dict[str, list[int]] | None = None

    @classmethod
    def generate(cls, seed: int, n_passages: int = 8000) -> World:
        """Invent a world of exactly ``n_passages`` passages (one per entity) from ``seed``; same seed, same world."""
        if n_passages < _MIN_PASSAGES:
            raise ValueError(f"n_passages must be at least {_MIN_PASSAGES}, got {n_passages}")
        rng = np.random.default_rng([seed, n_passages])
        counts = {kind: max(2, int(share * n_passages)) for kind, share in _SHARES.items()}
        counts["person"] = n_passages - sum(counts.values())
        used: set[str] = set()
        given_names = [word for word, _ in _invent_words(rng, 300, used, max_syllables=2)]
        words = _invent_words(rng, n_passages, used, max_syllables=3)
        # Per entity: its distinctive word (with the length of its first syllable) and a draw that picks the
        # rest of its name (a person's given name, an organisation's kind, a book's or film's noun).
        words_of: dict[str, list[tuple[str, int]]] = {}
        extras_of: dict[str, list[int]] = {}
        offset = 0
        for kind in ENTITY_KINDS:
            words_of[kind] = words[offset : offset + counts[kind]]
            extras_of[kind] = rng.integers(0, 2**31 - 1, size=counts[kind]).tolist()
            offset += counts[kind]

        # Decoys take the distinctive word of an earlier entity of their kind with one letter changed after the
        # first syllable, and the rest of its name unchanged; every other random property stays their own, so
        # their facts differ.
        decoy_pairs: list[tuple[str, str]] = []
        for kind in ENTITY_KINDS:
            kind_words, extras = words_of[kind], extras_of[kind]
            slots = rng.choice(np.arange(1, len(kind_words)), size=int(_DECOY_SHARE * len(kind_words)), replace=False)
            for slot in sorted(slots.tolist()):
                target = int(rng.integers(0, slot))
                mutated = _mutate(rng, *kind_words[target], used)
                if mutated is not None:
                    kind_words[slot] = (mutated, kind_words[target][1])
                    extras[slot] = extras[target]
                    decoy_pairs.append((f"{kind}:{slot}", f"{kind}:{target}"))

        entities = [
            Entity(f"{kind}:{i}", kind, _entity_name(kind, word, extra, given_names))
            for kind in ENTITY_KINDS
            for i, ((word, _), extra) in enumerate(zip(words_of[kind], extras_of[kind]))
        ]
        facts = _invent_facts(rng, counts)
        hosted: dict[str, list[tuple[str, str, str]]] = {entity.id: [] for entity in entities}
        for fact in facts:
            subject, relation, obj = fact
            # A fact lives with the entity a question path leaves from, so consecutive hops never share a passage.
            host = obj if relation in ("capital_of", "leader_of", "author_of", "director_of") else subject
            hosted[host].append(fact)

        order = rng.permutation(len(entities)).tolist()
        draws = _Draws(rng, len(entities) * 32)
        width = max(6, len(str(len(entities) - 1)))
        name_of = {entity.id: entity.name for entity in entities}
        passages, passage_facts = [], []
        for number, position in enumerate(order):
            entity = entities[position]
            text = _write_passage(entity, hosted[entity.id], name_of, draws)
            passages.append({"id": f"w{seed}-{number:0{width}d}", "title": entity.name, "text": text})
            passage_facts.append(hosted[entity.id])
        return cls(seed, entities, passages, passage_facts, decoy_pairs)

    def fingerprint(self) -> str:
        """sha256 over every passage's id, title and text: two worlds with the same fingerprint are the same corpus."""
        digest = hashlib.sha256()
        for passage in self.passages:
            for field in ("id", "title", "text"):
                digest.update(passage[field].encode())
                digest.update(b"\0")
        return digest.hexdigest()

    def named(self, name: str) -> list[str]:
        """Ids of the entities called ``name`` (case-insensitive): one for a unique name, none for an unknown one."""
        return list(self._by_name.get(name.strip().lower(), ()))

    def trace(self, start: str, path: Sequence[str]) -> tuple[list[str], list[tuple[str, ...]]]:
        """The nodes visited from entity ``start`` along ``path`` and, per hop, the ids of the passages stating it.

        Raises ValueError unless every hop reaches exactly one node (KeyError for an unknown start).
        """
        if start not in self.entities:
            raise KeyError(f"unknown entity {start!r}")
        return self._trace(start, path)

    def name(self, node: str) -> str:
        """The text of a node: an entity's name, or a literal value as it is."""
        entity = self.entities.get(node)
        return entity.name if entity is not None else node

    def resolve(self, start: str, path: Sequence[str]) -> frozenset[str]:
        """Every node reached from entity ``start`` by following ``path`` in the facts: entity ids or literal values.

        A step is a relation (subject to object), ``~relation`` (object to
        subject), an attribute (its value), or ``#relation`` (how many subjects
        have that relation to the node, as a string). An empty set means the
        path leads nowhere; more than one element means it is ambiguous.
        """
        if start not in self.entities:
            raise KeyError(f"unknown entity {start!r}")
        nodes = {start}
        for step in path:
            reached: set[str] = set()
            for node in nodes:
                reached.update(self._step(node, step))
            nodes = reached
        return frozenset(nodes)

    def _step(self, node: str, step: str) -> Sequence[str]:
        """Nodes one step from ``node``."""
        if step.startswith("#"):
            _check_relation(step[1:], step)
            return (str(len(self._inverse.get((step[1:], node), ()))),)
        if step.startswith("~"):
            _check_relation(step[1:], step)
            return self._inverse.get((step[1:], node), ())
        if step not in RELATIONS and step not in ATTRIBUTES:
            raise ValueError(f"unknown step {step!r}: expected a relation, ~relation, #relation or an attribute")
        return self._forward.get((step, node), ())

    def _hop_passages(self, node: str, step: str, target: str) -> tuple[str, ...]:
        """The passages stating the fact that takes ``node`` to ``target`` by ``step``."""
        if step.startswith("#"):
            members = self._inverse.get((step[1:], node), ())
            return tuple(sorted(self._fact_passage[(member, step[1:], node)] for member in members))
        if step.startswith("~"):
            return (self._fact_passage[(target, step[1:], node)],)
        return (self._fact_passage[(node, step, target)],)

    def _trace(self, start: str, path: Sequence[str]) -> tuple[list[str], list[tuple[str, ...]]]:
        """The nodes visited along ``path`` and the passages of each hop; ValueError unless every hop is unique."""
        nodes, gold = [start], []
        for step in path:
            reached = self._step(nodes[-1], step)
            if len(reached) != 1:
                raise ValueError(f"hop {step!r} from {nodes[-1]!r} reaches {len(reached)} nodes, not exactly one")
            gold.append(self._hop_passages(nodes[-1], step, reached[0]))
            nodes.append(reached[0])
        return nodes, gold

    def passage(self, passage_id: str) -> dict[str, str]:
        """The passage with this id."""
        return self.passages[self._passage_index[passage_id]]

    def passages_naming(self, phrase: str) -> list[str]:
        """Ids of the passages whose title or text contains every word of ``phrase``, in corpus order."""
        if self._word_passages is None:
            index: dict[str, list[int]] = {}
            for i, passage in enumerate(self.passages):
                for word in set(_tokens(passage["title"] + " " + passage["text"])):
                    index.setdefault(word, []).append(i)
            self._word_passages = index
        postings = sorted((self._word_passages.get(word, []) for word in set(_tokens(phrase))), key=len)
        if not postings:
            return []
        common = set(postings[0])
        for posting in postings[1:]:
            common.intersection_update(posting)
        return [self.passages[i]["id"] for i in sorted(common)]

    def verify(self, question: Question) -> None:
        """Check ``question`` symbolically against the facts; raise ValueError saying what is wrong.

        Every hop must reach exactly one node and be stated by the passages in
        ``gold``; the hops' passages must all differ; the recorded answer must be
        the one the facts give. Bridge, yes/no and count answers must not appear
        in the question, and from two hops on no passage naming the start entity
        may contain the true end of the path (a single-passage shortcut).
        """
        if question.kind not in KINDS:
            raise ValueError(f"unknown question kind {question.kind!r}")
        for entity_id in question.entities:
            if entity_id not in self.entities:
                raise ValueError(f"unknown entity {entity_id!r}")
            if len(self._by_name[self.entities[entity_id].name.lower()]) != 1:
                raise ValueError(f"the name of {entity_id!r} is shared by another entity")
            if not _mentions(question.question, self.entities[entity_id].name):
                raise ValueError(f"the question does not name {entity_id!r}")
        if question.kind == "comparison":
            self._verify_comparison(question)
            return
        nodes, gold = self._trace(question.entities[0], question.path)
        if question.hops != len(question.path) or tuple(gold) != question.gold:
            raise ValueError(f"hops or gold passages disagree with the facts: expected {gold}, got {question.gold}")
        hop_passages = [passage for hop in gold for passage in hop]
        if len(set(hop_passages)) != len(hop_passages):
            raise ValueError("two hops are stated in the same passage")
        end = self.name(nodes[-1])
        if question.kind == "bridge":
            expected = end
        elif question.kind == "count":
            if question.path[-1] != "#member_of" or int(end) < 1:
                raise ValueError("a count question counts the members of an organisation that has some")
            expected = end
        else:
            if question.candidate is None:
                raise ValueError("a yes/no question needs a candidate")
            expected = "yes" if question.candidate == nodes[-1] else "no"
        if question.answer != expected:
            raise ValueError(f"the facts give {expected!r}, the question says {question.answer!r}")
        if _mentions(question.question, question.answer):
            raise ValueError(f"the answer {question.answer!r} appears in the question")
        if question.kind != "count" and question.hops >= 2:
            start_name = self.entities[question.entities[0]].name
            leaks = [pid for pid in self.passages_naming(start_name) if _mentions(self._passage_text(pid), end)]
            if leaks:
                raise ValueError(f"passages {leaks} name {start_name!r} and contain the answer {end!r}")

    def _passage_text(self, passage_id: str) -> str:
        """Title and text of a passage, as one string to search."""
        passage = self.passage(passage_id)
        return passage["title"] + "\n" + passage["text"]

    def _verify_comparison(self, question: Question) -> None:
        """The comparison-specific part of :meth:`verify`."""
        if len(question.entities) != 2 or len(question.path) != 1 or question.path[0] not in _COMPARISONS:
            raise ValueError("a comparison compares one attribute of two entities")
        attribute = question.path[0]
        (a, value_a), (b, value_b) = [(e, self._trace(e, question.path)) for e in question.entities]
        numbers = [int(value[0][-1].replace(",", "")) for value in (value_a, value_b)]
        if numbers[0] == numbers[1]:
            raise ValueError("the two values are equal, so neither answer is right")
        larger_wins = _COMPARISONS[attribute][1]
        winner = a if (numbers[0] > numbers[1]) == larger_wins else b
        if question.answer != self.entities[winner].name:
            raise ValueError(f"the facts give {self.entities[winner].name!r}, the question says {question.answer!r}")
        if question.hops != 2 or question.gold != (value_a[1][0], value_b[1][0]):
            raise ValueError("a comparison has two hops, one passage for each entity's value")

    def questions(
        self,
        n: int,
        hops: int | Iterable[int] = (1, 2, 3, 4),
        kinds: Iterable[str] = KINDS,
        seed: int = 0,
    ) -> list[Question]:
        """``n`` distinct verified questions with a hop count in ``hops`` and a kind in ``kinds``; same seed, same list.

        Bridge and yes/no questions take 1 to 4 hops, count questions 1 to 3
        (up to two hops to reach the organisation, then its members), and
        comparisons exactly 2. Raises ValueError when no kind fits the hops, and
        RuntimeError if the world is too small to supply ``n`` distinct ones.
        """
        wanted_hops = {hops} if isinstance(hops, int) else set(hops)
        allowed = {kind: sorted(wanted_hops.intersection(KIND_HOPS[kind])) for kind in KINDS}
        requested = set(kinds)
        unknown = requested - set(KINDS)
        if unknown:
            raise ValueError(f"unknown question kinds {sorted(unknown)}; expected some of {KINDS}")
        kinds = [kind for kind in KINDS if kind in requested and allowed[kind]]
        if not kinds:
            raise ValueError(f"no question kind has {sorted(wanted_hops)} hops")
        hop_counts = sorted({h for kind in kinds for h in allowed[kind]})
        rng = np.random.default_rng([self.seed, len(self.passages), seed])
        found: list[Question] = []
        seen: set[str] = set()
        attempts = 0
        while len(found) < n:
            # Hop count first, then a kind that has it: the mix then follows the request, not which kinds
            # happen to pass verification most often (a failed draw is retried with the same kind and hops).
            n_hops = hop_counts[int(rng.integers(len(hop_counts)))]
            fitting = [kind for kind in kinds if n_hops in allowed[kind]]
            kind = fitting[int(rng.integers(len(fitting)))]
            sample = getattr(self, f"_sample_{kind}")
            for _ in range(_TRIES_PER_QUESTION):
                attempts += 1
                question = sample(rng, n_hops, f"w{self.seed}-q{seed}-{len(found):05d}")
                if question is None or question.question in seen:
                    continue
                try:
                    self.verify(question)
                except ValueError:
                    continue
                seen.add(question.question)
                found.append(question)
                break
            if attempts > _TRIES_PER_QUESTION * (n + 20):
                raise RuntimeError(f"found only {len(found)} of {n} questions with kinds {kinds} and hops {hop_counts}; generate a larger world")
        return found

    def _random_entity(self, rng: np.random.Generator, kind: str | None = None) -> str:
        """A uniformly drawn entity id, of ``kind`` when given."""
        if kind is None:
            kind = ENTITY_KINDS[int(rng.integers(len(ENTITY_KINDS)))]
        ids = self._by_kind[kind]
        return ids[int(rng.integers(len(ids)))]

    def _walk(self, rng: np.random.Generator, start: str, n_hops: int, end_on_attribute: bool | None) -> list[str] | None:
        """A random path of ``n_hops`` unique hops from ``start`` that never revisits a node, or None.

        The last hop is an attribute when ``end_on_attribute`` is True, a relation
        when False, either when None; earlier hops are always relations.
        """
        path, node, visited = [], start, {start}
        for hop in range(n_hops):
            kind = self.entities[node].kind
            options = list(_RELATION_STEPS[kind])
            if hop == n_hops - 1:
                if end_on_attribute:
                    options = [_ATTRIBUTE_OF[kind]]
                elif end_on_attribute is None:
                    options.append(_ATTRIBUTE_OF[kind])
            options = [step for step in options if len(self._step(node, step)) == 1]
            if not options:
                return None
            step = options[int(rng.integers(len(options)))]
            node = self._step(node, step)[0]
            if node in visited:
                return None
            visited.add(node)
            path.append(step)
        return path

    def _phrase(self, rng: np.random.Generator, start: str, path: Sequence[str]) -> str:
        """A noun phrase for the node reached from ``start`` along ``path`` (all relation hops)."""
        entity = self.entities[start]
        phrase = f"the film {entity.name}" if entity.kind == "film" else entity.name
        for step in path:
            templates = _NOUN_PHRASES[step]
            phrase = templates[int(rng.integers(len(templates)))].format(x=phrase)
        return phrase

    def _sample_bridge(self, rng: np.random.Generator, n_hops: int, question_id: str) -> Question | None:
        """A candidate bridge question (unverified), or None when the random walk fails."""
        start = self._random_entity(rng)
        path = self._walk(rng, start, n_hops, None)
        if path is None:
            return None
        nodes, gold = self._trace(start, path)
        templates = _QUESTIONS[path[-1]]
        text = templates[int(rng.integers(len(templates)))].format(x=self._phrase(rng, start, path[:-1]))
        return Question(question_id, "bridge", _capitalise(text), self.name(nodes[-1]), n_hops, tuple(path), (start,), tuple(gold))

    def _sample_yesno(self, rng: np.random.Generator, n_hops: int, question_id: str) -> Question | None:
        """A candidate yes/no question (unverified); about half are ``no``, many of those naming a decoy."""
        start = self._random_entity(rng)
        path = self._walk(rng, start, n_hops, None)
        if path is None:
            return None
        nodes, gold = self._trace(start, path)
        truth = nodes[-1]
        candidate = truth if rng.random() < 0.5 else self._wrong_candidate(rng, truth)
        if candidate is None:
            return None
        text = _YES_NO[path[-1]].format(x=self._phrase(rng, start, path[:-1]), c=self.name(candidate))
        return Question(
            question_id, "yesno", _capitalise(text), "yes" if candidate == truth else "no", n_hops, tuple(path), (start,), tuple(gold), candidate
        )

    def _wrong_candidate(self, rng: np.random.Generator, truth: str) -> str | None:
        """A node of the same sort as ``truth`` that differs from it: a decoy of it when one exists, half the time."""
        if truth in self.entities:
            lookalikes = [d for d, original in self.decoys if original == truth]
            lookalikes += [original for d, original in self.decoys if d == truth]
            if lookalikes and rng.random() < 0.5:
                return lookalikes[int(rng.integers(len(lookalikes)))]
            other = self._random_entity(rng, self.entities[truth].kind)
            return other if other != truth else None
        value = int(truth.replace(",", ""))
        if "," in truth:
            return f"{value + 1000 * int(rng.integers(1, 200)):,}"
        return str(value + int(rng.choice([-1, 1])) * int(rng.integers(1, 16)))

    def _sample_count(self, rng: np.random.Generator, n_hops: int, question_id: str) -> Question | None:
        """A candidate count question (unverified): members of an organisation, named or reached by a bridge."""
        start = self._random_entity(rng, "organisation" if n_hops == 1 else None)
        prefix = self._walk(rng, start, n_hops - 1, False) if n_hops > 1 else []
        if prefix is None:
            return None
        nodes, _ = self._trace(start, prefix)
        if self.entities[nodes[-1]].kind != "organisation":
            return None
        path = (*prefix, "#member_of")
        nodes, gold = self._trace(start, path)
        template = _COUNT_QUESTIONS[int(rng.integers(len(_COUNT_QUESTIONS)))]
        text = template.format(x=self._phrase(rng, start, prefix))
        return Question(question_id, "count", _capitalise(text), nodes[-1], n_hops, path, (start,), tuple(gold))

    def _sample_comparison(self, rng: np.random.Generator, n_hops: int, question_id: str) -> Question | None:
        """A candidate comparison (unverified) of one attribute of two entities of the same kind."""
        attribute = list(_COMPARISONS)[int(rng.integers(len(_COMPARISONS)))]
        kind = ATTRIBUTES[attribute]
        a, b = self._random_entity(rng, kind), self._random_entity(rng, kind)
        if a == b:
            return None
        values = []
        for entity in (a, b):
            nodes, gold = self._trace(entity, (attribute,))
            values.append((int(nodes[-1].replace(",", "")), gold[0]))
        templates, larger_wins = _COMPARISONS[attribute]
        text = templates[int(rng.integers(len(templates)))].format(a=self.name(a), b=self.name(b))
        winner = a if (values[0][0] > values[1][0]) == larger_wins else b
        return Question(question_id, "comparison", _capitalise(text), self.name(winner), 2, (attribute,), (a, b), (values[0][1], values[1][1]))


def _capitalise(text: str) -> str:
    """``text`` with its first letter upper-cased and the rest untouched (names keep their case)."""
    return text[:1].upper() + text[1:]


def _entity_name(kind: str, word: str, extra: int, given_names: Sequence[str]) -> str:
    """The full name of an entity of ``kind`` built on its distinctive ``word``; ``extra`` picks the rest."""
    if kind == "person":
        return f"{given_names[extra % len(given_names)]} {word}"
    if kind == "organisation":
        return f"{word} {_ORGANISATION_KINDS[extra % len(_ORGANISATION_KINDS)]}"
    if kind == "book":
        return f"The {_BOOK_NOUNS[extra % len(_BOOK_NOUNS)]} of {word}"
    if kind == "film":
        return f"{word} {_FILM_NOUNS[extra % len(_FILM_NOUNS)]}"
    return word


def _check_relation(relation: str, step: str) -> None:
    """ValueError unless ``relation`` (from ``step``) is a known relation."""
    if relation not in RELATIONS:
        raise ValueError(f"unknown relation in step {step!r}; relations are {sorted(RELATIONS)}")


def _invent_words(rng: np.random.Generator, count: int, used: set[str], max_syllables: int) -> list[tuple[str, int]]:
    """``count`` new capitalised words of 2 to ``max_syllables`` syllables with the length of their first syllable.

    Inner syllables are consonant-vowel and only the last may close on a
    consonant, so every word can be read aloud. Words already in ``used`` or in
    the reserved English vocabulary are skipped; the new ones are added to ``used``.
    """
    found: list[tuple[str, int]] = []
    while len(found) < count:
        batch = 2 * (count - len(found)) + 16
        lengths = rng.integers(2, max_syllables + 1, size=batch).tolist()
        onsets = rng.integers(0, len(_ONSETS), size=(batch, max_syllables)).tolist()
        vowels = rng.integers(0, len(_VOWELS), size=(batch, max_syllables)).tolist()
        codas = rng.integers(0, len(_CODAS), size=batch).tolist()
        for length, onset_row, vowel_row, coda in zip(lengths, onsets, vowels, codas):
            syllables = [_ONSETS[onset_row[i]] + _VOWELS[vowel_row[i]] for i in range(length)]
            word = "".join(syllables) + _CODAS[coda]
            if word in used or word in _RESERVED:
                continue
            used.add(word)
            found.append((word.capitalize(), len(syllables[0])))
            if len(found) == count:
                break
    return found


def _mutate(rng: np.random.Generator, word: str, first_syllable: int, used: set[str]) -> str | None:
    """``word`` with one letter after its first syllable replaced by another of the same sort (never doubling a
    letter), or None if every try collides with a word already in use."""
    lower = word.lower()
    for _ in range(8):
        position = int(rng.integers(first_syllable, len(lower)))
        letters = _VOWEL_LETTERS if lower[position] in _VOWEL_LETTERS else _CONSONANT_LETTERS
        replacement = letters[int(rng.integers(len(letters)))]
        candidate = lower[:position] + replacement + lower[position + 1 :]
        doubled = replacement in (lower[position - 1], lower[position + 1 : position + 2])
        if candidate != lower and not doubled and candidate not in used and candidate not in _RESERVED:
            used.add(candidate)
            return candidate.capitalize()
    return None


def _invent_facts(rng: np.random.Generator, counts: Mapping[str, int]) -> list[tuple[str, str, str]]:
    """Every (subject, relation, object) fact of a world with these entity counts, attributes included."""
    n_country, n_city, n_person = counts["country"], counts["city"], counts["person"]
    n_org, n_book, n_film = counts["organisation"], counts["book"], counts["film"]
    facts: list[tuple[str, str, str]] = []

    # Every country gets at least one city, so every country has a capital inside it.
    city_country = rng.integers(0, n_country, size=n_city)
    city_country[:n_country] = np.arange(n_country)
    population = rng.integers(5, 3000, size=n_city) * 1000
    for city, (country, people) in enumerate(zip(city_country.tolist(), population.tolist())):
        facts.append((f"city:{city}", "located_in", f"country:{country}"))
        facts.append((f"city:{city}", "population", f"{people:,}"))
    cities_of: list[list[int]] = [[] for _ in range(n_country)]
    for city, country in enumerate(city_country.tolist()):
        cities_of[country].append(city)
    capital_draws = rng.integers(0, 2**31 - 1, size=n_country).tolist()
    leaders = rng.choice(n_person, size=n_country, replace=False).tolist()
    independence = rng.integers(1400, 1961, size=n_country).tolist()
    for country in range(n_country):
        capital = cities_of[country][capital_draws[country] % len(cities_of[country])]
        facts.append((f"city:{capital}", "capital_of", f"country:{country}"))
        facts.append((f"person:{leaders[country]}", "leader_of", f"country:{country}"))
        facts.append((f"country:{country}", "independence_year", str(independence[country])))

    birth_city = rng.integers(0, n_city, size=n_person).tolist()
    birth_year = rng.integers(1820, 1991, size=n_person)
    is_member = (rng.random(n_person) < _MEMBER_SHARE).tolist()
    membership = rng.integers(0, n_org, size=n_person).tolist()
    for person in range(n_person):
        facts.append((f"person:{person}", "born_in", f"city:{birth_city[person]}"))
        facts.append((f"person:{person}", "birth_year", str(int(birth_year[person]))))
        if is_member[person]:
            facts.append((f"person:{person}", "member_of", f"organisation:{membership[person]}"))

    # Dates follow the people behind them: organisations are founded, books written and films made in adulthood.
    # A branch's parent comes earlier in the numbering, so the part_of chains never loop.
    is_branch = (rng.random(n_org) < _BRANCH_SHARE).tolist()
    parent_draws = rng.integers(0, 2**31 - 1, size=n_org).tolist()
    for org in range(1, n_org):
        if is_branch[org]:
            facts.append((f"organisation:{org}", "part_of", f"organisation:{parent_draws[org] % org}"))
    founders = rng.integers(0, n_person, size=n_org)
    founded = (birth_year[founders] + rng.integers(20, 61, size=n_org)).tolist()
    headquarters = rng.integers(0, n_city, size=n_org).tolist()
    for org, (founder, year, city) in enumerate(zip(founders.tolist(), founded, headquarters)):
        facts.append((f"organisation:{org}", "founded_by", f"person:{founder}"))
        facts.append((f"organisation:{org}", "headquartered_in", f"city:{city}"))
        facts.append((f"organisation:{org}", "year_founded", str(year)))
    authors = rng.integers(0, n_person, size=n_book)
    published = (birth_year[authors] + rng.integers(18, 71, size=n_book)).tolist()
    publishers = rng.integers(0, n_org, size=n_book).tolist()
    for book, (author, year, publisher) in enumerate(zip(authors.tolist(), published, publishers)):
        facts.append((f"person:{author}", "author_of", f"book:{book}"))
        facts.append((f"book:{book}", "year_published", str(year)))
        facts.append((f"book:{book}", "published_by", f"organisation:{publisher}"))
    directors = rng.integers(0, n_person, size=n_film)
    released = np.maximum(birth_year[directors] + rng.integers(25, 71, size=n_film), 1900).tolist()
    producers = rng.integers(0, n_org, size=n_film).tolist()
    for film, (director, year, producer) in enumerate(zip(directors.tolist(), released, producers)):
        facts.append((f"person:{director}", "director_of", f"film:{film}"))
        facts.append((f"film:{film}", "year_released", str(year)))
        facts.append((f"film:{film}", "produced_by", f"organisation:{producer}"))
    return facts


def _write_passage(entity: Entity, facts: Sequence[tuple[str, str, str]], name_of: Mapping[str, str], draws: _Draws) -> str:
    """A 50-to-80-word passage about ``entity`` stating exactly ``facts``, padded with filler sentences."""
    sentences = []
    for subject, relation, obj in facts:
        templates = _FACT_TEMPLATES[relation]
        template = templates[draws.below(len(templates))]
        if relation in ATTRIBUTES:
            sentences.append(template.format(s=name_of[subject], v=obj))
        else:
            sentences.append(template.format(s=name_of[subject], o=name_of[obj]))
    for i in range(len(sentences) - 1, 0, -1):
        j = draws.below(i + 1)
        sentences[i], sentences[j] = sentences[j], sentences[i]
    fillers = list(_FILLERS[entity.kind])
    for i in range(len(fillers) - 1, 0, -1):
        j = draws.below(i + 1)
        fillers[i], fillers[j] = fillers[j], fillers[i]
    low, high = _WORDS
    words = sum(len(sentence.split()) for sentence in sentences)
    target = low + draws.below(high - low - 4)
    padding = []
    for filler in fillers:
        if words >= target:
            break
        filler = filler.replace("{adj}", _ADJECTIVES[draws.below(len(_ADJECTIVES))])
        size = len(filler.split())
        if words + size <= high:
            padding.append(filler)
            words += size
    if words < low:
        raise RuntimeError(f"could not pad the passage about {entity.id} to {low} words")
    # One filler after the opening fact reads more like prose than a block of facts then a block of colour.
    if padding and len(sentences) > 1:
        sentences.insert(1, padding.pop(0))
    return " ".join(sentences + padding)
