"""The leaderboard's HTML pages, served live or exported as a static site.

Pages (the same paths in both cases, linked relatively, so an exported site
works from any directory or file server):

* ``index.html``: how to submit, the overall table (only agents that covered
  enough environments, with intervals and coverage), one table per category,
  and the list of environments;
* ``env/<slug>.html``: one environment: what it is and its rules, the method
  of its rating in one sentence, the table with intervals and mean payoff,
  a plot of the ratings with their intervals, the head-to-head matrix
  (win rate or mean payoff), the category's own tables (negotiation metrics;
  teams and roles), the self-reported runs kept apart, and recent episodes;
* ``agent/<slug>.html``, ``submitter/<slug>.html``, ``submission/<id>.html``:
  an agent across environments, a submitter's submissions and challenges, one
  submission with its episodes;
* ``episode/<id>.html``: an episode turn by turn as each player saw it (the
  record replayed), with every player's last messages and the full state at the end.

Plots are inline SVG with axis ticks at round numbers, and the only assets
are ``static/leaderboard.css`` and ``static/leaderboard.js`` (table
sorting), so a page needs no network. Every name goes through Jinja's
autoescaping: submitted text is shown, never run.
"""

from __future__ import annotations

import functools
import json
import math
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from parlour.envs.registry import game_class
from parlour.evaluation.results import INTERVAL_SENTENCE
from parlour.evaluation.seating import role_of
from parlour.leaderboard.ratings import CATEGORY_TITLES, MIN_EPISODES, MIN_OPPONENTS
from parlour.leaderboard.store import slug
from parlour.leaderboard.tables import Matrix, OverallTable, RatingRow, RatingTable

if TYPE_CHECKING:
    from parlour.leaderboard.api import Leaderboard

HERE = Path(__file__).parent
STATIC = HERE / "static"
#: Episodes listed (and, in a static export, written) per environment, agent and submission page.
RECENT = 20
#: Pixels per character of the 12 px labels in plots, to size the label bands to the names.
CHAR_PX = 7
#: Longest label drawn in a plot (the full name is in the tooltip).
LABEL_CHARS = 24
#: How far apart two headline figures (exploitability, Nash mass) must be before a page calls them a disagreement.
DISAGREEMENT = 1e-6

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: What the Bradley–Terry tables' score rate and their head-to-head matrix count: the one meaning of a result there.
SCORE_RATE_SENTENCE = (
    "Score rate: the share of pairwise results won, each pair of seats held by different agents in an episode counting once, a draw counting half."
)


