"""The coding judge's comparisons and split asserts, as issue 32 reported them.

* :func:`judge.same` is total: no pair of values makes it raise (a huge int against a float, NaN, deep,
  cyclic and unhashable values, an ``__eq__`` that raises); a comparison that cannot be made is ``False``.
* A function task's correct answer given as a ``Counter``, ``defaultdict`` or ``OrderedDict`` passes where a
  ``dict`` is expected, and a wrong one still fails.
* Split asserts carry the values real tests use (``Counter``, ``bytes``, ``complex``, ``Fraction``, ``range``,
  generators, values hundreds of levels deep, sets of frozensets, ...) and evaluate the solution's calls lazily
  (``or``, ``and``, conditional expressions, chained comparisons), so that the reference of a HumanEval-format
  and an MBPP-format file holding every such shape passes every test, while the forged-pass program scores 0 on
  every one of those tasks, all of them split; an identity test (``is``) of a value that cannot keep its
  identity is not split, and its task is not rateable.
* :func:`judge.assert_plan` treats test text too deeply nested to analyse as unsplittable.
"""

from __future__ import annotations

import collections
import fractions
import json
import math

import pytest

import parlour
from parlour.envs.coding import judge, wire
from parlour.envs.coding.loaders import load_tasks
from parlour.envs.coding.tasks import frozen_tasks
from parlour.envs.core.match import Match
from parlour.sandbox import Sandbox, SandboxUnavailable

#: The forged pass of tests/test_coding_judge_attacks.py: the harness's lines, written by the program itself.
FORGED = (
    'import os\nos.write(1, (\'\\x1e["load","ok",""]\\n\' + \'\'.join(\'\\x1e[%d,"pass","",""]\\n\' % i for i in range(64))).encode())\nos._exit(0)\n'
)
#: The forged lines in today's format, with the status a passing probe run has: it states values, never a verdict.
FORGED_OK = (
    'import os\nos.write(1, (\'\\x1e["load","ok",""]\\n\' + \'\'.join(\'\\x1e[%d,"ok",[[["o","x"]]],"",0.0]\\n\' % i '
    "for i in range(64))).encode())\nos._exit(0)\n"
)


@pytest.fixture(scope="module")
def box() -> Sandbox:
    """The warm sandbox; skip, loudly, where bubblewrap cannot start one."""
    try:
        return judge.warm_sandbox()
    except SandboxUnavailable as error:
        pytest.skip(f"CODING JUDGE VALUE TESTS SKIPPED: bubblewrap cannot run here: {error}")


# ----------------------------------------------------------------------------- same, on the host


class RaisingEq:
    """An object whose comparison raises."""

    def __eq__(self, other):
        raise ValueError("no comparing me")

    __hash__ = object.__hash__


class Unbooleable:
    """An object whose truth value raises, as the result of an ``__eq__``."""

    def __bool__(self):
        raise TypeError("no truth")


class EqUnbooleable:
    """An object whose ``__eq__`` returns a value without a truth value."""

    def __eq__(self, other):
        return Unbooleable()

    __hash__ = object.__hash__


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def test_same_never_raises_and_a_comparison_that_cannot_be_made_is_false():
    cyclic: list = []
    cyclic.append(cyclic)
    nan = float("nan")
    pairs = [
        (10**400, 1.5),
        (1.5, 10**400),
        (-(10**400), float("-inf")),
        (10**400, float("inf")),
        ([10**400], [1.5]),
        ({"a": 10**400}, {"a": 2.0}),
        (cyclic, cyclic),
        (cyclic, [[[]]]),
        (RaisingEq(), 1),
        (1, RaisingEq()),
        (RaisingEq(), RaisingEq()),
        (EqUnbooleable(), 1),
        ([RaisingEq()], [1]),
        ({1: [1]}, [[1]]),
        ([{1: 2}], [{1}]),
        (collections.Counter(a=1), [("a", 1)]),
        (nan, 10**400),
        (complex(1, 2), 1.0),
    ]
    for got, expected in pairs:
        assert judge.same(got, expected) is False, (type(got), type(expected))
    assert judge.same(nan, nan) and judge.same([nan, (nan,)], [nan, (nan,)]) and not judge.same(nan, 1.0)
    assert judge.same(10**400, 10**400) and not judge.same(10**400, 10**400 + 1)
    assert judge.same(_nested(100_000), _nested(100_000)) and not judge.same(_nested(100_000), _nested(99_999))
    assert judge.same(0.1 + 0.2, 0.3) and judge.same([1, 2.0], [1, 2]) and not judge.same(True, 1.0)


