"""Issue 21's crashes and broken loops, each as it was reported: agent actions that raised, misread offers,
a verifier a spelled-out answer slipped past, a quadratic parser, records that did not survive JSON, and
Gymnasium resets that handed the learner an episode already over."""

from __future__ import annotations

import json
import random
import warnings

import gymnasium
import numpy as np
import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.registry import all_games
from parlour.envs.search.search_self_play import verify_proposal
from parlour.envs.search.world import World

SEARCH_GAMES = ["parlour/Search-v0", "parlour/AskOrSearch-v0", "parlour/SearchSelfPlay-v0"]
TOOL_GAMES = [game.env_id() for game in all_games() if Match(game).tools]


def started(env_id: str, seed: int = 1, **options) -> Match:
    """A match of ``env_id`` reset with ``seed``."""
    match = Match(parlour.game_class(env_id), options)
    match.reset(seed)
    return match


# ------------------------------------------------------------------ numbers in tool arguments


@pytest.mark.parametrize("env_id", SEARCH_GAMES)
def test_an_integral_float_is_an_integer_argument(env_id):
    match = started(env_id)
    player = match.acting()[0]
    match.submit(player, '{"tool": "search", "arguments": {"query": "Tavelon", "k": 5.0}}')
    step = match.steps[-1]
    assert step["error"] is None
    assert step["calls"][0]["arguments"] == {"query": "Tavelon", "k": 5} and type(step["calls"][0]["arguments"]["k"]) is int
    # The answer is the one k=5 gets.
    twin = started(env_id)
    twin.submit(player, '{"tool": "search", "arguments": {"query": "Tavelon", "k": 5}}')
    assert twin.steps[-1]["calls"] == step["calls"]


@pytest.mark.parametrize("env_id", SEARCH_GAMES)
def test_a_fractional_float_is_still_refused(env_id):
    match = started(env_id)
    player = match.acting()[0]
    match.submit(player, '{"tool": "search", "arguments": {"query": "Tavelon", "k": 5.5}}')
    assert "is not of type 'integer'" in match.steps[-1]["error"]


# ------------------------------------------------------------------ dict actions json cannot encode


@pytest.mark.parametrize("env_id", TOOL_GAMES)
@pytest.mark.parametrize("value, kind", [(np.int64(3), "int64"), (b"x", "bytes"), ({1, 2}, "set")])
def test_a_message_json_cannot_encode_is_an_invalid_action(env_id, value, kind):
    match = started(env_id)
    player = match.acting()[0]
    action = {"tool_calls": [{"type": "function", "function": {"name": "search", "arguments": {"query": "x", "k": value}}}]}
    match.submit(player, action)
    step = match.steps[-1]
    assert step["action"] is None and kind in step["error"] and "JSON" in step["error"]
    assert player in match.acting() and not match.over
    parlour.replay(json.loads(json.dumps(match.record())))


def test_a_message_that_holds_itself_is_an_invalid_action():
    match = started("parlour/Search-v0")
    action: dict = {"tool_calls": []}
    action["tool_calls"].append(action)
    match.submit("player_0", action)
    assert "JSON" in match.steps[-1]["error"]


# ------------------------------------------------------------------ records survive JSON


def test_a_surrogate_pair_answer_replays_from_json():
    match = started("parlour/Search-v0", seed=3)
    match.submit("player_0", "<answer>\ud800\udfff</answer>")
    parlour.replay(json.loads(json.dumps(match.record())))


def random_text(rng: random.Random) -> str:
    """Up to 40 code points drawn from ASCII, the BMP, the astral planes and the surrogates (lone and paired)."""
    ranges = [(0x20, 0x7E), (0, 0x1F), (0xA0, 0xD7FF), (0xD800, 0xDBFF), (0xDC00, 0xDFFF), (0xE000, 0xFFFF), (0x10000, 0x10FFFF)]
    chars = []
    for _ in range(rng.randrange(1, 40)):
        low, high = ranges[rng.randrange(len(ranges))]
        chars.append(chr(rng.randint(low, high)))
    return "".join(chars)