def _number(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    text = f"{value:.{digits}f}"
    # A tiny negative number rounds to "-0.0", which reads as a sign that is not there.
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def duration(seconds: float | None) -> str:
    """``seconds`` as ``1h02m``, ``3m05s`` or ``42s`` (``?`` when unknown): a demo's ETA, on its page and its terminal."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    seconds = max(0, round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def short_env(env_id: str) -> str:
    """``parlour/KuhnPoker-v0`` as ``KuhnPoker``: the column heading of an environment."""
    return env_id.split("/")[-1].rsplit("-v", 1)[0]


def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["slug"] = slug
    env.filters["num"] = _number
    env.filters["short"] = short_env
    env.filters["duration"] = duration
    env.filters["pct"] = lambda value: "–" if value is None else f"{100 * value:.0f}%"
    env.globals["categories"] = CATEGORY_TITLES
    env.globals["interval_sentence"] = INTERVAL_SENTENCE
    env.globals["score_rate_sentence"] = SCORE_RATE_SENTENCE
    return env


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Axis ticks at round numbers (1, 2, 2.5 or 5 times a power of ten) spanning ``low`` to ``high``."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        low, high = (low - 1.0, low + 1.0) if math.isfinite(low) else (0.0, 1.0)
    raw = (high - low) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(low / step + 1e-9) * step
    last = math.ceil(high / step - 1e-9) * step
    ticks, k = [], 0
    while first + k * step <= last + step * 1e-9:
        ticks.append(round(first + k * step, 10))
        k += 1
    return ticks


def _tick_label(value: float, ticks: list[float]) -> str:
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step < 1 else 0
    if decimals and abs(round(step * 10**decimals) - step * 10**decimals) > 1e-6:
        decimals += 1  # 2.5 steps need one more digit
    text = f"{value:.{decimals}f}"
    return "0" if float(text) == 0 else text


def _label(name: str) -> str:
    return name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "…"


def row_label(row: RatingRow) -> str:
    """How a table row is named in plots: its agent, and in a table rated per role its role (``verifier · judge``)."""
    return f"{row['agent']} · {row['role']}" if row.get("role") else row["agent"]


def rating_plot(table: RatingTable, width: int = 640) -> dict[str, Any]:
    """Geometry of the ratings-with-intervals plot: one row per agent (per agent and role where rated per role), a dot at
    the rating and a bar over the interval; rows in the table's order, so a role's agents stand together."""
    rows = table["rows"]
    label_width = min(LABEL_CHARS, max((len(row_label(row)) for row in rows), default=4)) * CHAR_PX + 16
    row_height, top = 24, 12
    finite = [v for row in rows for v in (row["low"], row["high"]) if math.isfinite(v)]
    ticks = nice_ticks(min(finite, default=0.0), max(finite, default=1.0))
    lo, hi = ticks[0], ticks[-1]
    span = width - label_width - 24

    def x(value: float) -> float:
        """The horizontal pixel of a value, clamped to the axis."""
        value = min(max(value, lo), hi) if math.isfinite(value) else (hi if value > 0 else lo)
        return round(label_width + (value - lo) / (hi - lo) * span, 1)

    axis_y = top + row_height * len(rows) + 4
    return {
        "width": width,
        "height": axis_y + 24,
        "label_x": label_width - 8,
        "axis_y": axis_y,
        "ticks": [{"x": x(t), "label": _tick_label(t, ticks)} for t in ticks],
        "points": [
            {
                "agent": row_label(row),
                "label": _label(row_label(row)),
                "y": top + row_height * k + row_height // 2,
                "x": x(row["rating"]),
                "x_low": x(row["low"]),
                "x_high": x(row["high"]),
            }
            for k, row in enumerate(rows)
        ],
    }


def _colour(share: float) -> str:
    # Red below even, white at even, blue above: readable without a legend. ``share`` is in [0, 1], 0.5 even.
    share = min(max(share, 0.0), 1.0)
    if share < 0.5:
        t = share / 0.5
        return f"rgb(220,{int(80 + 175 * t)},{int(80 + 175 * t)})"
    t = (share - 0.5) / 0.5
    return f"rgb({int(255 - 175 * t)},{int(255 - 135 * t)},255)"


def heat_map(table: RatingTable, cell: int = 48) -> dict[str, Any] | None:
    """Geometry of the head-to-head matrix: the row agent's score rate (Bradley–Terry; a draw counts half) or mean payoff against the column agent.

    The label bands are sized to the longest (shortened) name, so no blank band sits above the cells.
    """
    order = [row["agent"] for row in table["rows"]]
    if len(order) < 2 and table.get("kind") != "team":
        return None
    index = {name: k for k, name in enumerate(table["agents"])}
    win_rate, payoff = table.get("win_rate"), table.get("payoff")
    lows: Matrix | None = None
    highs: Matrix | None = None
    if win_rate:
        values, what = win_rate, "rate"
    elif payoff:
        values, lows, highs, what = payoff, table.get("payoff_low"), table.get("payoff_high"), "payoff"
    else:
        return None
    scale = max((abs(v) for line in values for v in line if v is not None), default=1.0) or 1.0
    longest = min(LABEL_CHARS, max(len(name) for name in order)) * CHAR_PX
    left = longest + 12
    # Column labels are turned 60 degrees: their height is the text's length times sin(60°), plus the text's own height.
    top = int(longest * 0.87 + 16)
    cells = []
    for r, row_agent in enumerate(order):
        for c, col_agent in enumerate(order):
            i, j = index[row_agent], index[col_agent]
            value = values[i][j]
            if value is None or (row_agent == col_agent and what == "rate"):
                fill, text, tip = "#eeeeee", "", "no games"
            elif what == "rate":
                fill, text, tip = _colour(value), f"{100 * value:.0f}", f"score rate {100 * value:.0f}% (a draw counts half)"
            else:
                fill, text = _colour(0.5 + 0.5 * value / scale), f"{value:.2f}"
                interval = f" [{lows[i][j]:.2f}, {highs[i][j]:.2f}]" if lows and highs and lows[i][j] is not None else ""
                tip = f"mean payoff {value:.3f}{interval}"
            cells.append({"x": left + c * cell, "y": top + r * cell, "fill": fill, "text": text, "title": f"{row_agent} vs {col_agent}: {tip}"})
    return {
        # The last column's label leans right by its length times cos(60°): the width leaves room for it.
        "cell": cell,
        "left": left,
        "top": top,
        "width": left + cell * len(order) + longest // 2 + 8,
        "height": top + cell * len(order) + 8,
        "agents": [{"name": name, "label": _label(name)} for name in order],
        "cells": cells,
        "what": "score rate of the row agent against the column agent (%, a draw counting half)"
        if what == "rate"
        else "mean payoff of the row agent with the column agent",
    }


def headline_notes(table: RatingTable) -> list[str]:
    """Sentences for a poker table whose headline figures point different ways, saying why they may.

    Exploitability heads a poker table: exact, against a best response to the agent's whole policy,
    whatever the field. The rank (expected payoff) counts what each agent won from the agents that
    happened to play it, and Nash mass is the equilibrium of the meta-game of the ranked agents whose
    every pair was measured (:func:`parlour.leaderboard.ratings.meta_game`). When the agent ranked
    first, or the one holding the most mass, is more exploitable than another, the page says so beside
    the table instead of showing headlines that contradict each other in silence.
    """
    if not table.get("exploitability"):
        return []
    notes = []
    # Each row with the two figures compared, where it has both.
    ranked = [(rank, risk, row) for row in table["rows"] if (rank := row.get("rank")) is not None and (risk := row.get("exploitability")) is not None]
    if len(ranked) > 1:
        _, leader_risk, leader = min(ranked, key=lambda item: item[0])
        _, safest_risk, safest = min(ranked, key=lambda item: (item[1], item[0]))
        if safest_risk < leader_risk - DISAGREEMENT:
            notes.append(
                f"Rank and exploitability disagree here: {leader['agent']} ranks first by {table['value']} ({leader['rating']:.3f}), "
                f"though {safest['agent']} is less exploitable ({safest_risk:.3f} against {leader_risk:.3f} "
                "chips a hand). The rank counts what each agent won from the agents that happened to play it; exploitability is what "
                "a best responder to its whole policy would win from it."
            )
    both = [
        (mass, risk, row) for row in table["rows"] if (mass := row.get("nash_mass")) is not None and (risk := row.get("exploitability")) is not None
    ]
    if len(both) > 1:
        top_mass, top_risk, top = max(both, key=lambda item: (item[0], -item[1]))
        safest_mass, safest_risk, safest = min(both, key=lambda item: (item[1], -item[0]))
        if safest_risk < top_risk - DISAGREEMENT and safest_mass < top_mass - DISAGREEMENT:
            notes.append(
                f"Nash mass and exploitability disagree here: {top['agent']} holds {top_mass:.3f} of the Nash mass and "
                f"{safest['agent']} {safest_mass:.3f}, though {safest['agent']} is less exploitable "
                f"({safest_risk:.3f} against {top_risk:.3f} chips a hand). Nash mass is the equilibrium of "
                "the meta-game among the ranked agents, on the payoffs measured between them, so it knows only the strategies in this "
                "field and carries their sampling noise; exploitability is exact, against a best response to the agent's whole policy."
            )
    return notes


def provisional_entries(tables: dict[str, RatingTable]) -> list[dict[str, Any]]:
    """Every provisional row of ``tables`` (env id to rating table), by agent then environment, with what it still needs."""
    entries = [dict(row, env_id=env_id) for env_id, table in tables.items() for row in table["rows"] if row.get("provisional")]
    return sorted(entries, key=lambda entry: (entry["agent"], entry["env_id"], entry.get("role") or ""))


def why_not_overall(info: dict[str, Any], overall: OverallTable) -> str | None:
    """Why an agent (``Leaderboard.agent``'s ``info``) has no overall score, in words; None when it has one."""
    if info["overall"] is not None:
        return None
    rows = info["environments"]
    if not rows:
        return "it has no counted episodes: only challenges and live matches count"
    ranked = sorted(env_id for env_id, row in rows.items() if not row.get("provisional"))
    if not ranked:
        return "it is provisional in every environment it played, and a provisional entry counts as not played; what each still needs is below"
    reasons = "; ".join(f"{short_env(env_id)}: {overall['reasons'].get(env_id, 'not normalised')}" for env_id in ranked)
    return f"the environments where it is ranked could not be normalised ({reasons})"


#: Categories of games that run players' code: a page view never replays them, since replay would judge the code
#: again in a sandbox (seconds of CPU per anonymous request); their pages are drawn from the record alone.
RECORD_ONLY_CATEGORIES = frozenset({"coding"})


def episode_view(record: dict[str, Any]) -> dict[str, Any]:
    """An episode turn by turn as each player saw it, from its record replayed: what the acting player was shown, its action and the result.

    Also each player's last messages and the full state (the game's own
    rendering, which shows what was hidden) after the end. A game that runs
    code (:data:`RECORD_ONLY_CATEGORIES`) is not replayed: see :func:`recorded_view`.
    """
    from parlour.envs.core.match import Match
    from parlour.envs.registry import game_class

    game_cls = game_class(record["env_id"])
    if game_cls.category in RECORD_ONLY_CATEGORIES:
        return recorded_view(record)
    match = Match(game_cls, record.get("options") or {})
    match.reset(record["seed"])
    agents = record.get("agents") or {}
    turns = []
    for number, step in enumerate(record["steps"], 1):
        player = step["player"]
        seen = _ANSI.sub("", match.observation_text(player))
        phase = phase_of(match.game)
        match.submit(player, step["action"])
        action = step["action"] if isinstance(step["action"], str) else str(step["action"])
        turns.append(
            {
                "number": number,
                "player": player,
                "agent": agents.get(player, ""),
                "seen": seen,
                "phase": phase,
                "action": action,
                "error": step.get("error"),
                "rewards": step.get("rewards") or {},
            }
        )
    finals = {player: _ANSI.sub("", match.observation_text(player)) for player in match.players}
    return {
        "turns": turns,
        "finals": finals,
        "state": _ANSI.sub("", match.render()),
        "players": list(match.players),
        "agents": agents,
        "returns": record.get("returns") or {},
        "outcome": record.get("outcome") or {},
    }


def phase_of(game: Any) -> str | None:
    """The part of the game a turn is played in, for games of days and nights (Mafia: ``phase``, ``day`` and ``night``):
    ``"Night 2"`` or ``"Day 1"``; None for any other game. The episode viewer draws a separator where it changes."""
    phase, day, night = (getattr(game, name, None) for name in ("phase", "day", "night"))
    if not isinstance(phase, str) or not isinstance(day, int) or not isinstance(night, int):
        return None
    return f"Night {night}" if phase == "night" else f"Day {day}"


def dealt_roles(record: dict[str, Any]) -> dict[str, str]:
    """Each seat's hidden role as the outcome reveals it (Mafia's detective, doctor, ...: ``details["roles"]``), or none."""
    roles = ((record.get("outcome") or {}).get("details") or {}).get("roles")
    return {str(player): str(role) for player, role in roles.items()} if isinstance(roles, dict) else {}


@functools.cache
def playable() -> dict[str, list[str]]:
    """Each environment a live match can be played on, with its built-in agents (none for one seat: no opponent).

    Privileged oracles are listed too, since telling them apart builds every agent (seconds); the server refuses one
    as an opponent, saying why."""
    from parlour.baselines import scripted_names
    from parlour.envs.core.match import make_game
    from parlour.envs.registry import list_envs
    from parlour.leaderboard.verify import unrated_reason

    envs = {}
    for env_id in list_envs():
        game_cls = game_class(env_id)
        if unrated_reason(game_cls) is None:
            envs[env_id] = [] if len(make_game(game_cls, {}).players) == 1 else scripted_names(env_id)
    return envs


def recorded_view(record: dict[str, Any]) -> dict[str, Any]:
    """:func:`episode_view` drawn from the record alone, running nothing: each turn's action with the tool calls made
    before it and their recorded answers, and as the final state the outcome and its details (the verdict)."""
    agents = record.get("agents") or {}
    turns = []
    for number, step in enumerate(record["steps"], 1):
        lines = []
        for call in step.get("calls") or []:
            lines.append(f"called {call.get('name')} with {json.dumps(call.get('arguments'), ensure_ascii=False)[:4000]}")
            if "output" in call:
                lines.append(f"answer:\n{call['output']}")
        seen = "\n".join(lines) or "(no tool calls)"
        action = step["action"] if isinstance(step["action"], str) else str(step["action"])
        turns.append(
            {
                "number": number,
                "player": step["player"],
                "agent": agents.get(step["player"], ""),
                "seen": "(drawn from the record: this game runs code, which a page view never does)\n" + seen,
                "action": action,
                "error": step.get("error"),
                "rewards": step.get("rewards") or {},
            }
        )
    outcome = record.get("outcome") or {}
    state = "\n".join([outcome.get("reason") or "", json.dumps(outcome.get("details") or {}, indent=1, ensure_ascii=False)])
    return {
        "turns": turns,
        "finals": {},
        "state": _ANSI.sub("", state),
        "players": list(record.get("players") or agents),
        "agents": agents,
        "returns": record.get("returns") or {},
        "outcome": outcome,
    }


class Site:
    """Renders the leaderboard pages of ``board``; ``root`` in each page is the relative path back to the site root."""

    def __init__(self, board: Leaderboard, progress: Callable[[], dict[str, Any]] | None = None, served: bool = False):
        self.board = board
        #: What a demo filling the board has played (``parlour demo``), shown on the index; None for any other board.
        self.progress = progress
        #: Whether the pages are served (live matches to watch and play are linked) rather than exported as files.
        self.served = served
        self.templates = _environment()

    def _render(self, template: str, **values: Any) -> str:
        return self.templates.get_template(template).render(**values)

    def env_ids_by_slug(self) -> dict[str, str]:
        """Stored environment ids by their page slug."""
        return {slug(env_id): env_id for env_id in self.board.store.env_ids()}

    def index(self) -> str:
        """The overall page."""
        overall = self.board.overall()
        environments = []
        tables = {}
        for env_id in self.board.store.env_ids():
            counted = self.board.store.episode_count(env_id, counted=True)
            table = self.board.ratings(env_id) if counted else None
            if table is not None:
                tables[env_id] = table
            environments.append(
                {
                    "env_id": env_id,
                    "category": self.board.env_info(env_id)["category"],
                    "table": table,
                    "self_reported": self.board.store.episode_count(env_id, counted=False),
                }
            )
        return self._render(
            "index.html",
            root="",
            overall=overall,
            environments=environments,
            provisional=provisional_entries(tables),
            min_episodes=MIN_EPISODES,
            min_opponents=MIN_OPPONENTS,
            title="parlour leaderboard",
            demo=self.progress() if self.progress is not None else None,
            served=self.served,
        )

    def environment(self, env_id: str) -> str:
        """The page of one environment."""
        info = self.board.env_info(env_id)
        table = self.board.ratings(env_id)
        reported = self.board.ratings(env_id, counted=False) if self.board.store.episode_count(env_id, counted=False) else None
        return self._render(
            "env.html",
            root="../",
            info=info,
            env_id=env_id,
            table=table,
            plot=rating_plot(table) if table["rows"] else None,
            heat=heat_map(table),
            reported=reported,
            episodes=self.board.store.episodes(env_id=env_id, limit=RECENT),
            title=env_id,
            notes=headline_notes(table),
        )

    def agent(self, name: str) -> str | None:
        """The page of one agent, or None if it is unknown."""
        info = self.board.agent(name)
        if info is None:
            return None
        return self._render("agent.html", root="../", info=info, why_not_overall=why_not_overall(info, self.board.overall()), title=name)

    def submitter(self, name: str) -> str | None:
        """The page of one submitter, or None if unknown."""
        info = self.board.store.submitter(name)
        if info is None:
            return None
        return self._render("submitter.html", root="../", info=info, quota=self.board.quota, title=f"submitter {name}")

    def submission(self, submission_id: int) -> str | None:
        """The page of one submission, or None if unknown."""
        info = self.board.store.submission(submission_id)
        if info is None:
            return None
        episodes = self.board.store.episodes(submission=submission_id, limit=RECENT)
        return self._render("submission.html", root="../", info=info, episodes=episodes, title=f"submission {submission_id}")

    def live_index(self, matches: list[dict[str, Any]]) -> str:
        """The live matches a spectator can watch (``LiveHub.watchable``), and the way to play one."""
        return self._render("live.html", root="", matches=matches, title="live matches")

    def watch(self, match: dict[str, Any]) -> str:
        """One live match, each turn shown as it is played (the page's script follows its server-sent events)."""
        return self._render("watch.html", root="../", match=match, title=f"live match of {match['env_id']}")

    def play(self, episodes: int) -> str:
        """Play a live match of ``episodes`` episodes in the browser: each environment a live match can be played on,
        with the built-in opponents it offers (see :func:`playable`)."""
        return self._render("play.html", root="", playable=json.dumps(playable()), episodes=episodes, title="play a live match")

    def episode(self, episode_id: int) -> str | None:
        """The viewer of one stored episode, or None if unknown."""
        stored = self.board.store.episode(episode_id)
        if stored is None:
            return None
        view = episode_view(stored["record"])
        # The role each seat played (a fixed seat's role, else its team where the outcome names teams), as the ratings count it.
        fixed = game_class(stored["record"]["env_id"]).fixed_roles
        roles = {player: role_of(player, stored["record"].get("outcome"), fixed) for player in view["players"]}
        return self._render(
            "episode.html", root="../", stored=stored, view=view, roles=roles, dealt=dealt_roles(stored["record"]), title=f"episode {episode_id}"
        )


def export_site(board: Leaderboard, out: str | Path, progress: Callable[[], dict[str, Any]] | None = None) -> list[Path]:
    """Write every page of ``board`` and the static files under ``out``; returns the pages written.

    Episode pages are written for the episodes the other pages link to (the recent ones of each page);
    ``progress`` (a demo's) puts what the demo played, and why so many episodes, on the index.
    """
    out = Path(out)
    site = Site(board, progress)
    store = board.store
    pages: dict[Path, str] = {out / "index.html": site.index()}
    linked: set[int] = set()
    for env_slug, env_id in site.env_ids_by_slug().items():
        pages[out / "env" / f"{env_slug}.html"] = site.environment(env_id)
        linked.update(item["id"] for item in store.episodes(env_id=env_id, limit=RECENT))
    for name, agent_slug in store.agent_slugs().items():
        page = site.agent(name)
        if page is not None:
            pages[out / "agent" / f"{agent_slug}.html"] = page
            linked.update(item["id"] for item in store.episodes(agent=name, limit=RECENT))
    for name in store.submitter_names():
        info = store.submitter(name)
        assert info is not None
        pages[out / "submitter" / f"{info['slug']}.html"] = site.submitter(name) or ""
    for submission_id in store.submission_ids():
        pages[out / "submission" / f"{submission_id}.html"] = site.submission(submission_id) or ""
        linked.update(item["id"] for item in store.episodes(submission=submission_id, limit=RECENT))
    for episode_id in sorted(linked):
        pages[out / "episode" / f"{episode_id}.html"] = site.episode(episode_id) or ""
    for path, html in pages.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
    shutil.copytree(STATIC, out / "static", dirs_exist_ok=True)
    return sorted(pages)
