"""The Services game: generated worlds and goals, tools and their errors, parallel calls, scoring, hidden state, replay."""

from __future__ import annotations

import copy
import json

import pytest

import parlour
from parlour.baselines import make_scripted
from parlour.baselines.services import literal_calls, plan
from parlour.envs.agentic.services import TEST_SEEDS_FROM, Services
from parlour.envs.agentic.services_world import LEVELS, SERVICES, answer_holds, execute, generate, same_state
from parlour.envs.core.match import Match

ENV = "parlour/Services-v0"


def call(tool: str, **arguments) -> str:
    return json.dumps({"tool": tool, "arguments": arguments})


def openai(*calls: tuple[str, dict]) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}} for i, (name, args) in enumerate(calls)
        ],
    }


def started(seed: int = 1, **options) -> Match:
    match = Match(Services, options)
    match.reset(seed)
    return match


def results(match: Match) -> list:
    """The JSON tool results in the player's inbox, in order."""
    return [json.loads(m["text"]) for m in match.ctx.inboxes["player_0"] if m["kind"] == "tool_result"]


def play(agent: str, seed: int, **options) -> Match:
    match = started(seed, **options)
    player = make_scripted(agent, ENV)
    player.reset(seed)
    while not match.over:
        match.submit("player_0", player.act(match.agent_observation("player_0")))
    return match


def find(difficulty: int, families: list[str]) -> Match:
    """An episode whose first turn asks exactly for ``families``."""
    for seed in range(3000):
        match = started(seed, difficulty=difficulty)
        if match.game.world.turns[0].families == families:
            return match
    raise AssertionError(f"no seed asks for {families}")


# ------------------------------------------------------------------ generation


@pytest.mark.parametrize("difficulty", [1, 2, 3, 4, 5])
def test_worlds_are_a_function_of_the_seed_and_their_goals_are_reachable(difficulty):
    level = LEVELS[difficulty]
    for seed in range(60):
        world, again = generate(seed, difficulty), generate(seed, difficulty)
        assert (world.initial, [(t.instruction, t.goal, t.answers) for t in world.turns]) == (
            again.initial,
            [(t.instruction, t.goal, t.answers) for t in again.turns],
        )
        assert len(world.services) == level.services and len(world.turns) == level.turns
        assert level.turns == 1 or not all(t.impossible for t in world.turns)
        state = copy.deepcopy(world.initial)
        for turn in world.turns:
            assert turn.instruction
            if turn.impossible:
                assert same_state(turn.goal, state, world.first_new)
            # The planner's calls, run through the services as a player's are, reach the goal without one refusal.
            for name, args in plan(state, turn.goal):
                assert "error" not in json.dumps(execute(state, name, args))[:12]
            assert same_state(state, turn.goal, world.first_new)


def test_train_and_test_splits_draw_disjoint_world_seeds():
    train = {started(seed, split="train").game.world_seed for seed in range(20)}
    test = {started(seed).game.world_seed for seed in range(20)}
    assert max(train) < TEST_SEEDS_FROM <= min(test)


@pytest.mark.parametrize(
    "options, message", [({"difficulty": 0}, "difficulty"), ({"difficulty": 6}, "difficulty"), ({"split": "dev"}, "split must be one of")]
)
def test_bad_options_are_refused_with_their_name(options, message):
    with pytest.raises(ValueError, match=message):
        Services(**options)


# ------------------------------------------------------------------ agents


@pytest.mark.parametrize("difficulty", [1, 3, 5])
def test_the_expert_carries_out_every_turn_and_random_almost_never(difficulty):
    assert all(play("expert", seed, difficulty=difficulty).returns["player_0"] == 1.0 for seed in range(15))
    assert sum(play("random", seed, difficulty=difficulty).returns["player_0"] == 1.0 for seed in range(15)) <= (4 if difficulty == 1 else 1)


def test_the_literal_agent_is_honest_and_weak():
    assert literal_calls('Add the event "Dentist" on 2025-03-04 at 09:30. Cancel the event "Yoga class" on 2025-03-05.') == [
        ("create_event", {"title": "Dentist", "date": "2025-03-04", "time": "09:30"})
    ]
    wins = [play("literal", seed, difficulty=1).returns["player_0"] == 1.0 for seed in range(40)]
    assert 0 < sum(wins) < 20


# ------------------------------------------------------------------ tools, parallel calls, earlier results


