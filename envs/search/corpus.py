"""Loading a user's own corpus and questions from JSON Lines files, in the shapes Search-R1 and FlashRAG use.

A corpus file holds one passage per line: ``{"id", "title", "text"}``, or
FlashRAG's ``{"id", "contents"}`` where ``contents`` is the quoted title, a
newline, then the text. A question file holds ``{"question", "answers"}`` per
line (FlashRAG's ``golden_answers`` is accepted for ``answers``), optionally
with an ``id``. Blank lines are skipped. Anything malformed raises
:class:`CorpusFormatError` naming the file and the line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping


class CorpusFormatError(ValueError):
    """A corpus or question file that cannot be read; the message starts with ``<file>:<line>:``."""


def _records(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, JSON object) for every non-blank line of ``path``."""
    with open(path, "rb") as file:
        for number, raw in enumerate(file, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise CorpusFormatError(f"{path}:{number}: not UTF-8 ({error.reason} at byte {error.start})") from None
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise CorpusFormatError(f"{path}:{number}: invalid JSON: {error.msg} (column {error.colno})") from None
            if not isinstance(record, dict):
                raise CorpusFormatError(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
            yield number, record


def _string(record: Mapping[str, Any], key: str, where: str) -> str:
    """``record[key]`` if it is a string; CorpusFormatError otherwise."""
    if key not in record:
        raise CorpusFormatError(f"{where}: missing {key!r}")
    value = record[key]
    if not isinstance(value, str):
        raise CorpusFormatError(f"{where}: {key!r} must be a string, got {type(value).__name__}")
    return value


def _identifier(record: Mapping[str, Any], where: str) -> str:
    """A record's ``id`` as a string; integers are accepted, as FlashRAG corpora sometimes use them."""
    if "id" not in record:
        raise CorpusFormatError(f"{where}: missing 'id'")
    value = record["id"]
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise CorpusFormatError(f"{where}: 'id' must be a string or an integer, got {type(value).__name__}")
    return str(value)


def load_corpus(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """The passages of a JSON Lines corpus as ``{"id", "title", "text"}`` dicts, in file order; ids must be unique."""
    passages: list[dict[str, str]] = []
    first_line: dict[str, int] = {}
    for number, record in _records(path):
        where = f"{path}:{number}"
        doc_id = _identifier(record, where)
        if "text" in record:
            title = _string(record, "title", where) if "title" in record else ""
            text = _string(record, "text", where)
        elif "contents" in record:
            title, _, text = _string(record, "contents", where).partition("\n")
            title = title.strip().strip('"')
        else:
            raise CorpusFormatError(f"{where}: missing 'text' (or FlashRAG's 'contents')")
        if doc_id in first_line:
            raise CorpusFormatError(f"{where}: id {doc_id!r} already used on line {first_line[doc_id]}")
        first_line[doc_id] = number
        passages.append({"id": doc_id, "title": title, "text": text})
    if not passages:
        raise CorpusFormatError(f"{path}: no passages")
    return passages


def load_questions(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The questions of a JSON Lines file as ``{"id", "question", "answers"}`` dicts, in file order.

    ``answers`` must be a non-empty list of strings; a question without an
    ``id`` gets ``"<file stem>-<line>"``.
    """
    questions: list[dict[str, Any]] = []
    for number, record in _records(path):
        where = f"{path}:{number}"
        question = _string(record, "question", where)
        key = "answers" if "answers" in record else "golden_answers" if "golden_answers" in record else None
        if key is None:
            raise CorpusFormatError(f"{where}: missing 'answers' (or FlashRAG's 'golden_answers')")
        answers = record[key]
        if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
            raise CorpusFormatError(f"{where}: {key!r} must be a non-empty list of strings, got {answers!r}")
        question_id = _identifier(record, where) if "id" in record else f"{Path(path).stem}-{number}"
        questions.append({"id": question_id, "question": question, "answers": list(answers)})
    if not questions:
        raise CorpusFormatError(f"{path}: no questions")
    return questions


def write_jsonl(path: str | os.PathLike[str], records: Iterable[Mapping[str, Any]]) -> None:
    """Write ``records`` to ``path``, one JSON object per line (UTF-8, non-ASCII kept as is)."""
    with open(path, "w", encoding="utf-8") as file:
        for record in records:
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
