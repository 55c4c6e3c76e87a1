"""The leaderboard store, run against SQLite and against a real PostgreSQL server (see tests/pg.py)."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import threading

import pytest
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.exc import IntegrityError

from parlour.evaluation.runner import evaluate
from parlour.leaderboard.store import (
    Agent,
    ChallengeError,
    Episode,
    EpisodeSeat,
    NameTaken,
    Quota,
    QuotaExceeded,
    SchemaMismatch,
    Store,
    Submission,
    Submitter,
    hash_token,
    slug,
)
from parlour.leaderboard.verify import NewEpisode, as_bundle, verify_bundle
from tests.pg import postgres_server, reset_database

ENV = "parlour/TicTacToe-v0"


@pytest.fixture(scope="module")
def postgres_url():
    """One throwaway PostgreSQL server for the module."""
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    """An empty database: a SQLite file, or the PostgreSQL server with its tables dropped."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/leaderboard.db"
    postgres = request.getfixturevalue("postgres_url")
    reset_database(postgres)
    return postgres


@pytest.fixture
def store(url):
    """A store with the submitter alice."""
    store = Store(url)
    store.add_submitter("alice")
    yield store
    store.close()


@functools.cache
def episodes(count: int, seed: int = 0) -> tuple[NewEpisode, ...]:
    """Verified random-vs-minimax episodes of TicTacToe."""
    results = evaluate(ENV, ["random", "minimax"], episodes=count, seed=seed, progress=False)
    return tuple(verify_bundle(as_bundle(results)).episodes)


def renamed(episode: NewEpisode, name: str, **changes) -> NewEpisode:
    """``episode`` with its random seat played by ``name`` (a new fingerprint), and other ``changes``."""
    seating = {seat: name if agent == "random" else agent for seat, agent in episode.seating.items()}
    return dataclasses.replace(episode, seating=seating, fingerprint=hashlib.sha256((episode.fingerprint + name).encode()).hexdigest(), **changes)


def count(store: Store, table) -> int:
    """Rows in ``table``."""
    with store.read() as session:
        return session.scalar(select(func.count()).select_from(table))


def test_schema_is_versioned(url):
    Store(url).close()
    reopened = Store(url)
    with reopened.write() as session:
        session.execute(text("UPDATE schema_version SET version = 99"))
    reopened.close()
    with pytest.raises(SchemaMismatch, match="version"):
        Store(url)


def test_tokens_are_random_shown_once_and_stored_hashed(url):
    store = Store(url)
    first, second = store.add_submitter("ann"), store.add_submitter("bob")
    assert first != second and len(first) > 40
    assert store.submitter_for(first) == "ann" and store.submitter_for(second) == "bob"
    assert store.submitter_for(first + "x") is None
    with store.read() as session:
        hashes = set(session.scalars(select(Submitter.token_hash)))
    assert hashes == {hash_token(first), hash_token(second)}
    with pytest.raises(ValueError, match="already exists"):
        store.add_submitter("ann")
    store.close()


def test_duplicate_episodes_count_once(store):
    batch = list(episodes(10))
    stored = store.add_submission("alice", ENV, 0, {"note": 1}, batch + batch[:3])
    assert (stored.episodes, stored.new_episodes) == (13, 10)
    again = store.add_submission("alice", ENV, 0, {}, batch[5:])
    assert again.submission_id is None and again.new_episodes == 0
    assert store.episode_count(ENV) == 10 and count(store, Submission) == 1
    assert count(store, EpisodeSeat) == 20
    assert store.results(ENV) == []  # self-reported: kept out of the ratings
    results = store.results(ENV, counted=False)
    assert [key for key, _, _, _ in results] == sorted(e.fingerprint for e in batch)
    assert {name for _, seating, _, _ in results for name in seating.values()} == {"random", "minimax"}
    assert store.agent("minimax")["self_reported"] == {ENV: 10} and store.agent("minimax")["episodes"] == {}
    assert store.agent("nobody") is None


