"""Action extraction: from an LLM's free-text reply to the action text an environment parses.

An extractor is a function ``(text, legal_moves) -> str | None``: it returns
the action found in ``text`` (already stripped of reasoning), or ``None`` when
the reply holds no well-formed action, which makes the agent retry.
``legal_moves`` is the observation's list of legal move strings, or ``None``
for environments whose moves cannot be enumerated.

Extractors, by name (:data:`EXTRACTORS`):

* ``"last_move"``: the last legal move mentioned as a whole word;
* ``"boxed"``: the content of the last ``\\boxed{...}``;
* ``"bracket"``: the last bracketed command such as ``[Offer: 5]`` (brackets kept);
* ``"json"``: the last JSON object with a ``"tool"`` key (fenced or bare), as
  compact JSON, or the value of a ``"move"``/``"action"`` key;
* ``"auto"``: the explicit forms first (``\\boxed{}``, JSON, bracket), then
  the last legal move; for environments without a move list, the whole reply
  (reasoning stripped) unless it boxes or JSON-wraps its action, because those
  games parse their own bracketed grammar and deliver the talk around it.

:func:`default_extraction` chooses per environment: ``"json"`` for tool-use
environments (categories ``search`` and ``coding``), ``"auto"`` otherwise.
"""

from __future__ import annotations

import json
import re
from typing import Callable

Extractor = Callable[[str, list[str] | None], str | None]

#: Tags whose content is reasoning, not the answer.
REASONING_TAGS = ("think", "thinking", "reasoning", "reflection", "scratchpad")
_TAGS = "|".join(REASONING_TAGS)
_CLOSED_BLOCK = re.compile(rf"<({_TAGS})>.*?</\1>", re.IGNORECASE | re.DOTALL)
_UNCLOSED_BLOCK = re.compile(rf"<({_TAGS})>.*\Z", re.IGNORECASE | re.DOTALL)
_STRAY_CLOSE = re.compile(rf"\A.*</({_TAGS})>", re.IGNORECASE | re.DOTALL)
_BRACKET = re.compile(r"\[([^\[\]\n]{1,200})\](?!\()")
_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)
#: JSON keys whose value is the move itself, for replies like ``{"move": "b2"}``.
MOVE_KEYS = ("move", "action", "answer")
#: Environment categories whose actions are JSON tool calls.
TOOL_CATEGORIES = ("search", "coding")


def strip_reasoning(text: str) -> str:
    """Remove reasoning blocks (``<think>...</think>`` and similar) and return the rest, stripped.

    A closing tag without an opening one (templates that put ``<think>`` in the
    prompt) drops everything before it; an opening tag that is never closed
    (a reply cut off mid-thought) drops everything after it.
    """
    text = _CLOSED_BLOCK.sub(" ", text)
    text = _STRAY_CLOSE.sub(" ", text)
    text = _UNCLOSED_BLOCK.sub(" ", text)
    return text.strip()


def _match_legal(candidate: str, legal_moves: list[str] | None) -> str | None:
    """``candidate`` as a legal move: exact (case-insensitive), else the last legal move inside it."""
    if legal_moves is None:
        return candidate.strip() or None
    wanted = candidate.strip().lower()
    for move in legal_moves:
        if move.lower() == wanted:
            return move
    return last_move(candidate, legal_moves)


def last_move(text: str, legal_moves: list[str] | None) -> str | None:
    """The last legal move mentioned in ``text`` as a whole word (longer names win over their prefixes)."""
    if not legal_moves:
        return None
    by_lower = {move.lower(): move for move in legal_moves}
    alternatives = "|".join(re.escape(m) for m in sorted(by_lower, key=len, reverse=True))
    found = re.findall(rf"(?<![\w])({alternatives})(?![\w])", text, re.IGNORECASE)
    return by_lower[found[-1].lower()] if found else None


def _boxed_contents(text: str) -> list[str]:
    """Contents of every ``\\boxed{...}`` in order, with nested braces balanced."""
    contents = []
    for start in (m.end() for m in re.finditer(r"\\boxed\s*\{", text)):
        depth = 1
        for index in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            if depth == 0:
                contents.append(text[start:index])
                break
    return contents


def boxed(text: str, legal_moves: list[str] | None) -> str | None:
    """The last ``\\boxed{...}`` content, matched to a legal move when a move list is given."""
    for content in reversed(_boxed_contents(text)):
        content = re.sub(r"\\text\{([^{}]*)\}", r"\1", content)
        move = _match_legal(content, legal_moves)
        if move is not None:
            return move
    return None


