"""Episodes as training data: a record turned into OpenAI chat messages, or into one text with its masks.

Records keep actions and digests of tool results, not the observations, so
both functions re-execute the record (after :func:`parlour.replay` has
checked it) and collect what one player saw and did:

* :func:`to_chat` gives ``{"messages": [...], "tools": [...]}`` in the format
  of OpenAI's chat API, which every fine-tuning library reads: the rules as
  the ``system`` message, what the player was told as ``user`` messages, each
  of its actions as an ``assistant`` message (with ``tool_calls`` when it
  called tools), and each tool result as a ``role: "tool"`` message answering
  its call. The turn after a final tool call (the move) is answered by a tool
  message holding what the player was told after it (other players' moves,
  the outcome). Messages the player received after its last action close the
  conversation as a ``user`` message.
* :func:`to_text` renders those messages as one text (``<|role|>`` headers)
  and gives the character spans the environment inserted, everything but the
  bodies of assistant messages, which a trainer masks out of the loss.

:func:`chat_actions` reads the actions back out of exported messages: fed to
a fresh episode in the record's step order, they replay to the same moves,
tool calls and results, rewards and outcome (the action texts differ where
the export turned tool-call syntax into ``tool_calls``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from parlour.envs.core.context import Message
from parlour.envs.core.match import Match
from parlour.envs.core.rendering import render
from parlour.envs.core.record import replay
from parlour.envs.registry import game_class

_HERMES = re.compile(r"<tool_call>.*?</tool_call>", re.DOTALL)
_CALL_START = re.compile(r'\{\s*"(?:tool|name)"\s*:')


def _without_calls(text: str, tool_names: list[str]) -> str | None:
    """The text of an action around its tool calls (``None`` when nothing else was said).

    An OpenAI message given as JSON keeps its ``content``; otherwise Hermes
    ``<tool_call>`` blocks, ``{"tool": ...}`` objects and ``<name>...</name>``
    tags of the game's tools are cut out.
    """
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict) and "tool_calls" in value:
            content = value.get("content")
            return content if isinstance(content, str) and content.strip() else None
        if value is not None:
            return None
    text = _HERMES.sub("", text)
    if tool_names:
        names = "|".join(re.escape(name) for name in sorted(tool_names, key=len, reverse=True))
        text = re.sub(rf"<({names})>.*?</\1>", "", text, flags=re.DOTALL)
    decoder = json.JSONDecoder()
    pieces, position = [], 0
    while (start := _CALL_START.search(text, position)) is not None:
        try:
            _, end = decoder.raw_decode(text, start.start())
        except (ValueError, RecursionError):
            pieces.append(text[position:start.end()])
            position = start.end()
            continue
        pieces.append(text[position:start.start()])
        position = end
    pieces.append(text[position:])
    rest = "".join(pieces).strip()
    return rest or None


def _user(messages: list[Message]) -> dict[str, Any]:
    return {"role": "user", "content": render(messages)}


def _assistant(step: dict[str, Any], index: int, match: Match) -> dict[str, Any]:
    """The assistant message of one recorded step: its text, and its tool calls when they were read without error."""
    action = step["action"]
    calls = step.get("calls") or []
    if isinstance(action, int):
        moves = match.game.moves
        return {"role": "assistant", "content": moves[action] if moves is not None and 0 <= action < len(moves) else str(action)}
    if action is None:
        return {"role": "assistant", "content": ""}
    if not calls or step["error"] is not None:
        return {"role": "assistant", "content": action}
    return {
        "role": "assistant",
        "content": _without_calls(action, list(match.tools)),
        "tool_calls": [
            {"id": f"call_{index}_{number}", "type": "function",
             "function": {"name": call["name"], "arguments": json.dumps(call["arguments"], ensure_ascii=False)}}
            for number, call in enumerate(calls)
        ],
    }


def to_chat(record: dict[str, Any] | str, player: str | None = None) -> dict[str, Any]:
    """``player``'s side of the episode as ``{"messages": [...], "tools": [...]}`` (OpenAI chat format).

    ``player`` may be left out for a one-player game. ``tools`` is present
    for games with tools. Raises :class:`parlour.ReplayMismatch` for a record
    that does not replay, ``ValueError`` for a player not in it.
    """
    record = json.loads(record) if isinstance(record, str) else record
    replay(record)
    players = list(record["players"])
    if player is None:
        if len(players) != 1:
            raise ValueError(f"{record['env_id']} has {len(players)} players; name one of {players}")
        player = players[0]
    if player not in players:
        raise ValueError(f"{player!r} is not a player of this record; players: {players}")
    match = Match(game_class(record["env_id"]), record.get("options", {}))
    match.reset(record["seed"])
    inbox = match.ctx.inboxes
    messages: list[dict[str, Any]] = []
    consumed = 0
    for index, step in enumerate(record["steps"]):
        actor = step["player"]
        if actor == player:
            seen = match.messages(player)[consumed:]
            if not messages and seen and seen[0]["kind"] == "rules":
                messages.append({"role": "system", "content": seen[0]["text"]})
                seen = seen[1:]
            if seen:
                messages.append(_user(seen))
        match.submit(actor, step["action"])
        if actor != player:
            continue
        replayed = match.steps[-1]
        assistant = _assistant(replayed, index, match)
        messages.append(assistant)
        told = list(inbox[player])
        consumed = 0
        if "tool_calls" in assistant:
            results = [message for message in told if message["kind"] == "tool_result"]
            for call, result in zip(assistant["tool_calls"], results):
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result["text"]})
            consumed = len(results)
            final = assistant["tool_calls"][len(results):]
            if final:
                rest = told[consumed:]
                messages.append({"role": "tool", "tool_call_id": final[0]["id"], "content": render(rest)})
                consumed = len(told)
    trailing = list(inbox[player])[consumed:]
    if trailing:
        messages.append(_user(trailing))
    chat: dict[str, Any] = {"messages": messages}
    if match.tools:
        chat["tools"] = [tool.spec() for tool in match.tools.values()]
    return chat


def chat_actions(messages: list[dict[str, Any]]) -> list[Any]:
    """The actions of the ``assistant`` messages, in order: the message itself when it calls tools, else its text."""
    actions: list[Any] = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        if message.get("tool_calls"):
            actions.append({"role": "assistant", "content": message.get("content"), "tool_calls": message["tool_calls"]})
        else:
            actions.append(message.get("content") or "")
    return actions


def _body(message: dict[str, Any]) -> str:
    """An assistant message's body as a model writes it: its text, then each call as a Hermes ``<tool_call>``."""
    parts = [message["content"]] if message.get("content") else []
    for call in message.get("tool_calls") or []:
        function = call["function"]
        arguments = json.loads(function["arguments"])
        parts.append(f"<tool_call>{json.dumps({'name': function['name'], 'arguments': arguments}, ensure_ascii=False)}</tool_call>")
    return "\n".join(parts)