def test_a_failing_submission_leaves_nothing(store, monkeypatch):
    def fail(*args, **kwargs):
        """Fail after the submission row and the agents were written."""
        raise RuntimeError("disk full")

    monkeypatch.setattr(store, "_insert_episodes", fail)
    with pytest.raises(RuntimeError, match="disk full"):
        store.add_submission("alice", ENV, 0, {}, list(episodes(10)))
    assert [count(store, table) for table in (Submission, Episode, EpisodeSeat, Agent)] == [0, 0, 0, 0]


def test_unknown_submitter_is_refused(store):
    with pytest.raises(ValueError, match="unknown submitter"):
        store.add_submission("mallory", ENV, 0, {}, list(episodes(10)))
    assert count(store, Episode) == 0


def test_twenty_concurrent_submitters_lose_and_duplicate_nothing(store):
    pool = list(episodes(40, seed=1))
    # Client k sends 10 episodes starting at 2k: neighbours overlap, so races on the same episode happen.
    slices = [[pool[(2 * k + j) % len(pool)] for j in range(10)] for k in range(20)]
    outcomes, errors = [], []

    def client(batch):
        """Submit one batch, keeping the outcome or the error."""
        try:
            outcomes.append(store.add_submission("alice", ENV, 0, {}, batch))
        except Exception as error:  # noqa: BLE001 - any failure is the test's finding
            errors.append(error)

    threads = [threading.Thread(target=client, args=(batch,)) for batch in slices]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors and len(outcomes) == 20
    assert sum(outcome.new_episodes for outcome in outcomes) == len(pool)
    assert store.episode_count(ENV) == len(pool) and count(store, EpisodeSeat) == 2 * len(pool)
    assert count(store, Submission) == sum(outcome.submission_id is not None for outcome in outcomes)


def test_ratings_never_go_backwards(store):
    store.add_submission("alice", ENV, 0, {}, list(episodes(10)))
    table = {"kind": "bradley-terry", "rows": [{"agent": "random", "rating": 1000.0, "low": 990.0, "high": 1010.0, "games": 10}]}
    store.save_ratings(ENV, 10, table)
    stale = dict(table, rows=[dict(table["rows"][0], rating=1.0)])
    store.save_ratings(ENV, 4, stale)
    assert store.snapshot(ENV) == (10, table)
    newer = dict(table, rows=[dict(table["rows"][0], rating=1234.0)])
    store.save_ratings(ENV, 12, newer)
    assert store.snapshot(ENV) == (12, newer)


def test_sqlite_database_is_in_wal_mode(tmp_path):
    Store(f"sqlite:///{tmp_path}/wal.db").close()
    engine = create_engine(f"sqlite:///{tmp_path}/wal.db")
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    engine.dispose()


def test_agent_names_belong_to_the_submitter_who_first_stored_them(store):
    store.add_submitter("bob")
    builtin = {"random", "minimax"}
    mine = [renamed(episode, "mine") for episode in episodes(4)]
    store.add_submission("alice", ENV, 0, {}, mine, builtin=builtin)
    for batch in ([renamed(episode, "mine") for episode in episodes(4, seed=1)], mine):
        with pytest.raises(NameTaken, match="'mine' belong to another submitter"):
            store.add_submission("bob", ENV, 0, {}, batch, builtin=builtin)
    assert count(store, Episode) == 4 and count(store, Submission) == 1
    assert store.add_submission("bob", ENV, 0, {}, list(episodes(4, seed=1)), builtin=builtin).new_episodes == 4
    with store.read() as session:
        owners = dict(session.execute(select(Agent.name, Agent.owner_id)).tuples().all())
    assert owners["random"] is None and owners["minimax"] is None and owners["mine"] is not None