def test_show_never_raises():
    cyclic: list = []
    cyclic.append(cyclic)
    for value in (2**20000, _nested(100_000), cyclic, RaisingRepr()):
        assert isinstance(judge.show(value), str)
    assert judge.show(2**20000) == "<int that cannot be shown>"


class RaisingRepr:
    """An object whose repr raises."""

    def __repr__(self):
        raise RuntimeError("no repr")


def test_a_huge_int_against_a_float_is_a_wrong_answer_not_an_exception(box):
    # The issue's CoderTester test: assert solve([1 followed by 400 zeros, 1]) == 1.5, judged on a solution.
    tests = [(([10**400, 1],), 1.5), (([1, 2],), 3)]
    judgement = judge.judge_function(box, "def solve(numbers):\n    return sum(numbers)\n", "solve", tests)
    assert judgement.verdict == "wrong_answer" and judgement.summary()["tests"] == "WP"


def test_the_issue_s_coder_tester_match_ends_without_an_exception():
    match = Match(parlour.game_class("parlour/CoderTester-v0"), {})
    match.reset(0)
    reference = match.game.task.reference
    match.submit("coder", json.dumps({"tool": "submit", "arguments": {"code": reference}}))
    match.submit("tester", json.dumps({"tool": "submit", "arguments": {"code": "assert solve([1" + "0" * 400 + ", 1]) == 1.5"}}))
    assert match.outcome is not None and match.outcome.details["coder"]["verdict"] == "pass"


# ----------------------------------------------------------------------------- dict-like answers to function tasks


def _dict_tasks():
    return [task for task in frozen_tasks("CODE_V1") if all(isinstance(expected, dict) for _, expected in task.hidden)]


WRAPPED = """
import collections
_reference = solve
def solve(value):
    return {wrap}
"""


def test_code_v1_has_dict_tasks_and_every_mapping_type_of_a_right_answer_passes(box):
    tasks = _dict_tasks()
    assert len(tasks) == 8, [task.task_id for task in tasks]
    wraps = [
        "collections.Counter(_reference(value))",
        "collections.defaultdict(int, _reference(value))",
        "collections.OrderedDict(_reference(value))",
        "collections.OrderedDict(reversed(_reference(value).items()))",
    ]
    for task in tasks:
        for wrap in wraps:
            judgement = task.judge(box, task.reference + WRAPPED.format(wrap=wrap))
            assert judgement.verdict == "pass" and judgement.passed == len(task.hidden), (task.task_id, wrap, judgement)


def test_a_wrong_mapping_still_fails(box):
    task = _dict_tasks()[0]
    wrong = [
        "collections.Counter({**_reference(value), 'zz': 1})",
        "collections.defaultdict(int, {k: v + 1 for k, v in _reference(value).items()})",
        "list(_reference(value).items())",
        "_reference(value).keys()",
    ]
    for wrap in wrong:
        judgement = task.judge(box, task.reference + WRAPPED.format(wrap=wrap))
        assert judgement.verdict == "wrong_answer", (wrap, judgement)
    # Counter and OrderedDict compare among themselves as Python's == does, floats with the judge's tolerance.
    assert judge.same(collections.Counter(a=1), {"a": 1}) and not judge.same(collections.Counter(a=0), {})
    assert judge.same(collections.OrderedDict(a=1.0, b=2), {"b": 2, "a": 1.0 + 1e-12})
    assert not judge.same(collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=2, a=1))


