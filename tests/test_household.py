"""Household (ALFWorld-style): rules on hand-built houses, free-text reading, invalid actions, hidden state, splits, the expert."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import parlour
from parlour.baselines import make_scripted
from parlour.envs.agentic import household as household_module
from parlour.envs.agentic.household import MOVES, Household
from parlour.envs.agentic.household_world import LEVELS, World, digest, draw, in_split
from parlour.envs.core.context import Context
from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.match import Match

ENV_ID = "parlour/Household-v0"


def kitchen(family: str = "heat", target: str = "mug", destination: str = "countertop", **changes) -> World:
    """One kitchen: a mug in a closed cabinet, an apple in the closed fridge, an empty countertop."""
    fields = dict(
        rooms=["kitchen"],
        doors={"kitchen": []},
        receptacles={"kitchen": ["countertop 1", "cabinet 1", "fridge 1", "microwave 1", "sinkbasin 1"]},
        contents={"countertop 1": (), "cabinet 1": ("mug 1",), "fridge 1": ("apple 1",), "microwave 1": (), "sinkbasin 1": ()},
        lamps={},
        family=family,
        target=target,
        destination=destination,
        start="kitchen",
    )
    fields.update(changes)
    world = World(**fields)
    world.digest = digest(world)
    return world


def started(monkeypatch, world: World, **options) -> tuple[Household, Context]:
    """A game started on ``world`` (the generator replaced by it), and its context."""
    monkeypatch.setattr(household_module, "draw", lambda rng, difficulty, split: world)
    game = Household(**options)
    ctx = Context(game.players, np.random.default_rng(0))
    game.start(ctx)
    return game, ctx


def play(game: Household, ctx: Context, text: str) -> str:
    """Parse and apply ``text``; returns the command played."""
    command = game.parse("player_0", text)
    assert command in game.legal_moves("player_0")
    game.apply(ctx, {"player_0": command})
    return command


def said(ctx: Context) -> str:
    """The last thing the game told the player."""
    return ctx.inboxes["player_0"][-1]["text"]


# ------------------------------------------------------------------------------------------------- rules


def test_heat_then_place_needs_the_treatment_and_pays_one(monkeypatch):
    game, ctx = started(monkeypatch, kitchen())
    assert "put a hot mug on countertop." in said(ctx)
    play(game, ctx, "go to cabinet 1")
    assert said(ctx) == "You arrive at the cabinet 1. The cabinet 1 is closed."
    assert not any(m.startswith("take") for m in game.legal_moves("player_0"))
    play(game, ctx, "open cabinet 1")
    assert "In the cabinet 1, you see a mug 1." in said(ctx)
    play(game, ctx, "take mug 1 from cabinet 1")
    play(game, ctx, "go to countertop 1")
    play(game, ctx, "put mug 1 on countertop 1")
    assert ctx.ending is None, "a mug that is not hot does not do"
    play(game, ctx, "take mug 1 from countertop 1")
    play(game, ctx, "go to microwave 1")
    play(game, ctx, "heat mug 1 with microwave 1")
    play(game, ctx, "examine mug 1")
    assert said(ctx) == "This is a mug 1 (hot)."
    play(game, ctx, "go to countertop 1")
    play(game, ctx, "put mug 1 on countertop 1")
    assert ctx.ending is not None and ctx.ending.winners == ["player_0"]
    assert ctx.step_rewards == {"player_0": 1.0}
    assert ctx.ending.details["success"] and ctx.ending.details["steps"] == 11


def test_shaped_reward_pays_each_milestone_once(monkeypatch):
    game, ctx = started(monkeypatch, kitchen(), reward="shaped")
    paid = []
    for text in [
        "go to cabinet 1",
        "open cabinet 1",
        "take mug 1 from cabinet 1",
        "put mug 1 in cabinet 1",
        "take mug 1 from cabinet 1",
        "go to microwave 1",
        "heat mug 1 with microwave 1",
        "go to countertop 1",
        "put mug 1 on countertop 1",
    ]:
        ctx.step_rewards = {}
        play(game, ctx, text)
        paid.append(ctx.step_rewards.get("player_0", 0.0))
    assert paid == [0, 0, 0.1, 0, 0, 0, 0.1, 0, 1.0]
    assert ctx.ending.details["milestones"] == ["holding", "treated"]


def test_pick_two_needs_two_in_place(monkeypatch):
    world = kitchen(
        "pick_two",
        "mug",
        "countertop",
        contents={"countertop 1": (), "cabinet 1": ("mug 1", "mug 2"), "fridge 1": (), "microwave 1": (), "sinkbasin 1": ()},
    )
    game, ctx = started(monkeypatch, world)
    for text in [
        "go to cabinet 1",
        "open cabinet 1",
        "take mug 1 from cabinet 1",
        "go to countertop 1",
        "put mug 1 on countertop 1",
        "go to cabinet 1",
        "take mug 2 from cabinet 1",
        "go to countertop 1",
    ]:
        play(game, ctx, text)
        assert ctx.ending is None
    play(game, ctx, "put mug 2 on countertop 1")
    assert ctx.ending is not None and ctx.ending.winners == ["player_0"]


def test_examine_under_the_lamp_needs_the_object_in_hand_and_the_lamp_on(monkeypatch):
    world = World(
        rooms=["bedroom", "kitchen"],
        doors={"bedroom": ["kitchen"], "kitchen": ["bedroom"]},
        receptacles={"bedroom": ["sidetable 1", "bed 1"], "kitchen": ["countertop 1"]},
        contents={"sidetable 1": (), "bed 1": ("book 1",), "countertop 1": ()},
        lamps={"desklamp 1": "sidetable 1"},
        family="examine",
        target="book",
        destination="",
        start="kitchen",
    )
    world.digest = digest(world)
    game, ctx = started(monkeypatch, world)
    assert "examine the book with the desklamp." in said(ctx)
    assert game.legal_moves("player_0") == ["go to countertop 1", "go to bedroom", "inventory", "look"]
    play(game, ctx, "go to bedroom")
    play(game, ctx, "go to sidetable 1")
    assert "you see a desklamp 1" in said(ctx)
    play(game, ctx, "use desklamp 1")
    assert ctx.ending is None, "the lamp alone does not do"
    play(game, ctx, "go to bed 1")
    play(game, ctx, "take book 1 from bed 1")
    play(game, ctx, "go to sidetable 1")
    assert ctx.ending is not None and ctx.ending.winners == ["player_0"]


def test_the_step_limit_ends_the_episode_unsolved(monkeypatch):
    game, ctx = started(monkeypatch, kitchen(), difficulty=1)
    for _ in range(LEVELS[1].max_steps):
        play(game, ctx, "look")
    assert ctx.ending is not None and ctx.ending.winners == [] and ctx.step_rewards == {"player_0": 0.0}
    assert ctx.ending.reason == "the step limit ran out"


def test_rooms_are_reached_through_doors_only(monkeypatch):
    world = World(
        rooms=["kitchen", "livingroom", "bedroom"],
        doors={"kitchen": ["livingroom"], "livingroom": ["kitchen", "bedroom"], "bedroom": ["livingroom"]},
        receptacles={"kitchen": ["fridge 1"], "livingroom": ["sofa 1"], "bedroom": ["bed 1"]},
        contents={"fridge 1": (), "sofa 1": ("pillow 1",), "bed 1": ()},
        lamps={},
        family="pick_and_place",
        target="pillow",
        destination="bed",
        start="kitchen",
    )
    world.digest = digest(world)
    game, ctx = started(monkeypatch, world)
    with pytest.raises(InvalidMove, match="cannot get there from here"):
        game.parse("player_0", "go to bedroom")
    with pytest.raises(InvalidMove, match="cannot get there from here"):
        game.parse("player_0", "go to sofa 1")
    play(game, ctx, "go to livingroom")
    assert said(ctx).endswith("Doors lead to the kitchen and the bedroom.")
    assert "go to bedroom" in game.legal_moves("player_0")


def test_clone_is_independent(monkeypatch):
    game, ctx = started(monkeypatch, kitchen())
    play(game, ctx, "go to cabinet 1")
    twin = game.clone()
    twin_ctx = Context(twin.players, np.random.default_rng(0))
    for text in ["open cabinet 1", "take mug 1 from cabinet 1"]:
        twin.apply(twin_ctx, {"player_0": twin.parse("player_0", text)})
    assert twin.holding == "mug 1" and twin.contents["cabinet 1"] == ()
    assert game.holding is None and game.contents["cabinet 1"] == ("mug 1",) and game.opened == set() and game.seen == set()


# ------------------------------------------------------------------------------------------ reading text


@pytest.mark.parametrize(
    "text, command",
    [
        ("GO TO THE CABINET 1", "go to cabinet 1"),
        ("Let me look around first.\n> go to the cabinet", "go to cabinet 1"),
        ("I should open the fridge. go to fridge 1 is the plan, then I'll see", "go to fridge 1"),
        ("walk to sink basin", "go to sinkbasin 1"),
        ("action: go to countertop 1.", "go to countertop 1"),
    ],
)
def test_free_text_reads_as_the_command_it_names(monkeypatch, text, command):
    game, _ = started(monkeypatch, kitchen())
    assert game.parse("player_0", text) == command


def test_put_and_take_read_alfworlds_forms(monkeypatch):
    game, ctx = started(monkeypatch, kitchen())
    for text in ["go to cabinet 1", "open cabinet 1"]:
        play(game, ctx, text)
    assert game.parse("player_0", "pick up the mug") == "take mug 1 from cabinet 1"
    play(game, ctx, "take mug 1")
    play(game, ctx, "go to countertop 1")
    for text in ["put mug 1 in/on countertop 1", "move mug 1 to countertop 1", "put the mug on the countertop", "drop mug 1"]:
        assert game.parse("player_0", text) == "put mug 1 on countertop 1"


# ------------------------------------------------------------------------------------------ invalid actions


@pytest.mark.parametrize(
    "text, reason",
    [
        ("dance with the fridge", "That is not a command."),
        ("", "The reply is empty."),
        ("open", "Say what to open."),
        ("take apple 1 from fridge 1", "You are at the cabinet 1, not at the fridge 1: go to it first."),
        ("take mug 1 from cabinet 1", "The cabinet 1 is closed: open it first."),
        ("open countertop 1", "You are at the cabinet 1, not at the countertop 1: go to it first."),
        ("close cabinet 1", "The cabinet 1 is already closed."),
        ("put mug 1 in cabinet 1", "You are not carrying anything."),
        ("heat apple 1 with fridge 1", "You are not carrying anything."),
        ("use mug 1", "Only a desklamp can be used."),
        ("examine banana 7", "You see no such thing here."),
    ],
)
def test_what_cannot_be_done_is_refused_with_the_reason(monkeypatch, text, reason):
    game, ctx = started(monkeypatch, kitchen())
    play(game, ctx, "go to cabinet 1")
    with pytest.raises(InvalidMove) as refused:
        game.parse("player_0", text)
    assert str(refused.value).startswith(reason)


def test_a_near_miss_gets_did_you_mean(monkeypatch):
    game, ctx = started(monkeypatch, kitchen())
    play(game, ctx, "go to cabinet 1")
    with pytest.raises(InvalidMove, match=r"Did you mean 'open cabinet 1'\?"):
        game.parse("player_0", "opne cabinet 1")


def test_an_object_elsewhere_and_one_that_does_not_exist_are_refused_alike(monkeypatch):
    # The apple is in the closed fridge; apple 2 is nowhere: the player must not learn which is which.
    game, ctx = started(monkeypatch, kitchen())
    play(game, ctx, "go to countertop 1")
    for template in ["examine {}", "take {} from countertop 1", "take {} from fridge 1", "put {} on countertop 1"]:
        errors = []
        for name in ("apple 1", "apple 2"):
            with pytest.raises(InvalidMove) as refused:
                game.parse("player_0", template.format(name))
            errors.append(str(refused.value).replace(name, "NAME"))
        assert errors[0] == errors[1], template


def test_bad_input_is_an_invalid_action_never_an_exception():
    env = parlour.make_aec(ENV_ID, difficulty=3)
    env.reset(seed=5)
    for text in ["x" * 1_000_000, "\x00\ud800\u2028", '{"tool": "go"}', "go to " * 5000, "take  from ", "put mug 99999999999999 in", "🙂"]:
        env.step(text)
        info = env.infos["player_0"]
        assert info["invalid_action"] and not env.terminations["player_0"], text[:20]
        env.reset(seed=5)


def test_past_the_allowance_the_player_forfeits():
    env = parlour.make_aec(ENV_ID)
    env.reset(seed=0)
    for _ in range(Household.default_error_allowance + 1):
        env.step("blorp")
    assert env.terminations["player_0"] and env.rewards["player_0"] == -1.0


# ------------------------------------------------------------------------------------------ hidden state

NAME = re.compile(r"\b([a-z]+ \d+)\b")


def test_nothing_unseen_reaches_the_player_in_any_channel():
    """Random play with garbage mixed in: an object never shown (in a closed receptacle, or one not visited) is never
    named in the observation, the view, the render, the infos or an error, and the world's fingerprint stays hidden."""
    agent = make_scripted("random", ENV_ID)
    garbage = ["take apple 1 from fridge 1", "examine mug 1", "go to cabinet 3", "open drawer 2", "look at book 1", "take mug"]
    for seed in range(12):
        match = Match(parlour.envs.registry.game_class(ENV_ID), {"difficulty": 3, "error_allowance": 1000})
        match.reset(seed=seed)
        agent.reset(seed=seed)
        game, shown = match.game, set()
        step = 0
        while not match.over:
            shown |= {obj for rec in game.seen for obj in game.contents[rec]} | ({game.holding} if game.holding else set())
            hidden = {obj for held in game.contents.values() for obj in held} - shown
            observation = match.agent_observation("player_0")
            channels = [observation["text"], json.dumps(observation["view"]), match.render(), json.dumps(match.info("player_0"))]
            named = {name for channel in channels for name in NAME.findall(channel)}
            assert not named & hidden, (seed, step, named & hidden)
            assert game.fingerprint not in "".join(channels)
            text = garbage[step % len(garbage)] if step % 3 == 2 else agent.act(observation)
            match.submit("player_0", text)
            step += 1
        assert match.outcome.details["world"] == game.fingerprint


