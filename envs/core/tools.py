"""Tools a game offers its players, and the tool-call syntaxes models emit.

A game declares its tools as :class:`Tool` objects (OpenAI function specs: a
name, a description and JSON-schema parameters); observations list them under
``"tools"`` in the OpenAI format. Within one turn a player may call tools up to
the engine's per-turn budget (``max_tool_calls``) before its move; a call is
answered to that player alone and does not advance the game. A tool marked
``final`` is a move: calling it ends the player's turn, and the game's
``apply`` receives ``{"tool": name, "arguments": {...}}``.

:func:`find_calls` reads the call syntaxes that models actually emit, in this
order of precedence:

1. an OpenAI assistant message, given as a dict or as its JSON text:
   ``{"tool_calls": [{"type": "function", "function": {"name": N, "arguments": "<JSON text>"}}]}``
   (a bare list of such calls is accepted too);
2. Hermes/Qwen tags: ``<tool_call>{"name": N, "arguments": {...}}</tool_call>``;
3. JSON objects anywhere in the text: ``{"tool": N, "arguments": {...}}`` (``"name"`` for ``"tool"`` too);
4. tags named after a tool whose schema has exactly one required string
   argument: ``<search>capital of Oru</search>``.

Arguments are validated against the tool's schema with ``jsonschema``; a call
that cannot be read or does not validate is an invalid action whose message
says what is accepted. JSON has one number type and JSON Schema counts ``5.0``
as an integer, so after validation every integral float in the arguments is an
``int`` (a game may slice with ``k``). ``NaN`` and ``Infinity``, which
Python's ``json`` reads but JSON does not have, make arguments unreadable, so
records stay strict JSON. Every scan is linear in the text's length.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from parlour.envs.core.errors import InvalidMove


@dataclass(frozen=True)
class Tool:
    """A tool a game offers: an OpenAI function spec, plus whether calling it is the player's move.

    Args:
        name: the function name models call.
        description: what it does, shown to the model.
        parameters: a JSON schema (``{"type": "object", "properties": ..., "required": [...]}``).
        final: calling this tool is the player's move for the turn (``answer``, ``submit``).
        recorded: the answer is kept whole in the record and replay reads it from there instead of asking the
            game again: for answers that need not reproduce, such as the output of a player's program. The
            game's ``call_tool`` for such a tool must leave the game's state alone (replay does not call it).
    """

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    final: bool = False
    recorded: bool = False
    #: The schema as canonical JSON: the key of its validator, which is built once per process (see :func:`_validator`).
    schema_key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "schema_key", json.dumps(self.parameters, sort_keys=True))
        _validator(self.schema_key)

    def spec(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry for this tool."""
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}

    def signature(self) -> str:
        """A one-line summary such as ``search(query: string, k?: integer)``, for error messages."""
        properties = self.parameters.get("properties", {})
        required = set(self.parameters.get("required", []))
        arguments = ", ".join(f"{name}{'' if name in required else '?'}: {schema.get('type', 'any')}" for name, schema in properties.items())
        return f"{self.name}({arguments})"

    @property
    def tag_argument(self) -> str | None:
        """The argument a ``<name>...</name>`` tag fills: the only required one, when it is a string."""
        required = self.parameters.get("required", [])
        properties = self.parameters.get("properties", {})
        if len(required) == 1 and properties.get(required[0], {}).get("type") == "string":
            return required[0]
        return None


@functools.lru_cache(maxsize=1024)
def _validator(schema_key: str) -> Any:
    """The validator of a schema, the schema checked first; validators are cached because building one (and
    checking the schema, as ``jsonschema.validate`` does every call) costs milliseconds, and are kept out of the
    game's state so that copies of it stay cheap."""
    schema = json.loads(schema_key)
    validator_class = jsonschema.validators.validator_for(schema)
    try:
        validator_class.check_schema(schema)
    except jsonschema.SchemaError as error:
        raise ValueError(f"a tool has an invalid parameters schema: {error.message}") from None
    return validator_class(schema)


