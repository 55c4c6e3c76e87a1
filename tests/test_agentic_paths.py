"""The agentic worlds on every path of issues 33 and 34: leaderboard, demo, Mixture, `parlour serve`, TRL, verifiers, MCP.

Each path gets one short test per world (parametrized over the five), played through the path's own machinery:
the leaderboard's challenges and replay, ``parlour demo``, ``gymnasium.make``, openenv-core's client, the TRL
environment class as TRL calls it, verifiers' eval runner and the mcp package's client. Where an agent is needed
the world's ``expert`` plays (the privileged ones, SQL's and Services', measured locally only), its tool calls
split into one bridge call each, as a model's would be.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import Iterator
from typing import Any

import gymnasium
import pytest

import parlour
from parlour.baselines import scripted_names
from parlour.cli import main
from parlour.envs.core.gym import GymGame
from parlour.envs.core.match import make_game
from parlour.envs.core.tools import Tool, find_calls
from parlour.envs.registry import game_class
from parlour.evaluation.rollout import make_plan
from parlour.evaluation.seating import Lineup, counted_lineups, lineups
from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.ratings import CATEGORY_TITLES
from parlour.leaderboard.verify import Rejected, as_bundle, verify_bundle

HOUSEHOLD, SHOP, SQL, SERVICES, DESK = (f"parlour/{name}-v0" for name in ("Household", "Shop", "SQL", "Services", "ServiceDesk"))
WORLDS = [HOUSEHOLD, SHOP, SQL, SERVICES, DESK]
#: The worlds whose expert reads the hidden goal through a privileged channel: never counted on a leaderboard.
PRIVILEGED = [SQL, SERVICES]
#: A seed each world's expert solves at its default difficulty (checked by the tests that play it: reward 1).
SOLVED = 3


def players(env_id: str) -> list[str]:
    """The world's seats."""
    return list(make_game(game_class(env_id), {}).players)


def expert(env_id: str) -> Any:
    """The world's expert, seeded."""
    agent = parlour.make_agent("expert", env_id=env_id)
    agent.reset(seed=0)
    return agent


def as_calls(action: str, tools: list[Tool]) -> list[tuple[str, dict]] | None:
    """The tool calls in an agent's action, as a bridge takes them one at a time; ``None`` for a text move."""
    calls = find_calls(action, tools) if tools else []
    return [(call.name, call.arguments) for call in calls] or None


# ----------------------------------------------------------------------------- leaderboard


@pytest.fixture
def board(tmp_path) -> Iterator[Leaderboard]:
    """An empty leaderboard taking one-episode challenges, with the submitter alice."""
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db", min_challenge_episodes=1, bootstrap=20)
    board.add_submitter("alice")
    yield board
    board.store.close()


@pytest.mark.parametrize("env_id", WORLDS)
def test_leaderboard_verifies_and_rates_the_world_under_agentic(env_id, board, tmp_path, capsys):
    runs, _ = counted_lineups(env_id)
    seats = players(env_id)
    for run in runs:
        plan = make_plan(env_id, run.spec(seats), {}, 0, not run.fixed)
        challenge = board.issue_challenge("alice", env_id, plan.names, 2, plan.lineup, plan.rotate_seats)
        results = parlour.evaluate(env_id, run.spec(seats), challenge=challenge, out=tmp_path / run.label, progress=False)
        answer = board.submit(tmp_path / run.label, "alice")
        assert answer["counted"] and answer["new_episodes"] == 2, answer
        assert len(results.records) == 2
    table = board.ratings(env_id)
    assert table["method"] == ("roles" if env_id == DESK else "score")
    assert {row["agent"] for row in table["rows"]} == {name for run in runs for name in run.agents}
    # Its own category, with its own heading on the site and in `parlour leaderboard show`, not "Other".
    assert game_class(env_id).category == "agentic" and CATEGORY_TITLES["agentic"] == "Agentic worlds"
    agentic = board.ratings()["categories"]["agentic"]
    assert env_id in agentic["environments"] + agentic["unnormalised"]
    from parlour.leaderboard.site import export_site

    export_site(board, tmp_path / "site")
    assert '<h2 id="category-agentic">Agentic worlds</h2>' in (tmp_path / "site" / "index.html").read_text()
    capsys.readouterr()
    assert main(["leaderboard", "show", "--db", f"sqlite:///{tmp_path}/lb.db"]) == 0
    out = capsys.readouterr().out
    assert "\nAgentic worlds\n" in out and env_id in out.split("\nAgentic worlds\n")[1]


