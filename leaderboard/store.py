"""The leaderboard's database: submitters, agents, submissions, verified episodes and computed ratings.

Any SQLAlchemy URL works; the default is a SQLite file (opened in WAL mode,
with writers serialised by ``BEGIN IMMEDIATE``), and PostgreSQL is the choice
for a shared deployment. The schema carries a version number
(:data:`SCHEMA_VERSION`, in the ``schema_version`` table): opening a database
written by another schema version raises :class:`SchemaMismatch` instead of
silently misreading it.

A submission is written in one transaction or not at all
(:meth:`Store.add_submission`), with its submitter's row locked (``SELECT ...
FOR UPDATE`` on PostgreSQL), so that concurrent submissions of one submitter
are checked against the quota one after another. Episodes are unique by their fingerprint
(environment, version, options, seed and seating), so the same episode sent
twice, or by two clients at once, is stored once.

Every submission and episode has a *source*: ``challenge`` (played for a
server-issued challenge, see :meth:`Store.issue_challenge`), ``live`` (played
on the server, turn by turn over HTTP) or ``self`` (self-reported: a bundle
without a challenge). Only the first two count in the ratings. A challenge is
consumed in the transaction that stores its bundle, so it is accepted once.

Agent names are owned: the submitter who first stores a name owns it, and a
submission by anyone else that uses it raises :class:`NameTaken` (nothing is
stored). A new name whose TR39 skeleton equals an existing name's (see
:mod:`parlour.leaderboard.names`) is refused the same way. The names of
built-in reference agents (``random``, ``minimax``, ...) belong to nobody: the
caller passes them as ``builtin``, having checked by replay that those seats
really were the built-in agents.

Storage is bounded per submitter (:class:`Quota`: stored bytes of episode
records and number of episodes); a submission past it raises
:class:`QuotaExceeded` and stores nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import secrets
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypedDict

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    create_engine,
    event,
    func,
    select,
)
from sqlalchemy.engine import CursorResult, Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

if TYPE_CHECKING:
    from sqlalchemy import Table

    from parlour.envs.core.record import Record
    from parlour.leaderboard.tables import RatingTable

from parlour.evaluation.challenges import challenge_seed
from parlour.evaluation.results import outcome_of
from parlour.leaderboard.names import NAME_LIMIT, BadName, check_name, skeleton

#: Bump when the tables change; a database of another version is refused.
SCHEMA_VERSION = 3

#: Where an episode's result comes from; only these sources count in the ratings.
COUNTED_SOURCES = ("challenge", "live")
SOURCES = (*COUNTED_SOURCES, "self")


class SchemaMismatch(RuntimeError):
    """The database was written by another schema version of the leaderboard."""


class NameTaken(ValueError):
    """A submission uses agent names that another submitter owns, or that look like existing names; ``names`` lists them."""

    def __init__(self, names: list[str], lookalikes: dict[str, str] | None = None):
        parts = []
        if names:
            parts.append(f"agent name(s) {', '.join(repr(name[:80]) for name in names)} belong to another submitter")
        for name, other in (lookalikes or {}).items():
            parts.append(f"agent name {name[:80]!r} looks like the existing agent name {other[:80]!r}")
        super().__init__("; ".join(parts) + "; choose clearly different names for your agents")
        self.names = names + sorted(lookalikes or {})


class QuotaExceeded(ValueError):
    """A submission would take its submitter past the storage quota."""


class ChallengeError(ValueError):
    """A challenge that cannot be issued or used: unknown, someone else's, expired, already used, or one still open."""


@dataclass(frozen=True)
class Quota:
    """Per-submitter storage limits: bytes of stored episode records and number of stored episodes (None: unlimited)."""

    max_bytes: int | None = 512 * 1024 * 1024
    max_episodes: int | None = 200_000


