"""The core protocol beyond one text in, one move out: tools, a user's registered game, messages, teams,
truncation, the action cap, snapshots, seeds shared by the Gymnasium face and the runner, and the API checkers.

The tool game here lives in a module written to a temporary folder outside the package, as a user's would.
"""

from __future__ import annotations

import importlib
import json
import pickle
import sys
import textwrap
import time
import warnings

import gymnasium
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test

import parlour
from parlour.envs import registry
from parlour.envs.core.context import Context
from parlour.envs.core.match import Match
from tests.conftest import ENV_IDS

LEDGER_SOURCE = '''
"""A small tool game: each player looks keys up in a ledger, then answers the value of the key it was asked."""

from parlour import Game, InvalidMove, Tool, register
from parlour.envs.core.game import winners_by_score


class Ledger(Game):
    """Two players; ``lookup(key)`` reads the ledger, ``answer(value)`` is the move; +1 for a right answer."""

    name = "TestLedger"
    description = "Look a key up with a tool, then answer its value."
    category = "test"
    zero_sum = False

    def __init__(self, *, keys: int = 5):
        self.players = ["player_0", "player_1"]
        self.keys = keys
        self.tools = [
            Tool("lookup", "The value stored under a key.",
                 {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"], "additionalProperties": False}),
            Tool("answer", "Your final answer: the value of the key you were asked.",
                 {"type": "object", "properties": {"value": {"type": "integer"}}, "required": ["value"], "additionalProperties": False},
                 final=True),
        ]
        self.table, self.asked, self.correct, self.turn = {}, {}, {}, 0

    def start(self, ctx):
        self.table = {f"k{i}": int(ctx.rng.integers(100)) for i in range(self.keys)}
        self.asked = {p: f"k{int(ctx.rng.integers(self.keys))}" for p in self.players}
        self.correct = {p: 0.0 for p in self.players}
        self.turn = 0
        for player in self.players:
            ctx.tell(f"Your question: the value of {self.asked[player]}?", to=player)

    def to_move(self):
        return [self.players[self.turn]]

    def rules(self, player):
        return f"You are {player}. Call lookup(key) to read the ledger, then answer(value)."

    def prompt(self, player, legal):
        return "Call a tool."

    def call_tool(self, player, name, arguments):
        key = arguments["key"]
        return f"{key} = {self.table[key]}" if key in self.table else f"there is no key {key}"

    def parse(self, player, text):
        raise InvalidMove("Answer by calling answer(value).")

    def apply(self, ctx, moves):
        ((player, move),) = moves.items()
        self.correct[player] = float(move["arguments"]["value"] == self.table[self.asked[player]])
        ctx.reward(player, self.correct[player])
        ctx.tell(f"{player} has answered.", kind="move", sender=player)
        self.turn += 1
        if self.turn == len(self.players):
            ctx.finish(reason="both players answered", winners=winners_by_score(self.correct))

    def view(self, player):
        return {"question": self.asked[player]}

    def render(self):
        return " ".join(f"{k}={v}" for k, v in self.table.items())


register(Ledger)
'''

LEDGER_ID = "parlour/TestLedger-v0"


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    """The Ledger game, imported from a module outside the package and registered by it."""
    folder = tmp_path_factory.mktemp("user_games")
    (folder / "user_ledger.py").write_text(textwrap.dedent(LEDGER_SOURCE), encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module("user_ledger")
        yield module.Ledger
    finally:
        sys.path.remove(str(folder))


def answer_value(observation: dict) -> int:
    """The value a player looked up, read from the tool result in its messages."""
    results = [m["text"] for m in observation["messages"] if m["kind"] == "tool_result"]
    return int(results[-1].split("=")[1])


class LedgerAgent:
    """Plays the Ledger with one tool-call syntax: look the asked key up, then answer its value."""

    def __init__(self, syntax: str):
        self.syntax = syntax

    def act(self, observation):
        key = observation["view"]["question"]
        looked_up = any(m["kind"] == "tool_result" for m in observation["messages"])
        name, arguments = ("answer", {"value": answer_value(observation)}) if looked_up else ("lookup", {"key": key})
        if self.syntax == "openai":
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}],
            }
            return json.dumps(message)
        if self.syntax == "openai_dict":
            return {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}
        if self.syntax == "tool_json":
            return f'I will use a tool. {{"tool": "{name}", "arguments": {json.dumps(arguments)}}}'
        if self.syntax == "hermes":
            return f'<think>plan</think><tool_call>{{"name": "{name}", "arguments": {json.dumps(arguments)}}}</tool_call>'
        assert self.syntax == "tag"
        return f"<lookup>{key}</lookup>" if name == "lookup" else f'{{"name": "answer", "arguments": {json.dumps(arguments)}}}'