@dataclass(frozen=True)
class ToolCall:
    """One call read from an action: the tool's name and its arguments (not yet validated)."""

    name: str
    arguments: Any


# A JSON object that starts like a call: the key "tool" or "name" first.
_CALL_START = re.compile(r'\{\s*"(?:tool|name)"\s*:')


def well_formed(text: str) -> str:
    """``text`` as JSON reads it back, whatever wrote it: surrogate pairs joined, lone surrogates made U+FFFD.

    Python strings may hold surrogates, which JSON's ``\\ud800\\udfff`` escapes turn into one character (so a
    stored record would replay other text) and UTF-8 cannot encode at all; agent text, and every string read
    from JSON in it, is read in this form.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def _well_formed_strings(value: Any) -> Any:
    """``value`` with :func:`well_formed` applied to every string and key in it."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, dict):
        return {well_formed(key): _well_formed_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_well_formed_strings(item) for item in value]
    return value


def _no_constant(name: str) -> Any:
    """Refuse ``NaN`` and ``Infinity``: Python's ``json`` reads them, but they are not JSON, and records must be."""
    raise ValueError(f"{name} is not a JSON number")


#: A JSON escape of a surrogate (``\\ud800``): only text holding one can decode to strings that are not well formed.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def read_json(text: str) -> Any:
    """Agent text as JSON, strictly (no ``NaN`` or ``Infinity``), its strings :func:`well_formed`; ``ValueError``
    for text that is not JSON or is nested too deeply for the parser (instead of ``RecursionError``)."""
    try:
        value = json.loads(text, parse_constant=_no_constant)
        return _well_formed_strings(value) if _SURROGATE_ESCAPE.search(text) else value
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _openai_calls(message: Any) -> list[ToolCall] | None:
    """The calls of an OpenAI assistant message (or of a bare list of its ``tool_calls``); ``None`` if it is not one."""
    calls = message.get("tool_calls") if isinstance(message, dict) else message
    if not isinstance(calls, list) or not calls or not all(isinstance(c, dict) and "function" in c for c in calls):
        return None
    found = []
    for call in calls:
        function = call["function"]
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise InvalidMove('A tool call\'s "function" must hold a "name" and "arguments".')
        arguments = function.get("arguments", "{}")
        if isinstance(arguments, str):
            try:
                arguments = read_json(arguments or "{}")
            except ValueError as error:
                raise InvalidMove(f"The arguments of {function['name']!r} are not valid JSON ({error}).") from None
        found.append(ToolCall(function["name"], arguments))
    return found


def _object_call(value: Any) -> ToolCall | None:
    """A call written as ``{"tool": N, "arguments": {...}}`` or ``{"name": N, "arguments": {...}}``."""
    if not isinstance(value, dict):
        return None
    name = value.get("tool", value.get("name"))
    if not isinstance(name, str):
        return None
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = read_json(arguments or "{}")
        except ValueError as error:
            raise InvalidMove(f"The arguments of {name!r} are not valid JSON ({error}).") from None
    return ToolCall(name, arguments)


def _tagged(text: str, opening: str, closing: str) -> list[str]:
    """The bodies between each ``opening`` tag and the next ``closing`` one, in one pass (no closing tag: none)."""
    bodies = []
    position = 0
    while (start := text.find(opening, position)) != -1:
        end = text.find(closing, start + len(opening))
        if end == -1:
            break
        bodies.append(text[start + len(opening) : end])
        position = end + len(closing)
    return bodies


def object_spans(text: str) -> list[tuple[int, int]]:
    """The spans of the outermost balanced ``{...}`` in ``text``, strings and escapes respected, in one pass.

    A brace never closed does not hide the objects after it: they are reported as if it were not there. Spans
    do not overlap, so decoding each of them once stays linear in the text's length.
    """
    spans: list[tuple[int, int]] = []
    opened: list[int] = []
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = bool(opened)
        elif char == "{":
            opened.append(index)
        elif char == "}" and opened:
            start = opened.pop()
            # The spans closed since this brace opened lie inside it.
            while spans and spans[-1][0] > start:
                spans.pop()
            spans.append((start, index + 1))
    return spans


