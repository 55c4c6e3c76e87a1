"""The leaderboard as one Python object: store, verification, ratings, server and static site.

::

    from parlour.leaderboard.api import Leaderboard

    board = Leaderboard("sqlite:///leaderboard.db")      # or a postgresql+psycopg:// URL
    token = board.add_submitter("alice")                  # shown once; only its hash is stored
    result = board.submit("results/", "alice")            # a bundle dir, a dir of bundles, a Results, a wire dict
    board.ratings("parlour/TicTacToe-v0")                 # one environment's table; ratings() is the overall one
    board.export("site/")                                 # the HTML pages as a static site
    board.serve("127.0.0.1", 8000)                        # the HTTP API and the pages

:meth:`Leaderboard.submit` raises :class:`parlour.leaderboard.verify.Rejected`
when any episode does not reproduce, or when the bundle uses an agent name that
another submitter owns (the first to store a name owns it); nothing of that
bundle is stored then.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parlour.envs.core.match import make_game
from parlour.envs.registry import game_class
from parlour.leaderboard import ratings as rating_math
from parlour.leaderboard.store import NameTaken, Store
from parlour.leaderboard.verify import Rejected, VerifiedBundle, as_bundle, bundle_dirs, verify_bundle


class Leaderboard:
    """A leaderboard backed by the database at ``url`` (created if empty); see the module docstring."""

    def __init__(self, url: str = "sqlite:///leaderboard.db", bootstrap: int = rating_math.BOOTSTRAP):
        self.store = Store(url)
        self.bootstrap = bootstrap

    def add_submitter(self, name: str) -> str:
        """Create a submitter and return its token (print it: it cannot be recovered)."""
        return self.store.add_submitter(name)

    def submit(self, bundle: Any, submitter: str) -> dict[str, Any] | list[dict[str, Any]]:
        """Verify and store a bundle for ``submitter``; a directory of bundles gives one result per bundle.

        ``bundle`` is the wire dict, a :class:`~parlour.leaderboard.results.Results`,
        a bundle directory or a directory of them. Returns ``{"submission": id
        or None, "env_id", "episodes", "new_episodes", "duplicates"}``. Raises
        :class:`Rejected` if the bundle does not verify or uses another
        submitter's agent names (then nothing is stored).
        """
        if isinstance(bundle, (str, Path)):
            directories = bundle_dirs(bundle)
            if directories != [Path(bundle)]:
                return [self.submit(directory, submitter) for directory in directories]
        return self.store_verified(verify_bundle(as_bundle(bundle)), submitter)

    def store_verified(self, verified: VerifiedBundle, submitter: str) -> dict[str, Any]:
        """Store an already verified bundle and refresh its environment's ratings; :class:`Rejected` for another's names."""
        try:
            stored = self.store.add_submission(
                submitter, verified.env_id, verified.env_version, verified.summary, verified.episodes, builtin=verified.builtin
            )
        except NameTaken as taken:
            raise Rejected(str(taken)) from None
        if stored.new_episodes:
            self.ratings(verified.env_id)
        return {
            "submission": stored.submission_id,
            "env_id": verified.env_id,
            "episodes": stored.episodes,
            "new_episodes": stored.new_episodes,
            "duplicates": stored.episodes - stored.new_episodes,
        }

    def ratings(self, env_id: str | None = None) -> dict[str, Any]:
        """The rating table of ``env_id`` (see :mod:`parlour.leaderboard.ratings`), or the overall table without one.

        A stored table is reused while no episode has been added since; otherwise
        it is recomputed from every stored episode of the environment and saved.
        """
        if env_id is None:
            return self.overall()
        count = self.store.episode_count(env_id)
        snapshot = self.store.snapshot(env_id)
        if snapshot is not None and snapshot[0] == count:
            return snapshot[1]
        try:
            seats = len(make_game(game_class(env_id), {}).players)
        except KeyError:
            raise KeyError(f"no environment {env_id!r} is installed on this leaderboard") from None
        table = rating_math.env_table(self.store.results(env_id), seats, bootstrap=self.bootstrap)
        table["env_id"] = env_id
        self.store.save_ratings(env_id, count, table)
        return table

    def overall(self) -> dict[str, Any]:
        """The overall table: normalised scores (random 0, best scripted baseline 100) averaged over environments."""
        from parlour.baselines import scripted_names

        tables = {env_id: self.ratings(env_id) for env_id in self.store.env_ids()}
        return rating_math.overall({env_id: rating_math.normalised(table, scripted_names(env_id)) for env_id, table in tables.items()})

    def agent(self, name: str) -> dict[str, Any] | None:
        """An agent's rows in every environment it played, with its overall score; None if unknown."""
        info = self.store.agent(name)
        if info is None:
            return None
        overall = next((row for row in self.overall()["rows"] if row["agent"] == name), None)
        environments = {}
        for env_id in sorted(info["episodes"]):
            table = self.ratings(env_id)
            row = next(row for row in table["rows"] if row["agent"] == name)
            environments[env_id] = dict(row, kind=table["kind"], episodes=info["episodes"][env_id])
        return {"name": name, "overall": overall, "environments": environments}

    def serve(self, host: str = "127.0.0.1", port: int = 8000, **limits: Any) -> None:
        """Serve the HTTP API and pages with uvicorn until interrupted (``limits``: see :func:`create_app`)."""
        import uvicorn

        from parlour.leaderboard.server import create_app

        uvicorn.run(create_app(self, **limits), host=host, port=port, log_level="warning")

    def export(self, out_dir: str | Path) -> list[Path]:
        """Write the HTML pages and their static files as a static site under ``out_dir``; returns the pages."""
        from parlour.leaderboard.site import export_site

        return export_site(self, Path(out_dir))


__all__ = ["Leaderboard", "Rejected"]