@pytest.mark.parametrize("syntax", ["openai", "openai_dict", "tool_json", "hermes", "tag"])
def test_every_tool_call_syntax_drives_a_whole_episode(ledger, syntax):
    match = Match(ledger, {})
    match.reset(7)
    agent = LedgerAgent(syntax)
    while not match.over:
        player = match.acting()[0]
        observation = match.agent_observation(player)
        assert [tool["function"]["name"] for tool in observation["tools"]] == ["lookup", "answer"]
        match.submit(player, agent.act(observation))
    assert [step["error"] for step in match.steps] == [None] * 4
    assert match.returns == {"player_0": 1.0, "player_1": 1.0}
    assert match.outcome.winners == ["player_0", "player_1"]
    lookups = [step["calls"][0] for step in match.steps if step["move"] is None]
    assert [call["name"] for call in lookups] == ["lookup", "lookup"] and all(len(call["result"]) == 32 for call in lookups)
    fresh = parlour.replay(json.loads(json.dumps(match.record())))
    assert fresh["steps"] == match.record()["steps"]


def test_a_tool_result_reaches_only_its_caller_and_does_not_advance_the_game(ledger):
    match = Match(ledger, {})
    match.reset(3)
    match.submit("player_0", '{"tool": "lookup", "arguments": {"key": "k1"}}')
    assert match.acting() == ["player_0"] and match.turns == 0
    mine = match.agent_observation("player_0")["messages"]
    result = [m for m in mine if m["kind"] == "tool_result"]
    assert len(result) == 1 and result[0]["to"] == ["player_0"] and result[0]["sender"] == "lookup"
    assert result[0]["text"].startswith("k1 = ")
    theirs = match.agent_observation("player_1")["messages"]
    assert not any(m["kind"] == "tool_result" for m in theirs)
    assert [m["kind"] for m in theirs] == ["rules", "event"]


@pytest.mark.parametrize(
    "action, expected",
    [
        ('{"tool": "delete", "arguments": {}}', "no tool 'delete'"),
        ('{"tool": "lookup", "arguments": {"key": 3}}', "Accepted: lookup(key: string)"),
        ('{"tool": "lookup", "arguments": {"key": "k1", "extra": 1}}', "Additional properties"),
        ('<tool_call>{"name": "lookup", "arguments": </tool_call>', "JSON object"),
        ('{"tool_calls": [{"function": {"name": "lookup", "arguments": "{bad json"}}]}', "not valid JSON"),
        ('{"tool": "lookup", "arguments": ' + "[" * 100_000 + "]" * 100_000 + "}", "Answer by calling"),
        ("just words", "Answer by calling answer(value)"),
    ],
)
def test_bad_tool_calls_are_invalid_actions_that_say_what_is_accepted(ledger, action, expected):
    match = Match(ledger, {"error_allowance": 5})
    match.reset(0)
    match.submit("player_0", action)
    assert expected in match.steps[-1]["error"]
    assert "Invalid action" in match.observation_text("player_0")
    parlour.replay(match.record())


