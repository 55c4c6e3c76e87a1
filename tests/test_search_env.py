"""The search environments: Search's tools and rewards, the corpus cache, the scripted agents' measured scores,
SearchSelfPlay's verification of proposals, and AskOrSearch's private notes and shared costs.

Most tests run on small worlds (400 to 800 passages); the measured figures of the agents are on world-v1.
"""

from __future__ import annotations

import json
import math
import pickle
import re

import gymnasium
import pytest

import parlour
from parlour.baselines import make_scripted
from parlour.baselines.search import parse_question, read_fact, write_question
from parlour.envs.core.match import Match
from parlour.envs.search import toolkit
from parlour.envs.search.ask_or_search import AskOrSearch
from parlour.envs.search.corpus import write_jsonl
from parlour.envs.search.scoring import exact_match, f1, normalize_answer, tool_efficiency
from parlour.envs.search.search import Search, reward_terms
from parlour.envs.search.search_self_play import SearchSelfPlay, verify_proposal
from parlour.envs.search.world import World

SEARCH = "parlour/Search-v0"
SELF_PLAY = "parlour/SearchSelfPlay-v0"
ASK = "parlour/AskOrSearch-v0"
SMALL = {"world_seed": 3, "world_size": 600}


def play(match: Match, agents: dict, seed: int = 0) -> Match:
    """Play ``match`` (already reset) to the end with one agent per seat."""
    for index, agent in enumerate(agents.values()):
        agent.reset(seed * 10 + index)
    while not match.over:
        player = match.acting()[0]
        match.submit(player, agents[player].act(match.agent_observation(player)))
    return match


def episode(env_id: str, agent: str, seed: int, options: dict | None = None) -> Match:
    """One episode of ``env_id`` with the scripted ``agent`` in every seat."""
    match = Match(parlour.game_class(env_id), options or {})
    match.reset(seed)
    return play(match, {p: make_scripted(agent, env_id) for p in match.players}, seed)


# ------------------------------------------------------------------ scoring


@pytest.mark.parametrize(
    "text, normalised",
    [("The Eiffel Tower!", "eiffel tower"), ("  a  Cat, an apple ", "cat apple"), ("1,460,000", "1460000"), ("Theatre", "theatre"), ("", "")],
)
def test_squad_normalisation(text, normalised):
    assert normalize_answer(text) == normalised


def test_exact_match_and_f1_take_the_best_accepted_answer():
    assert exact_match("the Tavelon Guild.", ["Tavelon Guild"]) == 1.0
    assert exact_match("Tavelon", ["Tavelon Guild", "Oru"]) == 0.0
    assert exact_match("oru", ["Tavelon Guild", "Oru"]) == 1.0
    # "Tavelon" against "Tavelon Guild": precision 1, recall 1/2, F1 2/3.
    assert f1("Tavelon", ["Tavelon Guild"]) == pytest.approx(2 / 3)
    assert f1("Tavelon Guild of Oru", ["Tavelon Guild", "Oru"]) == pytest.approx(max(2 * (2 / 4) * 1 / (2 / 4 + 1), 2 * (1 / 4) / (1 / 4 + 1)))
    assert f1("nothing", ["Tavelon Guild"]) == 0.0 and f1("the", ["a"]) == 0.0


def test_tool_efficiency_is_otc_grpo():
    assert tool_efficiency(3, 3) == pytest.approx(1.0)
    assert tool_efficiency(0, 3) == 0.0
    assert tool_efficiency(4, 2) == pytest.approx(math.sin(2 * math.pi / 3))
    assert tool_efficiency(1, 2) == pytest.approx(math.sin(math.pi / 3))
    assert tool_efficiency(0, 0) == 1.0 and tool_efficiency(1, 0) == pytest.approx(0.5)
    assert tool_efficiency(2, 2) > tool_efficiency(3, 2) > tool_efficiency(8, 2) > 0
    with pytest.raises(ValueError):
        tool_efficiency(-1, 2)


# ------------------------------------------------------------------ Search: reward terms on hand-built cases


def terms(answer: str, **changes):
    settings = dict(
        reward="em", max_answer_words=5, evidence=1.0, tool_calls=2, optimal_calls=2, format_weight=0.0, evidence_weight=0.0, tool_weight=0.0
    )
    settings.update(changes)
    return reward_terms(answer, ["Tavelon Guild"], **settings)


