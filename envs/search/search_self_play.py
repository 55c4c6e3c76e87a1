"""SearchSelfPlay: one player poses a multi-hop question about the world, verified symbolically; others answer it.

Players: ``proposer`` and ``solver_0`` .. ``solver_{n-1}`` (``solvers``,
default 2). The proposer is told a topic entity, drawn with the episode's
random generator, as a place to start. It searches the world with the tools
``search(query, k)`` and ``open(doc_id)``, then calls
``propose(question, answer, start, path)``: the question's text, its answer,
the entity the question starts from, and the relation path from that entity
to the answer (``"born_in"``, ``"~author_of"`` for a relation followed
backwards, an attribute such as ``"year_founded"`` as the last hop; the
tool's description lists them).

The environment checks the proposal against the knowledge base, without any
model or judge:

* ``start`` names exactly one entity, and the path has ``hops`` hops;
* every hop reaches exactly one node, and the last one is the proposed
  answer (after SQuAD normalisation);
* every hop was retrieved in the proposer's own searches: a passage stating
  it was among the results of its ``search`` or ``open`` calls;
* the question names the start entity, the answer is not in the question
  (not even spelled out: letters and digits are compared case-folded, without
  accents and separators, ``S-o-u-n-o-u-l C.h.o.g.a.m`` as ``sounoulchogam``,
  from the start of a word to the end of one), and (from two hops on) no passage naming the start entity contains the
  answer, so no single passage answers it; consecutive hops are stated in
  different passages (the world's own checks for its questions,
  :meth:`~parlour.envs.search.world.World.verify`).

An invalid proposal ends the episode: the proposer gets ``-invalid_penalty``
(default -1) and the solvers 0. Anything that goes wrong while checking counts
as invalid: an error never makes a question valid. A valid question goes to
each solver in turn, privately (a solver sees neither the answer nor the other
solvers' calls); each searches with ``search`` and ``open`` and calls
``answer(text)``.

Rewards: a solver gets the exact match (``reward="em"``, default) or token F1
(``"f1"``) of its answer. The proposer of a valid question gets Absolute
Zero's learnability reward: ``1 - p`` where ``p`` is the share of solvers that
answered right, when ``0 < p < 1``, and 0 when every solver or none did (the
question was trivial or impossible for them). A player exceeding the
invalid-action allowance gets -1 and the episode ends (a forfeiting proposer's
question counts as invalid).

A role's move is its own final tool: ``propose`` for the proposer, ``answer``
for a solver. The core offers every tool to every player, so a solver that
calls ``propose`` has answered nothing (it scores 0), and a proposer that
calls ``answer`` has made an invalid proposal.

Options: ``world_seed`` and ``world_size`` (default ``WORLD_V1``), ``hops``
(the hop count a proposal must have: an int 1-4 or a list; default 2),
``solvers`` (1-4, default 2), ``reward``, ``invalid_penalty`` (0-10, default
1), ``max_k`` (default 20). The outcome's details hold the proposal, the
verdict with its reason, the gold passages of a valid question, each solver's
answer and score, and every player's retrieval log (ids and text hashes).

Version history: v0, first release.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, InvalidMove, int_option
from parlour.envs.core.tools import Tool
from parlour.envs.search.scoring import exact_match, f1, normalize_answer
from parlour.envs.search.search import WORLD_INTRO
from parlour.envs.search.toolkit import (
    UsesCorpus,
    answer_tool,
    float_option,
    max_k_option,
    retrieval_tools,
    run_tool,
    world_corpus_spec,
)
from parlour.envs.search.world import ATTRIBUTES, MAX_HOPS, RELATIONS, WORLD_V1, Question, World

#: Every step a proposal's path may name (the world decides whether it leads to one node).
STEPS = (*RELATIONS, *(f"~{relation}" for relation in RELATIONS), *ATTRIBUTES)
MAX_SOLVERS = 4

RULES_PROPOSER = """You are the proposer in a search self-play game. Pose a question about an invented world that {solvers} solver(s) will try to answer by searching it.
{intro}
Use search(query, k) and open(doc_id) to find facts, then call propose(question, answer, start, path):
  start: the name of the entity the question starts from; path: the {hops}-hop relation path from it to the answer, e.g. ["born_in", "located_in"]
  (a relation followed backwards is written ~relation, e.g. "~author_of" leads from a book to its author; an attribute such as "year_founded" may end the path).