def test_the_tool_budget_is_per_turn_and_exhausting_it_is_an_invalid_action(ledger):
    match = Match(ledger, {"max_tool_calls": 2})
    match.reset(0)
    call = '{"tool": "lookup", "arguments": {"key": "k0"}}'
    match.submit("player_0", call + call)
    assert match.steps[-1]["error"] is None and len(match.steps[-1]["calls"]) == 2
    assert match.agent_observation("player_0")["tool_calls_left"] == 0
    match.submit("player_0", call)
    assert "budget of 2" in match.steps[-1]["error"]
    match.submit("player_0", '{"tool": "answer", "arguments": {"value": 1}}')
    assert match.acting() == ["player_1"]
    match.submit("player_1", call)
    assert match.steps[-1]["error"] is None
    # Games read the episode's count (to charge for tool use, say); the turn's budget is the engine's.
    assert match.ctx.tool_calls == {"player_0": 2, "player_1": 1}


def test_replay_rejects_a_tampered_tool_result(ledger):
    match = Match(ledger, {})
    match.reset(1)
    agent = LedgerAgent("tool_json")
    while not match.over:
        player = match.acting()[0]
        match.submit(player, agent.act(match.agent_observation(player)))
    record = match.record()
    record["steps"][0]["calls"][0]["result"] = "0" * 32
    with pytest.raises(parlour.ReplayMismatch, match="tool calls"):
        parlour.replay(record)
    with pytest.raises(ValueError, match="no tools"):
        Match(parlour.game_class("parlour/TicTacToe-v0"), {"max_tool_calls": 3})


def test_a_users_game_is_registered_everywhere_and_evaluates_and_replays(ledger):
    assert parlour.game_class(LEDGER_ID) is ledger
    assert LEDGER_ID in parlour.list_envs()
    assert LEDGER_ID in gymnasium.registry and LEDGER_ID in pettingzoo.aec_registry and LEDGER_ID in pettingzoo.parallel_registry
    agents = [LedgerAgent("hermes"), LedgerAgent("openai")]
    results = parlour.evaluate(LEDGER_ID, agents, episodes=6, seed=3, progress=False)
    assert all(record["returns"] == {"player_0": 1.0, "player_1": 1.0} for record in results.records)
    for record in results.records:
        parlour.replay(record)
    # Worker processes import the user's module from the class reference the plan carries.
    spawned = parlour.evaluate(LEDGER_ID, ["python:tests.test_core_protocol:hermes_agent"] * 2, episodes=4, seed=3, workers=2, progress=False)
    assert sorted(r["episode"] for r in spawned.records) == [0, 1, 2, 3]
    env = pettingzoo.make("aec", LEDGER_ID)
    env.reset(seed=2)
    agent = LedgerAgent("tag")
    for name in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else agent.act(env.match.agent_observation(name))
        env.step(action)
    assert parlour.replay(env.record())["returns"] == {"player_0": 1.0, "player_1": 1.0}


def hermes_agent() -> LedgerAgent:
    """A factory for the ``python:`` agent spec used by worker processes."""
    return LedgerAgent("hermes")


def test_registering_another_game_under_a_taken_id_is_refused(ledger):
    impostor = type("Ledger", (parlour.Game,), {"name": "TestLedger", "__module__": "somewhere_else"})
    with pytest.raises(ValueError, match="already registered"):
        parlour.register(impostor)
    with pytest.raises(TypeError, match="subclass of parlour.Game"):
        parlour.register(object)
    assert parlour.register(ledger) is ledger


def test_games_published_through_entry_points_are_found(tmp_path):
    source = LEDGER_SOURCE.replace('"TestLedger"', '"TestPublishedLedger"').replace("register(Ledger)", "")
    (tmp_path / "published_games.py").write_text(textwrap.dedent(source), encoding="utf-8")
    dist = tmp_path / "published_games-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: published-games\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[parlour.games]\nledger = published_games:Ledger\n", encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        registry._load.cache_clear()
        assert "parlour/TestPublishedLedger-v0" in parlour.list_envs()
        assert "parlour/TestPublishedLedger-v0" in gymnasium.registry
    finally:
        sys.path.remove(str(tmp_path))