def test_values_of_every_carried_type_come_back_as_they_were(box):
    code = """
import collections, decimal, fractions, itertools
def solve(kind):
    return [
        collections.Counter("abca"), collections.defaultdict(list, {"a": [1]}), collections.OrderedDict([("b", 1), ("a", 2)]),
        {frozenset({1}), frozenset()}, b"a\\x00b", bytearray(b"c"), 1 + 2j, fractions.Fraction(1, 3), range(1, 9, 2),
        decimal.Decimal("1.10"), collections.deque([3, 1]), {"k": 1}.keys(), 2 ** 20000, -(2 ** 70), "\\ud800x",
        float("inf"), (None, True, False),
    ][kind]
"""
    expected = [
        collections.Counter("abca"),
        collections.defaultdict(list, {"a": [1]}),
        collections.OrderedDict([("b", 1), ("a", 2)]),
        {frozenset({1}), frozenset()},
        b"a\x00b",
        bytearray(b"c"),
        1 + 2j,
        fractions.Fraction(1, 3),
        range(1, 9, 2),
    ]
    import decimal

    expected += [decimal.Decimal("1.10"), collections.deque([3, 1]), {"k": 1}.keys(), 2**20000, -(2**70), "\ud800x", math.inf, (None, True, False)]
    run = judge.execute(box, code, "call", [(index,) for index in range(len(expected))], entry="solve")
    for index, (outcome, want) in enumerate(zip(run.outcomes, expected)):
        assert outcome.status == "ok" and type(outcome.value) is type(want) and outcome.value == want, (index, outcome)
    assert run.outcomes[1].value.default_factory is list


def test_iterators_travel_as_their_items_and_an_endless_one_fails_only_past_the_carried_items(box):
    code = "import itertools\ndef solve(kind):\n    return (x * x for x in range(4)) if kind == 0 else itertools.count()\n"
    finite, endless = judge.execute(box, code, "call", [(0,), (1,)], entry="solve").outcomes
    assert list(finite.value) == [0, 1, 4, 9]
    assert next(endless.value) == 0
    with pytest.raises(RuntimeError, match="more than"):
        list(endless.value)


def test_a_value_that_contains_itself_is_an_error_and_a_deep_one_travels(box):
    code = (
        "def solve(kind):\n    value = []\n    if kind == 0:\n        value.append(value)\n        return value\n"
        "    for _ in range(5000):\n        value = [value]\n    return value\n"
    )
    cyclic, deep = judge.execute(box, code, "call", [(0,), (1,)], entry="solve").outcomes
    assert cyclic.status == "error" and "contains itself" in cyclic.detail
    assert deep.status == "ok" and judge.same(deep.value, _nested(5000))


@pytest.mark.parametrize(
    "ops",
    [
        [["l", 5]],
        [["f", [1]]],
        [1, 2],
        [["q", 1, 2], 1],
        [1, 0, ["q"]],
        [["s", 1]],
        [["l", 0], ["s", 1]],
        [[1, 2], ["s", 1]],
        [["zz"]],
        [["dd", 0, "os.system"]],
        [["i", "g" * 10]],
        [["D", "x"]],
        [["l", 0, [[[[1]]]]]],
        "[]",
        [["t", -1]],
    ],
)
def test_decode_refuses_malformed_operations(ops):
    with pytest.raises((ValueError, TypeError)):
        wire.decode(ops)


def test_decode_refuses_values_deeper_than_it_can_hash():
    deep = [0] + [["t", 1]] * (wire.MAX_DEPTH + 1)
    with pytest.raises(ValueError, match="levels deep"):
        wire.decode(deep)
    assert wire.decode([0] + [["t", 1]] * wire.MAX_DEPTH) is not None


# ----------------------------------------------------------------------------- split asserts: every shape


def _humaneval(name: str, body: str, asserts: list[str], setup: str = "") -> dict:
    prompt = f'def {name}(*args, **kwargs):\n    """Shape {name}."""\n'
    test = setup + "\n\ndef check(candidate):\n" + "".join(f"    {line}\n" for line in asserts) + f"\ncheck({name})\n"
    return {"task_id": f"Shapes/{name}", "entry_point": name, "prompt": prompt, "canonical_solution": body, "test": test}


