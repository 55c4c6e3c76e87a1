"""Episode records and their replay.

A record is a versioned JSON document holding everything needed to re-execute
an episode: the environment id and version, the options (the game's and the
engine's), the seed, and every action of every player (the text as the engine
read it, the parsed move or the error, the tool calls), with the rewards each
step paid and the final outcome::

    {
      "format": "parlour.record", "format_version": 2,
      "env_id": "parlour/TicTacToe-v0", "env_version": 0,
      "options": {...}, "seed": 7, "players": ["player_0", "player_1"],
      "agents": {"player_0": "random", "player_1": "minimax"},   # optional
      "agent_seeds": {"player_0": 12, "player_1": 34},           # optional: seeds of scripted agents
      "episode": 3,                                              # optional: index in an evaluation
      "steps": [{"player": "player_0", "action": "b2", "move": "b2",
                 "error": null, "rewards": {}}, ...],
      "done": true, "returns": {"player_0": -1.0, "player_1": 1.0},
      "eliminated": {}, "outcome": {"winner": "player_1", "winners": ["player_1"], "scores": {...},
                                    "reason": "...", "details": {...}, "teams": null,
                                    "winning_team": null, "truncated": false}
    }

Its declared type is :class:`Record` (each step a :class:`Step`, each tool
call a :class:`ToolCall`, the outcome a :class:`~parlour.envs.core.game.OutcomeDict`).
A step's ``action`` is the text as read (cut to ``max_action_chars``, with
``"action_chars"`` giving the original length when it was cut), a move index
(vector mode), or ``null`` for something that was neither. A step that called
tools lists them under ``"calls"``: ``{"name", "arguments", "result"}``, where
``result`` is a digest of the answer (answers are re-derived on replay and
must match it); a final tool's call has no result, it is the step's move.
A tool marked ``recorded`` (its answer need not reproduce: a player's program
run in a sandbox) also keeps the answer whole under ``"output"``, and replay
plays that answer back instead of calling the tool again.
A turn whose agent could not decide (an :class:`~parlour.envs.core.agent.AgentFailure`,
e.g. its model server down) has ``"action": null``, the reason under
``"failure"`` and ``"forfeit": true`` when the player forfeited with it;
replay plays the same failure again.

:func:`replay` re-executes a record and raises :class:`ReplayMismatch` at the
first thing that does not reproduce. Given agents for some seats, it also
checks that each of those agents, reseeded from ``agent_seeds``, makes exactly
the recorded moves: that is how the leaderboard knows a seat labelled with a
built-in agent's name really was that agent. The leaderboard's trust rests on it.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

from parlour.envs.core.agent import AgentFailure, action_text, reset_agent, wants_vector
from parlour.envs.core.errors import ReplayMismatch
from parlour.envs.core.match import RECORD_FORMAT, RECORD_VERSION, Match
from parlour.envs.core.record_types import Record
from parlour.envs.core.record_types import Step as Step
from parlour.envs.core.record_types import ToolCall as ToolCall
from parlour.envs.registry import game_class


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same_rewards(a: dict[str, float], b: dict[str, float]) -> bool:
    """Whether two reward dicts agree (missing entries count as 0); a non-numeric value never agrees."""
    keys = set(a) | set(b)
    values = [(a.get(k, 0.0), b.get(k, 0.0)) for k in keys]
    return all(_is_number(x) and _is_number(y) and math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9) for x, y in values)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def replay(record: Mapping[str, Any] | str, agents: Mapping[str, Any] | None = None) -> Record:
    """Re-execute ``record`` (a :class:`Record`, any JSON object read as one, or its JSON text) and check that it reproduces.

    ``agents`` maps seats to agents whose moves must be the recorded ones: each
    is reset with the record's ``agent_seeds`` entry for its seat and asked for
    every move of that seat. Returns the freshly computed record. Raises :class:`ReplayMismatch` naming
    the first step or field that differs: another environment version, another
    seed, a changed action, move or reward, a claimed outcome the game did not
    reach, steps after the end, or a game left unfinished though marked done.
    """
    if isinstance(record, str):
        try:
            record = json.loads(record)
        except json.JSONDecodeError as error:
            raise ReplayMismatch(f"record is not valid JSON: {error}") from None
    if not isinstance(record, dict):
        raise ReplayMismatch(f"a record is a JSON object, got {type(record).__name__}")
    if record.get("format") != RECORD_FORMAT or record.get("format_version") != RECORD_VERSION:
        raise ReplayMismatch(
            f"unsupported record format {record.get('format')!r} version {record.get('format_version')!r}; "
            f"expected {RECORD_FORMAT!r} version {RECORD_VERSION}"
        )
    try:
        env_id = record["env_id"]
        steps = record["steps"]
        seed = record["seed"]
        options = record.get("options", {})
    except KeyError as missing:
        raise ReplayMismatch(f"record lacks the field {missing}") from None
    try:
        game_cls = game_class(env_id)
    except KeyError as error:
        raise ReplayMismatch(str(error.args[0])) from None
    if record.get("env_version") != game_cls.version:
        raise ReplayMismatch(f"record is for {env_id} version {record.get('env_version')!r}, installed version is {game_cls.version}")
    if not isinstance(steps, list) or not isinstance(options, dict):
        raise ReplayMismatch("record 'steps' must be a list and 'options' an object")
    try:
        match = Match(game_cls, options)
        match.reset(seed)
    except (TypeError, ValueError) as error:
        raise ReplayMismatch(f"cannot start the recorded episode: {error}") from None
    if record.get("agents") is not None and not isinstance(record.get("agents"), dict):
        raise ReplayMismatch("record 'agents' must be an object from seat to agent name")
    if record.get("players") not in (None, match.players):
        raise ReplayMismatch(f"record players {record.get('players')} differ from the game's {match.players}")
    checked = dict(agents or {})
    seeds = record.get("agent_seeds") or {}
    for seat, agent in checked.items():
        seed = seeds.get(seat) if isinstance(seeds, dict) else None
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise ReplayMismatch(f"seat {seat!r}: the record has no agent seed (a non-negative int), so its agent's moves cannot be checked")
        reset_agent(agent, seed)

    for index, step in enumerate(steps):
        if not isinstance(step, dict) or "player" not in step or "action" not in step:
            raise ReplayMismatch(f"step {index} is malformed: {str(step)[:200]}")
        if match.over:
            raise ReplayMismatch(f"step {index}: the game had already ended, but the record goes on")
        player = step["player"]
        if player not in match.acting():
            raise ReplayMismatch(f"step {index}: {player!r} is not to act; acting: {match.acting()}")
        if player in checked:
            agent = checked[player]
            expected = action_text(agent.act({**match.agent_observation(player, wants_vector(agent)), "episode": record.get("episode")}))
            if expected != step["action"]:
                raise ReplayMismatch(
                    f"step {index}: the agent in seat {player!r} plays {expected[:80]!r}, the record says {str(step['action'])[:80]!r}"
                )
        # A turn the agent could not decide is played again as that failure, forfeit and all.
        action = AgentFailure(str(step["failure"]), bool(step.get("forfeit"))) if "failure" in step else step["action"]
        # Answers of recorded tools (a player's program output) are played back, not asked for again.
        match.recorded_outputs = [call.get("output") if isinstance(call, dict) else None for call in step.get("calls") or []]
        rewards = match.submit(player, action)
        replayed = match.steps[-1]
        if (replayed["error"] is None) != (step.get("error") is None):
            raise ReplayMismatch(
                f"step {index}: action {str(step['action'])[:80]!r} of {player} was "
                f"{'invalid' if replayed['error'] else 'valid'} on replay, the record says otherwise"
            )
        if _canonical(replayed["move"]) != _canonical(step.get("move")):
            raise ReplayMismatch(f"step {index}: move {str(step.get('move'))[:80]!r} recorded, {str(replayed['move'])[:80]!r} on replay")
        if _canonical(replayed.get("calls")) != _canonical(step.get("calls")):
            raise ReplayMismatch(f"step {index}: the tool calls or their results differ from the replay")
        if not isinstance(step.get("rewards", {}), dict) or not _same_rewards(rewards, step.get("rewards", {})):
            raise ReplayMismatch(f"step {index}: rewards {step.get('rewards')} recorded, {rewards} on replay")

    fresh = match.record(record.get("agents"))
    if _canonical(record.get("eliminated", {})) != _canonical(fresh["eliminated"]):
        raise ReplayMismatch(f"eliminated players {record.get('eliminated')} recorded, {fresh['eliminated']} on replay")
    if bool(record.get("done")) != fresh["done"]:
        raise ReplayMismatch(f"record says done={record.get('done')!r}, replay ends with done={fresh['done']}")
    if not isinstance(record.get("returns"), dict) or not _same_rewards(record["returns"], fresh["returns"]):
        raise ReplayMismatch(f"returns {record.get('returns')} recorded, {fresh['returns']} on replay")
    claimed = record.get("outcome")
    actual = fresh["outcome"]
    if (claimed is None) != (actual is None):
        raise ReplayMismatch(f"outcome {claimed} recorded, {actual} on replay")
    if actual is not None:
        if not isinstance(claimed, dict):
            raise ReplayMismatch(f"outcome must be an object, got {claimed!r}")
        for key in ("winners", "reason", "teams", "winning_team", "truncated"):
            if claimed.get(key) != actual[key]:
                raise ReplayMismatch(f"outcome {key} {claimed.get(key)!r} recorded, {actual[key]!r} on replay")
        if not isinstance(claimed.get("scores"), dict) or not _same_rewards(claimed["scores"], actual["scores"]):
            raise ReplayMismatch(f"outcome scores {claimed.get('scores')} recorded, {actual['scores']} on replay")
        if _canonical(claimed.get("details", {})) != _canonical(actual["details"]):
            raise ReplayMismatch("outcome details differ from the replay")
    return fresh
