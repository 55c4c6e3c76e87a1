"""SplitMaze: the maze and its split, agreement, bumps, talk, endings, the three modes, and the measured baselines."""

from __future__ import annotations

import json
import warnings

import gymnasium
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test

import parlour
from parlour.envs.core.match import Match
from parlour.envs.social.split_maze import SplitMaze, cell_name, distances, generate_maze, parse_cell

ENV_ID = "parlour/SplitMaze-v0"

#: A hand-built 4x4 maze: the shortest path a1 b1 b2 b3 c3 d3 d4 has 6 steps.
LAYOUT = [
    "..#.",
    "#.#.",
    "....",
    "###.",
]


def built(mode: str = "pair", **options) -> Match:
    """A started match on :data:`LAYOUT`, goal d4; in pairs ``player_0`` knows columns a-b and ``player_1`` c-d."""
    match = Match(SplitMaze, {"size": 4, "mode": mode, **options})
    match.reset(0)
    game = match.game
    game.walls = np.array([[c == "#" for c in row] for row in LAYOUT])
    game.goal, game.position, game.shortest = (3, 3), (0, 0), 6
    game.turn_limit = options.get("turn_limit", 18)
    for player in game.players:
        known = np.zeros((4, 4), dtype=bool)
        if mode == "solo":
            known[:] = True
        else:
            known[:, :2] = player == "player_0"
            known[:, 2:] = player == "player_1"
            known[0, 0] = known[3, 3] = True
        game.known[player] = known
    return match


def turn(match: Match, *replies: str) -> None:
    """One turn: each player's reply in seat order, failing on an invalid one."""
    for player, reply in zip(match.players, replies):
        match.submit(player, reply)
        assert match.steps[-1]["error"] is None, match.steps[-1]["error"]


def walk(match: Match, steps: list[str]) -> None:
    """Both players propose each step of ``steps`` in turn (``silent`` or ``solo``)."""
    for step in steps:
        turn(match, *[step] * len(match.players))


# ------------------------------------------------------------------ the maze and the split


@pytest.mark.parametrize("size", [4, 6, 9, 12])
def test_generated_mazes_are_trees_of_one_cell_corridors(size):
    for seed in range(10):
        walls = generate_maze(np.random.default_rng(seed), size)
        open_cells = {(r, c) for r in range(size) for c in range(size) if not walls[r, c]}
        assert not walls[0, 0] and len(distances(walls, (0, 0))) == len(open_cells)
        edges = sum(1 for r, c in open_cells for cell in ((r + 1, c), (r, c + 1)) if cell in open_cells)
        assert edges == len(open_cells) - 1  # connected with no cycle: a tree
        assert not any(walls[r : r + 2, c : c + 2].sum() == 0 for r in range(size - 1) for c in range(size - 1))


def test_the_goal_is_the_farthest_open_cell_and_the_cells_are_split_in_disjoint_halves():
    for seed in range(10):
        match = Match(SplitMaze, {})
        match.reset(seed)
        game = match.game
        dist = distances(game.walls, (0, 0))
        assert dist[game.goal] == max(dist.values()) == game.shortest and game.turn_limit == 3 * game.shortest
        mine, theirs = game.known["player_0"], game.known["player_1"]
        both = mine & theirs
        assert set(zip(*np.nonzero(both))) == {(0, 0), game.goal}
        assert (mine | theirs).all()
        assert abs(int(mine.sum()) - int(theirs.sum())) <= 1


def test_cell_names():
    assert cell_name(0, 0) == "a1" and cell_name(5, 2) == "c6"
    assert parse_cell("C6", 6) == (5, 2) and parse_cell("g1", 6) is None and parse_cell("a7", 6) is None and parse_cell("a", 6) is None


# ------------------------------------------------------------------ turns


def test_a_step_happens_only_when_both_proposals_agree():
    match = built()
    turn(match, "[step] east", "[step] stay")
    game = match.game
    assert game.position == (0, 0) and game.disagreements == 1 and game.steps == 0
    assert "player_0 proposed east, player_1 proposed stay. The proposals differ" in match.observation_text("player_1")
    turn(match, "Let's go. [step] east", "ok [step] east")
    assert game.position == (0, 1) and game.steps == 1 and match.game.turn == 2
    assert "The token moves east to b1." in match.observation_text("player_0")
    turn(match, "[step] stay", "[step] stay")
    assert game.position == (0, 1) and game.steps == 1 and game.turn == 3


def test_a_bump_counts_as_a_step_and_reveals_the_wall_to_both():
    match = built()
    assert match.game.view("player_1")["map"][1][0] == "?"
    turn(match, "[step] south", "[step] south")
    game = match.game
    assert game.position == (0, 0) and game.steps == 1 and game.bumps == 1
    assert game.view("player_1")["map"][1][0] == "#"
    assert "bumps into a wall at a2" in match.observation_text("player_1")