@pytest.mark.parametrize("env_id", PRIVILEGED)
def test_the_privileged_experts_are_refused(env_id, board):
    runs, oracles = counted_lineups(env_id)
    assert oracles == [Lineup(("expert",), False, "expert")] and all("expert" not in run.agents for run in runs)
    results = parlour.evaluate(env_id, ["expert"], episodes=1, seed=0, progress=False)
    assert results.summary["expert"]["mean_reward"] == 1.0  # measured locally: the upper bound
    with pytest.raises(Rejected, match="privileged oracle"):
        verify_bundle(as_bundle(results))
    with pytest.raises(Rejected, match="privileged oracle"):
        board.issue_challenge("alice", env_id, ["expert"], 1)


# ----------------------------------------------------------------------------- demo


@pytest.mark.parametrize("env_id", WORLDS)
def test_demo_lineups_and_a_short_demo(env_id, tmp_path):
    names = scripted_names(env_id)
    if env_id == DESK:
        runs = lineups(env_id)
        agents, customers = {run.agents[0] for run in runs}, {run.agents[1] for run in runs}
        # Fixed roles, agent seat x customer seat: the simulator never serves, the desk agents never play the customer.
        assert all(run.fixed and len(run.agents) == 2 for run in runs) and len(runs) == len(agents) * len(customers)
        assert agents == {"expert", "compliant", "random"} and customers == {"customer", "random"}
    else:
        assert lineups(env_id) == [Lineup((name,), False, name) for name in names]
    out = tmp_path / "demo"
    assert main(["demo", "--env", env_id, "--episodes", "2", "--game-episodes", "2", "--no-serve", "--out", str(out)]) == 0
    board = Leaderboard(f"sqlite:///{out}/leaderboard.db")
    counted, _ = counted_lineups(env_id)
    assert board.store.episode_count(counted=False) == 0 and board.store.episode_count(env_id) == 2 * len(counted)
    assert {row["agent"] for row in board.ratings(env_id)["rows"]} == {name for run in counted for name in run.agents}


# ----------------------------------------------------------------------------- Mixture


@pytest.mark.parametrize("env_id", WORLDS)
def test_mixture_draws_the_worlds_difficulties(env_id):
    env = gymnasium.make("parlour/Mixture-v0", entries=[{"env_id": env_id, "levels": [1, 2]}])
    mixture = env.unwrapped
    for seed in range(8):
        _, info = env.reset(seed=seed)
        assert info["env_id"] == env_id and info["difficulty"] == {"difficulty": info["level"] + 1}
        agent = expert(env_id)
        done = False
        while not done:
            face = mixture.env
            assert face.match.game.difficulty == info["level"] + 1  # the world's own option, not an opponent ladder
            _, _, terminated, truncated, info = env.step(agent.act(face.match.agent_observation(face.player)))
            done = terminated or truncated
        record = mixture.record()
        assert record["returns"][face.player] == mixture.history[-1]["return"]
        parlour.replay(record)
        if {entry["level"] for entry in mixture.history} == {0, 1}:
            break
    assert {entry["level"] for entry in mixture.history} == {0, 1}
    assert all(entry["success"] for entry in mixture.history)  # the expert solves these easy worlds


# ----------------------------------------------------------------------------- parlour serve (OpenEnv)


