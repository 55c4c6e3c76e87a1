"""The leaderboard as one Python object: store, verification, challenges, ratings, server and static site.

::

    from parlour.leaderboard.api import Leaderboard

    board = Leaderboard("sqlite:///leaderboard.db")      # or a postgresql+psycopg:// URL
    token = board.add_submitter("alice")                  # shown once; only its hash is stored
    challenge = board.issue_challenge("alice", "parlour/KuhnPoker-v0", ["mine", "nash"])
    results = parlour.evaluate("parlour/KuhnPoker-v0", [mine, "nash"], challenge=challenge)
    board.submit(results, "alice")                        # a bundle dir, a dir of bundles, a Results, a wire dict
    board.ratings("parlour/KuhnPoker-v0")                 # one environment's table; ratings() is the overall one
    export_site(board, "site/")                           # parlour.leaderboard.site: the pages as a static site
    serve(board, "127.0.0.1", 8000)                       # parlour.leaderboard.server: API, live matches, pages

Only live matches and runs played for a challenge count in the ratings; a
bundle without a challenge is stored as self-reported and shown apart. Where
a run's randomness comes from decides where it may be played: whoever runs
an episode knows its seed, and an agent that knows the seed re-simulates the
deal and the seeded opponents. So a submitter's own agent counts only in a
live match (:mod:`parlour.leaderboard.live`: the server deals and plays the
opponents from a secret it commits to before play and reveals after), and a
challenge, played on the submitter's machine, is issued only for line-ups of
built-in agents (the anchors), whose every move the server re-derives on
replay, so that knowing the seed helps nobody. :meth:`Leaderboard.submit` raises
:class:`parlour.leaderboard.verify.Rejected` when any episode does not
reproduce, when the bundle is not exactly its challenge's run (or the
challenge is unknown, someone else's, expired or used), or when it uses an
agent name that another submitter owns or that looks like an existing name;
:class:`parlour.leaderboard.store.QuotaExceeded` past the submitter's storage
quota. Nothing of such a bundle is stored.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any, overload

from sqlalchemy.exc import IntegrityError

from parlour.baselines import scripted_names
from parlour.envs.core.match import make_game
from parlour.envs.registry import game_class
from parlour.leaderboard import exploitability
from parlour.leaderboard import ratings as rating_math
from parlour.leaderboard.names import BadName
from parlour.leaderboard.store import ChallengeError, NameTaken, Quota, QuotaExceeded, Store
from parlour.leaderboard.tables import OverallTable, RatingTable, TeamReferences, TeamRow
from parlour.leaderboard.verify import (
    Rejected,
    VerifiedBundle,
    as_bundle,
    builtin_base,
    bundle_dirs,
    challenge_of,
    check_lineup,
    check_name,
    check_unprivileged,
    unrated_reason,
    verify_bundle,
)

#: Suffix of the snapshot key under which an environment's self-reported table is kept.
SELF_REPORTED = " [self-reported]"


class Leaderboard:
    """A leaderboard backed by the database at ``url`` (created if empty); see the module docstring.

    Args:
        url: the database (any SQLAlchemy URL).
        bootstrap: bootstrap samples of the rating intervals.
        quota: per-submitter storage limits (bytes of records, episodes).
        challenge_episodes: episodes of a challenge when the submitter asks for no count;
            ``min_challenge_episodes`` to ``max_challenge_episodes`` bound a count asked for.
        challenge_ttl: seconds a challenge stays open.
        max_open_challenges: open challenges one submitter may hold at once.
        nonces: makes each challenge's nonce (default: 32 bytes from :mod:`secrets`); tests pass a seeded one.
        agent_specs: submitted agents whose code this server can load (name to agent spec, such as
            ``python:module:factory``), so their policies can be queried (poker's exploitability).
    """

    def __init__(
        self,
        url: str = "sqlite:///leaderboard.db",
        bootstrap: int = rating_math.BOOTSTRAP,
        quota: Quota | None = None,
        challenge_episodes: int = 100,
        min_challenge_episodes: int = 20,
        max_challenge_episodes: int = 20_000,
        challenge_ttl: float = 24 * 3600.0,
        max_open_challenges: int = 8,
        nonces: Callable[[], str] | None = None,
        agent_specs: dict[str, str] | None = None,
    ):
        self.store = Store(url)
        self.bootstrap = bootstrap
        self.quota = quota if quota is not None else Quota()
        self.challenge_episodes = challenge_episodes
        self.min_challenge_episodes = min_challenge_episodes
        self.max_challenge_episodes = max_challenge_episodes
        self.challenge_ttl = challenge_ttl
        self.max_open_challenges = max_open_challenges
        self.nonces = nonces
        self.agent_specs = dict(agent_specs or {})

    def add_submitter(self, name: str) -> str:
        """Create a submitter and return its token (print it: it cannot be recovered)."""
        return self.store.add_submitter(name)

    # ------------------------------------------------------------ challenges
    def issue_challenge(
        self,
        submitter: str,
        env_id: str,
        agents: list[str],
        episodes: int | None = None,
        lineup: list[int] | None = None,
        rotate_seats: bool = True,
    ) -> dict[str, Any]:
        """A single-use challenge for ``submitter`` to evaluate ``agents`` (the run's agent names, in order) on ``env_id``.

        ``episodes`` is a wish, clamped to the leaderboard's bounds; ``lineup``
        (the agent number in each seat, default: agents in order, the last one
        filling the remaining seats) and ``rotate_seats`` fix the seating. Raises
        :class:`Rejected` for an unknown environment, bad agent names, a privileged oracle
        or an environment that is not rateable (see :mod:`parlour.leaderboard.verify`), or while
        the submitter holds an open challenge for the same environment, and for
        a run with an agent that is not built into ``env_id``: such a run is
        played on the submitter's machine, so its agent could know the seed; it
        counts only as a live match (see the module docstring).
        """
        if not isinstance(env_id, str):
            raise Rejected("env_id must be an environment id (a string such as 'parlour/KuhnPoker-v0')")
        try:
            game_cls = game_class(env_id)
        except KeyError as error:
            raise Rejected(str(error.args[0])) from None
        if not isinstance(agents, list) or not agents:
            raise Rejected("a challenge needs the run's agent names, in order")
        names = [check_name(name, "agent name") for name in agents]
        seats = len(make_game(game_cls, {}).players)
        if len(set(names)) != len(names) or len(names) > seats:
            raise Rejected(f"agents must be 1 to {seats} distinct names for {env_id}, got {len(names)}")
        own = [name for name in names if builtin_base(name) not in scripted_names(env_id)]
        if own:
            raise Rejected(
                f"challenges are issued for runs of built-in agents only, and {own[0]!r} is not one: an agent playing on your "
                "machine could re-simulate the seeded deal and opponents. Play it live, where the server keeps the seeds: "
                f"`parlour connect SPEC --server URL --env {env_id} --opponent NAME`"
            )
        check_unprivileged(env_id, names)
        unrated = unrated_reason(game_cls)
        if unrated is not None:
            raise Rejected(unrated)
        lineup = check_lineup(lineup, len(names), seats)
        if not isinstance(rotate_seats, bool):
            raise Rejected(f"rotate_seats must be true or false, got {rotate_seats!r}")
        if episodes is None:
            count = self.challenge_episodes
        elif isinstance(episodes, int) and not isinstance(episodes, bool):
            count = min(max(episodes, self.min_challenge_episodes), self.max_challenge_episodes)
        else:
            raise Rejected(f"episodes must be an int, got {episodes!r}")
        try:
            return self.store.issue_challenge(
                submitter,
                env_id,
                game_cls.version,
                names,
                lineup,
                rotate_seats,
                count,
                self.challenge_ttl,
                self.max_open_challenges,
                nonce=None if self.nonces is None else self.nonces(),
            )
        except ChallengeError as error:
            raise Rejected(str(error)) from None

    def _challenge_for(self, bundle: dict[str, Any], submitter: str) -> dict[str, Any] | None:
        """The stored challenge a bundle names, after checking it is ``submitter``'s, unexpired and unused."""
        challenge_id = challenge_of(bundle)
        if challenge_id is None:
            return None
        challenge = self.store.challenge(challenge_id)
        if challenge is None:
            raise Rejected(f"the bundle names challenge {challenge_id!r}, which this server did not issue")
        if challenge["submitter"] != submitter:
            raise Rejected(f"challenge {challenge_id} was issued to another submitter")
        if challenge["submission"] is not None:
            raise Rejected(f"challenge {challenge_id} was already used (a challenge is accepted once); ask for a new one")
        if dt.datetime.fromisoformat(challenge["expires_at"]) <= dt.datetime.now(dt.timezone.utc):
            raise Rejected(f"challenge {challenge_id} expired at {challenge['expires_at']}; ask for a new one")
        if challenge["env_version"] != game_class(challenge["env_id"]).version:
            raise Rejected(f"challenge {challenge_id} was for another version of {challenge['env_id']}; ask for a new one")
        return challenge

    # ----------------------------------------------------------- submissions
    def submit(self, bundle: Any, submitter: str) -> dict[str, Any] | list[dict[str, Any]]:
        """Verify and store a bundle for ``submitter``; a directory of bundles gives one result per bundle.

        ``bundle`` is the wire dict, a :class:`~parlour.evaluation.results.Results`,
        a bundle directory or a directory of them. Returns ``{"submission": id
        or None, "env_id", "episodes", "new_episodes", "duplicates", "counted"}``
        (``counted``: played for a challenge). Raises :class:`Rejected` or
        :class:`QuotaExceeded` (then nothing is stored); see the module docstring.
        """
        if isinstance(bundle, (str, Path)):
            directories = bundle_dirs(bundle)
            if directories != [Path(bundle)]:
                # bundle_dirs found bundles inside: each of them is a bundle itself.
                return [self._submit_one(directory, submitter) for directory in directories]
        return self._submit_one(bundle, submitter)

    def _submit_one(self, bundle: Any, submitter: str) -> dict[str, Any]:
        """:meth:`submit` of one bundle (not a directory of them)."""
        wire = as_bundle(bundle)
        return self.store_verified(verify_bundle(wire, self._challenge_for(wire, submitter)), submitter)

    def verify(self, bundle: Any, submitter: str) -> VerifiedBundle:
        """Verify a bundle (wire form) for ``submitter`` against the challenge it names, without storing it."""
        return verify_bundle(bundle, self._challenge_for(bundle, submitter) if isinstance(bundle, dict) else None)

    def store_verified(self, verified: VerifiedBundle, submitter: str, source: str | None = None) -> dict[str, Any]:
        """Store an already verified bundle and refresh its environment's ratings; :class:`Rejected` for names or a used challenge."""
        source = source or ("challenge" if verified.challenge is not None else "self")
        try:
            stored = self.store.add_submission(
                submitter,
                verified.env_id,
                verified.env_version,
                verified.summary,
                verified.episodes,
                builtin=verified.builtin,
                source=source,
                challenge=verified.challenge,
                quota=self.quota,
            )
        except (NameTaken, ChallengeError, BadName) as refused:
            raise Rejected(str(refused)) from None
        except IntegrityError:
            # Two submissions raced to create look-alike names: the database's unique skeleton stopped the second.
            raise Rejected("an agent name of this bundle was just taken by a look-alike in another submission; choose other names") from None
        if stored.new_episodes:
            self.ratings(verified.env_id, counted=source != "self")
        return {
            "submission": stored.submission_id,
            "env_id": verified.env_id,
            "episodes": stored.episodes,
            "new_episodes": stored.new_episodes,
            "duplicates": stored.episodes - stored.new_episodes,
            "counted": source != "self",
        }

    # --------------------------------------------------------------- ratings
    def env_info(self, env_id: str) -> dict[str, Any]:
        """An environment's description, category, flags, players and rules text (as its first player is shown them)."""
        from parlour.envs.core.match import Match

        game_cls = game_class(env_id)
        match = Match(game_cls, {})
        match.reset(0)
        player = match.players[0]
        rules = next((message["text"] for message in match.messages(player) if message["kind"] == "rules"), "")
        return {
            "env_id": env_id,
            "name": game_cls.name,
            "description": game_cls.description,
            "category": game_cls.category,
            "zero_sum": game_cls.zero_sum,
            "simultaneous": game_cls.simultaneous,
            "players": list(match.players),
            "rules": rules,
            "rules_player": player,
        }

    @overload
    def ratings(self, env_id: str, counted: bool = True) -> RatingTable: ...

    @overload
    def ratings(self, env_id: None = None, counted: bool = True) -> OverallTable: ...

    def ratings(self, env_id: str | None = None, counted: bool = True) -> RatingTable | OverallTable:
        """The rating table of ``env_id`` (see :mod:`parlour.leaderboard.ratings`), or the overall table without one.

        ``counted=False`` gives the table of the self-reported episodes, kept
        apart. A stored table is reused while no episode has been added since;
        otherwise it is recomputed from every stored episode of the environment and saved.
        """
        if env_id is None:
            return self.overall()
        key = env_id if counted else env_id + SELF_REPORTED
        count = self.store.episode_count(env_id, counted=counted)
        snapshot = self.store.snapshot(key)
        # A table saved by another version of the rating code is recomputed, never shown in the old form.
        if snapshot is not None and snapshot.episode_count == count and snapshot.table.get("format") == rating_math.FORMAT:
            return snapshot.table
        try:
            game_cls = game_class(env_id)
        except KeyError:
            raise KeyError(f"no environment {env_id!r} is installed on this leaderboard") from None
        players = list(make_game(game_cls, {}).players)
        table = rating_math.env_table(
            self.store.results(env_id, counted=counted),
            len(players),
            bootstrap=self.bootstrap,
            category=game_cls.category,
            zero_sum=game_cls.zero_sum,
            players=players,
            simultaneous=game_cls.simultaneous,
            fixed_roles=game_cls.fixed_roles,
        )
        table["env_id"] = env_id
        table["counted"] = counted
        table["format"] = rating_math.FORMAT
        if exploitability.measurable(env_id):
            found = exploitability.exploitabilities(env_id, table["agents"], lambda name: self.agent_specs.get(name) or builtin_base(name))
            table["exploitability"] = "chips a best responder wins per hand against the agent's policy, averaged over seats (0: a Nash equilibrium)"
            for row in table["rows"]:
                row["exploitability"], row["exploitability_note"] = found[row["agent"]]["value"], found[row["agent"]]["reason"]
        if table.get("teams"):
            table["references"] = self._team_references(env_id, table["teams"])
        self.store.save_ratings(key, count, table)
        return table

    @staticmethod
    def _team_references(env_id: str, teams: list[TeamRow]) -> TeamReferences:
        """The reference points of a cooperative game: the ``random`` team's score and the best scripted team's."""
        from parlour.baselines import scripted_names

        builtin = set(scripted_names(env_id))
        selfplay = {row["team"].split(" ×")[0]: row for row in teams if " + " not in row["team"] and row["team"].split(" ×")[0] in builtin}
        random_team = selfplay.get("random")
        scripted = [row for name, row in selfplay.items() if name != "random"]
        best = max(scripted, key=lambda row: row["score"]) if scripted else None
        return {
            "random": None if random_team is None else random_team["score"],
            "baseline": None if best is None else {"team": best["team"], "score": best["score"]},
        }

    def overall(self) -> OverallTable:
        """The overall table and one per category: normalised scores (random 0, the strongest measured reference 100) averaged over environments."""
        env_ids = self.store.env_ids(counted=True)
        tables = {env_id: self.ratings(env_id) for env_id in env_ids}
        normalised = {
            env_id: rating_math.normalised(table, game_class(env_id).reference_agents, higher_is_better=game_class(env_id).higher_is_better)
            for env_id, table in tables.items()
        }
        return rating_math.overall(normalised, categories={env_id: game_class(env_id).category for env_id in env_ids})

    def agent(self, name: str) -> dict[str, Any] | None:
        """An agent's rows in every environment it played, with its overall score and its recent episodes; None if unknown."""
        info = self.store.agent(name)
        if info is None:
            return None
        overall = self.overall()
        ranked = next((row for row in overall["rows"] if row["agent"] == name), None)
        environments = {}
        for env_id in sorted(info["episodes"]):
            table = self.ratings(env_id)
            row = next((row for row in table["rows"] if row["agent"] == name), None)
            if row is not None:
                environments[env_id] = dict(row, kind=table["kind"], method=table["method"], episodes=info["episodes"][env_id])
        return {
            "name": name,
            "owner": info["owner"],
            "overall": ranked,
            "environments": environments,
            "self_reported": info["self_reported"],
            "recent": self.store.episodes(agent=name, limit=20),
        }


__all__ = ["Leaderboard", "QuotaExceeded", "Rejected"]
