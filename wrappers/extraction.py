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
  compact JSON, or the value of a ``"move"``/``"action"``/``"answer"`` key;
* ``"auto"``: the explicit forms first (``\\boxed{}``, JSON, bracket), then
  the last legal move; for environments without a move list, the whole reply
  (reasoning stripped) unless it boxes or JSON-wraps its action, because those
  games parse their own bracketed grammar and deliver the talk around it.

Every extractor takes time linear in the reply, which is untrusted and may be
megabytes long: no regex backtracks over an unbounded span, brackets are
matched in one pass with a stack, and no character of a JSON candidate is
decoded twice. JSON nested deeper than :data:`MAX_JSON_DEPTH` is no action.

:func:`default_extraction` chooses per environment: ``"json"`` for tool-use
environments (categories ``search`` and ``coding``), ``"auto"`` otherwise.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import deque
from typing import Callable, Iterator

Extractor = Callable[[str, list[str] | None], str | None]

#: Tags whose content is reasoning, not the answer.
REASONING_TAGS = ("think", "thinking", "reasoning", "reflection", "scratchpad")
_TAGS = "|".join(REASONING_TAGS)
_OPEN_TAG = re.compile(rf"<({_TAGS})>", re.IGNORECASE)
_CLOSE_TAG = re.compile(rf"</({_TAGS})>", re.IGNORECASE)
# The content's bound (200 characters) keeps the scan linear.
_BRACKET = re.compile(r"\[([^\[\]\n]{1,200})\](?!\()")
_BOXED_OPEN = re.compile(r"\\boxed\s*+\{")
_BOXED_STEP = re.compile(r"(?P<box>\\boxed\s*+\{)|(?P<open>\{++)|(?P<close>\}++)")
_TEXT_MACRO = re.compile(r"\\text\{([^{}]*+)\}")
_JSON_STRING = r'"(?:[^"\\\n]++|\\.)*+"'
# Text and whole strings, no brackets.
_JSON_FLAT = rf'(?:[^{{}}\[\]"]++|{_JSON_STRING})*+'
_JSON_BRACKETS = r'(?P<objects>\{++)|(?P<arrays>\[++)|(?P<close_objects>\}++)|(?P<close_arrays>\]++)|(?P<broken>")'
# One step inside a JSON candidate skips text and whole strings up to the next bracket, then takes an object
# whole (one without brackets inside, or whose brackets inside hold no more brackets, as most tool calls: one
# step), or a run of one kind of bracket, or a quote whose string meets a newline or the end, which no JSON
# string does.
_JSON_STEP = re.compile(
    rf"{_JSON_FLAT}(?:(?P<flat>\{{{_JSON_FLAT}\}})"
    rf'|(?P<whole>\{{(?:[^{{}}\[\]"]++|{_JSON_STRING}|\{{{_JSON_FLAT}\}}|\[{_JSON_FLAT}\])*+\}})|{_JSON_BRACKETS})'
)
# The same with objects taken whole only when they hold no brackets: to find the objects inside a whole one.
_JSON_STEP_FLAT = re.compile(rf"{_JSON_FLAT}(?:(?P<flat>\{{{_JSON_FLAT}\}})|{_JSON_BRACKETS})")
# From a brace, the first brace inside a string (strings as a scan from that brace sees them).
_BRACE_IN_STRING = re.compile(r'(?:[^"]++|"(?:[^"\\\n{]++|\\.)*+")*+"(?:[^"\\\n{]++|\\.)*+(?=\{)')
_JSON_PAIR = rf"\{{{_JSON_FLAT}\}}|\[{_JSON_FLAT}\]"
# Through an object nested too deep only the depth matters: one step takes everything up to the next run of
# closing brackets or a broken string, with strings and innermost bracket pairs whole; the opening brackets left
# in what it took are counted afterwards, once those are cut out.
_JSON_SKIP = re.compile(rf'(?:[^{{}}\[\]"]++|{_JSON_STRING}|{_JSON_PAIR}|[{{\[])*+(?:(?P<close>[}}\]]++)|(?P<broken>"))')
_JSON_SKIPPED = re.compile(rf"{_JSON_STRING}|{_JSON_PAIR}")
_DECODER = json.JSONDecoder()
#: JSON nested deeper than this (objects and arrays together) is never an action: such an object is ignored,
#: though the objects that closed inside it before that depth was reached still count. (An object taken whole
#: in one step may go two levels past it: the decoder's recursion stays far below the interpreter's limit.)
MAX_JSON_DEPTH = 64
#: JSON keys whose value is the move itself, for replies like ``{"move": "b2"}``.
MOVE_KEYS = ("move", "action", "answer")
#: Environment categories whose actions are JSON tool calls.
TOOL_CATEGORIES = ("search", "coding")


