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
  and tiles it with spans, each written by the ``environment`` (headers, the
  rules, what the player was told, tool results) or by the ``policy`` (the
  body of one assistant message, that is one of the player's actions), and
  gives the player's reward for each of its turns (:func:`turn_rewards`). A
  trainer masks the environment's spans out of the loss and credits each
  policy span with its turn's reward; given a tokenizer, the same spans come
  in tokens too.

:func:`chat_actions` reads the actions back out of exported messages: fed to
a fresh episode in the record's step order, they replay to the same moves,
tool calls and results, rewards and outcome (the action texts differ where
the export turned tool-call syntax into ``tool_calls``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from parlour.envs.core.context import Message
from parlour.envs.core.match import Match
from parlour.envs.core.record import replay
from parlour.envs.core.rendering import render
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
            pieces.append(text[position : start.end()])
            position = start.end()
            continue
        pieces.append(text[position : start.start()])
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
            {
                "id": f"call_{index}_{number}",
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"], ensure_ascii=False)},
            }
            for number, call in enumerate(calls)
        ],
    }


def to_chat(record: Mapping[str, Any] | str, player: str | None = None) -> dict[str, Any]:
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
            final = assistant["tool_calls"][len(results) :]
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


def turn_rewards(record: Mapping[str, Any], player: str) -> list[float]:
    """``player``'s reward for each of its turns: what it was paid from one of its actions up to its next one.

    There is one per action (one per assistant message of :func:`to_chat`);
    what it was paid before its first action counts toward the first, and a
    player paid without ever acting gets one entry, that pay. They sum to
    what the steps paid the player (its return, in a finished episode).
    """
    rewards: list[float] = []
    before = 0.0
    for step in record["steps"]:
        if step["player"] == player:
            rewards.append(before if not rewards else 0.0)
        paid = float(step.get("rewards", {}).get(player, 0.0))
        if rewards:
            rewards[-1] += paid
        else:
            before += paid
    if not rewards and before:
        rewards.append(before)
    return rewards


def inserted(spans: list[dict[str, Any]]) -> list[list[int]]:
    """The environment's spans among ``spans`` as ``[start, end]`` pairs, those that touch merged into one."""
    pairs: list[list[int]] = []
    for span in spans:
        if span["source"] != "environment":
            continue
        if pairs and pairs[-1][1] == span["start"]:
            pairs[-1][1] = span["end"]
        else:
            pairs.append([span["start"], span["end"]])
    return pairs


def to_text(record: Mapping[str, Any] | str, player: str | None = None, tokenizer: Any = None) -> dict[str, Any]:
    """``player``'s conversation as one text, with the spans of who wrote what and the reward of each turn.

    Each message is ``<|role|>`` and a newline, then its body and a newline;
    an assistant's body is its text and its calls as Hermes ``<tool_call>``
    blocks. Returns a dict of:

    * ``text``: the conversation.
    * ``spans``: half-open character spans ``{"start", "end", "source"}``
      that tile ``text`` in order. A ``"policy"`` span is one assistant body,
      one action of the player (its text as written; a move given as an index
      appears as the move's name and tool calls as Hermes blocks; it may be
      empty), and has its ``turn`` (0, 1, ...); an ``"environment"`` span is everything
      the environment inserted between two of them (the rules, what the
      player was told, tool results, and every header).
    * ``inserted``: the environment's text as ``[start, end]`` pairs (two
      environment spans around an empty policy span make one pair); masking
      them out leaves exactly what the player generated.
    * ``turn_rewards``: :func:`turn_rewards`, indexed by a policy span's ``turn``.

    Given a ``tokenizer`` (a ``transformers`` tokenizer, or anything called as
    ``tokenizer(text, add_special_tokens=False)["input_ids"]``), each span is
    tokenized on its own, so no token straddles two spans, and the dict also
    holds ``input_ids`` (the spans' tokens, concatenated) and ``token_spans``
    (the same spans as token indices into ``input_ids``).
    """
    record = json.loads(record) if isinstance(record, str) else record
    chat = to_chat(record, player)
    player = player if player is not None else record["players"][0]
    pieces: list[str] = []
    spans: list[dict[str, Any]] = []
    position = 0
    turn = 0

    def add(piece: str, source: str) -> None:
        """Append ``piece`` to the text: a policy piece opens a span of its own, an environment piece extends the open one."""
        nonlocal position, turn
        if source == "environment" and spans and spans[-1]["source"] == "environment":
            spans[-1]["end"] += len(piece)
        else:
            spans.append({"start": position, "end": position + len(piece), "source": source})
            if source == "policy":
                spans[-1]["turn"] = turn
                turn += 1
        pieces.append(piece)
        position += len(piece)

    for message in chat["messages"]:
        add(f"<|{message['role']}|>\n", "environment")
        if message["role"] == "assistant":
            add(_body(message), "policy")
        else:
            add(message.get("content") or "", "environment")
        add("\n", "environment")
    text = "".join(pieces)
    rendered: dict[str, Any] = {
        "text": text,
        "spans": spans,
        "inserted": inserted(spans),
        "turn_rewards": turn_rewards(record, player),
    }
    if tokenizer is not None:
        input_ids: list[int] = []
        token_spans = []
        for span in spans:
            ids = list(tokenizer(text[span["start"] : span["end"]], add_special_tokens=False)["input_ids"]) if span["end"] > span["start"] else []
            token_spans.append({**span, "start": len(input_ids), "end": len(input_ids) + len(ids)})
            input_ids.extend(ids)
        rendered.update(input_ids=input_ids, token_spans=token_spans)
    return rendered
