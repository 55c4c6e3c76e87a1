"""GraphCoordination: the graph families, AgentsNet's rounds and scores, message and answer grammar, private delivery,
rewards, and the textbook agents' measured scores per task."""

from __future__ import annotations

import json

import numpy as np
import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.social.graph_coordination import (
    FAMILIES,
    TASKS,
    GraphCoordination,
    barabasi_albert,
    delaunay,
    distances_from,
    generate,
    score_answers,
    watts_strogatz,
)

ENV_ID = "parlour/GraphCoordination-v0"

#: A path 0-1-2-3 with a chord 1-3: edges (0,1), (1,2), (1,3), (2,3).
KITE = [[1], [0, 2, 3], [1, 3], [1, 2]]
NAMES = [f"player_{i}" for i in range(4)]


def on_graph(adjacency: list[list[int]], **options) -> Match:
    """A started match whose graph is replaced by ``adjacency`` (the rounds and colours recomputed)."""
    options.setdefault("num_players", len(adjacency))
    match = Match(GraphCoordination, options)
    match.reset(0)
    game = match.game
    game.adjacency = adjacency
    game.diameter = max(max(distances_from(adjacency, u)) for u in range(len(adjacency)))
    game.rounds = game.rounds_option or game._agentsnet_rounds()
    game.num_colors = (game.colors_option or game.max_degree + 1) if game.task == "coloring" else 0
    match._refresh()
    return match


def round_of(match: Match, actions: dict[str, str]) -> None:
    """Every player acts once (a simultaneous round); each action must be valid."""
    for player in list(match.players):
        match.submit(player, actions[player])
        assert match.steps[-1]["error"] is None, match.steps[-1]


# ---------------------------------------------------------------------- graphs


def test_delaunay_edges_match_scipy():
    spatial = pytest.importorskip("scipy.spatial")
    for seed in range(300):
        rng = np.random.default_rng(seed)
        points = rng.random((int(rng.integers(4, 33)), 2))
        expected = set()
        for simplex in spatial.Delaunay(points).simplices:
            for i in range(3):
                u, v = int(simplex[i]), int(simplex[(i + 1) % 3])
                expected.add((min(u, v), max(u, v)))
        assert delaunay(points) == expected, seed


@pytest.mark.parametrize("n", [4, 5, 8, 17, 32])
def test_families_have_networkx_sizes_and_are_connected(n):
    rng = np.random.default_rng(n)
    # networkx: barabasi_albert_graph(n, 2) has 2 (n - 2) edges; watts_strogatz_graph(n, 4, p) keeps 2n (K4 when n = 4).
    assert len(barabasi_albert(n, 2, rng)) == 2 * (n - 2)
    assert len(watts_strogatz(n, 4, 0.4, rng)) == (6 if n == 4 else 2 * n)
    for family in FAMILIES:
        adjacency = generate(family, n, rng)
        assert all(u not in neighbours and neighbours == sorted(set(neighbours)) for u, neighbours in enumerate(adjacency))
        assert all(u in adjacency[v] for u, neighbours in enumerate(adjacency) for v in neighbours)
        assert min(distances_from(adjacency, 0)) >= 0


def test_diameters_match_networkx():
    nx = pytest.importorskip("networkx")
    for seed in range(30):
        match = Match(GraphCoordination, {"num_players": 4 + seed % 29})
        match.reset(seed)
        game = match.game
        graph = nx.Graph([(u, v) for u, neighbours in enumerate(game.adjacency) for v in neighbours])
        assert game.diameter == nx.diameter(graph)
        assert game.max_degree == max(d for _, d in graph.degree())


def test_the_graph_is_seeded_and_any_draws_every_family():
    families = set()
    for seed in range(30):
        first, second = Match(GraphCoordination, {}), Match(GraphCoordination, {})
        first.reset(seed)
        second.reset(seed)
        assert first.game.adjacency == second.game.adjacency
        families.add(first.game.family)
    assert families == set(FAMILIES)
    match = Match(GraphCoordination, {"graph": "ba", "num_players": 12})
    match.reset(1)
    assert match.game.family == "ba" and sum(map(len, match.game.adjacency)) == 2 * 2 * (12 - 2)


# ------------------------------------------------------------------ options, rounds


@pytest.mark.parametrize(
    "options,rounds",
    [
        ({"task": "coloring", "num_players": 4}, 4),
        ({"task": "matching", "num_players": 8}, 5),
        ({"task": "vertex_cover", "num_players": 16}, 6),
        ({"task": "coloring", "num_players": 17}, "2D+1"),
        ({"task": "consensus", "num_players": 8}, "2D+1"),
        ({"task": "leader_election", "num_players": 5}, "2D+1"),
        ({"task": "consensus", "rounds": 3}, 3),
    ],
)
def test_rounds_follow_agentsnet(options, rounds):
    match = Match(GraphCoordination, options)
    match.reset(2)
    game = match.game
    assert game.rounds == (2 * game.diameter + 1 if rounds == "2D+1" else rounds)