def test_reward_terms_on_hand_built_answers():
    right = terms("tavelon guild")
    assert right["exact_match"] == right["correct"] == right["reward"] == 1.0 and right["format"] == 1.0
    partial = terms("Tavelon", reward="f1")
    assert partial["exact_match"] == 0.0 and partial["reward"] == pytest.approx(2 / 3)
    weighted = terms("Oru", format_weight=0.2, evidence_weight=0.3)
    assert weighted["correct"] == 0.0 and weighted["reward"] == pytest.approx(0.5)
    efficient = terms("Tavelon Guild", tool_weight=1.0, tool_calls=4)
    assert efficient["tool_efficiency"] == pytest.approx(math.sin(2 * math.pi / 3)) == pytest.approx(efficient["reward"])
    half = terms("Tavelon Guild", tool_weight=0.5, tool_calls=0)
    assert half["reward"] == pytest.approx(0.5)
    markup = terms("<b>Tavelon Guild</b>", format_weight=0.5)
    assert markup["format"] == 0.0 and markup["reward"] == 0.0


@pytest.mark.parametrize("answer", ["", "  ", "...", "the", "Tavelon Guild " * 3])
def test_empty_or_over_long_answers_never_score(answer):
    result = terms(answer, format_weight=1.0, evidence_weight=1.0, reward="f1")
    assert not result["scored"] and result["reward"] == 0.0 and result["format"] == 0.0


# ------------------------------------------------------------------ Search: tools and syntaxes


def oracle_call(observation: dict, agent) -> tuple[str, dict]:
    """The oracle's next call as (name, arguments)."""
    decided = json.loads(agent.act(observation))
    return decided["tool"], decided["arguments"]


def render(syntax: str, name: str, arguments: dict):
    """One tool call in one of the core's syntaxes."""
    if syntax == "openai":
        return json.dumps(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}],
            }
        )
    if syntax == "openai_dict":
        return {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}
    if syntax == "tool_json":
        return f'Next I call a tool. {{"tool": "{name}", "arguments": {json.dumps(arguments)}}}'
    if syntax == "hermes":
        return f'<think>plan</think><tool_call>{{"name": "{name}", "arguments": {json.dumps(arguments)}}}</tool_call>'
    assert syntax == "tag"
    value = arguments.get("query", arguments.get("doc_id", arguments.get("text")))
    return f"I will <{name}>{value}</{name}>"


@pytest.mark.parametrize("syntax", ["openai", "openai_dict", "tool_json", "hermes", "tag"])
def test_every_tool_call_syntax_drives_a_whole_episode(syntax):
    agent = make_scripted("oracle", SEARCH)
    # A tag carries only the query, so it cannot ask for the wide search a count needs.
    options = {**SMALL, "kinds": ["bridge", "yesno", "comparison"]} if syntax == "tag" else dict(SMALL)
    for seed in range(4):
        match = Match(Search, options)
        match.reset(seed)
        agent.reset(seed)
        opened = False
        while not match.over:
            observation = match.agent_observation("player_0")
            assert [t["function"]["name"] for t in observation["tools"]] == ["search", "open", "answer"]
            name, arguments = oracle_call(observation, agent)
            if name == "search" and syntax == "tag":
                arguments = {"query": arguments["query"]}
            if name == "answer" and not opened and observation["view"]["retrieved"]:
                # Open one passage first, so that open runs in every syntax too.
                name, arguments, opened = "open", {"doc_id": observation["view"]["retrieved"][0]["id"]}, True
            match.submit("player_0", render(syntax, name, arguments))
        details = match.outcome.details
        assert [step["error"] for step in match.steps] == [None] * len(match.steps)
        assert details["exact_match"] == 1.0 and match.returns == {"player_0": 1.0}
        assert [entry["tool"] for entry in details["retrieval"]][-1:] == ["open"]
        record = json.loads(json.dumps(match.record()))
        assert parlour.replay(record)["steps"] == record["steps"]