def test_arguments_come_from_earlier_results():
    match = find(1, ["pay"])
    instruction = match.game.world.turns[0].instruction
    match.submit("player_0", openai(("list_accounts", {}), ("list_payees", {})))  # two calls in one action
    accounts, payees = results(match)
    payee = next(p for p in payees if instruction.startswith(f"Pay {p['name']} "))
    amount = float(instruction.split()[3])
    source = next(a for a in accounts if f"my {a['name']} account" in instruction)
    match.submit("player_0", call("transfer", from_account=source["account"], to_account=payee["account"], amount=amount))
    assert results(match)[0]["balance"] == pytest.approx(source["balance"] - amount)
    match.submit("player_0", call("finish", answer="done"))
    assert match.over and match.returns["player_0"] == 1.0


def test_hermes_blocks_run_in_order_and_a_finish_after_them_ends_the_turn():
    match = find(1, ["move_file"])
    sub = match.game.world.turns[0].instruction
    folder, source = sub.split()[4], sub.split()[7]
    blocks = "".join(
        f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>"
        for n, a in [("make_dir", {"path": folder}), ("move_file", {"source": source, "destination": folder}), ("finish", {})]
    )
    match.submit("player_0", "I will do it.\n" + blocks)
    assert match.over and match.returns["player_0"] == 1.0
    assert [c["name"] for c in match.steps[-1]["calls"]] == ["make_dir", "move_file", "finish"]


def test_a_bad_call_among_parallel_calls_stops_there_and_the_calls_before_it_stand():
    match = find(1, ["write_file"])
    match.submit(
        "player_0",
        openai(
            ("write_file", {"path": "/home/a.txt", "content": "x"}),
            ("list_dir", {"path": 5}),
            ("write_file", {"path": "/home/b.txt", "content": "y"}),
        ),
    )
    assert "Bad call of list_dir" in match.last_error["player_0"]
    files = match.game.state["files"]["files"]
    assert "/home/a.txt" in files and "/home/b.txt" not in files
    assert [c["name"] for c in match.steps[-1]["calls"]] == ["write_file"]
    match.submit("player_0", call("finish"))
    assert parlour.replay(match.record())["returns"] == match.record()["returns"]


def test_a_refused_call_is_a_tool_error_that_changes_nothing():
    match = find(1, ["transfer"])
    before = copy.deepcopy(match.game.state)
    accounts = match.game.state["bank"]["accounts"]
    errors = []
    for source, amount in ((accounts[0]["account"], 10**8), (accounts[0]["account"], 1.234), ("ACC-1", 1)):
        match.submit("player_0", call("transfer", from_account=source, to_account=accounts[1]["account"], amount=amount))
        errors += [r["error"] for r in results(match)]
    assert "less than" in errors[0] and "2 decimals" in errors[1] and "list_accounts" in errors[2]
    assert match.game.state == before and not match.last_error and not match.over


@pytest.mark.parametrize(
    "action, hint",
    [
        ("I would rather chat.", "No tool call found"),
        ("<tool_call>{not json}</tool_call>", "must hold a JSON object"),
        (call("book_flight", to="Lima"), "There is no tool 'book_flight'"),
        (call("list_dir"), "Bad call of list_dir"),
        (call("list_dir", path="/home", recursive=True), "Additional properties"),
        (call("list_dir", path=7), "Bad call of list_dir"),
        (call("finish", answer="x" * 600), "Bad call of finish"),
        (call("write_file", path="/home/big.txt", content="x" * 1_000_000), "No tool call found"),
        ({"tool_calls": [{"type": "function", "function": {"name": "list_dir", "arguments": "{not json"}}]}, "not valid JSON"),
        ({"content": "hello"}, "tool_calls"),
    ],
)
def test_malformed_calls_are_invalid_actions_with_a_hint(action, hint):
    match = find(1, ["write_file"])
    match.submit("player_0", action)
    assert hint in match.last_error["player_0"]
    assert not match.over


def test_tools_of_services_not_in_the_episode_are_unknown():
    match = find(1, ["write_file"])
    offered = {t["function"]["name"] for t in match.agent_observation("player_0")["tools"]}
    assert offered == {"list_dir", "read_file", "write_file", "make_dir", "move_file", "delete_file", "finish"}
    match.submit("player_0", call("list_inbox"))
    assert "There is no tool 'list_inbox'" in match.last_error["player_0"]


def test_megabyte_arguments_within_the_action_limit_are_refused_by_the_schema():
    match = started(5, difficulty=5, max_action_chars=2_000_000)
    match.submit("player_0", call("write_file", path="/home/x.txt", content="x" * 1_000_000))
    assert "Bad call of write_file" in match.last_error["player_0"]


def test_the_turn_budget_caps_calls():
    match = find(1, ["write_file"])
    for _ in range(8):
        match.submit("player_0", call("list_dir", path="/home"))
    match.submit("player_0", call("list_dir", path="/home"))
    assert "budget" in match.last_error["player_0"]


# ------------------------------------------------------------------ scoring