#: HumanEval-format records, each with the shape it names; every one of them splits.
SHAPES = [
    _humaneval(
        "plain",
        "    return args[0] * 2\n",
        [
            "assert candidate(2) == 4",
            "assert candidate('a') == 'aa', 'message'",
            "assert candidate(2) == 4 if True else candidate(x=1)",
            "assert not candidate(0)",
        ],
    ),
    _humaneval(
        "wrapped",
        "    return sorted(set(args[0]))\n",
        [
            "assert set(candidate([2, 1, 2])) == {1, 2}",
            "assert len(candidate([])) == 0",
            "assert candidate([3, 1])[0] == 1",
            "assert isinstance(candidate([1]), list)",
        ],
    ),
    _humaneval(
        "floats",
        "    return args[0] * 3\n",
        [
            "assert abs(candidate(0.1) - 0.3) < 1e-9",
            "assert math.isclose(candidate(1.5), 4.5)",
            "assert math.isnan(candidate(float('nan')))",
            "assert candidate(float('inf')) == float('inf')",
        ],
        setup="import math",
    ),
    # Short-circuits: the call behind `or`, `and`, a conditional expression or a chained comparison that is not
    # reached would raise (candidate(None) fails), as Python never evaluates it.
    _humaneval(
        "lazy",
        "    return None if args[0] == [] else args[0][0] + 1\n",
        [
            "assert candidate([]) is None or candidate([])[0] == 0",
            "assert candidate([1]) == 2 or candidate(None)",
            "assert (candidate([1]) == 2) if True else candidate(None)",
            "assert not (3 < candidate([1]) < candidate(None))",
            "assert candidate([]) is None and (candidate([5]) == 6 or candidate(None))",
            "assert candidate([0]) and candidate([0]) == 1",
        ],
    ),
    _humaneval(
        "counter",
        "    import collections\n    return collections.Counter(args[0])\n",
        [
            "assert candidate('abca') == {'a': 2, 'b': 1, 'c': 1}",
            "assert candidate('ab') == collections.Counter('ba')",
            "assert candidate('aab').most_common(1) == [('a', 2)]",
            "assert isinstance(candidate(''), collections.Counter)",
        ],
    ),
    _humaneval(
        "mappings",
        "    import collections\n    d = collections.defaultdict(list)\n    for i, c in enumerate(args[0]):\n"
        "        d[c].append(i)\n    return d if kwargs.get('plain', True) else collections.OrderedDict(d)\n",
        [
            "assert candidate('aba') == {'a': [0, 2], 'b': [1]}",
            "assert list(candidate('ba', plain=False).items()) == [('b', [0]), ('a', [1])]",
            "assert sorted(candidate('ab').keys()) == ['a', 'b']",
            "assert candidate('').default_factory() == []",
        ],
    ),
    _humaneval(
        "scalars",
        "    import fractions, decimal\n    return {'b': b'a\\x00b', 'c': 2 + 1j, 'q': fractions.Fraction(1, 3), 'r': range(3),"
        " 'd': decimal.Decimal('1.10'), 'ba': bytearray(b'x'), 'big': 2 ** 20000}[args[0]]\n",
        [
            "assert candidate('b') == b'a\\x00b'",
            "assert candidate('c') == 2 + 1j",
            "assert candidate('q') == fractions.Fraction(1, 3)",
            "assert candidate('q') == Fraction(2, 6)",
            "assert candidate('r') == range(0, 3)",
            "assert candidate('d') == decimal.Decimal('1.10')",
            "assert candidate('ba') == bytearray(b'x')",
            "assert candidate('big') % 1000 == pow(2, 20000, 1000)",
        ],
        setup="from fractions import Fraction",
    ),
    _humaneval(
        "iterators",
        "    import itertools, collections\n    if args[0] == 'count':\n        return itertools.count()\n"
        "    if args[0] == 'map':\n        return map(str, range(3))\n    if args[0] == 'deque':\n        return collections.deque([2, 1])\n"
        "    return (x * x for x in range(args[0]))\n",
        [
            "assert list(candidate(3)) == [0, 1, 4]",
            "assert next(candidate('count')) == 0",
            "assert sum(candidate(4)) == 14",
            "assert list(candidate('map')) == ['0', '1', '2']",
            "assert list(candidate('deque')) == [2, 1]",
            "assert candidate('deque') == collections.deque([2, 1])",
        ],
    ),
    _humaneval(
        "identity",
        "    return {0: None, 1: True, 2: False}.get(args[0], args[0])\n",
        [
            "assert candidate(0) is None",
            "assert candidate(1) is True",
            "assert candidate(2) is False",
            "assert candidate(5) is not None and candidate(5) == 5",
            "assert type(candidate(5)) is int",
        ],
    ),
    _humaneval(
        "deep",
        "    value = []\n    for _ in range(args[0]):\n        value = [value]\n    return value\n",
        ["assert candidate(300) == nest(300)", "assert depth(candidate(5000)) == 5000", "assert candidate(250)[0][0] == nest(248)"],
        setup="def nest(n):\n    value = []\n    for _ in range(n):\n        value = [value]\n    return value\n\n"
        "def depth(value):\n    count = 0\n    while value:\n        value = value[0]\n        count += 1\n    return count\n",
    ),
    _humaneval(
        "frozensets",
        "    from itertools import combinations\n    items = args[0]\n"
        "    return {frozenset(c) for n in range(len(items) + 1) for c in combinations(items, n)}\n",
        [
            "assert candidate([1, 2]) == {frozenset(), frozenset({1}), frozenset({2}), frozenset({1, 2})}",
            "assert frozenset({1}) in candidate([1])",
            "assert candidate([]) == {frozenset()}",
        ],
    ),
    _humaneval(
        "structures",
        "    import collections\n    Point = collections.namedtuple('Point', 'x y')\n"
        "    return {'tuple': Point(1, 2), 'nested': [(1, 'a'), {'k': (2.5, None)}], 'text': 'é\\u00e9\\U0001F600'}[args[0]]\n",
        [
            "assert candidate('tuple') == (1, 2)",
            "assert candidate('tuple').x == 1",
            "assert candidate('nested') == [(1, 'a'), {'k': (2.5, None)}]",
            "assert candidate('text') == 'é\\u00e9\\U0001F600'",
            "assert candidate('text').upper() == 'ÉÉ\\U0001F600'",
        ],
    ),
]

