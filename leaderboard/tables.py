"""The declared types of the leaderboard's rating tables, as :mod:`parlour.leaderboard.ratings` writes them and the
store, the API, the site and the command line read them.

Types alone, in a module of their own: the store keeps the tables and the ratings read the store's episodes, so
neither declares what the other names.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

#: A matrix agent by agent (``table["agents"]``): a value per pair, None where the pair has none.
Matrix = list[list[float | None]]


class Standing(TypedDict):
    """Where a rating unit stands (:func:`~parlour.leaderboard.ratings.standings`): its ``episodes`` and distinct ``opponents`` met (among ranked
    units for a ranked one, over every episode for a provisional one), why it is ``provisional`` (None when ranked)
    and what it still ``needs`` (None when ranked)."""

    provisional: str | None
    needs: str | None
    episodes: int
    opponents: int


class RatingRow(TypedDict):
    """One row of a rating table: an agent (in a ``roles`` table, an agent in one ``role``) and its figures.

    Every method gives ``rating`` (the method's value) with its 95% interval ``low``..``high``, ``games`` (the
    episodes or pairwise games it counted), ``score`` (the score rate, or the mean return) and ``mean_payoff``;
    :func:`~parlour.leaderboard.ratings.rank_rows` adds the :class:`Standing` keys and ``rank``, ``rank_low`` and ``rank_high`` (None for a
    provisional row); :func:`~parlour.leaderboard.ratings.meta_game` adds ``nash_mass`` and ``nash_payoff`` (zero-sum) or ``alpha_rank`` (None
    outside the meta-game); the leaderboard adds ``exploitability`` and its note where it is measurable.
    """

    agent: str
    rating: float
    low: float
    high: float
    games: int
    score: float | None
    mean_payoff: float | None
    role: NotRequired[str]
    provisional: NotRequired[str | None]
    needs: NotRequired[str | None]
    episodes: NotRequired[int]
    opponents: NotRequired[int]
    rank: NotRequired[int | None]
    rank_low: NotRequired[int | None]
    rank_high: NotRequired[int | None]
    nash_mass: NotRequired[float | None]
    nash_payoff: NotRequired[float | None]
    alpha_rank: NotRequired[float | None]
    exploitability: NotRequired[float | None]
    exploitability_note: NotRequired[str | None]


class TeamRow(TypedDict):
    """One line-up of a ``team`` table (:func:`~parlour.leaderboard.ratings.team_table`): its mean team ``score``, 95% interval and ``episodes``."""

    team: str
    score: float
    low: float
    high: float
    episodes: int


class NegotiationRow(TypedDict):
    """One agent's negotiation figures (:func:`~parlour.leaderboard.ratings.negotiation_metrics`), None where no episode of it reported them."""

    agent: str
    episodes: int
    utility: float | None
    agreement_rate: float | None
    welfare: float | None
    pareto_distance: float | None
    nash_distance: float | None


class MetaGame(TypedDict):
    """The meta-game of a ``payoff`` table (:func:`~parlour.leaderboard.ratings.meta_game`): its agents, and why each other agent is left out."""

    agents: list[str]
    left_out: dict[str, str]


class TeamReferences(TypedDict):
    """The reference points of a cooperative game's table: the ``random`` team's score and the best scripted team."""

    random: float | None
    baseline: dict[str, str | float] | None


class RatingTable(TypedDict):
    """One environment's rating table (:func:`~parlour.leaderboard.ratings.env_table`), as the site, the server and the command line read it.

    Every method gives ``kind`` (the method), ``anchor`` (the agent at the scale's fixed point, or None),
    ``rows``, ``agents`` (sorted; the matrices' order), ``win_rate`` (Bradley–Terry's score-rate matrix, else None)
    and ``episodes``. Bradley–Terry adds ``first_mover_elo``; ``payoff`` and ``team`` the payoff matrix with its
    interval ends and the episodes per pair (``pairs``), ``payoff`` the :func:`~parlour.leaderboard.ratings.meta_game` and its ``view``; ``team``
    and ``roles`` name the ``roles``, and ``team`` adds the mean return per agent and role (``by_role``) and the
    line-ups' ``teams``; a negotiation adds ``negotiation``. :func:`~parlour.leaderboard.ratings.env_table` adds the ranking's thresholds, the
    method's display rule and the category; the leaderboard adds ``env_id``, ``counted``, ``format`` and, where
    they apply, the ``exploitability`` sentence and the team ``references``.
    """

    kind: str
    anchor: str | None
    rows: list[RatingRow]
    agents: list[str]
    win_rate: Matrix | None
    episodes: int
    first_mover_elo: NotRequired[float | None]
    payoff: NotRequired[Matrix]
    payoff_low: NotRequired[Matrix]
    payoff_high: NotRequired[Matrix]
    pairs: NotRequired[Matrix]
    roles: NotRequired[list[str]]
    by_role: NotRequired[dict[str, dict[str, float]]]
    teams: NotRequired[list[TeamRow]]
    negotiation: NotRequired[list[NegotiationRow]]
    meta_game: NotRequired[MetaGame]
    view: NotRequired[str]
    ranked_episodes: NotRequired[int]
    min_episodes: NotRequired[int]
    min_opponents: NotRequired[int]
    method: NotRequired[str]
    sentence: NotRequired[str]
    value: NotRequired[str]
    digits: NotRequired[int]
    score_rate: NotRequired[bool]
    category: NotRequired[str]
    env_id: NotRequired[str]
    counted: NotRequired[bool]
    format: NotRequired[int]
    exploitability: NotRequired[str]
    references: NotRequired[TeamReferences]


class Scaled(TypedDict):
    """A score on the 0 (``random``) to 100 (the strongest reference) scale, with its 95% interval."""

    score: float
    low: float
    high: float


class Normalised(TypedDict):
    """How a table goes on the 0 to 100 scale (:func:`~parlour.leaderboard.ratings.normalised`), or why it does not.

    ``reference`` names the 100 (in a ``roles`` table, each role's), ``reference_agents`` those agents,
    ``reference_score`` the reference's own scaled score and ``scores`` each agent's; the last three are
    None, and ``reference_agents`` absent, where the table is not ``normalised``, as ``reason`` says.
    """

    normalised: bool
    reason: str
    reference: str | None
    reference_agents: NotRequired[list[str]]
    reference_score: Scaled | None
    scores: dict[str, Scaled] | None


class OverallRow(TypedDict):
    """One agent's row of the overall table (:func:`~parlour.leaderboard.ratings.overall`): its mean normalised ``score`` with its interval, the
    ``environments`` it played, their share (``coverage``), its ``played_mean`` there and its score in each (``envs``).
    The reference row adds ``names``, the reference agent of each environment."""

    agent: str
    score: float
    low: float
    high: float
    environments: int
    coverage: float
    played_mean: float
    envs: dict[str, float]
    names: NotRequired[dict[str, str | None]]


class OverallTable(TypedDict):
    """The overall table (:func:`~parlour.leaderboard.ratings.overall`), and each category's under ``categories`` (the overall one alone has them)."""

    rows: list[OverallRow]
    reference: OverallRow | None
    environments: list[str]
    unnormalised: list[str]
    reference_agents: list[str]
    reasons: dict[str, str]
    references: dict[str, str | None]
    categories: NotRequired[dict[str, OverallTable]]