def test_unknown_ids_and_options_suggest_the_fix():
    with pytest.raises(KeyError, match="did you mean 'parlour/TicTacToe-v0'"):
        parlour.game_class("TicTacToe-v0")
    with pytest.raises(KeyError, match="did you mean 'parlour/ConnectFour-v0'"):
        parlour.game_class("parlour/ConectFour-v0")
    with pytest.raises(TypeError, match="did you mean 'error_allowance'.*max_turns"):
        parlour.make_aec("parlour/TicTacToe-v0", eror_allowance=3)


def test_tool_games_pass_the_api_checkers(ledger):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(pettingzoo.make("aec", LEDGER_ID), num_cycles=50)
        parallel_api_test(pettingzoo.make("parallel", LEDGER_ID), num_cycles=50)
        env = gymnasium.make(LEDGER_ID, opponent=LedgerAgent("tool_json")).unwrapped
        check_env(env, skip_render_check=True)
        observation, _ = env.reset(seed=0)
        assert observation["tools"][0]["function"]["name"] == "lookup"
        assert env.observation_space.contains(observation)


# ------------------------------------------------------------------ messages, teams, truncation, the cap


def test_observations_carry_typed_messages_from_which_the_text_is_rendered():
    env = parlour.make_aec("parlour/TicTacToe-v0")
    env.reset(seed=0)
    observation = env.observe("player_0")
    kinds = [m["kind"] for m in observation["messages"]]
    assert kinds == ["rules", "prompt"]
    assert observation["text"] == "\n\n".join(f"\u25b6 {m['text']}" for m in observation["messages"])
    env.step("b2")
    seen = env.observe("player_1")["messages"]
    assert [m["kind"] for m in seen] == ["rules", "move", "prompt"]
    assert seen[1]["sender"] == "player_0" and seen[1]["to"] is None and "b2" in seen[1]["text"]
    assert env.observation_space("player_1").contains(env.observe("player_1"))


def test_context_delivers_to_a_subset_and_finishes_with_teams():
    ctx = Context(["a", "b", "c", "d"], np.random.default_rng(0))
    ctx.say("a", "meet at night", to=["a", "c"])
    assert [len(ctx.inboxes[p]) for p in "abcd"] == [1, 0, 1, 0]
    assert ctx.inboxes["c"][0] == {"sender": "a", "to": ["a", "c"], "kind": "talk", "text": "meet at night"}
    with pytest.raises(ValueError, match="kind"):
        ctx.tell("x", kind="shout")
    ctx.finish({"a": 1, "c": 1, "b": -1, "d": -1}, reason="the night team won", teams={"night": ["a", "c"], "day": ["b", "d"]}, winning_team="night")
    assert ctx.ending.winners == ["a", "c"] and ctx.step_rewards["a"] == 1.0
    with pytest.raises(RuntimeError, match="already ended"):
        ctx.finish(reason="again")
    with pytest.raises(ValueError, match="winning_team"):
        Context(["a"], np.random.default_rng(0)).finish(reason="x", teams={"t": ["a"]}, winning_team="u")


@pytest.mark.parametrize("env_id", ["parlour/TicTacToe-v0", "parlour/KuhnPoker-v0", "parlour/Commons-v0"])
def test_max_turns_truncates_on_every_face(env_id):
    aec = parlour.make_aec(env_id, max_turns=1)
    aec.reset(seed=0)
    while not aec.match.over:
        agent = aec.agent_selection
        aec.step(aec.infos[agent]["legal_moves"][0] if aec.infos[agent].get("legal_moves") else "[pass]")
    assert all(aec.truncations.values()) and not any(aec.terminations.values())
    outcome = aec.match.outcome
    assert outcome.truncated and outcome.winners == [] and "turn limit" in outcome.reason
    parlour.replay(aec.record())

    parallel = parlour.make_parallel(env_id, max_turns=1)
    _, infos = parallel.reset(seed=0)
    truncations = {}
    while parallel.agents:
        actions = {a: (infos[a].get("legal_moves") or ["[pass]"])[0] for a in parallel.agents if infos[a]["acting"]}
        _, _, terminations, truncations, infos = parallel.step(actions)
    assert all(truncations.values()) and not any(terminations.values())

    gym_env = gymnasium.make(env_id, max_turns=1, opponent="random").unwrapped
    _, info = gym_env.reset(seed=0)
    terminated = truncated = False
    while not (terminated or truncated):
        _, _, terminated, truncated, info = gym_env.step((info.get("legal_moves") or ["[pass]"])[0])
    assert truncated and not terminated and info["outcome"]["truncated"]