#: MBPP-format records: task 88 of MBPP as it is, and the shapes again in MBPP's form (test_list, setup code).
MBPP_SHAPES = [
    {
        "task_id": 88,
        "text": "Write a function to get the frequency of the elements in a list.",
        "code": "import collections\r\ndef freq_count(list1):\r\n  freq_count= collections.Counter(list1)\r\n  return freq_count",
        "test_setup_code": "",
        "challenge_test_list": [],
        "test_list": [
            "assert freq_count([10,10,10,10,20,20,20,20,40,40,50,50,30])==({10: 4, 20: 4, 40: 2, 50: 2, 30: 1}) ",
            "assert freq_count([1,2,3,4,3,2,4,1,3,1,4])==({1:3, 2:2,3:3,4:3}) ",
            "assert freq_count([5,6,7,4,9,10,4,5,6,7,9,5])==({10:1,5:3,6:2,7:2,4:2,9:2}) ",
        ],
    },
    {
        "task_id": 901,
        "text": "Return the bytes of a text, encoded as UTF-8.",
        "code": "def to_bytes(text):\n    return text.encode()\n",
        "test_setup_code": "",
        "challenge_test_list": ["assert to_bytes('') == b''"],
        "test_list": ["assert to_bytes('ab') == b'ab'", "assert to_bytes('é') == b'\\xc3\\xa9'", "assert len(to_bytes('é')) == 2"],
    },
    {
        "task_id": 902,
        "text": "Return the roots of z*z + 1.",
        "code": "def roots():\n    return (1j, -1j)\n",
        "test_setup_code": "",
        "test_list": ["assert roots() == (1j, -1j)", "assert roots()[0] * roots()[1] == 1", "assert abs(roots()[0]) == 1.0"],
    },
    {
        "task_id": 903,
        "text": "Return n/d as a fraction.",
        "code": "from fractions import Fraction\ndef ratio(n, d):\n    return Fraction(n, d)\n",
        "test_setup_code": "from fractions import Fraction",
        "test_list": ["assert ratio(2, 4) == Fraction(1, 2)", "assert ratio(1, 3) + ratio(2, 3) == 1", "assert ratio(3, 1).denominator == 1"],
    },
    {
        "task_id": 904,
        "text": "Return the even numbers below n as a range.",
        "code": "def evens(n):\n    return range(0, n, 2)\n",
        "test_setup_code": "",
        "test_list": ["assert evens(5) == range(0, 6, 2)", "assert list(evens(5)) == [0, 2, 4]", "assert 4 in evens(5)"],
    },
    {
        "task_id": 905,
        "text": "Yield the squares below n.",
        "code": "def squares(n):\n    for i in range(n):\n        yield i * i\n",
        "test_setup_code": "",
        "test_list": ["assert list(squares(4)) == [0, 1, 4, 9]", "assert next(squares(9)) == 0", "assert tuple(squares(2)) == (0, 1)"],
    },
    {
        "task_id": 906,
        "text": "Return the first item of a list, or None for an empty one.",
        "code": "def first(items):\n    return items[0] if items else None\n",
        "test_setup_code": "",
        "test_list": [
            "assert first([]) is None or first([])[0] == 0",
            "assert first([7]) == 7 if first([]) is None else first(None)",
            "assert first([]) is None",
            "assert 1 <= first([2]) <= 3 or first(5)",
        ],
    },
    {
        "task_id": 907,
        "text": "Return the subsets of a list as a set of frozensets.",
        "code": "def subsets(items):\n    result = {frozenset()}\n    for item in items:\n        result |= {s | {item} for s in result}\n    return result\n",
        "test_setup_code": "",
        "test_list": ["assert subsets([1]) == {frozenset(), frozenset([1])}", "assert len(subsets([1, 2, 3])) == 8"],
    },
    {
        "task_id": 908,
        "text": "Nest an empty list n times.",
        "code": "def nest(n):\n    v = []\n    for _ in range(n):\n        v = [v]\n    return v\n",
        "test_setup_code": "def expected(n):\n    v = []\n    for _ in range(n):\n        v = [v]\n    return v\n",
        "test_list": ["assert nest(400) == expected(400)", "assert nest(0) == []"],
    },
    {
        "task_id": 909,
        "text": "Count the words of a text by length.",
        "code": "from collections import defaultdict, OrderedDict\ndef by_length(text):\n    d = defaultdict(int)\n    for w in text.split():\n"
        "        d[len(w)] += 1\n    return OrderedDict(sorted(d.items()))\n",
        "test_setup_code": "",
        "test_list": ["assert by_length('a bb cc') == {1: 1, 2: 2}", "assert list(by_length('bb a')) == [1, 2]"],
    },
]

