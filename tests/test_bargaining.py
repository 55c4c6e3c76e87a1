"""Bargaining: parsing, payoffs, the turn limit, instances, OpenSpiel parity and privacy of values."""

from __future__ import annotations

import re

import numpy as np
import pytest

import parlour
from parlour.envs.core.game import InvalidMove
from parlour.envs.core.match import Match
from parlour.envs.negotiation.bargaining import Bargaining, generate_instance, read_instances

ENV = "parlour/Bargaining-v0"


@pytest.fixture
def instance_file(tmp_path):
    path = tmp_path / "instances.txt"
    path.write_text("1,2 4,3 2,4\n")  # 1 book, 2 hats; player_0 values 4, 3; player_1 values 2, 4
    return str(path)


def started(**options) -> Match:
    match = Match(Bargaining, options)
    match.reset(0)
    return match


def test_parse_tolerates_prose_and_takes_the_last_well_formed_move(instance_file):
    game = started(instances_file=instance_file).game
    move = game.parse("player_0", "Maybe [propose] 1 book, 0 hats? No: [propose] 2 hats, 0 books. Fair?")
    assert move == {"move": "propose", "keep": [0, 2], "talk": "Maybe [propose] 1 book, 0 hats? No: . Fair?"}
    assert game.parse("player_0", "[PROPOSE] 1, 1")["keep"] == [1, 1]
    assert game.parse("player_0", "[propose] 1 book, 1 hat [propose] nonsense")["keep"] == [1, 1]
    assert game.parse("player_0", "just chatting [pass]") == {"move": "pass", "talk": "just chatting"}
    for bad in ("no move at all", "[propose] 1 book", "[propose] 1 book, 1 cow", "[propose] 1 book, 1 book"):
        with pytest.raises(InvalidMove):
            game.parse("player_0", bad)
    with pytest.raises(InvalidMove, match="more than the pool"):
        game.parse("player_0", "[propose] 2 books, 0 hats")
    with pytest.raises(InvalidMove, match="no proposal"):
        game.parse("player_0", "[accept]")


def test_deal_pays_each_its_own_values_and_talk_reaches_the_other_verbatim(instance_file):
    match = started(instances_file=instance_file)
    match.submit("player_0", "Books are dear to me. [propose] 1 book, 0 hats")
    assert '\n\nplayer_0: "Books are dear to me."\n\n' in match.observation_text("player_1")
    kinds = {(m["kind"], m["sender"]) for m in match.messages("player_1") if m["sender"] == "player_0"}
    assert kinds == {("talk", "player_0"), ("move", "player_0")}
    with pytest.raises(InvalidMove, match="no proposal of the other"):
        match.game.parse("player_0", "[accept]")  # its own proposal
    match.submit("player_1", "[accept]")
    assert match.over
    assert match.returns == {"player_0": 4.0, "player_1": 8.0}
    details = match.outcome.details
    assert details["agreement"] and details["pareto_optimal"] and details["nash_distance"] == 0.0
    assert match.outcome.winner == "player_1"


def test_a_counter_proposal_replaces_the_standing_one(instance_file):
    match = started(instances_file=instance_file)
    match.submit("player_0", "[propose] 1 book, 2 hats")
    match.submit("player_1", "[propose] 0 books, 2 hats")
    match.submit("player_0", "[accept]")
    assert match.returns == {"player_0": 4.0, "player_1": 8.0}


def test_no_deal_by_the_deadline_gives_the_disagreement_payoff(instance_file):
    match = started(instances_file=instance_file, deadline=4, disagreement=1.5)
    assert "at most 4 turns" in match.observation_text("player_0")
    for player in ("player_0", "player_1", "player_0"):
        match.submit(player, "[propose] 1 book, 2 hats")
        assert not match.over
    match.submit("player_1", "[pass]")
    assert match.over
    assert match.returns == {"player_0": 1.5, "player_1": 1.5}
    assert match.outcome.details["agreement"] is False
    assert not match.outcome.truncated and match.outcome.reason == "no deal within 4 turns"


def test_the_engines_max_turns_truncates_without_the_disagreement_payoff(instance_file):
    match = started(instances_file=instance_file, max_turns=2, disagreement=1.5)
    assert "at most 10 turns" in match.observation_text("player_0")  # the game's deadline is untouched
    match.submit("player_0", "[propose] 1 book, 2 hats")
    match.submit("player_1", "[pass]")
    assert match.over and match.outcome.truncated
    assert match.returns == {"player_0": 0.0, "player_1": 0.0}