def strip_reasoning(text: str) -> str:
    """Remove reasoning blocks (``<think>...</think>`` and similar) and return the rest, stripped.

    A block runs from an opening tag to the next closing tag of the same name
    (case-insensitive). Then a closing tag without an opening one (templates
    that put ``<think>`` in the prompt) drops everything before it; an opening
    tag that is never closed (a reply cut off mid-thought) drops everything
    after it.
    """
    closings: dict[str, list[int]] = {}
    for tag in _CLOSE_TAG.finditer(text):
        closings.setdefault(tag.group(1).lower(), []).append(tag.start())
    pieces: list[str] = []
    kept_from = 0
    if closings:
        # Only the opening tags that some closing tag could match need a look.
        openings = re.compile(f"<({'|'.join(closings)})>", re.IGNORECASE)
        for tag in openings.finditer(text):
            name = tag.group(1).lower()
            if tag.start() < kept_from or name not in closings:
                continue
            positions = closings[name]
            index = bisect.bisect_left(positions, tag.end())
            if index == len(positions):
                # No later opening tag of this name has a closing tag either.
                del closings[name]
                if not closings:
                    break
                continue
            pieces.append(text[kept_from : tag.start()])
            kept_from = positions[index] + len(name) + 3
    pieces.append(text[kept_from:])
    text = " ".join(pieces)
    last_closing = _last(_CLOSE_TAG.finditer(text))
    if last_closing is not None:
        text = " " + text[last_closing.end() :]
    first_opening = _OPEN_TAG.search(text)
    if first_opening is not None:
        text = text[: first_opening.start()] + " "
    return text.strip()


def _last(matches: Iterator[re.Match[str]]) -> re.Match[str] | None:
    """The last of ``matches``, or ``None``; the iteration runs in C."""
    last = deque(matches, maxlen=1)
    return last[0] if last else None


class _LegalMoves:
    """A move list prepared once per reply: exact lookup, and a whole-word search for the last mention."""

    def __init__(self, legal_moves: list[str]):
        self.by_lower = {move.lower(): move for move in legal_moves}
        names = sorted((name for name in self.by_lower if name), key=len, reverse=True)
        self.pattern = None
        if names:
            # Longer names first, so a move wins over its prefixes; the lookahead on first characters lets the
            # regex engine skip ahead instead of trying every position.
            first = "".join(sorted({re.escape(name[0]) for name in names}))
            alternatives = "|".join(re.escape(name) for name in names)
            self.pattern = re.compile(rf"(?=[{first}])(?<![\w])(?:{alternatives})(?![\w])", re.IGNORECASE)

    def last(self, text: str) -> str | None:
        """The last legal move mentioned in ``text`` as a whole word."""
        found = None if self.pattern is None else _last(self.pattern.finditer(text))
        return None if found is None else self.by_lower[found.group(0).lower()]

    def match(self, candidate: str) -> str | None:
        """``candidate`` as a legal move: exact (case-insensitive), else the last legal move inside it."""
        exact = self.by_lower.get(candidate.strip().lower())
        return exact if exact is not None else self.last(candidate)


