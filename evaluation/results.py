"""Evaluation results and their *bundle*: a directory holding every episode record and a summary.

A bundle is what :func:`parlour.evaluate` writes and what the leaderboard accepts:

* ``episodes.jsonl``: one core record per line (see :mod:`parlour.envs.core.record`),
  each with ``"agents": {seat: agent_name}`` and ``"episode"``, its index in the run;
* ``summary.json``: the run's metadata (``env_id``, ``env_version``, ``agents``,
  ``seed``, ``episodes``, ``env_kwargs``, ``rotate_seats``, ``parlour_version``,
  ``lineup``, the agent number in each seat before rotation when it is not the
  default one (a fixed seating ``{seat: agent}``; null otherwise), and
  ``challenge``, ``{"id", "nonce"}`` of the server-issued challenge the run
  was played for, or null),
  the per-agent ``stats`` (decisions, time spent in the agent, and the agent's own
  accounting such as tokens), and the ``summary`` computed from the records (with τ-bench's pass^k beside the
  mean for games whose episodes are trials of tasks: see :func:`task_trials`).
  A reader must recompute anything it relies on from the records: the summary is
  a convenience, never evidence.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

if TYPE_CHECKING:
    from parlour.envs.core.record import Record

EPISODES_FILE = "episodes.jsonl"
SUMMARY_FILE = "summary.json"
#: A metadata key that identifies a run (see :data:`RUN_KEYS`).
RunKey = Literal["env_id", "env_version", "agents", "seed", "env_kwargs", "rotate_seats", "lineup", "challenge"]
#: Metadata keys that identify a run: a bundle resumes only a run that agrees on all of them.
RUN_KEYS: tuple[RunKey, ...] = ("env_id", "env_version", "agents", "seed", "env_kwargs", "rotate_seats", "lineup", "challenge")
#: The one interval method, in the one sentence every leaderboard page and the CLI table give.
INTERVAL_SENTENCE = (
    "Intervals are 95%: a mean of returns gets Wilson's score interval on the range the returns can take (those seen, "
    "and -1 to 1, the loss and win every game can pay), with the standard error of the episodes (a bootstrap over episodes "
    "for a score that averages several means), so it never leaves that range and never shrinks to a point; "
    "Bradley–Terry ratings, on the unbounded Elo scale, take the wider of a bootstrap over episodes and a parametric one, "
    "centred on the rating so that it always lies inside."
)
#: What win, draw and loss mean in every table that shows them (see :func:`result_of`).
WIN_DRAW_LOSS_SENTENCE = (
    "Win/draw/loss: a win is an episode the agent's seat is among the winners of (a shared or team win included), "
    "a draw one of several seats that nobody won, a loss any other."
)


class NegotiationMetrics(TypedDict):
    """One seat's view of a negotiation's outcome analysis (:func:`negotiation_metrics`)."""

    agreement: bool
    utility: float | None
    social_welfare: float | None
    pareto_optimal: bool | None
    pareto_distance: float | None
    nash_distance: float | None


class NegotiationBlock(TypedDict):
    """The negotiation figures of a summary block: agreement rate with its Wilson interval, Pareto-optimal rate, and
    mean utility, welfare and distances (None where no episode reported them)."""

    episodes: int
    agreement_rate: float
    agreement_rate_ci95: list[float]
    mean_utility: float | None
    mean_social_welfare: float | None
    pareto_optimal_rate: float | None
    mean_pareto_distance: float | None
    mean_nash_distance: float | None


class SeatBlock(TypedDict):
    """Summary statistics of an agent's seat-episodes (in one seat, or over all its seats): episodes, mean reward and
    its 95% interval (None below two episodes), invalid-action rate (None when never asked to act); win, draw and
    loss rates with their intervals where the game names winners; ``negotiation`` for negotiations."""

    episodes: int
    mean_reward: float
    ci95: list[float] | None
    invalid_action_rate: float | None
    win_rate: NotRequired[float]
    win_rate_ci95: NotRequired[list[float]]
    draw_rate: NotRequired[float]
    draw_rate_ci95: NotRequired[list[float]]
    loss_rate: NotRequired[float]
    loss_rate_ci95: NotRequired[list[float]]
    negotiation: NotRequired[NegotiationBlock]


class AgentBlock(SeatBlock):
    """An agent's summary (:meth:`Results.summary`): its :class:`SeatBlock` over all seats and one per seat (``seats``);
    :class:`Results` adds the mean ``latency_s`` of a decision, token counts where the agent reports them, and
    ``pass_hat_k`` (k as text to τ-bench's pass^k) for games whose episodes are trials of tasks."""

    seats: dict[str, SeatBlock]
    latency_s: NotRequired[float | None]
    prompt_tokens: NotRequired[int]
    completion_tokens: NotRequired[int]
    pass_hat_k: NotRequired[dict[str, float | None]]


#: Per agent name, its :class:`AgentBlock`: what :func:`summarize` and :meth:`Results.summary` give.
Summary = dict[str, AgentBlock]


class Metadata(TypedDict):
    """A run's identity and size (:meth:`Results.metadata`), as written at the top of ``summary.json``."""

    env_id: str
    env_version: int
    agents: list[str]
    seed: int
    episodes: int
    env_kwargs: dict[str, Any]
    rotate_seats: bool
    parlour_version: str
    lineup: list[int] | None
    challenge: dict[str, str] | None


class Failures(TypedDict):
    """The turns agents could not decide (:meth:`Results.failures`): the affected episodes' indices, the number of
    such turns, and the turns per reason."""

    episodes: list[int]
    turns: int
    reasons: dict[str, int]


def outcome_of(record: Record) -> Mapping[str, Any]:
    """A record's outcome, empty for an episode that has none (unfinished); a record read from a bundle may be of any age."""
    return record.get("outcome") or {}


def read_records(path: Path) -> list[Record]:
    """The records of an ``episodes.jsonl``; a final line cut short by an interruption is dropped."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").split("\n")
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as error:
            if number == len(lines):
                break  # the last line was being written when the run stopped
            raise ValueError(f"{path}:{number} is not a JSON record: {error}") from None
    return records


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` as JSON to ``path`` atomically, so an interruption never leaves half a file."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def merge_stats(total: dict[str, Any], more: dict[str, Any] | None) -> dict[str, Any]:
    """Add the numeric entries of ``more`` into ``total`` (accounting of several agent copies or workers)."""
    for key, value in (more or {}).items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            total[key] = total.get(key, 0) + value
    return total


def score_range(values: list[float]) -> tuple[float, float]:
    """The range a mean of ``values`` is bounded by: the values seen, and -1 to 1 (every game's loss and win, its forfeit's -1).

    No record states the returns a game can pay; the values seen are known to be possible, and so are a
    loss and a win, so an interval inside this range stays inside the score's, and the range is never a point.
    """
    return min([-1.0, *values]), max([1.0, *values])


def bounded_interval(mean: float, se: float, trials: float, bounds: tuple[float, float], critical: float) -> list[float]:
    """Wilson's score interval for a ``mean`` of values in ``bounds`` with standard error ``se``: inside ``bounds``, never a point.

    The mean is mapped onto [0, 1] and weighed as ``n_eff = p (1 - p) / se**2``
    Bernoulli trials, as many as would make a rate that precise; where that
    says nothing (``se`` is 0, or the mean sits at a bound) it weighs ``trials``.
    """
    low, high = bounds
    width = high - low
    p = min(1.0, max(0.0, (mean - low) / width))
    spread = (se / width) ** 2
    weight = p * (1 - p) / spread if spread > 0.0 and 0.0 < p < 1.0 else trials
    low_p, high_p = _score_interval(p, max(weight, 1e-9), critical)
    return [max(low, low + width * low_p), min(high, low + width * high_p)]


def mean_ci(values: list[float], bounds: tuple[float, float] | None = None, confidence: float = 0.95) -> tuple[float, list[float] | None]:
    """The mean of ``values`` and its confidence interval (``None`` below two values).

    Without ``bounds``, the Student-t interval. With ``bounds`` (see
    :func:`score_range`), :func:`bounded_interval` with the sample's standard
    error and the Student-t critical value with ``n - 1`` degrees of freedom:
    Wilson's interval where the values are all at the bounds, so a sample of
    all wins still has a width, reaching down from the top of the range; near
    the t interval where they are spread inside it, and near nominal coverage
    either way, small samples included, where the t interval is too short for
    skewed data and passes the bounds. Values all equal weigh as ``n`` trials.
    """
    n = len(values)
    mean = math.fsum(values) / n
    if n < 2:
        return mean, None
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    critical = _t_quantile(1 - (1 - confidence) / 2, n - 1)
    if bounds is None:
        half = critical * math.sqrt(variance / n)
        return mean, [mean - half, mean + half]
    return mean, bounded_interval(mean, math.sqrt(variance / n), n, bounds, critical)


def wilson_interval(successes: float, trials: int, confidence: float = 0.95) -> list[float]:
    """Wilson's score interval for a rate of ``successes`` in ``trials``: inside [0, 1], never empty or a point."""
    return list(_score_interval(successes / trials, trials, NormalDist().inv_cdf(1 - (1 - confidence) / 2)))


def _score_interval(p: float, trials: float, critical: float) -> tuple[float, float]:
    """The rates ``q`` with ``(p - q)**2 <= critical**2 * q * (1 - q) / trials``: Wilson's interval around ``p``."""
    shrink = 1 + critical**2 / trials
    center = (p + critical**2 / (2 * trials)) / shrink
    half = critical / shrink * math.sqrt(p * (1 - p) / trials + critical**2 / (4 * trials**2))
    # At p = 0 or 1 one end is exactly that bound; rounding must not move it inside.
    return (0.0 if p == 0.0 else max(0.0, center - half)), (1.0 if p == 1.0 else min(1.0, center + half))


def _t_quantile(probability: float, df: int) -> float:
    """The ``probability`` quantile (at least 0.5) of Student's t with ``df`` degrees of freedom, without scipy.

    Below 100 degrees of freedom, bisection on the exact central probability
    (Abramowitz and Stegun 26.7.3 and 26.7.4, a finite series for whole
    ``df``); from 100 on, the Cornish-Fisher expansion (26.7.5), whose error is
    below 1e-9 there.
    """
    z = NormalDist().inv_cdf(probability)
    if df >= 100:
        terms = (
            (z**3 + z) / 4,
            (5 * z**5 + 16 * z**3 + 3 * z) / 96,
            (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
            (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160,
        )
        return z + sum(term / df ** (power + 1) for power, term in enumerate(terms))
    target = 2 * probability - 1
    lowest, highest = 0.0, math.pi / 2
    for _ in range(100):
        theta = (lowest + highest) / 2
        if _t_central(theta, df) < target:
            lowest = theta
        else:
            highest = theta
    return math.tan((lowest + highest) / 2) * math.sqrt(df)


def _t_central(theta: float, df: int) -> float:
    """P(|T| <= tan(theta) * sqrt(df)) for Student's t with a whole number ``df`` of degrees of freedom."""
    sine, cosine = math.sin(theta), math.cos(theta)
    if df % 2 == 0:
        term = total = 1.0
        for j in range(1, df // 2):
            term *= cosine**2 * (2 * j - 1) / (2 * j)
            total += term
        return sine * total
    term = cosine
    total = 0.0 if df == 1 else cosine
    for j in range(1, (df - 1) // 2):
        term *= cosine**2 * (2 * j) / (2 * j + 1)
        total += term
    return 2 / math.pi * (theta + sine * total)


def _block(samples: list[dict[str, Any]], with_winner: bool, bounds: tuple[float, float]) -> SeatBlock:
    """Summary statistics of one agent's seat-episodes; ``bounds`` is the range the rewards lie in."""
    mean, ci = mean_ci([s["reward"] for s in samples], bounds)
    actions = sum(s["actions"] for s in samples)
    block: SeatBlock = {
        "episodes": len(samples),
        "mean_reward": mean,
        "ci95": ci,
        "invalid_action_rate": sum(s["invalid"] for s in samples) / actions if actions else None,
    }
    if with_winner:
        wins, draws, losses = (sum(s["result"] == result for s in samples) for result in ("win", "draw", "loss"))
        block["win_rate"], block["win_rate_ci95"] = wins / len(samples), wilson_interval(wins, len(samples))
        block["draw_rate"], block["draw_rate_ci95"] = draws / len(samples), wilson_interval(draws, len(samples))
        block["loss_rate"], block["loss_rate_ci95"] = losses / len(samples), wilson_interval(losses, len(samples))
    deals = [s["negotiation"] for s in samples if s.get("negotiation")]
    if deals:
        block["negotiation"] = _negotiation_block(deals)
    return block


#: The per-seat entries a negotiation's outcome analysis gives (see :func:`negotiation_metrics`), in table order.
NEGOTIATION_METRICS = ("agreement", "utility", "social_welfare", "pareto_optimal", "pareto_distance", "nash_distance")


def negotiation_metrics(record: Record, seat: str) -> NegotiationMetrics | None:
    """``seat``'s view of a negotiation's outcome analysis (:func:`parlour.envs.negotiation.analysis.negotiation_report`).

    The keys are :data:`NEGOTIATION_METRICS`: whether a deal was made, the
    seat's utility, the social welfare, whether the result was Pareto optimal
    and its normalised distances to the Pareto frontier and to the Nash
    bargaining solution. ``None`` when the record's outcome holds no such analysis.
    """
    details = outcome_of(record).get("details") or {}
    if "agreement" not in details or "pareto_distance" not in details:
        return None
    return {
        "agreement": bool(details["agreement"]),
        "utility": (details.get("utilities") or {}).get(seat),
        "social_welfare": details.get("social_welfare"),
        "pareto_optimal": details.get("pareto_optimal"),
        "pareto_distance": details.get("pareto_distance"),
        "nash_distance": details.get("nash_distance"),
    }


def _negotiation_block(deals: list[NegotiationMetrics]) -> NegotiationBlock:
    """Agreement rate (Wilson 95% CI), Pareto-optimal rate and mean utility, welfare and distances over ``deals``."""

    def mean(key: Literal["utility", "social_welfare", "pareto_distance", "nash_distance"]) -> float | None:
        values = [float(value) for deal in deals if (value := deal[key]) is not None]
        return math.fsum(values) / len(values) if values else None

    agreed = sum(deal["agreement"] for deal in deals)
    optimal = [value for deal in deals if (value := deal["pareto_optimal"]) is not None]
    return {
        "episodes": len(deals),
        "agreement_rate": agreed / len(deals),
        "agreement_rate_ci95": wilson_interval(agreed, len(deals)),
        "mean_utility": mean("utility"),
        "mean_social_welfare": mean("social_welfare"),
        "pareto_optimal_rate": sum(optimal) / len(optimal) if optimal else None,
        "mean_pareto_distance": mean("pareto_distance"),
        "mean_nash_distance": mean("nash_distance"),
    }


def result_of(record: Record, seat: str) -> str:
    """``"win"``, ``"draw"`` or ``"loss"`` for ``seat`` in ``record``, the one meaning of :data:`WIN_DRAW_LOSS_SENTENCE`.

    Read from the outcome's ``winners`` (its single ``winner`` in records without
    them): a team or shared win is a win for every winner, where one ``winner``
    alone called it a draw for all.
    """
    outcome = outcome_of(record)
    winners = outcome.get("winners")
    if winners is None:
        winners = [] if outcome.get("winner") is None else [outcome["winner"]]
    if seat in winners:
        return "win"
    return "draw" if not winners and len(record["agents"]) > 1 else "loss"


def summarize(records: list[Record], with_winner: bool) -> Summary:
    """Per agent, over all its seats and per seat: episodes, mean reward with 95% CI, invalid-action rate, W/D/L rates with 95% CIs.

    Where the records are negotiations (their outcome's ``details`` hold the
    analysis of :mod:`parlour.envs.negotiation.analysis`), each block also has
    ``negotiation``: agreement rate with its Wilson interval, mean utility,
    mean social welfare, Pareto-optimal rate, mean Pareto and Nash distances.

    The reward intervals (see :func:`mean_ci`) stay within :func:`score_range`
    of every return in ``records``, every seat's. Win, draw and loss are
    :func:`result_of`'s; their intervals are Wilson's (:func:`wilson_interval`).
    """
    samples: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        for seat, name in record["agents"].items():
            steps = [step for step in record["steps"] if step["player"] == seat]
            result = result_of(record, seat)
            samples.setdefault(name, []).append(
                {
                    "seat": seat,
                    "reward": float(record["returns"][seat]),
                    "result": result,
                    "actions": len(steps),
                    "invalid": sum(step["error"] is not None for step in steps),
                    "negotiation": negotiation_metrics(record, seat),
                }
            )
    bounds = score_range([s["reward"] for mine in samples.values() for s in mine])
    summary: Summary = {}
    for name, mine in samples.items():
        seats = sorted({s["seat"] for s in mine}, key=lambda seat: records[0]["players"].index(seat))
        summary[name] = {
            **_block(mine, with_winner, bounds),
            "seats": {seat: _block([s for s in mine if s["seat"] == seat], with_winner, bounds) for seat in seats},
        }
    return summary


#: The largest k the summary reports pass^k for (each k up to the fewest trials any task had).
PASS_HAT_K_MAX = 8


def task_trials(records: list[Record]) -> dict[str, dict[str, list[bool]]]:
    """Per agent, per task: the success of each trial, for the records of games that declare tasks.

    A game declares tasks by putting a ``task_id`` (episodes of one task are trials of it, with other seeds for the
    seats and chance) and a boolean ``success`` in its outcome's ``details`` (ServiceDesk's ``tasks`` option); an agent
    that held several seats of one episode counts it once.
    """
    trials: dict[str, dict[str, list[bool]]] = {}
    for record in records:
        details = outcome_of(record).get("details") or {}
        if "task_id" not in details or not isinstance(details.get("success"), bool):
            continue
        for name in dict.fromkeys(record["agents"].values()):
            trials.setdefault(name, {}).setdefault(str(details["task_id"]), []).append(details["success"])
    return trials


def pass_hat(outcomes: list[list[bool]], k: int) -> float | None:
    """τ-bench's pass^k: over the tasks with at least ``k`` trials, the mean chance that ``k`` trials drawn without
    replacement all succeed, ``C(c, k) / C(n, k)`` for ``c`` successes in ``n`` trials; ``None`` when no task has ``k``."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    chances = [math.comb(sum(trial), k) / math.comb(len(trial), k) for trial in outcomes if len(trial) >= k]
    return math.fsum(chances) / len(chances) if chances else None


@dataclass
class Results:
    """The outcome of :func:`parlour.evaluate`: episode records, run metadata and per-agent accounting.

    ``records`` are sorted by episode index. ``stats`` maps each agent name to
    its accounting: ``decisions`` (actions asked for), ``act_calls`` (``act`` or
    ``act_batch`` calls), ``act_seconds`` (wall time inside the agent) and the
    numeric entries of the agent's own ``stats`` (``prompt_tokens``,
    ``completion_tokens``, ... for LLM agents), summed over copies and workers.
    """

    env_id: str
    env_version: int
    agents: list[str]
    seed: int
    episodes: int
    env_kwargs: dict[str, Any]
    records: list[Record]
    rotate_seats: bool = True
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    parlour_version: str = ""
    #: ``{"id", "nonce"}`` of the challenge this run was played for (see :mod:`parlour.evaluation.challenges`), or None.
    challenge: dict[str, str] | None = None
    #: The agent number in each seat before rotation, when it is not the default line-up (see :mod:`parlour.evaluation.rollout`).
    lineup: list[int] | None = None

    def metadata(self) -> Metadata:
        """The run's identity and size, as written at the top of ``summary.json``."""
        return {
            "env_id": self.env_id,
            "env_version": self.env_version,
            "agents": list(self.agents),
            "seed": self.seed,
            "episodes": self.episodes,
            "env_kwargs": dict(self.env_kwargs),
            "rotate_seats": self.rotate_seats,
            "parlour_version": self.parlour_version,
            "lineup": None if self.lineup is None else list(self.lineup),
            "challenge": None if self.challenge is None else dict(self.challenge),
        }

    def has_winner(self) -> bool:
        """Whether win/draw/loss rates mean something: a multi-player zero-sum or competitive game, or any episode with a winner."""
        if any(outcome_of(record).get("winner") is not None or outcome_of(record).get("winners") for record in self.records):
            return True
        from parlour.envs.core.match import make_game
        from parlour.envs.registry import game_class

        try:
            game_cls = game_class(self.env_id)
        except KeyError:
            return False
        # A competitive game names a winner whenever there is one, so a run without one (always-cooperate
        # against tit-for-tat) is all draws, not a game without winners.
        competitive = game_cls.zero_sum or game_cls.category == "game"
        return competitive and len(make_game(game_cls, dict(self.env_kwargs)).players) > 1

    @property
    def summary(self) -> Summary:
        """Per agent (and per seat): episodes, mean reward and 95% CI, W/D/L rates, invalid-action rate, latency, tokens;
        and ``pass_hat_k`` (``{"1": ..., "2": ...}``) for games whose episodes are trials of tasks."""
        summary = summarize(self.records, self.has_winner()) if self.records else {}
        for name, block in summary.items():
            stats = self.stats.get(name, {})
            calls = stats.get("act_calls", 0)
            block["latency_s"] = stats["act_seconds"] / calls if calls else None
            if "prompt_tokens" in stats:
                block["prompt_tokens"] = stats["prompt_tokens"]
            if "completion_tokens" in stats:
                block["completion_tokens"] = stats["completion_tokens"]
        for name, tasks in task_trials(self.records).items():
            # Up to the fewest trials of any task, so every k reported averages over the same tasks.
            most = min(PASS_HAT_K_MAX, min(len(trial) for trial in tasks.values()))
            summary[name]["pass_hat_k"] = {str(k): pass_hat(list(tasks.values()), k) for k in range(1, most + 1)}
        return summary

    def pass_hat_k(self, k: int) -> dict[str, float | None]:
        """τ-bench's pass^k of each agent (see :func:`pass_hat`) over the run's episodes grouped by task (see
        :func:`task_trials`); ``None`` for an agent with no task played ``k`` times. Empty for games without tasks."""
        return {name: pass_hat(list(tasks.values()), k) for name, tasks in task_trials(self.records).items()}

    def failures(self) -> Failures:
        """The turns agents could not decide (their backend failed): ``{"episodes": [indices], "turns": n, "reasons": {reason: turns}}``.

        Such a turn is played as an invalid action, so the run finishes, but its affected episodes do not
        measure the agent: ``parlour eval`` exits non-zero when there are any, and a rerun with the same
        ``out`` (``--resume``) plays them again.
        """
        episodes: list[int] = []
        reasons: dict[str, int] = {}
        for record in self.records:
            failed = [step["failure"] for step in record["steps"] if "failure" in step]
            if failed:
                episodes.append(record["episode"])
                for reason in failed:
                    reasons[reason] = reasons.get(reason, 0) + 1
        return {"episodes": episodes, "turns": sum(reasons.values()), "reasons": reasons}

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write the bundle (``episodes.jsonl`` and ``summary.json``) to ``directory``; returns its path."""
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        temporary = path / (EPISODES_FILE + ".tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            for record in self.records:
                handle.write(json.dumps(record) + "\n")
        os.replace(temporary, path / EPISODES_FILE)
        self.save_summary(path)
        return path

    def save_summary(self, directory: Path) -> None:
        """Write ``summary.json`` only (the records are already in ``episodes.jsonl``)."""
        write_json(directory / SUMMARY_FILE, {**self.metadata(), "stats": self.stats, "summary": self.summary, "failures": self.failures()})

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Results:
        """Read a bundle written by :meth:`save` or by ``evaluate(..., out=directory)``."""
        path = Path(directory)
        summary_path = path / SUMMARY_FILE
        if not summary_path.exists():
            raise FileNotFoundError(f"{path} is not a bundle: it has no {SUMMARY_FILE}")
        meta = json.loads(summary_path.read_text(encoding="utf-8"))
        records = sorted(read_records(path / EPISODES_FILE), key=lambda record: record.get("episode", 0))
        return cls(
            env_id=meta["env_id"],
            env_version=meta["env_version"],
            agents=list(meta["agents"]),
            seed=meta["seed"],
            episodes=meta["episodes"],
            env_kwargs=dict(meta.get("env_kwargs") or {}),
            records=records,
            rotate_seats=meta.get("rotate_seats", True),
            stats=dict(meta.get("stats") or {}),
            parlour_version=meta.get("parlour_version", ""),
            challenge=meta.get("challenge"),
            lineup=meta.get("lineup"),
        )

    def to_records(self) -> list[dict[str, Any]]:
        """One flat dict per episode and seat, ready for ``pandas.DataFrame`` or a CSV file.

        Columns: ``env_id``, ``episode``, ``seed`` (the episode's), ``seat``,
        ``agent``, ``reward``, ``result`` (``"win"``, ``"draw"`` or ``"loss"``;
        ``None`` where the game names no winners, see :meth:`has_winner`),
        ``actions``, ``invalid_actions``, ``truncated``, ``reason`` and, for
        negotiations, :data:`NEGOTIATION_METRICS` (``None`` in an episode without them).
        """
        with_winner = self.has_winner()
        rows = []
        for record in self.records:
            outcome = outcome_of(record)
            for seat, name in record["agents"].items():
                steps = [step for step in record["steps"] if step["player"] == seat]
                row: dict[str, Any] = {
                    "env_id": record.get("env_id", self.env_id),
                    "episode": record.get("episode"),
                    "seed": record.get("seed"),
                    "seat": seat,
                    "agent": name,
                    "reward": float(record["returns"][seat]),
                    "result": result_of(record, seat) if with_winner else None,
                    "actions": len(steps),
                    "invalid_actions": sum(step["error"] is not None for step in steps),
                    "truncated": bool(outcome.get("truncated", False)),
                    "reason": outcome.get("reason"),
                }
                metrics = negotiation_metrics(record, seat)
                if metrics is not None:
                    row.update(metrics)
                rows.append(row)
        if any("agreement" in row for row in rows):
            for row in rows:
                for key in NEGOTIATION_METRICS:
                    row.setdefault(key, None)
        return rows

    def to_pandas(self) -> Any:
        """:meth:`to_records` as a ``pandas.DataFrame`` (pandas is not a dependency of parlour: install it to use this)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("Results.to_pandas needs pandas, which parlour does not install: pip install pandas") from None
        return pandas.DataFrame.from_records(self.to_records())

    def to_csv(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`to_records` to ``path`` as CSV with a header row (empty cells for ``None``); returns the path."""
        rows = self.to_records()
        columns = list(rows[0]) if rows else ["env_id", "episode", "seed", "seat", "agent", "reward", "result"]
        target = Path(path)
        if target.parent != Path("."):
            target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
        return target

    def plot(self, path: str | os.PathLike[str]) -> Path:
        """Write a PNG of each agent's results with their 95% intervals to ``path``; returns the path.

        One panel of mean reward per agent (over all seats, and per seat beside
        it), then, where they apply, one of win rate and one of agreement rate.
        Needs matplotlib (``pip install matplotlib``, part of the ``train`` extra), imported only here.
        """
        pyplot = _pyplot()
        summary = self.summary
        panels: list[tuple[str, Any]] = [("mean reward", lambda block: (block["mean_reward"], block["ci95"]))]
        if any("win_rate" in block for block in summary.values()):
            panels.append(("win rate", lambda block: (block.get("win_rate"), block.get("win_rate_ci95"))))
        if any("negotiation" in block for block in summary.values()):
            panels.append(
                (
                    "agreement rate",
                    lambda block: (
                        (block.get("negotiation") or {}).get("agreement_rate"),
                        (block.get("negotiation") or {}).get("agreement_rate_ci95"),
                    ),
                )
            )
        names = list(summary)
        seats = list(dict.fromkeys(seat for block in summary.values() for seat in block["seats"]))
        figure, axes = pyplot.subplots(1, len(panels), figsize=(4.5 * len(panels), 1.2 + 0.5 * len(names) * (1 + len(seats))), squeeze=False)
        offsets = [0.0] + [0.6 * (index + 1) / (len(seats) + 1) for index in range(len(seats))]
        for axis, (title, value) in zip(axes[0], panels):
            for row, name in enumerate(names):
                blocks = [("all", summary[name])] + [(seat, summary[name]["seats"].get(seat)) for seat in seats]
                for (label, block), offset in zip(blocks, offsets):
                    if block is None:
                        continue
                    mean, interval = value(block)
                    if mean is None:
                        continue
                    error = [[mean - interval[0]], [interval[1] - mean]] if interval else None
                    overall = label == "all"
                    axis.errorbar(
                        [mean],
                        [row + offset],
                        xerr=error,
                        fmt="o" if overall else ".",
                        capsize=3,
                        color="black" if overall else pyplot.cm.tab10(seats.index(label) % 10),
                        label=("all seats" if overall else label) if row == 0 else None,
                    )
            axis.set_yticks(range(len(names)), names)
            axis.invert_yaxis()
            axis.set_title(title)
            axis.grid(axis="x", alpha=0.3)
        axes[0][0].legend(fontsize="small", loc="best")
        figure.suptitle(f"{self.env_id}: {len(self.records)} episodes, seed {self.seed} (95% intervals)")
        figure.tight_layout()
        target = Path(path)
        if target.parent != Path("."):
            target.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(target, format="png", dpi=100)
        pyplot.close(figure)
        return target

    def table(self) -> str:
        """The summary as a terminal table: one row per agent over all seats, then one per agent and seat.

        Negotiations add columns for the agreement rate, mean utility, mean
        social welfare and mean Pareto and Nash distances. A "-" is explained
        under the table: it marks a figure that does not apply, never a zero.
        """
        summary = self.summary
        negotiation = any("negotiation" in block for block in summary.values())
        header = ["agent", "seat", "episodes", "mean reward [95% CI]", "win/draw/loss", "invalid", "latency", "tokens"]
        if negotiation:
            header += ["agreement", "utility", "welfare", "pareto dist", "nash dist"]
        rows = [header]
        for name, block in summary.items():
            rows.append(_row(name, "all", block, block, negotiation))
            for seat, seat_block in block["seats"].items():
                rows.append(_row("", seat, seat_block, block, negotiation))
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * width for width in widths))
        notes = _dash_notes(rows)
        failures = self.failures()
        if failures["episodes"]:
            worst = max(failures["reasons"], key=failures["reasons"].__getitem__)
            notes.append(
                f"{len(failures['episodes'])} episode(s) had turns an agent could not decide ({failures['turns']} turns, "
                f"played as invalid actions); the most frequent reason: {worst[:200]}"
            )
        notes.append(INTERVAL_SENTENCE)
        if any(row[4] != "-" for row in rows[1:]):
            notes.append(WIN_DRAW_LOSS_SENTENCE)
        return f"{self.env_id}: {len(self.records)} episodes, seed {self.seed}\n" + "\n".join(lines + notes)


def _pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend, or an ImportError saying how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plotting results needs matplotlib: pip install matplotlib (it comes with parlour[train])") from None
    matplotlib.use("Agg")
    from matplotlib import pyplot

    return pyplot


#: Why a column shows "-": the figure does not apply to these episodes.
DASH_NOTES = {
    "win/draw/loss": "the game names no winners (cooperative, single-player or scored without a winner): compare mean rewards",
    "invalid": "the agent was never asked to act",
    "latency": "the agent was never asked to act",
    "tokens": "the agent reports no token counts (not an LLM)",
}


def _dash_notes(rows: list[list[str]]) -> list[str]:
    """One line per column of ``rows`` (header first) that shows a "-", saying why."""
    notes = []
    for index, column in enumerate(rows[0]):
        if column in DASH_NOTES and any(row[index] == "-" for row in rows[1:]):
            notes.append(f'"-" under {column}: {DASH_NOTES[column]}')
    return notes


def _row(name: str, seat: str, block: SeatBlock, agent_block: AgentBlock, negotiation: bool = False) -> list[str]:
    """One table row; latency and tokens are per agent, so only the agent's first row shows them."""
    ci = block["ci95"]
    reward = f"{block['mean_reward']:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")
    wdl = f"{block['win_rate']:.0%}/{block['draw_rate']:.0%}/{block['loss_rate']:.0%}" if "win_rate" in block else "-"
    invalid = "-" if block["invalid_action_rate"] is None else f"{block['invalid_action_rate']:.1%}"
    latency = tokens = ""
    if seat == "all":
        latency = "-" if agent_block["latency_s"] is None else f"{agent_block['latency_s'] * 1000:.1f} ms"
        count = agent_block.get("prompt_tokens", 0) + agent_block.get("completion_tokens", 0)
        tokens = f"{count}" if "prompt_tokens" in agent_block or "completion_tokens" in agent_block else "-"
    row = [name, seat, str(block["episodes"]), reward, wdl, invalid, latency, tokens]
    if negotiation:
        deal = block.get("negotiation")
        if deal is None:
            row += [""] * 5
        else:
            row.append(f"{deal['agreement_rate']:.0%}")
            row.extend(
                "" if value is None else f"{value:{spec}}"
                for value, spec in (
                    (deal["mean_utility"], ".3g"),
                    (deal["mean_social_welfare"], ".3g"),
                    (deal["mean_pareto_distance"], ".3f"),
                    (deal["mean_nash_distance"], ".3f"),
                )
            )
    return row