# ------------------------------------------------------------------------------------------ seeds and splits


def test_train_and_test_worlds_never_coincide():
    train = {draw(np.random.default_rng(seed), 1, "train").digest for seed in range(300)}
    test = {draw(np.random.default_rng(seed), 1, "test").digest for seed in range(300)}
    assert all(in_split(d, "train") for d in train) and all(in_split(d, "test") for d in test)
    assert not train & test
    assert len(train) > 250 and len(test) > 250


def test_every_seed_is_valid_under_both_splits_and_deterministic():
    for split in ("train", "test"):
        env = parlour.make_aec(ENV_ID, split=split)
        env.reset(seed=42)
        first = env.observe("player_0")["text"]
        env.reset(seed=42)
        assert env.observe("player_0")["text"] == first


def test_options_are_checked():
    for options, words in [({"difficulty": 6}, "difficulty"), ({"split": "eval"}, "train on 'train'"), ({"reward": "dense"}, "reward")]:
        with pytest.raises(ValueError, match=words):
            Household(**options)


# ------------------------------------------------------------------------------------------ agents, records, vector


@pytest.mark.parametrize("difficulty", [1, 2, 3, 4, 5])
def test_the_expert_solves_every_house(difficulty):
    results = parlour.evaluate(ENV_ID, ["expert"], episodes=15, seed=difficulty, env_kwargs={"difficulty": difficulty}, progress=False)
    assert all(record["outcome"]["details"]["success"] for record in results.records)
    assert all(record["outcome"]["details"]["steps"] <= LEVELS[difficulty].max_steps for record in results.records)


