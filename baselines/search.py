"""Scripted agents for the search games: they read the world's language, never its facts.

The generated world writes its passages and questions from the templates of
:data:`parlour.envs.search.world.TEMPLATES`. These agents use those templates
as a grammar: :func:`parse_question` turns a question's text into a plan (the
entity it names and the relation path it follows), and :func:`read_fact`
reads one hop out of a retrieved passage. They see only their observation
(the question, the passages their own calls returned, messages), never the
hidden answer, the gold passages or the knowledge base's facts.

* ``oracle`` (Search, and the solver of SearchSelfPlay): plans one search per
  hop from the question's structure: it searches the name of the entity it
  stands on, reads the hop's fact from that entity's passage (titles match
  names exactly, so a decoy one letter off is never taken for it), and goes
  on until the path ends; counts search the organisation's name with the
  largest ``k`` and count the passages that state a membership of exactly
  it; comparisons look both values up. Questions it cannot parse (a user's
  jsonl corpus) get one search of the question and the top passage's title.
* ``no_search``: answers at once, without tools, with the best guess the
  question's form allows (yes or no, one of two names, a common count).
* ``random``: random tool calls (searches of words of what it has seen, opens
  of ids it was shown) and then a random answer.
* ``proposer`` (SearchSelfPlay): walks out from the topic entity through the
  passages it retrieves, hop by hop, then writes the question of that path
  with the world's noun phrases and proposes it with its answer.
* ``asker`` (AskOrSearch): follows the question's plan like the oracle, but
  asks the expert for a hop whose passage its searches do not find; the
  expert side answers a question naming an entity with the passage about it
  from its notes.
"""

from __future__ import annotations

import functools
import json
import re
import zlib
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.baselines.seeded import SeededAgent
from parlour.envs.search.search_self_play import STEPS
from parlour.envs.search.world import ATTRIBUTES, RELATIONS, TEMPLATES

SEARCH = "parlour/Search-v0"
SELF_PLAY = "parlour/SearchSelfPlay-v0"
ASK_OR_SEARCH = "parlour/AskOrSearch-v0"

_SLOT = re.compile(r"\{(\w)\}")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_NUMBER = r"\d[\d,]*"
_NAME = r"[A-Z][^.!?]*?"
# Entity names are capitalised words of letters (an invented word with a given name, kind or noun).
_BARE_NAME = re.compile(r"[A-Z][A-Za-z]*(?: [A-Za-z]+)*")


# ------------------------------------------------------------------ the world's grammar


@functools.cache
def _pattern(template: str) -> re.Pattern[str]:
    """A template as a regex whose named groups are its slots (any text, matched lazily)."""
    parts, position = [], 0
    for slot in _SLOT.finditer(template):
        parts.append(re.escape(template[position : slot.start()]))
        parts.append(f"(?P<{slot.group(1)}>.+?)")
        position = slot.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts))


def _kinds(step: str) -> tuple[str, str | None]:
    """(kind of the node a step leaves, kind it reaches or None for a literal value)."""
    if step in ATTRIBUTES:
        return ATTRIBUTES[step], None
    if step.startswith("#"):
        return RELATIONS[step[1:]][1], None
    if step.startswith("~"):
        subject, obj = RELATIONS[step[1:]]
        return obj, subject
    return RELATIONS[step]


def _consistent(path: Sequence[str]) -> bool:
    """Whether each hop of ``path`` leaves the kind of entity the previous hop reached."""
    return all(_kinds(a)[1] == _kinds(b)[0] for a, b in zip(path, path[1:]))


