"""The typed building blocks procgen coding tasks are composed of (see :mod:`parlour.envs.coding.tasks`).

A block turns a value of one type into a value of another; its code is a few plain Python statements that
read and rewrite the variable ``value``, and its text says what it does in one precise sentence, edge cases
included. Types: ``ints`` (a list of integers), ``int``, ``str``, ``strs`` (a list of strings), ``dict``
(a dictionary from strings to integers) and ``bool`` (only ever a final result).

Families, by the block a task starts with: ``list`` (list transforms and reductions), ``string``,
``number``, ``dict``, ``parser`` (small parsers of structured text, which bring their own input generators
and start a task only) and ``algorithm`` (classic array algorithms: maximum subarray, inversions, longest
increasing subsequence, ...).

Blocks are total on their input type (empty lists, negative numbers and empty texts all have a defined
result) and cheap (at most quadratic in the length of a list), so a reference runs in microseconds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable

FAMILIES = ("list", "string", "number", "dict", "parser", "algorithm")

#: How each type is named in statements, and the parameter name of a function taking it.
TYPE_WORDS = {
    "ints": "a list of integers",
    "int": "an integer",
    "str": "a string",
    "strs": "a list of strings",
    "dict": "a dictionary from strings to integers",
    "bool": "a boolean (True or False)",
}
PARAMETER = {"ints": "numbers", "int": "n", "str": "text", "strs": "words", "dict": "counts"}

Params = dict[str, Any]


@dataclass(frozen=True)
class Block:
    """One building block: ``code`` and ``text`` are ``str.format`` templates over the parameters ``draw`` makes.

    ``first_only`` blocks (parsers) start a task and bring their own ``inputs(rng, size)`` generator and
    ``edges`` (edge-case inputs), since they only accept text of a particular shape.
    """

    name: str
    family: str
    takes: str
    gives: str
    code: str
    text: str
    draw: Callable[[random.Random], Params] = lambda rng: {}
    first_only: bool = False
    inputs: Callable[[random.Random, int], Any] | None = None
    edges: tuple[Any, ...] = ()

    def render(self, params: Params) -> tuple[str, str]:
        """``(code, text)`` with the parameters filled in."""
        return self.code.format(**params), self.text.format(**params)


def _signed(b: int) -> Params:
    return {"sign": "+" if b >= 0 else "-", "magnitude": abs(b)}


def _affine(rng: random.Random) -> Params:
    b = rng.choice([-5, -4, -3, -2, -1, 1, 2, 3, 4, 5])
    return {"a": rng.randint(2, 4), **_signed(b)}


def _quote(char: str) -> str:
    return "a space" if char == " " else f"'{char}'"


# ----------------------------------------------------------------------------- parser inputs

SYLLABLE_START = "bcdfghklmnprstvz"
VOWELS = "aeiou"


def word(rng: random.Random) -> str:
    """A made-up lower-case word of one to three syllables."""
    text = "".join(rng.choice(SYLLABLE_START) + rng.choice(VOWELS) for _ in range(rng.randint(1, 3)))
    return text + (rng.choice(SYLLABLE_START) if rng.random() < 0.3 else "")


def _pairs_text(rng: random.Random, size: int) -> str:
    keys = [word(rng)[:3] for _ in range(max(1, size // 2))]
    return ";".join(f"{rng.choice(keys)}={rng.randint(-20, 99)}" for _ in range(rng.randint(0, size)))


def _sum_text(rng: random.Random, size: int) -> str:
    text = str(rng.randint(0, 99))
    for _ in range(rng.randint(0, size)):
        text += rng.choice("+-") + str(rng.randint(0, 99))
    return text


def _brackets_text(rng: random.Random, size: int) -> str:
    def balanced(depth: int) -> str:
        out = ""
        while rng.random() < 0.6 and len(out) < 2 * size:
            opening, closing = rng.choice([("(", ")"), ("[", "]"), ("{", "}")])
            out += opening + (balanced(depth + 1) if depth < 4 else "") + closing
        return out

    text = balanced(0)
    if text and rng.random() < 0.5:
        # Break it: drop, swap or change one character.
        position = rng.randrange(len(text))
        text = text[:position] + rng.choice(["", rng.choice("()[]{}")]) + text[position + 1 :]
    return text


def _csv_text(rng: random.Random, size: int) -> str:
    return ",".join(str(rng.randint(-30, 30)) for _ in range(rng.randint(0, size)))


def _rpn_text(rng: random.Random, size: int) -> str:
    tokens = [str(rng.randint(0, 9))]
    depth = 1
    for _ in range(rng.randint(0, size)):
        if depth >= 2 and rng.random() < 0.5:
            tokens.append(rng.choice("+-*"))
            depth -= 1
        else:
            tokens.append(str(rng.randint(0, 9)))
            depth += 1
    while depth > 1:
        tokens.append(rng.choice("+-*"))
        depth -= 1
    return " ".join(tokens)


def _clock_text(rng: random.Random, size: int) -> str:
    return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"


# ----------------------------------------------------------------------------- the blocks

DEDUPE = """seen = set()
kept = []
for item in value:
    if item not in seen:
        seen.add(item)
        kept.append(item)