def _json_objects(text: str) -> list[ToolCall]:
    """Calls written as JSON objects anywhere in ``text``: each outermost object that starts like a call, decoded once."""
    calls = []
    for start, end in object_spans(text):
        if not _CALL_START.match(text, start):
            continue
        try:
            value = read_json(text[start:end])
        except ValueError:
            continue
        call = _object_call(value)
        if call is not None:
            calls.append(call)
    return calls


def find_calls(action: Any, tools: list[Tool]) -> list[ToolCall]:
    """The tool calls in ``action`` (text, or an OpenAI assistant message dict), in order; ``[]`` when there are none.

    Raises :class:`InvalidMove` when the action holds a call that cannot be read.
    """
    if isinstance(action, dict):
        calls = _openai_calls(action)
        if calls is None:
            raise InvalidMove('A message action must carry "tool_calls" in the OpenAI format.')
        return calls
    text = action
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        # The whole reply may be one JSON value: an OpenAI message, a list of its calls, or one call object.
        try:
            value = read_json(stripped)
        except ValueError:
            value = None
        if value is not None:
            calls = _openai_calls(value)
            if calls is not None:
                return calls
            call = _object_call(value)
            if call is not None:
                return [call]
    if "<tool_call>" in text:
        calls = []
        for body in _tagged(text, "<tool_call>", "</tool_call>"):
            try:
                value = read_json(body.strip())
            except ValueError as error:
                raise InvalidMove(f"A <tool_call> must hold a JSON object with name and arguments ({error}).") from None
            call = _object_call(value)
            if call is None:
                raise InvalidMove('A <tool_call> must hold {"name": ..., "arguments": {...}}.')
            calls.append(call)
        if calls:
            return calls
    if '"tool"' in text or '"name"' in text:
        calls = _json_objects(text)
        if calls:
            return calls
    return _tag_calls(text, tools)


def _tag_calls(text: str, tools: list[Tool]) -> list[ToolCall]:
    """Calls written as ``<name>argument</name>`` for the tools that take one required string argument, in text order."""
    found = []
    for tool in tools:
        argument = tool.tag_argument
        if argument is not None and f"<{tool.name}>" in text:
            opening = f"<{tool.name}>"
            position = 0
            while (start := text.find(opening, position)) != -1:
                end = text.find(f"</{tool.name}>", start + len(opening))
                if end == -1:
                    break
                found.append((start, ToolCall(tool.name, {argument: text[start + len(opening) : end].strip()})))
                position = end + len(opening) + 1
    return [call for _, call in sorted(found, key=lambda pair: pair[0])]


def _integral(value: Any) -> Any:
    """``value`` with every integral float in it made an ``int``: JSON Schema counts ``5.0`` as an integer, Python does not."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _integral(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral(item) for item in value]
    return value


def validate(call: ToolCall, tools: dict[str, Tool]) -> tuple[Tool, dict[str, Any]]:
    """The tool ``call`` names among ``tools`` (those the caller may use) and its arguments, checked against the
    schema (integral floats made ints); :class:`InvalidMove` saying what is accepted otherwise."""
    tool = tools.get(call.name)
    accepted = "; ".join(t.signature() for t in tools.values())
    if tool is None:
        raise InvalidMove(f"There is no tool {call.name[:80]!r}. Tools: {accepted}.")
    if not isinstance(call.arguments, dict):
        raise InvalidMove(f"The arguments of {tool.name} must be a JSON object: {tool.signature()}.")
    error = jsonschema.exceptions.best_match(_validator(tool.schema_key).iter_errors(call.arguments))
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "arguments"
        raise InvalidMove(f"Bad call of {tool.name}: {where}: {error.message[:200]}. Accepted: {tool.signature()}.")
    return tool, _integral(call.arguments)