def to_text(record: dict[str, Any] | str, player: str | None = None) -> dict[str, Any]:
    """``player``'s conversation as one text, ``{"text": ..., "inserted": [[start, end], ...]}``.

    Each message is ``<|role|>`` and a newline, then its body and a newline;
    an assistant's body is its text and its calls as Hermes ``<tool_call>``
    blocks. ``inserted`` lists the half-open character spans the environment
    wrote: everything except the assistant bodies (the rules, what the player
    was told, tool results, and every header). Masking them out leaves exactly
    what the player generated.
    """
    pieces: list[str] = []
    inserted: list[list[int]] = []
    position = 0

    def add(piece: str, by_environment: bool) -> None:
        """Append ``piece`` to the text, extending the inserted spans if the environment wrote it."""
        nonlocal position
        if by_environment and piece:
            if inserted and inserted[-1][1] == position:
                inserted[-1][1] += len(piece)
            else:
                inserted.append([position, position + len(piece)])
        pieces.append(piece)
        position += len(piece)

    for message in to_chat(record, player)["messages"]:
        add(f"<|{message['role']}|>\n", True)
        if message["role"] == "assistant":
            add(_body(message), False)
        else:
            add(message.get("content") or "", True)
        add("\n", True)
    return {"text": "".join(pieces), "inserted": inserted}