def _matcher(legal_moves: list[str] | None) -> Callable[[str], str | None]:
    """From a candidate to a legal move, or to the candidate stripped when there is no move list."""
    if legal_moves is None:
        return lambda candidate: candidate.strip() or None
    return _LegalMoves(legal_moves).match


def last_move(text: str, legal_moves: list[str] | None) -> str | None:
    """The last legal move mentioned in ``text`` as a whole word (longer names win over their prefixes)."""
    if not legal_moves:
        return None
    return _LegalMoves(legal_moves).last(text)


def _boxed_contents(text: str) -> list[str]:
    """Contents of every outermost ``\\boxed{...}`` in order, with nested braces balanced.

    One pass over the braces from the first box on, braces counting only while
    a box is open: a box never closed does not count, but the boxes inside it
    do. A run of closing braces is applied at once: bisection finds the frames
    it closes, and only the outermost box among them can be outermost.
    """
    spans: list[tuple[int, int]] = []
    # The open frames: a box (its content's start) or a run of other braces (-1), and the depth below each.
    starts: list[int] = []
    bases: list[int] = []
    boxes: list[int] = []  # indices of the box frames
    depth = 0
    position = 0
    while True:
        if depth == 0:
            opening = _BOXED_OPEN.search(text, position)
            if opening is None:
                break
            position = opening.start()
        step = _BOXED_STEP.search(text, position)
        if step is None:
            break
        kind = step.lastgroup
        start, position = step.span()
        if kind == "close":
            target = max(0, depth - (position - start))
            first = bisect.bisect_left(bases, target)
            box = bisect.bisect_left(boxes, first)
            if box < len(boxes):
                outermost = boxes[box]
                # The closing brace of a frame is the one that brings the depth back to the frame's base.
                spans.append((starts[outermost], start + depth - 1 - bases[outermost]))
                del boxes[box:]
            del starts[first:], bases[first:]
            depth = target
        else:
            if kind == "box":
                boxes.append(len(starts))
            starts.append(position if kind == "box" else -1)
            bases.append(depth)
            depth += 1 if kind == "box" else position - start
    spans.sort()
    contents = []
    covered = -1
    for start, end in spans:
        if start > covered:
            contents.append(text[start:end])
            covered = end
    return contents


def boxed(text: str, legal_moves: list[str] | None) -> str | None:
    """The last ``\\boxed{...}`` content (a box inside a box is part of it), matched to a legal move when a list is given."""
    match = _matcher(legal_moves)
    for content in reversed(_boxed_contents(text)):
        move = match(_TEXT_MACRO.sub(r"\1", content))
        if move is not None:
            return move
    return None


def bracket(text: str, legal_moves: list[str] | None) -> str | None:
    """The last ``[command]`` (not a markdown link), brackets kept; matched to a legal move when a list is given."""
    # findall gives the contents as strings: a list of match objects costs far more on long replies.
    commands = _BRACKET.findall(text)
    if legal_moves is None:
        return f"[{commands[-1]}]" if commands else None
    match = _LegalMoves(legal_moves).match
    for command in reversed(commands):
        move = match(command)
        if move is not None:
            return move
    return None


class _Span:
    """A balanced ``{...}`` of a reply (``end`` exclusive) and the balanced objects nested in it (``None``: not looked for yet)."""

    __slots__ = ("start", "end", "children")

    def __init__(self, start: int, end: int, children: list[_Span] | None):
        self.start = start
        self.end = end
        self.children = children