@pytest.mark.parametrize(
    "action, expected",
    [
        ("The answer is Oru.", "No tool call found"),
        ('{"tool": "browse", "arguments": {"url": "x"}}', "There is no tool 'browse'"),
        ('{"tool": "search", "arguments": {}}', "'query' is a required property"),
        ('{"tool": "search", "arguments": {"query": ""}}', "Accepted: search(query: string, k?: integer)"),
        ('{"tool": "search", "arguments": {"query": "Oru", "k": 0}}', "less than the minimum of 1"),
        ('{"tool": "search", "arguments": {"query": "Oru", "k": 21}}', "greater than the maximum of 20"),
        ('{"tool": "search", "arguments": {"query": "Oru", "limit": 3}}', "Additional properties"),
        ('{"tool": "open", "arguments": {"doc_id": "nope-1"}}', "open: there is no passage with id 'nope-1'"),
        ('{"tool": "answer", "arguments": {"text": 42}}', "42 is not of type 'string'"),
        ("<tool_call>{not json}</tool_call>", "must hold a JSON object"),
    ],
)
def test_bad_calls_are_invalid_actions_with_clear_messages(action, expected):
    match = Match(Search, {**SMALL, "error_allowance": 3})
    match.reset(1)
    match.submit("player_0", action)
    error = match.steps[-1]["error"]
    assert error is not None and expected in error
    assert "Invalid action" in match.observation_text("player_0") and not match.over
    parlour.replay(match.record())


def test_the_tool_budget_caps_the_episode_and_forfeiting_costs_one():
    match = Match(Search, {**SMALL, "max_tool_calls": 2, "error_allowance": 1})
    match.reset(2)
    search = '{"tool": "search", "arguments": {"query": "city"}}'
    match.submit("player_0", search + search)
    assert match.agent_observation("player_0")["tool_calls_left"] == 0
    match.submit("player_0", search)
    assert "budget of 2" in match.steps[-1]["error"]
    match.submit("player_0", search)
    assert match.over and match.returns == {"player_0": -1.0}
    assert len(match.outcome.details["retrieval"]) == 2 and match.outcome.details["answer"] is None
    parlour.replay(match.record())


def test_search_results_show_ids_and_the_record_keeps_them_with_their_hash():
    match = Match(Search, dict(SMALL))
    match.reset(5)
    match.submit("player_0", '{"tool": "search", "arguments": {"query": "born city", "k": 4}}')
    shown = match.agent_observation("player_0")["messages"][0]
    assert shown["kind"] == "tool_result" and shown["to"] == ["player_0"]
    match.submit("player_0", "<answer>Oru</answer>")
    (entry,) = match.outcome.details["retrieval"]
    corpus = toolkit.load_corpus(match.game.corpus_spec)
    hits = corpus.retriever.search("born city", 4)
    assert entry["ids"] == [hit.doc_id for hit in hits] and len(hits) == 4
    assert all(f"{hit.doc_id} | {hit.title}" in shown["text"] for hit in hits)
    assert entry["text_sha256"] == toolkit.texts_hash({"text": hit.text} for hit in hits)
    record = match.record()
    assert record["outcome"]["details"]["retrieval"][0]["ids"] == entry["ids"]
    record["outcome"]["details"]["retrieval"][0]["ids"].reverse()
    with pytest.raises(parlour.ReplayMismatch):
        parlour.replay(record)


def test_the_question_comes_from_the_seed_and_its_terms_reach_the_outcome():
    first, again, other = (Match(Search, dict(SMALL)) for _ in range(3))
    first.reset(9)
    again.reset(9)
    other.reset(10)
    assert first.game.question == again.game.question != other.game.question
    assert "Question: " + first.game.question["question"] in first.observation_text("player_0")
    assert "answers" not in json.dumps(first.agent_observation("player_0")["view"])
    match = play(first, {"player_0": make_scripted("oracle", SEARCH)})
    details = match.outcome.details
    for key in (
        "exact_match",
        "f1",
        "correct",
        "format",
        "evidence",
        "evidence_hops",
        "tool_calls",
        "optimal_calls",
        "tool_efficiency",
        "scored",
        "reward",
    ):
        assert key in details
    assert details["evidence"] == 1.0 and details["evidence_hops"] == 1.0
    assert details["optimal_calls"] == details["question"]["hops"]


