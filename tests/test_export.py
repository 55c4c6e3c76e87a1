"""parlour.export: episodes as OpenAI chat messages and as one masked text, re-derived by replay, and round-tripping."""

from __future__ import annotations

import json

import pytest

import parlour
from parlour.baselines import make_scripted
from parlour.envs.core.match import Match
from parlour.export import chat_actions, to_chat, to_text

SMALL = {"world_seed": 3, "world_size": 600}


def play(env_id: str, options: dict, seed: int, agent: str, extra: dict[int, str] | None = None) -> dict:
    """An episode of ``agent`` in every seat, with the actions of ``extra`` (step number -> action) slipped in first."""
    match = Match(parlour.game_class(env_id), options)
    match.reset(seed)
    agents = {p: make_scripted(agent, env_id) for p in match.players}
    for i, scripted in enumerate(agents.values()):
        scripted.reset(seed + i)
    while not match.over:
        player = match.acting()[0]
        forced = (extra or {}).get(len(match.steps))
        match.submit(player, forced if forced is not None else agents[player].act(match.agent_observation(player)))
    return match.record()


def replay_chats(record: dict) -> Match:
    """A fresh episode fed the actions read back from each player's exported messages, in the record's step order."""
    queues = {player: chat_actions(to_chat(record, player)["messages"]) for player in record["players"]}
    match = Match(parlour.game_class(record["env_id"]), record["options"])
    match.reset(record["seed"])
    for step in record["steps"]:
        match.submit(step["player"], queues[step["player"]].pop(0))
    assert all(not queue for queue in queues.values())
    return match


def same_episode(record: dict, match: Match) -> None:
    """The replayed episode made the same moves, tool calls (results included), errors, rewards and outcome."""
    again = match.record()
    for original, replayed in zip(record["steps"], again["steps"], strict=True):
        assert replayed["move"] == original["move"]
        assert replayed.get("calls") == original.get("calls")
        assert (replayed["error"] is None) == (original["error"] is None)
        assert replayed["rewards"] == original["rewards"]
    assert again["returns"] == record["returns"] and again["outcome"] == record["outcome"]


SEARCH_EXTRAS = {
    0: "Let me look first. <search>city</search> and <search>river</search>",
    1: "I am not sure yet.",
    2: '<tool_call>{"name": "search", "arguments": {"query": "founded", "k": 2}}</tool_call>',
    3: '{"tool": "open", "arguments": {"doc_id": "nope"}}',
}


@pytest.mark.parametrize(
    "env_id, options, agent, extras",
    [
        ("parlour/Search-v0", SMALL, "oracle", SEARCH_EXTRAS),
        ("parlour/Search-v0", SMALL, "random", {}),
        ("parlour/SearchSelfPlay-v0", SMALL, "proposer", {}),
        ("parlour/AskOrSearch-v0", SMALL, "asker", {0: "<search>Tavelon</search>"}),
        ("parlour/TicTacToe-v0", {}, "random", {0: "z9"}),
        ("parlour/Bargaining-v0", {}, "boulware", {}),
    ],
)
def test_exported_messages_replay_to_the_same_episode(env_id, options, agent, extras):
    for seed in range(3):
        record = play(env_id, options, seed, agent, extras)
        same_episode(record, replay_chats(json.loads(json.dumps(record))))


def test_a_search_episode_exports_tools_tool_calls_and_tool_turns():
    record = play("parlour/Search-v0", SMALL, 0, "oracle", SEARCH_EXTRAS)
    chat = to_chat(record)
    messages = chat["messages"]
    assert [tool["function"]["name"] for tool in chat["tools"]] == ["search", "open", "answer"]
    assert messages[0]["role"] == "system" and "Answer the question" in messages[0]["content"]
    assert messages[1]["role"] == "user" and "Question: " in messages[1]["content"]
    first = messages[2]
    assert first["role"] == "assistant" and first["content"] == "Let me look first.  and"
    assert [c["function"]["name"] for c in first["tool_calls"]] == ["search", "search"]
    assert json.loads(first["tool_calls"][1]["function"]["arguments"]) == {"query": "river"}
    tool_turns = messages[3:5]
    assert [m["role"] for m in tool_turns] == ["tool", "tool"]
    assert [m["tool_call_id"] for m in tool_turns] == [c["id"] for c in first["tool_calls"]]
    assert tool_turns[0]["content"].startswith("search 'city'") and tool_turns[1]["content"].startswith("search 'river'")
    # Every tool call is answered, the invalid actions are plain assistant text followed by the feedback.
    calls = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert calls == answered
    invalid = [m for m in messages if m["role"] == "assistant" and "tool_calls" not in m]
    assert [m["content"] for m in invalid] == ["I am not sure yet.", '{"tool": "open", "arguments": {"doc_id": "nope"}}']
    assert messages[-1]["role"] == "tool" and "Game over" in messages[-1]["content"]
    # Results are re-derived by replay: their digests are the record's.
    from parlour.envs.core.match import result_digest

    digests = [c["result"] for step in record["steps"] if step["error"] is None for c in step.get("calls", []) if "result" in c]
    assert [result_digest(m["content"]) for m in messages if m["role"] == "tool"][:-1] == digests


def test_the_masked_text_leaves_exactly_what_the_player_generated():
    record = play("parlour/Search-v0", SMALL, 1, "oracle", SEARCH_EXTRAS)
    rendered = to_text(record)
    text, inserted = rendered["text"], rendered["inserted"]
    assert inserted[0][0] == 0 and inserted[-1][1] == len(text)
    assert all(a[1] < b[0] for a, b in zip(inserted, inserted[1:]))
    generated = [text[end:start] for (_, end), (start, _) in zip(inserted, inserted[1:])]
    assistants = [m for m in to_chat(record)["messages"] if m["role"] == "assistant"]
    assert len(generated) == len(assistants)
    assert generated[0].startswith("Let me look first.  and\n<tool_call>")
    assert generated[1] == "I am not sure yet."
    for message in to_chat(record)["messages"]:
        if message["role"] == "tool":
            start = text.index(message["content"])
            assert any(a <= start and start + len(message["content"]) <= b for a, b in inserted)


def test_export_refuses_records_that_do_not_replay_and_unknown_players():
    record = play("parlour/Search-v0", SMALL, 2, "oracle")
    tampered = json.loads(json.dumps(record))
    tampered["steps"][0]["calls"][0]["result"] = "0" * 32
    with pytest.raises(parlour.ReplayMismatch):
        to_chat(tampered)
    with pytest.raises(ValueError, match="not a player"):
        to_chat(record, "player_7")
    with pytest.raises(ValueError, match="name one of"):
        to_chat(play("parlour/TicTacToe-v0", {}, 0, "random"))
