"""Answer scoring for the search games: SQuAD's answer normalisation, exact match, token F1, and OTC's tool efficiency.

``normalize_answer`` is the normalisation of the official SQuAD v1.1
evaluation script, which Search-R1, FlashRAG and HotpotQA's evaluation all
use: lower-case, drop punctuation, drop the articles *a*, *an*, *the*, and
collapse white space. ``exact_match`` and ``f1`` compare one prediction with
a list of accepted answers and keep the best.

``tool_efficiency(calls, optimal)`` is the tool-use reward of OTC ("Acting
Less is Reasoning More", Wang et al. 2025, OTC-GRPO): 1 when the agent made
exactly the optimal number of tool calls, falling smoothly towards 0 both
for fewer calls and for many more.
"""

from __future__ import annotations

import collections
import math
import re
import string
from typing import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower-case, punctuation removed, articles removed, white space collapsed."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    """1.0 if the normalised prediction equals any normalised answer, else 0.0."""
    predicted = normalize_answer(prediction)
    return float(any(predicted == normalize_answer(answer) for answer in answers))


def _f1(prediction: str, answer: str) -> float:
    """Token F1 of one prediction against one answer, after normalisation."""
    predicted, expected = normalize_answer(prediction).split(), normalize_answer(answer).split()
    common = sum((collections.Counter(predicted) & collections.Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def f1(prediction: str, answers: Sequence[str]) -> float:
    """The best token F1 of ``prediction`` against any of ``answers`` (SQuAD's ``f1_score``, maximised over answers)."""
    return max((_f1(prediction, answer) for answer in answers), default=0.0)


def tool_efficiency(calls: int, optimal: int) -> float:
    """OTC-GRPO's tool reward for ``calls`` tool calls when ``optimal`` calls suffice.

    ``sin(f * pi / (2 * optimal))`` with ``f = 2 * optimal * calls / (calls + optimal)``
    (``f = 0`` without calls): 1 at ``calls == optimal``, 0 without calls, and
    ``sin(2 pi / 3) ~ 0.87`` at twice the optimum. With ``optimal == 0`` it is
    1 without calls and ``cos(calls * pi / (2 * calls + 1))`` otherwise, OTC's
    decay for calls that were not needed.
    """
    if calls < 0 or optimal < 0:
        raise ValueError(f"calls and optimal must be >= 0, got {calls} and {optimal}")
    if optimal == 0:
        return 1.0 if calls == 0 else math.cos(calls * math.pi / (2 * calls + 1))
    if calls == 0:
        return 0.0
    mapped = 2 * optimal * calls / (calls + optimal)
    return math.sin(mapped * math.pi / (2 * optimal))