def test_weights_change_the_reward_and_the_rules_say_so():
    options = {**SMALL, "format_weight": 0.25, "evidence_weight": 0.5, "tool_weight": 1.0}
    match = Match(Search, options)
    match.reset(4)
    assert "Bonus: 0.25 x a well-formed short answer" in match.observation_text("player_0")
    match.submit("player_0", '{"tool": "search", "arguments": {"query": "the"}}')
    match.submit("player_0", "<answer>certainly not this</answer>")
    details = match.outcome.details
    assert details["correct"] == 0.0 and details["evidence"] == 0.0 and details["format"] == 1.0
    assert match.returns["player_0"] == pytest.approx(0.25)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"corpus": "web"}, "corpus must be one of"),
        ({"hops": 5}, "hops must be an int from 1 to 4"),
        ({"hops": []}, "hops must be"),
        ({"kinds": ["trivia"]}, "kinds must be a non-empty list"),
        ({"kinds": ["comparison"], "hops": 3}, "no question of kinds ['comparison'] has [3] hops"),
        ({"reward": "bleu"}, "reward must be one of"),
        ({"tool_weight": 2}, "tool_weight must be a number from 0 to 1"),
        ({"format_weight": True}, "format_weight must be a number"),
        ({"max_k": 0}, "max_k must be an int from 1 to 50"),
        ({"world_size": 10}, "world_size must be an int from 60"),
        ({"corpus": "jsonl"}, "needs corpus_file"),
        ({"corpus_file": "x.jsonl"}, "corpus_file and questions_file are for corpus='jsonl'"),
    ],
)
def test_bad_options_are_refused_with_clear_errors(options, message):
    with pytest.raises(ValueError) as error:
        Search(**options)
    assert message in str(error.value)


# ------------------------------------------------------------------ the corpus: a user's files, the caches


def test_a_users_jsonl_corpus_and_questions(tmp_path):
    corpus, questions = tmp_path / "corpus.jsonl", tmp_path / "questions.jsonl"
    write_jsonl(
        corpus,
        [
            {"id": "d1", "title": "Amber Quay", "text": "Amber Quay is a harbour town founded by the Lantern Guild in 1802."},
            {"id": "d2", "title": "Lantern Guild", "text": "The Lantern Guild is a society of lamp makers."},
            {"id": "d3", "title": "Granite Orchard", "text": "Granite Orchard grows pears on a hillside."},
        ],
    )
    write_jsonl(questions, [{"question": "Who founded Amber Quay?", "answers": ["the Lantern Guild", "Lantern Guild society"]}])
    options = {"corpus": "jsonl", "corpus_file": str(corpus), "questions_file": str(questions)}
    match = Match(Search, options)
    match.reset(0)
    assert "invented world" not in match.observation_text("player_0")
    match.submit("player_0", "<search>Amber Quay founded</search>")
    match.submit("player_0", "<answer>Lantern Guild</answer>")
    details = match.outcome.details
    assert details["exact_match"] == 1.0 and details["evidence"] == 1.0 and details["evidence_hops"] is None
    assert details["optimal_calls"] == 1 and details["question"]["gold"] is None
    parlour.replay(match.record())
    with pytest.raises(ValueError, match="hops and kinds choose world questions"):
        Search(**options, hops=2)
    with pytest.raises(ValueError, match="is not a file"):
        Search(corpus="jsonl", corpus_file=str(tmp_path / "missing.jsonl"), questions_file=str(questions))


def test_games_share_one_loaded_corpus_and_pickle_without_it():
    first, second = Search(**SMALL), Search(**SMALL)
    assert "_corpus" not in first.__dict__, "constructing a game must not load its corpus"
    assert first.corpus is second.corpus
    assert first.corpus.retriever is toolkit._RETRIEVERS[first.corpus.fingerprint]
    match = Match(Search, dict(SMALL))
    match.reset(0)
    state = pickle.dumps(match.game)
    assert len(state) < 20_000
    copy = pickle.loads(state)
    assert copy.corpus is match.game.corpus and copy.question == match.game.question
    assert match.game.clone().view("player_0") == match.game.view("player_0")


# ------------------------------------------------------------------ agents: measured on world-v1


def test_the_oracle_reaches_exact_match_on_world_v1_and_beats_no_search():
    """Measured on world-v1, seeds 0-199: oracle 1.00 exact match (2.55 tool calls per question), no_search 0.265."""
    scores = {}
    for name in ("oracle", "no_search"):
        matches = [episode(SEARCH, name, seed) for seed in range(200)]
        scores[name] = sum(m.outcome.details["exact_match"] for m in matches) / len(matches)
        if name == "oracle":
            assert all(m.outcome.details["evidence"] == 1.0 for m in matches)
    assert scores["oracle"] >= 0.95
    assert scores["no_search"] <= 0.4
    assert scores["oracle"] - scores["no_search"] >= 0.5


