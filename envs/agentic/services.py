"""Services: carry out a user's requests with the tools of stateful services (BFCL v3 multi-turn style).

One player, ``player_0``. Each episode draws a world seed from the episode's
generator and builds from it (:mod:`parlour.envs.agentic.services_world`) one
to five small services with state (a file system, a messaging app, a
calendar, a bank account, a ticket queue) and a task of one to three user
turns. Each turn is an instruction that states every name, amount, date and
text exactly, and asks for one or two things: several calls in order (make a
folder, then move a file into it), calls whose arguments come from earlier
results (a contact's user id, an account number, an event's id, a balance to
compute an amount from), several independent calls that may go in one action
(parallel calls), a value to report, or something no tool can do (book a
flight, order food: BFCL's irrelevance category).

Tools (every one a JSON-schema'd OpenAI function; only the episode's services'
tools are offered, so a call of another is an unknown tool):

* files: ``list_dir``, ``read_file``, ``write_file``, ``make_dir``, ``move_file``, ``delete_file``;
* messages: ``list_contacts``, ``list_inbox``, ``send_message``, ``delete_message``;
* calendar: ``list_events``, ``create_event``, ``reschedule_event``, ``cancel_event``;
* bank: ``list_accounts``, ``list_payees``, ``transfer``, ``list_transactions``;
* tickets: ``list_tickets``, ``get_ticket``, ``create_ticket``, ``update_ticket``;
* ``finish(answer?, impossible?)``: ends the turn. ``answer`` states any value the turn asked for; ``impossible: true``
  says the request cannot be done with the tools.

Calls are read in every syntax the core reads: OpenAI ``tool_calls`` (several
in one message: parallel calls, answered in order), Hermes ``<tool_call>``
blocks (several per action too), ``{"tool": ..., "arguments": ...}`` objects,
and tags such as ``<read_file>/home/docs/todo.txt</read_file>``. A call may
be followed in the same action by ``finish``. Results are JSON; a call a
service refuses (a file that is not there, funds short) changes nothing and
answers ``{"error": ...}`` saying what to do: a tool error, not an invalid
action. Text without a tool call, an unknown tool, or arguments that break the
schema (a missing or extra argument, a wrong type, text past its length cap)
are invalid actions whose message names the accepted signature. The engine's
``max_tool_calls`` (the game's default is 8) caps the calls of one turn;
every turn's requests need at most 7, lookups included.

Reward, decided at each ``finish`` (never from what the player claims): the
turn is carried out when the services' state equals the turn's goal state
(compared with lists in any order and without the ids of items created in the
episode), the answer states every value asked for (numbers to the cent, times
as ``HH:MM``, codes as written, in at most 500 characters), and
``impossible`` is true exactly for a request no tool can do (whose goal is the
state unchanged). A turn not carried out ends the episode with 0; the last
turn carried out pays 1. A player past the invalid-action allowance gets -1.

Options:

* ``difficulty`` (1 to 5, default 3): services, turns and requests per turn. 1: one service, one turn of one
  request; 2: two services, one turn of two requests; 3: three services, two turns of up to two requests, requests
  that span two services; 4: four services, likewise; 5: all five services, three turns. About one turn in five
  asks for the impossible (never every turn of a task longer than one).
* ``split`` (``"train"`` or ``"test"``, default ``"test"``): world seeds below 2**62 are training worlds, those from
  2**62 up test worlds; the two never meet. Train on ``"train"``; evaluation and the leaderboard use ``"test"``.

Nothing hidden reaches the player: observations, the view, tool results,
errors, ``render`` and the details of an unfinished episode carry no goal
state. The view holds an opaque ``task_id``; the ``expert`` baseline, a
privileged planner refused by the leaderboard, reads the goal states behind it
through :func:`parlour.envs.agentic.services_world.goal_channel`. The
outcome's details hold the difficulty, the split, the services, each turn's
request families and verdict, and the calls made.

Version history: v0, first release.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from parlour.envs.agentic.services_world import (
    LEVELS,
    SERVICE_OF,
    TOOL_SPECS,
    World,
    answer_holds,
    execute,
    generate,
    same_state,
    task_handle,
)
from parlour.envs.core.context import Context
from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.game import Game, int_option
from parlour.envs.core.tools import Tool
from parlour.envs.puzzles.solo import SoloPuzzle

SPLITS = ("train", "test")
#: World seeds of the training split are below this; the test split's are at or above it.
TEST_SEEDS_FROM = 1 << 62
#: The longest answer ``finish`` takes.
ANSWER_CHARS = 500

FINISH = Tool(
    "finish",
    "End this turn. Put any value the user asked for in answer; set impossible to true if the request cannot be done "
    "with the tools (then change nothing).",
    {
        "type": "object",
        "properties": {"answer": {"type": "string", "maxLength": ANSWER_CHARS}, "impossible": {"type": "boolean"}},
        "additionalProperties": False,
    },
    final=True,
)
TOOLS = [Tool(name, description, parameters) for _, name, description, parameters in TOOL_SPECS] + [FINISH]

RULES = """You are {player}, an assistant with access to these services: {services}. A user gives you {turns} request(s), one
turn at a time. Carry each out by calling tools, then end the turn by calling finish.
Tools:
{signatures}
  finish(answer?: string, impossible?: boolean): end the turn. Put any value the user asked for in answer (e.g. the
    balance, a time, a code); set impossible to true, and change nothing, when no tool can do what is asked.
