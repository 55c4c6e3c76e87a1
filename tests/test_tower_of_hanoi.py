"""Tower of Hanoi: moves on known positions, both endings, drawn and classic starts, and the optimal solver."""

from __future__ import annotations

import itertools

import pytest

from parlour.baselines import make_scripted
from parlour.envs.core.match import Match
from parlour.envs.puzzles.tower_of_hanoi import LEVELS, TowerOfHanoi, solution

ENV_ID = "parlour/TowerOfHanoi-v0"


def new_match(pegs: list[int] | None = None, difficulty: int = 1, seed: int = 0, classic: bool = False) -> Match:
    """A Tower of Hanoi match reset with ``seed``, its disks on ``pegs`` (smallest first, 0 for A) if given."""
    match = Match(TowerOfHanoi, {"difficulty": difficulty, "classic": classic})
    match.reset(seed)
    if pegs is not None:
        match.game.pegs = list(pegs)
        match.game.optimal = len(solution(pegs))
        match._refresh()
    return match


def test_only_top_disks_move_and_never_onto_a_smaller_one():
    # Disk 1 on C, disks 2 and 3 on A: A's top is 2, which may go to the empty B but not onto 1.
    match = new_match([2, 0, 0])
    assert match.game.pegs_text() == "A: 3 2\nB: (empty)\nC: 1"
    assert match.legal_moves("player_0") == ["A->B", "C->A", "C->B"]
    match.submit("player_0", "A->C")
    assert "cannot go on the smaller disk 1" in match.last_error["player_0"] and match.game.moves_made == 0
    match.submit("player_0", "B to C")
    assert "Peg B is empty" in match.last_error["player_0"]
    match.submit("player_0", "I think the best is a to b, no: move A - B")
    assert match.game.pegs == [2, 1, 0] and match.game.stack(1) == [2]


def test_putting_every_disk_on_c_wins_and_reports_the_optimum():
    match = new_match([0, 2, 2])
    assert match.game.optimal == 1
    match.submit("player_0", "A → C")
    assert match.over and match.returns == {"player_0": 1.0} and match.outcome.winners == ["player_0"]
    assert match.outcome.details == {"difficulty": 1, "success": True, "disks": 3, "moves": 1, "max_moves": 14, "optimal": 1}


def test_the_move_limit_ends_the_episode_as_a_failure():
    match = new_match([0, 0, 0])
    for _ in range(match.game.max_moves // 2):
        match.submit("player_0", "A->B")
        match.submit("player_0", "B->A")
    assert match.over and match.returns == {"player_0": 0.0} and match.outcome.winners == []
    assert match.outcome.details["success"] is False and match.outcome.details["moves"] == 14


def test_forfeit_costs_one():
    match = new_match([0, 0, 0])
    for _ in range(3):
        match.submit("player_0", "C->C")
    assert match.over and match.returns == {"player_0": -1.0} and match.outcome.details["difficulty"] == 1


def test_the_classic_solution_takes_two_to_the_n_minus_one_moves():
    for disks in range(1, 8):
        assert len(solution([0] * disks)) == 2**disks - 1
    assert solution([0, 0]) == [(0, 1), (0, 2), (1, 2)]


def brute_force(pegs: tuple[int, ...]) -> int:
    """The fewest moves to gather every disk on C, by breadth-first search over positions."""
    frontier, seen, depth = [pegs], {pegs}, 0
    while frontier:
        if any(all(p == 2 for p in state) for state in frontier):
            return depth
        nxt = []
        for state in frontier:
            for source, dest in itertools.permutations(range(3), 2):
                tops = [min((d for d in range(len(state)) if state[d] == peg), default=None) for peg in range(3)]
                if tops[source] is not None and (tops[dest] is None or tops[dest] > tops[source]):
                    after = tuple(dest if d == tops[source] else p for d, p in enumerate(state))
                    if after not in seen:
                        seen.add(after)
                        nxt.append(after)
        frontier, depth = nxt, depth + 1
    raise AssertionError("C is always reachable")


def test_the_solution_is_shortest_from_every_start_of_four_disks():
    for pegs in itertools.product(range(3), repeat=4):
        plan = solution(pegs)
        assert len(plan) == brute_force(pegs)
        if not plan:
            continue
        match = new_match(list(pegs), difficulty=2)
        for source, dest in plan:
            match.submit("player_0", f"{'ABC'[source]}->{'ABC'[dest]}")
        assert match.over and match.returns == {"player_0": 1.0}


@pytest.mark.parametrize("difficulty", sorted(LEVELS))
def test_drawn_starts_are_unsolved_and_the_solver_agent_solves_them_optimally(difficulty):
    agent = make_scripted("solver", ENV_ID)
    for seed in range(3):
        match = new_match(difficulty=difficulty, seed=seed)
        game = match.game
        assert game.disks == LEVELS[difficulty] and not all(p == 2 for p in game.pegs)
        while not match.over:
            match.submit("player_0", agent.act(match.agent_observation("player_0")))
        assert match.returns == {"player_0": 1.0} and match.outcome.details["moves"] == game.optimal


def test_the_classic_start_puts_every_disk_on_a():
    match = new_match(difficulty=3, seed=7, classic=True)
    assert match.game.pegs == [0] * 5 and match.game.optimal == 31 and match.game.max_moves == 62


def test_options_are_validated_and_the_vector_is_one_hot():
    with pytest.raises(ValueError, match="difficulty must be an int from 1 to 5"):
        TowerOfHanoi(difficulty=0)
    with pytest.raises(ValueError, match="classic must be True or False"):
        TowerOfHanoi(classic=1)
    match = new_match([2, 0, 1])
    match.submit("player_0", "C->B")
    assert match.game.vector("player_0").tolist() == pytest.approx([0, 1, 0, 1, 0, 0, 0, 1, 0, 1 / 14])
