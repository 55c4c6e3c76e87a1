"""MCP: one seat of a parlour environment as a Model Context Protocol server, for any MCP-capable harness.

:func:`mcp_server` builds a low-level ``mcp.server.Server`` whose tools are:

* ``start(seed?)``: a new episode (the learner's seat against the opponents); the answer is the
  learner's first observation, with the rules. A call to a game tool before ``start`` starts seed 0.
* the game's own tools, with their JSON schemas as they are (``search``, ``open``, ``answer``, ...);
  a game whose moves are text gets ``move(move)``, and so does a seat that moves by text beside its
  tools (``Game.text_moves``: ServiceDesk's messages). Each call is the learner's action: the other
  seats play inside (by default the game's ``default_opponents``, ``random`` elsewhere), and the answer
  is everything the learner sees until it is to act again.

Every answer also carries ``structured_content``: the step's ``reward`` (the learner's, per turn),
``done``, the ``return`` so far, the ``legal_moves`` where the game lists them, and, once the episode
is over, its parlour ``record`` (with ``turn_rewards``), which :func:`parlour.replay` re-executes.
Nothing here builds token sequences: the harness owns them, and every tool answer is text the
environment inserted. One server is one session; ``parlour mcp ENV_ID`` serves it over stdio.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.server import Server

from parlour.agents import make_agent
from parlour.bridges.arguments import MAX_SEED, seed_argument
from parlour.bridges.trl import move_tool
from parlour.envs.core.gym import GymGame
from parlour.envs.core.tools import Tool
from parlour.envs.registry import game_class

START = Tool(
    "start",
    "Start a new episode (ending any episode in progress); returns your first observation with the rules.",
    {
        "type": "object",
        "properties": {"seed": {"type": "integer", "minimum": 0, "maximum": MAX_SEED, "description": "the episode's seed (default: the next one)"}},
    },
)


class Session:
    """The seat an MCP client plays: one Gymnasium face of the environment, its tools, and the episode's rewards."""

    def __init__(self, env_id: str, *, seat: int | str = 0, opponent: str | None = None, env_kwargs: dict[str, Any] | None = None):
        # No opponent: the game's own (a simulated person is its scripted simulator), as the Gymnasium face seats them.
        agent = None if opponent is None else make_agent(opponent, env_id=env_id)
        self.face = GymGame(game_class(env_id), opponent=agent, seat=seat, **(env_kwargs or {}))
        game = self.face.match.game
        tools = list(self.face.match.tools.values())
        if not any(tool.final for tool in tools) or self.face.player in game.text_moves:
            tools.append(move_tool(game.name))
        self.tools = {tool.name: tool for tool in [START, *tools]}
        self.next_seed = 0
        self.turn_rewards: list[float] = []

    def start(self, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode of ``seed`` (default: one more than the last); the first observation and its state.

        A seed that is not an integer from 0 to :data:`~parlour.bridges.arguments.MAX_SEED` raises
        :class:`~parlour.bridges.arguments.BadArgument`, which the client gets as a tool error.
        """
        seed = self.next_seed if seed is None else seed_argument(seed)
        self.next_seed = (seed + 1) % (MAX_SEED + 1)
        observation, info = self.face.reset(seed=seed)
        self.turn_rewards = []
        return observation["text"], self.state(0.0, info)

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Play one tool call as the learner's action; the learner's next observation and the step's state."""
        if name == "start":
            return self.start(arguments.get("seed"))
        if name not in self.tools:
            raise ValueError(f"unknown tool {name!r}; tools: {', '.join(self.tools)}")
        if not self.face.match.started:
            self.start()
        match = self.face.match
        if match.over or self.face.player in match.eliminated:
            raise ValueError("the episode is over; call start for a new one")
        action = arguments.get("move", "") if name == "move" else json.dumps({"tool": name, "arguments": arguments})
        observation, reward, terminated, truncated, info = self.face.step(action)
        self.turn_rewards.append(float(reward))
        return observation["text"], self.state(float(reward), info, terminated or truncated)

    def state(self, reward: float, info: dict[str, Any], done: bool = False) -> dict[str, Any]:
        """The structured part of an answer: the step's reward, the return, legal moves, and the record at the end."""
        face = self.face
        state: dict[str, Any] = {"reward": reward, "done": done, "return": float(face.match.returns[face.player])}
        if info.get("legal_moves") is not None:
            state["legal_moves"] = list(info["legal_moves"])
        if done:
            record = face.record()
            record["turn_rewards"] = {face.player: list(self.turn_rewards)}
            state["record"] = record
        return state


def mcp_server(env_id: str, *, seat: int | str = 0, opponent: str | None = None, env_kwargs: dict[str, Any] | None = None) -> Server:
    """An MCP server on which a client plays ``seat`` of ``env_id`` against ``opponent`` through tools (see the module docstring)."""
    session = Session(env_id, seat=seat, opponent=opponent, env_kwargs=env_kwargs)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name=tool.name, description=tool.description, input_schema=tool.parameters) for tool in session.tools.values()]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            text, state = session.call(params.name, dict(params.arguments or {}))
        except ValueError as error:
            # A bad argument (BadArgument is a ValueError) or a call the episode cannot take: the client's error,
            # told as a tool error that says what to send instead.
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(error))], is_error=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=state)

    return Server(
        f"parlour {env_id}",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        instructions=f"Play {env_id} as {session.face.player}: call start, then the game's tools until done.",
    )


async def serve_stdio(server: Server) -> None:
    """Serve ``server`` over this process's stdin and stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