#: Wrong solutions of the shape tasks: each must fail (the lazy calls, the carried types and identity are not loosened).
WRONG = {
    "lazy": "def lazy(*args, **kwargs):\n    return 0 if args[0] == [] else args[0][0] + 2\n",
    "counter": "import collections\ndef counter(*args, **kwargs):\n    return collections.Counter(args[0] + 'a')\n",
    "scalars": "def scalars(*args, **kwargs):\n    return {'b': 'a\\x00b', 'c': 2 + 1.5j, 'q': 1 / 3, 'r': [0, 1, 2], 'd': 1.1, 'ba': b'x', 'big': 2 ** 20000 + 1}[args[0]]\n",
    "iterators": "def iterators(*args, **kwargs):\n    return [] if args[0] == 'count' else iter([1])\n",
    "identity": "def identity(*args, **kwargs):\n    return {0: 0, 1: 1, 2: 0}.get(args[0], None)\n",
    "deep": "def deep(*args, **kwargs):\n    value = []\n    for _ in range(args[0] + 1):\n        value = [value]\n    return value\n",
    "frozensets": "def frozensets(*args, **kwargs):\n    return [frozenset(args[0])]\n",
}


@pytest.fixture(scope="module")
def shape_files(tmp_path_factory) -> dict[str, str]:
    """The HumanEval-format and MBPP-format files of every shape."""
    folder = tmp_path_factory.mktemp("shapes")
    paths = {}
    for name, records in (("humaneval", SHAPES), ("mbpp", MBPP_SHAPES)):
        path = folder / f"{name}.jsonl"
        path.write_text("".join(json.dumps(record) + "\n" for record in records))
        paths[name] = str(path)
    return paths


@pytest.mark.parametrize("name", ["humaneval", "mbpp"])
def test_every_shape_splits_its_reference_passes_and_the_forged_pass_scores_nothing(box, shape_files, name):
    tasks = load_tasks(shape_files[name])
    assert all(task.host_checked for task in tasks), [task.task_id for task in tasks if not task.host_checked]
    assert parlour.game_class("parlour/Code-v0")(tasks=shape_files[name]).rateable
    for task in tasks:
        judgement = task.judge(box, task.reference)
        assert judgement.verdict == "pass" and judgement.passed == len(task.hidden) > 0, (task.task_id, judgement)
        for forged in (FORGED, FORGED_OK):
            assert task.judge(box, forged).passed == 0, task.task_id


