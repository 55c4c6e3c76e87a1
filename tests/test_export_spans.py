"""parlour.export.to_text's spans on a real multi-turn game: they tile the text, the environment's hold only what the
player was told, the policy's exactly its replies, each turn carries its reward, and a loss mask built from the token
spans of a tiny trained tokenizer keeps every policy token and no environment token."""

from __future__ import annotations

import re

import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.export import to_text, turn_rewards

IPD = "parlour/IteratedPrisonersDilemma-v0"
#: Rendering glue the environment adds around the messages it tells: role headers, the message mark, blank lines.
GLUE = re.compile(r"(<\|(system|user|assistant|tool)\|>|▶|\s)*")


def reply(player: str, round_number: int) -> str:
    """A talkative reply, so a span that cut into it or took a header with it would show."""
    if player == "player_0":
        return f"Round {round_number}: I trust them, so I cooperate." if round_number % 3 else "This time I defect!"
    return "defect"


def played() -> tuple[dict, dict[str, list[str]], dict[str, list[str]]]:
    """An episode of the iterated prisoner's dilemma (10 rounds), with each player's replies and every message it was told."""
    match = Match(parlour.game_class(IPD))
    match.reset(5)
    replies: dict[str, list[str]] = {player: [] for player in match.players}
    told: dict[str, list[str]] = {player: [] for player in match.players}
    while not match.over:
        player = match.acting()[0]
        # A player's inbox holds what it was told since its last action.
        told[player] += [message["text"] for message in match.messages(player)]
        replies[player].append(reply(player, len(replies[player]) + 1))
        match.submit(player, replies[player][-1])
    for player in match.players:
        told[player] += [message["text"] for message in match.messages(player)]
    return match.record(), replies, told


def test_spans_tile_the_text_and_split_it_into_what_was_told_and_what_was_replied() -> None:
    record, replies, told = played()
    parlour.replay(record)
    for player in record["players"]:
        rendered = to_text(record, player)
        text, spans = rendered["text"], rendered["spans"]
        assert [span["start"] for span in spans] == [0] + [span["end"] for span in spans[:-1]]
        assert spans[-1]["end"] == len(text)
        policy = [span for span in spans if span["source"] == "policy"]
        assert [text[span["start"] : span["end"]] for span in policy] == replies[player]
        assert [span["turn"] for span in policy] == list(range(len(replies[player])))
        assert {span["source"] for span in spans} == {"policy", "environment"}
        # Each message the player was told lies in an environment span, in order; what is left there is only glue.
        environment = [text[span["start"] : span["end"]] for span in spans if span["source"] == "environment"]
        remaining = list(told[player])
        for index, chunk in enumerate(environment):
            while remaining and remaining[0] in chunk:
                chunk = chunk.replace(remaining.pop(0), "", 1)
            environment[index] = chunk
        assert not remaining
        assert all(GLUE.fullmatch(chunk) for chunk in environment), environment
        assert rendered["inserted"] == [[span["start"], span["end"]] for span in spans if span["source"] == "environment"]


def test_each_turn_carries_what_it_earned() -> None:
    record, replies, _ = played()
    # player_0 cooperates in rounds 1, 2, 4, 5, 7, 8, 10 and defects in 3, 6, 9 against an opponent who always defects.
    rewards = to_text(record, "player_0")["turn_rewards"]
    assert rewards == [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0]
    assert to_text(record, "player_1")["turn_rewards"] == [5.0, 5.0, 1.0, 5.0, 5.0, 1.0, 5.0, 5.0, 1.0, 5.0]
    for player in record["players"]:
        assert sum(turn_rewards(record, player)) == record["returns"][player]
        assert len(turn_rewards(record, player)) == len(replies[player])


def test_pay_before_the_first_action_counts_toward_it_and_pay_without_one_is_kept() -> None:
    record = {
        "players": ["a", "b"],
        "steps": [
            {"player": "a", "rewards": {"b": 2.0}},
            {"player": "b", "rewards": {"a": 1.0}},
            {"player": "b", "rewards": {"b": -1.0}},
        ],
    }
    assert turn_rewards(record, "a") == [1.0]
    assert turn_rewards(record, "b") == [2.0, -1.0]
    assert turn_rewards({"players": ["a", "c"], "steps": [{"player": "a", "rewards": {"c": 3.0}}]}, "c") == [3.0]


