"""The evaluation runner and result bundles: seating, seeds, batching, workers, resume, summaries, replay."""

from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Any, Mapping

import pytest

import parlour
from parlour.evaluation.results import Results, mean_ci
from tests.conftest import ENV_IDS

TTT = "parlour/TicTacToe-v0"


class FirstMoveAgent:
    """Plays the first legal move; batching, and counts the decisions it made per episode."""

    name = "first"

    def __init__(self) -> None:
        self.per_episode: Counter[int] = Counter()
        self.batch_sizes: list[int] = []

    def act(self, observation: Mapping[str, Any]) -> str:
        """The first legal move."""
        return self.act_batch([observation])[0]

    def act_batch(self, observations: list[Mapping[str, Any]]) -> list[str]:
        """The first legal move of each observation, counted per episode."""
        self.batch_sizes.append(len(observations))
        for observation in observations:
            self.per_episode[observation["episode"]] += 1
        return [observation["legal_moves"][0] for observation in observations]


class FailingAgent(FirstMoveAgent):
    """Like :class:`FirstMoveAgent`, but stops the run when asked to move in episode ``fail_at`` (an interruption)."""

    def __init__(self, fail_at: int) -> None:
        super().__init__()
        self.fail_at = fail_at

    def act_batch(self, observations: list[Mapping[str, Any]]) -> list[str]:
        """Raise on the episode ``fail_at``."""
        if any(observation["episode"] == self.fail_at for observation in observations):
            raise KeyboardInterrupt
        return super().act_batch(observations)


class GibberishAgent:
    """Never sends a valid move; reports token accounting through ``stats()`` as LLM agents do."""

    name = "gibberish"

    def __init__(self) -> None:
        self.calls = 0

    def act(self, observation: Mapping[str, Any]) -> str:
        """An unparseable action."""
        self.calls += 1
        return "I refuse to choose."

    def stats(self) -> dict[str, Any]:
        """Accounting in the LLM agents' format."""
        return {"prompt_tokens": 10 * self.calls, "completion_tokens": 2 * self.calls, "calls": self.calls}


def seatings(results: Results) -> Counter[tuple[str, str]]:
    """How often each (agent, seat) pair occurs in the records."""
    return Counter((name, seat) for record in results.records for seat, name in record["agents"].items())


def test_minimax_beats_random_and_never_loses() -> None:
    results = parlour.evaluate(TTT, ["minimax", "random"], episodes=20, seed=3, progress=False)
    summary = results.summary
    assert [record["episode"] for record in results.records] == list(range(20))
    assert summary["minimax"]["loss_rate"] == 0.0
    assert summary["minimax"]["win_rate"] > 0.5
    assert summary["minimax"]["win_rate"] == summary["random"]["loss_rate"]
    assert summary["minimax"]["mean_reward"] == pytest.approx(-summary["random"]["mean_reward"])
    for record in results.records:
        minimax_seat = next(seat for seat, name in record["agents"].items() if name == "minimax")
        assert record["outcome"]["winner"] in (None, minimax_seat)
    low, high = summary["minimax"]["ci95"]
    assert low < summary["minimax"]["mean_reward"] < high


def test_seats_rotate_so_every_agent_plays_every_seat_equally() -> None:
    results = parlour.evaluate(TTT, ["minimax", "random"], episodes=10, progress=False)
    assert seatings(results) == {(a, s): 5 for a in ("minimax", "random") for s in ("player_0", "player_1")}
    assert results.records[0]["agents"] == {"player_0": "minimax", "player_1": "random"}
    assert results.records[1]["agents"] == {"player_0": "random", "player_1": "minimax"}
    fixed = parlour.evaluate(TTT, ["minimax", "random"], episodes=4, rotate_seats=False, progress=False)
    assert seatings(fixed) == {("minimax", "player_0"): 4, ("random", "player_1"): 4}