The environment checks it against the knowledge base: the path must lead from start to exactly your answer, every hop must be stated in a passage your own searches returned, the question must name start and not contain the answer, and no single passage naming start may give the answer away.
An invalid proposal costs you {penalty:g}. A valid one earns 1 - (share of solvers who answer it right), but 0 if all or none of them do: pose questions that are hard but answerable.
Example: {{"tool": "propose", "arguments": {{"question": "In which country was the author of The Ashes of Zatond born?", "answer": "Oru", "start": "The Ashes of Zatond", "path": ["~author_of", "born_in", "located_in"]}}}}"""

RULES_SOLVER = """You are {player}, a solver in a search self-play game: the proposer poses a question about an invented world and you answer it by searching.
{intro}
Tools: search(query, k) (the k best passages by keyword, k up to {max_k}), open(doc_id) (one passage in full), answer(text) (your final answer, which ends your turn).
Call them as <search>keywords</search>, <answer>your answer</answer>, {{"tool": "search", "arguments": {{"query": "...", "k": 5}}}} or OpenAI tool calls. Answer with the answer alone.
You score {scoring} against the answer the knowledge base gives."""


def propose_tool(hops: tuple[int, ...]) -> Tool:
    """The proposer's final ``propose(question, answer, start, path)`` tool."""
    return Tool(
        "propose",
        "Pose your question (this ends your turn). path: the relations from start to the answer; a relation followed "
        "backwards is ~relation. Relations (subject -> object): "
        + ", ".join(f"{r} ({s} -> {o})" for r, (s, o) in RELATIONS.items())
        + ". Attributes: "
        + ", ".join(f"{a} ({kind})" for a, kind in ATTRIBUTES.items())
        + ".",
        {
            "type": "object",
            "properties": {
                "question": {"type": "string", "minLength": 1, "maxLength": 500},
                "answer": {"type": "string", "minLength": 1, "maxLength": 200},
                "start": {"type": "string", "minLength": 1, "maxLength": 200},
                "path": {"type": "array", "items": {"enum": list(STEPS)}, "minItems": min(hops), "maxItems": max(hops)},
            },
            "required": ["question", "answer", "start", "path"],
            "additionalProperties": False,
        },
        final=True,
    )


def _letters(text: str) -> tuple[str, set[int], set[int]]:
    """The letters and digits of ``text``, case-folded and without accents, with the offsets where its words start
    and end: what is left of a name however it is spelled out (hyphens, dots, spaces, zero-width characters)."""
    letters: list[str] = []
    starts: set[int] = set()
    ends: set[int] = set()
    in_word = False
    for char in unicodedata.normalize("NFKD", text.casefold()):
        if unicodedata.combining(char):
            continue
        if char.isalnum():
            if not in_word:
                starts.add(len(letters))
            letters.append(char)
        elif in_word:
            ends.add(len(letters))
        in_word = char.isalnum()
    ends.add(len(letters))
    return "".join(letters), starts, ends


def names_answer(question: str, answer: str) -> bool:
    """Whether ``question`` holds ``answer`` (SQuAD-normalised) however spelled: its letters and digits in a row, from
    the start of a word of the question to the end of one (so an answer inside a longer word does not count)."""
    key = _letters(normalize_answer(answer))[0]
    letters, starts, ends = _letters(question)
    position = letters.find(key) if key else -1
    while position != -1:
        if position in starts and position + len(key) in ends:
            return True
        position = letters.find(key, position + 1)
    return False


def verify_proposal(world: World, proposal: dict[str, Any], hops: tuple[int, ...], retrieved: set[str]) -> Question:
    """The proposal as a verified bridge :class:`Question`; ValueError saying why it is not valid otherwise.

    Checks, in order: the start entity, the hop count, that the path leads to
    exactly the proposed answer, that each hop was retrieved (``retrieved``:
    the ids the proposer's calls returned), that the question does not spell
    the answer out (:func:`names_answer`), and the world's own checks.
    """
    start, path, answer = proposal["start"], list(proposal["path"]), proposal["answer"]
    named = world.named(start)
    if len(named) != 1:
        raise ValueError(f"no entity is called {start!r}" if not named else f"{start!r} names {len(named)} entities")
    if len(path) not in hops:
        raise ValueError(f"the path has {len(path)} hop(s); this game asks for {' or '.join(map(str, hops))}")
    nodes, gold = world.trace(named[0], path)
    end = world.name(nodes[-1])
    if normalize_answer(answer) != normalize_answer(end):
        raise ValueError(f"the path leads to {end!r}, not to the proposed answer {answer!r}")
    missing = [i + 1 for i, passages in enumerate(gold) if not retrieved.intersection(passages)]
    if missing:
        raise ValueError(f"hop(s) {missing} were not retrieved in your own searches")
    if names_answer(proposal["question"], end):
        raise ValueError(f"the answer {end!r} appears in the question (spelled out or not)")
    question = Question("proposal", "bridge", proposal["question"], end, len(path), tuple(path), (named[0],), tuple(gold))
    world.verify(question)
    return question