class Base(DeclarativeBase):
    """Declarative base of the leaderboard tables."""

    if TYPE_CHECKING:
        # Every model here maps one Table (DeclarativeBase allows any FromClause), whose insert, update and delete
        # statements the bulk writes use.
        __table__: ClassVar[Table]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _aware(moment: dt.datetime) -> dt.datetime:
    """``moment`` as an aware UTC time (SQLite hands back naive ones)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.timezone.utc)


class SchemaInfo(Base):
    """The single row holding the schema version of this database."""

    __tablename__ = "schema_version"
    version: Mapped[int] = mapped_column(Integer, primary_key=True)


class Submitter(Base):
    """Someone allowed to submit: a name and the SHA-256 of their bearer token (the token itself is never stored)."""

    __tablename__ = "submitters"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LIMIT), unique=True)
    #: SHA-256 of the name's TR39 skeleton: a look-alike of an existing submitter's name is refused.
    skeleton: Mapped[str] = mapped_column(String(64), unique=True)
    slug: Mapped[str] = mapped_column(String(NAME_LIMIT + 20), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)


class Agent(Base):
    """An agent name seen in verified episodes, the URL-safe slug of its page, and its owner (None for built-in agents)."""

    __tablename__ = "agents"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LIMIT), unique=True)
    #: SHA-256 of the name's TR39 skeleton: unique, so no two agents look alike.
    skeleton: Mapped[str] = mapped_column(String(64), unique=True)
    slug: Mapped[str] = mapped_column(String(NAME_LIMIT + 20), unique=True)
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("submitters.id"), nullable=True)


class Challenge(Base):
    """A single-use challenge: the run a submitter must play (environment, agents, episodes) and the nonce of its seeds."""

    __tablename__ = "challenges"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    submitter_id: Mapped[int] = mapped_column(ForeignKey("submitters.id"), index=True)
    env_id: Mapped[str] = mapped_column(String(200))
    env_version: Mapped[int] = mapped_column(Integer)
    agents: Mapped[str] = mapped_column(Text)
    #: The agent number in each seat before rotation (JSON), and whether seats rotate: the seating is part of the run.
    lineup: Mapped[str] = mapped_column(Text)
    rotate_seats: Mapped[bool] = mapped_column(Boolean)
    episodes: Mapped[int] = mapped_column(Integer)
    nonce: Mapped[str] = mapped_column(String(128))
    issued_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    #: The submission that used it; set once, in the transaction that stores the bundle.
    submission_id: Mapped[int | None] = mapped_column(Integer, nullable=True)


class Submission(Base):
    """One accepted bundle: who sent it, for which environment, and how many of its episodes were new."""

    __tablename__ = "submissions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submitter_id: Mapped[int] = mapped_column(ForeignKey("submitters.id"))
    env_id: Mapped[str] = mapped_column(String(200))
    env_version: Mapped[int] = mapped_column(Integer)
    episodes: Mapped[int] = mapped_column(Integer)
    new_episodes: Mapped[int] = mapped_column(Integer)
    #: "challenge", "live" or "self" (see the module docstring).
    source: Mapped[str] = mapped_column(String(16), default="self")
    challenge_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    #: Bytes of the new episodes' stored records, counted against the submitter's quota.
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    summary: Mapped[str] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)


class Episode(Base):
    """A verified episode: its replayed record, and the fingerprint that makes duplicates count once."""

    __tablename__ = "episodes"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), index=True)
    env_id: Mapped[str] = mapped_column(String(200), index=True)
    env_version: Mapped[int] = mapped_column(Integer)
    # Text, because a record's seed may exceed a 64-bit integer (and no database rejects a long one).
    seed: Mapped[str] = mapped_column(Text)
    seating: Mapped[str] = mapped_column(Text)
    returns: Mapped[str] = mapped_column(Text)
    #: The outcome's scalar details (agreement, welfare, distances, ...) and teams, as JSON: what ratings read besides returns.
    details: Mapped[str] = mapped_column(Text, default="{}")
    source: Mapped[str] = mapped_column(String(16), default="self", index=True)
    fingerprint: Mapped[str] = mapped_column(String(64), unique=True)
    record: Mapped[str] = mapped_column(Text)


class EpisodeSeat(Base):
    """Who sat where in an episode and what they scored: the rows ratings and agent pages are computed from."""

    __tablename__ = "episode_seats"
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    episode_id: Mapped[int] = mapped_column(ForeignKey("episodes.id"), index=True)
    seat: Mapped[str] = mapped_column(String(200))
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"), index=True)
    score: Mapped[float] = mapped_column(Float)


class RatingSnapshot(Base):
    """The last rating computation of an environment: how many episodes it saw, and its tables as JSON."""

    __tablename__ = "rating_snapshots"
    env_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    episode_count: Mapped[int] = mapped_column(Integer)
    table: Mapped[str] = mapped_column(Text)
    computed_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)


class Rating(Base):
    """One agent's computed rating in one environment (Bradley–Terry on the Elo scale, or a mean score)."""

    __tablename__ = "ratings"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    env_id: Mapped[str] = mapped_column(ForeignKey("rating_snapshots.env_id"), index=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"))
    kind: Mapped[str] = mapped_column(String(20))
    value: Mapped[float] = mapped_column(Float)
    low: Mapped[float] = mapped_column(Float)
    high: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer)


def hash_token(token: str) -> str:
    """The stored form of a bearer token."""
    return hashlib.sha256(token.encode()).hexdigest()


def skeleton_key(name: str) -> str:
    """The stored, indexable form of a name's TR39 skeleton (its SHA-256): equal keys look alike."""
    return hashlib.sha256(skeleton(name).encode("utf-8", "surrogatepass")).hexdigest()


def slug(name: str) -> str:
    """A file- and URL-safe page name for an agent or environment, distinct for distinct names.

    The hash of the full name is always appended: a slug that kept some names as
    they are could equal the slug of another name (``a b`` and the name spelt
    like its slug), and case-insensitive file systems would merge ``A`` and ``a``.
    """
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:NAME_LIMIT]
    return f"{safe}-{hashlib.sha256(name.encode()).hexdigest()[:16]}"


