"""Quantities as players write them: read exactly, or refused with a hint, never read as their first digits.

A game that reads a number from free text (a price, a share, a count, a
harvest) matches it with :data:`NUMBER`, or :data:`LISTED_NUMBER` where commas
and spaces separate the numbers of a list, and hands what matched to
:func:`whole_number`. Both patterns take in everything that would change the
number's meaning if it were cut off: ``12.5`` is a fraction, not 12;
``1,200``, ``1 000`` and ``1e3`` are refused as readable more than one way, not
read as 1. A decimal part of zeros is whole (``12.0``, and ``12.`` at the end of
a sentence), so plain writing is never refused.
"""

from __future__ import annotations

import re

from parlour.envs.core.errors import InvalidMove

#: Digit-group separators players write inside a number: comma, underscore, apostrophe, space, no-break and thin spaces.
GROUP_SEPARATORS = ",_'\u00a0\u2009\u202f "

#: One number standing alone, as written: digits, then any decimal part, digit groups and exponent (and a sentence's
#: full stop, which :func:`whole_number` drops). No sign: a game that reads one puts ``-?`` before it.
NUMBER = rf"\d++(?:[.{GROUP_SEPARATORS}]\d++|[eE][+-]?\d++)*+\.?+"

#: One number of a list whose numbers commas or spaces separate (``2, 1, 0``): digits, any decimal part and exponent;
#: a comma or space ends it.
LISTED_NUMBER = r"\d++(?:\.\d++|[eE][+-]?\d++)*+"

_PLAIN = re.compile(r"-?\d+")
_DECIMAL = re.compile(r"(-?\d+)\.(\d*)")


def whole_number(written: str, low: int, high: int | None, refusal: str, example: str) -> int:
    """The whole number ``written`` (what :data:`NUMBER` or :data:`LISTED_NUMBER` matched) if it lies in ``[low, high]``
    (``high`` ``None``: no bound above).

    Raises :class:`InvalidMove`: with ``refusal`` (formatted with
    ``written=``) for a fraction or a number out of range, and with a hint
    showing ``example`` (a move written plainly, e.g. ``"[offer] 12"``) for
    digit groups, exponents and three decimals (``100.000``: a hundred, or a
    hundred thousand).
    """
    # A trailing point is a sentence's full stop (or "12." for 12.0): either way it adds nothing.
    text = written[:-1] if written.endswith(".") else written
    decimal = _DECIMAL.fullmatch(text)
    if _PLAIN.fullmatch(text):
        value = int(text)
    elif decimal is not None and len(decimal.group(2)) != 3:
        whole, fraction = decimal.groups()
        if fraction.strip("0"):
            raise InvalidMove(refusal.format(written=text))
        value = int(whole)
    else:
        raise InvalidMove(
            f"Write the number as a plain whole number, digits only, e.g. {example}: '{text}' could be read "
            "more than one way (no thousands separators or exponents)."
        )
    if value < low or high is not None and value > high:
        raise InvalidMove(refusal.format(written=text))
    return value
