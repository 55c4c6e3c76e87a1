"""Learning curves from a trainer's ``eval.csv``: PNG plots with matplotlib (the ``train`` extra).

:func:`plot_learning` draws one panel per metric the CSV has, one line per
evaluation opponent (per role and opponent when the CSV's ``role`` column names roles): the win rate with its Wilson 95% band (``win_low`` ..
``win_high``), the non-losing rate, the mean return, the invalid-move rate, the policy entropy,
and the exploitability where it was measured (rows whose opponent is
``best response``). It writes the panels twice:
against updates (``learning.png``) and against wall time
(``learning_time.png``).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

#: (column, panel title) of the panels, in order; a column absent from the CSV or empty everywhere has no panel.
PANELS = (
    ("win_rate", "win rate (Wilson 95%)"),
    ("non_loss_rate", "non-losing rate"),
    ("mean_return", "mean return"),
    ("invalid_rate", "invalid-move rate"),
    ("entropy", "policy entropy (nats)"),
    ("response_tokens", "response length (tokens)"),
    ("exploitability", "exploitability (chips per hand)"),
)
#: (x column, axis label, file name) of the two figures.
AXES = (("update", "updates", "learning.png"), ("wall_s", "wall time (s)", "learning_time.png"))


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a CSV with numbers as floats (empty cells as NaN) and text as text."""
    rows = []
    with Path(path).open(newline="", encoding="utf-8") as handle:
        for raw in csv.DictReader(handle):
            row: dict[str, Any] = {}
            for key, value in raw.items():
                try:
                    row[key] = float(value) if value != "" else math.nan
                except ValueError:
                    row[key] = value
            rows.append(row)
    return rows


def _has(rows: list[dict[str, Any]], column: str) -> bool:
    return any(isinstance(row.get(column), float) and not math.isnan(row[column]) for row in rows)


def _line(row: dict[str, Any]) -> tuple[str, str]:
    """The (role, opponent) a row's figures belong to; the role is empty where the CSV has none (read as NaN)."""
    role = row.get("role")
    return (role if isinstance(role, str) else "", str(row["opponent"]))


def plot_learning(eval_csv: str | Path, out: str | Path, title: str = "") -> list[Path]:
    """Write ``learning.png`` and ``learning_time.png`` into ``out`` from ``eval_csv``; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_rows(eval_csv)
    panels = [(column, label) for column, label in PANELS if _has(rows, column)]
    lines_of = list(dict.fromkeys(_line(row) for row in rows))
    written = []
    for x_column, x_label, name in AXES:
        columns = min(3, len(panels))
        lines = math.ceil(len(panels) / columns)
        figure, axes = plt.subplots(lines, columns, figsize=(3.6 * columns, 2.8 * lines), squeeze=False)
        for axis in axes.flat[len(panels) :]:
            axis.set_visible(False)
        for axis, (column, label) in zip(axes.flat, panels):
            for role, opponent in lines_of:
                mine = [row for row in rows if _line(row) == (role, opponent) and not math.isnan(row.get(column, math.nan))]
                if not mine:
                    continue
                xs = [row[x_column] for row in mine]
                legend = f"{role} vs {opponent}" if role else f"vs {opponent}"
                line = axis.plot(xs, [row[column] for row in mine], marker=".", label=legend)[0]
                if column == "win_rate" and _has(mine, "win_low"):
                    axis.fill_between(xs, [row["win_low"] for row in mine], [row["win_high"] for row in mine], color=line.get_color(), alpha=0.2)
            axis.set_title(label, fontsize=9)
            axis.set_xlabel(x_label, fontsize=8)
            axis.tick_params(labelsize=7)
            if column in ("win_rate", "non_loss_rate", "invalid_rate"):
                axis.set_ylim(-0.02, 1.02)
            axis.grid(alpha=0.3)
        axes[0][0].legend(fontsize=7)
        if title:
            figure.suptitle(title, fontsize=10)
        figure.tight_layout()
        path = Path(out) / name
        figure.savefig(path, dpi=80)
        plt.close(figure)
        written.append(path)
    return written