def test_records_of_free_text_play_replay_and_tampering_is_caught():
    env = parlour.make_aec(ENV_ID, difficulty=2)
    env.reset(seed=3)
    texts = ["Let me look.\n> look", "blorp", "inventory please", "go to the moon"]
    for text in texts:
        env.step(text)
    record = env.record()
    assert parlour.replay(record)["returns"] == record["returns"]
    record["steps"][0]["move"] = "inventory"
    with pytest.raises(parlour.ReplayMismatch):
        parlour.replay(record)


def test_vector_mode_masks_exactly_the_admissible_commands():
    env = parlour.make_aec(ENV_ID, obs_mode="vector", difficulty=2)
    env.reset(seed=1)
    for _ in range(20):
        if env.terminations["player_0"]:
            break
        observation = env.observe("player_0")
        mask = observation["action_mask"]
        admissible = env.match.game.admissible()
        assert [MOVES[i] for i in np.flatnonzero(mask)] == sorted(admissible, key=MOVES.index)
        assert observation["observation"].shape == (env.match.game.vector_size,)
        assert 0.0 <= observation["observation"].min() and observation["observation"].max() <= 1.0
        env.step(int(np.flatnonzero(mask)[0]))


@pytest.mark.parametrize(
    "text, command",
    [
        ("i", "inventory"),
        ("I will look at the cabinet 1", "examine cabinet 1"),
        ("inv", "inventory"),
        ("l", "look"),
        ("move to the countertop", "go to countertop 1"),
    ],
)
def test_short_forms_read_as_their_commands(monkeypatch, text, command):
    game, ctx = started(monkeypatch, kitchen())
    play(game, ctx, "go to cabinet 1")
    assert game.parse("player_0", text) == command


def test_refusals_never_echo_the_players_words(monkeypatch):
    # No game formats player text: a refusal names only the catalogue's things, never what the player wrote.
    game, ctx = started(monkeypatch, kitchen())
    play(game, ctx, "go to cabinet 1")
    for text in [
        "zqspoof",
        "take zqspoof from cabinet 1",
        "go to zqspoof",
        "put zqspoof 1 in zqspoof 2",
        "examine the zqspoof",
        "zqspoof\n> open zqspoof",
        "x" * 400 + " zqspoof",
    ]:
        with pytest.raises(InvalidMove) as refused:
            game.parse("player_0", text)
        assert "zqspoof" not in str(refused.value) and "xxx" not in str(refused.value), text[:30]
