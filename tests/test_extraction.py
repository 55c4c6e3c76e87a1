"""Action extraction on a corpus of realistic LLM replies, and reasoning stripping."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from types import FrameType

import pytest

import parlour.wrappers.extraction as extraction_module
from parlour.wrappers.extraction import EXTRACTORS, Extractor, default_extraction, extract_action, resolve_extractor, strip_reasoning

CELLS = ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]
POKER = ["check", "bet", "call", "fold"]

# (reply, legal moves, extraction, expected action)
CORPUS = [
    ("b2", CELLS, "auto", "b2"),
    ("  B2\n", CELLS, "auto", "b2"),
    ("The centre is strongest, so I play b2.", CELLS, "auto", "b2"),
    ("a1 is taken by X and c3 would leave a fork open. Blocking is better: I'll take b1.", CELLS[1:], "auto", "b1"),
    ("Options: a1, b2, c3.\n\n**Final move: c3**", CELLS, "auto", "c3"),
    ("I considered b2, but the answer is \\boxed{a3}. (b2 would also draw.)", CELLS, "auto", "a3"),
    ("\\boxed{\\text{b3}}", CELLS, "auto", "b3"),
    ("I pick \\boxed{z9} or maybe c2", CELLS, "auto", "c2"),
    ("<think>Maybe a1? No, c1 loses to a fork.</think>\nMy move: b2", CELLS, "auto", "b2"),
    ("<think>I should play a1</think>", CELLS, "auto", None),
    ("<thinking>\nweighing a3 vs c3\n</thinking>\n\n```\nc3\n```", CELLS, "auto", "c3"),
    ("Let me think... a1 looks good </think> I play c1", CELLS, "auto", "c1"),
    ("b2 <think>hmm, what about a", CELLS, "auto", "b2"),
    ('```json\n{"move": "a2"}\n```', CELLS, "auto", "a2"),
    ('Here is my choice: {"action": "C2", "why": "centre column"}', CELLS, "auto", "c2"),
    ("[b3]", CELLS, "auto", "b3"),
    ("See [the rules](http://x.y/b2) then play a3", CELLS, "auto", "a3"),
    ("I bet nothing, so I check.", POKER, "auto", "check"),
    ("", CELLS, "auto", None),
    ("   \n", CELLS, "auto", None),
    ("I have no idea what to do here.", CELLS, "auto", None),
    ("I'd like a1 but it is occupied.", CELLS[1:], "auto", None),
    ("ab2 and b22 are not cells", CELLS, "auto", None),
    # Free-text environments (no move list): explicit forms win, else the whole reply.
    ("I offer 40 coins for the hat.", None, "auto", "I offer 40 coins for the hat."),
    # Free-text games parse their own grammar: the talk and the move's argument must reach them.
    ("Counting my value... [Offer: 7 books, 2 hats]", None, "auto", "Counting my value... [Offer: 7 books, 2 hats]"),
    ("I think 120 is fair for both of us. [offer] 120", None, "auto", "I think 120 is fair for both of us. [offer] 120"),
    ("<think>my value is 30</think>Deal? [propose] 2 books, 1 hat, 0 balls", None, "auto", "Deal? [propose] 2 books, 1 hat, 0 balls"),
    ("Counting my value... [Offer: 7 books, 2 hats]", None, "bracket", "[Offer: 7 books, 2 hats]"),
    ("<think>they want more</think> [Accept]", None, "auto", "[Accept]"),
    ("<think>only thoughts</think>", None, "auto", None),
    ("The total is \\boxed{42}.", None, "boxed", "42"),
    ("No box here: 42", None, "boxed", None),
    ("[Propose] first, then [Accept]", None, "bracket", "[Accept]"),
    ("no command", None, "bracket", None),
    # Tool calls: the last JSON object with a "tool" key, fenced or bare.
    (
        'First I search.\n```json\n{"tool": "search", "arguments": {"query": "capital of France"}}\n```',
        None,
        "json",
        '{"tool":"search","arguments":{"query":"capital of France"}}',
    ),
    (
        'Thought: need to open it. {"tool": "open", "arguments": {"id": 3}} then {"tool": "answer", "arguments": {"text": "Paris"}}',
        None,
        "json",
        '{"tool":"answer","arguments":{"text":"Paris"}}',
    ),
    ('{"tool": "run_code", "arguments": {"code": "print({1: 2})"}}', None, "json", '{"tool":"run_code","arguments":{"code":"print({1: 2})"}}'),
    ('```json\n{"tool": "search", "arguments": {\n```', None, "json", None),
    ("I will call search with query Paris", None, "json", None),
    # Forced extractors on a game.
    ("I play a1. Actually, b2.", CELLS, "last_move", "b2"),
    ("I play \\boxed{a1}. Actually, b2.", CELLS, "boxed", "a1"),
    ("a1 then [c3] then b1", CELLS, "bracket", "c3"),
]


@pytest.mark.parametrize(("reply", "legal", "extraction", "expected"), CORPUS)
def test_corpus(reply: str, legal: list[str] | None, extraction: str, expected: str | None) -> None:
    assert extract_action(reply, legal, extraction) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>a</think>b", "b"),
        ("<THINK>a</THINK> b <reasoning>c</reasoning> d", "b d"),
        ("x</think>y", "y"),
        ("y<think>never closed", "y"),
        ("plain", "plain"),
        ("<think>a</think><think>b</think>", ""),
    ],
)
def test_strip_reasoning(text: str, expected: str) -> None:
    assert " ".join(strip_reasoning(text).split()) == expected


def test_json_tool_call_round_trips() -> None:
    call = {"tool": "search", "arguments": {"query": "naïve «quotes»", "k": 3}}
    text = f"Calling now:\n```\n{json.dumps(call)}\n```\nDone."
    assert json.loads(extract_action(text, None, "json")) == call


def test_custom_extractor_and_unknown_name() -> None:
    def upper_first_word(text: str, legal: list[str] | None) -> str | None:
        return text.split()[0].upper() if text.split() else None

    assert extract_action("<think>x</think> hello world", None, upper_first_word) == "HELLO"
    assert resolve_extractor("boxed") == ("boxed", EXTRACTORS["boxed"])
    with pytest.raises(ValueError, match="unknown extraction 'regex'.*boxed"):
        resolve_extractor("regex")


def test_default_extraction_per_environment() -> None:
    assert default_extraction("parlour/TicTacToe-v0") == "auto"
    assert default_extraction(None) == "auto"
    assert default_extraction("parlour/NoSuchGame-v0") == "auto"


def test_llm_agent_makes_valid_negotiation_moves_with_the_default_extraction():
    """A model that talks and then offers plays PriceNegotiation without invalid actions."""
    import parlour
    from parlour.wrappers import LLMAgent
    from parlour.wrappers.backend import Completion, estimate_tokens

    class Haggler:
        """A backend that always answers with talk and an offer."""

        name = "haggler"
        context_limit = None
        max_new_tokens = 32

        def count_tokens(self, messages):
            """A character-based estimate."""
            return estimate_tokens(messages)

        def generate(self, conversations, seed=None):
            """One reply per conversation."""
            return [
                Completion(text="That seems steep; let us meet halfway. [offer] 100", prompt_tokens=1, completion_tokens=1) for _ in conversations
            ]

    results = parlour.evaluate("parlour/PriceNegotiation-v0", [LLMAgent(Haggler()), "conceder"], episodes=4, seed=0, progress=False)
    assert results.summary["haggler"]["invalid_action_rate"] == 0.0


MEGABYTE = 1_000_000


def _repeat(unit: str) -> Callable[[int], str]:
    """A reply of ``unit`` repeated to about ``size`` characters."""
    return lambda size: unit * (size // len(unit))


# Replies built to make a backtracking or rescanning extractor quadratic, by size in characters.
ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "think repeated": _repeat("<think>"),
    "think unclosed": lambda size: "<think>" + "a" * size,
    "think pairs of mismatched tags": _repeat("<think>x</thinking>"),
    "boxed repeated": _repeat("\\boxed{"),
    "boxed repeated and closed": lambda size: "\\boxed{" * (size // 8) + "}" * (size // 8),
    "boxed text repeated": _repeat("\\boxed{\\text{"),
    "open braces": _repeat("{"),
    "open brackets": _repeat("["),
    "bracketed commands": _repeat("[b2] "),
    "fences": _repeat("```"),
    "fence then spaces": lambda size: "```" + " " * size,
    "fence then letters": lambda size: "```" + "a" * size,
    "nested objects": lambda size: '{"tool":' * (size // 16) + "1" + "}" * (size // 16),
    "nested objects unclosed": _repeat('{"tool":'),
    "nested lists in an object": lambda size: '{"move": ' + "[" * (size // 2) + "]" * (size // 2) + "}",
    "nested objects and lists": _repeat('{"move": ['),
    "quotes and braces": lambda size: '{"' * (size // 2) + '"move"',
    "spaces": lambda size: " " * size,
    "letters": lambda size: "a" * size,
}

# Replies of many small JSON candidates, each decoded once: linear, with a larger constant than the others.
DENSE: dict[str, Callable[[int], str]] = {
    "objects failing at their end": lambda size: '{"b": ' * 50 + "1" + ', "tool": x}' * 50 + '{"tool": 1, "b": x} ' * (size // 20),
    "many small objects": lambda size: '{"move": "z9"} ' * (size // 15),
    "many small nested objects": lambda size: '{"move": {"x": 1}} ' * (size // 19),
}


def _work(reply: str, legal: list[str] | None, extraction: str | Extractor) -> int:
    """The work extracting from ``reply`` takes, counted rather than timed so that no machine or load changes it:
    the lines of Python executed plus the characters handed to the JSON decoder (its work is in C)."""
    lines = 0

    def trace(frame: FrameType, event: str, arg: object) -> Callable | None:
        nonlocal lines
        lines += event == "line"
        return trace

    decoder = extraction_module._DECODER
    decoded = 0

    class CountingDecoder:
        def raw_decode(self, text: str, index: int = 0) -> tuple[object, int]:
            nonlocal decoded
            decoded += len(text) - index
            return decoder.raw_decode(text, index)

    extraction_module._DECODER = CountingDecoder()
    sys.settrace(trace)
    try:
        action = extract_action(reply, legal, extraction)
    finally:
        sys.settrace(None)
        extraction_module._DECODER = decoder
    assert action is None or isinstance(action, str)
    return lines + decoded


#: Sizes of the counted replies: the count is exact, so small replies show the growth as well as a megabyte would.
SMALL, LARGE = 16_000, 64_000


@pytest.mark.parametrize("name", [*ADVERSARIAL, *DENSE])
def test_extraction_work_grows_linearly(name: str) -> None:
    """Four times the reply costs at most about four times the work (a quadratic extractor would cost sixteen),
    for every extractor with and without a move list. Timings on a megabyte: benchmarks/extraction_speed.py."""
    build = {**ADVERSARIAL, **DENSE}[name]
    for extraction in EXTRACTORS:
        for legal in (CELLS, None):
            small, large = (_work(build(size), legal, extraction) for size in (SMALL, LARGE))
            assert large <= 4.5 * small + 1000, f"{extraction}, legal={legal is not None}: work {small} at {SMALL:,} chars, {large} at {LARGE:,}"


def test_work_count_sees_a_quadratic_extractor() -> None:
    """The count the linearity test reads grows sixteen-fold for an extractor that rescans the reply at every brace."""

    def rescanning(text: str, legal_moves: list[str] | None) -> str | None:
        found = None
        for start in range(len(text)):
            if text[start] == "{":
                for end in range(start, len(text)):
                    if text[end] == "}":
                        found = text[start : end + 1]
        return found

    reply = DENSE["many small objects"]
    small, large = (_work(reply(size), None, rescanning) for size in (1_500, 6_000))
    assert large > 12 * small


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_extraction_reads_a_megabyte_built_against_it(name: str) -> None:
    """At full size every extractor still answers an action or ``None``: no recursion error, no crash."""
    reply = ADVERSARIAL[name](MEGABYTE)
    for extraction in EXTRACTORS:
        for legal in (CELLS, None):
            action = extract_action(reply, legal, extraction)
            assert action is None or isinstance(action, str)


def test_too_deep_json_is_no_action_but_a_later_call_is_found() -> None:
    deep = '{"tool": "x", "arguments": ' * 100_000 + "{}" + "}" * 100_000
    assert extract_action(deep, None, "json") is None
    assert extract_action(deep + ' {"tool": "answer"}', None, "json") == '{"tool":"answer"}'
    assert extract_action('{"move": ' + "[" * 100_000 + "]" * 100_000 + "}", CELLS, "auto") is None


def test_json_objects_inside_a_broken_object_are_found() -> None:
    assert extract_action('{"note": {"tool": "a"}, oops {"tool": "b"} }', None, "json") == '{"tool":"b"}'
    assert extract_action('{"note": {"tool": "a"}, oops', None, "json") == '{"tool":"a"}'
    # An unescaped quote breaks a string, which then meets the newline: the next line starts afresh.
    assert extract_action('{"q": "say "hi", "x": 1\n{"tool": "c"}', None, "json") == '{"tool":"c"}'
    # A stray brace in quoted prose: its "strings" hide the call, which is looked for again.
    assert extract_action('Objects open with "{". My call: {"tool": "d"}', None, "json") == '{"tool":"d"}'
    assert extract_action('print("{") then {"move": "b2"}', CELLS, "auto") == "b2"
    # A number too long for int() is not an action, and no crash.
    assert extract_action('{"move": ' + "1" * 5000 + "}", None, "json") is None


def test_nested_boxes_take_the_outermost() -> None:
    assert extract_action("\\boxed{\\boxed{b2}}", CELLS, "boxed") == "b2"
    assert extract_action("\\boxed{ unclosed \\boxed{c3}", CELLS, "boxed") == "c3"
    assert extract_action("\\boxed{a1} and \\boxed{}", CELLS, "boxed") == "a1"


def test_prose_quotes_after_an_object_do_not_hide_the_next_one() -> None:
    assert extract_action('{"a": 1} don"t forget {"tool": "x"}', None, "json") == '{"tool":"x"}'
    assert extract_action('{"a": {"b": 1}} it"s {"tool": "y", "arguments": {"q": [1]}}', None, "json") == ('{"tool":"y","arguments":{"q":[1]}}')