def test_a_forfeit_pays_minus_one_and_is_analysed_as_no_deal(instance_file):
    match = started(instances_file=instance_file, error_allowance=0, disagreement=1.5)
    match.submit("player_0", "no move here")
    assert match.over and match.returns == {"player_0": -1.0, "player_1": 0.0}
    assert match.outcome.winners == ["player_1"]
    assert match.outcome.details["agreement"] is False and match.outcome.details["utilities"] == {"player_0": 1.5, "player_1": 1.5}


def test_generated_instances_follow_openspiel_constraints():
    rng = np.random.default_rng(0)
    for _ in range(200):
        instance = generate_instance(rng, 3, 10)
        pool, (v0, v1) = instance["pool"], instance["values"]
        assert 5 <= sum(pool) <= 7 and min(pool) >= 1
        assert sum(c * v for c, v in zip(pool, v0)) == 10 == sum(c * v for c, v in zip(pool, v1))
        assert all(a or b for a, b in zip(v0, v1)) and any(a and b for a, b in zip(v0, v1))


def test_read_instances_rejects_malformed_lines(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("1,2,3 8,1,0 4,0\n")
    with pytest.raises(ValueError, match="same number"):
        read_instances(path)
    path.write_text("1,2,3 8,1,0\n")
    with pytest.raises(ValueError, match="comma-separated"):
        read_instances(path)


def test_same_instance_and_moves_give_the_same_payoffs_as_openspiel(tmp_path):
    pyspiel = pytest.importorskip("pyspiel")
    rng = np.random.default_rng(7)
    for episode in range(20):
        instance = generate_instance(rng, 3, 10)
        path = tmp_path / f"instance{episode}.txt"
        path.write_text(" ".join(",".join(map(str, v)) for v in [instance["pool"], *instance["values"]]) + "\n")
        spiel_game = pyspiel.load_game("bargaining", {"instances_file": str(path)})
        state = spiel_game.new_initial_state()
        state.apply_action(0)
        offer_ids = {}
        for action in range(spiel_game.num_distinct_actions() - 1):
            offer_ids[tuple(int(x) for x in re.findall(r"\d+", state.action_to_string(0, action)))] = action
        match = started(instances_file=str(path))
        while not match.over:
            player = match.acting()[0]
            can_accept = bool(match.game.proposals)
            if can_accept and rng.random() < 0.25:
                match.submit(player, "[accept]")
                state.apply_action(state.legal_actions()[-1])
            else:
                keep = [int(rng.integers(c + 1)) for c in instance["pool"]]
                match.submit(player, f"[propose] {', '.join(map(str, keep))}")
                state.apply_action(offer_ids[tuple(keep)])
            assert match.steps[-1]["error"] is None
        assert state.is_terminal()
        assert [match.returns["player_0"], match.returns["player_1"]] == state.returns()


def statement(game: Bargaining, player: str) -> str:
    """How the rules state ``player``'s private values."""
    return re.search(r"Your private values per item: [^.]*\.", game.rules(player)).group(0)


def values_leak(texts: list[str], game: Bargaining, owner: str) -> bool:
    """Whether any text holds ``owner``'s values statement, in the rules' words or as its value list."""
    said = statement(game, owner).split(": ", 1)[1]
    return any(said in text for text in texts)


def test_private_values_never_reach_the_other_player():
    checked = 0
    for seed in range(40):
        match = Match(Bargaining, {})
        match.reset(seed)
        game = match.game
        if game.values[0] == game.values[1]:
            continue
        agents = {"player_0": parlour.make_agent("random", env_id=ENV), "player_1": parlour.make_agent("boulware", env_id=ENV)}
        agents["player_0"].reset(seed=seed)
        seen = {p: [match.observation_text(p)] for p in match.players}
        while not match.over:
            player = match.acting()[0]
            observation = match.agent_observation(player)
            assert observation["view"]["values"] == game.values[match.players.index(player)]
            match.submit(player, agents[player].act(observation))
            for p in match.players:
                seen[p].append(match.observation_text(p))
        for owner, other in (("player_0", "player_1"), ("player_1", "player_0")):
            assert values_leak(seen[owner], game, owner)  # the check finds the statement where it belongs
            assert not values_leak(seen[other], game, owner)
        checked += 1
    assert checked >= 30


def test_the_leak_check_catches_a_player_telling_its_values():
    match = Match(Bargaining, {})
    match.reset(1)
    said = statement(match.game, "player_0").split(": ", 1)[1]
    match.submit("player_0", f"My values: {said} [pass]")
    assert values_leak([match.observation_text("player_1")], match.game, "player_0")


def test_options_without_any_valid_instance_are_refused_and_sparse_ones_work():
    with pytest.raises(ValueError, match="no pool"):
        Match(Bargaining, {"total_value": 1})
    match = Match(Bargaining, {"item_types": 1})
    for seed in range(20):
        match.reset(seed)
        (count,) = match.game.pool
        assert all(count * values[0] == 10 for values in match.game.values)