@functools.cache
def parse_phrase(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Every reading of a noun phrase as (the entity name it starts from, the relation path it follows)."""
    readings: list[tuple[str, tuple[str, ...]]] = []
    for step, templates in TEMPLATES["noun_phrases"].items():
        for template in templates:
            match = _pattern(template).fullmatch(text)
            if match is not None:
                readings.extend((start, (*path, step)) for start, path in parse_phrase(match["x"]))
    name = text.removeprefix("the film ")
    if _BARE_NAME.fullmatch(name):
        readings.append((name, ()))
    return tuple(reading for reading in readings if _consistent(reading[1]))


@dataclass(frozen=True)
class Plan:
    """What a question asks: its kind, the entities it names, the path from ``names[0]``, and a yes/no candidate."""

    kind: str
    names: tuple[str, ...]
    path: tuple[str, ...]
    candidate: str | None = None


def parse_question(text: str) -> Plan | None:
    """The plan of a world question, or None when ``text`` is not one (the first consistent reading wins)."""
    text = text.strip()
    for attribute, (templates, _) in TEMPLATES["comparisons"].items():
        for template in templates:
            match = _pattern(template).fullmatch(text)
            if match is not None:
                return Plan("comparison", (match["a"], match["b"]), (attribute,))
    for template in TEMPLATES["count"]:
        match = _pattern(template).fullmatch(text)
        if match is not None:
            for start, path in parse_phrase(match["x"]):
                if _consistent((*path, "#member_of")):
                    return Plan("count", (start,), (*path, "#member_of"))
    for step, template in TEMPLATES["yes_no"].items():
        match = _pattern(template).fullmatch(text)
        if match is None:
            continue
        literal = re.fullmatch(_NUMBER, match["c"]) is not None
        if literal != (step in ATTRIBUTES):
            continue
        for start, path in parse_phrase(match["x"]):
            if _consistent((*path, step)):
                return Plan("yesno", (start,), (*path, step), match["c"])
    for step, templates in TEMPLATES["questions"].items():
        for template in templates:
            match = _pattern(template).fullmatch(text)
            if match is None:
                continue
            for start, path in parse_phrase(match["x"]):
                if _consistent((*path, step)):
                    return Plan("bridge", (start,), (*path, step))
    return None


@functools.cache
def _fact_patterns(relation: str, known: str) -> tuple[re.Pattern[str], ...]:
    """Regexes of ``relation``'s fact sentences with slot ``known`` given as a group ``k`` and the other as ``t``."""
    patterns = []
    for template in TEMPLATES["facts"][relation]:
        parts, position = [], 0
        for slot in _SLOT.finditer(template):
            parts.append(re.escape(template[position : slot.start()]))
            name = slot.group(1)
            parts.append("(?P<k>.+?)" if name == known else f"(?P<t>{_NUMBER if name == 'v' else _NAME})")
            position = slot.end()
        parts.append(re.escape(template[position:]))
        patterns.append(re.compile("".join(parts)))
    return tuple(patterns)


def sentences(text: str) -> list[str]:
    """The sentences of a passage."""
    return _SENTENCE_END.split(text.strip())


def read_fact(text: str, node: str, step: str) -> str | None:
    """The node one ``step`` from ``node`` as the passage ``text`` states it (a name or a value), or None."""
    if step.startswith("~"):
        relation, known = step[1:], "o"
    else:
        relation, known = step, "s"
    for sentence in sentences(text):
        for pattern in _fact_patterns(relation, known):
            match = pattern.fullmatch(sentence)
            if match is not None and match["k"] == node:
                return match["t"]
    return None


def facts_about(text: str, node: str) -> list[tuple[str, str]]:
    """Every (step, target) the passage ``text`` states out of ``node``, in the order of the world's steps."""
    found = []
    for step in (*RELATIONS, *(f"~{r}" for r in RELATIONS), *ATTRIBUTES):
        target = read_fact(text, node, step)
        if target is not None:
            found.append((step, target))
    return found


def members(passages: Sequence[Mapping[str, str]], organisation: str) -> set[str]:
    """The people the passages state to be members of exactly ``organisation``."""
    found = set()
    for passage in passages:
        for sentence in sentences(passage["text"]):
            for pattern in _fact_patterns("member_of", "o"):
                match = pattern.fullmatch(sentence)
                if match is not None and match["k"] == organisation:
                    found.add(match["t"])
    return found


def _number(value: str) -> int:
    return int(value.replace(",", ""))


# ------------------------------------------------------------------ tool calls as text


def call(name: str, **arguments: Any) -> str:
    """A tool call in the ``{"tool": ..., "arguments": ...}`` syntax."""
    return json.dumps({"tool": name, "arguments": arguments}, ensure_ascii=False)


def searched(view: Mapping[str, Any], query: str, k: int) -> bool:
    """Whether the player's calls include a search for ``query`` with at least ``k`` results."""
    return any(c.get("tool") == "search" and c.get("query") == query and c.get("k", 0) >= k for c in view.get("calls", []))


class Reader:
    """Follows a plan through the passages a player has retrieved; asks for the search it needs next.

    ``step()`` returns ``("search", name)`` when the passage about ``name``
    has not been retrieved, ``("answer", text)`` when the plan is resolved, or
    ``("stuck", why)``.
    """

    def __init__(self, plan: Plan, view: Mapping[str, Any], notes: Sequence[str] = ()) -> None:
        self.plan = plan
        # Texts from elsewhere (an expert's replies) read as passages without a title.
        self.passages = [*view.get("retrieved", []), *({"title": "", "text": note} for note in notes)]
        self.notes = list(notes)
        self.by_title = {p["title"]: p for p in self.passages}
        self.view = view
        self.max_k = view.get("max_k", 5)

    def searched(self, query: str, k: int) -> bool:
        """Whether ``query`` was searched already with at least ``k`` results."""
        return searched(self.view, query, k)

    def follow(self, start: str, path: Sequence[str]) -> tuple[str, str]:
        """Walk ``path`` from ``start``: ``("node", end)`` or the search to make next."""
        node = start
        for step in path:
            passage = self.by_title.get(node)
            texts = [passage["text"]] if passage is not None else self.notes
            target = next((found for text in texts if (found := read_fact(text, node, step)) is not None), None)
            if target is None:
                return ("stuck", f"the passage about {node} states no {step}") if passage is not None else ("search", node)
            node = target
        return "node", node

    def step(self) -> tuple[str, str]:
        """The next thing to do: ``("search", name)``, ``("search all", organisation)``, ``("answer", text)`` or ``("stuck", why)``."""
        plan = self.plan
        if plan.kind == "comparison":
            values = []
            for name in plan.names:
                status, value = self.follow(name, plan.path)
                if status != "node":
                    return status, value
                values.append(_number(value))
            larger_wins = TEMPLATES["comparisons"][plan.path[0]][1]
            first = (values[0] > values[1]) == larger_wins
            return "answer", plan.names[0] if first else plan.names[1]
        if plan.kind == "count":
            status, organisation = self.follow(plan.names[0], plan.path[:-1])
            if status != "node":
                return status, organisation
            if not self.searched(organisation, self.max_k):
                return "search all", organisation
            return "answer", str(len(members(self.passages, organisation)))
        status, end = self.follow(plan.names[0], plan.path)
        if status != "node":
            return status, end
        if plan.kind == "yesno":
            candidate = plan.candidate
            assert candidate is not None  # parse_question gives every yes/no plan its candidate
            same = _number(end) == _number(candidate) if plan.path[-1] in ATTRIBUTES else end == candidate
            return "answer", "yes" if same else "no"
        return "answer", end


def plan_action(plan: Plan | None, view: Mapping[str, Any], tool_calls_left: int) -> tuple[str, dict[str, Any]]:
    """The next tool call ``(name, arguments)`` of the oracle for ``plan`` given what it has retrieved."""
    question = view.get("question") or ""
    if plan is None:
        if not view.get("calls") and tool_calls_left > 0:
            return "search", {"query": question[:500] or "?"}
        titles = [p["title"] for p in view.get("retrieved", [])]
        return "answer", {"text": titles[0] if titles else "unknown"}
    reader = Reader(plan, view)
    status, value = reader.step()
    if status == "answer":
        return "answer", {"text": value}
    if tool_calls_left > 0:
        # A name's own passage is nearly always among its first three hits; a wider search is the fallback.
        sizes = (reader.max_k,) if status == "search all" else (min(3, reader.max_k), reader.max_k) if status == "search" else ()
        for k in sizes:
            if not reader.searched(value, k):
                return "search", {"query": value, "k": k}
    return "answer", {"text": guess(plan, None)}


def guess(plan: Plan | None, rng: Any) -> str:
    """The best answer the question's form allows without searching (``rng`` picks between equal guesses)."""
    pick = (lambda options: options[int(rng.integers(len(options)))]) if rng is not None else (lambda options: options[0])
    if plan is None:
        return "yes"
    if plan.kind == "yesno":
        return pick(["yes", "no"])
    if plan.kind == "comparison":
        return pick(list(plan.names))
    if plan.kind == "count":
        return "2"
    return "unknown"


# ------------------------------------------------------------------ Search


class Oracle(SeededAgent):
    """Plans one search per hop from the question's structure and answers from what it retrieved."""

    name = "oracle"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The oracle's next tool call for the question in ``observation["view"]``."""
        view = observation["view"]
        plan = parse_question(view.get("question") or "")
        name, arguments = plan_action(plan, view, observation.get("tool_calls_left", 0))
        return call(name, **arguments)


class NoSearch(SeededAgent):
    """Answers at once without tools: a guess the question's form allows."""

    name = "no_search"

    def act(self, observation: Mapping[str, Any]) -> str:
        """An immediate answer: a guess from the question's form."""
        return call("answer", text=guess(parse_question(observation["view"].get("question") or ""), self.rng))


class RandomSearcher(RandomAgent):
    """Random tool calls (searches of words it has seen, opens of ids it was shown), then a random answer."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random search, open or answer."""
        view = observation["view"]
        words = re.findall(r"\w+", view.get("question") or "") or ["search"]
        retrieved = view.get("retrieved", [])
        rng = self.rng
        choice = rng.random()
        if observation.get("tool_calls_left", 0) > 0 and choice < 0.6:
            picked = [words[int(i)] for i in rng.integers(len(words), size=int(rng.integers(1, 4)))]
            return call("search", query=" ".join(picked), k=int(rng.integers(1, view.get("max_k", 5) + 1)))
        if observation.get("tool_calls_left", 0) > 0 and retrieved and choice < 0.75:
            return call("open", doc_id=retrieved[int(rng.integers(len(retrieved)))]["id"])
        pool = words + [p["title"] for p in retrieved] + ["yes", "no"]
        return call("answer", text=pool[int(rng.integers(len(pool)))])


# ------------------------------------------------------------------ SearchSelfPlay


def _stable(*parts: Any) -> int:
    """A hash of ``parts`` that is the same in every process (``hash()`` of a string is salted per process)."""
    return zlib.crc32("|".join(map(str, parts)).encode("utf-8"))


def write_question(start: str, path: Sequence[str], salt: int) -> str:
    """The question that follows ``path`` from the entity ``start``, in the world's own phrasing."""
    phrase = f"the film {start}" if _kinds(path[0])[0] == "film" else start
    for hop, step in enumerate(path[:-1]):
        templates = TEMPLATES["noun_phrases"][step]
        phrase = templates[_stable(salt, hop, step) % len(templates)].format(x=phrase)
    templates = TEMPLATES["questions"][path[-1]]
    text = templates[_stable(salt, "q", path[-1]) % len(templates)].format(x=phrase)
    return text[:1].upper() + text[1:]


def _mentions(text: str, phrase: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(phrase.lower()) + r"(?!\w)", text.lower()) is not None


class Proposer(SeededAgent):
    """SearchSelfPlay: proposes by walking out from the topic through retrieved passages; solves like the oracle.

    The walk reads, in the passage about the entity it stands on, every fact
    leading out of it, and takes one (a choice fixed by the agent's seed and
    the entity), never returning to an entity it passed. Before proposing a
    question of two or more hops it searches the start entity's name widely
    and, if a passage naming the start contains the answer (the world would
    reject it), walks another way.
    """

    name = "proposer"
    #: Walks tried before proposing the last one found, whatever its flaws.
    attempts = 4

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        super().__init__(env_id, seed)
        self.salt = int(self.rng.integers(1 << 31))

    def reset(self, seed: int | None = None) -> None:
        """Reseed, and draw the salt that fixes this episode's choices of hops and phrasing."""
        super().reset(seed)
        self.salt = int(self.rng.integers(1 << 31))

    def act(self, observation: Mapping[str, Any]) -> str:
        """As a solver the oracle's call; as the proposer the next search of its walk, or its proposal."""
        view = observation["view"]
        left = observation.get("tool_calls_left", 0)
        if view.get("role") == "solver":
            name, arguments = plan_action(parse_question(view.get("question") or ""), view, left)
            return call(name, **arguments)
        return self.propose(view, left)

    def walk(self, view: Mapping[str, Any], attempt: int) -> tuple[str, Any]:
        """``("search", (query, k))`` when a passage is missing, else ``("path", (path, nodes))``."""
        by_title = {p["title"]: p for p in view.get("retrieved", [])}
        hops = view["hops"][0]
        node, path, nodes = view["topic"], [], [view["topic"]]
        for hop in range(hops):
            passage = by_title.get(node)
            if passage is None:
                for k in (min(3, view["max_k"]), view["max_k"]):
                    if not searched(view, node, k):
                        return "search", (node, k)
                break
            allowed = TEMPLATES["questions"] if hop == hops - 1 else TEMPLATES["noun_phrases"]
            options = [(step, target) for step, target in facts_about(passage["text"], node) if step in allowed and target not in nodes]
            if not options:
                break
            step, node = options[_stable(self.salt, attempt, node, hop) % len(options)]
            path.append(step)
            nodes.append(node)
        return "path", (path, nodes)

    def propose(self, view: Mapping[str, Any], left: int) -> str:
        """The next search of the walk, or the proposal."""
        start = view["topic"]
        proposal = None
        for attempt in range(self.attempts):
            status, found = self.walk(view, attempt)
            if status == "search":
                if left > 0:
                    return call("search", query=found[0], k=found[1])
                break
            path, nodes = found
            if not path:
                break
            proposal = {"question": write_question(start, path, self.salt + attempt), "answer": nodes[-1], "start": start, "path": path}
            if len(path) < 2:
                break
            if not searched(view, start, view["max_k"]):
                if left > 0:
                    return call("search", query=start, k=view["max_k"])
                break
            words = re.findall(r"\w+", start.lower())
            naming = [p for p in view.get("retrieved", []) if all(_mentions(p["title"] + " " + p["text"], w) for w in words)]
            if not any(_mentions(p["title"] + " " + p["text"], nodes[-1]) for p in naming):
                break
        if proposal is None:
            proposal = {"question": f"What is {start}?", "answer": start, "start": start, "path": ["located_in"]}
        return call("propose", **proposal)


class SelfPlayNoSearch(SeededAgent):
    """SearchSelfPlay without tools: proposes from the topic alone (never valid: no hop was retrieved) and guesses answers."""

    name = "no_search"

    def act(self, observation: Mapping[str, Any]) -> str:
        """As a solver a guess; as the proposer a proposal made without searching."""
        view = observation["view"]
        if view.get("role") == "solver":
            return call("answer", text=guess(parse_question(view.get("question") or ""), self.rng))
        topic = view["topic"]
        return call("propose", question=f"Where is {topic}?", answer=topic, start=topic, path=["located_in"] * view["hops"][0])


class SelfPlayRandom(RandomSearcher):
    """SearchSelfPlay: a random proposal after random searches; as a solver, the random searcher."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """As the proposer a random search or proposal; as a solver the random searcher's move."""
        view = observation["view"]
        if view.get("role") == "solver":
            return super().free_move(observation)
        rng = self.rng
        if observation.get("tool_calls_left", 0) > 0 and rng.random() < 0.5:
            return call("search", query=view["topic"], k=int(rng.integers(1, view["max_k"] + 1)))
        seen = [view["topic"]] + [p["title"] for p in view.get("retrieved", [])]
        steps = list(STEPS)
        path = [steps[int(i)] for i in rng.integers(len(steps), size=view["hops"][0])]
        return call(
            "propose", question=f"Which is linked to {view['topic']}?", answer=seen[int(rng.integers(len(seen)))], start=view["topic"], path=path
        )


# ------------------------------------------------------------------ AskOrSearch


def _expert_reply(view: Mapping[str, Any]) -> str:
    """The notes whose title the asker's last message names, in full; or that the notes say nothing of it."""
    message = view["dialogue"][-1]["message"] if view.get("dialogue") else ""
    named = [note for note in view["notes"] if _mentions(message, note["title"])]
    if not named:
        return "My notes say nothing about that."
    return "\n\n".join(f"{note['title']}:\n{note['text']}" for note in named)


class Asker(SeededAgent):
    """AskOrSearch: follows the question's plan like the oracle, asking the expert for a passage its searches miss.

    As the expert it replies with the notes about the entities the asker's
    message names.
    """

    name = "asker"
    #: Whether this agent asks the expert when a search misses (``search_only`` does not).
    asks = True

    def act(self, observation: Mapping[str, Any]) -> str:
        """As the expert a reply from its notes; as the asker the oracle's plan, asking for what its searches miss."""
        view = observation["view"]
        if view.get("role") == "expert":
            return _expert_reply(view) if self.asks else "I cannot help."
        plan = parse_question(view.get("question") or "")
        replies = [turn["reply"] for turn in view.get("dialogue", []) if turn.get("reply")]
        reader = Reader(plan, view, replies) if plan is not None else None
        if reader is None:
            name, arguments = plan_action(None, view, observation.get("tool_calls_left", 0))
            return call(name, **arguments)
        status, value = reader.step()
        if status == "answer":
            return call("answer", text=value)
        left = observation.get("tool_calls_left", 0)
        asked = [turn["message"] for turn in view.get("dialogue", [])]
        if status == "search" and left > 0 and not reader.searched(value, 3):
            return call("search", query=value, k=3)
        if status in ("search", "search all") and self.asks and view.get("questions_left", 0) > 0:
            message = f"What do your notes say about {value}?"
            if message not in asked:
                return call("ask", message=message)
        if status in ("search", "search all") and left > 0 and not reader.searched(value, reader.max_k):
            return call("search", query=value, k=reader.max_k)
        return call("answer", text=guess(plan, None))


class SearchOnly(Asker):
    """AskOrSearch without asking: the oracle's searches only; as the expert it does not help."""

    name = "search_only"
    asks = False


class AskOrSearchRandom(RandomSearcher):
    """AskOrSearch: the random searcher, asking now and then; as the expert, random words of its notes."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """As the expert random words of its notes' titles; as the asker now and then a question, else the random searcher's move."""
        view = observation["view"]
        rng = self.rng
        if view.get("role") == "expert":
            words = re.findall(r"\w+", " ".join(note["title"] for note in view["notes"])) or ["nothing"]
            return " ".join(words[int(i)] for i in rng.integers(len(words), size=int(rng.integers(1, 6))))
        if view.get("questions_left", 0) > 0 and rng.random() < 0.2:
            words = re.findall(r"\w+", view.get("question") or "") or ["anything"]
            return call("ask", message="What do you know about " + words[int(rng.integers(len(words)))] + "?")
        return super().free_move(observation)


register_scripted("oracle", SEARCH, Oracle)
register_scripted("no_search", SEARCH, NoSearch)
register_scripted("random", SEARCH, RandomSearcher)
register_scripted("proposer", SELF_PLAY, Proposer)
register_scripted("no_search", SELF_PLAY, SelfPlayNoSearch)
register_scripted("random", SELF_PLAY, SelfPlayRandom)
register_scripted("asker", ASK_OR_SEARCH, Asker)
register_scripted("search_only", ASK_OR_SEARCH, SearchOnly)
register_scripted("random", ASK_OR_SEARCH, AskOrSearchRandom)
# A shared reward, so the easiest partner comes first: asker (as the expert it replies from its notes), then
# search_only (searches well as the asker, never helps as the expert), then random.
register_ladder(ASK_OR_SEARCH, ["asker", "search_only", "random"])