def _object_spans(text: str, start: int = 0, end: int | None = None, whole: bool = True) -> list[_Span]:
    """The outermost balanced ``{...}`` spans of ``text[start:end]``, in order, found in linear time.

    Quotes open strings only inside a span, so a quote in the prose never
    hides a brace. A span taken whole (``whole``) leaves its children to be
    looked for when needed; otherwise each span holds the spans nested in it.
    A brace that never closes may be a stray one in the prose, whose quotes
    then hid the real object inside a "string": the scan looks again from the
    first brace inside such a string, keeping the spans that closed before it,
    once for each stretch of text, which keeps the work linear. Otherwise the
    spans that closed inside are kept and the scan goes on where it stopped.
    A fenced block needs no special case: its object is a span too.
    """
    end = len(text) if end is None else end
    step = (_JSON_STEP if whole else _JSON_STEP_FLAT).match
    roots: list[_Span] = []
    looked_again_until = -1
    position = text.find("{", start, end)
    while position != -1:
        spans, stop, closed = _candidate(text, position, end, step)
        quoted = None if closed or position < looked_again_until else _BRACE_IN_STRING.match(text, position, stop)
        if quoted is None:
            roots.extend(spans)
            position = text.find("{", stop, end)
        else:
            looked_again_until = stop
            position = quoted.end()
            roots.extend(span for span in spans if span.end <= position)
    return roots


def _candidate(text: str, start: int, end: int, step: Callable[[str, int, int], re.Match[str] | None]) -> tuple[list[_Span], int, bool]:
    """Scan the candidate opened by the brace at ``start``: ``(spans, stop, closed)``.

    ``closed`` tells whether it closed: ``spans`` is then the candidate, or
    the spans that closed inside it when it was nested deeper than
    :data:`MAX_JSON_DEPTH` (its brackets are then only counted). Otherwise
    ``spans`` are the spans that closed inside it before it broke: it reached
    the end, a bracket closed nothing open, or a string met a newline (no JSON
    string holds one; ``stop`` is then past that line, so an unescaped quote
    cannot swallow the rest of the reply). ``stop`` is where the scan stopped.
    """
    # Frames: [bracket, its span (None for "["), brackets of the run still open]; never more than MAX_JSON_DEPTH.
    stack: list[list] = []
    depth = 0
    position = start
    while True:
        found = step(text, position, end)
        if found is None:
            return _orphans(stack), end, False
        kind = found.lastgroup
        assert kind is not None  # every alternative of the step patterns is a named group
        begin, position = found.span(kind)
        if kind == "whole" or kind == "flat":
            span = _Span(begin, position, None if kind == "whole" else [])
            if not stack:
                return [span], position, True
            _adopt(stack, [span])
        elif kind == "objects" or kind == "arrays":
            depth += position - begin
            if depth > MAX_JSON_DEPTH:
                stop, closed = _skip(text, position, end, depth)
                return _orphans(stack), stop, closed
            if kind == "objects":
                stack.extend(["{", _Span(index, -1, []), 1] for index in range(begin, position))
            else:
                stack.append(["[", None, position - begin])
        elif kind == "broken":
            return _orphans(stack), _past_line(text, position, end), False
        else:
            shut = _close(stack, "{" if kind == "close_objects" else "[", begin, position)
            if isinstance(shut, _Span):
                return [shut], shut.end, True
            if shut:
                return _orphans(stack), position, False
            depth = sum(frame[2] for frame in stack)


def _skip(text: str, position: int, end: int, depth: int) -> tuple[int, bool]:
    """Count brackets from ``position`` at ``depth`` until the depth is back to 0: ``(stop, closed)``, as for a candidate."""
    while True:
        found = _JSON_SKIP.match(text, position, end)
        if found is None:
            return end, False
        kind = found.lastgroup
        assert kind is not None  # the pattern ends in one of two named groups
        begin, stop = found.span(kind)
        taken = _JSON_SKIPPED.sub("", text[position:begin])
        depth += taken.count("{") + taken.count("[")
        if kind == "broken":
            return _past_line(text, stop, end), False
        depth -= stop - begin
        if depth <= 0:
            return stop, True
        position = stop


def _past_line(text: str, position: int, end: int) -> int:
    """Where the line holding ``position`` ends (past its newline)."""
    newline = text.find("\n", position, end)
    return end if newline == -1 else newline + 1


def _adopt(stack: list[list], spans: list[_Span]) -> None:
    """Attach closed ``spans`` to the innermost span still open in ``stack`` (its first frame always has one)."""
    for frame in reversed(stack):
        if frame[1] is not None:
            frame[1].children.extend(spans)
            return


