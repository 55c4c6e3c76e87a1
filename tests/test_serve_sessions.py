"""The thin ``parlour serve`` of issue 37 serves what it served before: a session deals its episodes in one match, with
the records of fresh sessions, and its observations are the models OpenEnv validates, built once without validation."""

from __future__ import annotations

import asyncio
import json
import warnings

import pytest

pytest.importorskip("openenv.core", reason="pip install 'parlour[bridges]'")

import gymnasium  # noqa: E402
import websockets  # noqa: E402
from openenv.core import GenericEnvClient  # noqa: E402

import parlour  # noqa: E402
from parlour.bridges import openenv_server  # noqa: E402
from parlour.bridges.openenv_server import BackgroundServer, Hall, ParlourAction, ParlourEnvironment, ParlourObservation, create_app  # noqa: E402
from parlour.envs.registry import game_class  # noqa: E402

TTT = "parlour/TicTacToe-v0"


async def session(url: str, seeds: list[int], abandon: tuple[int, ...] = ()) -> list[dict]:
    """One OpenEnv session playing an episode per seed with a random agent; the records of those it finished.

    An episode whose seed is in ``abandon`` is left after one step by the next reset (its seat forfeits).
    """
    agent = parlour.make_agent("random", env_id=TTT)
    records = []
    async with GenericEnvClient(base_url=url) as client:
        for seed in seeds:
            agent.reset(seed=seed)
            result = await client.reset(seed=seed)
            while not result.done:
                result = await client.step({"text": agent.act(result.observation)})
                if seed in abandon:
                    break
            else:
                records.append(result.observation["record"])
    return records


def test_a_session_deals_all_its_episodes_in_one_match(monkeypatch):
    built = []

    class CountedMatch(openenv_server.Match):
        def __init__(self, *args, **kwargs):
            built.append(self)
            super().__init__(*args, **kwargs)

    app = create_app(TTT, opponent="random")
    monkeypatch.setattr(openenv_server, "Match", CountedMatch)
    with BackgroundServer(app) as url:
        records = asyncio.run(session(url, [1, 2, 3, 4], abandon=(2,)))
    assert len(records) == 3
    # The first reset builds the session's match; the others deal their episodes in it, the abandoned one's too.
    assert len(built) == 1


def test_episodes_dealt_in_a_used_match_are_those_of_fresh_sessions():
    with BackgroundServer(create_app(TTT, opponent="random")) as url:
        reused = asyncio.run(session(url, [7, 8, 9, 10], abandon=(8,)))
        fresh = [asyncio.run(session(url, [seed]))[0] for seed in (7, 9, 10)]
    assert reused == fresh
    env = gymnasium.make(TTT, opponent="random").unwrapped
    for seed, record in zip((7, 9, 10), reused):
        parlour.replay(record, agents={"player_1": parlour.make_agent("random", env_id=TTT)})
        agent = parlour.make_agent("random", env_id=TTT)
        agent.reset(seed=seed)
        env.reset(seed=seed)
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(agent.act(env.match.agent_observation(env.player)))
            done = terminated or truncated
        assert [step["move"] for step in record["steps"]] == [step["move"] for step in env.record()["steps"]]


@pytest.mark.parametrize(
    "env_id",
    ["parlour/TicTacToe-v0", "parlour/KuhnPoker-v0", "parlour/LiarsDice-v0", "parlour/ColonelBlotto-v0", "parlour/Search-v0"],
)
def test_served_observations_are_what_the_model_validates(env_id):
    # Built with model_construct, each observation must be the model validation would build, and serialise without
    # pydantic's warnings about a value that is not of its field's type.
    env = ParlourEnvironment(Hall(game_class(env_id), {}, None, 0, 60.0))
    agent = parlour.make_agent("random", env_id=env_id)
    for seed in range(3):
        agent.reset(seed=seed)
        observation = env.reset(seed=seed)
        served = [observation]
        while not observation.done:
            observation = env.step(ParlourAction(text=agent.act(observation.model_dump())))
            served.append(observation)
        for observation in served:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                text = observation.model_dump_json()
            assert ParlourObservation.model_validate(observation.model_dump()) == observation
            assert ParlourObservation.model_validate_json(text).model_dump_json() == text
        parlour.replay(served[-1].record)
    env.close()


def test_websocket_compression_is_offered_only_when_asked_for():
    async def extensions(url: str) -> list[str]:
        # The websockets client offers permessage-deflate, as OpenEnv's client does through it.
        async with websockets.connect(url.replace("http", "ws") + "/ws") as socket_:
            await socket_.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
            assert json.loads(await socket_.recv())["type"] == "observation"
            return [type(extension).__name__ for extension in socket_.protocol.extensions]

    with BackgroundServer(create_app(TTT)) as url:
        assert asyncio.run(extensions(url)) == []
    with BackgroundServer(create_app(TTT), ws_compression=True) as url:
        assert asyncio.run(extensions(url)) == ["PerMessageDeflate"]


def test_a_server_may_leave_fields_out_and_its_records_are_the_same():
    with BackgroundServer(create_app(TTT, opponent="random", fields=["legal_moves"])) as url:
        lean = asyncio.run(session(url, [5, 6]))
        with GenericEnvClient(base_url=url).sync() as client:
            observation = client.reset(seed=5).observation
    with BackgroundServer(create_app(TTT, opponent="random")) as url:
        full = asyncio.run(session(url, [5, 6]))
    assert lean == full
    assert set(observation) == set(ParlourObservation.model_fields) - {"reward", "done", "metadata"}
    assert observation["legal_moves"] and observation["player"] == "player_0" and observation["acting"]
    assert observation["text"] == "" and observation["messages"] == [] and observation["view"] == {}
    with pytest.raises(ValueError, match="choose among"):
        create_app(TTT, fields=["board"])


@pytest.mark.parametrize(
    ("env_id", "opponent", "inline"),
    [
        (TTT, "random", True),
        (TTT, ["minimax"], True),
        (TTT, None, True),
        (TTT, "client", False),  # a step waits for the other client
        (TTT, "python:parlour.baselines.random_agent:RandomAgent", False),  # a program may wait on anything
        ("parlour/Search-v0", None, False),  # tools
    ],
)
def test_sessions_run_on_the_event_loop_only_where_nothing_in_a_step_waits(env_id, opponent, inline):
    app = create_app(env_id, opponent=opponent)
    assert app.state.hall.inline is inline
    session_cls = openenv_server.InlineParlourEnvironment if inline else ParlourEnvironment
    assert type(app.state.openenv._env_factory()) is session_cls