def bracket(text: str, legal_moves: list[str] | None) -> str | None:
    """The last ``[command]`` (not a markdown link), brackets kept; matched to a legal move when a list is given."""
    for match in reversed(list(_BRACKET.finditer(text))):
        if legal_moves is None:
            return match.group(0)
        move = _match_legal(match.group(1), legal_moves)
        if move is not None:
            return move
    return None


def _json_objects(text: str) -> list[object]:
    """Every JSON object in ``text`` in order of appearance: fenced blocks and bare ``{...}`` spans."""
    decoder = json.JSONDecoder()
    found: list[tuple[int, object]] = []
    spans: list[tuple[int, int]] = []
    for fence in _FENCE.finditer(text):
        try:
            found.append((fence.start(), json.loads(fence.group(1))))
            spans.append((fence.start(), fence.end()))
        except ValueError:
            continue
    index = text.find("{")
    while index != -1:
        inside = any(a <= index < b for a, b in spans)
        end = index + 1
        if not inside:
            try:
                value, end = decoder.raw_decode(text, index)
                found.append((index, value))
            except ValueError:
                end = index + 1
        index = text.find("{", end)
    return [value for _, value in sorted(found, key=lambda item: item[0])]


def json_call(text: str, legal_moves: list[str] | None) -> str | None:
    """The last JSON tool call (``{"tool": ..., "arguments": ...}``) as compact JSON, or the last ``{"move": ...}`` value."""
    for value in reversed(_json_objects(text)):
        if not isinstance(value, dict):
            continue
        if "tool" in value:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        for key in MOVE_KEYS:
            if isinstance(value.get(key), (str, int, float)) and not isinstance(value.get(key), bool):
                move = _match_legal(str(value[key]), legal_moves)
                if move is not None:
                    return move
    return None


def auto(text: str, legal_moves: list[str] | None) -> str | None:
    """Explicit forms first (``\\boxed{}``, JSON, bracket), then the last legal move; free-text games get the whole reply.

    Free-text games (``legal_moves`` is ``None``: negotiation, talk phases)
    parse their own grammar from the reply and deliver the talk around the move,
    so only a boxed or JSON-wrapped action is taken out of it; a bracketed
    command such as ``[offer] 120`` stays in the reply with its argument.
    """
    explicit = (boxed, json_call) if legal_moves is None else (boxed, json_call, bracket)
    for extractor in explicit:
        action = extractor(text, legal_moves)
        if action is not None:
            return action
    if legal_moves is None:
        return text.strip() or None
    return last_move(text, legal_moves)


#: Extractors by name, for agent options and spec strings.
EXTRACTORS: dict[str, Extractor] = {
    "auto": auto,
    "last_move": last_move,
    "boxed": boxed,
    "bracket": bracket,
    "json": json_call,
}

#: What each extractor asks the model for, appended to the system prompt.
FORMAT_HINTS: dict[str, str] = {
    "auto": "End your reply with your move.",
    "last_move": "End your reply with your move, written exactly as the game names it.",
    "boxed": "Write your final move inside \\boxed{}, for example \\boxed{MOVE}.",
    "bracket": "Write your action in square brackets, for example [ACTION].",
    "json": 'Reply with a JSON object, for example {"tool": "NAME", "arguments": {...}}.',
}


def default_extraction(env_id: str | None) -> str:
    """The extractor name for ``env_id``: ``"json"`` for tool-use environments, ``"auto"`` otherwise."""
    if env_id is None:
        return "auto"
    from parlour.envs.registry import game_class

    try:
        category = game_class(env_id).category
    except KeyError:
        return "auto"
    return "json" if category in TOOL_CATEGORIES else "auto"


def resolve_extractor(extraction: str | Extractor) -> tuple[str, Extractor]:
    """``(name, function)`` for an extractor name or a custom function; ``ValueError`` listing the names otherwise."""
    if callable(extraction):
        return getattr(extraction, "__name__", "custom"), extraction
    if extraction not in EXTRACTORS:
        raise ValueError(f"unknown extraction {extraction!r}; choose one of {', '.join(EXTRACTORS)} or pass a function")
    return extraction, EXTRACTORS[extraction]


def extract_action(text: str, legal_moves: list[str] | None, extraction: str | Extractor = "auto") -> str | None:
    """Strip reasoning from ``text`` and extract the action with ``extraction``; ``None`` when there is none."""
    _, extractor = resolve_extractor(extraction)
    return extractor(strip_reasoning(text), legal_moves)