def test_reaching_the_goal_pays_everyone_the_path_efficiency():
    match = built()
    turn(match, "[step] south", "[step] south")  # a bump: 7 steps for a 6-step path
    for step in ["east", "south", "south", "east", "east", "south"]:
        turn(match, f"[step] {step}", f"[step] {step}")
    outcome = match.outcome
    assert match.over and outcome.winners == ["player_0", "player_1"] and outcome.winning_team == "pair"
    assert outcome.teams == {"pair": ["player_0", "player_1"]}
    assert match.returns == {"player_0": pytest.approx(6 / 7), "player_1": pytest.approx(6 / 7)}
    assert outcome.details == {
        "mode": "pair",
        "success": True,
        "turns": 7,
        "steps": 7,
        "bumps": 1,
        "disagreements": 0,
        "shortest": 6,
        "path_efficiency": pytest.approx(6 / 7),
        "turn_efficiency": pytest.approx(6 / 7),
    }


def test_the_turn_limit_ends_the_game_with_nothing_for_anyone():
    match = built(turn_limit=2)
    turn(match, "[step] east", "[step] stay")
    turn(match, "[step] east", "[step] east")
    outcome = match.outcome
    assert match.over and not outcome.truncated and outcome.winners == []
    assert match.returns == {"player_0": 0.0, "player_1": 0.0}
    assert outcome.details["success"] is False and outcome.details["path_efficiency"] == 0.0 and outcome.details["disagreements"] == 1
    assert "turn limit (2)" in outcome.reason


def test_talk_reaches_only_the_partner_verbatim_and_the_last_step_tag_counts():
    match = built()
    message = "Walls at c1 and c2 [step] north? no.\n  ✓ {json}"
    match.submit("player_0", f"{message} [step] east")
    assert match.game.parse("player_0", f"{message} [step] east") == {"step": "east", "talk": message}
    match.submit("player_1", "[step] east")
    seen = match.agent_observation("player_1")
    (talk,) = [m for m in seen["messages"] if m["kind"] == "talk"]
    assert talk == {"sender": "player_0", "to": ["player_1"], "kind": "talk", "text": message}
    assert f"player_0: {json.dumps(message, ensure_ascii=False)}\n\n" in seen["text"]
    assert seen["view"]["heard"] == (message,)
    assert not any(m["kind"] == "talk" for m in match.agent_observation("player_0")["messages"])
    assert match.agent_observation("player_0")["view"]["heard"] == ()
    assert match.game.position == (0, 1)


@pytest.mark.parametrize(
    "reply, error",
    [
        ("let's go east", "No step found"),
        ("[step] north", "would leave the grid"),
        ("[step] west", "would leave the grid"),
        ("[step] up", "No step found"),
        ("x" * 2001 + " [step] east", "the limit is 2000"),
    ],
)
def test_invalid_replies(reply, error):
    match = built()
    match.submit("player_0", reply)
    assert error in match.last_error["player_0"]
    assert match.acting() == ["player_0", "player_1"]


def test_a_player_sees_only_its_half_until_cells_are_revealed():
    match = Match(SplitMaze, {})
    match.reset(4)
    game = match.game
    for player in game.players:
        view = match.agent_observation(player)["view"]
        unknown = {(r, c) for r, row in enumerate(view["map"]) for c, symbol in enumerate(row) if symbol == "?"}
        assert unknown == set(zip(*np.nonzero(game.known[game.other(player)] & ~game.known[player])))
        picture = match.observation_text(player).split("Your map:\n")[1]
        assert picture.count("?") == len(unknown)


def test_forfeit_costs_the_offender_one_and_its_partner_nothing():
    match = built(error_allowance=0)
    match.submit("player_0", "[step] east")
    match.submit("player_1", "no idea")
    assert match.over and match.returns == {"player_0": 0.0, "player_1": -1.0} and match.outcome.winners == []


@pytest.mark.parametrize("options", [{"size": 3}, {"size": 13}, {"mode": "trio"}, {"turn_limit": 0}, {"size": True}])
def test_bad_options_are_rejected(options):
    with pytest.raises(ValueError):
        SplitMaze(**options)


# ------------------------------------------------------------------ silent and solo


def test_silent_mode_has_enumerable_steps_and_a_vector_with_the_partners_proposal():
    match = built("silent")
    assert match.legal_moves("player_0") == ["east", "south", "stay"]
    assert match.game.parse("player_0", "I would go south, but east") == "east"
    turn(match, "east", "stay")
    vector = match.game.vector("player_0")
    cells = 16
    assert vector.shape == (match.game.vector_size,) and vector.dtype == np.float32
    assert vector[:cells].reshape(4, 4)[0].tolist() == [1, 1, 0, 0]  # a1, b1 open; c1, d1 not known to player_0
    assert vector[cells : 2 * cells].reshape(4, 4)[1].tolist() == [1, 0, 0, 0]  # a2 a known wall
    assert vector[2 * cells] == 1 and vector[3 * cells + 15] == 1  # the token on a1, the goal on d4
    assert vector[4 * cells] == pytest.approx(1 / 18)
    assert vector[4 * cells + 1 :].tolist() == [0, 0, 0, 0, 1]  # player_1 proposed stay
    walk(match, ["east"])
    assert match.legal_moves("player_0") == ["east", "south", "west", "stay"]