def test_random_search_play_ends_and_replays():
    for seed in range(10):
        match = episode(SEARCH, "random", seed, dict(SMALL))
        assert match.over and match.returns["player_0"] <= 1.0
        parlour.replay(match.record())


def test_the_oracle_reads_the_questions_grammar_not_the_answer():
    world = World.generate(3, 600)
    for question in world.questions(60, seed=1):
        plan = parse_question(question.question)
        assert plan is not None and plan.kind == question.kind
        if question.kind != "comparison":
            assert plan.path == question.path
            assert world.named(plan.names[0]) == [question.entities[0]]
    person = next(e for e in world.entities.values() if e.kind == "person")
    passage = next(p for p in world.passages if p["title"] == person.name)
    (city,) = world.resolve(person.id, ["born_in"])
    assert read_fact(passage["text"], person.name, "born_in") == world.name(city)
    assert read_fact(passage["text"], person.name, "birth_year") == next(iter(world.resolve(person.id, ["birth_year"])))
    assert parse_question("What is the capital of France, really?") is None
    assert parse_question("Who won the cup in 1998?") is None


def test_evaluate_runs_a_single_agent_environment_and_the_gymnasium_face_plays_it():
    results = parlour.evaluate(SEARCH, ["oracle"], episodes=5, progress=False)
    assert len(results.records) == 5 and all(r["returns"]["player_0"] == 1.0 for r in results.records)
    for record in results.records:
        parlour.replay(record)
    env = gymnasium.make(SEARCH, world_seed=3, world_size=600).unwrapped
    observation, info = env.reset(seed=1)
    agent = make_scripted("oracle", SEARCH)
    agent.reset(0)
    done = False
    while not done:
        observation, reward, terminated, truncated, info = env.step(agent.act(env.match.agent_observation("player_0")))
        done = terminated or truncated
    assert reward == 1.0 and info["outcome"]["details"]["exact_match"] == 1.0


# ------------------------------------------------------------------ SearchSelfPlay: verification


@pytest.fixture(scope="module")
def small_world() -> World:
    return World.generate(**{"seed": SMALL["world_seed"], "n_passages": SMALL["world_size"]})


def a_proposal(world: World, hops: int = 2) -> tuple[dict, set[str]]:
    """A valid proposal built from one of the world's own questions, and the ids that make every hop retrieved."""
    question = next(q for q in world.questions(40, hops=hops, kinds=["bridge"], seed=4) if q.kind == "bridge")
    proposal = {"question": question.question, "answer": question.answer, "start": world.name(question.entities[0]), "path": list(question.path)}
    return proposal, {doc_id for hop in question.gold for doc_id in hop}


def test_a_valid_proposal_passes_verification(small_world):
    proposal, retrieved = a_proposal(small_world)
    question = verify_proposal(small_world, proposal, (2,), retrieved)
    assert question.answer == proposal["answer"] and question.hops == 2
    assert verify_proposal(small_world, {**proposal, "answer": proposal["answer"].upper() + "."}, (2,), retrieved).hops == 2


def test_invalid_proposals_are_refused_with_the_reason(small_world):
    proposal, retrieved = a_proposal(small_world)
    hop_passages = sorted(retrieved)
    author = next(p for p in small_world.entities if len(small_world.resolve(p, ["author_of"])) > 1)
    cases = [
        ({**proposal, "start": "Nowhere At All"}, retrieved, "no entity is called"),
        ({**proposal, "path": proposal["path"][:1]}, retrieved, "the path has 1 hop(s)"),
        ({**proposal, "answer": "Somebody Else"}, retrieved, "not to the proposed answer"),
        (proposal, set(hop_passages[:1]), "were not retrieved"),
        ({**proposal, "question": proposal["question"] + " Is it " + proposal["answer"] + "?"}, retrieved, "appears in the question"),
        ({**proposal, "question": "Who is it?"}, retrieved, "does not name"),
        ({**proposal, "start": small_world.name(author), "path": ["author_of", "published_by"]}, retrieved, "not exactly one"),
        ({**proposal, "path": ["no_such_step", "born_in"]}, retrieved, "unknown step"),
    ]
    for bad, ids, reason in cases:
        with pytest.raises(ValueError, match=re.escape(reason)):
            verify_proposal(small_world, bad, (2,), ids)