@pytest.mark.parametrize(
    "env_id",
    [
        "parlour/Search-v0",
        "parlour/Bargaining-v0",
        "parlour/PriceNegotiation-v0",
        "parlour/Debate-v0",
        "parlour/Mafia-v0",
        "parlour/GraphCoordination-v0",
    ],
)
def test_records_of_any_text_replay_after_a_json_round_trip(env_id):
    rng = random.Random(env_id)
    for seed in range(6):
        match = started(env_id, seed=seed)
        for _ in range(12):
            if match.over:
                break
            player = match.acting()[0]
            text = random_text(rng)
            legal = match.legal_moves_of(player)
            templates = [
                "{}",
                "<answer>{}</answer>",
                "[offer] 5 {}",
                "[pass] {}",
                "[all] {}",
                '{{"player_1": "{}"}}',
                "{} " + (legal[0] if legal else ""),
            ]
            match.submit(player, templates[rng.randrange(len(templates))].format(text))
        for ascii_only in (True, False):
            parlour.replay(json.loads(json.dumps(match.record(), ensure_ascii=ascii_only)))
        # Whatever the agent sent, the record is valid UTF-8, so it can be written to a file or sent over HTTP.
        json.dumps(match.record(), ensure_ascii=False).encode("utf-8")


# ------------------------------------------------------------------ GraphCoordination's parser is linear


def decoded_characters(monkeypatch, text: str) -> int:
    """How many characters the JSON decoder is handed (from where it starts) while one reply is parsed."""
    handed = []
    original = json.JSONDecoder.raw_decode

    def counting(self, s, idx=0):
        handed.append(len(s) - idx)
        return original(self, s, idx)

    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counting)
    match = started("parlour/GraphCoordination-v0")
    match.submit("player_0", text)
    monkeypatch.setattr(json.JSONDecoder, "raw_decode", original)
    return sum(handed)


@pytest.mark.parametrize("text", ['{"a": ' * 2731, '{"player_1": "' * 2000, "{" * 5000 + '{"player_1": "hi"}', '{"a": {"b": ' * 1500 + "}" * 10])
def test_the_message_parser_decodes_each_character_a_bounded_number_of_times(monkeypatch, text):
    assert decoded_characters(monkeypatch, text) <= 2 * len(text)


def test_the_message_parser_still_finds_the_last_message_object():
    match = started("parlour/GraphCoordination-v0")
    neighbour = match.game.neighbours("player_0")[0]
    match.submit("player_0", f'{{"note": 1}} first {{"{neighbour}": "old"}} then {{ unclosed {{"{neighbour}": "new {{x}}"}}')
    assert match.steps[-1]["move"] == {"to": {neighbour: "new {x}"}}


# ------------------------------------------------------------------ offers are parsed or refused, never misread


@pytest.mark.parametrize("env_id, player", [("parlour/PriceNegotiation-v0", "seller"), ("parlour/Ultimatum-v0", "proposer")])
@pytest.mark.parametrize("written", ["1,200", "1e3", "1 000", "1_000", "1.5e2", "1\u202f000"])
def test_an_offer_with_separators_or_an_exponent_is_refused(env_id, player, written):
    match = started(env_id, pie=2000) if env_id.endswith("Ultimatum-v0") else started(env_id)
    match.submit(player, f"Here is my offer. [offer] {written}")
    step = match.steps[-1]
    assert step["move"] is None and "plain whole number" in step["error"]


@pytest.mark.parametrize("env_id, player", [("parlour/PriceNegotiation-v0", "seller"), ("parlour/Ultimatum-v0", "proposer")])
def test_plain_offers_and_their_punctuation_still_read(env_id, player):
    for written, price in [("120.", 120), ("120, final", 120), ("$ 120 dollars", 120), ("120 - take it", 120)]:
        match = started(env_id, pie=200) if env_id.endswith("Ultimatum-v0") else started(env_id)
        match.submit(player, f"[offer] {written}")
        move = match.steps[-1]["move"]
        assert move is not None and move.get("price", move.get("share")) == price, written


# ------------------------------------------------------------------ the verifier sees spelled-out answers


@pytest.fixture(scope="module")
def small_world() -> World:
    return World.generate(seed=3, n_passages=600)


def a_proposal(world: World) -> tuple[dict, set[str]]:
    """A valid two-hop proposal built from one of the world's questions, and the ids that make every hop retrieved."""
    question = next(q for q in world.questions(40, hops=2, kinds=["bridge"], seed=4) if q.kind == "bridge")
    proposal = {"question": question.question, "answer": question.answer, "start": world.name(question.entities[0]), "path": list(question.path)}
    return proposal, {doc_id for hop in question.gold for doc_id in hop}


@pytest.mark.parametrize(
    "spell",
    [
        lambda answer: "-".join(answer),
        lambda answer: " ".join(answer.upper()),
        lambda answer: "\u200b".join(answer),
        lambda answer: ".".join(answer.lower()) + ".",
        lambda answer: "".join(f"{c}\u0301" for c in answer),
    ],
)
def test_a_question_that_spells_out_the_answer_is_refused(small_world, spell):
    proposal, retrieved = a_proposal(small_world)
    assert verify_proposal(small_world, proposal, (2,), retrieved)
    spelled = {**proposal, "question": f"{proposal['question']} (Hint: {spell(proposal['answer'])})"}
    with pytest.raises(ValueError, match="appears in the question"):
        verify_proposal(small_world, spelled, (2,), retrieved)


