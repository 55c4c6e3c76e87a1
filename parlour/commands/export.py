"""``parlour export BUNDLE --format messages|hf|text``: a bundle's episodes as training data.

Every episode of the bundle is replayed and turned into each seat's chat
(:func:`parlour.export.to_chat`: the rules as the system message, what the
player was told as user messages, its actions as assistant messages, tool
calls and tool results kept). One row per seat and episode::

    {"messages": [...], "tools": [...], "env_id": ..., "episode": 3, "seed": ...,
     "seat": "player_0", "agent": "minimax", "return": 1.0, "won": true,
     "turn_rewards": [0.0, 0.0, 1.0]}

``turn_rewards`` holds the seat's reward for each of its turns, one per
assistant message (:func:`parlour.export.turn_rewards`), for turn-level credit.

``--format messages`` writes one JSONL file per seat (``OUT/<seat>.jsonl``);
``--format hf`` a ``datasets.Dataset`` saved with ``save_to_disk`` (every seat
in one dataset; ``datasets.load_from_disk(OUT)`` reads it) in the form chat
templates read, so ``tokenizer.apply_chat_template(row["messages"],
tools=row["tools"])`` works as it stands: ``tools`` is the list of tool specs
and each call's ``function.arguments`` a JSON object (both held as
``datasets.Json``, since their schemas differ from tool to tool), and every
message carries the same keys (``role``, ``content``, ``tool_calls``,
``tool_call_id``; ``None`` where absent). :func:`read_rows` reads either
format back as the rows above (OpenAI's form: arguments as JSON text).

``--format text`` writes one JSONL file per seat whose rows hold, instead of
``messages`` and ``tools``, the conversation as one ``text`` with its
``spans`` (:func:`parlour.export.to_text`: which characters the environment
inserted and which the policy wrote, each policy span with its ``turn``), so
a trainer masks the environment's text out of the loss.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FORMATS = ("messages", "hf", "text")
#: The keys every message of the ``hf`` format carries.
MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour export``."""
    parser = subparsers.add_parser(
        "export",
        help="write a bundle's episodes as chat messages (JSONL per seat), a Hugging Face dataset, or texts with spans",
        description="Replay every episode of a bundle (written by `parlour eval`) and write each seat's conversation "
        "as OpenAI chat messages, tools and tool calls kept, with the seat's reward for each turn; --format text writes "
        "it as one text with the spans the environment inserted and the policy wrote.",
    )
    parser.add_argument("bundle", metavar="BUNDLE", help="a bundle directory (episodes.jsonl, summary.json)")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="messages",
        help="messages: one JSONL per seat; hf: a datasets.Dataset; text: one JSONL per seat of texts and spans (default messages)",
    )
    parser.add_argument("--out", metavar="DIR", help="where to write (default: BUNDLE-FORMAT beside the bundle)")
    parser.set_defaults(handler=run_export)


def rows(bundle: str | Path, text: bool = False) -> Iterator[dict[str, Any]]:
    """One row (see the module docstring) per seat of every episode of ``bundle``, in episode then seat order.

    With ``text``, a row holds :func:`parlour.export.to_text`'s ``text`` and ``spans`` instead of ``messages`` and ``tools``.
    """
    from parlour.evaluation.results import EPISODES_FILE, outcome_of, read_records
    from parlour.export import to_chat, to_text, turn_rewards

    path = Path(bundle)
    episodes = path / EPISODES_FILE
    if not episodes.is_file():
        raise FileNotFoundError(f"{path} holds no {EPISODES_FILE}: give a bundle directory written by `parlour eval` or Results.save")
    for record in sorted(read_records(episodes), key=lambda record: record.get("episode", 0)):
        winners = outcome_of(record).get("winners") or []
        for seat in record["players"]:
            if text:
                rendered = to_text(record, seat)
                conversation = {"text": rendered["text"], "spans": rendered["spans"]}
            else:
                chat = to_chat(record, seat)
                conversation = {"messages": chat["messages"], "tools": chat.get("tools", [])}
            yield {
                **conversation,
                "env_id": record["env_id"],
                "episode": record.get("episode"),
                "seed": record["seed"],
                "seat": seat,
                "agent": (record.get("agents") or {}).get(seat),
                "return": float(record["returns"][seat]),
                "won": seat in winners,
                "turn_rewards": turn_rewards(record, seat),
            }