def self_play_episode(proposal_action, answers: list[str], options: dict | None = None) -> Match:
    """A SearchSelfPlay episode on the small world: the proposer's searches, its action, then the solvers' answers."""
    match = Match(SearchSelfPlay, {**SMALL, **(options or {})})
    match.reset(0)
    for query in proposal_action[0]:
        match.submit("proposer", json.dumps({"tool": "search", "arguments": {"query": query, "k": 3}}))
    match.submit("proposer", proposal_action[1])
    for solver, answer in zip(["solver_0", "solver_1"], answers):
        if not match.over:
            match.submit(solver, answer)
    return match


def retrieving_queries(world: World, proposal: dict) -> list[str]:
    """Names to search so that every hop of ``proposal`` is retrieved: each node the path passes."""
    (start,) = world.named(proposal["start"])
    nodes, _ = world.trace(start, proposal["path"])
    return [world.name(node) for node in nodes[:-1]]


def test_self_play_pays_the_learnability_reward(small_world):
    proposal, _ = a_proposal(small_world)
    queries = retrieving_queries(small_world, proposal)
    action = json.dumps({"tool": "propose", "arguments": proposal})
    right, wrong = f"<answer>{proposal['answer']}</answer>", "<answer>Nobody</answer>"
    split = self_play_episode((queries, action), [right, wrong])
    assert split.outcome.details["valid"] and split.returns == {"proposer": 0.5, "solver_0": 1.0, "solver_1": 0.0}
    assert split.outcome.winners == ["proposer", "solver_0"]
    trivial = self_play_episode((queries, action), [right, right])
    assert trivial.returns == {"proposer": 0.0, "solver_0": 1.0, "solver_1": 1.0}
    impossible = self_play_episode((queries, action), [wrong, '{"tool": "propose", "arguments": ' + json.dumps(proposal) + "}"])
    assert impossible.returns == {"proposer": 0.0, "solver_0": 0.0, "solver_1": 0.0}
    assert impossible.outcome.details["answers"]["solver_1"] == ""
    for match in (split, trivial, impossible):
        parlour.replay(match.record())
    # The solvers see the question but never the answer, and neither the proposer's calls nor each other's.
    assert proposal["answer"] not in json.dumps(split.game.view("solver_0"))


def test_invalid_proposals_are_penalised_and_end_the_episode(small_world, monkeypatch):
    proposal, _ = a_proposal(small_world)
    queries = retrieving_queries(small_world, proposal)
    unretrieved = self_play_episode(([], json.dumps({"tool": "propose", "arguments": proposal})), [])
    assert unretrieved.over and unretrieved.returns == {"proposer": -1.0, "solver_0": 0.0, "solver_1": 0.0}
    assert unretrieved.outcome.reason == "invalid proposal" and "were not retrieved" in unretrieved.outcome.details["verdict"]
    assert "were not retrieved" in unretrieved.observation_text("proposer")
    assert "were not retrieved" not in unretrieved.observation_text("solver_0")
    assert [step["player"] for step in unretrieved.steps] == ["proposer"]
    answered = self_play_episode((queries, f"<answer>{proposal['answer']}</answer>"), [], {"invalid_penalty": 0.5})
    assert answered.returns["proposer"] == -0.5 and "must call propose" in answered.outcome.details["verdict"]

    def broken(self, question):
        raise RuntimeError("verifier crashed")

    monkeypatch.setattr(World, "verify", broken)
    crashed = self_play_episode((queries, json.dumps({"tool": "propose", "arguments": proposal})), [])
    assert not crashed.outcome.details["valid"] and crashed.returns["proposer"] == -1.0
    assert "verifier crashed" in crashed.outcome.details["verdict"]


def test_a_malformed_path_is_an_invalid_action(small_world):
    proposal, _ = a_proposal(small_world)
    match = Match(SearchSelfPlay, {**SMALL})
    match.reset(0)
    match.submit("proposer", json.dumps({"tool": "propose", "arguments": {**proposal, "path": ["teleports_to", "born_in"]}}))
    assert "is not one of" in match.steps[-1]["error"] and not match.over
    match.submit("proposer", json.dumps({"tool": "propose", "arguments": {**proposal, "path": ["born_in"] * 5}}))
    assert "is too long" in match.steps[-1]["error"] or "path" in match.steps[-1]["error"]