def test_a_name_spelt_like_another_names_slug_gets_its_own_page(store):
    # The slug of "a b" once was "a_b-" and ten hex digits, which is itself a valid name: two names, one page.
    name = "a b"
    lookalike = "a_b-" + hashlib.sha256(name.encode()).hexdigest()[:10]
    batch = [renamed(episodes(2)[0], name), renamed(episodes(2)[1], lookalike)]
    assert store.add_submission("alice", ENV, 0, {}, batch).new_episodes == 2
    assert slug(name) != slug(lookalike)
    assert store.agent_by_slug(slug(name)) == name and store.agent_by_slug(slug(lookalike)) == lookalike


def test_a_slug_conflict_is_an_error_never_swallowed(store, monkeypatch):
    # Slugs carry a hash, so only a forced clash shows what the store does with one.
    monkeypatch.setattr("parlour.leaderboard.store.slug", lambda name: "same" if name in ("first", "second") else slug(name))
    store.add_submission("alice", ENV, 0, {}, [renamed(episodes(2)[0], "first")])
    with pytest.raises(IntegrityError):
        store.add_submission("alice", ENV, 0, {}, [renamed(episodes(2)[1], "second")])
    assert count(store, Episode) == 1


def test_a_long_seed_is_stored(store):
    long_seed = 10**60
    stored = store.add_submission("alice", ENV, 0, {}, [renamed(episodes(2)[0], "seedy", seed=long_seed)])
    assert stored.new_episodes == 1
    with store.read() as session:
        assert session.scalar(select(Episode.seed)) == str(long_seed)


def test_a_challenge_is_consumed_once_even_by_concurrent_submissions(store):
    challenge = store.issue_challenge("alice", ENV, 0, ["random", "minimax"], [0, 1], True, 10, ttl=60, max_open=4)
    assert store.challenge(challenge["id"])["submission"] is None
    with pytest.raises(ChallengeError, match="still open"):
        store.issue_challenge("alice", ENV, 0, ["random", "minimax"], [0, 1], True, 10, ttl=60, max_open=4)
    batches = [list(episodes(6, seed=2))[:3], list(episodes(6, seed=2))[3:]]
    outcomes, errors = [], []

    def client(batch):
        """Submit one batch for the same challenge."""
        try:
            outcomes.append(store.add_submission("alice", ENV, 0, {}, batch, source="challenge", challenge=challenge["id"]))
        except ChallengeError as error:
            errors.append(error)

    threads = [threading.Thread(target=client, args=(batch,)) for batch in batches]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(outcomes) == 1 and len(errors) == 1 and "already used" in str(errors[0])
    assert store.episode_count(ENV, counted=True) == 3 and store.challenge(challenge["id"])["submission"] == outcomes[0].submission_id


def test_quota_is_checked_in_the_storing_transaction(store):
    store.add_submission("alice", ENV, 0, {}, list(episodes(4)), quota=Quota(max_bytes=None, max_episodes=5))
    with pytest.raises(QuotaExceeded, match="you store 4 of your quota of 5 episodes"):
        store.add_submission("alice", ENV, 0, {}, list(episodes(4, seed=3)), quota=Quota(max_bytes=None, max_episodes=5))
    assert store.episode_count() == 4


def test_ten_concurrent_submissions_never_pass_the_quota(store):
    # The issue's race: on PostgreSQL each transaction summed the usage before the others committed, and 100 episodes were stored.
    pool = list(episodes(100, seed=4))
    batches = [pool[10 * k : 10 * (k + 1)] for k in range(10)]
    quota = Quota(max_bytes=None, max_episodes=30)
    stored, refused = [], []
    start = threading.Barrier(10)

    def client(batch):
        """Submit one batch of 10 new episodes, all clients at once."""
        start.wait()
        try:
            stored.append(store.add_submission("alice", ENV, 0, {}, batch, quota=quota))
        except QuotaExceeded as error:
            refused.append(error)

    threads = [threading.Thread(target=client, args=(batch,)) for batch in batches]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(stored) == 3 and len(refused) == 7
    assert store.episode_count(ENV) == 30
