"""Ratings, recomputed from scratch from the stored episodes; the method is declared once per game category.

:data:`CATEGORY_METHODS` says which rating each category of environment gets
(:func:`method_for` resolves it for one environment), and :data:`METHODS`
holds the one sentence each page shows about it:

* ``bradley-terry`` (competitive games whose every payoff is a win, a draw or
  a loss, e.g. TicTacToe): every episode is split into pairwise results
  between seats held by different agents (win 1, draw ½). A Bradley–Terry
  model with a first-mover term (the earlier seat's advantage, left out for
  simultaneous-move games) is fitted by Newton's method with a weak Gaussian
  prior (:data:`PRIOR_SD`), shown on an Elo-like scale with ``random`` at
  :data:`ANCHOR_RATING` (the mean, without ``random``).
* ``payoff`` (competitive games with other payoffs, such as poker chips or
  Blotto fields, and negotiations): a per-pair mean-payoff matrix ``M[i][j]``
  (agent i's mean return in episodes where j held another seat); the rating
  is the expected payoff against the field, the mean over opponents of
  ``M[i][j]``, so farming one weak opponent does not help. Beside it a
  game-theoretic view of the same matrix: Nash averaging (the payoff against
  the maximum-entropy Nash equilibrium of the antisymmetric part of ``M``,
  Balduzzi et al. 2018) for zero-sum games, α-Rank's stationary mass
  (Omidshafiei et al. 2019) for general-sum ones, over the meta-game of the
  ranked agents whose every pair was measured (:func:`meta_game`): a pair
  that never met is unknown, not a draw.
* ``team`` (cooperation): the cross-play team score, the mean over partners
  (the agent itself included, self-play) of the agent's mean return with that
  partner; the team table, the per-role table and the mixed-partner matrix
  go beside it, with the ``random`` team and the best scripted team as
  reference points.
* ``roles`` (social games, and any game with ``Game.fixed_roles``): rated per
  role. Each row is one agent in one role (:func:`~parlour.evaluation.seating.role_of`: a fixed-role
  seat's role, such as a debate's ``judge`` and ``debater``; else the
  player's team in the outcome, such as Mafia's ``mafia`` and ``village``),
  rated by its mean return in that role and ranked only against the other
  agents of that role, so judges and debaters never share a scale.
* ``score`` (single-agent tasks such as search, coding and puzzles): mean score.

Intervals (95%), the one method the CLI states
(:data:`parlour.evaluation.results.INTERVAL_SENTENCE`): a mean of returns
gets :func:`parlour.evaluation.results.bounded_interval`, Wilson's score
interval on :func:`parlour.evaluation.results.score_range` (the returns seen,
and -1 to 1) with the standard error of the episodes, or for a value that
averages several means (expected payoff against the field, a team score
across partners, a cell of the payoff matrix) the standard deviation of its
bootstrap over episodes; so no interval leaves the score's range or shrinks
to a point, even where every return is equal. Bradley–Terry ratings, on the
unbounded Elo scale, take the union of the percentile intervals of a
bootstrap over episodes and of a parametric bootstrap from a fit with one
virtual draw per pairing; a side where no resample moved (a perfect record,
which every resample repeats) reaches as far as the other side, so a rating
always lies inside its interval. Simulated coverage of the true rating is
0.95 or more from 40 to 200 episodes (``benchmarks/rating_coverage.py``).

Ranks (:func:`standings`, :func:`rank_rows`): an agent with fewer than
:data:`MIN_EPISODES` episodes, or fewer than :data:`MIN_OPPONENTS` distinct
other agents met (where the ranked agents number that many), counting only
episodes among ranked agents, is provisional: shown, with the reason and what
it still needs ("12 more episodes and one more opponent"), but kept out of the
rank order, so twenty lucky hands against one opponent rank nobody. The
ranked agents' figures (ratings, intervals, matrix cells between them, the
meta-game, the per-agent tables beside them) come from the episodes among
ranked agents alone, so a provisional agent's games move none of them until
it is ranked; a provisional agent's own figures come from every episode.
Ranked agents are ordered by the method's value, and each also gets the range
of ranks its interval allows (the agents whose intervals lie wholly above or
below its own are certainly above or below it). In a ``roles`` table all of
this holds within each role: its episodes and opponents are those of the
agent in that role, and ranks restart at 1 in every role.

Overall (:func:`overall`): per environment, scores are normalised so that
``random`` is 0 and the environment's strongest declared reference agent
(``Game.reference_agents``) is 100 (the interval too), counting only a
reference whose interval lies wholly above ``random``'s (below it where
``Game.higher_is_better`` is false); an environment without one is not
normalised, and the table says why (:func:`normalised`). Provisional entries
count as not played. An agent's overall score is its mean over all the
environments of the table, one it has not played counting as ``random``'s 0
(a ``roles`` table is normalised role by role, and an agent's score there is
the mean over the environment's normalised roles of its score in each, a role
it did not hold counting 0, so every environment weighs the same however many
roles it has):
so a specialist that beats ``random`` where it plays ranks above it, and
playing only one's best environments lifts nobody above an agent as good
everywhere. Coverage is shown beside it, and a reference row (each
environment's 100, the best built-in there) heads the table. Per-category
tables do the same within each category.

Episodes are sorted by fingerprint and the bootstrap has a fixed seed, so a
table depends only on the set of stored episodes, never on arrival order.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NamedTuple, cast, overload

import numpy as np
from scipy.special import expit

from parlour.evaluation.results import bounded_interval, mean_ci, score_range
from parlour.evaluation.seating import role_of
from parlour.leaderboard.tables import (
    MetaGame,
    NegotiationRow,
    Normalised,
    OverallRow,
    OverallTable,
    RatingRow,
    RatingTable,
    Scaled,
    Standing,
    TeamRow,
)

if TYPE_CHECKING:
    # Only annotations name them: importing the store would load SQLAlchemy wherever ratings are computed.
    from parlour.leaderboard.store import Result

ANCHOR = "random"
ANCHOR_RATING = 1000.0
ELO_PER_NAT = 400.0 / math.log(10.0)
PRIOR_SD = 5.0
BOOTSTRAP = 200
BOOTSTRAP_SEED = 0
Z95 = 1.959963984540054
#: The version of the tables' layout and methods: a table saved under another is recomputed.
FORMAT = 6
#: Fewest episodes an agent needs in an environment to be ranked there; below it its entry is provisional.
MIN_EPISODES = 20
#: Fewest distinct other agents (opponents or partners) an agent needs to have met to be ranked, where the table has
#: that many; one opponent says little about a rating "against the field".
MIN_OPPONENTS = 2
#: α-Rank's selection intensity (on payoffs scaled to [-1, 1]) and population size.
ALPHA_RANK_ALPHA = 20.0
ALPHA_RANK_POPULATION = 50


@dataclass(frozen=True)
class RatingInput:
    """What a rating method's table function reads: the episodes (not empty) and the environment's shape."""

    results: Sequence[Result]
    bootstrap: int
    players: Sequence[str] | None
    simultaneous: bool
    fixed_roles: bool
    method: str


@dataclass(frozen=True)
class Method:
    """A rating method: its key, the name of its value column, the sentence a page shows about it, the function
    that rates an environment's episodes, and its display rule (the digits of its values; whether its rows show
    a score rate beside them), which the site and the command line both read from the table."""

    key: str
    value: str
    sentence: str
    table: Callable[[RatingInput], RatingTable]
    digits: int = 3
    score_rate: bool = False


#: Every rating method by key; :func:`register_rating_method` adds one.
METHODS: dict[str, Method] = {}


def register_rating_method(method: Method) -> Method:
    """Make ``method`` available by its key (to :data:`CATEGORY_METHODS` and :func:`env_table`); returns it.
    Another method under a taken key is refused."""
    known = METHODS.get(method.key)
    if known is not None and known != method:
        raise ValueError(f"rating method {method.key!r} is already registered; choose another key")
    METHODS[method.key] = method
    return method


register_rating_method(
    Method(
        "bradley-terry",
        "rating",
        "Bradley–Terry ratings from every pair of seats in every episode (win 1, draw ½) with a first-mover term, "
        "on the Elo scale with random at 1000.",
        lambda given: bradley_terry(given.results, bootstrap=given.bootstrap, players=given.players, first_mover=not given.simultaneous),
        digits=1,
        score_rate=True,
    )
)
register_rating_method(
    Method(
        "payoff",
        "expected payoff",
        "Expected payoff against the field: the mean over opponents of the agent's mean payoff per episode against each; "
        "the game-theoretic column reads the same payoff matrix (Nash averaging for zero-sum games, α-Rank mass for general-sum ones).",
        lambda given: payoff_table(given.results, bootstrap=given.bootstrap, kind=given.method),
    )
)
register_rating_method(
    Method(
        "team",
        "team score",
        "Cross-play team score: the mean over partners (the agent itself included) of the agent's mean return with that partner; "
        "random and the best scripted team are the reference points.",
        lambda given: payoff_table(given.results, bootstrap=given.bootstrap, kind=given.method),
    )
)
register_rating_method(
    Method(
        "roles",
        "mean return in role",
        "Rated per role: each row is an agent in one role (a fixed seat's role, such as a debate's judge, else its team, "
        "such as Mafia's mafia or village), rated by its mean return in that role and ranked only among that role's agents.",
        lambda given: role_table(given.results, given.fixed_roles),
    )
)
register_rating_method(
    Method(
        "score",
        "mean score",
        "Mean score per episode (per seat, where a task has several).",
        lambda given: mean_scores(given.results),
    )
)

#: The rating of each game category, declared once: "competitive" is Bradley–Terry when every payoff is a win,
#: a draw or a loss and expected payoff otherwise; categories not listed get "competitive" (or "payoff" when not zero-sum).
CATEGORY_METHODS = {
    "game": "competitive",
    "negotiation": "payoff",
    "cooperation": "team",
    "social": "roles",
    "search": "score",
    "coding": "score",
    "puzzle": "score",
    "agentic": "score",
}

#: The categories in the order the overall page lists their tables, with their headings.
CATEGORY_TITLES = {
    "game": "Games",
    "negotiation": "Negotiation",
    "search": "Search",
    "coding": "Coding",
    "cooperation": "Cooperation",
    "social": "Social",
    "puzzle": "Puzzles",
    "agentic": "Agentic worlds",
}


def win_loss_only(results: Sequence[Result]) -> bool:
    """Whether every return is -1, 0 or 1: payoffs that say only who won, where Bradley–Terry loses nothing."""
    return all(value in (-1.0, 0.0, 1.0) for result in results for value in result[2].values())


def method_for(category: str, zero_sum: bool, seats: int, results: Sequence[Result] = (), fixed_roles: bool = False) -> str:
    """The rating method of an environment of ``category`` (see :data:`CATEGORY_METHODS`); a game with fixed roles is rated per role."""
    if seats == 1:
        return "score"
    if fixed_roles:
        return "roles"
    declared = CATEGORY_METHODS.get(category, "competitive" if zero_sum else "payoff")
    if declared == "competitive":
        return "bradley-terry" if zero_sum and win_loss_only(results) else "payoff"
    return declared


# ------------------------------------------------------------------ intervals
def _bootstrap_counts(n: int, bootstrap: int, seed: int) -> Iterable[np.ndarray]:
    """``bootstrap`` resamplings of ``n`` episodes, as how often each episode was drawn."""
    rng = np.random.default_rng(seed)
    for _ in range(bootstrap):
        yield np.bincount(rng.integers(0, n, size=n), minlength=n).astype(float)


def mean_interval(values: Sequence[float], bounds: tuple[float, float]) -> tuple[float, float, float]:
    """The mean of ``values`` (one per episode) and its 95% interval by the CLI's method, inside ``bounds``, never a point.

    :func:`parlour.evaluation.results.mean_ci`; a single value, which shows no spread, weighs as one trial.
    """
    mean, interval = mean_ci(list(values), bounds)
    if interval is None:
        interval = bounded_interval(mean, 0.0, 1, bounds, Z95)
    return mean, interval[0], interval[1]


def bootstrap_se(samples: np.ndarray) -> np.ndarray:
    """The standard error of a statistic averaging several means: the standard deviation of its bootstrap ``samples``
    (axis 0; a NaN is a sample that lacks it), 0 where fewer than two samples have it.

    With it, :func:`parlour.evaluation.results.bounded_interval` gives such a value the CLI's interval, inside the
    score's range; where it is 0 (every return equal) the interval weighs the value's episodes instead, never a point.
    """
    valid = np.isfinite(samples)
    count = valid.sum(axis=0)
    filled = np.where(valid, samples, 0.0)
    mean = filled.sum(axis=0) / np.maximum(count, 1)
    squares = (np.where(valid, samples - mean, 0.0) ** 2).sum(axis=0)
    return np.where(count > 1, np.sqrt(squares / np.maximum(count - 1, 1)), 0.0)


# ------------------------------------------------------------- Bradley–Terry
def pairwise(results: Sequence[Result], agents: list[str], players: Sequence[str] | None = None) -> tuple[np.ndarray, ...]:
    """Pairwise results as arrays (episode, agent in the earlier seat, agent in the later seat, score of the earlier one).

    Seats are ordered as in ``players`` (the game's seat order; sorted names without it).
    """
    index = {name: k for k, name in enumerate(agents)}
    order = {seat: k for k, seat in enumerate(players)} if players else None
    episodes, first, second, score = [], [], [], []
    for e, result in enumerate(results):
        seating, returns = result[1], result[2]
        seats = sorted(seating, key=(lambda seat: (order.get(seat, len(order)), seat)) if order else None)
        for a, seat_a in enumerate(seats):
            for seat_b in seats[a + 1 :]:
                if seating[seat_a] == seating[seat_b]:
                    continue
                ra, rb = returns.get(seat_a, 0.0), returns.get(seat_b, 0.0)
                episodes.append(e)
                first.append(index[seating[seat_a]])
                second.append(index[seating[seat_b]])
                score.append(1.0 if ra > rb else 0.0 if ra < rb else 0.5)
    return np.array(episodes, dtype=np.int64), np.array(first, dtype=np.int64), np.array(second, dtype=np.int64), np.array(score)


class BradleyTerryFit(NamedTuple):
    """A Bradley–Terry fit (:func:`fit_bradley_terry`): log-strengths centred on their mean, the first-mover term, and
    the posterior covariance over both (None where it was not asked for)."""

    theta: np.ndarray
    eta: np.ndarray
    covariance: np.ndarray | None


def fit_bradley_terry(
    wins: np.ndarray,
    games: np.ndarray | None = None,
    first_mover: bool = False,
    prior_sd: float = PRIOR_SD,
    iterations: int = 100,
    start: np.ndarray | None = None,
    covariance: bool = True,
) -> BradleyTerryFit:
    """Maximise the Bradley–Terry posterior; returns (log-strengths centred on their mean, first-mover term, covariance).

    ``wins[..., i, j]`` is the score the agent in the earlier seat, i, took
    from j in the later seat (ties half each), ``games[..., i, j]`` how many
    such games there were (default ``wins + wins.T``, for a model without the
    first-mover term). With ``first_mover`` the win probability of the earlier
    seat is ``σ(θ_i - θ_j + η)``. The covariance is the inverse of the
    posterior's negative Hessian over (θ, η); None with ``covariance=False``.

    The data enter only as the aggregated counts per ordered pair, so a fit
    costs the same whatever the number of games. A stack of problems
    (``wins[b]``, a bootstrap) is solved at once. Given ``start`` (θ then η,
    such as the fit of the full data), a stack is solved by the chord method
    (:func:`_chord`): one Hessian, inverted once, serves every sample, so a step
    costs k² per sample rather than the k³ of a Newton step; a sample it does
    not settle is solved by Newton's method from ``start``.
    """
    wins = np.asarray(wins, dtype=float)
    if games is None:
        games = wins + np.swapaxes(wins, -1, -2)
    games = np.asarray(games, dtype=float)
    k = wins.shape[-1]
    params = np.zeros(wins.shape[:-2] + (k + 1,))
    hessian: np.ndarray | None = None
    if start is not None:
        params[...] = start
    if start is not None and params.ndim == 2:
        params, settled = _chord(params, wins, games, first_mover, prior_sd, iterations)
        if not settled.all():
            rest = ~settled
            params[rest] = _newton(np.broadcast_to(start, params[rest].shape).copy(), wins[rest], games[rest], first_mover, prior_sd, iterations)[0]
    else:
        params, hessian = _newton(params, wins, games, first_mover, prior_sd, iterations)
    theta = params[..., :k]
    # Only the full data's fit needs the covariance; inverting every bootstrap sample's Hessian cost as much as the fit.
    inverse = None
    if covariance:
        if hessian is None:
            hessian = _derivatives(params, wins, games, first_mover, prior_sd)[1]
        inverse = np.linalg.inv(-hessian)
    return BradleyTerryFit(theta - theta.mean(axis=-1, keepdims=True), params[..., k], inverse)


@overload
def _derivatives(
    params: np.ndarray, wins: np.ndarray, games: np.ndarray, first_mover: bool, prior_sd: float, hessian: Literal[True] = True
) -> tuple[np.ndarray, np.ndarray]: ...


@overload
def _derivatives(
    params: np.ndarray, wins: np.ndarray, games: np.ndarray, first_mover: bool, prior_sd: float, hessian: Literal[False]
) -> tuple[np.ndarray, None]: ...


def _derivatives(
    params: np.ndarray, wins: np.ndarray, games: np.ndarray, first_mover: bool, prior_sd: float, hessian: bool = True
) -> tuple[np.ndarray, np.ndarray | None]:
    """The gradient and (with ``hessian``) the Hessian of the Bradley–Terry log-posterior at ``params`` (θ then η)."""
    k = wins.shape[-1]
    size = k + 1
    theta, eta = params[..., :k], params[..., k]
    logit = theta[..., :, None] - theta[..., None, :]
    if first_mover:
        logit += eta[..., None, None]
    # In place: on a bootstrap stack each array is B·k² numbers, and the passes over memory are the cost.
    p = expit(logit, out=logit)
    residual = np.subtract(wins, games * p)
    gradient = np.empty_like(params)
    gradient[..., :k] = residual.sum(axis=-1) - residual.sum(axis=-2) - theta / prior_sd**2
    gradient[..., k] = residual.sum(axis=(-1, -2)) - eta / prior_sd**2 if first_mover else 0.0
    if not hessian:
        return gradient, None
    weight = games * p * (1.0 - p)
    eye_k = np.eye(k)
    both = weight + np.swapaxes(weight, -1, -2)
    matrix = np.zeros(params.shape + (size,))
    matrix[..., :k, :k] = both - eye_k * both.sum(axis=-1)[..., None] - eye_k / prior_sd**2
    matrix[..., k, k] = -weight.sum(axis=(-1, -2)) - 1.0 / prior_sd**2
    if first_mover:
        cross = -weight.sum(axis=-1) + weight.sum(axis=-2)
        matrix[..., :k, k] = cross
        matrix[..., k, :k] = cross
    return gradient, matrix


def _newton(
    params: np.ndarray, wins: np.ndarray, games: np.ndarray, first_mover: bool, prior_sd: float, iterations: int
) -> tuple[np.ndarray, np.ndarray | None]:
    """Newton's method on the posterior from ``params``; the optimum and the Hessian of the last step (None after no step)."""
    hessian = None
    for _ in range(iterations):
        gradient, hessian = _derivatives(params, wins, games, first_mover, prior_sd)
        # Clipped steps keep Newton's method from overshooting on lopsided data; the posterior is concave.
        step = np.clip(np.linalg.solve(hessian, gradient[..., None])[..., 0], -2.0, 2.0)
        params = params - step
        if np.max(np.abs(step)) < 1e-9:
            break
    return params, hessian


def _chord(
    params: np.ndarray, wins: np.ndarray, games: np.ndarray, first_mover: bool, prior_sd: float, iterations: int
) -> tuple[np.ndarray, np.ndarray]:
    """The chord method for a stack of fits near ``params``: every step uses the Hessian of the stack's mean data at
    the start, inverted once. Bootstrap samples differ from the data by sampling noise, so the steps shrink
    geometrically to the same optimum Newton's method finds; returns the fits and which of them settled."""
    _, hessian = _derivatives(params.mean(axis=0), wins.mean(axis=0), games.mean(axis=0), first_mover, prior_sd)
    inverse = np.linalg.inv(hessian)
    settled = np.zeros(len(params), dtype=bool)
    for _ in range(iterations):
        gradient, _ = _derivatives(params, wins, games, first_mover, prior_sd, hessian=False)
        step = np.clip(gradient @ inverse.T, -2.0, 2.0)
        params = params - step
        settled = np.max(np.abs(step), axis=-1) < 1e-9
        if settled.all():
            break
    return params, settled


def _elo(theta: np.ndarray, anchor: int | None) -> np.ndarray:
    reference = theta[..., anchor] if anchor is not None else theta.mean(axis=-1)
    return ANCHOR_RATING + ELO_PER_NAT * (theta - reference[..., None])


def _first_seat_matrices(first: np.ndarray, second: np.ndarray, score: np.ndarray, weights: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Score of the earlier seat and game counts per ordered (earlier, later) pair, each pairwise game weighted."""
    flat = first * k + second
    wins = np.bincount(flat, weights=score * weights, minlength=k * k).reshape(k, k)
    games = np.bincount(flat, weights=weights, minlength=k * k).reshape(k, k)
    return wins, games


def _bootstrap_ratings(
    pairs: tuple[np.ndarray, ...],
    wins: np.ndarray,
    games: np.ndarray,
    fitted: np.ndarray,
    n: int,
    bootstrap: int,
    seed: int,
    first_mover: bool,
    anchor_index: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """``bootstrap`` Elo ratings of every agent from resampled episodes, and as many from a parametric bootstrap.

    ``pairs`` is :func:`pairwise`'s (episode, earlier, later, score); ``fitted`` the data's fit (θ then η).
    """
    episode, first, second, score = pairs
    k = wins.shape[-1]
    samples = np.empty((bootstrap, k, k))
    sample_games = np.empty((bootstrap, k, k))
    for b, counts in enumerate(_bootstrap_counts(n, bootstrap, seed)):
        samples[b], sample_games[b] = _first_seat_matrices(first, second, score, counts[episode], k)
    resampled = _elo(fit_bradley_terry(samples, sample_games, first_mover, start=fitted, covariance=False)[0], anchor_index)
    # A parametric bootstrap from a fit with one virtual draw per pairing: where every game went the same way,
    # resampling the episodes repeats it, but the model still says how likely another result was.
    met = (games > 0).astype(float)
    smooth_theta, smooth_eta, _ = fit_bradley_terry(wins + 0.5 * met, games + met, first_mover, start=fitted, covariance=False)
    logit = smooth_theta[:, None] - smooth_theta[None, :] + (smooth_eta if first_mover else 0.0)
    chance = 1.0 / (1.0 + np.exp(-logit))
    simulated = np.random.default_rng(seed + 1).binomial(np.rint(games).astype(np.int64), chance, size=(bootstrap, k, k))
    parametric = _elo(
        fit_bradley_terry(
            simulated.astype(float), np.broadcast_to(games, simulated.shape), first_mover, start=np.r_[smooth_theta, smooth_eta], covariance=False
        )[0],
        anchor_index,
    )
    return resampled, parametric


def _bootstrap_interval(ratings: np.ndarray, resampled: np.ndarray, parametric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 95% interval of each rating from its two bootstraps (:func:`_bootstrap_ratings`)."""
    low = np.minimum(np.percentile(resampled, 2.5, axis=0), np.percentile(parametric, 2.5, axis=0))
    high = np.maximum(np.percentile(resampled, 97.5, axis=0), np.percentile(parametric, 97.5, axis=0))
    low, high = np.minimum(low, ratings), np.maximum(high, ratings)
    # The union of the two percentile intervals. Where every resample repeats a perfect record, none goes past the
    # rating, though the data cannot bound it on that side (only the prior does): a side with no spread that would
    # print (under half a point) takes the other side's reach. Mirroring both sides always (FORMAT 5) sent the pile
    # of resamples at a nearly perfect record's capped rating downwards, so a better record got a lower bound nearer
    # random's (benchmarks/rating_coverage.py measures both rules' coverage).
    flat_low, flat_high = ratings - low < 0.5, high - ratings < 0.5
    return np.where(flat_low, 2 * ratings - high, low), np.where(flat_high, 2 * ratings - low, high)


def bradley_terry(
    results: Sequence[Result],
    bootstrap: int = BOOTSTRAP,
    seed: int = BOOTSTRAP_SEED,
    anchor: str = ANCHOR,
    players: Sequence[str] | None = None,
    first_mover: bool = True,
) -> RatingTable:
    """The Bradley–Terry table of ``results``: rows of agent, rating, 95% interval, games, score; the win-rate matrix; the first-mover term."""
    agents = sorted({name for result in results for name in result[1].values()})
    k = len(agents)
    episode, first, second, score = pairwise(results, agents, players)
    ones = np.ones(len(score))
    wins, games = _first_seat_matrices(first, second, score, ones, k)
    anchor_index = agents.index(anchor) if anchor in agents else None
    theta, eta, _ = fit_bradley_terry(wins, games, first_mover, covariance=False)
    ratings = _elo(theta, anchor_index)
    low, high = ratings.copy(), ratings.copy()
    n = len(results)
    if bootstrap and n:
        resampled, parametric = _bootstrap_ratings(
            (episode, first, second, score), wins, games, np.r_[theta, eta], n, bootstrap, seed, first_mover, anchor_index
        )
        low, high = _bootstrap_interval(ratings, resampled, parametric)

    symmetric_wins = wins + (games - wins).T
    games_between = games + games.T
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(games_between > 0, symmetric_wins / np.maximum(games_between, 1e-300), np.nan)
    means = _mean_returns(results, agents)
    rows: list[RatingRow] = [
        {
            "agent": name,
            "rating": float(ratings[i]),
            "low": float(low[i]),
            "high": float(high[i]),
            "games": int(round(games_between[i].sum())),
            "score": float(symmetric_wins[i].sum() / games_between[i].sum()) if games_between[i].sum() else None,
            "mean_payoff": means.get(name),
        }
        for i, name in enumerate(agents)
    ]
    rows.sort(key=lambda row: (-row["rating"], row["agent"]))
    return {
        "kind": "bradley-terry",
        "anchor": anchor if anchor_index is not None else None,
        "rows": rows,
        "agents": agents,
        "win_rate": [[None if math.isnan(x) else float(x) for x in line] for line in rate],
        "first_mover_elo": float(ELO_PER_NAT * eta) if first_mover else None,
        "episodes": n,
    }


def _mean_returns(results: Sequence[Result], agents: Iterable[str]) -> dict[str, float]:
    """Each agent's mean return per seat-episode."""
    totals: dict[str, list[float]] = {name: [] for name in agents}
    for result in results:
        for seat, name in result[1].items():
            totals[name].append(float(result[2].get(seat, 0.0)))
    return {name: float(np.mean(values)) for name, values in totals.items() if values}


# ---------------------------------------------------------- payoff matrices
def payoff_samples(
    results: Sequence[Result], agents: list[str], roles: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Per ordered pair of distinct seats (a, b): (episode, agent of a, agent of b, return of a, role index of a), and
    the role names by index.

    ``M[i][j]`` averages the returns of i's seats over the episodes where j held
    another seat; ``M[i][i]`` comes from episodes where i held several seats (self-play).
    """
    index = {name: k for k, name in enumerate(agents)}
    role_names: dict[str, int] = {}
    episodes, mine, theirs, value, role = [], [], [], [], []
    for e, result in enumerate(results):
        seating, returns = result[1], result[2]
        details = result[3] if len(result) > 3 else None
        for seat_a, name_a in seating.items():
            r = float(returns.get(seat_a, 0.0))
            role_index = role_names.setdefault(role_of(seat_a, details), len(role_names)) if roles else 0
            for seat_b, name_b in seating.items():
                if seat_b == seat_a:
                    continue
                episodes.append(e)
                mine.append(index[name_a])
                theirs.append(index[name_b])
                value.append(r)
                role.append(role_index)
    arrays = (
        np.array(episodes, dtype=np.int64),
        np.array(mine, dtype=np.int64),
        np.array(theirs, dtype=np.int64),
        np.array(value, dtype=float),
        np.array(role, dtype=np.int64),
    )
    return (*arrays, sorted(role_names, key=role_names.__getitem__))


def _cell_means(cell: np.ndarray, value: np.ndarray, weights: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    total = np.bincount(cell, weights=value * weights, minlength=size)
    count = np.bincount(cell, weights=weights, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1e-300), np.nan), count


def _field(matrix: np.ndarray, include_self: bool) -> np.ndarray:
    """Each row's mean over the columns with data (the diagonal only if ``include_self``)."""
    k = matrix.shape[-1]
    masked = matrix.copy()
    if not include_self:
        masked[..., np.arange(k), np.arange(k)] = np.nan
    return _nanmean_rows(masked)


def nash_averaging(antisymmetric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The maximum-entropy Nash equilibrium ``p`` of the symmetric zero-sum game ``A`` and each agent's payoff ``A p`` against it.

    Balduzzi et al. (2018): ``p`` makes no agent gain against it, ``A p <= 0``;
    among such mixtures the one of most entropy is unique. Found by a linear
    program for the equilibrium's value, then maximising entropy over the
    equilibria (SLSQP, from the LP's solution).
    """
    from scipy.optimize import linprog, minimize

    a = np.asarray(antisymmetric, dtype=float)
    k = len(a)
    if k == 1:
        return np.ones(1), np.zeros(1)
    # Variables (p, t): minimise t subject to A p <= t, sum p = 1, p >= 0.
    lp = linprog(
        c=np.r_[np.zeros(k), 1.0],
        A_ub=np.c_[a, -np.ones(k)],
        b_ub=np.zeros(k),
        A_eq=np.r_[np.ones(k), 0.0][None, :],
        b_eq=[1.0],
        bounds=[(0, None)] * k + [(None, None)],
        method="highs",
    )
    p = np.clip(lp.x[:k], 0.0, None)
    p /= p.sum()
    slack = max(float(lp.x[k]), 0.0) + 1e-9
    # Every equilibrium of a zero-sum game is a best response to every other (interchangeability), so the most
    # entropic one lives on the best responses to p: the entropy is maximised over them alone, often a handful of
    # agents, instead of over all k (SLSQP's step costs the cube of its variables).
    support = np.flatnonzero(a @ p >= float(np.max(a @ p)) - 1e-6 * max(1.0, float(np.max(np.abs(a)))))
    if len(support) == 1:
        return p, a @ p
    sub = a[:, support]
    m = len(support)

    def negative_entropy(q: np.ndarray) -> float:
        q = np.clip(q, 1e-12, None)
        return float(np.sum(q * np.log(q)))

    def negative_entropy_gradient(q: np.ndarray) -> np.ndarray:
        return np.log(np.clip(q, 1e-12, None)) + 1.0

    # Exact gradients: SLSQP's finite differences took a pass over every constraint per variable and step.
    refined = minimize(
        negative_entropy,
        p[support] / p[support].sum(),
        jac=negative_entropy_gradient,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * m,
        constraints=[
            {"type": "eq", "fun": lambda q: q.sum() - 1.0, "jac": lambda q: np.ones((1, m))},
            {"type": "ineq", "fun": lambda q: slack - sub @ q, "jac": lambda q: -sub},
        ],
        options={"maxiter": 200, "ftol": 1e-12},
    )
    if refined.success and np.all(sub @ refined.x <= slack + 1e-6):
        p = np.zeros(k)
        p[support] = np.clip(refined.x, 0.0, None)
        p /= p.sum()
    return p, a @ p


def alpha_rank(matrix: np.ndarray, alpha: float = ALPHA_RANK_ALPHA, population: int = ALPHA_RANK_POPULATION) -> np.ndarray:
    """α-Rank's stationary distribution over agents (single population, Omidshafiei et al. 2019).

    A mutant j invades a population of i with the fixation probability of its
    head-to-head advantage ``M[j][i] - M[i][j]`` (payoffs scaled to [-1, 1]);
    pairs that never met are neutral.
    """
    m = np.nan_to_num(np.asarray(matrix, dtype=float))
    k = len(m)
    if k == 1:
        return np.ones(1)
    scale = np.max(np.abs(m)) or 1.0
    advantage = (m.T - m) / scale  # advantage[i][j]: what mutant j gains over resident i
    x = alpha * advantage
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # (1 - e^-x) / (1 - e^-mx), written to stay finite for large |x|; 1/m at x = 0 (neutral drift).
        rho = np.where(
            np.abs(x) < 1e-9,
            1.0 / population,
            np.where(x > 0, -np.expm1(-x) / -np.expm1(-population * x), np.exp((population - 1) * x) * np.expm1(x) / np.expm1(population * x)),
        )
    transition = rho / (k - 1)
    np.fill_diagonal(transition, 0.0)
    np.fill_diagonal(transition, 1.0 - transition.sum(axis=1))
    values, vectors = np.linalg.eig(transition.T)
    stationary = np.abs(np.real(vectors[:, np.argmin(np.abs(values - 1.0))]))
    return stationary / stationary.sum()


def meta_game(table: RatingTable, ranked: Iterable[str], zero_sum: bool) -> MetaGame:
    """The game-theoretic view of a ``payoff`` table: Nash averaging (``zero_sum``) or α-Rank, over its meta-game.

    The meta-game holds only ranked agents, and only agents every pair of which
    was measured (each has a mean payoff against the other): a pair that never
    met is unknown, not a draw, and a provisional agent's few lucky episodes
    would otherwise buy it a share of the equilibrium. Where ranked agents
    never met, the one with the most unmeasured pairs leaves first (then the
    one with fewer episodes, then the last by name) until every pair left was
    measured. Sets the table's ``view`` and each row's ``nash_mass`` and
    ``nash_payoff`` (or ``alpha_rank``), None outside the meta-game; returns
    ``{"agents": the meta-game's agents, "left_out": {agent: why}}``.
    """
    agents = table["agents"]
    index = {name: k for k, name in enumerate(agents)}
    measured = np.array([[count is not None for count in line] for line in table["pairs"]], dtype=bool).reshape(len(agents), len(agents))
    measured &= measured.T
    np.fill_diagonal(measured, True)
    games = {row["agent"]: row["games"] for row in table["rows"]}
    members = sorted(set(ranked) & set(games))
    left_out = {name: "provisional: not ranked, so not in the meta-game" for name in sorted(set(games) - set(members))}
    while members:
        inside = [index[name] for name in members]
        unmet = (~measured[np.ix_(inside, inside)]).sum(axis=1)
        worst = max(range(len(members)), key=lambda k: (unmet[k], -games[members[k]], members[k]))
        if not unmet[worst]:
            break
        never = [other for other in members if not measured[index[members[worst]], index[other]]]
        left_out[members.pop(worst)] = f"never met {', '.join(never)}: only agents whose every pair was measured make up the meta-game"
    inside = [index[name] for name in members]
    # Only the diagonal can be missing here (no self-play), and neither view reads it.
    matrix = np.nan_to_num(
        np.array([[table["payoff"][i][j] if table["payoff"][i][j] is not None else np.nan for j in inside] for i in inside], dtype=float).reshape(
            len(inside), len(inside)
        )
    )
    table["view"] = "nash" if zero_sum else "alpha-rank"
    nash: dict[str, tuple[float, float]] = {}
    stationary: dict[str, float] = {}
    if members:
        if zero_sum:
            mass, against = nash_averaging((matrix - matrix.T) / 2.0)
            nash = {name: (float(mass[k]), float(against[k])) for k, name in enumerate(members)}
        else:
            stationary = {name: float(value) for name, value in zip(members, alpha_rank(matrix))}
    for row in table["rows"]:
        if zero_sum:
            row["nash_mass"], row["nash_payoff"] = nash.get(row["agent"], (None, None))
        else:
            row["alpha_rank"] = stationary.get(row["agent"])
    return {"agents": members, "left_out": left_out}


def payoff_table(results: Sequence[Result], bootstrap: int = BOOTSTRAP, seed: int = BOOTSTRAP_SEED, kind: str = "payoff") -> RatingTable:
    """Expected payoff against the field (``kind="payoff"``) or cross-play team score (``"team"``).

    Every table carries the per-pair mean-payoff matrix with its intervals and
    the episodes of each pair; ``team`` adds the per-role table and the team
    table. Intervals: :func:`bootstrap_se`. The game-theoretic view of a
    ``payoff`` table is :func:`meta_game`'s, over its ranked agents.
    """
    agents = sorted({name for result in results for name in result[1].values()})
    k = len(agents)
    n = len(results)
    episode, mine, theirs, value, role, role_names = payoff_samples(results, agents, roles=kind == "team")
    bounds = score_range([float(v) for result in results for v in result[2].values()])
    cells = mine * k + theirs
    matrix, count = _cell_means(cells, value, np.ones(len(value)), k * k)
    matrix, count = matrix.reshape(k, k), count.reshape(k, k)
    r = len(role_names)
    role_cells = mine * r + role

    def statistic(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rating per agent, matrix) of the episodes weighted by ``weights``."""
        m = _cell_means(cells, value, weights, k * k)[0].reshape(k, k)
        return _field(m, include_self=kind == "team"), m

    rating, _ = statistic(np.ones(len(value)))
    ratings_b = np.full((max(bootstrap, 1) if n else 1, k), np.nan)
    matrices_b = np.full(ratings_b.shape + (k,), np.nan)
    if bootstrap and n:
        for b, counts in enumerate(_bootstrap_counts(n, bootstrap, seed)):
            ratings_b[b], matrices_b[b] = statistic(counts[episode])
    rating_se, cell_se = bootstrap_se(ratings_b), bootstrap_se(matrices_b)
    rows: list[RatingRow] = []
    means = _mean_returns(results, agents)
    # Episodes per agent in one pass: counting them agent by agent went over every result once per agent.
    played = Counter(name for result in results for name in set(result[1].values()))
    for i, name in enumerate(agents):
        if math.isnan(rating[i]):
            continue
        lo, hi = bounded_interval(float(rating[i]), float(rating_se[i]), played[name], bounds, Z95)
        rows.append(
            {
                "agent": name,
                "rating": float(rating[i]),
                "low": lo,
                "high": hi,
                "games": played[name],
                "score": means.get(name),
                "mean_payoff": means.get(name),
            }
        )
    cell_low, cell_high = np.full((k, k), np.nan), np.full((k, k), np.nan)
    for i, j in zip(*np.nonzero(count)):
        cell_low[i, j], cell_high[i, j] = bounded_interval(float(matrix[i, j]), float(cell_se[i, j]), float(count[i, j]), bounds, Z95)
    # Without its rows until the end: they come after a team table's own parts, as the key order of the stored JSON has them.
    table = cast(
        RatingTable,
        {
            "kind": kind,
            "anchor": None,
            "agents": agents,
            "episodes": n,
            "payoff": _nested(matrix),
            "payoff_low": _nested(cell_low),
            "payoff_high": _nested(cell_high),
            "pairs": _nested(np.where(count > 0, count, np.nan)),
            "win_rate": None,
        },
    )
    if kind == "team":
        role_matrix = _cell_means(role_cells, value, np.ones(len(value)), k * r)[0].reshape(k, r)
        table["roles"] = list(role_names)
        table["by_role"] = {
            name: {role_names[q]: float(role_matrix[i, q]) for q in range(r) if not math.isnan(role_matrix[i, q])} for i, name in enumerate(agents)
        }
        table["teams"] = team_table(results, bounds)
    rows.sort(key=lambda row: (-row["rating"], row["agent"]))
    table["rows"] = rows
    return table


def _nanmean_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row's mean over its non-NaN entries (NaN for a row without any)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(matrix, axis=-1)


def _nested(matrix: np.ndarray) -> list[list[float | None]]:
    return [[None if (x is None or math.isnan(x) or math.isinf(x)) else float(x) for x in line] for line in np.asarray(matrix, dtype=float)]


def team_table(results: Sequence[Result], bounds: tuple[float, float]) -> list[TeamRow]:
    """Per line-up (the agents of an episode, with how many seats each held): mean team score (mean return over seats) and
    its interval (:func:`mean_interval`, inside ``bounds``)."""
    scores: dict[str, list[float]] = {}
    for result in results:
        seating, returns = result[1], result[2]
        names = sorted(seating.values())
        lineup = " + ".join(f"{name} ×{names.count(name)}" if names.count(name) > 1 else name for name in dict.fromkeys(names))
        scores.setdefault(lineup, []).append(float(np.mean([returns.get(seat, 0.0) for seat in seating])))
    rows: list[TeamRow] = []
    for lineup, values in scores.items():
        mean, low, high = mean_interval(values, bounds)
        rows.append({"team": lineup, "score": mean, "low": low, "high": high, "episodes": len(values)})
    rows.sort(key=lambda row: (-row["score"], row["team"]))
    return rows


def mean_scores(results: Sequence[Result]) -> RatingTable:
    """The single-agent table of ``results``: rows of agent, mean return per seat, 95% interval (:func:`mean_interval`), episodes."""
    by_agent: dict[str, list[float]] = {}
    for result in results:
        for seat, name in result[1].items():
            by_agent.setdefault(name, []).append(float(result[2].get(seat, 0.0)))
    bounds = score_range([value for values in by_agent.values() for value in values])
    rows: list[RatingRow] = []
    for name, values in by_agent.items():
        mean, low, high = mean_interval(values, bounds)
        rows.append({"agent": name, "rating": mean, "low": low, "high": high, "games": len(values), "score": mean, "mean_payoff": mean})
    rows.sort(key=lambda row: (-row["rating"], row["agent"]))
    return {"kind": "score", "anchor": None, "rows": rows, "agents": sorted(by_agent), "win_rate": None, "episodes": len(results)}


def role_table(results: Sequence[Result], fixed_roles: bool = False) -> RatingTable:
    """The ``roles`` table: one row per (agent, role) of its mean return in that role, with its interval (:func:`mean_interval`).

    An episode counts once for an agent in a role: where it held several seats of the role (self-play), their mean.
    """
    by_key: dict[tuple[str, str], list[float]] = {}
    for result in results:
        details = result[3] if len(result) > 3 else None
        seats: dict[tuple[str, str], list[float]] = {}
        for seat, name in result[1].items():
            seats.setdefault((name, role_of(seat, details, fixed_roles)), []).append(float(result[2].get(seat, 0.0)))
        for key, values in seats.items():
            by_key.setdefault(key, []).append(sum(values) / len(values))
    bounds = score_range([float(v) for result in results for v in result[2].values()])
    rows: list[RatingRow] = []
    for (name, role), values in by_key.items():
        mean, low, high = mean_interval(values, bounds)
        rows.append({"agent": name, "role": role, "rating": mean, "low": low, "high": high, "games": len(values), "score": mean, "mean_payoff": mean})
    return {
        "kind": "roles",
        "anchor": None,
        "rows": rows,
        "agents": sorted({name for name, _ in by_key}),
        "roles": sorted({role for _, role in by_key}),
        "win_rate": None,
        "episodes": len(results),
    }


def negotiation_metrics(results: Sequence[Result]) -> list[NegotiationRow]:
    """Per agent: agreement rate, mean utility, mean welfare, and mean Pareto and Nash-bargaining distances of its episodes."""
    keys = {"agreement": "agreement_rate", "social_welfare": "welfare", "pareto_distance": "pareto_distance", "nash_distance": "nash_distance"}
    per_agent: dict[str, dict[str, list[float]]] = {}
    for result in results:
        outcome = result[3] if len(result) > 3 else None
        details = outcome.get("details", {}) if outcome is not None else {}
        for seat, name in result[1].items():
            entry = per_agent.setdefault(name, {"utility": []})
            entry["utility"].append(float(result[2].get(seat, 0.0)))
            for key, label in keys.items():
                if key in details:
                    entry.setdefault(label, []).append(float(details[key]))
    rows: list[NegotiationRow] = []
    for name, entry in sorted(per_agent.items()):
        mean = {label: float(np.mean(entry[label])) if entry.get(label) else None for label in ("utility", *keys.values())}
        rows.append(
            {
                "agent": name,
                "episodes": len(entry["utility"]),
                "utility": mean["utility"],
                "agreement_rate": mean["agreement_rate"],
                "welfare": mean["welfare"],
                "pareto_distance": mean["pareto_distance"],
                "nash_distance": mean["nash_distance"],
            }
        )
    return rows


def _rated(
    method: str,
    results: Sequence[Result],
    bootstrap: int,
    players: Sequence[str] | None,
    simultaneous: bool,
    fixed_roles: bool,
    category: str,
) -> RatingTable:
    """The table ``method`` gives ``results`` (not empty), before ranks and the meta-game."""
    table = METHODS[method].table(RatingInput(results, bootstrap, players, simultaneous, fixed_roles, method))
    if category == "negotiation":
        table["negotiation"] = negotiation_metrics(results)
    return table


def env_table(
    results: Sequence[Result],
    seats: int,
    bootstrap: int = BOOTSTRAP,
    category: str = "game",
    zero_sum: bool = True,
    players: Sequence[str] | None = None,
    simultaneous: bool = False,
    fixed_roles: bool = False,
) -> RatingTable:
    """The rating table of one environment, by the method its category declares (see the module docstring).

    ``fixed_roles`` (``Game.fixed_roles``): each seat is a role, and the table is rated per role.
    Ranked rows (:func:`standings`) are rated on the episodes among ranked agents alone, so a
    provisional agent's games move none of their figures; a provisional row is rated on all the
    counted episodes, beside them. ``ranked_episodes`` counts the former.
    """
    results = sorted(results, key=lambda result: result[0])
    method = method_for(category, zero_sum, seats, results, fixed_roles)
    by_role = method == "roles"
    ranked, standing = standings(results, seats, by_role=by_role, fixed_roles=fixed_roles)
    provisional = any(entry["provisional"] for entry in standing.values())
    core = [result for result in results if units_of(result, by_role, fixed_roles) <= ranked] if provisional else results
    if not results:
        table: RatingTable = {"kind": method, "anchor": None, "rows": [], "agents": [], "win_rate": None, "episodes": 0}
    else:
        table = _rated(method, results, bootstrap, players, simultaneous, fixed_roles, category)
        if core and len(core) < len(results):
            _rank_on_core(table, _rated(method, core, bootstrap, players, simultaneous, fixed_roles, category))
        if method == "payoff":
            table["meta_game"] = meta_game(table, {name for name, _ in ranked}, zero_sum)
    table["rows"] = rank_rows(table["rows"], standing)
    table["ranked_episodes"] = len(core)
    table["min_episodes"], table["min_opponents"] = MIN_EPISODES, MIN_OPPONENTS
    table["method"] = method
    table["sentence"] = METHODS[method].sentence
    table["value"] = METHODS[method].value
    table["digits"] = METHODS[method].digits
    table["score_rate"] = METHODS[method].score_rate
    table["category"] = category
    return table


#: The key of a table's matrix (see :data:`MATRICES`).
MatrixKey = Literal["win_rate", "payoff", "payoff_low", "payoff_high", "pairs"]
#: The matrices of a table, each agent by agent (``table["agents"]``), whose cells between ranked agents come from their episodes alone.
MATRICES: tuple[MatrixKey, ...] = ("win_rate", "payoff", "payoff_low", "payoff_high", "pairs")


def _rank_on_core(table: RatingTable, core: RatingTable) -> None:
    """Give ``table`` (of every episode) the ranked agents' figures from ``core``, the table of the episodes among them.

    Ranked rows, the matrices' cells between ranked agents, the per-agent tables beside them (negotiation
    metrics, payoff by role) and the first-mover term come from ``core``; provisional rows stay as the
    table of every episode rates them. On the Bradley–Terry scale, where ``core`` has no ``random``
    to anchor it (the mean of its agents is the 1000), the provisional rows are shifted by as much as
    the ranked agents' mean moves between the two fits, so both stand on one scale.
    """
    inside = {(row["agent"], row.get("role")) for row in core["rows"]}
    if table["kind"] == "bradley-terry" and core["anchor"] is None:
        whole = {row["agent"]: row["rating"] for row in table["rows"]}
        shift = float(np.mean([row["rating"] - whole[row["agent"]] for row in core["rows"]]))
        for row in table["rows"]:
            for key in ("rating", "low", "high"):
                row[key] += shift
        table["anchor"] = None
    table["rows"] = core["rows"] + [row for row in table["rows"] if (row["agent"], row.get("role")) not in inside]
    index = {name: k for k, name in enumerate(table["agents"])}
    where = [index[name] for name in core["agents"]]
    for key in MATRICES:
        matrix = table.get(key)
        if matrix is not None:
            ranked = core.get(key)
            assert ranked is not None, "both tables are of one method, so they hold the same matrices"
            for i, line in zip(where, ranked):
                for j, value in zip(where, line):
                    matrix[i][j] = value
    if table.get("first_mover_elo") is not None:
        table["first_mover_elo"] = core["first_mover_elo"]
    if "negotiation" in table:
        mine = {row["agent"] for row in core["negotiation"]}
        table["negotiation"] = sorted(
            core["negotiation"] + [row for row in table["negotiation"] if row["agent"] not in mine], key=lambda row: row["agent"]
        )
    if "by_role" in table:
        table["by_role"].update(core["by_role"])


#: One rating unit: an agent, and its role in a table rated per role (None elsewhere).
Unit = tuple[str, str | None]


def units_of(result: Result, by_role: bool = False, fixed_roles: bool = False) -> frozenset[Unit]:
    """The rating units (agent, role or None) an episode holds; roles only where the table is rated per role (``by_role``)."""
    if by_role:
        details = result[3] if len(result) > 3 else None
        return frozenset((name, role_of(seat, details, fixed_roles)) for seat, name in result[1].items())
    return _agent_units(tuple(result[1].values()))


@functools.lru_cache(maxsize=1 << 16)
def _agent_units(names: tuple[str, ...]) -> frozenset[Unit]:
    # Cached: a board's episodes repeat a few line-ups, and building the set for each of 100,000 episodes was most of the cost.
    return frozenset((name, None) for name in names)


def _meetings(lineups: Counter, active: set[Unit]) -> tuple[Counter, dict[Unit, set[str]]]:
    """Each unit's episode count and the other agents it met, over the episodes whose every unit is ``active``
    (``lineups``: how many episodes hold each set of units)."""
    episodes: Counter = Counter()
    met: dict[Unit, set[str]] = {unit: set() for unit in active}
    for held, count in lineups.items():
        if held <= active:
            names = {name for name, _ in held}
            for unit in held:
                episodes[unit] += count
                met[unit] |= names - {unit[0]}
    return episodes, met


def _more(count: int, noun: str) -> str:
    return f"one more {noun}" if count == 1 else f"{count} more {noun}s"


def standings(
    results: Sequence[Result],
    seats: int,
    by_role: bool = False,
    fixed_roles: bool = False,
    min_episodes: int = MIN_EPISODES,
    min_opponents: int = MIN_OPPONENTS,
) -> tuple[set[Unit], dict[Unit, Standing]]:
    """Which units (:func:`units_of`) are ranked, and each unit's standing: ``episodes``, ``opponents``, ``provisional``, ``needs``.

    A unit is ranked with at least ``min_episodes`` episodes and (several seats) as many distinct
    other agents met as ``min_opponents``, or as the ranked units of its role hold besides it,
    counting only episodes whose every unit is ranked: so a provisional agent's games neither lift
    another agent to a rank nor, by adding an opponent it must have met, take one away. Found by
    setting aside, round by round, every unit short of episodes (that never recovers, as the
    episodes counted only shrink), else the one unit short of opponents with the least evidence
    over every episode (fewest episodes, then fewest agents met, then name), until every unit
    left passes. A provisional unit's ``provisional`` says where it fell short when it was set aside,
    and ``needs`` what it still needs ("12 more episodes and one more opponent"); its ``episodes``
    and ``opponents`` count every episode, a ranked unit's the episodes among ranked units.
    """
    if by_role:
        lineups = Counter(units_of(result, by_role, fixed_roles) for result in results)
    else:
        # Counted by the seating's names first: a tuple per episode is cheaper than a set of units per episode.
        lineups = Counter()
        for names, count in Counter(tuple(result[1].values()) for result in results).items():
            lineups[_agent_units(names)] += count
    active: set[Unit] = set().union(*lineups)
    everything = _meetings(lineups, active)
    evidence = {unit: (everything[0][unit], len(everything[1][unit]), unit[0], unit[1] or "") for unit in active}
    standing: dict[Unit, Standing] = {}
    episodes, met = everything
    while active:
        size = Counter(role for _, role in active)
        needed = {unit: min(min_opponents, size[unit[1]] - 1) if seats > 1 else 0 for unit in active}
        thin = {unit for unit in active if episodes[unit] < min_episodes}
        short = [unit for unit in active if unit not in thin and len(met[unit]) < needed[unit]]
        if not thin and not short:
            break
        for unit in thin or {min(short, key=evidence.__getitem__)}:
            # Said "against agents that are not provisional" only where setting others aside took something away.
            whole = (episodes[unit], len(met[unit])) == (everything[0][unit], len(everything[1][unit]))
            provisional, needs = _shortfall(episodes[unit], len(met[unit]), needed[unit], min_episodes, whole)
            standing[unit] = {"provisional": provisional, "needs": needs, "episodes": everything[0][unit], "opponents": len(everything[1][unit])}
            active.discard(unit)
        episodes, met = _meetings(lineups, active)
    for unit in active:
        standing[unit] = {"episodes": episodes[unit], "opponents": len(met[unit]), "provisional": None, "needs": None}
    return active, standing


def _shortfall(episodes: int, met: int, needed: int, min_episodes: int, everything: bool) -> tuple[str, str]:
    """Why a unit is provisional and what it still needs (``provisional``, ``needs``), from what it had when it was set aside (``everything``:
    the same as over every episode; else less, counting only the episodes among units not set aside before it)."""
    among = "" if everything else " against agents that are not provisional"
    reasons, needs = [], []
    if episodes < min_episodes:
        reasons.append(f"{episodes} episodes{among}, under the {min_episodes} a rank needs")
        needs.append(_more(min_episodes - episodes, "episode"))
    if met < needed:
        reasons.append(f"met {met} other agent(s){' that are not provisional' if among else ''}, under the {needed} a rank needs")
        needs.append(_more(needed - met, "opponent"))
    need = " and ".join(needs) + (", against ranked agents" if among else "")
    return "; ".join(reasons) + f": it needs {need}", need


def rank_rows(rows: list[RatingRow], standing: dict[Unit, Standing]) -> list[RatingRow]:
    """``rows`` with their :func:`standings` (``episodes``, ``opponents``, ``provisional``: why not ranked, or None,
    ``needs``), ``rank`` and ``rank_low``/``rank_high`` (the ranks their intervals allow).

    Ranked rows come first, best rating first; provisional ones follow, unranked. Rows with a
    ``role`` (a ``roles`` table) are ranked within their role, roles in name order.
    """
    groups: dict[str | None, list[RatingRow]] = {}
    for row in rows:
        row.update(standing[(row["agent"], row.get("role"))])
        groups.setdefault(row.get("role"), []).append(row)
    ordered: list[RatingRow] = []
    for role in sorted(groups, key=lambda role: role or ""):
        group = groups[role]
        ranked = sorted((row for row in group if row["provisional"] is None), key=lambda row: (-row["rating"], row["agent"]))
        for position, row in enumerate(ranked, 1):
            row["rank"] = position
            row["rank_low"] = 1 + sum(other["low"] > row["high"] for other in ranked if other is not row)
            row["rank_high"] = 1 + sum(other["high"] > row["low"] for other in ranked if other is not row)
        waiting = sorted((row for row in group if row["provisional"] is not None), key=lambda row: (-row["rating"], row["agent"]))
        for row in waiting:
            row["rank"] = row["rank_low"] = row["rank_high"] = None
        ordered += ranked + waiting
    return ordered


def normalised(table: RatingTable, references: Iterable[str], anchor: str = ANCHOR, higher_is_better: bool = True) -> Normalised:
    """How ``table`` goes on the 0 (``anchor``) to 100 (its strongest reference) scale, or why it does not.

    ``references`` are the game's declared reference agents (``Game.reference_agents``); the 100 is
    the best rated of those (``anchor`` aside) whose 95% interval lies wholly on the better side of
    the anchor's (``higher_is_better`` says which side that is), so a reference that is not
    measured to beat ``random`` can never turn the scale upside down. Returns
    ``{"normalised", "reason", "reference", "reference_score", "scores"}``: ``scores`` maps each
    agent to its ``score``, ``low`` and ``high`` on the scale, ``reference_score`` is the
    reference's own (its 100) (None, with ``normalised`` false and the ``reason`` in words, where
    no reference qualifies).

    A ``roles`` table is normalised role by role (each role's ``random`` is its 0 and its strongest
    measured reference its 100); an agent's score is its mean over the normalised roles, a role it
    did not hold counting 0, and a role that cannot be normalised is left out, its reason given.
    """
    if table.get("kind") == "roles":
        return _normalised_by_role(table, tuple(references), anchor, higher_is_better)
    return _normalised_rows(table["rows"], references, anchor, higher_is_better)


def _normalised_by_role(table: RatingTable, references: tuple[str, ...], anchor: str, higher_is_better: bool) -> Normalised:
    """:func:`normalised` of a ``roles`` table: each role on its own scale, then each agent's mean over the roles."""
    parts = {
        role: _normalised_rows([row for row in table["rows"] if row["role"] == role], references, anchor, higher_is_better)
        for role in table.get("roles", [])
    }
    usable = {role: part for role, part in parts.items() if part["normalised"]}
    reason = "; ".join(
        f"{role}: {part['reason']}" if part["normalised"] else f"{role}: not normalised, {part['reason']}" for role, part in parts.items()
    )
    if not usable:
        return {"normalised": False, "reason": reason or "no role has been played", "reference": None, "reference_score": None, "scores": None}

    def combined(entries: list[Scaled]) -> Scaled:
        # A role not held adds 0 with no uncertainty, as an environment not played does overall.
        score = sum(entry["score"] for entry in entries) / len(usable)
        below = math.sqrt(sum((entry["score"] - entry["low"]) ** 2 for entry in entries)) / len(usable)
        above = math.sqrt(sum((entry["high"] - entry["score"]) ** 2 for entry in entries)) / len(usable)
        return {"score": score, "low": score - below, "high": score + above}

    agents = sorted({name for part in usable.values() for name in _scores(part)})
    scores = {name: combined([_scores(part)[name] for part in usable.values() if name in _scores(part)]) for name in agents}
    reference = ", ".join(f"{part['reference']} ({role})" for role, part in usable.items())
    return {
        "normalised": True,
        "reason": reason,
        "reference": reference,
        "reference_agents": sorted({name for part in usable.values() for name in part["reference_agents"]}),
        "reference_score": combined([_reference_score(part) for part in usable.values()]),
        "scores": scores,
    }


def _normalised_rows(table_rows: list[RatingRow], references: Iterable[str], anchor: str, higher_is_better: bool) -> Normalised:
    """:func:`normalised` of one rating unit's rows (an environment, or one role of it)."""
    # Provisional entries are too thin to be a reference or to be scored: they count as not played.
    rows = {row["agent"]: row for row in table_rows if not row.get("provisional")}
    declared = [name for name in references if name != anchor]

    def refuse(reason: str) -> Normalised:
        return {"normalised": False, "reason": reason, "reference": None, "reference_score": None, "scores": None}

    if not declared:
        return refuse("the environment declares no strong reference agent")
    if anchor not in rows:
        return refuse(f"{anchor} has not played here (or too little to be ranked)")
    played = [name for name in declared if name in rows]
    if not played:
        return refuse(f"no reference agent ({', '.join(declared)}) has played here enough to be ranked")
    zero_row = rows[anchor]
    sign = 1.0 if higher_is_better else -1.0

    def above_anchor(row: RatingRow) -> bool:
        # Compared on the "better is larger" axis: the reference's worse end beats the anchor's better end.
        worse_end = row.get("low", row["rating"]) if higher_is_better else row.get("high", row["rating"])
        better_end = zero_row.get("high", zero_row["rating"]) if higher_is_better else zero_row.get("low", zero_row["rating"])
        return sign * (worse_end - better_end) > 0

    strong = [name for name in played if above_anchor(rows[name])]
    if not strong:
        measured = "; ".join(
            f"{name} {rows[name]['rating']:.4g} [{rows[name].get('low', rows[name]['rating']):.4g}, "
            f"{rows[name].get('high', rows[name]['rating']):.4g}]"
            for name in played
        )
        return refuse(
            f"no reference agent is measured better than {anchor} "
            f"({measured}; {anchor} {zero_row['rating']:.4g} [{zero_row.get('low', zero_row['rating']):.4g}, "
            f"{zero_row.get('high', zero_row['rating']):.4g}])"
        )
    reference = max(strong, key=lambda name: sign * rows[name]["rating"])
    zero, hundred = zero_row["rating"], rows[reference]["rating"]

    def scale(value: float) -> float:
        return 100.0 * (value - zero) / (hundred - zero)

    scores: dict[str, Scaled] = {}
    for name, row in rows.items():
        ends = sorted((scale(row.get("low", row["rating"])), scale(row.get("high", row["rating"]))))
        scores[name] = {"score": scale(row["rating"]), "low": ends[0], "high": ends[1]}
    return {
        "normalised": True,
        "reason": f"{anchor} is 0 and {reference} is 100",
        "reference": reference,
        "reference_agents": [reference],
        "reference_score": scores[reference],
        "scores": scores,
    }


def _scores(entry: Normalised) -> dict[str, Scaled]:
    """The scaled scores of a table that is ``normalised`` (only such a table has them)."""
    scores = entry["scores"]
    assert scores is not None, f"a table that is not normalised has no scores: {entry['reason']}"
    return scores


def _reference_score(entry: Normalised) -> Scaled:
    """The scaled score of the reference of a table that is ``normalised`` (only such a table has one)."""
    score = entry["reference_score"]
    assert score is not None, f"a table that is not normalised has no reference: {entry['reason']}"
    return score


def overall(normalised_by_env: dict[str, Normalised], categories: dict[str, str] | None = None) -> OverallTable:
    """The overall table over every environment, and one per category (``categories``: env id to category).

    ``normalised_by_env`` maps env ids to what :func:`normalised` made of their tables. Each
    agent's score is its mean normalised score over all the table's environments, one it did not
    play counting 0 (``random``'s), with a 95% interval from the environments' own (independent,
    normal); ``coverage`` is the share it played and ``played_mean`` its mean where it played.
    ``reference`` is the row of each environment's 100 (its strongest measured reference).
    Environments that could not be normalised are left out and listed under ``unnormalised``,
    with each one's reason in ``reasons``.
    """
    table = _aggregate(normalised_by_env)
    if categories is not None:
        table["categories"] = {}
        for category in CATEGORY_TITLES:
            scope = {env: scores for env, scores in normalised_by_env.items() if categories.get(env) == category}
            if scope:
                table["categories"][category] = _aggregate(scope)
        others = {env: scores for env, scores in normalised_by_env.items() if categories.get(env) not in CATEGORY_TITLES}
        if others:
            table["categories"]["other"] = _aggregate(others)
    return table


def _aggregate(normalised_by_env: dict[str, Normalised]) -> OverallTable:
    usable = {env: _scores(entry) for env, entry in normalised_by_env.items() if entry["normalised"]}
    references = {env: normalised_by_env[env]["reference"] for env in sorted(usable)}
    per_agent: dict[str, dict[str, Scaled]] = {}
    for env, scores in usable.items():
        for name, value in scores.items():
            per_agent.setdefault(name, {})[env] = value
    total = len(usable)

    def row_of(agent: str, envs: dict[str, Scaled]) -> OverallRow:
        # Unplayed environments add 0 with no uncertainty: the score is what the agent showed, spread over the whole table.
        score = sum(entry["score"] for entry in envs.values()) / total
        half = [max(entry["high"] - entry["score"], entry["score"] - entry["low"]) for entry in envs.values()]
        spread = math.sqrt(sum(h * h for h in half)) / total
        return {
            "agent": agent,
            "score": score,
            "low": score - spread,
            "high": score + spread,
            "environments": len(envs),
            "coverage": len(envs) / total,
            "played_mean": float(np.mean([entry["score"] for entry in envs.values()])),
            "envs": {env: entry["score"] for env, entry in envs.items()},
        }

    rows = sorted((row_of(name, envs) for name, envs in per_agent.items()), key=lambda row: (-row["score"], row["agent"]))
    reference = None
    if total:
        reference = row_of("reference (best built-in per environment)", {env: _reference_score(normalised_by_env[env]) for env in references})
        reference["names"] = references
    unnormalised = sorted(set(normalised_by_env) - set(usable))
    return {
        "rows": rows,
        "reference": reference,
        "environments": sorted(usable),
        "unnormalised": unnormalised,
        "reference_agents": sorted({name for env in references for name in normalised_by_env[env]["reference_agents"]}),
        "reasons": {env: normalised_by_env[env]["reason"] for env in unnormalised},
        "references": references,
    }