def test_the_proposer_poses_valid_questions_the_oracle_solves():
    """Measured on world-v1, seeds 0-59: 0.98 of the proposer's questions valid; its solvers answer all of them."""
    matches = [episode(SELF_PLAY, "proposer", seed) for seed in range(60)]
    valid = [m for m in matches if m.outcome.details["valid"]]
    assert len(valid) >= 0.9 * len(matches)
    assert all(m.returns["solver_0"] == 1.0 and m.returns["solver_1"] == 1.0 for m in valid)
    no_search = [episode(SELF_PLAY, "no_search", seed) for seed in range(10)]
    assert all(m.returns["proposer"] == -1.0 for m in no_search)
    for match in matches[:5]:
        parlour.replay(match.record())


def test_written_questions_parse_back_to_their_path(small_world):
    proposal, _ = a_proposal(small_world, hops=3)
    text = write_question(proposal["start"], proposal["path"], salt=7)
    plan = parse_question(text)
    assert plan is not None and plan.names == (proposal["start"],) and list(plan.path) == proposal["path"]


# ------------------------------------------------------------------ AskOrSearch


def test_the_experts_notes_are_out_of_the_askers_reach():
    match = Match(AskOrSearch, dict(SMALL))
    match.reset(3)
    game = match.game
    held = {doc_id for hop in game.held_hops for doc_id in game.question["gold"][hop]}
    assert held and held <= set(game.note_ids) and len(game.note_ids) >= len(held) + 10
    notes_text = match.observation_text("expert")
    assert all(doc_id in notes_text for doc_id in game.note_ids)
    assert game.question["question"] not in notes_text
    for doc_id in game.note_ids:
        title = game.corpus.passage(doc_id)["title"]
        match.submit("asker", json.dumps({"tool": "search", "arguments": {"query": title, "k": 20}}))
        assert not set(match.game.retrieval[-1]["ids"]) & set(game.note_ids)
        if len(match.game.retrieval) == 8:
            break
    match = Match(AskOrSearch, {**SMALL, "error_allowance": 5})
    match.reset(3)
    match.submit("asker", f"<open>{game.note_ids[0]}</open>")
    assert "there is no passage" in match.steps[-1]["error"]


def test_asking_costs_and_the_budget_ends_the_game():
    match = Match(AskOrSearch, {**SMALL, "max_questions": 1, "ask_cost": 0.25, "search_cost": 0.05})
    match.reset(1)
    match.submit("asker", "<search>city</search>")
    match.submit("asker", "<ask>What do you know?</ask>")
    assert match.acting() == ["expert"]
    assert '\n\nasker: "What do you know?"\n\n' in match.observation_text("expert")
    match.submit("expert", "<search>x</search>")
    assert "no tools" in match.observation_text("expert")
    match.submit("expert", "   ")
    assert "Reply to the asker" in match.steps[-1]["error"]
    match.submit("expert", "Nothing useful, sorry.")
    assert 'expert: "Nothing useful, sorry."\n\n' in match.observation_text("asker")
    match.submit("asker", "<ask>And now?</ask>")
    assert match.over and "no questions left" in match.outcome.reason
    assert match.returns == {"asker": pytest.approx(-0.3), "expert": pytest.approx(-0.3)}
    parlour.replay(match.record())


def test_asking_beats_searching_alone():
    """Measured on world-v1, seeds 0-59: asker 1.00 exact match with 1.38 questions, search_only 0.30."""
    rates, asked = {}, {}
    for name in ("asker", "search_only"):
        matches = [episode(ASK, name, seed) for seed in range(60)]
        rates[name] = sum(m.outcome.details["exact_match"] for m in matches) / len(matches)
        asked[name] = sum(m.outcome.details["questions_asked"] for m in matches) / len(matches)
        assert all(m.returns["asker"] == m.returns["expert"] for m in matches)
    assert rates["asker"] >= 0.9 and asked["asker"] >= 1.0
    assert rates["search_only"] <= 0.5 and asked["search_only"] == 0.0