def test_long_actions_are_cut_before_parsing_and_the_record_says_so():
    match = Match(parlour.game_class("parlour/TicTacToe-v0"), {"max_action_chars": 100})
    match.reset(0)
    match.submit("player_0", "x" * 10_000_000 + " b2")
    step = match.steps[-1]
    assert len(step["action"]) == 100 and step["action_chars"] == 10_000_003 and step["error"]
    match.submit("player_0", "b2" + "!" * 500)
    assert match.steps[-1]["move"] == "b2" and match.steps[-1]["action_chars"] == 502
    assert len(json.dumps(match.record())) < 10_000
    parlour.replay(match.record())
    with pytest.raises(ValueError, match="max_action_chars"):
        Match(parlour.game_class("parlour/TicTacToe-v0"), {"max_action_chars": 0})


# ------------------------------------------------------------------ audit: records that must replay


def test_out_of_range_indices_in_vector_mode_replay():
    env = parlour.make_aec("parlour/TicTacToe-v0", obs_mode="vector")
    env.reset(seed=0)
    for _ in range(3):
        env.step(-1)
    assert env.match.over
    record = env.record()
    assert [step["action"] for step in record["steps"]] == [-1, -1, -1]
    assert parlour.replay(json.loads(json.dumps(record)))["returns"] == record["returns"]


@pytest.mark.parametrize("action", [3.5, None, b"b2", ["b2"], True, {"move": "b2"}])
def test_actions_that_are_not_text_are_invalid_and_replay(action):
    match = Match(parlour.game_class("parlour/TicTacToe-v0"), {})
    match.reset(0)
    match.submit("player_0", action)
    assert match.steps[-1]["error"] and match.steps[-1]["action"] is None
    assert parlour.replay(json.loads(json.dumps(match.record())))["steps"] == match.record()["steps"]


# ------------------------------------------------------------------ snapshots


def _drive(env, actions_from, steps: int) -> list:
    """Play ``steps`` AEC steps with actions chosen by ``actions_from(agent, info)``; everything observed, in order."""
    seen = []
    for _ in range(steps):
        if not env.agents:
            break
        agent = env.agent_selection
        observation, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else actions_from(agent, info)
        seen.append((agent, json.dumps(observation, default=lambda a: a.tolist()), reward, termination, truncation, json.dumps(info)))
        env.step(action)
    return seen


@pytest.mark.parametrize("env_id", [e for e in ENV_IDS if registry.game_class(e).fixed_rules])
def test_games_declaring_fixed_rules_give_the_same_rules_in_every_episode(env_id):
    # The engine writes fixed rules once; a game whose rules depend on the deal must not declare them fixed.
    match = Match(registry.game_class(env_id))
    first = {}
    for seed in range(6):
        match.reset(seed)
        asked = {player: match.game.rules(player) for player in match.players}
        assert {player: match.ctx.inboxes[player][0]["text"] for player in match.players} == asked
        first = first or asked
        assert asked == first


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_restoring_a_snapshot_then_playing_the_same_actions_gives_the_same_episode(env_id):
    env = parlour.make_aec(env_id)
    env.reset(seed=5)
    agents = {p: parlour.make_agent("random", env_id=env_id) for p in env.possible_agents}
    for index, agent in enumerate(agents.values()):
        agent.reset(seed=index)

    def choose(agent, info):
        return agents[agent].act(env.match.agent_observation(agent))

    _drive(env, choose, 3)
    snapshot = pickle.loads(pickle.dumps(env.snapshot()))
    agent_state = pickle.dumps(agents)
    first = _drive(env, choose, 400)
    first_record = env.record()
    env.restore(snapshot)
    agents = pickle.loads(agent_state)
    assert _drive(env, choose, 400) == first
    assert env.record() == first_record


