"""AskOrSearch: a searcher must answer a question, and part of the knowledge it needs is held by an expert it may ask.

Players: ``asker`` and ``expert``, who share one reward. The episode's
question is drawn with the episode's random generator from the world
(default ``WORLD_V1``). The expert privately holds *notes*: the passages
stating a random non-empty subset of the question's hops, plus ``notes``
other passages (default 10) so that holding a passage gives nothing away.
Notes are out of the asker's reach: its searches never return them and it
cannot open them. The expert is not told the question.

The asker acts first. Its tools: ``search(query, k)`` and ``open(doc_id)``,
``ask(message)`` (its move: the message goes to the expert, who replies in
plain text on its turn), and ``answer(text)``, which ends the episode. It may
ask at most ``max_questions`` times (default 3); asking with none left ends
the episode without an answer. The expert has no tools: any non-empty text is
its reply (a tool call it makes is answered with that reminder, and the text
argument of a final tool call it makes is taken as its reply).

Reward, the same for both players, paid at the end::

    reward = correct - ask_cost * questions asked - search_cost * tool calls of the asker

``correct`` is the exact match (``reward="em"``, default) or token F1
(``"f1"``) after SQuAD normalisation; ``ask_cost`` defaults to 0.1 and
``search_cost`` to 0.02. A player exceeding the invalid-action allowance gets
-1 and the other 0.

Options: ``world_seed``, ``world_size``, ``hops`` and ``kinds`` (which
questions: default 2 or 3 hops, bridge, yes/no and comparison; counts span
too many passages to hold), ``notes``, ``max_questions``, ``ask_cost``,
``search_cost``, ``reward``, ``max_k``. The outcome's details hold the
question with its gold passages, which hops the expert held, the ids of its
notes, the dialogue, the answer, every reward term, and the asker's
retrieval log (ids and text hashes).

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import FrozenDict, freeze
from parlour.envs.core.game import Game, InvalidMove, int_option
from parlour.envs.core.tools import Tool
from parlour.envs.search.scoring import exact_match, f1
from parlour.envs.search.search import WORLD_INTRO
from parlour.envs.search.toolkit import (
    UsesCorpus,
    answer_tool,
    float_option,
    hop_option,
    max_k_option,
    retrieval_tools,
    retrieved_passages,
    run_tool,
    shown_call,
    world_corpus_spec,
)
from parlour.envs.search.world import WORLD_V1

#: Longest reply of the expert that is passed on (characters).
MAX_REPLY_CHARS = 4000

ASK_TOOL = Tool(
    "ask",
    "Ask the expert, who holds passages your searches cannot reach (this ends your turn; the expert replies on its turn).",
    {
        "type": "object",
        "properties": {"message": {"type": "string", "minLength": 1, "maxLength": 1000}},
        "required": ["message"],
        "additionalProperties": False,
    },
    final=True,
)

RULES_ASKER = """You are the asker. Answer the question below about an invented world, with help from an expert.
{intro}
Part of the knowledge base is held privately by the expert: your searches never return those passages. The expert does not know your question.
Tools: search(query, k) (the k best passages by keyword, k up to {max_k}), open(doc_id) (one passage in full),
ask(message) (a question to the expert; it ends your turn and the expert replies), answer(text) (your final answer; it ends the game).
Call them as <search>keywords</search>, <ask>your question</ask>, <answer>your answer</answer>, or {{"tool": ..., "arguments": {{...}}}}.
You may ask at most {max_questions} question(s); asking with none left ends the game without an answer.
You and the expert share one reward: {scoring}, minus {ask_cost:g} per question asked and {search_cost:g} per tool call you make."""

RULES_EXPERT = """You are the expert. You privately hold some passages of a knowledge base about an invented world (your notes, below); the asker must answer a question it has not told you and cannot search your notes.
When the asker asks you something, reply in plain text; you have no tools. Be accurate and brief: you share its reward, {scoring}, minus {ask_cost:g} for every question it asks."""


class AskOrSearch(UsesCorpus, Game):
    """An asker answers a question by searching and by asking an expert who holds part of the corpus; see the module docstring."""

    name = "AskOrSearch"
    reference_agents = ("asker", "random")
    version = 0
    description = "Answer a question by searching or by asking an expert who privately holds part of the knowledge base; shared reward minus costs."
    category = "search"
    zero_sum = False
    shared_reward = True

    def __init__(
        self,
        *,
        world_seed: int = WORLD_V1["seed"],
        world_size: int = WORLD_V1["n_passages"],
        hops: int | list[int] | None = None,
        kinds: list[str] | None = None,
        notes: int = 10,
        max_questions: int = 3,
        ask_cost: float = 0.1,
        search_cost: float = 0.02,
        reward: str = "em",
        max_k: int = 20,
    ):
        self.corpus_spec = world_corpus_spec(world_seed, world_size)
        self.hops, self.kinds = hop_option([2, 3] if hops is None else hops, ["bridge", "yesno", "comparison"] if kinds is None else kinds, "world")
        self.notes = int_option("notes", notes, 0, 200)
        self.max_questions = int_option("max_questions", max_questions, 0, 20)
        self.ask_cost = float_option("ask_cost", ask_cost, 0.0, 1.0)
        self.search_cost = float_option("search_cost", search_cost, 0.0, 1.0)
        if reward not in ("em", "f1"):
            raise ValueError(f"reward must be 'em' or 'f1', got {reward!r}")
        self.reward_name = reward
        self.max_k = max_k_option(max_k)
        self.players = ["asker", "expert"]
        self.tools = [*retrieval_tools(self.max_k), ASK_TOOL, answer_tool("Your final answer to the question (the asker only); this ends the game.")]
        self.question: dict[str, Any] = {}
        self.held_hops: list[int] = []
        self.note_ids: list[str] = []
        self.hidden: frozenset[str] = frozenset()
        self.retrieval: list[dict[str, Any]] = []
        self._clear_views()
        self.turn = "asker"
        self.answered: str | None = None

    def _clear_views(self) -> None:
        """Empty what views share (see :mod:`parlour.envs.core.frozen`): read-only tuples the game replaces, never changes.

        ``calls`` (the asker's calls as its view shows them) and ``dialogue`` grow by one entry at a time;
        ``retrieved`` is rebuilt from ``passages_seen`` (each passage as the asker was last shown it, in the order
        first seen) only when a call shows a passage, not at every observation; ``notes`` are the expert's passages.
        """
        self.calls: tuple[FrozenDict, ...] = ()
        self.dialogue: tuple[FrozenDict, ...] = ()
        self.passages_seen: dict[str, FrozenDict] = {}
        self.retrieved: tuple[FrozenDict, ...] = ()
        self.notes_shown: tuple[FrozenDict, ...] = ()

    def start(self, ctx: Context) -> None:
        """Draw the question, choose the hops the expert holds and its other notes, and tell each player its part."""
        corpus = self.corpus
        self.question = question = corpus.draw_question(ctx.rng, self.hops, self.kinds)
        gold = question["gold"]
        held = [i for i in range(len(gold)) if ctx.rng.random() < 0.5]
        self.held_hops = held or [int(ctx.rng.integers(len(gold)))]
        notes = {doc_id for i in self.held_hops for doc_id in gold[i]}
        gold_ids = {doc_id for hop in gold for doc_id in hop}
        world = corpus.world
        assert world is not None
        passages = world.passages
        wanted = len(notes) + self.notes
        while len(notes) < wanted and len(notes | gold_ids) < len(passages):
            doc_id = passages[int(ctx.rng.integers(len(passages)))]["id"]
            if doc_id not in gold_ids:
                notes.add(doc_id)
        self.note_ids = sorted(notes)
        self.hidden = frozenset(notes)
        self.retrieval = []
        self._clear_views()
        shown_notes = []
        for doc_id in self.note_ids:
            passage = corpus.passage(doc_id)
            assert passage is not None  # the notes are ids of the corpus's own passages
            shown_notes.append(FrozenDict(id=doc_id, title=passage["title"], text=passage["text"]))
        self.notes_shown = tuple(shown_notes)
        self.turn, self.answered = "asker", None
        ctx.tell(f"Question: {question['question']}", to="asker")
        shown = "\n\n".join(f"[{note['id']}] {note['title']}\n{note['text']}" for note in self.notes_shown)
        ctx.tell(f"Your notes ({len(self.note_ids)} passages the asker cannot search):\n\n{shown}", to="expert")

    def to_move(self) -> list[str]:
        """The asker, or the expert while a question waits for its reply."""
        return [self.turn]

    def _scoring(self) -> str:
        return "1 for an exact answer (case, punctuation and a/an/the ignored)" if self.reward_name == "em" else "the token F1 of the answer"

    def rules(self, player: str) -> str:
        """The asker's tools and budget, or the expert's role; both with the shared reward."""
        if player == "asker":
            return RULES_ASKER.format(
                intro=WORLD_INTRO,
                max_k=self.max_k,
                max_questions=self.max_questions,
                scoring=self._scoring(),
                ask_cost=self.ask_cost,
                search_cost=self.search_cost,
            )
        return RULES_EXPERT.format(scoring=self._scoring(), ask_cost=self.ask_cost)

    def questions_left(self) -> int:
        """How many more questions the asker may ask."""
        return self.max_questions - len(self.dialogue)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The asker's tools and questions left, or the expert's cue to reply."""
        if player == "expert":
            return "Reply to the asker in plain text."
        left = self.questions_left()
        asking = f"ask ({left} question(s) left)" if left else "(no questions left)"
        return f"Call search, open, {asking} or answer ({len(self.retrieval)} tool call(s) made so far)."

    def parse(self, player: str, text: str) -> Any:
        """An expert's reply is any non-empty text; the asker must call a tool."""
        if player == "expert":
            reply = text.strip()
            if not reply:
                raise InvalidMove("Reply to the asker with some text.")
            return reply[:MAX_REPLY_CHARS]
        raise InvalidMove(
            "No tool call found. Call a tool, e.g. <search>your keywords</search>, <ask>your question</ask> or <answer>your answer</answer>."
        )

    def call_tool(self, player: str, name: str, arguments: dict[str, Any]) -> str:
        """Search or open for the asker, leaving the expert's notes out; the expert has no tools."""
        if player == "expert":
            return "The expert has no tools: reply to the asker in plain text."
        text, entry = run_tool(self.corpus, name, arguments, self.hidden)
        self.retrieval.append(entry)
        self.calls += (freeze(shown_call(entry)),)
        # The passages this call showed, merged as retrieved_passages merges the whole log: a search adds the
        # passages not seen yet, an open replaces the snippet by the whole text and keeps the passage's place.
        for passage in retrieved_passages(self.corpus, [entry]):
            if passage["id"] not in self.passages_seen or entry["tool"] == "open":
                self.passages_seen[passage["id"]] = FrozenDict(passage)
        self.retrieved = tuple(self.passages_seen.values())
        return text

    def apply(self, ctx: Context, moves: dict[str, Any]) -> None:
        """Pass a question to the expert, a reply to the asker, or score the answer."""
        ((player, move),) = moves.items()
        if player == "expert":
            reply = move if isinstance(move, str) else str(next(iter(move["arguments"].values()), ""))[:MAX_REPLY_CHARS]
            self.dialogue = (*self.dialogue[:-1], FrozenDict(self.dialogue[-1], reply=reply))
            ctx.say("expert", reply, to="asker")
            self.turn = "asker"
            return
        if move["tool"] == "answer":
            self._finish(ctx, move["arguments"]["text"])
            return
        message = move["arguments"]["message"]
        if self.questions_left() <= 0:
            self._finish(ctx, None)
            return
        self.dialogue += (FrozenDict(message=message, reply=None),)
        ctx.say("asker", message, to="expert")
        self.turn = "expert"

    def _finish(self, ctx: Context, answer: str | None) -> None:
        """End the episode: score the answer (None: the asker asked with no questions left) and pay the shared reward."""
        self.answered = answer
        answers = self.question["answers"]
        exact = exact_match(answer, answers) if answer is not None else 0.0
        overlap = f1(answer, answers) if answer is not None else 0.0
        correct = exact if self.reward_name == "em" else overlap
        costs = self.ask_cost * len(self.dialogue) + self.search_cost * len(self.retrieval)
        reward = correct - costs
        terms = {
            "exact_match": exact,
            "f1": overlap,
            "correct": correct,
            "questions_asked": len(self.dialogue),
            "tool_calls": len(self.retrieval),
            "costs": costs,
            "reward": reward,
        }
        if answer is None:
            reason = "the asker asked with no questions left"
        else:
            # The outcome is the environment's message, so the asker's own words reach the expert framed, before it.
            ctx.say("asker", answer, to="expert")
            reason = "the asker answered right" if exact == 1.0 else f"the asker answered wrong: the answer is {' / '.join(answers)!r}"
        ctx.finish(
            {player: reward for player in self.players},
            winners=list(self.players) if exact == 1.0 else [],
            reason=reason,
            details={**terms, **self.details()},
        )

    def details(self) -> dict[str, Any]:
        """The question, what the expert held, the dialogue, the answer and the asker's retrieval log."""
        return {
            "question": dict(self.question),
            "held_hops": list(self.held_hops),
            "notes": list(self.note_ids),
            "dialogue": [dict(turn) for turn in self.dialogue],
            "answer": self.answered,
            "retrieval": [dict(entry) for entry in self.retrieval],
        }

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """-1 to the offender, 0 to the other, with the episode's details."""
        ctx.finish({player: -1.0, self.other(player): 0.0}, winners=[self.other(player)], reason=reason, details=self.details())

    def view(self, player: str) -> dict[str, Any]:
        """The expert's notes and the dialogue, or the asker's question, retrieved passages, calls, dialogue and questions left.

        The notes, passages, calls and dialogue are shared, read-only tuples.
        """
        if player == "expert":
            return {"role": "expert", "notes": self.notes_shown, "dialogue": self.dialogue}
        return {
            "role": "asker",
            "question": self.question.get("question"),
            "retrieved": self.retrieved,
            "calls": self.calls,
            "dialogue": self.dialogue,
            "questions_left": self.questions_left(),
            "max_k": self.max_k,
        }

    def render(self) -> str:
        """The question, what the expert holds, the dialogue and the answer."""
        lines = [
            f"question: {self.question.get('question')} -> {self.question.get('answers')}",
            f"expert holds hops {[i + 1 for i in self.held_hops]} in {len(self.note_ids)} notes",
        ]
        lines.extend(f"asker: {turn['message']}\nexpert: {turn['reply']}" for turn in self.dialogue)
        if self.answered is not None:
            lines.append(f"answer: {self.answered!r}")
        return "\n".join(lines)
