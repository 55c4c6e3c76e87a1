"""The leaderboard's HTML pages, served live or exported as a static site.

Pages (the same paths in both cases, linked relatively, so an exported site
works from any directory or file server):

* ``index.html``: the overall table;
* ``env/<slug>.html``: one environment: rating table, a plot of the ratings
  with their intervals, and the head-to-head win-rate heat map;
* ``agent/<slug>.html``: one agent across environments.

Plots are inline SVG and the only assets are ``static/leaderboard.css`` and
``static/leaderboard.js`` (table sorting), so a page needs no network. Every
name goes through Jinja's autoescaping: submitted text is shown, never run.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from parlour.leaderboard.store import slug

if TYPE_CHECKING:
    from parlour.leaderboard.api import Leaderboard

HERE = Path(__file__).parent
STATIC = HERE / "static"


def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["slug"] = slug
    env.filters["num"] = lambda value, digits=1: "–" if value is None else f"{value:.{digits}f}"
    return env


def rating_plot(table: dict[str, Any], width: int = 640) -> dict[str, Any]:
    """Geometry of the ratings-with-intervals plot: one row per agent, a dot at the rating and a bar over the interval."""
    rows = table["rows"]
    label_width, row_height, top = 180, 24, 24
    lows = [row["low"] for row in rows] or [0.0]
    highs = [row["high"] for row in rows] or [1.0]
    lo, hi = min(lows), max(highs)
    if hi - lo < 1e-9:
        lo, hi = lo - 1.0, hi + 1.0
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad
    span = width - label_width - 20

    def x(value: float) -> float:
        """The horizontal pixel of a rating."""
        return round(label_width + (value - lo) / (hi - lo) * span, 1)

    ticks = [lo + (hi - lo) * k / 4 for k in range(5)]
    return {
        "width": width,
        "height": top + row_height * len(rows) + 30,
        "label_x": label_width - 8,
        "axis_y": top + row_height * len(rows) + 4,
        "ticks": [{"x": x(t), "label": f"{t:.0f}" if abs(hi - lo) > 20 else f"{t:.2f}"} for t in ticks],
        "points": [
            {"agent": row["agent"], "y": top + row_height * k + row_height // 2, "x": x(row["rating"]),
             "x_low": x(row["low"]), "x_high": x(row["high"])}
            for k, row in enumerate(rows)
        ],
    }


def _colour(rate: float) -> str:
    # Red for losing, white for even, blue for winning: readable without a legend.
    if rate < 0.5:
        t = rate / 0.5
        return f"rgb(220,{int(80 + 175 * t)},{int(80 + 175 * t)})"
    t = (rate - 0.5) / 0.5
    return f"rgb({int(255 - 175 * t)},{int(255 - 135 * t)},255)"


def heat_map(table: dict[str, Any], cell: int = 44) -> dict[str, Any] | None:
    """Geometry of the head-to-head heat map: row agent's win rate against column agent; None for single-agent tables."""
    if not table.get("win_rate"):
        return None
    order = [row["agent"] for row in table["rows"]]
    index = {name: k for k, name in enumerate(table["agents"])}
    label = 180
    cells = []
    for r, row_agent in enumerate(order):
        for c, col_agent in enumerate(order):
            rate = table["win_rate"][index[row_agent]][index[col_agent]]
            cells.append({
                "x": label + c * cell, "y": label + r * cell, "rate": rate, "row": row_agent, "col": col_agent,
                "fill": "#eeeeee" if rate is None else _colour(rate), "text": "" if rate is None else f"{100 * rate:.0f}",
            })
    return {"cell": cell, "label": label, "size": label + cell * len(order) + 10, "agents": order, "cells": cells}


class Site:
    """Renders the leaderboard pages of ``board``; ``root`` in each page is the relative path back to the site root."""

    def __init__(self, board: Leaderboard):
        self.board = board
        self.templates = _environment()

    def env_ids_by_slug(self) -> dict[str, str]:
        """Stored environment ids by their page slug."""
        return {slug(env_id): env_id for env_id in self.board.store.env_ids()}

    def index(self) -> str:
        """The overall page."""
        overall = self.board.overall()
        environments = [(env_id, self.board.ratings(env_id)) for env_id in self.board.store.env_ids()]
        return self.templates.get_template("index.html").render(
            root="", overall=overall, environments=environments, title="parlour leaderboard"
        )

    def environment(self, env_id: str) -> str:
        """The page of one environment."""
        table = self.board.ratings(env_id)
        return self.templates.get_template("env.html").render(
            root="../", env_id=env_id, table=table, plot=rating_plot(table), heat=heat_map(table), title=env_id
        )

    def agent(self, name: str) -> str | None:
        """The page of one agent, or None if it is unknown."""
        info = self.board.agent(name)
        if info is None:
            return None
        return self.templates.get_template("agent.html").render(root="../", info=info, title=name)


def export_site(board: Leaderboard, out: Path) -> list[Path]:
    """Write every page of ``board`` and the static files under ``out``; returns the pages written."""
    site = Site(board)
    pages: dict[Path, str] = {out / "index.html": site.index()}
    for env_slug, env_id in site.env_ids_by_slug().items():
        pages[out / "env" / f"{env_slug}.html"] = site.environment(env_id)
    for name, agent_slug in board.store.agent_slugs().items():
        page = site.agent(name)
        if page is not None:
            pages[out / "agent" / f"{agent_slug}.html"] = page
    for path, html in pages.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
    shutil.copytree(STATIC, out / "static", dirs_exist_ok=True)
    return sorted(pages)
