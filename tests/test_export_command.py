"""``parlour export``: a bundle as chat-message JSONL per seat and as a datasets.Dataset, both round-tripping."""

from __future__ import annotations

import json

import pytest

import parlour
from parlour.cli import main
from parlour.commands.export import read_rows, rows, write_hf
from parlour.envs.core.match import Match
from parlour.export import chat_actions

SEARCH = {"world_seed": 3, "world_size": 600}


def replays_from_chats(records: list[dict], exported: list[dict]) -> None:
    """Each episode, fed the actions read back from its seats' exported messages in step order, ends as recorded."""
    for record in records:
        queues = {row["seat"]: chat_actions(row["messages"]) for row in exported if row["episode"] == record["episode"]}
        match = Match(parlour.game_class(record["env_id"]), record["options"])
        match.reset(record["seed"])
        for step in record["steps"]:
            match.submit(step["player"], queues[step["player"]].pop(0))
        assert all(not queue for queue in queues.values())
        assert [s["move"] for s in match.steps] == [s["move"] for s in record["steps"]]
        assert match.returns == record["returns"]


def key(row: dict) -> tuple:
    return row["episode"], row["seat"]


@pytest.fixture
def ttt_bundle(tmp_path):
    results = parlour.evaluate("parlour/TicTacToe-v0", ["minimax", "random"], episodes=3, seed=4, progress=False)
    return results.save(tmp_path / "ttt"), results.records


def test_messages_per_seat_round_trip(ttt_bundle, tmp_path, capsys) -> None:
    bundle, records = ttt_bundle
    assert main(["export", str(bundle), "--format", "messages", "--out", str(tmp_path / "chat")]) == 0
    assert "player_0.jsonl: 3 conversations" in capsys.readouterr().out
    assert sorted(path.name for path in (tmp_path / "chat").iterdir()) == ["player_0.jsonl", "player_1.jsonl"]
    seat_file = [json.loads(line) for line in (tmp_path / "chat" / "player_1.jsonl").read_text().splitlines()]
    assert [row["seat"] for row in seat_file] == ["player_1"] * 3
    exported = read_rows(tmp_path / "chat")
    assert sorted(exported, key=key) == sorted(rows(bundle), key=key)
    first = next(row for row in exported if row["episode"] == 0 and row["seat"] == "player_0")
    assert first["agent"] == records[0]["agents"]["player_0"]
    assert first["return"] == records[0]["returns"]["player_0"]
    assert first["messages"][0]["role"] == "system" and "three marks in a row" in first["messages"][0]["content"]
    roles = [message["role"] for message in first["messages"]]
    assert roles.count("assistant") == sum(step["player"] == "player_0" for step in records[0]["steps"])
    replays_from_chats(records, exported)


def test_hf_dataset_round_trips(ttt_bundle, tmp_path) -> None:
    pytest.importorskip("datasets")
    bundle, records = ttt_bundle
    assert main(["export", str(bundle), "--format", "hf", "--out", str(tmp_path / "hf")]) == 0
    exported = read_rows(tmp_path / "hf")
    assert sorted(exported, key=key) == sorted(rows(bundle), key=key)
    replays_from_chats(records, exported)


def test_tool_calls_and_results_are_kept(tmp_path) -> None:
    pytest.importorskip("datasets")
    results = parlour.evaluate("parlour/Search-v0", ["oracle"], episodes=2, seed=1, env_kwargs=SEARCH, progress=False)
    bundle = results.save(tmp_path / "search")
    write_hf(bundle, tmp_path / "hf")
    for exported in (list(rows(bundle)), read_rows(tmp_path / "hf")):
        assert exported[0]["tools"] and {tool["function"]["name"] for tool in exported[0]["tools"]} >= {"search"}
        messages = [m for row in exported for m in row["messages"]]
        calls = [m for m in messages if m["role"] == "assistant" and m.get("tool_calls")]
        answers = [m for m in messages if m["role"] == "tool"]
        assert calls and answers
        ids = {call["id"] for m in calls for call in m["tool_calls"]}
        assert {m["tool_call_id"] for m in answers} <= ids
        replays_from_chats(results.records, exported)


def test_export_errors_name_the_fix(tmp_path, capsys) -> None:
    assert main(["export", str(tmp_path), "--format", "messages"]) == 2
    assert "holds no episodes.jsonl" in capsys.readouterr().err
