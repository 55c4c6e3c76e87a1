"""Search: answer a question by searching a corpus with tools (Search-R1's task, offline and contamination-free).

One player, ``player_0``. The episode's question is drawn with the episode's
random generator: by default a fresh, symbolically verified multi-hop question
about ``WORLD_V1``, an invented world of 8000 passages that no model has seen
in pre-training. The player calls tools, in any syntax the core reads
(OpenAI ``tool_calls``, ``{"tool": ..., "arguments": ...}``, Hermes
``<tool_call>``, or tags such as ``<search>Tavelon</search>``):

* ``search(query, k=5)``: the ``k`` best passages by BM25 (``k`` from 1 to
  ``max_k``), each with its id, title and text;
* ``open(doc_id)``: one passage in full (an unknown id is an invalid action);
* ``answer(text)``: the final answer, which ends the episode.

Tool calls per episode are capped by the engine's ``max_tool_calls`` (8 by
default: the whole episode is one turn); past it a call is an invalid action.
Text that calls no tool is an invalid action too.

Options:

* ``corpus``: ``"world"`` (default) or ``"jsonl"``; ``world_seed`` and
  ``world_size`` pick the world (defaults: ``WORLD_V1``, the leaderboard's
  corpus; other values are training worlds); ``corpus_file`` and
  ``questions_file`` are the JSON Lines files of a ``"jsonl"`` corpus.
* ``hops`` (int 1-4 or a list; default all) and ``kinds`` (some of
  ``bridge``, ``yesno``, ``count``, ``comparison``; default all): which world
  questions are drawn.
* ``reward``: ``"em"`` (exact match, default, as the papers) or ``"f1"``
  (token F1), both after SQuAD's answer normalisation, the best over the
  accepted answers.
* ``format_weight``, ``evidence_weight``, ``tool_weight`` (0 to 1, default 0):
  the weights of the other reward terms.
* ``max_k`` (default 20): the largest ``k`` a search may ask for.
* ``max_answer_words`` (default 20): a longer answer never scores.

Reward, paid when the player answers::

    reward = correct * ((1 - tool_weight) + tool_weight * tool_efficiency)
             + format_weight * format + evidence_weight * evidence

where ``correct`` is the exact match (or F1); ``format`` is 1 for a
well-formed short answer (not empty once normalised, at most
``max_answer_words`` words, one line, no markup such as ``<`` or ``{``);
``evidence`` is 1 when a gold passage was retrieved in the episode (world
questions: a passage stating one of the question's hops; jsonl questions: a
passage containing an accepted answer); ``tool_efficiency`` is OTC's reward
for the number of tool calls against the optimum (the question's hop count;
1 for jsonl questions; see :func:`parlour.envs.search.scoring.tool_efficiency`).
An empty or over-long answer scores 0 whatever the weights. A player that
exceeds the invalid-action allowance gets -1.

The outcome's ``details`` report every term (``exact_match``, ``f1``,
``correct``, ``format``, ``evidence``, ``evidence_hops`` (the share of hops
with a gold passage retrieved), ``tool_calls``, ``optimal_calls``,
``tool_efficiency``, ``scored``, ``reward``), the question with its accepted
answers and gold passages, the answer given, and ``retrieval``: every tool
call in order with the ids it returned and the sha256 of their texts, so the
record keeps what the player was shown. All of the text the environment
inserted into the conversation is typed: the tool results are the
``tool_result`` messages of the observations, ``role: "tool"`` turns of
:func:`parlour.export.to_chat`, and the ``inserted`` spans of
:func:`parlour.export.to_text`, which a trainer masks out of the loss.

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any, Sequence

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, InvalidMove, int_option
from parlour.envs.search.scoring import exact_match, f1, normalize_answer, tool_efficiency
from parlour.envs.search.toolkit import (
    DEFAULT_K,
    UsesCorpus,
    answer_tool,
    corpus_spec,
    float_option,
    hop_option,
    max_k_option,
    retrieval_tools,
    retrieved_passages,
    run_tool,
)
from parlour.envs.search.world import WORLD_V1

REWARDS = ("em", "f1")
_MARKUP = frozenset("<>{}[]")

WORLD_INTRO = (
    "The corpus describes an invented world (countries, cities, people, organisations, books and films): nothing in "
    "it is true of the real world, so search rather than guess. Names that differ by one letter are different entities."
)

RULES = """You are {player}. Answer the question below by searching a corpus of {size} passages.
{intro}
Tools:
  search(query, k={k}): the k best passages for your keywords (BM25 keyword matching; k from 1 to {max_k}), each with its id
  open(doc_id): one passage in full
  answer(text): your final answer, which ends the episode