class OutcomeDetails(TypedDict, total=False):
    """What ratings read from an episode's outcome besides returns (:func:`outcome_details` makes it; an episode
    stored before details were kept has none of the keys)."""

    #: The outcome's scalar details: agreement, welfare, Pareto and Nash distances, ...
    details: dict[str, bool | int | float]
    #: Each team's seats, where the game has teams (Mafia's ``mafia`` and ``village``).
    teams: dict[str, list[str]] | None
    winning_team: str | None
    truncated: bool


class Result(NamedTuple):
    """One stored episode as :mod:`parlour.leaderboard.ratings` reads it (:meth:`Store.results`). Ratings read it by
    position (``result[1]`` is the seating), so a plain tuple ``(fingerprint, seating, returns)`` or
    ``(fingerprint, seating, returns, details)`` serves as well."""

    fingerprint: str
    #: ``{seat: agent}``
    seating: dict[str, str]
    #: ``{seat: return}``
    returns: dict[str, float]
    details: OutcomeDetails | None = None


class StoredTable(NamedTuple):
    """A stored rating table (:meth:`Store.snapshot`) and the number of episodes it was computed from."""

    episode_count: int
    table: RatingTable


@dataclass
class NewEpisode:
    """A verified episode ready to store: see :class:`Episode` for the fields."""

    env_id: str
    env_version: int
    seed: int
    seating: dict[str, str]
    returns: dict[str, float]
    fingerprint: str
    record: Record
    #: The outcome's scalar details and teams (see :func:`outcome_details`).
    details: OutcomeDetails = field(default_factory=OutcomeDetails)


def outcome_details(record: Record) -> OutcomeDetails:
    """What ratings need from a record's outcome besides returns: scalar details, teams, the winning team, truncation."""
    outcome = outcome_of(record)
    scalars = {
        key: value
        for key, value in (outcome.get("details") or {}).items()
        if isinstance(value, (bool, int, float)) and not (isinstance(value, float) and value != value)
    }
    return OutcomeDetails(
        details=scalars, teams=outcome.get("teams"), winning_team=outcome.get("winning_team"), truncated=bool(outcome.get("truncated"))
    )