def test_solo_mode_has_one_player_who_sees_everything_and_steps_alone():
    match = built("solo")
    assert match.players == ["player_0"]
    assert "?" not in "".join(match.agent_observation("player_0")["view"]["map"])
    walk(match, ["east", "south", "south", "east", "east", "south"])
    assert match.over and match.returns == {"player_0": 1.0} and match.outcome.winning_team == "solo"


@pytest.mark.parametrize("mode", ["silent", "solo"])
def test_enumerable_modes_pass_the_api_checkers(mode):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for obs_mode in ("text", "vector"):
            api_test(pettingzoo.make("aec", ENV_ID, mode=mode, obs_mode=obs_mode), num_cycles=100)
            parallel_api_test(pettingzoo.make("parallel", ENV_ID, mode=mode, obs_mode=obs_mode), num_cycles=100)
            check_env(gymnasium.make(ENV_ID, mode=mode, obs_mode=obs_mode, opponent="bfs").unwrapped, skip_render_check=True)
        sb3_check_env(gymnasium.make(ENV_ID, mode=mode, obs_mode="vector").unwrapped, warn=False)


def test_pair_mode_has_no_vector_face():
    with pytest.raises(ValueError, match="obs_mode='text'"):
        parlour.make_aec(ENV_ID, obs_mode="vector")


# ------------------------------------------------------------------ the scripted agents, measured


def play(names: list[str], seed: int, **options) -> Match:
    """One episode of scripted players, who must never make an invalid move."""
    match = Match(SplitMaze, options)
    match.reset(seed)
    agents = {p: parlour.make_agent(n, env_id=ENV_ID) for p, n in zip(match.players, names)}
    for index, agent in enumerate(agents.values()):
        agent.reset(seed=10 * seed + index)
    while not match.over:
        for player in list(match.acting()):
            match.submit(player, agents[player].act(match.agent_observation(player)))
            assert match.steps[-1]["error"] is None, match.steps[-1]
    return match


def measure(names: list[str], episodes: int = 50, **options) -> dict[str, float]:
    """Success rate, mean path efficiency and mean turns over seeds ``0..episodes-1``."""
    details = [play(names, seed, **options).outcome.details for seed in range(episodes)]
    return {key: float(np.mean([d[key] for d in details])) for key in ("success", "path_efficiency", "turns")}


def test_bfs_pairs_that_share_their_maps_do_as_well_as_a_solo_player():
    # Measured over seeds 0-49 (6x6): pair success 1.0, efficiency 1.0, 18.3 turns; solo 1.0, 1.0, 17.7 turns.
    pair, solo = measure(["bfs", "bfs"], mode="pair"), measure(["bfs"], mode="solo")
    assert pair["success"] == 1.0 and pair["path_efficiency"] >= 0.97
    assert solo["success"] == 1.0 and solo["path_efficiency"] == 1.0
    assert pair["turns"] <= solo["turns"] + 2


def test_without_talk_bfs_pairs_need_twice_the_turns_and_fail_a_tight_limit():
    # Measured over seeds 0-49: silent success 1.0 in 36.0 turns against solo's 17.7 (efficiency 0.79, from bumps);
    # with 30 turns, silent pairs succeed 0.18 of the time, pairs that talk and solo players always.
    silent, solo = measure(["bfs", "bfs"], mode="silent"), measure(["bfs"], mode="solo")
    assert silent["success"] >= 0.95 and silent["turns"] >= 1.7 * solo["turns"]
    assert silent["path_efficiency"] <= 0.9
    tight = {mode: measure(["bfs"] * (1 if mode == "solo" else 2), mode=mode, turn_limit=30)["success"] for mode in ("pair", "silent", "solo")}
    assert tight["pair"] == tight["solo"] == 1.0 and tight["silent"] <= 0.35


def test_random_players_almost_never_reach_the_goal_and_a_random_partner_sinks_bfs():
    # Measured over seeds 0-49: random pairs, random solo players and bfs with a random partner all succeed 0 times.
    for names, mode in ((["random", "random"], "pair"), (["random"], "solo"), (["bfs", "random"], "pair")):
        assert measure(names, mode=mode)["success"] <= 0.06


def test_scripted_episodes_replay_and_run_on_the_gymnasium_face():
    record = play(["bfs", "bfs"], 3).record()
    assert parlour.replay(record)["returns"] == record["returns"]
    env = gymnasium.make(ENV_ID, mode="silent", opponent="bfs", seat=1)
    observation, info = env.reset(seed=2)
    agent = parlour.make_agent("bfs", env_id=ENV_ID)
    done = False
    while not done:
        observation, reward, terminated, truncated, info = env.step(agent.act(env.unwrapped.match.agent_observation("player_1")))
        done = terminated or truncated
    assert info["outcome"]["details"]["success"] and reward > 0.5
