"""`parlour mcp ENV_ID` plays an episode with the mcp package's own client, over stdio and in memory."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

import parlour  # noqa: E402
from parlour.bridges.mcp_server import mcp_server  # noqa: E402


async def play_search(client: Client) -> dict:
    """Search, open the first hit, answer; returns the last answer's structured content."""
    listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert list(tools) == ["start", "search", "open", "answer"]
    assert tools["search"].input_schema["required"] == ["query"]
    first = await client.call_tool("start", {"seed": 5})
    assert "Question:" in first.content[0].text and first.structured_content["done"] is False
    found = await client.call_tool("search", {"query": "capital", "k": 2})
    assert "[1]" in found.content[0].text and found.structured_content["reward"] == 0.0
    doc_id = found.content[0].text.split("[1] ")[1].split(" ")[0]
    opened = await client.call_tool("open", {"doc_id": doc_id})
    assert doc_id in opened.content[0].text
    bad = await client.call_tool("search", {"k": 2})  # the schema's required query is missing: an invalid action, told
    assert "Invalid action" in bad.content[0].text and not bad.is_error
    done = await client.call_tool("answer", {"text": "no"})
    after = await client.call_tool("answer", {"text": "yes"})
    assert after.is_error and "over" in after.content[0].text
    return done.structured_content


def test_stdio_subprocess_episode_replays() -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "parlour.cli", "mcp", "parlour/Search-v0"])

    async def main() -> dict:
        async with Client(stdio_client(params)) as client:
            return await play_search(client)

    state = anyio.run(main)
    assert state["done"] is True
    record = state["record"]
    assert record["seed"] is not None and len(record["steps"]) == 4 and record["done"]
    assert state["record"]["turn_rewards"] == {"player_0": [0.0, 0.0, 0.0, state["reward"]]}
    assert state["return"] == state["reward"] == record["returns"]["player_0"]
    parlour.replay(record)


def test_in_memory_game_against_opponent() -> None:
    async def main() -> list[dict]:
        states = []
        async with Client(mcp_server("parlour/TicTacToe-v0", seat=1, opponent="minimax")) as client:
            assert [tool.name for tool in (await client.list_tools()).tools] == ["start", "move"]
            result = await client.call_tool("start", {"seed": 0})
            while not result.structured_content["done"]:
                result = await client.call_tool("move", {"move": result.structured_content["legal_moves"][0]})
                states.append(result.structured_content)
        return states

    states = anyio.run(main)
    assert states[-1]["return"] in (-1.0, 0.0) and states[-1]["record"]["agents"]["player_0"] == "minimax"
    assert states[-1]["record"]["turn_rewards"]["player_1"] == [state["reward"] for state in states]
    parlour.replay(states[-1]["record"])


@pytest.mark.parametrize("seed", [[1], {}, -1, 1.5, True, "3", 2**63])
def test_a_seed_that_is_not_a_non_negative_integer_is_a_tool_error_that_says_what_is_expected(seed) -> None:
    async def main():
        async with Client(mcp_server("parlour/TicTacToe-v0")) as client:
            refused = await client.call_tool("start", {"seed": seed})
            # The session is still usable: a good seed starts an episode.
            started = await client.call_tool("start", {"seed": 7})
            return refused, started

    refused, started = anyio.run(main)
    assert refused.is_error
    text = refused.content[0].text
    assert text.startswith("seed must be an integer from 0 to 9223372036854775807") and repr(seed) in text
    assert "Traceback" not in text and "Error" not in text
    assert not started.is_error and started.structured_content["done"] is False