def test_fewer_agents_than_seats_the_last_agent_fills_them() -> None:
    three = parlour.evaluate(
        "parlour/LiarsDice-v0",
        ["random", FirstMoveAgent()],
        episodes=6,
        env_kwargs={"num_players": 3, "dice_per_player": 1},
        progress=False,
    )
    counts = seatings(three)
    seats = three.records[0]["players"]
    assert {seat: counts[("random", seat)] for seat in seats} == {"player_0": 2, "player_1": 2, "player_2": 2}
    assert sum(counts[("first", seat)] for seat in seats) == 12
    self_play = parlour.evaluate(TTT, "minimax", episodes=4, progress=False)
    assert set(self_play.summary) == {"minimax"}
    assert self_play.summary["minimax"]["draw_rate"] == 1.0
    # Four draws bound the mean reward, but not to a point: the interval keeps a width inside the win/loss range.
    low, high = self_play.summary["minimax"]["ci95"]
    assert -1.0 <= low < 0.0 < high <= 1.0


def test_seating_errors_and_fixed_seats() -> None:
    with pytest.raises(ValueError, match="2 seats"):
        parlour.evaluate(TTT, ["random", "random", "random"], episodes=1, progress=False)
    with pytest.raises(ValueError, match="missing"):
        parlour.evaluate(TTT, {"player_0": "random"}, episodes=1, progress=False)
    fixed = parlour.evaluate(TTT, {"player_0": "random", "player_1": "minimax"}, episodes=4, progress=False)
    assert seatings(fixed) == {("random", "player_0"): 4, ("minimax", "player_1"): 4}
    twins = parlour.evaluate(TTT, ["random", "random"], episodes=2, progress=False)
    assert twins.agents == ["random", "random #2"]


def test_reproducible_under_the_seed() -> None:
    first = parlour.evaluate(TTT, ["random", "random"], episodes=8, seed=11, progress=False)
    again = parlour.evaluate(TTT, ["random", "random"], episodes=8, seed=11, in_flight=3, progress=False)
    other = parlour.evaluate(TTT, ["random", "random"], episodes=8, seed=12, progress=False)
    assert first.records == again.records
    assert [r["steps"] for r in first.records] != [r["steps"] for r in other.records]
    assert len({json.dumps(r["steps"]) for r in first.records}) > 1


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_random_agents_play_every_environment_and_records_replay(env_id: str) -> None:
    results = parlour.evaluate(env_id, ["random"], episodes=3, seed=5, progress=False)
    assert len(results.records) == 3
    for record in results.records:
        assert record["done"]
        assert set(record["agents"]) == set(record["players"])
        parlour.replay(record)


def test_batching_agent_gets_one_call_for_all_episodes_in_flight() -> None:
    batched = FirstMoveAgent()
    parlour.evaluate(TTT, [batched, "random"], episodes=8, in_flight=8, progress=False)
    assert max(batched.batch_sizes) == 8
    assert sum(batched.batch_sizes) == sum(batched.per_episode.values())
    assert set(batched.per_episode) == set(range(8))
    one_at_a_time = FirstMoveAgent()
    parlour.evaluate(TTT, [one_at_a_time, "random"], episodes=4, in_flight=1, progress=False)
    assert set(one_at_a_time.batch_sizes) == {1}


def test_two_workers_give_the_same_records_as_one() -> None:
    one = parlour.evaluate(TTT, ["minimax", "random"], episodes=6, seed=4, progress=False)
    two = parlour.evaluate(TTT, ["minimax", "random"], episodes=6, seed=4, workers=2, progress=False)
    assert two.records == one.records
    assert two.stats["minimax"]["decisions"] == one.stats["minimax"]["decisions"]


def test_workers_need_picklable_agents() -> None:
    agent = FirstMoveAgent()
    agent.lock = threading.Lock()
    with pytest.raises(TypeError, match="cannot be sent to worker processes"):
        parlour.evaluate(TTT, [agent, "random"], episodes=4, workers=2, progress=False)


