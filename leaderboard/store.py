"""The leaderboard's database: submitters, agents, submissions, verified episodes and computed ratings.

Any SQLAlchemy URL works; the default is a SQLite file (opened in WAL mode,
with writers serialised by ``BEGIN IMMEDIATE``), and PostgreSQL is the choice
for a shared deployment. The schema carries a version number
(:data:`SCHEMA_VERSION`, in the ``schema_version`` table): opening a database
written by another schema version raises :class:`SchemaMismatch` instead of
silently misreading it.

A submission is written in one transaction or not at all
(:meth:`Store.add_submission`). Episodes are unique by their fingerprint
(environment, version, options, seed and seating), so the same episode sent
twice, or by two clients at once, is stored once.

Agent names are owned: the submitter who first stores a name owns it, and a
submission by anyone else that uses it raises :class:`NameTaken` (nothing is
stored). The names of built-in reference agents (``random``, ``minimax``, ...)
belong to nobody: the caller passes them as ``builtin``, having checked by
replay that those seats really were the built-in agents.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import secrets
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
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
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

#: Bump when the tables change; a database of another version is refused.
SCHEMA_VERSION = 2

#: Longest agent or submitter name accepted.
NAME_LIMIT = 200


class SchemaMismatch(RuntimeError):
    """The database was written by another schema version of the leaderboard."""


class NameTaken(ValueError):
    """A submission uses agent names that another submitter owns; ``names`` lists them."""

    def __init__(self, names: list[str]):
        super().__init__(
            f"agent name(s) {', '.join(repr(name[:80]) for name in names)} belong to another submitter; "
            "choose other names for your agents"
        )
        self.names = names


class Base(DeclarativeBase):
    """Declarative base of the leaderboard tables."""


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class SchemaInfo(Base):
    """The single row holding the schema version of this database."""

    __tablename__ = "schema_version"
    version: Mapped[int] = mapped_column(Integer, primary_key=True)


class Submitter(Base):
    """Someone allowed to submit: a name and the SHA-256 of their bearer token (the token itself is never stored)."""

    __tablename__ = "submitters"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LIMIT), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)


class Agent(Base):
    """An agent name seen in verified episodes, the URL-safe slug of its page, and its owner (None for built-in agents)."""

    __tablename__ = "agents"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LIMIT), unique=True)
    slug: Mapped[str] = mapped_column(String(NAME_LIMIT + 20), unique=True)
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("submitters.id"), nullable=True)


class Submission(Base):
    """One accepted bundle: who sent it, for which environment, and how many of its episodes were new."""

    __tablename__ = "submissions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submitter_id: Mapped[int] = mapped_column(ForeignKey("submitters.id"))
    env_id: Mapped[str] = mapped_column(String(200))
    env_version: Mapped[int] = mapped_column(Integer)
    episodes: Mapped[int] = mapped_column(Integer)
    new_episodes: Mapped[int] = mapped_column(Integer)
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


def slug(name: str) -> str:
    """A file- and URL-safe page name for an agent or environment, distinct for distinct names.

    The hash of the full name is always appended: a slug that kept some names as
    they are could equal the slug of another name (``a b`` and the name spelt
    like its slug), and case-insensitive file systems would merge ``A`` and ``a``.
    """
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:NAME_LIMIT]
    return f"{safe}-{hashlib.sha256(name.encode()).hexdigest()[:16]}"


@dataclass
class NewEpisode:
    """A verified episode ready to store: see :class:`Episode` for the fields."""

    env_id: str
    env_version: int
    seed: int
    seating: dict[str, str]
    returns: dict[str, float]
    fingerprint: str
    record: dict[str, Any]


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
        """Create the submitter ``name`` and return its new token; it is shown once, only its hash is kept."""
        if not name or len(name) > NAME_LIMIT:
            raise ValueError(f"a submitter name is 1 to {NAME_LIMIT} characters")
        token = "plr_" + secrets.token_urlsafe(32)
        with self.write() as session:
            if session.scalar(select(Submitter.id).where(Submitter.name == name)) is not None:
                raise ValueError(f"submitter {name!r} already exists")
            session.add(Submitter(name=name, token_hash=hash_token(token)))
        return token

    def submitter_for(self, token: str) -> str | None:
        """The name of the submitter holding ``token``, or None."""
        with self.read() as session:
            return session.scalar(select(Submitter.name).where(Submitter.token_hash == hash_token(token)))

    # ----------------------------------------------------------- submissions
    def add_submission(
        self,
        submitter: str,
        env_id: str,
        env_version: int,
        summary: dict[str, Any],
        episodes: list[NewEpisode],
        builtin: Collection[str] = (),
    ) -> StoredSubmission:
        """Store a verified submission in one transaction; episodes already stored are skipped, not duplicated.

        Agent names in ``builtin`` belong to nobody; every other name becomes
        ``submitter``'s if new, and :class:`NameTaken` is raised (nothing stored)
        if another submitter owns it.
        """
        with self.write() as session:
            submitter_id = session.scalar(select(Submitter.id).where(Submitter.name == submitter))
            if submitter_id is None:
                raise ValueError(f"unknown submitter {submitter!r}")
            # Before anything else, so that a submission of someone else's names is refused even when nothing in it is new.
            names = sorted({name for episode in episodes for name in episode.seating.values()})
            agent_ids = self._agent_ids(session, names, submitter_id, set(builtin))
            unique = {episode.fingerprint: episode for episode in episodes}
            known = self._known_fingerprints(session, list(unique))
            fresh = [episode for key, episode in unique.items() if key not in known]
            if not fresh:
                return StoredSubmission(None, len(episodes), 0)
            submission = Submission(
                submitter_id=submitter_id,
                env_id=env_id,
                env_version=env_version,
                episodes=len(episodes),
                new_episodes=0,
                summary=json.dumps(summary),
            )
            session.add(submission)
            session.flush()
            inserted = self._insert_episodes(session, submission.id, fresh)
            by_key = {episode.fingerprint: episode for episode in fresh}
            seats = [
                {"episode_id": episode_id, "seat": seat, "agent_id": agent_ids[name], "score": by_key[key].returns.get(seat, 0.0)}
                for episode_id, key in inserted
                for seat, name in by_key[key].seating.items()
            ]
            if seats:
                session.execute(EpisodeSeat.__table__.insert(), seats)
            if not inserted:
                # Another client stored the same episodes while this one was verifying.
                session.delete(submission)
                return StoredSubmission(None, len(episodes), 0)
            submission.new_episodes = len(inserted)
            return StoredSubmission(submission.id, len(episodes), len(inserted))

    @staticmethod
    def _known_fingerprints(session: Session, keys: list[str]) -> set[str]:
        known: set[str] = set()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            known.update(session.scalars(select(Episode.fingerprint).where(Episode.fingerprint.in_(chunk))))
        return known

    def _insert(self, table: Any) -> Any:
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        elif self.dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert
        else:
            raise ValueError(f"the leaderboard supports SQLite and PostgreSQL, not {self.dialect}")
        return insert(table)

    def _agent_ids(self, session: Session, names: list[str], submitter_id: int, builtin: set[str]) -> dict[str, int]:
        """The ids of ``names``, creating the new ones; :class:`NameTaken` if another submitter owns any."""
        if names:
            rows = [{"name": name, "slug": slug(name), "owner_id": None if name in builtin else submitter_id} for name in names]
            # Only an existing name is skipped; any other conflict (a slug) raises instead of leaving the name without a row.
            session.execute(self._insert(Agent.__table__).on_conflict_do_nothing(index_elements=["name"]), rows)
        found = session.execute(select(Agent.name, Agent.id, Agent.owner_id).where(Agent.name.in_(names))).tuples().all()
        taken = sorted(name for name, _, owner in found if name not in builtin and owner != submitter_id)
        if taken:
            raise NameTaken(taken)
        return {name: agent_id for name, agent_id, _ in found}

    def _insert_episodes(self, session: Session, submission_id: int, episodes: list[NewEpisode]) -> list[tuple[int, str]]:
        table = Episode.__table__
        rows = [
            {
                "submission_id": submission_id,
                "env_id": e.env_id,
                "env_version": e.env_version,
                "seed": str(e.seed),
                "seating": json.dumps(e.seating, sort_keys=True),
                "returns": json.dumps(e.returns, sort_keys=True),
                "fingerprint": e.fingerprint,
                "record": json.dumps(e.record),
            }
            for e in episodes
        ]
        statement = (
            self._insert(table).on_conflict_do_nothing(index_elements=["fingerprint"]).returning(table.c.id, table.c.fingerprint)
        )
        return list(session.execute(statement, rows).tuples().all())

    # ------------------------------------------------------------------ reads
    def env_ids(self) -> list[str]:
        """Environments with at least one stored episode."""
        with self.read() as session:
            return sorted(session.scalars(select(Episode.env_id).distinct()))

    def episode_count(self, env_id: str | None = None) -> int:
        """How many episodes are stored (for ``env_id``, or in all)."""
        query = select(func.count(Episode.id))
        if env_id is not None:
            query = query.where(Episode.env_id == env_id)
        with self.read() as session:
            return int(session.scalar(query) or 0)

    def submission_count(self) -> int:
        """How many submissions are stored."""
        with self.read() as session:
            return int(session.scalar(select(func.count(Submission.id))) or 0)

    def results(self, env_id: str) -> list[tuple[str, dict[str, str], dict[str, float]]]:
        """Every stored episode of ``env_id`` as (fingerprint, seating, returns), ordered by fingerprint."""
        query = select(Episode.fingerprint, Episode.seating, Episode.returns).where(Episode.env_id == env_id)
        with self.read() as session:
            rows = session.execute(query.order_by(Episode.fingerprint)).tuples().all()
        return [(key, json.loads(seating), json.loads(returns)) for key, seating, returns in rows]

    def agent(self, name: str) -> dict[str, Any] | None:
        """An agent's name, slug and how many episodes it played in each environment; None if unknown."""
        with self.read() as session:
            row = session.execute(select(Agent.id, Agent.slug).where(Agent.name == name)).first()
            if row is None:
                return None
            counts = session.execute(
                select(Episode.env_id, func.count(func.distinct(Episode.id)))
                .join(EpisodeSeat, EpisodeSeat.episode_id == Episode.id)
                .where(EpisodeSeat.agent_id == row.id)
                .group_by(Episode.env_id)
            ).tuples().all()
            return {"name": name, "slug": row.slug, "episodes": dict(counts)}

    def agent_by_slug(self, agent_slug: str) -> str | None:
        """The agent name whose page slug is ``agent_slug``."""
        with self.read() as session:
            return session.scalar(select(Agent.name).where(Agent.slug == agent_slug))

    def agent_slugs(self) -> dict[str, str]:
        """Every agent name with its page slug."""
        with self.read() as session:
            return dict(session.execute(select(Agent.name, Agent.slug)).tuples().all())

    # ---------------------------------------------------------------- ratings
    def snapshot(self, env_id: str) -> tuple[int, dict[str, Any]] | None:
        """The stored rating table of ``env_id`` with the episode count it was computed from, if any."""
        with self.read() as session:
            row = session.get(RatingSnapshot, env_id)
            return None if row is None else (row.episode_count, json.loads(row.table))

    def save_ratings(self, env_id: str, episode_count: int, table: dict[str, Any]) -> None:
        """Replace the ratings of ``env_id`` with ``table`` (see :func:`parlour.leaderboard.ratings.env_table`).

        A computation from fewer episodes than the stored one (a slower
        concurrent request) is dropped, so the table never goes backwards.
        """
        try:
            self._save_ratings(env_id, episode_count, table)
        except IntegrityError:
            # A concurrent request saved this environment's first table at the same moment; readers recompute if stale.
            return

    def _save_ratings(self, env_id: str, episode_count: int, table: dict[str, Any]) -> None:
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
                {"env_id": env_id, "agent_id": ids[row["agent"]], "kind": table["kind"], "value": row["rating"],
                 "low": row["low"], "high": row["high"], "games": row["games"]}
                for row in table["rows"]
            ]
            if rows:
                session.execute(Rating.__table__.insert(), rows)