@dataclass
class StoredSubmission:
    """What :meth:`Store.add_submission` wrote: the submission id (None when every episode was already stored)."""

    submission_id: int | None
    episodes: int
    new_episodes: int


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # The driver's own transaction handling is turned off so that _sqlite_begin decides how each one starts.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=60000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    # A writer takes the write lock up front: upgrading a read transaction later can fail with "database is locked".
    immediate = connection.get_execution_options().get("write", False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


class Store:
    """The leaderboard database at ``url`` (created, with its schema, if empty).

    Args:
        url: any SQLAlchemy URL, e.g. ``sqlite:///leaderboard.db`` or
            ``postgresql://user@127.0.0.1:5432/parlour`` (run through psycopg 3).
    """

    def __init__(self, url: str):
        if url.startswith(("postgresql://", "postgres://")):
            # psycopg (3) is the driver parlour's [server] extra installs; SQLAlchemy would otherwise pick psycopg2.
            url = "postgresql+psycopg://" + url.split("://", 1)[1]
        self.url = url
        self.dialect = url.split(":", 1)[0].split("+", 1)[0]
        connect_args = {"check_same_thread": False, "timeout": 60} if self.dialect == "sqlite" else {}
        self.engine: Engine = create_engine(url, connect_args=connect_args, pool_pre_ping=True)
        if self.dialect == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
            event.listen(self.engine, "begin", _sqlite_begin)
        self._writer = self.engine.execution_options(write=True)
        self._create_schema()

    def _create_schema(self) -> None:
        with self.write() as session:
            Base.metadata.create_all(session.connection())
            stored = session.scalars(select(SchemaInfo.version)).all()
            if not stored:
                session.add(SchemaInfo(version=SCHEMA_VERSION))
            elif stored != [SCHEMA_VERSION]:
                raise SchemaMismatch(
                    f"{self.url} holds leaderboard schema version {stored}, this parlour uses {SCHEMA_VERSION}; "
                    "export it with the parlour that wrote it, or start a new database"
                )

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A session whose work is committed together at the end, or rolled back entirely on error."""
        with Session(self._writer, expire_on_commit=False) as session, session.begin():
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only session."""
        with Session(self.engine) as session:
            yield session

    def close(self) -> None:
        """Release the database connections."""
        self.engine.dispose()

    # ------------------------------------------------------------ submitters
    def add_submitter(self, name: str) -> str:
        """Create the submitter ``name`` and return its new token; it is shown once, only its hash is kept.

        The name must be canonical (see :func:`parlour.leaderboard.names.check_name`) and must not look like an
        existing submitter's name; :class:`BadName` says why otherwise.
        """
        check_name(name, "a submitter name")
        token = "plr_" + secrets.token_urlsafe(32)
        key = skeleton_key(name)
        with self.write() as session:
            if session.scalar(select(Submitter.id).where(Submitter.name == name)) is not None:
                raise BadName(f"submitter {name!r} already exists")
            similar = session.scalar(select(Submitter.name).where(Submitter.skeleton == key))
            if similar is not None:
                raise BadName(f"submitter name {name!r} looks like the existing submitter {similar!r}; choose a clearly different name")
            session.add(Submitter(name=name, skeleton=key, slug=slug(name), token_hash=hash_token(token)))
        return token

    def submitter_for(self, token: str) -> str | None:
        """The name of the submitter holding ``token``, or None."""
        with self.read() as session:
            return session.scalar(select(Submitter.name).where(Submitter.token_hash == hash_token(token)))

    # ------------------------------------------------------------ challenges
    def issue_challenge(
        self,
        submitter: str,
        env_id: str,
        env_version: int,
        agents: list[str],
        lineup: list[int],
        rotate_seats: bool,
        episodes: int,
        ttl: float,
        max_open: int,
        nonce: str | None = None,
    ) -> dict[str, Any]:
        """Issue a single-use challenge to ``submitter``: the run it must play, with a fresh nonce; see :meth:`challenge`.

        Refused (:class:`ChallengeError`) while the submitter holds an open challenge for the same environment,
        whatever its agents, their order, names, line-up or rotation: each variant of a run gets a fresh nonce,
        so holding several and sending only the best would be seed shopping. ``max_open`` bounds the open
        challenges in all. ``nonce`` defaults to 32 fresh random bytes (tests pass their own, to be reproducible).
        """
        now = _now()
        with self.write() as session:
            submitter_id = self._submitter_id(session, submitter)
            # Locked, so that two concurrent requests cannot both see no open challenge (SQLite's writers are serialised already).
            session.execute(select(Submitter.id).where(Submitter.id == submitter_id).with_for_update())
            open_ = (
                session.execute(
                    select(Challenge.id, Challenge.env_id, Challenge.expires_at).where(
                        Challenge.submitter_id == submitter_id, Challenge.submission_id.is_(None)
                    )
                )
                .tuples()
                .all()
            )
            open_ = [row for row in open_ if _aware(row[2]) > now]
            for challenge_id, open_env, expires in open_:
                if open_env == env_id:
                    raise ChallengeError(
                        f"challenge {challenge_id} for {env_id} is still open until {_aware(expires).isoformat(timespec='seconds')}; "
                        "one challenge per environment at a time, whatever its agents or seating: submit its bundle first "
                        "(an unused challenge stays on your submitter page as abandoned)"
                    )
            if len(open_) >= max_open:
                raise ChallengeError(f"you hold {len(open_)} open challenges, the most allowed; submit or let them expire first")
            challenge = Challenge(
                id=secrets.token_urlsafe(18),
                submitter_id=submitter_id,
                env_id=env_id,
                env_version=env_version,
                agents=json.dumps(list(agents)),
                lineup=json.dumps(list(lineup)),
                rotate_seats=rotate_seats,
                episodes=episodes,
                nonce=nonce or secrets.token_hex(32),
                issued_at=now,
                expires_at=now + dt.timedelta(seconds=ttl),
            )
            session.add(challenge)
        return self._challenge_dict(challenge, submitter)

    @staticmethod
    def _challenge_dict(row: Challenge, submitter: str) -> dict[str, Any]:
        return {
            "id": row.id,
            "submitter": submitter,
            "env_id": row.env_id,
            "env_version": row.env_version,
            "agents": json.loads(row.agents),
            "lineup": json.loads(row.lineup),
            "rotate_seats": bool(row.rotate_seats),
            "episodes": row.episodes,
            "nonce": row.nonce,
            "seed": challenge_seed(row.nonce),
            "issued_at": _aware(row.issued_at).isoformat(),
            "expires_at": _aware(row.expires_at).isoformat(),
            "submission": row.submission_id,
        }

    def challenge(self, challenge_id: str) -> dict[str, Any] | None:
        """The challenge ``challenge_id`` (env, agents, episodes, nonce, seed, expiry, the submission that used it) or None."""
        with self.read() as session:
            row = session.execute(
                select(Challenge, Submitter.name).join(Submitter, Submitter.id == Challenge.submitter_id).where(Challenge.id == challenge_id)
            ).first()
            return None if row is None else self._challenge_dict(row[0], row[1])

    # ----------------------------------------------------------- submissions
    @staticmethod
    def _submitter_id(session: Session, submitter: str) -> int:
        submitter_id = session.scalar(select(Submitter.id).where(Submitter.name == submitter))
        if submitter_id is None:
            raise ValueError(f"unknown submitter {submitter!r}")
        return submitter_id

    def add_submission(
        self,
        submitter: str,
        env_id: str,
        env_version: int,
        summary: dict[str, Any],
        episodes: list[NewEpisode],
        builtin: Collection[str] = (),
        source: str = "self",
        challenge: str | None = None,
        quota: Quota | None = None,
    ) -> StoredSubmission:
        """Store a verified submission in one transaction; episodes already stored are skipped, not duplicated.

        Agent names in ``builtin`` belong to nobody; every other name becomes
        ``submitter``'s if new, and :class:`NameTaken` is raised (nothing stored)
        if another submitter owns it or it looks like an existing name.
        ``source`` is ``"challenge"`` (then ``challenge`` is its id, consumed
        here: :class:`ChallengeError` if it was used already), ``"live"`` or
        ``"self"``. :class:`QuotaExceeded` if the new episodes would take the
        submitter past ``quota``. A challenge's or a live match's submission is
        stored even when none of its episodes is new: it is the record that the
        challenge was used, or that the agent played its one live match (a live
        match whose episodes could not be stored is kept so, with its reason in
        the summary).
        """
        if source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
        with self.write() as session:
            submitter_id = self._submitter_id(session, submitter)
            # One submitter's submissions are stored one at a time, so each quota check sees the ones before it: on
            # PostgreSQL the row lock waits for the other transaction to commit (SQLite's writers are serialised already).
            session.execute(select(Submitter.id).where(Submitter.id == submitter_id).with_for_update())
            # Before anything else, so that a submission of someone else's names is refused even when nothing in it is new.
            names = sorted({name for episode in episodes for name in episode.seating.values()})
            agent_ids = self._agent_ids(session, names, submitter_id, set(builtin))
            unique = {episode.fingerprint: episode for episode in episodes}
            known = self._known_fingerprints(session, list(unique))
            fresh = [episode for key, episode in unique.items() if key not in known]
            kept = challenge is not None or source == "live"
            if not fresh and not kept:
                return StoredSubmission(None, len(episodes), 0)
            records = {episode.fingerprint: json.dumps(episode.record) for episode in fresh}
            size = sum(len(text) for text in records.values())
            if quota is not None:
                self._check_quota(session, submitter_id, quota, size, len(fresh))
            submission = Submission(
                submitter_id=submitter_id,
                env_id=env_id,
                env_version=env_version,
                episodes=len(episodes),
                new_episodes=0,
                source=source,
                challenge_id=challenge,
                bytes=size,
                summary=json.dumps(summary),
            )
            session.add(submission)
            session.flush()
            if challenge is not None:
                self._consume(session, challenge, submitter_id, submission.id)
            inserted = self._insert_episodes(session, submission.id, fresh, records, source)
            by_key = {episode.fingerprint: episode for episode in fresh}
            seats = [
                {"episode_id": episode_id, "seat": seat, "agent_id": agent_ids[name], "score": by_key[key].returns.get(seat, 0.0)}
                for episode_id, key in inserted
                for seat, name in by_key[key].seating.items()
            ]
            if seats:
                session.execute(EpisodeSeat.__table__.insert(), seats)
            if not inserted and not kept:
                # Another client stored the same episodes while this one was verifying.
                session.delete(submission)
                return StoredSubmission(None, len(episodes), 0)
            submission.new_episodes = len(inserted)
            submission.bytes = sum(len(records[key]) for _, key in inserted)
            return StoredSubmission(submission.id, len(episodes), len(inserted))

    @staticmethod
    def _check_quota(session: Session, submitter_id: int, quota: Quota, size: int, count: int) -> None:
        used_bytes, used_episodes = session.execute(
            select(func.coalesce(func.sum(Submission.bytes), 0), func.coalesce(func.sum(Submission.new_episodes), 0)).where(
                Submission.submitter_id == submitter_id
            )
        ).one()
        if quota.max_bytes is not None and used_bytes + size > quota.max_bytes:
            raise QuotaExceeded(
                f"this submission's {count} new episodes take {size} bytes; you store {used_bytes} of your quota of "
                f"{quota.max_bytes} bytes. Submit fewer episodes, or ask the leaderboard admin for a larger quota"
            )
        if quota.max_episodes is not None and used_episodes + count > quota.max_episodes:
            raise QuotaExceeded(
                f"this submission has {count} new episodes; you store {used_episodes} of your quota of "
                f"{quota.max_episodes} episodes. Submit fewer episodes, or ask the leaderboard admin for a larger quota"
            )

    @staticmethod
    def _consume(session: Session, challenge_id: str, submitter_id: int, submission_id: int) -> None:
        """Mark the challenge used by ``submission_id``; at most one submission ever gets it (a conditional update)."""
        used = session.execute(
            Challenge.__table__.update()
            .where(Challenge.id == challenge_id, Challenge.submitter_id == submitter_id, Challenge.submission_id.is_(None))
            .values(submission_id=submission_id)
        )
        assert isinstance(used, CursorResult)  # what an UPDATE's execution returns, with its row count
        if used.rowcount != 1:
            raise ChallengeError(f"challenge {challenge_id} was already used (a challenge is accepted once); ask for a new one")

    @staticmethod
    def _known_fingerprints(session: Session, keys: list[str]) -> set[str]:
        known: set[str] = set()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            known.update(session.scalars(select(Episode.fingerprint).where(Episode.fingerprint.in_(chunk))))
        return known

    def _insert(self, table: Any) -> Any:
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as postgresql_insert

            return postgresql_insert(table)
        if self.dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert as sqlite_insert

            return sqlite_insert(table)
        raise ValueError(f"the leaderboard supports SQLite and PostgreSQL, not {self.dialect}")

    def _agent_ids(self, session: Session, names: list[str], submitter_id: int, builtin: set[str]) -> dict[str, int]:
        """The ids of ``names``, creating the new ones; :class:`NameTaken` if another submitter owns any or one looks like another."""
        if not names:
            return {}
        found = session.execute(select(Agent.name, Agent.id, Agent.owner_id).where(Agent.name.in_(names))).tuples().all()
        known = {name for name, _, _ in found}
        new = [name for name in names if name not in known]
        keys = {name: skeleton_key(name) for name in new}
        lookalikes: dict[str, str] = {}
        if new:
            clashes = dict(session.execute(select(Agent.skeleton, Agent.name).where(Agent.skeleton.in_(list(keys.values())))).tuples().all())
            seen: dict[str, str] = {}
            for name, key in keys.items():
                other = clashes.get(key) or seen.get(key)
                # The same name stored by a concurrent submission a moment ago is the same agent, not a look-alike.
                if other is not None and other != name:
                    lookalikes[name] = other
                seen.setdefault(key, name)
        taken = sorted(name for name, _, owner in found if name not in builtin and owner != submitter_id)
        if taken or lookalikes:
            raise NameTaken(taken, lookalikes)
        if new:
            rows = [{"name": name, "skeleton": keys[name], "slug": slug(name), "owner_id": None if name in builtin else submitter_id} for name in new]
            # Only an existing name is skipped (a concurrent submission stored it); a clash of skeleton or slug raises.
            session.execute(self._insert(Agent.__table__).on_conflict_do_nothing(index_elements=["name"]), rows)
            found = session.execute(select(Agent.name, Agent.id, Agent.owner_id).where(Agent.name.in_(names))).tuples().all()
            taken = sorted(name for name, _, owner in found if name not in builtin and owner != submitter_id)
            if taken:
                raise NameTaken(taken)
        return {name: agent_id for name, agent_id, _ in found}

    def _insert_episodes(
        self, session: Session, submission_id: int, episodes: list[NewEpisode], records: dict[str, str], source: str
    ) -> list[tuple[int, str]]:
        table = Episode.__table__
        rows = [
            {
                "submission_id": submission_id,
                "env_id": e.env_id,
                "env_version": e.env_version,
                "seed": str(e.seed),
                "seating": json.dumps(e.seating, sort_keys=True),
                "returns": json.dumps(e.returns, sort_keys=True),
                "details": json.dumps(e.details, sort_keys=True),
                "source": source,
                "fingerprint": e.fingerprint,
                "record": records[e.fingerprint],
            }
            for e in episodes
        ]
        if not rows:
            return []
        statement = self._insert(table).on_conflict_do_nothing(index_elements=["fingerprint"]).returning(table.c.id, table.c.fingerprint)
        return list(session.execute(statement, rows).tuples().all())

    # ------------------------------------------------------------------ reads
    def env_ids(self, counted: bool | None = None) -> list[str]:
        """Environments with at least one stored episode (``counted``: only those with counted, or self-reported, episodes)."""
        query = select(Episode.env_id).distinct()
        if counted is not None:
            query = query.where(Episode.source.in_(COUNTED_SOURCES if counted else ("self",)))
        with self.read() as session:
            return sorted(session.scalars(query))

    def episode_count(self, env_id: str | None = None, counted: bool | None = None) -> int:
        """How many episodes are stored (for ``env_id``, or in all; ``counted``: only counted, or only self-reported, ones)."""
        query = select(func.count(Episode.id))
        if env_id is not None:
            query = query.where(Episode.env_id == env_id)
        if counted is not None:
            query = query.where(Episode.source.in_(COUNTED_SOURCES if counted else ("self",)))
        with self.read() as session:
            return int(session.scalar(query) or 0)

    def submission_count(self) -> int:
        """How many submissions are stored."""
        with self.read() as session:
            return int(session.scalar(select(func.count(Submission.id))) or 0)

    def results(self, env_id: str, counted: bool = True) -> list[Result]:
        """Stored episodes of ``env_id`` as (fingerprint, seating, returns, details), ordered by fingerprint.

        ``counted``: the episodes that count (challenges and live matches); otherwise the self-reported ones.
        """
        sources = COUNTED_SOURCES if counted else ("self",)
        query = select(Episode.fingerprint, Episode.seating, Episode.returns, Episode.details).where(
            Episode.env_id == env_id, Episode.source.in_(sources)
        )
        with self.read() as session:
            rows = session.execute(query.order_by(Episode.fingerprint)).tuples().all()
        return [Result(key, json.loads(seating), json.loads(returns), json.loads(details)) for key, seating, returns, details in rows]

    def episodes(self, env_id: str | None = None, submission: int | None = None, agent: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """The latest ``limit`` stored episodes (of an environment, a submission or an agent): id, env, seating, returns, source."""
        query = select(Episode.id, Episode.env_id, Episode.seating, Episode.returns, Episode.source, Episode.submission_id)
        if env_id is not None:
            query = query.where(Episode.env_id == env_id)
        if submission is not None:
            query = query.where(Episode.submission_id == submission)
        if agent is not None:
            query = query.where(
                Episode.id.in_(select(EpisodeSeat.episode_id).join(Agent, Agent.id == EpisodeSeat.agent_id).where(Agent.name == agent))
            )
        with self.read() as session:
            rows = session.execute(query.order_by(Episode.id.desc()).limit(limit)).tuples().all()
        return [
            {"id": id_, "env_id": env, "seating": json.loads(seating), "returns": json.loads(returns), "source": source, "submission": sub}
            for id_, env, seating, returns, source, sub in rows
        ]

    def episode(self, episode_id: int) -> dict[str, Any] | None:
        """One stored episode: its record, source, submission and submitter; None if there is none."""
        with self.read() as session:
            row = session.execute(
                select(Episode.record, Episode.source, Episode.submission_id, Submitter.name)
                .join(Submission, Submission.id == Episode.submission_id)
                .join(Submitter, Submitter.id == Submission.submitter_id)
                .where(Episode.id == episode_id)
            ).first()
        if row is None:
            return None
        return {"id": episode_id, "record": json.loads(row[0]), "source": row[1], "submission": row[2], "submitter": row[3]}

    def submission(self, submission_id: int) -> dict[str, Any] | None:
        """One submission: who sent it, when, for which environment, its source, challenge and summary; None if unknown."""
        with self.read() as session:
            row = session.execute(
                select(Submission, Submitter.name).join(Submitter, Submitter.id == Submission.submitter_id).where(Submission.id == submission_id)
            ).first()
        if row is None:
            return None
        return self._submission_dict(row[0], row[1])

    @staticmethod
    def _submission_dict(row: Submission, submitter: str) -> dict[str, Any]:
        return {
            "id": row.id,
            "submitter": submitter,
            "env_id": row.env_id,
            "env_version": row.env_version,
            "episodes": row.episodes,
            "new_episodes": row.new_episodes,
            "source": row.source,
            "challenge": row.challenge_id,
            "bytes": row.bytes,
            "created_at": _aware(row.created_at).isoformat(timespec="seconds"),
            "summary": json.loads(row.summary),
        }

    def submitter(self, name: str) -> dict[str, Any] | None:
        """A submitter's page data: slug, submissions (newest first), storage used, challenges issued, used and abandoned."""
        now = _now()
        with self.read() as session:
            row = session.execute(select(Submitter.id, Submitter.slug, Submitter.created_at).where(Submitter.name == name)).first()
            if row is None:
                return None
            submissions = session.scalars(select(Submission).where(Submission.submitter_id == row.id).order_by(Submission.id.desc())).all()
            challenges = (
                session.execute(
                    select(
                        Challenge.id,
                        Challenge.env_id,
                        Challenge.agents,
                        Challenge.episodes,
                        Challenge.issued_at,
                        Challenge.expires_at,
                        Challenge.submission_id,
                    )
                    .where(Challenge.submitter_id == row.id)
                    .order_by(Challenge.issued_at.desc())
                )
                .tuples()
                .all()
            )
            agents = session.scalars(select(Agent.name).where(Agent.owner_id == row.id).order_by(Agent.name)).all()
        listed = []
        for challenge_id, env_id, agents_json, episodes, issued, expires, used in challenges:
            state = "used" if used is not None else "open" if _aware(expires) > now else "abandoned"
            listed.append(
                {
                    "id": challenge_id,
                    "env_id": env_id,
                    "agents": json.loads(agents_json),
                    "episodes": episodes,
                    "issued_at": _aware(issued).isoformat(timespec="seconds"),
                    "state": state,
                    "submission": used,
                }
            )
        return {
            "name": name,
            "slug": row.slug,
            "created_at": _aware(row.created_at).isoformat(timespec="seconds"),
            "submissions": [self._submission_dict(sub, name) for sub in submissions],
            "bytes": sum(sub.bytes for sub in submissions),
            "stored_episodes": sum(sub.new_episodes for sub in submissions),
            "challenges": listed,
            "agents": list(agents),
            "abandoned": sum(item["state"] == "abandoned" for item in listed),
        }

    def live_match_of(self, submitter: str, env_id: str, agents: list[str]) -> int | None:
        """The submission holding ``submitter``'s stored live match of ``agents`` (remote agent first) on ``env_id``, or None."""
        with self.read() as session:
            rows = (
                session.execute(
                    select(Submission.id, Submission.summary)
                    .join(Submitter, Submitter.id == Submission.submitter_id)
                    .where(Submitter.name == submitter, Submission.env_id == env_id, Submission.source == "live")
                )
                .tuples()
                .all()
            )
        return next((submission_id for submission_id, summary in rows if json.loads(summary).get("agents") == list(agents)), None)

    def submitter_by_slug(self, submitter_slug: str) -> str | None:
        """The submitter name whose page slug is ``submitter_slug``."""
        with self.read() as session:
            return session.scalar(select(Submitter.name).where(Submitter.slug == submitter_slug))

    def submitter_names(self) -> list[str]:
        """Every submitter's name."""
        with self.read() as session:
            return sorted(session.scalars(select(Submitter.name)))

    def submission_ids(self) -> list[int]:
        """Every submission's id."""
        with self.read() as session:
            return sorted(session.scalars(select(Submission.id)))

    def agent(self, name: str) -> dict[str, Any] | None:
        """An agent's name, slug, owner, and how many counted and self-reported episodes it played per environment; None if unknown."""
        with self.read() as session:
            row = session.execute(
                select(Agent.id, Agent.slug, Submitter.name).outerjoin(Submitter, Submitter.id == Agent.owner_id).where(Agent.name == name)
            ).first()
            if row is None:
                return None
            counts = (
                session.execute(
                    select(Episode.env_id, Episode.source, func.count(func.distinct(Episode.id)))
                    .join(EpisodeSeat, EpisodeSeat.episode_id == Episode.id)
                    .where(EpisodeSeat.agent_id == row.id)
                    .group_by(Episode.env_id, Episode.source)
                )
                .tuples()
                .all()
            )
        counted: dict[str, int] = {}
        reported: dict[str, int] = {}
        for env_id, source, number in counts:
            target = counted if source in COUNTED_SOURCES else reported
            target[env_id] = target.get(env_id, 0) + number
        return {"name": name, "slug": row.slug, "owner": row[2], "episodes": counted, "self_reported": reported}

    def name_clash(self, name: str, submitter: str) -> str | None:
        """Why ``submitter`` may not use the agent name ``name`` (another's, or a look-alike of another name), or None."""
        with self.read() as session:
            row = session.execute(
                select(Agent.name, Submitter.name).outerjoin(Submitter, Submitter.id == Agent.owner_id).where(Agent.skeleton == skeleton_key(name))
            ).first()
        if row is None:
            return None
        if row[0] != name:
            return f"agent name {name[:80]!r} looks like the existing agent name {row[0][:80]!r}; choose a clearly different name"
        if row[1] is not None and row[1] != submitter:
            return f"agent name {name[:80]!r} belongs to another submitter; choose another name"
        return None

    def agent_by_slug(self, agent_slug: str) -> str | None:
        """The agent name whose page slug is ``agent_slug``."""
        with self.read() as session:
            return session.scalar(select(Agent.name).where(Agent.slug == agent_slug))

    def agent_slugs(self) -> dict[str, str]:
        """Every agent name with its page slug."""
        with self.read() as session:
            return dict(session.execute(select(Agent.name, Agent.slug)).tuples().all())

    # ---------------------------------------------------------------- ratings
    def snapshot(self, env_id: str) -> StoredTable | None:
        """The stored rating table of ``env_id`` with the episode count it was computed from, if any."""
        with self.read() as session:
            row = session.get(RatingSnapshot, env_id)
            return None if row is None else StoredTable(row.episode_count, json.loads(row.table))

    def save_ratings(self, env_id: str, episode_count: int, table: RatingTable) -> None:
        """Replace the ratings of ``env_id`` with ``table`` (see :func:`parlour.leaderboard.ratings.env_table`).

        A computation from fewer episodes than the stored one (a slower
        concurrent request) is dropped, so the table never goes backwards.
        """
        try:
            self._save_ratings(env_id, episode_count, table)
        except IntegrityError:
            # A concurrent request saved this environment's first table at the same moment; readers recompute if stale.
            return

    def _save_ratings(self, env_id: str, episode_count: int, table: RatingTable) -> None:
        with self.write() as session:
            current = session.get(RatingSnapshot, env_id)
            if current is not None and current.episode_count > episode_count:
                return
            session.execute(Rating.__table__.delete().where(Rating.env_id == env_id))
            if current is None:
                session.add(RatingSnapshot(env_id=env_id, episode_count=episode_count, table=json.dumps(table)))
            else:
                current.episode_count, current.table, current.computed_at = episode_count, json.dumps(table), _now()
            session.flush()
            names = [row["agent"] for row in table["rows"]]
            ids = dict(session.execute(select(Agent.name, Agent.id).where(Agent.name.in_(names))).tuples().all())
            rows = [
                {
                    "env_id": env_id,
                    "agent_id": ids[row["agent"]],
                    "kind": table["kind"],
                    "value": row["rating"],
                    "low": row["low"],
                    "high": row["high"],
                    "games": row["games"],
                }
                for row in table["rows"]
            ]
            if rows:
                session.execute(Rating.__table__.insert(), rows)