def test_an_answer_inside_a_longer_word_is_not_a_mention(small_world):
    proposal, retrieved = a_proposal(small_world)
    inside = {**proposal, "question": f"{proposal['question']} (not x{proposal['answer'].replace(' ', '')}y)"}
    assert verify_proposal(small_world, inside, (2,), retrieved)


# ------------------------------------------------------------------ Gymnasium resets hand the learner a live episode

LEARNER_SEATS = [
    ("parlour/SearchSelfPlay-v0", {"seat": 1, "opponent": "proposer"}),
    ("parlour/AskOrSearch-v0", {"seat": "expert", "opponent": "random"}),
    ("parlour/Hanabi-v0", {"seat": 1, "opponent": "random"}),
    ("parlour/Hanabi-v0", {"seat": 1, "opponent": "random", "obs_mode": "vector"}),
    ("parlour/CodeProposerSolver-v0", {"seat": 1, "opponent": "random"}),
    ("parlour/CoderTester-v0", {"seat": 1, "opponent": "random"}),
]


def some_action(env, info):
    """A legal move index (vector mode), the first legal move, or text the learner may send in any game."""
    if env.unwrapped.observer.obs_mode == "vector":
        return int(np.flatnonzero(env.unwrapped.action_masks())[0])
    return info["legal_moves"][0] if info.get("legal_moves") else "hello"


@pytest.mark.parametrize("env_id, kwargs", LEARNER_SEATS)
def test_every_reset_hands_the_learner_a_live_episode(env_id, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = gymnasium.make(env_id, **kwargs)
    learner = env.unwrapped
    for seed in range(100):
        _, info = env.reset(seed=seed)
        assert learner.player in learner.match.acting() and "outcome" not in info, seed
        env.step(some_action(env, info))


def test_a_skipped_deal_is_reported_and_the_episode_is_the_next_of_the_run():
    from parlour.envs.core.seeding import episode_seeds

    env = gymnasium.make("parlour/Hanabi-v0", opponent="random", seat=1).unwrapped
    _, info = env.reset(seed=7)
    skipped = info["skipped_seeds"]
    assert skipped == [episode_seeds(7, index, 2)[0] for index in range(len(skipped))] and skipped
    assert env.match.seed == episode_seeds(7, len(skipped), 2)[0]
    assert env.agent_seeds == {"player_0": episode_seeds(7, len(skipped), 2)[1][0]}
    observation, _ = env.reset(seed=7)
    assert env.match.seed == episode_seeds(7, len(skipped), 2)[0]
    env.step("hello")
    parlour.replay(json.loads(json.dumps(env.record())))
    # A deal the learner acts in reports nothing.
    assert "skipped_seeds" not in gymnasium.make("parlour/Hanabi-v0", opponent="random", seat=0).reset(seed=7)[1]


def test_opponents_that_never_let_the_learner_act_are_a_clear_error():
    env = gymnasium.make("parlour/SearchSelfPlay-v0", opponent="random", seat=1)
    with pytest.raises(RuntimeError, match=r"before solver_0 could act.*choose other opponents"):
        env.reset(seed=0)


@pytest.mark.parametrize("env_id, kwargs", LEARNER_SEATS)
def test_gymnasium_sync_vector_loops_run_through_resets(env_id, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        envs = gymnasium.make_vec(env_id, num_envs=2, vectorization_mode="sync", **kwargs)
    _, infos = envs.reset(seed=3)
    finished = 0
    for _ in range(60):
        if kwargs.get("obs_mode") == "vector":
            # A finished slot's mask is empty: it resets on this step, whatever its action.
            actions = [int(np.argmax(env.unwrapped.action_masks())) for env in envs.envs]
        else:
            actions = [infos["legal_moves"][i][0] if "legal_moves" in infos and len(infos["legal_moves"][i]) else "hello" for i in range(2)]
        _, _, terminations, truncations, infos = envs.step(actions)
        finished += int(np.sum(terminations | truncations))
    envs.close()
    assert finished >= 2


def test_an_sb3_loop_runs_through_resets():
    from stable_baselines3.common.vec_env import DummyVecEnv

    def one() -> gymnasium.Env:
        return gymnasium.make("parlour/Hanabi-v0", opponent="random", seat=1, obs_mode="vector").unwrapped

    envs = DummyVecEnv([one, one])
    envs.seed(11)
    envs.reset()
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(400):
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in envs.env_method("action_masks")])
        _, _, dones, _ = envs.step(actions)
        finished += int(dones.sum())
    assert finished >= 4