Call tools as OpenAI tool_calls (several in one message are run in order), as
<tool_call>{{"name": "list_dir", "arguments": {{"path": "/home"}}}}</tool_call> blocks, or as
{{"tool": "finish", "arguments": {{"answer": "..."}}}}. Results are JSON; a refused call returns {{"error": ...}} and changes
nothing. Look up what the request does not state (user ids, account numbers, event and ticket ids, balances) with the
tools. At most {budget} tool calls per turn (finish not counted); text without a tool call is an invalid action.
Scoring: at each finish the services' state must be exactly what the requests so far ask for (no other changes), the
answer must state every value asked for (at most {chars} characters), and impossible must be true only for a request no
tool can do. A turn not carried out ends the episode with reward 0; carrying out every turn earns 1."""


class Services(SoloPuzzle, Game):
    """One player carries out multi-turn requests with the tools of generated stateful services; see the module docstring."""

    name = "Services"
    version = 0
    description = (
        "Stateful services (files, messages, calendar, bank, tickets) with JSON-schema tools, BFCL v3 multi-turn style: "
        "ordered and parallel calls, arguments from earlier results, impossible requests; difficulty 1-5, train/test split."
    )
    category = "agentic"
    fixed_rules = False
    reference_agents = ("expert", "random")
    #: Calls per turn: every turn's requests need at most 7 (lookups included), so one slip still fits.
    default_max_tool_calls = 8

    def __init__(self, *, difficulty: int = 3, split: str = "test"):
        self.difficulty = int_option("difficulty", difficulty, 1, len(LEVELS))
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}: train on 'train', evaluate on 'test'")
        self.split = split
        self.players = ["player_0"]
        self.tools = TOOLS
        self.world_seed = 0
        self.world: World | None = None
        self.state: dict[str, Any] = {}
        self.task_id = ""
        self.turn = 0
        self.turn_calls = 0
        self.calls: list[dict[str, Any]] = []
        self.verdicts: list[dict[str, Any]] = []
        self._offered: list[Tool] = [FINISH]

    # ----------------------------------------------------------- the episode
    def start(self, ctx: Context) -> None:
        """Draw the world seed (in the split's range), build the world and tell the first request."""
        self.world_seed = int(ctx.rng.integers(TEST_SEEDS_FROM)) + (TEST_SEEDS_FROM if self.split == "test" else 0)
        world = self.world = generate(self.world_seed, self.difficulty)
        self.state = copy.deepcopy(world.initial)
        self.task_id = task_handle(bytes(ctx.rng.bytes(16)), world)
        self.turn = self.turn_calls = 0
        self.calls, self.verdicts = [], []
        self._offered = [tool for tool in TOOLS if tool is FINISH or SERVICE_OF[tool.name] in world.services]
        self.tell_request(ctx)

    def tell_request(self, ctx: Context) -> None:
        """Tell the player the current turn's request."""
        assert self.world is not None
        ctx.tell(f"User (turn {self.turn + 1} of {len(self.world.turns)}): {self.world.turns[self.turn].instruction}", to=self.players[0])

    def tools_for(self, player: str) -> list[Tool]:
        """The tools of this episode's services, and ``finish``."""
        return self._offered

    def rules(self, player: str) -> str:
        """The services, their tools' signatures, how to call them and end a turn, and the scoring."""
        world = self.world
        services = world.services if world else ()
        signatures = "\n".join(f"  {tool.signature()}: {tool.description}" for tool in self._offered if tool is not FINISH)
        return RULES.format(
            player=player,
            services=", ".join(services) or "none yet",
            turns=len(world.turns) if world else "some",
            signatures=signatures,
            budget=f"max_tool_calls ({self.default_max_tool_calls} unless the episode sets another)",
            chars=ANSWER_CHARS,
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """Which turn it is and the calls made in it."""
        total = len(self.world.turns) if self.world else 0
        return f"Turn {self.turn + 1} of {total}: call tools, then finish ({self.turn_calls} tool call(s) made this turn)."

    def parse(self, player: str, text: str) -> Any:
        """Text without a tool call is no move here."""
        raise InvalidMove(
            'No tool call found. Call a tool, e.g. <tool_call>{"name": "finish", "arguments": {"answer": "..."}}</tool_call> '
            'or {"tool": "list_dir", "arguments": {"path": "/home"}}, or OpenAI tool_calls.'
        )

    def call_tool(self, player: str, name: str, arguments: dict[str, Any]) -> str:
        """Answer a service's tool on the episode's state; a refusal is a JSON ``{"error": ...}``."""
        result = execute(self.state, name, arguments)
        self.turn_calls += 1
        self.calls.append({"turn": self.turn + 1, "tool": name, "error": isinstance(result, dict) and "error" in result})
        return json.dumps(result, ensure_ascii=False)

    def apply(self, ctx: Context, moves: dict[str, Any]) -> None:
        """Judge the turn that ``finish`` ends: the next request if it was carried out, else the end (0); 1 after the last."""
        ((player, move),) = moves.items()
        world = self.world
        assert world is not None
        arguments = move["arguments"]
        turn = world.turns[self.turn]
        answer = arguments.get("answer", "")
        said_impossible = bool(arguments.get("impossible", False))
        verdict = {
            "turn": self.turn + 1,
            "families": list(turn.families),
            "state": same_state(self.state, turn.goal, world.first_new),
            "answer": all(answer_holds(answer, kind, value) for kind, value in turn.answers),
            "impossible": said_impossible == turn.impossible,
        }
        self.verdicts.append(verdict)
        self.turn_calls = 0
        if not all(verdict[key] for key in ("state", "answer", "impossible")):
            self.failed(ctx, f"turn {self.turn + 1} was not carried out: {self.fault(verdict, said_impossible)}")
            return
        self.turn += 1
        if self.turn == len(world.turns):
            self.solved(ctx, f"every request ({len(world.turns)} turn(s)) was carried out")
        else:
            self.tell_request(ctx)

    @staticmethod
    def fault(verdict: dict[str, Any], said_impossible: bool) -> str:
        """What was wrong with a turn, in words that give away no goal."""
        faults = []
        if not verdict["impossible"]:
            faults.append(
                "finish said the request was impossible, but the tools could do it"
                if said_impossible
                else "no tool could do the request, and finish did not say impossible"
            )
        if not verdict["state"]:
            faults.append("the services' state is not what was asked")
        if not verdict["answer"]:
            faults.append("the answer does not state what was asked")
        return "; ".join(faults)

    def report(self, success: bool) -> dict[str, Any]:
        """The outcome's details (see the module docstring)."""
        world = self.world
        return {
            "difficulty": self.difficulty,
            "split": self.split,
            "services": list(world.services) if world else [],
            "turns": len(world.turns) if world else 0,
            "turns_done": self.turn,
            "success": success,
            "verdicts": [dict(v) for v in self.verdicts],
            "calls": [dict(c) for c in self.calls],
        }

    # ----------------------------------------------------------- views
    def view(self, player: str) -> dict[str, Any]:
        """The current request, the turn, the services, the opaque task handle and the calls made (the results are in the messages)."""
        world = self.world
        return {
            "difficulty": self.difficulty,
            "services": list(world.services) if world else [],
            "turn": self.turn + 1,
            "turns": len(world.turns) if world else 0,
            "instruction": world.turns[self.turn].instruction if world and self.turn < len(world.turns) else None,
            "task_id": self.task_id,
            "turn_calls": self.turn_calls,
            "calls": [dict(c) for c in self.calls],
        }

    def render(self) -> str:
        """The services, the current request and the calls made (no goal state)."""
        world = self.world
        if world is None:
            return "not started"
        request = world.turns[self.turn].instruction if self.turn < len(world.turns) else "(done)"
        calls = ", ".join(c["tool"] + (" (error)" if c["error"] else "") for c in self.calls) or "none"
        return (
            f"services: {', '.join(world.services)} (difficulty {self.difficulty})\n"
            f"turn {min(self.turn + 1, len(world.turns))} of {len(world.turns)}: {request}\ncalls: {calls}"
        )