Call them in any of these forms: <search>Tavelon Guild</search>, <open>{example}</open>, <answer>Tavelon</answer>,
{{"tool": "search", "arguments": {{"query": "Tavelon Guild", "k": 5}}}}, <tool_call>{{"name": "answer", "arguments": {{"text": "Tavelon"}}}}</tool_call>, or OpenAI tool calls.
Tool calls are limited (8 by default); text without a tool call is an invalid action.
Answer with the answer alone: a name, a number, yes or no. {scoring}"""


def well_formed(answer: str, max_words: int) -> bool:
    """Whether ``answer`` is a short answer: not empty once normalised, at most ``max_words`` words, one line, no markup."""
    return bool(normalize_answer(answer)) and len(answer.split()) <= max_words and "\n" not in answer.strip() and not _MARKUP.intersection(answer)


def reward_terms(
    answer: str,
    answers: Sequence[str],
    *,
    reward: str,
    max_answer_words: int,
    evidence: float,
    tool_calls: int,
    optimal_calls: int,
    format_weight: float,
    evidence_weight: float,
    tool_weight: float,
) -> dict[str, Any]:
    """Every reward term of an answer and the reward they make (see the module docstring)."""
    exact, overlap = exact_match(answer, answers), f1(answer, answers)
    scored = bool(normalize_answer(answer)) and len(answer.split()) <= max_answer_words
    form = float(well_formed(answer, max_answer_words))
    correct = (exact if reward == "em" else overlap) if scored else 0.0
    efficiency = tool_efficiency(tool_calls, optimal_calls)
    total = correct * ((1 - tool_weight) + tool_weight * efficiency) + format_weight * form + evidence_weight * evidence
    return {
        "exact_match": exact,
        "f1": overlap,
        "correct": correct,
        "format": form,
        "evidence": evidence,
        "tool_calls": tool_calls,
        "optimal_calls": optimal_calls,
        "tool_efficiency": efficiency,
        "scored": scored,
        "reward": total if scored else 0.0,
    }


def answer_in(text: str, answers: Sequence[str]) -> bool:
    """Whether a normalised accepted answer occurs in the normalised ``text`` as whole words."""
    padded = f" {normalize_answer(text)} "
    return any(normalized and f" {normalized} " in padded for normalized in (normalize_answer(a) for a in answers))


class Search(UsesCorpus, Game):
    """One player searches a corpus with tools and answers a (multi-hop) question; see the module docstring."""

    name = "Search"
    reference_agents = ("oracle", "random")
    version = 0
    description = "Answer multi-hop questions about an invented world by searching it with tools (search, open, answer)."
    category = "search"
    zero_sum = False

    def __init__(
        self,
        *,
        corpus: str = "world",
        world_seed: int = WORLD_V1["seed"],
        world_size: int = WORLD_V1["n_passages"],
        corpus_file: str | None = None,
        questions_file: str | None = None,
        hops: int | list[int] | None = None,
        kinds: list[str] | None = None,
        reward: str = "em",
        format_weight: float = 0.0,
        evidence_weight: float = 0.0,
        tool_weight: float = 0.0,
        max_k: int = 20,
        max_answer_words: int = 20,
    ):
        self.corpus_spec = corpus_spec(corpus, world_seed, world_size, corpus_file, questions_file)
        self.hops, self.kinds = hop_option(hops, kinds, corpus)
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
        self.reward_name = reward
        self.weights = {
            name: float_option(name, value, 0.0, 1.0)
            for name, value in (("format_weight", format_weight), ("evidence_weight", evidence_weight), ("tool_weight", tool_weight))
        }
        self.max_k = max_k_option(max_k)
        self.max_answer_words = int_option("max_answer_words", max_answer_words, 1, 1000)
        self.players = ["player_0"]
        self.tools = [*retrieval_tools(self.max_k), answer_tool("Your final answer (the answer alone); this ends the episode.")]
        self.question: dict[str, Any] = {}
        self.retrieval: list[dict[str, Any]] = []
        self.answered: str | None = None

    def start(self, ctx: Context) -> None:
        """Draw the episode's question and tell it to the player."""
        self.question = self.corpus.draw_question(ctx.rng, self.hops, self.kinds)
        self.retrieval = []
        self.answered = None
        ctx.tell(f"Question: {self.question['question']}", to=self.players[0])

    def to_move(self) -> list[str]:
        """The one player, until it answers."""
        return list(self.players)

    def rules(self, player: str) -> str:
        """The tools, the call syntaxes and how answers are scored."""
        weights = self.weights
        scoring = ("Scored by exact match" if self.reward_name == "em" else "Scored by token F1") + (
            " after normalisation (case, punctuation and a/an/the ignored) against the accepted answers; "
            f"an empty answer or one over {self.max_answer_words} words scores 0."
        )
        extras = [
            f"{weights[key]:g} x {what}"
            for key, what in (
                ("format_weight", "a well-formed short answer"),
                ("evidence_weight", "having retrieved a passage that holds the evidence"),
            )
            if weights[key]
        ]
        if extras:
            scoring += " Bonus: " + ", ".join(extras) + "."
        if weights["tool_weight"]:
            scoring += f" A correct answer is worth less the further your number of tool calls is from the fewest needed (weight {weights['tool_weight']:g})."
        corpus = self.corpus
        return RULES.format(
            player=player,
            size=len(corpus),
            intro=WORLD_INTRO if corpus.world is not None else "",
            k=min(DEFAULT_K, self.max_k),
            max_k=self.max_k,
            example=corpus.example_id,
            scoring=scoring,
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """A reminder of the tools and of the calls made so far."""
        return f"Call search, open or answer ({len(self.retrieval)} tool call(s) made so far)."

    def parse(self, player: str, text: str) -> Any:
        """Text without a tool call is no move here."""
        raise InvalidMove(
            "No tool call found. Call a tool, e.g. <search>your keywords</search>, <open>doc id</open> or <answer>your answer</answer>."
        )

    def call_tool(self, player: str, name: str, arguments: dict[str, Any]) -> str:
        """Run a search or an open and log what it returned."""
        text, entry = run_tool(self.corpus, name, arguments)
        self.retrieval.append(entry)
        return text

    def apply(self, ctx: Context, moves: dict[str, Any]) -> None:
        """Score the answer and end the episode."""
        ((player, move),) = moves.items()
        answer = move["arguments"]["text"]
        self.answered = answer
        terms = self.score(answer)
        expected = " / ".join(self.question["answers"])
        won = terms["exact_match"] == 1.0
        reason = f"{player} answered {answer.strip()[:80]!r}, " + ("which is right" if won else f"the answer is {expected!r}")
        ctx.finish({player: terms["reward"]}, winners=[player] if won else [], reason=reason, details=self.details(terms))

    def score(self, answer: str) -> dict[str, Any]:
        """The reward terms of ``answer`` given this episode's question and retrieval (see the module docstring)."""
        evidence, per_hop = self.evidence()
        question = self.question
        terms = reward_terms(
            answer,
            question["answers"],
            reward=self.reward_name,
            max_answer_words=self.max_answer_words,
            evidence=evidence,
            tool_calls=len(self.retrieval),
            optimal_calls=question["hops"] if question["hops"] is not None else 1,
            **self.weights,
        )
        terms["evidence_hops"] = per_hop
        return terms

    def evidence(self) -> tuple[float, float | None]:
        """(1.0 if a gold passage was retrieved else 0.0, the share of hops with one retrieved or None without gold)."""
        gold = self.question["gold"]
        if gold is None:
            texts = retrieved_passages(self.corpus, self.retrieval)
            return float(any(answer_in(p["title"] + " " + p["text"], self.question["answers"]) for p in texts)), None
        retrieved = {doc_id for entry in self.retrieval for doc_id in entry["ids"]}
        hops = [bool(retrieved.intersection(hop)) for hop in gold]
        return float(any(hops)), sum(hops) / len(hops)

    def details(self, terms: dict[str, Any] | None) -> dict[str, Any]:
        """The outcome details: the question, the answer, every reward term, and the retrieval log."""
        return {
            **(terms or {}),
            "question": dict(self.question),
            "answer": self.answered,
            "reward_kind": self.reward_name,
            "weights": dict(self.weights),
            "retrieval": [dict(e) for e in self.retrieval],
        }

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """-1 to the player, with the question and its retrieval log in the details."""
        ctx.finish({player: -1.0}, reason=reason, details=self.details(None))

    def view(self, player: str) -> dict[str, Any]:
        """The question, the passages the player's calls returned (as shown) and its calls."""
        return {
            "question": self.question.get("question"),
            **self.retrieval_view(self.retrieval),
            "max_k": self.max_k,
        }

    def render(self) -> str:
        """The question, its accepted answers, the calls and the answer."""
        calls = "; ".join(f"{e['tool']}({e.get('query', e.get('doc_id'))!r}) -> {len(e['ids'])}" for e in self.retrieval)
        answer = f"\nanswer: {self.answered!r}" if self.answered is not None else ""
        return f"question: {self.question.get('question')}\naccepted: {self.question.get('answers')}\ncalls: {calls or 'none'}{answer}"
