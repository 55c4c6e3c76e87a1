"""The leaderboard's declared episode types: what the store hands the ratings names its fields, and reads as before."""

from __future__ import annotations

from parlour.leaderboard import ratings
from parlour.leaderboard.store import NewEpisode, Result, Store, outcome_details


def _episode(seed: int, seating: dict[str, str], returns: dict[str, float]) -> NewEpisode:
    record = {
        "env_id": "parlour/KuhnPoker-v0",
        "seed": seed,
        "agents": seating,
        "outcome": {"details": {"pot": 2, "note": "text is left out"}, "teams": None},
    }
    return NewEpisode("parlour/KuhnPoker-v0", 0, seed, seating, returns, f"fp{seed}", record, outcome_details(record))


def test_stored_episodes_come_back_as_named_results(tmp_path):
    store = Store(f"sqlite:///{tmp_path}/lb.db")
    store.add_submitter("alice")
    seating = {"player_0": "random", "player_1": "nash"}
    store.add_submission(
        "alice", "parlour/KuhnPoker-v0", 0, {}, [_episode(1, seating, {"player_0": 1.0, "player_1": -1.0})], builtin={"random", "nash"}, source="live"
    )
    (result,) = store.results("parlour/KuhnPoker-v0")
    assert isinstance(result, Result)
    assert result.fingerprint == "fp1" and result.seating == seating and result.returns == {"player_0": 1.0, "player_1": -1.0}
    # Only scalar details are kept, beside the teams, the winning team and truncation.
    assert result.details == {"details": {"pot": 2}, "teams": None, "winning_team": None, "truncated": False}
    # Positional reads, which the ratings use, still give the same fields.
    assert result[1] is result.seating and result[3] is result.details


def test_a_named_result_and_a_plain_tuple_rate_alike():
    seating = {"player_0": "a", "player_1": "b"}
    plain = [(f"fp{k}", seating, {"player_0": float(k % 3 - 1), "player_1": float(1 - k % 3)}) for k in range(12)]
    named = [Result(*episode) for episode in plain]
    assert ratings.env_table(named, 2, bootstrap=10) == ratings.env_table(plain, 2, bootstrap=10)