@pytest.mark.parametrize("env_id", WORLDS)
def test_serve_plays_the_expert_through_openenvs_client(env_id):
    pytest.importorskip("openenv.core")
    from openenv.core import GenericEnvClient

    from parlour.bridges.openenv_server import BackgroundServer, create_app

    async def play(url: str) -> tuple[list[float], dict]:
        agent = expert(env_id)
        async with GenericEnvClient(base_url=url) as client:
            result = await client.reset(seed=SOLVED)
            assert result.observation["tools"] is None or result.observation["tools"]
            rewards = [result.reward or 0.0]
            while not result.done:
                result = await client.step({"text": agent.act(result.observation)})
                rewards.append(result.reward)
            return rewards, result.observation["record"]

    # No opponent given: ServiceDesk's customer is its scripted simulator, as in the Gymnasium face.
    with BackgroundServer(create_app(env_id, max_sessions=2)) as url:
        rewards, record = asyncio.run(play(url))
    seat = players(env_id)[0]
    assert sum(rewards) == record["returns"][seat] == 1.0
    if env_id == DESK:
        assert record["agents"]["customer"] == "customer"
    if game_class(env_id).tools:
        assert any(step.get("calls") for step in record["steps"])  # tool calls went through the server
    parlour.replay(record)


# ----------------------------------------------------------------------------- TRL


@pytest.mark.parametrize("env_id", WORLDS)
def test_trl_environment_class_plays_the_expert_through_tool_methods(env_id):
    from transformers.utils import get_json_schema

    from parlour.bridges.trl import environment_class

    records: list[dict] = []
    cls = environment_class(env_id, records=records)
    methods = {
        name for name, _ in inspect.getmembers(cls, predicate=inspect.isfunction) if not name.startswith("_") and name not in ("reset", "get_reward")
    }
    # TRL reads each public method into a tool schema; every one must read.
    for name in methods:
        assert get_json_schema(getattr(cls, name))["function"]["name"] == name
    game_tools = {tool.name for tool in game_class(env_id)().tools}
    assert game_tools <= methods and ("move" in methods) == (not game_tools or env_id == DESK)
    env = cls()
    env.reset(seed=SOLVED, prompt=[{"role": "user", "content": "ignored"}])
    agent = expert(env_id)
    tools = list(env._face.match.tools.values())
    while not env.finished:
        action = agent.act(env._face.match.agent_observation(env._face.player))
        calls = as_calls(action, tools)
        for name, arguments in calls or [("move", {"move": action})]:
            getattr(env, name)(**arguments)  # as TRL calls a parsed tool call
            if env.finished:
                break
    reward = env.get_reward()
    assert reward == env.get_reward() == sum(env.turn_rewards) == 1.0
    assert len(records) == 1 and records[0]["returns"][records[0]["players"][0]] == reward  # counted once
    parlour.replay(records[0])


# ----------------------------------------------------------------------------- verifiers


def scripted_reply(model: str, messages: list[dict]) -> str:
    """Text-only scripted players, one per world: they read only what the model is shown."""
    last = messages[-1]["content"]
    if model == "household":
        return re.findall(r"Admissible commands: (.*?)[,.]", last)[-1]
    if model == "shop":
        if "search[your keywords]" in last:
            return "search[" + re.findall(r"Instruction: (?:.*? find )?(.*?) that", last)[-1] + "]"
        items = re.findall(r"\[(B0[A-Z0-9]{8})\]", last.split("Click with")[-1])
        return f"click[{items[0]}]" if items else "click[buy now]"
    if model == "sql":
        if "rows)" not in last:
            return '{"tool": "list_tables", "arguments": {}}'
        return '{"tool": "answer", "arguments": {"rows": []}}'
    if model == "services":
        return '<tool_call>{"name": "finish", "arguments": {"answer": "I could not do it."}}</tool_call>'
    if model == "desk":
        return "Hello! How can I help you today?"
    assert model == "leaver", model
    return '{"tool": "end_chat", "arguments": {"message": "Thanks, that is all."}}'