value = kept"""

COUNTS = """counts = {{}}
for item in value:
    counts[item] = counts.get(item, 0) + 1
value = counts"""

BLOCKS: tuple[Block, ...] = (
    # -- list: ints -> ints
    Block(
        "keep_greater",
        "list",
        "ints",
        "ints",
        "value = [x for x in value if x > {k}]",
        "Keep only the numbers greater than {k}, in their order.",
        lambda rng: {"k": rng.randint(-3, 8)},
    ),
    Block(
        "keep_parity",
        "list",
        "ints",
        "ints",
        "value = [x for x in value if x % 2 == {p}]",
        "Keep only the {kind} numbers, in their order.",
        lambda rng: (lambda p: {"p": p, "kind": "odd" if p else "even"})(rng.randint(0, 1)),
    ),
    Block(
        "drop_multiples",
        "list",
        "ints",
        "ints",
        "value = [x for x in value if x % {m} != 0]",
        "Remove every number divisible by {m} (0 included).",
        lambda rng: {"m": rng.randint(3, 5)},
    ),
    Block(
        "affine",
        "list",
        "ints",
        "ints",
        "value = [{a} * x {sign} {magnitude} for x in value]",
        "Replace each number x by {a} * x {sign} {magnitude}.",
        _affine,
    ),
    Block(
        "sort",
        "list",
        "ints",
        "ints",
        "value = sorted(value{reverse})",
        "Sort the numbers in {order} order.",
        lambda rng: rng.choice([{"reverse": "", "order": "increasing"}, {"reverse": ", reverse=True", "order": "decreasing"}]),
    ),
    Block("reverse", "list", "ints", "ints", "value = value[::-1]", "Reverse the order of the numbers."),
    Block("dedupe", "list", "ints", "ints", DEDUPE, "Remove repeated numbers, keeping only the first occurrence of each."),
    Block(
        "running_total",
        "list",
        "ints",
        "ints",
        "total = 0\nsums = []\nfor x in value:\n    total += x\n    sums.append(total)\nvalue = sums",
        "Replace the numbers by their running totals: the i-th number becomes the sum of the first i numbers.",
    ),
    Block(
        "rotate",
        "list",
        "ints",
        "ints",
        "if value:\n    shift = {k} % len(value)\n    value = value[shift:] + value[:shift]",
        "Rotate the list left by {k} (k mod n for a list of n numbers): that many numbers move from the front to the end, "
        "in the same order; an empty list stays empty.",
        lambda rng: {"k": rng.randint(1, 3)},
    ),
    Block(
        "take_first",
        "list",
        "ints",
        "ints",
        "value = value[:{k}]",
        "Keep only the first {k} numbers (all of them if there are fewer).",
        lambda rng: {"k": rng.randint(2, 5)},
    ),
    Block(
        "differences",
        "list",
        "ints",
        "ints",
        "value = [value[i + 1] - value[i] for i in range(len(value) - 1)]",
        "Replace the numbers by the differences of neighbours: each number after the first minus the one before it "
        "(fewer than two numbers give the empty list).",
    ),
    Block(
        "clamp",
        "list",
        "ints",
        "ints",
        "value = [min(max(x, {low}), {high}) for x in value]",
        "Clamp each number to the range from {low} to {high}: smaller numbers become {low}, larger ones {high}.",
        lambda rng: (lambda low: {"low": low, "high": low + rng.randint(3, 8)})(rng.randint(-2, 2)),
    ),
    Block("absolute", "list", "ints", "ints", "value = [abs(x) for x in value]", "Replace each number by its absolute value."),
    # -- list: ints -> other
    Block("sum", "list", "ints", "int", "value = sum(value)", "Take the sum of the numbers (0 for an empty list)."),
    Block("largest", "list", "ints", "int", "value = max(value) if value else 0", "Take the largest number (0 for an empty list)."),
    Block("smallest", "list", "ints", "int", "value = min(value) if value else 0", "Take the smallest number (0 for an empty list)."),
    Block(
        "count_greater",
        "list",
        "ints",
        "int",
        "value = sum(1 for x in value if x > {k})",
        "Count the numbers greater than {k}.",
        lambda rng: {"k": rng.randint(-2, 6)},
    ),
    Block("count_distinct", "list", "ints", "int", "value = len(set(value))", "Count the distinct numbers."),
    Block(
        "product_mod",
        "list",
        "ints",
        "int",
        "product = 1\nfor x in value:\n    product = product * x % {m}\nvalue = product",
        "Take the product of the numbers modulo {m}, a number from 0 to {top} (the product of no numbers is 1).",
        lambda rng: (lambda m: {"m": m, "top": m - 1})(rng.choice([7, 10, 97, 1000])),
    ),
    Block(
        "join_numbers",
        "list",
        "ints",
        "str",
        'value = "{sep}".join(str(x) for x in value)',
        "Join the numbers, written in decimal, into one text, separated by {sep_words}.",
        lambda rng: (lambda sep: {"sep": sep, "sep_words": _quote(sep)})(rng.choice([",", "-", " ", ";"])),
    ),
    Block(
        "is_sorted",
        "list",
        "ints",
        "bool",
        "value = all(value[i] <= value[i + 1] for i in range(len(value) - 1))",
        "Return True if every number is at most the next one (fewer than two numbers count as sorted), otherwise False.",
    ),
    Block(
        "has_repeat",
        "list",
        "ints",
        "bool",
        "value = len(set(value)) != len(value)",
        "Return True if some number occurs more than once, otherwise False.",
    ),
    # -- list: strs
    Block(
        "sort_words",
        "list",
        "strs",
        "strs",
        "value = sorted(value{key})",
        "Sort the words {how}.",
        lambda rng: rng.choice(
            [
                {"key": "", "how": "alphabetically (by code point, so upper case comes first)"},
                {
                    "key": ", key=lambda w: (len(w), w)",
                    "how": "by length, shorter first, and alphabetically (by code point) among words of equal length",
                },
            ]
        ),
    ),
    Block(
        "keep_long",
        "list",
        "strs",
        "strs",
        "value = [w for w in value if len(w) > {k}]",
        "Keep only the words longer than {k} characters, in their order.",
        lambda rng: {"k": rng.randint(2, 4)},
    ),
    Block("upper_words", "list", "strs", "strs", "value = [w.upper() for w in value]", "Convert each word to upper case."),
    Block("reverse_each", "list", "strs", "strs", "value = [w[::-1] for w in value]", "Reverse each word (the letters, not the list)."),
    Block("dedupe_words", "list", "strs", "strs", DEDUPE, "Remove repeated words, keeping only the first occurrence of each."),
    Block(
        "join_words",
        "list",
        "strs",
        "str",
        'value = "{sep}".join(value)',
        "Join the words into one text, separated by {sep_words}.",
        lambda rng: (lambda sep: {"sep": sep, "sep_words": _quote(sep)})(rng.choice([" ", "-", ","])),
    ),
    Block(
        "longest_word",
        "list",
        "strs",
        "str",
        'best = ""\nfor w in value:\n    if len(w) > len(best):\n        best = w\nvalue = best',
        "Take the longest word (the first of equally long ones; the empty text for no words).",
    ),
    Block(
        "acronym",
        "list",
        "strs",
        "str",
        'value = "".join(w[0].upper() for w in value if w)',
        "Make an acronym: the first character of each non-empty word, in upper case, joined together.",
    ),
    Block("total_length", "list", "strs", "int", "value = sum(len(w) for w in value)", "Take the total number of characters of all the words."),
    Block(
        "count_starting",
        "list",
        "strs",
        "int",
        'value = sum(1 for w in value if w.startswith("{c}"))',
        "Count the words that start with '{c}'.",
        lambda rng: {"c": rng.choice("bdkmst")},
    ),
    Block("lengths", "list", "strs", "ints", "value = [len(w) for w in value]", "Replace each word by its length."),
    Block(
        "word_counts", "list", "strs", "dict", COUNTS, "Count the words: a dictionary from each word that occurs to the number of times it occurs."
    ),
    # -- algorithm: ints -> *
    Block(
        "max_subarray",
        "algorithm",
        "ints",
        "int",
        "best = 0\ncurrent = 0\nfor x in value:\n    current = max(0, current + x)\n    best = max(best, current)\nvalue = best",
        "Take the largest sum of a run of consecutive numbers, where the empty run counts (so the result is at least 0).",
    ),
    Block(
        "inversions",
        "algorithm",
        "ints",
        "int",
        "count = 0\nfor i in range(len(value)):\n    for j in range(i + 1, len(value)):\n        if value[i] > value[j]:\n"
        "            count += 1\nvalue = count",
        "Count the inversions: pairs of positions i < j where the number at i is greater than the number at j.",
    ),
    Block(
        "longest_rise",
        "algorithm",
        "ints",
        "int",
        "best = 0\nrun = 0\nfor i in range(len(value)):\n    if i > 0 and value[i] > value[i - 1]:\n        run += 1\n    else:\n"
        "        run = 1\n    best = max(best, run)\nvalue = best",
        "Take the length of the longest run of neighbouring numbers that strictly increase (0 for an empty list, "
        "1 if no number is greater than the one before it).",
    ),
    Block(
        "lis",
        "algorithm",
        "ints",
        "int",
        "lengths = []\nfor i in range(len(value)):\n    longest = 1\n    for j in range(i):\n        if value[j] < value[i]:\n"
        "            longest = max(longest, lengths[j] + 1)\n    lengths.append(longest)\nvalue = max(lengths) if lengths else 0",
        "Take the length of the longest strictly increasing subsequence (numbers kept in their order, not necessarily "
        "neighbours; 0 for an empty list).",
    ),
    Block(
        "window_max",
        "algorithm",
        "ints",
        "ints",
        "value = [max(value[i:i + {k}]) for i in range(len(value) - {k} + 1)]",
        "Replace the numbers by the largest number of each window of {k} neighbouring numbers, from left to right "
        "(fewer than {k} numbers give the empty list).",
        lambda rng: {"k": rng.randint(2, 3)},
    ),
    Block(
        "pair_sums",
        "algorithm",
        "ints",
        "int",
        "count = 0\nfor i in range(len(value)):\n    for j in range(i + 1, len(value)):\n        if value[i] + value[j] == {k}:\n"
        "            count += 1\nvalue = count",
        "Count the pairs of positions i < j whose numbers add up to {k}.",
        lambda rng: {"k": rng.randint(4, 12)},
    ),
    Block(
        "prefix_max",
        "algorithm",
        "ints",
        "ints",
        "best = None\nout = []\nfor x in value:\n    best = x if best is None or x > best else best\n    out.append(best)\nvalue = out",
        "Replace each number by the largest number up to and including it.",
    ),
    # -- number: int -> *
    Block(
        "digit_sum",
        "number",
        "int",
        "int",
        "value = sum(int(d) for d in str(abs(value)))",
        "Take the sum of the decimal digits of the number's absolute value.",
    ),
    Block(
        "reverse_digits",
        "number",
        "int",
        "int",
        "sign = -1 if value < 0 else 1\nvalue = sign * int(str(abs(value))[::-1])",
        "Reverse the decimal digits of the number's absolute value (leading zeros vanish) and keep its sign.",
    ),
    Block(
        "collatz",
        "number",
        "int",
        "int",
        "steps = 0\nwhile value > 1:\n    value = value // 2 if value % 2 == 0 else 3 * value + 1\n    steps += 1\nvalue = steps",
        "Count the steps the Collatz process takes to reach 1: an even number is halved, an odd one becomes three times "
        "itself plus 1 (0 for a number below 2).",
    ),
    Block(
        "count_divisors",
        "number",
        "int",
        "int",
        "n = abs(value)\ncount = 0\nd = 1\nwhile d * d <= n:\n    if n % d == 0:\n        count += 1 if d * d == n else 2\n    d += 1\nvalue = count",
        "Count the positive divisors of the number's absolute value (0 for 0).",
    ),
    Block(
        "gcd",
        "number",
        "int",
        "int",
        "a, b = abs(value), {k}\nwhile b:\n    a, b = b, a % b\nvalue = a",
        "Take the greatest common divisor of the number and {k}.",
        lambda rng: {"k": rng.choice([6, 12, 18, 20, 30, 36])},
    ),
    Block(
        "triangular",
        "number",
        "int",
        "int",
        "value = value * (value + 1) // 2 if value > 0 else 0",
        "Take the sum of the whole numbers from 1 up to the number (0 if it is below 1).",
    ),
    Block(
        "digits",
        "number",
        "int",
        "ints",
        "value = [int(d) for d in str(abs(value))]",
        "Replace the number by the list of the decimal digits of its absolute value, most significant first.",
    ),
    Block(
        "divisors",
        "number",
        "int",
        "ints",
        "n = abs(value)\nfound = []\nd = 1\nwhile d * d <= n:\n    if n % d == 0:\n        found.append(d)\n"
        "        found.append(n // d)\n    d += 1\nvalue = sorted(set(found))",
        "Replace the number by the list of the positive divisors of its absolute value, in increasing order (empty for 0).",
    ),
    Block(
        "binary_digits",
        "number",
        "int",
        "ints",
        "value = [int(b) for b in bin(abs(value))[2:]]",
        "Replace the number by the list of the binary digits of its absolute value, most significant first ([0] for 0).",
    ),
    Block(
        "to_base",
        "number",
        "int",
        "str",
        'symbols = "0123456789abcdef"\nn = abs(value)\ntext = ""\nwhile True:\n    text = symbols[n % {b}] + text\n    n //= {b}\n'
        '    if n == 0:\n        break\nvalue = ("-" if value < 0 else "") + text',
        "Write the number in base {b} (digits 0-9, then a-f), with '-' in front of a negative number.",
        lambda rng: {"b": rng.choice([2, 3, 5, 7, 8, 16])},
    ),
    Block(
        "roman",
        "number",
        "int",
        "str",
        'numerals = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"), '
        '(10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]\nn = value if 1 <= value <= 3999 else 0\ntext = ""\n'
        "for amount, letters in numerals:\n    while n >= amount:\n        text += letters\n        n -= amount\nvalue = text",
        "Write the number in Roman numerals (the empty text for a number below 1 or above 3999).",
    ),
    Block(
        "is_prime",
        "number",
        "int",
        "bool",
        "n = value\nprime = n >= 2\nd = 2\nwhile d * d <= n and prime:\n    if n % d == 0:\n        prime = False\n    d += 1\nvalue = prime",
        "Return True if the number is prime, otherwise False.",
    ),
    # -- string: str -> *
    Block("reverse_text", "string", "str", "str", "value = value[::-1]", "Reverse the text."),
    Block(
        "change_case",
        "string",
        "str",
        "str",
        "value = value.{method}()",
        "Convert the text {how}.",
        lambda rng: rng.choice(
            [
                {"method": "upper", "how": "to upper case"},
                {"method": "lower", "how": "to lower case"},
                {"method": "swapcase", "how": "by swapping the case of every letter"},
            ]
        ),
    ),
    Block(
        "remove_vowels",
        "string",
        "str",
        "str",
        'value = "".join(c for c in value if c not in "aeiouAEIOU")',
        "Remove every vowel (a, e, i, o, u, in either case).",
    ),
    Block(
        "caesar",
        "string",
        "str",
        "str",
        'shifted = []\nfor c in value:\n    if "a" <= c <= "z":\n        shifted.append(chr((ord(c) - ord("a") + {k}) % 26 + ord("a")))\n'
        '    elif "A" <= c <= "Z":\n        shifted.append(chr((ord(c) - ord("A") + {k}) % 26 + ord("A")))\n    else:\n'
        '        shifted.append(c)\nvalue = "".join(shifted)',
        "Shift every letter {k} places forward in the alphabet, wrapping around from z to a and keeping its case; other characters stay as they are.",
        lambda rng: {"k": rng.randint(1, 5)},
    ),
    Block(
        "run_length",
        "string",
        "str",
        "str",
        "parts = []\ni = 0\nwhile i < len(value):\n    j = i\n    while j < len(value) and value[j] == value[i]:\n        j += 1\n"
        '    parts.append(value[i] + str(j - i))\n    i = j\nvalue = "".join(parts)',
        "Run-length encode the text: each longest run of one repeated character becomes that character followed by "
        'the length of the run ("aab" becomes "a2b1").',
    ),
    Block(
        "squeeze",
        "string",
        "str",
        "str",
        'value = " ".join(value.split())',
        "Collapse the whitespace: split the text into words at whitespace and join them with single spaces.",
    ),
    Block(
        "reverse_words",
        "string",
        "str",
        "str",
        'value = " ".join(value.split()[::-1])',
        "Reverse the order of the words (split at whitespace), joining them with single spaces.",
    ),
    Block(
        "dedupe_chars",
        "string",
        "str",
        "str",
        DEDUPE.replace("value = kept", 'value = "".join(kept)'),
        "Remove repeated characters, keeping only the first occurrence of each.",
    ),
    Block("keep_letters", "string", "str", "str", 'value = "".join(c for c in value if c.isalpha())', "Keep only the letters."),
    Block(
        "replace_char",
        "string",
        "str",
        "str",
        'value = value.replace("{old}", "{new}")',
        "Replace every '{old}' with '{new}'.",
        lambda rng: {"old": rng.choice("aeiost"), "new": rng.choice("xyz*")},
    ),
    Block(
        "count_vowels",
        "string",
        "str",
        "int",
        'value = sum(1 for c in value if c in "aeiouAEIOU")',
        "Count the vowels (a, e, i, o, u, in either case).",
    ),
    Block(
        "count_char",
        "string",
        "str",
        "int",
        'value = value.count("{c}")',
        "Count the occurrences of {c_words}.",
        lambda rng: (lambda c: {"c": c, "c_words": _quote(c)})(rng.choice("aeinrst ")),
    ),
    Block(
        "longest_repeat",
        "string",
        "str",
        "int",
        "best = 0\nrun = 0\nfor i in range(len(value)):\n    run = run + 1 if i > 0 and value[i] == value[i - 1] else 1\n"
        "    best = max(best, run)\nvalue = best",
        "Take the length of the longest run of one repeated character (0 for the empty text).",
    ),
    Block("word_count", "string", "str", "int", "value = len(value.split())", "Count the words (separated by whitespace)."),
    Block(
        "digit_total",
        "string",
        "str",
        "int",
        "value = sum(int(c) for c in value if c.isdigit())",
        "Take the sum of the digit characters (each digit counts on its own).",
    ),
    Block("split_words", "string", "str", "strs", "value = value.split()", "Split the text into its words (separated by whitespace)."),
    Block(
        "char_codes",
        "string",
        "str",
        "ints",
        "value = [ord(c) for c in value]",
        "Replace the text by the list of the Unicode code points of its characters.",
    ),
    Block(
        "char_counts",
        "string",
        "str",
        "dict",
        COUNTS,
        "Count the characters: a dictionary from each character that occurs to the number of times it occurs.",
    ),
    Block(
        "is_palindrome",
        "string",
        "str",
        "bool",
        "value = value == value[::-1]",
        "Return True if the text reads the same backwards, character by character, otherwise False.",
    ),
    # -- dict: dict -> *
    Block("value_sum", "dict", "dict", "int", "value = sum(value.values())", "Take the sum of the values (0 for an empty dictionary)."),
    Block(
        "count_values_above",
        "dict",
        "dict",
        "int",
        "value = sum(1 for v in value.values() if v > {k})",
        "Count the entries whose value is greater than {k}.",
        lambda rng: {"k": rng.randint(-2, 8)},
    ),
    Block("max_value", "dict", "dict", "int", "value = max(value.values()) if value else 0", "Take the largest value (0 for an empty dictionary)."),
    Block(
        "keys_by_value",
        "dict",
        "dict",
        "strs",
        "counts = value\nvalue = sorted(counts, key=lambda key: (-counts[key], key))",
        "Take the keys, sorted by their values from largest to smallest, and alphabetically among equal values.",
    ),
    Block(
        "keys_at_least",
        "dict",
        "dict",
        "strs",
        "value = sorted(key for key in value if value[key] >= {k})",
        "Take the keys whose value is at least {k}, in alphabetical order.",
        lambda rng: {"k": rng.randint(-2, 8)},
    ),
    Block(
        "filter_values",
        "dict",
        "dict",
        "dict",
        "value = {{key: v for key, v in value.items() if v > {k}}}",
        "Keep only the entries whose value is greater than {k}.",
        lambda rng: {"k": rng.randint(-2, 6)},
    ),
    Block(
        "scale_values",
        "dict",
        "dict",
        "dict",
        "value = {{key: v * {a} for key, v in value.items()}}",
        "Multiply every value by {a}.",
        lambda rng: {"a": rng.randint(2, 4)},
    ),
    Block(
        "shift_values",
        "dict",
        "dict",
        "dict",
        "value = {{key: v {sign} {magnitude} for key, v in value.items()}}",
        "Change every value v to v {sign} {magnitude}.",
        lambda rng: _signed(rng.choice([-5, -3, -1, 1, 2, 4])),
    ),
    Block(
        "format_pairs",
        "dict",
        "dict",
        "str",
        'value = ",".join(key + "=" + str(value[key]) for key in sorted(value))',
        "Write the entries as key=value pairs, in alphabetical order of the keys, separated by commas.",
    ),
    Block("sorted_values", "dict", "dict", "ints", "value = sorted(value.values())", "Take the values, in increasing order."),
    # -- parser: str (of a given shape) -> *
    Block(
        "parse_pairs",
        "parser",
        "str",
        "dict",
        'pairs = {{}}\nfor part in value.split(";"):\n    if part:\n        key, number = part.split("=")\n        pairs[key] = int(number)\nvalue = pairs',
        "The text holds key=value pairs separated by ';' (keys are letters, values integers), such as \"ab=3;c=-2\"; "
        "parse it into a dictionary, a later pair replacing an earlier one with the same key (the empty text has no pairs).",
        first_only=True,
        inputs=_pairs_text,
        edges=("", "x=0", "a=1;a=2", "ab=-7;cd=7"),
    ),
    Block(
        "eval_sum",
        "parser",
        "str",
        "int",
        'total = 0\nnumber = ""\nsign = 1\nfor c in value + "+":\n    if c.isdigit():\n        number += c\n    else:\n'
        '        total += sign * int(number)\n        number = ""\n        sign = 1 if c == "+" else -1\nvalue = total',
        "The text is a sum of non-negative integers joined by '+' and '-' signs, without spaces, such as \"12+3-45\"; evaluate it.",
        first_only=True,
        inputs=_sum_text,
        edges=("0", "7", "1-1", "10-20-30", "99+1"),
    ),
    Block(
        "brackets",
        "parser",
        "str",
        "bool",
        'closers = {{")": "(", "]": "[", "}}": "{{"}}\nstack = []\nbalanced = True\nfor c in value:\n    if c in "([{{":\n'
        "        stack.append(c)\n    elif not stack or stack.pop() != closers[c]:\n        balanced = False\n        break\n"
        "value = balanced and not stack",
        "The text is made only of the brackets ()[]{{}}; return True if they are balanced and properly nested, otherwise False.",
        first_only=True,
        inputs=_brackets_text,
        edges=("", "()", "(]", "([)]", "((", "{[()]}", ")("),
    ),
    Block(
        "parse_csv",
        "parser",
        "str",
        "ints",
        'value = [int(part) for part in value.split(",")] if value else []',
        'The text holds integers separated by commas, such as "3,-1,4"; parse it into the list of those integers '
        "(the empty text gives the empty list).",
        first_only=True,
        inputs=_csv_text,
        edges=("", "0", "-5,5", "1,1,1"),
    ),
    Block(
        "eval_rpn",
        "parser",
        "str",
        "int",
        'stack = []\nfor token in value.split():\n    if token in ("+", "-", "*"):\n        right = stack.pop()\n'
        '        left = stack.pop()\n        if token == "+":\n            stack.append(left + right)\n'
        '        elif token == "-":\n            stack.append(left - right)\n        else:\n'
        "            stack.append(left * right)\n    else:\n        stack.append(int(token))\nvalue = stack[0]",
        "The text is an expression in reverse Polish notation: one-digit integers and the operators +, - and *, separated "
        'by spaces ("3 4 + 2 *" is 14); evaluate it.',
        first_only=True,
        inputs=_rpn_text,
        edges=("5", "1 2 -", "2 3 4 * +", "0 9 *"),
    ),
    Block(
        "clock_minutes",
        "parser",
        "str",
        "int",
        'hours, minutes = value.split(":")\nvalue = int(hours) * 60 + int(minutes)',
        'The text is a time of day "HH:MM" on a 24-hour clock; take the number of minutes since midnight.',
        first_only=True,
        inputs=_clock_text,
        edges=("00:00", "23:59", "12:00", "00:01"),
    ),
)

BY_NAME = {block.name: block for block in BLOCKS}
assert len(BY_NAME) == len(BLOCKS), "block names must be unique"
