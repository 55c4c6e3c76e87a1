"""parlour.evaluation.rollout: turn rows checked by hand on known episodes, Actions with metadata, seatings, tracking, vectors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

import parlour
from parlour.evaluation.rollout import Action, Rollout, TurnTable, make_plan

TTT = "parlour/TicTacToe-v0"
IPD = "parlour/IteratedPrisonersDilemma-v0"


class Script:
    """Plays a fixed list of answers in order (strings or Actions), one per decision."""

    def __init__(self, answers: list[Any], name: str) -> None:
        self.answers = answers
        self.name = name
        self.seen: list[Mapping[str, Any]] = []

    def act(self, observation: Mapping[str, Any]) -> Any:
        """The next scripted answer."""
        self.seen.append(observation)
        return self.answers[len(self.seen) - 1]


def test_turn_rows_of_a_hand_checked_tic_tac_toe_episode() -> None:
    # X: a1, then an invalid "zz", then b1 and c1 (the top row wins); O: a2, b2.
    crosses = Script([Action("a1", {"logprobs": [-0.5], "completion_ids": [7]}), "zz", "b1", Action("c1", {"logprobs": [-0.1]})], "crosses")
    noughts = Script(["a2", "b2"], "noughts")
    plan = make_plan(TTT, [crosses, noughts], rotate_seats=False)
    (played,) = list(Rollout(plan).play([0]))
    record, turns = played.record, played.turns
    assert isinstance(turns, TurnTable)
    expected = [
        # seat, turn, step, action, move, error?, reward
        ("player_0", 0, 0, "a1", "a1", False, 0.0),
        ("player_1", 0, 1, "a2", "a2", False, 0.0),
        ("player_0", 1, 2, "zz", None, True, 0.0),
        ("player_0", 2, 3, "b1", "b1", False, 0.0),
        ("player_1", 1, 4, "b2", "b2", False, -1.0),
        ("player_0", 3, 5, "c1", "c1", False, 1.0),
    ]
    got = [(t.seat, t.turn, t.step, t.action, t.move, t.error is not None, t.reward) for t in turns]
    assert got == expected
    assert [t.final_return for t in turns] == [1.0, -1.0, 1.0, 1.0, -1.0, 1.0]
    assert [t.agent for t in turns] == ["crosses", "noughts", "crosses", "crosses", "noughts", "crosses"]
    assert turns[0].metadata == {"logprobs": [-0.5], "completion_ids": [7]}
    assert turns[1].metadata == {}
    assert not turns[2].valid and turns[3].observation.startswith("\u25b6 Invalid action")  # told why "zz" was refused
    assert turns[0].legal_moves == ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]
    assert "a1" not in turns[1].legal_moves
    assert turns[1].view["board"][0] == 0  # O saw X's mark on a1
    # Each row points at its step of the record, which replays.
    for turn in turns:
        step = record["steps"][turn.step]
        assert (step["player"], step["action"], step["move"]) == (turn.seat, turn.action, turn.move)
    assert record["returns"] == {"player_0": 1.0, "player_1": -1.0}
    assert record["steps"][5]["action"] == "c1"  # the engine played the Action's text
    parlour.replay(record)
    columns = turns.to_columns()
    assert columns["logprobs"] == [[-0.5], None, None, None, None, [-0.1]]
    assert columns["completion_ids"] == [[7], None, None, None, None, None]
    assert columns["valid"] == [True, True, False, True, True, True]
    assert columns["seat"] == [t.seat for t in turns]


def test_rewards_paid_every_round_are_credited_to_the_deciding_turn() -> None:
    # Payoffs [T, R, P, S] = [5, 3, 1, 0]. Rounds: (C, D) -> 0/5, (D, D) -> 1/1, (D, C) -> 5/0.
    first = Script(["cooperate", "defect", "defect"], "first")
    second = Script(["defect", "defect", "cooperate"], "second")
    plan = make_plan(IPD, [first, second], env_kwargs={"rounds": 3}, rotate_seats=False)
    (played,) = list(Rollout(plan).play([0]))
    rewards = {(t.seat, t.turn): t.reward for t in played.turns}
    assert rewards == {
        ("player_0", 0): 0.0,
        ("player_1", 0): 5.0,
        ("player_0", 1): 1.0,
        ("player_1", 1): 1.0,
        ("player_0", 2): 5.0,
        ("player_1", 2): 0.0,
    }
    for seat in ("player_0", "player_1"):
        assert sum(t.reward for t in played.turns if t.seat == seat) == played.record["returns"][seat]


def test_track_seating_and_shared_agents() -> None:
    plan = make_plan(TTT, ["random", "minimax"], seed=3)
    rollout = Rollout(plan)
    everyone = {p.record["episode"]: p for p in rollout.play(range(4), seating=lambda episode: [1, 0], track=[1])}
    assert sorted(everyone) == [0, 1, 2, 3]
    for played in everyone.values():
        assert played.record["agents"] == {"player_0": "minimax", "player_1": "random"}
        assert {t.agent for t in played.turns} == {"minimax"} and {t.seat for t in played.turns} == {"player_0"}
    # Same seeds and seating as evaluate's episodes with the line-up fixed: the same records.
    fixed = parlour.evaluate(TTT, {"player_0": "minimax", "player_1": "random"}, episodes=4, seed=3, progress=False)
    plan_fixed = make_plan(TTT, {"player_0": "minimax", "player_1": "random"}, seed=3)
    again = sorted(Rollout(plan_fixed).run(range(4)), key=lambda record: record["episode"])
    assert again == fixed.records
    with pytest.raises(ValueError, match="one agent per seat"):
        list(rollout.play([0], seating=lambda episode: [0]))


class VectorAgent:
    """Asks for the vector observation and plays the first legal move; batching, answers with Actions."""

    needs_vector = True
    name = "vector"

    def __init__(self) -> None:
        self.vectors: list[np.ndarray] = []

    def act(self, observation: Mapping[str, Any]) -> Action:
        """The first legal move."""
        return self.act_batch([observation])[0]

    def act_batch(self, observations: list[Mapping[str, Any]]) -> list[Action]:
        """The first legal move of each, with the vector's sum as metadata."""
        self.vectors += [observation["vector"] for observation in observations]
        return [Action(o["legal_moves"][0], {"vector_sum": float(o["vector"].sum())}) for o in observations]


def test_vector_observations_only_for_agents_that_ask() -> None:
    vector = VectorAgent()
    plain = Script(["a1", "b1", "c1", "a2", "b2"] * 2, "plain")
    plan = make_plan(TTT, [vector, plain], rotate_seats=False, in_flight=4)
    played = list(Rollout(plan).play([0]))
    assert vector.vectors and all(v.dtype == np.float32 for v in vector.vectors)
    assert all("vector" not in observation for observation in plain.seen)
    # The vector is the seat's own: X's marks first, so X's sum grows with the moves made.
    sums = [t.metadata["vector_sum"] for t in played[0].turns if t.seat == "player_0"]
    assert sums == [2.0 * i for i in range(len(sums))]


def test_gym_opponent_may_answer_with_actions_and_vectors() -> None:
    import gymnasium

    env = gymnasium.make(TTT, opponent=VectorAgent(), seat=0)
    env.reset(seed=0)
    info = env.step("b2")[-1]
    assert "invalid_action" not in info
    assert env.unwrapped.match.steps[-1]["action"] == "a1"  # the opponent's Action text was played