def test_wrong_solutions_of_the_shapes_fail(box, shape_files):
    tasks = {task.entry_point: task for task in load_tasks(shape_files["humaneval"])}
    for entry, code in WRONG.items():
        judgement = tasks[entry].judge(box, code)
        assert judgement.verdict != "pass" and judgement.passed < len(tasks[entry].hidden), (entry, judgement)


def test_a_call_that_raises_where_the_assert_reaches_it_is_an_error_and_one_it_does_not_reach_is_ignored(box):
    code = "def f(x):\n    return 1 / x\n"
    judgement = judge.judge_asserts(box, code, ["assert f(1) == 1 or f(0)", "assert f(0) == 1 or f(1)", "assert f(2) == 1 or f(1) == 1"], entry="f")
    assert judgement.summary()["tests"] == "PEP"
    assert "ZeroDivisionError" in judgement.tests[1].detail


def test_an_identity_test_of_a_value_that_cannot_keep_its_identity_is_not_split(tmp_path):
    record = _humaneval("same_list", "    return args[0]\n", ["assert candidate(DATA) is DATA"], setup="DATA = [1, 2]")
    assert judge.assert_plan(["assert f(DATA) is DATA"], "DATA = [1, 2]", "f") is None
    assert judge.assert_plan(["assert f(1) is 1"], "", "f") is None
    assert judge.assert_plan(["assert f(1) is f(1)"], "", "f") is None
    assert judge.assert_plan(["assert f(1) is ..."], "", "f") is None
    assert judge.assert_plan(["assert f(1) is None", "assert f(2) is not True", "assert type(f(1)) is int"], "", "f") is not None
    path = tmp_path / "identity.jsonl"
    path.write_text(json.dumps(record) + "\n")
    (task,) = load_tasks(path)
    assert not task.host_checked and not parlour.game_class("parlour/Code-v0")(tasks=str(path)).rateable
    with judge.fresh_sandbox() as sandbox:
        assert task.judge(sandbox, task.reference).verdict == "pass"


@pytest.mark.parametrize("shape", ["subscript", "not", "conditional", "attribute", "sum", "negation"])
def test_assert_text_too_deeply_nested_to_analyse_is_unsplittable(shape, tmp_path):
    text = {
        "subscript": "assert f(1)" + "[0]" * 1000 + " == 1",
        "not": "assert " + "not " * 1000 + "f(1)",
        "conditional": "assert " + "f(1) if f(2) else " * 1000 + "f(3)",
        "attribute": "assert f(1)" + ".a" * 1000,
        "sum": "assert f(1) == " + "+".join(["1"] * 1000),
        "negation": "assert f(1) == " + "-" * 1000 + "1",
    }[shape]
    assert judge.assert_plan([text], "", "f") is None
    record = {"text": "Deep.", "code": "def f(x):\n    return x\n", "test_list": ["assert f(1) == 1", text]}
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert not load_tasks(path)[0].host_checked
    check = "def check(candidate):\n    " + text.replace("f(", "candidate(") + "\n"
    path.write_text(
        json.dumps({"task_id": "D/0", "entry_point": "f", "prompt": "def f(x):\n", "canonical_solution": "    return x\n", "test": check}) + "\n"
    )
    assert not load_tasks(path)[0].host_checked


def test_a_setup_that_needs_the_solution_is_not_split(tmp_path):
    # MBPP task 367: its setup builds trees of the Node class its solution defines, which the checker never holds.
    setup = "root = Node(1)\nroot.left = Node(2)\n"
    code = (
        "class Node:\n    def __init__(self, data):\n        self.data, self.left, self.right = data, None, None\n\n"
        "def depth(root):\n    return 0 if root is None else 1 + max(depth(root.left), depth(root.right))\n"
    )
    assert judge.assert_plan(["assert depth(root) == 2"], setup, "depth") is None
    assert (
        judge.assert_plan(["assert depth(root) == 2"], "import math\ndef helper(x):\n    return math.floor(x)\nroot = helper(2.5)", "depth")
        is not None
    )
    record = {"text": "Depth of a tree.", "code": code, "test_setup_code": setup, "test_list": ["assert depth(root) == 2"]}
    path = tmp_path / "tree.jsonl"
    path.write_text(json.dumps(record) + "\n")
    (task,) = load_tasks(path)
    assert not task.host_checked
    with judge.fresh_sandbox() as sandbox:
        assert task.judge(sandbox, task.reference).verdict == "pass"