class SearchSelfPlay(UsesCorpus, Game):
    """A proposer poses a verified multi-hop question; solvers search and answer it; see the module docstring."""

    name = "SearchSelfPlay"
    reference_agents = ("proposer", "random")
    version = 0
    description = "Self-play search: a proposer poses a multi-hop question, checked against the knowledge base; solvers answer it."
    category = "search"
    zero_sum = False

    def __init__(
        self,
        *,
        world_seed: int = WORLD_V1["seed"],
        world_size: int = WORLD_V1["n_passages"],
        hops: int | list[int] = 2,
        solvers: int = 2,
        reward: str = "em",
        invalid_penalty: float = 1.0,
        max_k: int = 20,
    ):
        self.corpus_spec = world_corpus_spec(world_seed, world_size)
        wanted = [hops] if isinstance(hops, int) and not isinstance(hops, bool) else hops
        if not isinstance(wanted, list) or not wanted:
            raise ValueError(f"hops must be an int from 1 to {MAX_HOPS} or a non-empty list of them, got {hops!r}")
        self.hops = tuple(sorted({int_option("hops", h, 1, MAX_HOPS) for h in wanted}))
        if reward not in ("em", "f1"):
            raise ValueError(f"reward must be 'em' or 'f1', got {reward!r}")
        self.reward_name = reward
        self.invalid_penalty = float_option("invalid_penalty", invalid_penalty, 0.0, 10.0)
        self.max_k = max_k_option(max_k)
        self.solvers = [f"solver_{i}" for i in range(int_option("solvers", solvers, 1, MAX_SOLVERS))]
        self.players = ["proposer", *self.solvers]
        self.tools = [
            *retrieval_tools(self.max_k),
            propose_tool(self.hops),
            answer_tool("Your final answer to the proposed question (solvers only); this ends your turn."),
        ]
        self.topic = ""
        self.turn = 0
        self.retrieval: dict[str, list[dict[str, Any]]] = {}
        self.proposal: dict[str, Any] | None = None
        self.question: dict[str, Any] | None = None
        self.answers: dict[str, str] = {}

    @property
    def world(self) -> World:
        """The knowledge base proposals are checked against."""
        world = self.corpus.world
        assert world is not None
        return world

    def start(self, ctx: Context) -> None:
        """Draw the proposer's topic entity and tell it the topic."""
        ids = list(self.world.entities)
        topic = self.world.entities[ids[int(ctx.rng.integers(len(ids)))]]
        self.topic = topic.name
        # The seat to move (Game.to_move): the proposer, then each solver in turn.
        self.turn = 0
        self.retrieval = {player: [] for player in self.players}
        self.proposal = self.question = None
        self.answers = {}
        ctx.tell(f"Topic: {topic.name} (a {topic.kind}). Start your question from it, or from any entity you find.", to="proposer")

    def rules(self, player: str) -> str:
        """The proposer's task and the checks, or a solver's tools and scoring."""
        if player == "proposer":
            hops = " or ".join(map(str, self.hops))
            return RULES_PROPOSER.format(solvers=len(self.solvers), intro=WORLD_INTRO, hops=hops, penalty=self.invalid_penalty)
        scoring = "1 for an exact match (case, punctuation and a/an/the ignored)" if self.reward_name == "em" else "the token F1 of your answer"
        return RULES_SOLVER.format(player=player, intro=WORLD_INTRO, max_k=self.max_k, scoring=scoring)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """A reminder of the role's tools and of its calls so far."""
        calls = len(self.retrieval.get(player, ()))
        if player == "proposer":
            return f"Search, then call propose ({calls} tool call(s) made so far)."
        return f"Call search, open or answer ({calls} tool call(s) made so far)."

    def parse(self, player: str, text: str) -> Any:
        """Text without a tool call is no move here."""
        final = "<answer>your answer</answer>" if player != "proposer" else '{"tool": "propose", "arguments": {...}}'
        raise InvalidMove(f"No tool call found. Call a tool, e.g. <search>your keywords</search> or {final}.")

    def call_tool(self, player: str, name: str, arguments: dict[str, Any]) -> str:
        """Run a search or an open for the caller and log it in its own retrieval log."""
        text, entry = run_tool(self.corpus, name, arguments)
        self.retrieval[player].append(entry)
        return text

    def apply(self, ctx: Context, moves: dict[str, Any]) -> None:
        """Check the proposal, or take a solver's answer and end after the last one."""
        ((player, move),) = moves.items()
        if player == "proposer":
            self._propose(ctx, move)
            return
        answer = move["arguments"].get("text", "") if move["tool"] == "answer" else ""
        self.answers[player] = answer
        ctx.tell(f"{player} has answered.", kind="move", sender=player)
        self.turn += 1
        if self.turn == len(self.players):
            self._finish(ctx)
        else:
            assert self.question is not None  # solvers answer only a verified question
            ctx.say("proposer", self.question["question"], to=self.players[self.turn])

    def _propose(self, ctx: Context, move: dict[str, Any]) -> None:
        """Check the proposal; end the episode if it is invalid, else hand the question to the first solver."""
        arguments = move["arguments"]
        self.proposal = {key: arguments.get(key) for key in ("question", "answer", "start", "path")}
        if move["tool"] != "propose":
            verdict = "the proposer must call propose; answer is the solvers' move"
        else:
            retrieved = {doc_id for entry in self.retrieval["proposer"] for doc_id in entry["ids"]}
            try:
                question = verify_proposal(self.world, self.proposal, self.hops, retrieved)
                verdict = None
            # Whatever fails while checking (an unknown step, a hop that forks, a malformed path), the
            # proposal is invalid: an error must never let a question through.
            except Exception as error:
                verdict = str(error) or type(error).__name__
        if verdict is not None:
            ctx.tell(f"The proposal is invalid: {verdict}.", to="proposer", kind="feedback")
            rewards = {player: 0.0 for player in self.players}
            rewards["proposer"] = -self.invalid_penalty
            # Only the proposer is told why (the verdict quotes its proposal); the reason is told to everyone.
            ctx.finish(rewards, reason="invalid proposal", details=self.details(verdict))
            return
        self.question = {
            "question": question.question,
            "answers": [question.answer],
            "hops": question.hops,
            "path": list(question.path),
            "gold": [list(g) for g in question.gold],
        }
        ctx.tell("The proposer has posed a valid question.", kind="move", sender="proposer")
        self.turn = 1
        ctx.say("proposer", question.question, to=self.players[1])

    def _scores(self) -> dict[str, float]:
        """Each solver's score for its answer."""
        assert self.question is not None
        score = exact_match if self.reward_name == "em" else f1
        return {player: score(self.answers.get(player, ""), self.question["answers"]) for player in self.solvers}

    def _finish(self, ctx: Context) -> None:
        assert self.question is not None
        scores = self._scores()
        right = [p for p in self.solvers if exact_match(self.answers[p], self.question["answers"]) == 1.0]
        solved = len(right) / len(self.solvers)
        proposer = 1.0 - solved if 0.0 < solved < 1.0 else 0.0
        winners = ["proposer", *right] if proposer > 0 else right
        reason = f"{len(right)} of {len(self.solvers)} solver(s) answered right"
        ctx.finish(
            {"proposer": proposer, **scores},
            winners=winners,
            reason=reason,
            details={**self.details(None), "solved": solved, "solver_scores": scores},
        )

    def details(self, verdict: str | None) -> dict[str, Any]:
        """The proposal, the verdict, the verified question, the answers and every player's retrieval log."""
        return {
            "topic": self.topic,
            "proposal": self.proposal,
            "valid": self.question is not None,
            "verdict": verdict or ("valid" if self.question is not None else None),
            "question": self.question,
            "answers": dict(self.answers),
            "retrieval": {player: [dict(e) for e in log] for player, log in self.retrieval.items()},
        }

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """-1 to the offender, 0 to the others; a forfeiting proposer's question counts as invalid."""
        rewards = {p: 0.0 for p in self.players}
        rewards[player] = -1.0
        ctx.finish(rewards, reason=reason, details=self.details(reason if player == "proposer" else None))

    def view(self, player: str) -> dict[str, Any]:
        """The role, its own retrieved passages and calls; the topic and hops for the proposer, the question for a solver once it is its turn."""
        log = self.retrieval.get(player, [])
        view: dict[str, Any] = {
            "role": "proposer" if player == "proposer" else "solver",
            **self.retrieval_view(log),
            "max_k": self.max_k,
        }
        if player == "proposer":
            view.update(topic=self.topic, hops=list(self.hops))
        else:
            view["question"] = self.question["question"] if self.question is not None and self.turn >= self.players.index(player) else None
        return view

    def render(self) -> str:
        """The topic, the proposal, the verified question and the answers so far."""
        lines = [f"topic: {self.topic}", f"proposal: {self.proposal}"]
        if self.question is not None:
            lines.append(f"question: {self.question['question']} -> {self.question['answers'][0]}")
        lines.extend(f"{player}: {answer!r}" for player, answer in self.answers.items())
        return "\n".join(lines)