def test_an_impossible_request_must_be_declined_without_changes():
    declined = find(1, ["impossible"])
    declined.submit("player_0", call("finish", answer="I cannot do that with these tools.", impossible=True))
    assert declined.returns["player_0"] == 1.0
    ignored = find(1, ["impossible"])
    ignored.submit("player_0", call("finish", answer="Done."))
    assert ignored.returns["player_0"] == 0.0 and "did not say impossible" in ignored.outcome.reason


def test_the_answer_must_state_the_value_asked_for():
    for answer, reward in (("It is 12.00.", 0.0), (None, 1.0)):
        match = find(1, ["balance"])
        match.submit("player_0", call("list_accounts"))
        if answer is None:
            name = next(n for n in ("checking", "savings", "travel") if f"my {n} account" in match.game.world.turns[0].instruction)
            answer = f"Your {name} balance is {next(a['balance'] for a in results(match)[0] if a['name'] == name):,.2f}."
        match.submit("player_0", call("finish", answer=answer))
        assert match.returns["player_0"] == reward


def test_a_change_not_asked_for_fails_the_turn():
    match = find(1, ["write_file"])
    path, content = match.game.world.turns[0].instruction.split()[3], match.game.world.turns[0].instruction.split('"')[1]
    match.submit("player_0", openai(("write_file", {"path": path, "content": content}), ("make_dir", {"path": "/home/extra"})))
    match.submit("player_0", call("finish"))
    assert match.returns["player_0"] == 0.0 and "state is not what was asked" in match.outcome.reason


def test_states_compare_without_order_or_new_ids_and_answers_read_loosely():
    first_new = {"calendar": 3}
    state = {
        "calendar": {
            "events": [
                {"id": 1, "title": "A", "date": "2025-01-01", "time": "09:00"},
                {"id": 3, "title": "B", "date": "2025-01-02", "time": "10:00"},
            ],
            "next_id": 4,
        }
    }
    other = {
        "calendar": {
            "events": [
                {"id": 7, "title": "B", "date": "2025-01-02", "time": "10:00"},
                {"id": 1, "title": "A", "date": "2025-01-01", "time": "09:00"},
            ],
            "next_id": 8,
        }
    }
    assert same_state(state, other, first_new)
    other["calendar"]["events"][1]["id"] = 2
    assert not same_state(state, other, first_new)
    assert answer_holds("about 1,234.50 left", "number", "1234.50") and not answer_holds("1234.51", "number", "1234.50")
    assert answer_holds("at 9:30", "time", "09:30") and not answer_holds("19:30", "time", "09:30")
    assert answer_holds("the code is k1234.", "text", "K1234") and not answer_holds("XK12345", "text", "K1234")


# ------------------------------------------------------------------ hidden state, copies and replay


def test_nothing_of_the_goal_reaches_the_player_or_the_spectator():
    for seed in range(30):
        match = started(seed, difficulty=5)
        world = match.game.world
        texts = [json.dumps(match.agent_observation("player_0"), default=str), match.render(), json.dumps(match.info("player_0"), default=str)]
        match.submit("player_0", call("list_dir", path="/nowhere"))
        texts += [json.dumps(match.agent_observation("player_0"), default=str), match.render()]
        secrets = [value for turn in world.turns for kind, value in turn.answers if kind != "number" or "." in value]
        secrets += [f'"amount": {t["amount"] / 100}' for t in world.turns[-1].goal["bank"]["transactions"]]
        for text in texts:
            assert "goal" not in text
            for secret in secrets:
                assert secret not in text, (seed, secret)


def test_clones_and_snapshots_are_independent():
    match = find(1, ["write_file"])
    snapshot = match.snapshot()
    twin = match.game.clone()
    match.submit("player_0", call("write_file", path="/home/new.txt", content="hi"))
    assert "/home/new.txt" not in twin.state["files"]["files"]
    match.restore(snapshot)
    assert "/home/new.txt" not in match.game.state["files"]["files"]


def test_records_replay_every_tool_call():
    match = play("random", 9, difficulty=4)
    expert = play("expert", 9, difficulty=4)
    for done in (match, expert):
        record = done.record()
        assert parlour.replay(record)["returns"] == record["returns"]
    tampered = json.loads(json.dumps(expert.record()))
    step = next(s for s in tampered["steps"] if s.get("calls") and s["calls"][0]["name"] != "finish")
    step["calls"][0]["result"] = "0" * len(step["calls"][0]["result"])
    with pytest.raises(parlour.ReplayMismatch):
        parlour.replay(tampered)


def test_every_service_is_offered_somewhere():
    assert {s for seed in range(20) for s in generate(seed, 2).services} == set(SERVICES)