def test_gymnasium_snapshot_keeps_the_opponents():
    env = gymnasium.make("parlour/LiarsDice-v0", opponent="probabilistic").unwrapped
    _, info = env.reset(seed=1)
    _, _, _, _, info = env.step(info["legal_moves"][0])
    snapshot = env.snapshot()
    rng = np.random.default_rng(0)
    trace = []
    done = False
    while not done:
        observation, reward, terminated, truncated, info = env.step(info["legal_moves"][int(rng.integers(len(info["legal_moves"])))])
        trace.append((observation["text"], reward))
        done = terminated or truncated
    env.restore(snapshot)
    rng = np.random.default_rng(0)
    again = []
    done = False
    info = env.observer.info(env.player)
    while not done:
        observation, reward, terminated, truncated, info = env.step(info["legal_moves"][int(rng.integers(len(info["legal_moves"])))])
        again.append((observation["text"], reward))
        done = terminated or truncated
    assert again == trace
    with pytest.raises(ValueError, match="not of this"):
        parlour.make_aec("parlour/TicTacToe-v0").restore(snapshot)


# ------------------------------------------------------------------ the Gymnasium face


class FirstLegal:
    """A deterministic agent: the first legal move."""

    name = "first_legal"

    def act(self, observation):
        return observation["legal_moves"][0]


@pytest.mark.parametrize("env_id", ["parlour/KuhnPoker-v0", "parlour/LiarsDice-v0", "parlour/ConnectFour-v0"])
def test_a_gymnasium_episode_is_rerun_by_the_runner(env_id):
    env = gymnasium.make(env_id, opponent="random").unwrapped
    observation, info = env.reset(seed=42)
    learner = FirstLegal()
    done = False
    while not done:
        _, _, terminated, truncated, info = env.step(learner.act({"legal_moves": info["legal_moves"]}))
        done = terminated or truncated
    record = env.record()
    rerun = parlour.evaluate(env_id, [learner, "random"], episodes=1, seed=42, rotate_seats=False, progress=False).records[0]
    assert rerun["seed"] == record["seed"] and rerun["steps"] == record["steps"]
    assert rerun["agent_seeds"]["player_1"] == record["agent_seeds"]["player_1"]


def test_maskable_ppo_takes_the_vector_face_without_a_wrapper():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    env = gymnasium.make("parlour/TicTacToe-v0", obs_mode="vector", opponent="random")
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, verbose=0)
    model.learn(128)
    masks = get_action_masks(model.get_env())
    assert masks.shape == (1, 9) and masks.dtype == bool
    assert (masks[0] == env.unwrapped.action_masks()).all() and masks.any()


def test_async_vector_environments_work_in_text_mode():
    envs = gymnasium.make_vec("parlour/TicTacToe-v0", num_envs=2, vectorization_mode="async", opponent="random")
    try:
        observations, infos = envs.reset(seed=3)
        assert len(observations["text"]) == 2 and "Tic-tac-toe" in observations["text"][0]
        assert observations["messages"][1][0]["kind"] == "rules"
        for _ in range(6):
            # After an episode ends the next step only resets it (next-step autoreset), whatever the action.
            observations, rewards, terminations, truncations, infos = envs.step([legal[0] if legal else "" for legal in infos["legal_moves"]])
        assert all(isinstance(text, str) for text in observations["text"])
    finally:
        envs.close()