def write_messages(bundle: str | Path, out: str | Path, text: bool = False) -> dict[str, int]:
    """Write ``OUT/<seat>.jsonl`` for every seat (rows of texts and spans with ``text``); returns the rows written per seat."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    handles: dict[str, Any] = {}
    counts: dict[str, int] = {}
    try:
        for row in rows(bundle, text):
            seat = row["seat"]
            if seat not in handles:
                handles[seat] = (out / f"{seat}.jsonl").open("w", encoding="utf-8")
            handles[seat].write(json.dumps(row, ensure_ascii=False) + "\n")
            counts[seat] = counts.get(seat, 0) + 1
    finally:
        for handle in handles.values():
            handle.close()
    return counts


def _templated(message: dict[str, Any]) -> dict[str, Any]:
    """A message with exactly :data:`MESSAGE_KEYS` (Arrow needs one shape for every message), its calls'
    arguments as objects, as chat templates read them."""
    uniform = {key: message.get(key) for key in MESSAGE_KEYS}
    if uniform["tool_calls"]:
        uniform["tool_calls"] = [
            {**call, "function": {**call["function"], "arguments": json.loads(call["function"]["arguments"])}} for call in uniform["tool_calls"]
        ]
    return uniform


def _openai(message: dict[str, Any]) -> dict[str, Any]:
    """A message of the ``hf`` format back in :func:`rows`' form: only the keys set, and arguments as JSON text."""
    found = {key: value for key, value in message.items() if value is not None or key in ("role", "content")}
    if found.get("tool_calls"):
        found["tool_calls"] = [
            {**call, "function": {**call["function"], "arguments": json.dumps(call["function"]["arguments"], ensure_ascii=False)}}
            for call in found["tool_calls"]
        ]
    return found


def hf_features(calls: bool) -> Any:
    """The ``datasets.Features`` of the ``hf`` format: tool specs and call arguments as ``Json``, the rest typed.

    ``calls`` says whether any message calls a tool: datasets (4.7 to 5.2 at least) cannot save a ``Json``
    field inside lists that are all null, so a dataset without calls types the arguments it never holds as text.
    """
    from datasets import Features, Json, List, Value

    call = {"id": Value("string"), "type": Value("string"), "function": {"name": Value("string"), "arguments": Json() if calls else Value("string")}}
    message = {"role": Value("string"), "content": Value("string"), "tool_calls": List(call), "tool_call_id": Value("string")}
    return Features(
        {
            "messages": List(message),
            "tools": List(Json()),
            "env_id": Value("string"),
            "episode": Value("int64"),
            "seed": Value("int64"),
            "seat": Value("string"),
            "agent": Value("string"),
            "return": Value("float64"),
            "won": Value("bool"),
            "turn_rewards": List(Value("float64")),
        }
    )


def write_hf(bundle: str | Path, out: str | Path) -> int:
    """Save every row as a ``datasets.Dataset`` in ``out``; returns the number of rows."""
    try:
        import datasets
    except ImportError:
        raise ImportError("--format hf needs the datasets library: pip install 'parlour[train]'") from None
    if not hasattr(datasets, "Json"):
        raise ImportError(f"--format hf needs datasets 4.7 or later (for its Json type), found {datasets.__version__}: pip install -U datasets")
    table = [{**row, "messages": [_templated(message) for message in row["messages"]]} for row in rows(bundle)]
    if not table:
        raise ValueError(f"{bundle} has no episodes to export")
    calls = any(message["tool_calls"] for row in table for message in row["messages"])
    dataset = datasets.Dataset.from_list(table, features=hf_features(calls))
    dataset.save_to_disk(str(out))
    return len(table)


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of an export (a ``messages`` or ``text`` folder, one of its JSONL files, or an ``hf`` dataset), as :func:`rows` made them."""
    path = Path(path)
    if path.is_file():
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if (path / "dataset_info.json").exists():
        import datasets

        found = []
        for row in datasets.load_from_disk(str(path)):
            # Every exported message has a role and a content (None for a bare tool call); the other keys only where set.
            found.append({**row, "messages": [_openai(message) for message in row["messages"]]})
        return found
    files = sorted(path.glob("*.jsonl"))
    if not files:
        raise FileNotFoundError(f"{path} holds no export: neither <seat>.jsonl files nor a saved dataset")
    found = [row for file in files for row in read_rows(file)]
    return sorted(found, key=lambda row: (row["episode"] if row["episode"] is not None else -1, row["seat"]))


def run_export(args: argparse.Namespace) -> int:
    """Write the export and say where it went."""
    bundle = Path(args.bundle)
    out = Path(args.out) if args.out else bundle.with_name(f"{bundle.name}-{args.format}")
    if args.format in ("messages", "text"):
        counts = write_messages(bundle, out, text=args.format == "text")
        for seat, count in counts.items():
            print(f"{out / (seat + '.jsonl')}: {count} conversations")
    else:
        count = write_hf(bundle, out)
        print(f"{out}: a datasets.Dataset of {count} conversations (datasets.load_from_disk({str(out)!r}))")
    return 0
