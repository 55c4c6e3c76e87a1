"""How values travel from the coding judge's harness to the host and to the checker.

The harness (:data:`parlour.envs.coding.judge.HARNESS`) writes each value as a JSON array of operations in
postfix order: a JSON ``null``, boolean, int or string is itself; ``["l", n]`` makes a list of the last n
values, ``["t", n]`` a tuple, ``["s", n]`` a set, ``["fs", n]`` a frozenset, ``["dq", n]`` a deque,
``["d", n]`` a dict of the last 2n values (key, value, key, value, ...), ``["od", n]`` an OrderedDict,
``["C", n]`` a Counter, ``["dd", n, factory]`` a defaultdict, ``["kv", n]``, ``["vv", n]`` and ``["iv", n]``
dict views, ``["it", n, more]`` an iterator (:class:`Carried`), ``["c"]`` a complex of the last two numbers,
``["r"]`` a range of the last three ints, ``["q"]`` a Fraction of the last two; ``["f", repr]`` is a float,
``["i", hex]`` a large int, ``["b", hex]`` bytes, ``["ba", hex]`` a bytearray, ``["D", text]`` a Decimal,
``["o", type name]`` a value of a type the wire does not carry (:class:`Opaque`), ``["e", type name,
message]`` what a probe raised (:class:`Raised`). :func:`decode` reads it back.

A program can write any such array, so :func:`decode` builds only plain data of standard types whose ``==``
nothing can change (and :class:`Opaque`, equal to nothing), refuses anything malformed, and never recurses: a
value may be as deep as :data:`MAX_DEPTH` (hashing a deeper tuple would overflow the C stack). This module
runs twice: imported on the host, and its source, as it is, at the head of the checker that evaluates the
rest of split asserts in a sandbox (:data:`parlour.envs.coding.judge.CHECKER`); so it imports only
``collections`` at the top, and ``fractions`` or ``decimal`` where it needs them.
"""

import collections


class Opaque:
    """A value of a type the wire does not carry (an instance of a class): equal to nothing."""

    def __init__(self, type_name):
        self.type_name = type_name

    def __eq__(self, other):
        return False

    def __ne__(self, other):
        return True

    __hash__ = object.__hash__

    def __repr__(self):
        return "<%s object>" % self.type_name


class Raised(Opaque):
    """What a probe raised, or why its value could not travel: the checker raises it where an assert uses the probe."""

    def __init__(self, type_name, message):
        Opaque.__init__(self, type_name)
        self.message = message

    def __repr__(self):
        return "<%s>" % self.message


class Carried:
    """An iterator as it travelled: its items, then an error where the original had more than the wire carries."""

    def __init__(self, items, more):
        self.items = iter(items)
        self.count = len(items)
        self.more = more

    def __iter__(self):
        return self

    def __next__(self):
        for item in self.items:
            return item
        if self.more:
            raise RuntimeError("the iterator had more than the %d items the judge carries" % self.count)
        raise StopIteration

    def __repr__(self):
        return "<iterator of %d%s items>" % (self.count, "+" if self.more else "")


MAX_DEPTH = 10000
MAX_DIGITS = 100000
#: Operations that build a container of the last n values (1) or n pairs (2), and those of a fixed number of values.
SIZED = {"l": 1, "t": 1, "s": 1, "fs": 1, "dq": 1, "kv": 1, "vv": 1, "it": 1, "d": 2, "od": 2, "C": 2, "dd": 2, "iv": 2}
FIXED = {"c": 2, "r": 3, "q": 2}
FACTORIES = {
    "list": list,
    "int": int,
    "set": set,
    "str": str,
    "float": float,
    "dict": dict,
    "tuple": tuple,
    "frozenset": frozenset,
    "bool": bool,
    None: None,
}


def _number(value, kinds):
    if type(value) not in kinds:
        raise ValueError("expected %s, got %s" % ("/".join(kind.__name__ for kind in kinds), type(value).__name__))
    return value


def _word(op, index):
    if len(op) <= index or type(op[index]) is not str or len(op[index]) > MAX_DIGITS:
        raise ValueError("operation %s needs a string argument" % op[0])
    return op[index]


def _built(tag, op, items):
    if tag in ("l", "t", "s", "fs", "dq"):
        return {"l": list, "t": tuple, "s": set, "fs": frozenset, "dq": collections.deque}[tag](items)
    if tag == "kv":
        return dict.fromkeys(items).keys()
    if tag == "vv":
        return dict(enumerate(items)).values()
    if tag == "it":
        return Carried(items, len(op) > 2 and op[2] is True)
    pairs = list(zip(items[0::2], items[1::2]))
    if tag == "dd":
        if len(op) < 3 or op[2] not in FACTORIES:
            raise ValueError("a defaultdict's factory must be null or one of the builtin types")
        return collections.defaultdict(FACTORIES[op[2]], pairs)
    mapping = {"d": dict, "od": collections.OrderedDict, "iv": dict, "C": dict}[tag](pairs)
    return mapping.items() if tag == "iv" else collections.Counter(mapping) if tag == "C" else mapping


def _fixed(tag, items):
    if tag == "c":
        return complex(_number(items[0], (float, int)), _number(items[1], (float, int)))
    if tag == "r":
        return range(*[_number(item, (int,)) for item in items])
    import fractions

    if _number(items[1], (int,)) == 0:
        raise ValueError("a fraction's denominator cannot be 0")
    return fractions.Fraction(_number(items[0], (int,)), items[1])


def _leaf(tag, op):
    if tag == "f":
        return float(_word(op, 1)[:64])
    if tag == "i":
        return int(_word(op, 1), 16)
    if tag == "b":
        return bytes.fromhex(_word(op, 1))
    if tag == "ba":
        return bytearray.fromhex(_word(op, 1))
    if tag == "D":
        import decimal

        try:
            return decimal.Decimal(_word(op, 1))
        except decimal.InvalidOperation:
            raise ValueError("not a decimal number") from None
    if tag == "o":
        return Opaque(_word(op, 1)[:200])
    if tag == "e":
        return Raised(_word(op, 1)[:200], _word(op, 2)[:500])
    raise ValueError("unknown operation %r" % tag[:20])


def decode(ops):
    """The value the wire's operations build; ValueError or TypeError (an unhashable set item) for anything else."""
    if type(ops) is not list:
        raise ValueError("a value is a list of operations")
    stack, depths = [], []
    for op in ops:
        if op is None or type(op) in (bool, int, str):
            stack.append(op)
            depths.append(0)
            continue
        if (
            type(op) is not list
            or not 1 <= len(op) <= 3
            or type(op[0]) is not str
            or any(arg is not None and type(arg) not in (bool, int, str) for arg in op)
        ):
            raise ValueError("not an operation")
        tag = op[0]
        width = FIXED.get(tag)
        if tag in SIZED:
            count = op[1] if len(op) > 1 and type(op[1]) is int else -1
            width = count * SIZED[tag] if count >= 0 else -1
        if width is None:
            value, depth = _leaf(tag, op), 0
        else:
            if not 0 <= width <= len(stack):
                raise ValueError("operation %s takes more values than there are" % tag[:20])
            start = len(stack) - width
            items, depth = stack[start:], 1 + max(depths[start:], default=0)
            del stack[start:], depths[start:]
            if depth > MAX_DEPTH:
                raise ValueError("the value is nested more than %d levels deep" % MAX_DEPTH)
            value = _fixed(tag, items) if tag in FIXED else _built(tag, op, items)
        stack.append(value)
        depths.append(depth)
    if len(stack) != 1:
        raise ValueError("the operations do not build one value")
    return stack[0]