def test_resume_skips_finished_episodes(tmp_path) -> None:
    complete = parlour.evaluate(TTT, [FirstMoveAgent(), "random"], episodes=10, seed=2, progress=False)
    with pytest.raises(KeyboardInterrupt):
        parlour.evaluate(TTT, [FailingAgent(fail_at=6), "random"], episodes=10, seed=2, in_flight=2, out=tmp_path, progress=False)
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    finished = {json.loads(line)["episode"] for line in lines}
    assert finished and 6 not in finished and len(finished) < 10
    with (tmp_path / "episodes.jsonl").open("a") as handle:
        handle.write('{"format": "parlour.rec')  # a record cut short by the interruption
    counting = FirstMoveAgent()
    resumed = parlour.evaluate(TTT, [counting, "random"], episodes=10, seed=2, out=tmp_path, progress=False)
    assert set(counting.per_episode) == set(range(10)) - finished
    assert resumed.records == complete.records
    assert Results.load(tmp_path).records == complete.records
    again = FirstMoveAgent()
    parlour.evaluate(TTT, [again, "random"], episodes=10, seed=2, out=tmp_path, progress=False)
    assert not again.per_episode
    with pytest.raises(ValueError, match="another evaluation"):
        parlour.evaluate(TTT, [FirstMoveAgent(), "random"], episodes=10, seed=3, out=tmp_path, progress=False)


def test_saved_bundle_loads_and_every_record_replays(tmp_path) -> None:
    results = parlour.evaluate("parlour/KuhnPoker-v0", ["random", "random"], episodes=6, seed=9, progress=False)
    results.save(tmp_path)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["env_id"] == "parlour/KuhnPoker-v0"
    assert summary["agents"] == ["random", "random #2"]
    assert (summary["seed"], summary["episodes"], summary["env_kwargs"]) == (9, 6, {})
    assert summary["parlour_version"] == parlour.__version__
    loaded = Results.load(tmp_path)
    assert loaded.records == results.records
    assert loaded.summary == json.loads(json.dumps(results.summary))
    for record in loaded.records:
        parlour.replay(record)


def test_invalid_actions_tokens_and_forfeits_are_summarised() -> None:
    results = parlour.evaluate(TTT, [GibberishAgent(), "random"], episodes=4, progress=False)
    summary = results.summary["gibberish"]
    assert summary["invalid_action_rate"] == 1.0
    assert summary["loss_rate"] == 1.0
    assert summary["mean_reward"] == -1.0
    assert results.summary["random"]["invalid_action_rate"] == 0.0
    # error_allowance 2: three invalid actions per episode before the forfeit.
    assert summary["completion_tokens"] == 2 * 3 * 4
    assert summary["prompt_tokens"] == 10 * 3 * 4
    assert "gibberish" in results.table()


def test_mean_ci_matches_the_t_interval() -> None:
    mean, (low, high) = mean_ci([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5
    # t(0.975, 3) = 3.182446, standard error = sqrt(5/3) / 2.
    assert (high - low) / 2 == pytest.approx(3.182446 * (5 / 3) ** 0.5 / 2, rel=1e-5)
    assert mean_ci([7.0]) == (7.0, None)


def test_llm_agent_plays_through_the_runner(tmp_path) -> None:
    from parlour.wrappers.tiny_model import make_tiny_model

    llm = parlour.make_agent(f"hf:{make_tiny_model(tmp_path / 'model')}", max_new_tokens=4, max_retries=0, seed=0)
    results = parlour.evaluate(TTT, [llm, "random"], episodes=4, in_flight=4, progress=False)
    for record in results.records:
        parlour.replay(record)
    stats = results.stats[llm.name]
    assert stats["batches"] < stats["decisions"]
    assert stats["completion_tokens"] > 0
    assert results.summary[llm.name]["completion_tokens"] == stats["completion_tokens"]
    assert not llm.conversations  # every finished episode's conversation was forgotten


def test_resume_with_options_that_read_back_as_json(tmp_path) -> None:
    options = {"heaps": (1, 2, 3)}
    parlour.evaluate("parlour/Nim-v0", ["random"], episodes=2, env_kwargs=options, out=tmp_path, progress=False)
    resumed = parlour.evaluate("parlour/Nim-v0", ["random"], episodes=4, env_kwargs=options, out=tmp_path, progress=False)
    whole = parlour.evaluate("parlour/Nim-v0", ["random"], episodes=4, env_kwargs=options, progress=False)
    assert resumed.records == whole.records
    assert resumed.records[0]["options"] == {"heaps": [1, 2, 3]}