def test_coloring_has_largest_degree_plus_one_groups_unless_told():
    match = on_graph(KITE)
    assert match.game.num_colors == 4
    assert match.game.valid_answers("player_0") == ["Group 1", "Group 2", "Group 3", "Group 4"]
    match = Match(GraphCoordination, {"num_colors": 2})
    match.reset(0)
    assert match.game.num_colors == 2


@pytest.mark.parametrize(
    "options,message",
    [
        ({"num_players": 3}, "num_players"),
        ({"num_players": 33}, "num_players"),
        ({"task": "colouring"}, "task must be one of coloring"),
        ({"graph": "grid"}, "graph must be one of ws, ba, dt"),
        ({"rounds": 0}, "rounds"),
        ({"task": "matching", "num_colors": 3}, "num_colors applies only"),
        ({"num_colors": 0}, "num_colors"),
    ],
)
def test_bad_options_say_what_to_do(options, message):
    with pytest.raises(ValueError, match=message):
        GraphCoordination(**options)


# --------------------------------------------------------------------- messages


def test_messages_reach_only_their_recipients_in_the_next_observation():
    match = on_graph(KITE)
    round_of(
        match,
        {
            "player_0": 'I think... {"player_1": "hi from 0"}',
            "player_1": "[all] hello neighbours",
            "player_2": "[pass]",
            "player_3": '{"player_1": "to one", "player_2": "to two"}',
        },
    )
    assert match.game.round == 2
    seen = {p: match.observation_text(p) for p in NAMES}
    assert 'player_1: "hello neighbours"' in seen["player_0"]
    assert 'player_0: "hi from 0"' in seen["player_1"] and 'player_3: "to one"' in seen["player_1"]
    assert 'player_3: "to two"' in seen["player_2"] and "to one" not in seen["player_2"]
    assert "hi from 0" not in seen["player_2"] + seen["player_3"]
    assert "these neighbors sent you nothing: player_2" in seen["player_1"]
    talk = [m for m in match.messages("player_1") if m["kind"] == "talk"]
    assert sorted((m["sender"], m["to"]) for m in talk) == [("player_0", ["player_1"]), ("player_3", ["player_1"])]
    view = match.game.view("player_1")
    assert view["received"] == ({"round": 1, "from": "player_0", "text": "hi from 0"}, {"round": 1, "from": "player_3", "text": "to one"})
    assert view["sent"] == ({"round": 1, "to": {"player_0": "hello neighbours", "player_2": "hello neighbours", "player_3": "hello neighbours"}},)


@pytest.mark.parametrize(
    "text,expected",
    [
        ('{"player_1": "a"} then {"player_1": "b"}', {"player_1": "b"}),
        ('{"player_1": 7}', {"player_1": "7"}),
        ("{}", {}),
        ("[PASS]", {}),
        ("[all] go", {"player_1": "go"}),
        ('[all] {"not": "names"} only', {"player_1": '{"not": "names"} only'}),
    ],
)
def test_message_grammar(text, expected):
    game = on_graph(KITE).game
    assert game.parse("player_0", text) == {"to": expected}


@pytest.mark.parametrize(
    "text,why",
    [
        ('{"player_2": "x"}', "player_2 is not your neighbor"),
        ('{"player_1": {"nested": 1}}', "must be text"),
        ("hello", "No messages found"),
        ('{"tool": "search", "arguments": {}}', "No messages found"),
    ],
)
def test_bad_messages_are_explained(text, why):
    game = on_graph(KITE).game
    with pytest.raises(parlour.InvalidMove, match=why):
        game.parse("player_0", text)


def test_answers_are_read_after_the_marker_and_must_be_valid():
    match = on_graph(KITE, task="matching", rounds=1)
    round_of(match, dict.fromkeys(NAMES, "[pass]"))
    game = match.game
    assert game.answering and "Give your answer" in match.observation_text("player_1")
    assert game.parse("player_1", "My partner... [answer] player_2") == {"answer": "player_2"}
    assert game.parse("player_1", "### Final Answer ### none") == {"answer": "None"}
    with pytest.raises(parlour.InvalidMove, match="not an answer here"):
        game.parse("player_0", "[answer] player_2")
    with pytest.raises(parlour.InvalidMove, match="No answer found"):
        game.parse("player_0", "player_1")
    coloring = on_graph(KITE, rounds=1)
    round_of(coloring, dict.fromkeys(NAMES, "[pass]"))
    assert coloring.game.parse("player_0", "[answer] 3") == {"answer": "Group 3"}
    assert coloring.game.parse("player_0", "[answer]: group 4") == {"answer": "Group 4"}
    with pytest.raises(parlour.InvalidMove, match="not an answer here"):
        coloring.game.parse("player_0", "[answer] Group 5")


# ---------------------------------------------------------------------- scoring