def test_a_mask_from_the_token_spans_trains_on_every_reply_token_and_no_environment_token(tmp_path) -> None:
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    from parlour.wrappers.tiny_model import game_corpus, make_tiny_model

    record, replies, _ = played()
    tokenizer = AutoTokenizer.from_pretrained(make_tiny_model(tmp_path / "tiny", corpus=game_corpus(IPD, 2)))
    for player in record["players"]:
        rendered = to_text(record, player, tokenizer=tokenizer)
        ids, text = rendered["input_ids"], rendered["text"]
        assert tokenizer.decode(ids) == text
        mask = [0] * len(ids)
        for span in rendered["token_spans"]:
            if span["source"] == "policy":
                mask[span["start"] : span["end"]] = [1] * (span["end"] - span["start"])
        kept = [token for token, keep in zip(ids, mask) if keep]
        dropped = [token for token, keep in zip(ids, mask) if not keep]
        assert tokenizer.decode(kept) == "".join(replies[player])
        environment = "".join(text[span["start"] : span["end"]] for span in rendered["spans"] if span["source"] == "environment")
        assert tokenizer.decode(dropped) == environment
        # The token spans are the character spans, one for one, and tile the ids too.
        spans, token_spans = rendered["spans"], rendered["token_spans"]
        assert [(s["source"], s.get("turn")) for s in spans] == [(s["source"], s.get("turn")) for s in token_spans]
        assert [s["start"] for s in token_spans] == [0] + [s["end"] for s in token_spans[:-1]] and token_spans[-1]["end"] == len(ids)
        for span, tokens in zip(spans, token_spans):
            assert tokenizer.decode(ids[tokens["start"] : tokens["end"]]) == text[span["start"] : span["end"]]


def test_the_export_command_writes_turn_rewards_and_texts_with_spans(tmp_path) -> None:
    from parlour.cli import main
    from parlour.commands.export import read_rows

    results = parlour.evaluate(IPD, ["tit_for_tat", "random"], episodes=2, seed=3, progress=False)
    bundle = results.save(tmp_path / "ipd")
    assert main(["export", str(bundle), "--format", "messages", "--out", str(tmp_path / "chat")]) == 0
    assert main(["export", str(bundle), "--format", "text", "--out", str(tmp_path / "text")]) == 0
    chats = {(row["episode"], row["seat"]): row for row in read_rows(tmp_path / "chat")}
    texts = {(row["episode"], row["seat"]): row for row in read_rows(tmp_path / "text")}
    assert chats.keys() == texts.keys() and len(texts) == 4
    for key, row in texts.items():
        record = next(record for record in results.records if record["episode"] == key[0])
        assert row["turn_rewards"] == chats[key]["turn_rewards"] == turn_rewards(record, key[1])
        assert sum(row["turn_rewards"]) == row["return"]
        assert len(row["turn_rewards"]) == sum(message["role"] == "assistant" for message in chats[key]["messages"]) == 10
        assert row["spans"] == to_text(record, key[1])["spans"] and row["spans"][-1]["end"] == len(row["text"])
        assert "messages" not in row and "messages" in chats[key]


def test_tool_results_stay_in_environment_spans_and_calls_in_policy_spans(tmp_path) -> None:
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    from parlour.baselines import make_scripted
    from parlour.export import to_chat
    from parlour.wrappers.tiny_model import make_tiny_model

    match = Match(parlour.game_class("parlour/Search-v0"), {"world_seed": 3, "world_size": 600})
    match.reset(2)
    agent = make_scripted("oracle", "parlour/Search-v0")
    agent.reset(2)
    while not match.over:
        match.submit(match.acting()[0], agent.act(match.agent_observation(match.acting()[0])))
    record = match.record()
    tokenizer = AutoTokenizer.from_pretrained(make_tiny_model(tmp_path / "tiny"))
    rendered = to_text(record, tokenizer=tokenizer)
    text, ids = rendered["text"], rendered["input_ids"]
    policy = "".join(tokenizer.decode(ids[s["start"] : s["end"]]) for s in rendered["token_spans"] if s["source"] == "policy")
    environment = "".join(tokenizer.decode(ids[s["start"] : s["end"]]) for s in rendered["token_spans"] if s["source"] == "environment")
    messages = to_chat(record)["messages"]
    results = [m["content"] for m in messages if m["role"] == "tool"]
    assert results and all(result in environment and result not in policy for result in results)
    calls = [call["function"]["name"] for m in messages if m["role"] == "assistant" for call in m.get("tool_calls", [])]
    assert calls and policy.count("<tool_call>") == len(calls)
    assert len(rendered["turn_rewards"]) == sum(m["role"] == "assistant" for m in messages)
    assert sum(rendered["turn_rewards"]) == record["returns"][record["players"][0]]
    assert len(policy) + len(environment) == len(text)