@pytest.fixture
def model_url(monkeypatch) -> Iterator[str]:
    """A scripted chat-completions endpoint on loopback, as tests/test_bridge_verifiers.py runs one."""
    pytest.importorskip("verifiers")
    import threading
    from http.server import ThreadingHTTPServer

    from tests.test_bridge_verifiers import ScriptedModel

    class WorldModel(ScriptedModel):
        """tests/test_bridge_verifiers.py's endpoint, answering with this file's scripted players."""

        def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            reply = scripted_reply(request["model"], request["messages"])
            body = json.dumps(
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": request["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    monkeypatch.setenv("SCRIPTED_MODEL_KEY", "unused")
    server = ThreadingHTTPServer(("127.0.0.1", 0), WorldModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    thread.join()
    server.server_close()


@pytest.mark.parametrize("env_id", WORLDS)
def test_verifiers_rollout_with_a_scripted_model(env_id, model_url, tmp_path):
    from verifiers.v1.cli.eval.runner import run_eval
    from verifiers.v1.configs.cli.eval import EvalConfig

    from parlour.bridges.verifiers_env import TASKSET_ID

    model = {HOUSEHOLD: "household", SHOP: "shop", SQL: "sql", SERVICES: "services", DESK: "desk"}[env_id]
    options = {"difficulty": 1} if env_id == HOUSEHOLD else {}
    env = {
        "taskset": {"id": TASKSET_ID, "env_id": env_id, "episodes": 1, "seed": 7, "options": options},
        "learner_seats": [0],
        "learner": {"max_turns": 60},
    }
    if env_id == DESK:
        env["frozen"] = {"model": "leaver"}
    config = EvalConfig(
        env=env, model=model, client={"base_url": model_url, "api_key_var": "SCRIPTED_MODEL_KEY"}, push=False, rich=None, output_dir=tmp_path
    )
    (episode,) = asyncio.run(run_eval(config))
    assert episode.ok, episode.errors
    traces = {trace.info["seat"]: trace for trace in episode.traces}
    assert set(traces) == set(players(env_id))
    record = traces[players(env_id)[0]].info["record"]
    assert record["done"] and not any(step.get("invalid") for step in record["steps"]), record["steps"][-1]
    for seat, trace in traces.items():
        assert trace.reward == record["returns"][seat] == pytest.approx(sum(trace.info["turn_rewards"]))
    if env_id == SQL:
        assert record["steps"][0]["calls"][0]["name"] == "list_tables"
    if env_id == SHOP:
        assert record["returns"]["player_0"] > 0  # the first result of the instruction's search is worth something
    parlour.replay(record)


# ----------------------------------------------------------------------------- MCP


@pytest.mark.parametrize("env_id", WORLDS)
def test_mcp_plays_the_expert_through_the_worlds_tools(env_id):
    pytest.importorskip("mcp")
    import anyio
    from mcp.client import Client

    from parlour.bridges.mcp_server import mcp_server

    # A twin of the served episode (the same seed deals the same world and seats the same agents) shows the expert
    # what the client was told; the MCP answers must be the twin's text.
    twin = GymGame(game_class(env_id))
    twin.reset(seed=SOLVED)
    agent = expert(env_id)
    tools = list(twin.match.tools.values())

    async def play() -> tuple[set[str], dict]:
        async with Client(mcp_server(env_id)) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            result = await client.call_tool("start", {"seed": SOLVED})
            while not result.structured_content["done"]:
                action = agent.act(twin.match.agent_observation(twin.player))
                for name, arguments in as_calls(action, tools) or [("move", {"move": action})]:
                    result = await client.call_tool(name, arguments)
                    assert not result.is_error, result.content[0].text
                    observation, *_ = twin.step(action if name == "move" else json.dumps({"tool": name, "arguments": arguments}))
                    assert result.content[0].text == observation["text"]
                    if result.structured_content["done"]:
                        break
            return listed, result.structured_content

    listed, state = anyio.run(play)
    game_tools = {tool.name for tool in tools}
    assert {"start", *game_tools} <= listed and ("move" in listed) == (not game_tools or env_id == DESK)
    record = state["record"]
    assert state["return"] == record["returns"][twin.player] == 1.0
    assert sum(record["turn_rewards"][twin.player]) == 1.0
    if env_id == DESK:
        assert record["agents"]["customer"] == "customer"
    parlour.replay(record)


def test_every_world_is_on_every_path():
    # The worlds this file covers are every registered agentic world: a new one must join these paths too.
    assert sorted(env_id for env_id in parlour.list_envs() if game_class(env_id).category == "agentic") == sorted(WORLDS)