def test_an_eliminated_learner_is_terminated_and_the_others_play_the_game_out():
    env = gymnasium.make("parlour/LiarsDice-v0", num_players=3, dice_per_player=1, opponent="random").unwrapped
    for seed in range(50):
        _, info = env.reset(seed=seed)
        total = 0.0
        terminated = truncated = False
        while not (terminated or truncated):
            # Bid high at once so that the learner's bids are called and it goes out early.
            _, reward, terminated, truncated, info = env.step(info["legal_moves"][-2] if len(info["legal_moves"]) > 1 else "liar")
            total += reward
        if "eliminated" in info and info["outcome"]["winner"] != env.player:
            break
    else:
        pytest.fail("in 50 seeds the learner was never eliminated")
    assert terminated and not truncated and env.match.over
    # The other two played on until one of them lost its die too.
    assert env.player in env.match.eliminated and len(env.match.eliminated) == 2
    assert total == pytest.approx(env.match.returns[env.player]) == pytest.approx(-0.5)
    assert parlour.replay(env.record())["returns"] == env.record()["returns"]
    with pytest.raises(RuntimeError, match="over"):
        env.step("liar")


def test_a_game_can_offer_each_player_its_own_tools(ledger):
    class OnlyFirstLooksUp(ledger):
        """The Ledger where only player_0 may look keys up."""

        name = "TestLedgerRoles"

        def tools_for(self, player):
            return self.tools if player == "player_0" else [tool for tool in self.tools if tool.final]

    match = Match(OnlyFirstLooksUp, {})
    match.reset(0)
    assert [t["function"]["name"] for t in match.agent_observation("player_0")["tools"]] == ["lookup", "answer"]
    match.submit("player_0", '{"tool": "answer", "arguments": {"value": 1}}')
    observation = match.agent_observation("player_1")
    assert [t["function"]["name"] for t in observation["tools"]] == ["answer"]
    match.submit("player_1", '{"tool": "lookup", "arguments": {"key": "k0"}}')
    assert "There is no tool 'lookup'" in match.steps[-1]["error"]
    env = parlour.make_aec("parlour/TestLedger-v0")
    assert env.observation_space("player_1")["tools"].contains([env.match.tools["answer"].spec()])


def test_a_bad_tool_schema_is_refused_when_the_tool_is_declared():
    with pytest.raises(ValueError, match="invalid parameters schema"):
        parlour.Tool("broken", "A tool with a schema that is not one.", {"type": "no such type"})


@pytest.mark.parametrize(
    "piece",
    ['{"tool":', '{"tool":\n', '{"name": 1}\n', "<tool_call>", "<lookup>", '[{"id"', "{", '"', "<tool_call>{}</tool_call>"],
)
def test_reading_tool_calls_takes_linear_time_on_adversarial_text(ledger, piece):
    """A megabyte built to make a scanner backtrack is read in well under a second."""
    from parlour.envs.core.tools import find_calls

    text = (piece * (1_000_000 // len(piece) + 1))[:1_000_000]
    tools = Match(ledger, {}).game.tools
    started = time.process_time()
    try:
        find_calls(text, tools)
    except parlour.InvalidMove:
        pass
    assert time.process_time() - started < 1.0


def test_a_tool_answer_beyond_max_tool_result_chars_is_cut_with_a_note_and_replays(ledger):
    match = Match(ledger, {"max_tool_result_chars": 4})
    match.reset(0)
    key = match.game.asked["player_0"]
    match.submit("player_0", json.dumps({"tool": "lookup", "arguments": {"key": key}}))
    result = [m["text"] for m in match.messages("player_0") if m["kind"] == "tool_result"][-1]
    assert result.startswith(f"{key} = "[:4]) and "more characters cut: max_tool_result_chars is 4" in result
    parlour.replay(json.loads(json.dumps(match.record())))
    with pytest.raises(ValueError, match="max_tool_result_chars"):
        Match(parlour.game_class("parlour/TicTacToe-v0"), {"max_tool_result_chars": 10})