@pytest.mark.parametrize(
    "task,answers,score",
    [
        ("coloring", ["Group 1", "Group 2", "Group 1", "Group 3"], 1.0),
        ("coloring", ["Group 1", "Group 2", "Group 1", "Group 1"], 0.75),
        ("leader_election", ["No", "Yes", "No", "No"], 1.0),
        ("leader_election", ["Yes", "Yes", "No", "No"], 0.0),
        ("leader_election", ["No"] * 4, 0.0),
        ("consensus", ["1"] * 4, 1.0),
        ("consensus", ["1", "1", "0", "1"], 0.0),
        ("matching", ["player_1", "player_0", "player_3", "player_2"], 1.0),
        # player_3 names player_1, who named player_0: inconsistent; player_2 says None beside player_3's claim: fine.
        ("matching", ["player_1", "player_0", "None", "player_1"], 0.75),
        # Two neighbours both say None: both inconsistent.
        ("matching", ["player_1", "player_0", "None", "None"], 0.5),
        ("vertex_cover", ["No", "Yes", "No", "Yes"], 1.0),
        # Everyone covers every edge, but nobody alone is necessary.
        ("vertex_cover", ["Yes", "Yes", "Yes", "Yes"], 0.0),
        # Only player_1 is necessary (for edge 0-1): one coordinator in three.
        ("vertex_cover", ["No", "Yes", "Yes", "Yes"], 1 / 3),
        ("vertex_cover", ["No", "Yes", "No", "No"], 0.75),
        ("vertex_cover", ["No"] * 4, 0.0),
    ],
)
def test_scores_are_agentsnets(task, answers, score):
    assert score_answers(task, KITE, answers, NAMES) == pytest.approx(score)


def test_everyone_is_paid_the_score_and_a_forfeit_costs_only_the_offender():
    match = on_graph(KITE, task="vertex_cover", rounds=1)
    round_of(match, dict.fromkeys(NAMES, "[pass]"))
    round_of(match, {"player_0": "[answer] No", "player_1": "[answer] Yes", "player_2": "[answer] No", "player_3": "[answer] No"})
    assert match.over and match.returns == dict.fromkeys(NAMES, 0.75)
    details = match.outcome.details
    assert details["score"] == 0.75 and not details["solved"] and details["answers"]["player_1"] == "Yes"
    assert details["edges"] == [[0, 1], [1, 2], [1, 3], [2, 3]] and match.outcome.winners == []

    forfeit = on_graph(KITE, error_allowance=0)
    forfeit.submit("player_0", "[pass]")
    forfeit.submit("player_1", "nonsense")
    assert forfeit.over and forfeit.returns == {"player_0": 0.0, "player_1": -1.0, "player_2": 0.0, "player_3": 0.0}


def test_agents_know_only_their_neighbours():
    match = Match(GraphCoordination, {"num_players": 12, "graph": "ws"})
    match.reset(4)
    game = match.game
    for player in game.players:
        neighbours = game.neighbours(player)
        view = game.view(player)
        assert view["neighbors"] == neighbours
        strangers = [p for p in game.players if p not in neighbours and p != player]
        rules = match.observation_text(player)
        assert f"your immediate neighbors ({', '.join(neighbours)})" in rules
        assert not any(f"{stranger}," in rules or f"{stranger})" in rules for stranger in strangers)
        assert json.dumps(view).count("player_") == len(neighbours) + 1 + sum(1 for a in view["answers"] if a.startswith("player_"))


# -------------------------------------------------------------------- baselines

#: Mean score of eight textbook agents in parlour.evaluate (seed 0, 100 episodes, 8 nodes, graph "any"), per
#: task, as measured, and of eight random agents (50 episodes); the tests assert them with a margin.
MEASURED = {
    "coloring": (1.0, 0.8671),
    "leader_election": (1.0, 0.04),
    "matching": (1.0, 0.3225),
    "vertex_cover": (1.0, 0.681),
    "consensus": (1.0, 0.0),
}


@pytest.mark.parametrize("task", TASKS)
def test_textbook_agents_score_as_measured(task):
    textbook, random = MEASURED[task]
    results = parlour.evaluate(ENV_ID, ["textbook"], episodes=100, seed=0, env_kwargs={"task": task}, progress=False)
    scores = [record["outcome"]["details"]["score"] for record in results.records]
    assert np.mean(scores) >= textbook - 0.01
    assert results.summary["textbook"]["invalid_action_rate"] == 0.0
    baseline = parlour.evaluate(ENV_ID, ["random"], episodes=50, seed=0, env_kwargs={"task": task}, progress=False)
    random_mean = np.mean([record["outcome"]["details"]["score"] for record in baseline.records])
    assert random_mean <= random + 0.05
    assert np.mean(scores) > random_mean + 0.1


@pytest.mark.parametrize("task", TASKS)
def test_textbook_agents_solve_larger_graphs(task):
    results = parlour.evaluate(ENV_ID, ["textbook"], episodes=4, seed=1, env_kwargs={"task": task, "num_players": 32}, progress=False)
    assert all(record["outcome"]["details"]["solved"] for record in results.records)


def test_one_random_agent_among_textbook_ones_costs_the_team():
    """Mixed-partner play: the team's score measures one agent's contribution."""
    lineup = {"player_0": "random", **{f"player_{i}": "textbook" for i in range(1, 8)}}
    results = parlour.evaluate(ENV_ID, lineup, episodes=40, seed=0, env_kwargs={"task": "leader_election"}, progress=False)
    assert np.mean([record["outcome"]["details"]["score"] for record in results.records]) < 0.5