def _orphans(stack: list[list]) -> list[_Span]:
    """The closed spans held by the open frames of ``stack``: what is left of them when they can never close."""
    return [child for frame in stack if frame[1] is not None for child in frame[1].children]


def _close(stack: list[list], opener: str, start: int, end: int) -> _Span | bool:
    """Close the brackets ``text[start:end]`` (all the closing kind of ``opener``) on ``stack``.

    Returns the candidate's span when its own brace closes, ``True`` when a
    bracket closes nothing open (the candidate is broken), ``False`` otherwise.
    A bracket closing a frame below the top drops the frames above, which can
    never close validly, and hands their closed spans down.
    """
    for position in range(start, end):
        if stack[-1][0] != opener:
            index = len(stack) - 2
            while index >= 0 and stack[index][0] != opener:
                index -= 1
            if index < 0:
                return True
            dropped = stack[index + 1 :]
            del stack[index + 1 :]
            _adopt(stack, _orphans(dropped))
        frame = stack[-1]
        frame[2] -= 1
        if frame[2] == 0:
            stack.pop()
        span = frame[1]
        if span is not None:
            span.end = position + 1
            if not stack:
                return span
            _adopt(stack, [span])
    return False


class _Failure:
    """A span that did not decode: where the decoder stopped, or ``None`` when the value is unusable anyway."""

    __slots__ = ("position",)

    def __init__(self, position: int | None):
        self.position = position


def _decode(text: str, span: _Span) -> object:
    """The JSON value of ``span``, or a :class:`_Failure` with the position (in ``text``) of the first error."""
    try:
        # A slice: a decoding error counts the lines before its position, which on the whole reply would be quadratic.
        return _DECODER.raw_decode(text[span.start : span.end])[0]
    except json.JSONDecodeError as error:
        return _Failure(span.start + error.pos)
    except ValueError:
        # A number too long to convert to an int.
        return _Failure(None)


def _json_objects(text: str, keys: tuple[str, ...]) -> list[object]:
    """Every JSON object in ``text`` (fenced or bare) that no other object holds and that may have one of ``keys``, in order.

    A span whose text names none of ``keys`` (as ``"key"``) is skipped with
    all it holds, undecoded. A span that does not decode is searched for
    objects inside it. The decoder stops at the first error: the spans that
    closed before it are valid, and those around it fail at the same place, so
    they are not decoded again and no character is decoded twice. Spans and
    their children come in order of appearance, so the objects do too.
    """
    named = [match.start() for match in re.finditer("|".join(f'"{re.escape(key)}"' for key in keys), text)]
    if not named:
        return []
    found: list[object] = []

    def visit(span: _Span, failed_at: int | None) -> None:
        index = bisect.bisect_left(named, span.start)
        if index == len(named) or named[index] >= span.end:
            return
        if failed_at is None:
            value = _decode(text, span)
            if not isinstance(value, _Failure):
                found.append(value)
                return
            if value.position is None:
                return
            failed_at = value.position
        if span.children is None:
            # A span taken whole: scanning it again, bracket by bracket, yields it with its children.
            (again,) = _object_spans(text, span.start, span.end, whole=False)
            span.children = again.children
        # A scan that is not whole gives every span its children.
        assert span.children is not None
        for child in span.children:
            visit(child, failed_at if child.start < failed_at < child.end else None)

    for root in _object_spans(text):
        visit(root, None)
    return found


def json_call(text: str, legal_moves: list[str] | None) -> str | None:
    """The last JSON tool call (``{"tool": ..., "arguments": ...}``) as compact JSON, or the last ``{"move": ...}`` value."""
    match = _matcher(legal_moves)
    for value in reversed(_json_objects(text, ("tool", *MOVE_KEYS))):
        if not isinstance(value, dict):
            continue
        if "tool" in value:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        for key in MOVE_KEYS:
            named = value.get(key)
            if isinstance(named, (str, int, float)) and not isinstance(named, bool):
                move = match(str(named))
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
