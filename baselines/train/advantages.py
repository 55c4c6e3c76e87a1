"""Advantage estimators for the LLM trainer: pure numpy functions on the turn table.

The turn table holds one row per decision of a trained seat, as columns of equal
length (a mapping from column name to a 1-d array):

* ``episode``: the episode's id, unique in the batch;
* ``env_id`` and ``seed``: the environment and the game seed of the episode;
* ``seat``: the player who acted;
* ``turn``: the row's position among that seat's own turns in the episode (0, 1, ...);
* ``reward``: the reward of the turn: what the seat was paid from this action until
  its next one (the final reward lands on its last turn), plus the trainer's penalty
  if the action was invalid; a seat's turn rewards add up to its return;
* ``episode_return``: the seat's return over the whole episode (the same on each of its rows);
* ``state``: a hash of the acting player's own view at the decision (only :func:`gigpo` reads it).

Every estimator returns one advantage per row. Group statistics use the
unbiased standard deviation (``ddof=1``, as ``torch.std`` in the reference
implementations); a group of one has standard deviation 1 and mean equal to
its only member, so its advantage is 0. ``eps`` guards the division.

Choose one by name with :func:`compute_advantages`: ``grpo``, ``rae``,
``turn_rtg``, ``gigpo`` (:data:`ESTIMATORS`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Callable

import numpy as np

#: The columns every estimator reads (``state`` only for gigpo).
COLUMNS = ("episode", "env_id", "seed", "seat", "turn", "reward", "episode_return")

Table = Mapping[str, Any]


def _column(table: Table, name: str) -> np.ndarray:
    if name not in table:
        raise KeyError(f"the turn table has no column {name!r}; it needs {', '.join(COLUMNS)} (and 'state' for gigpo)")
    return np.asarray(table[name])


def _keys(table: Table, *names: str) -> list[tuple[Hashable, ...]]:
    columns = [_column(table, name).tolist() for name in names]
    return list(zip(*columns))


def _normalise(values: np.ndarray, keys: Sequence[Hashable], eps: float) -> np.ndarray:
    """``(x - mean_g) / (std_g + eps)`` within each group ``g`` of equal keys (std 1 for a group of one)."""
    out = np.zeros(len(values), dtype=np.float64)
    groups: dict[Hashable, list[int]] = {}
    for row, key in enumerate(keys):
        groups.setdefault(key, []).append(row)
    for rows in groups.values():
        members = values[rows]
        std = members.std(ddof=1) if len(rows) > 1 else 1.0
        out[rows] = (members - members.mean()) / (std + eps)
    return out


def _episode_normalised(table: Table, group_columns: tuple[str, ...], eps: float) -> np.ndarray:
    """Episode returns normalised within groups, counting each (episode, seat) once, spread back to its rows."""
    episodes = _keys(table, "episode", "seat")
    groups = _keys(table, *group_columns)
    returns = _column(table, "episode_return").astype(np.float64)
    first: dict[tuple[Hashable, ...], int] = {}
    for row, key in enumerate(episodes):
        first.setdefault(key, row)
    rows = list(first.values())
    normalised = _normalise(returns[rows], [groups[row] for row in rows], eps)
    by_episode = dict(zip(first, normalised))
    return np.array([by_episode[key] for key in episodes], dtype=np.float64)


def _returns_to_go(table: Table, gamma: float) -> np.ndarray:
    """``G_t = r_t + gamma * G_{t+1}`` over each seat's own turns of each episode, in ``turn`` order."""
    rewards = _column(table, "reward").astype(np.float64)
    turns = _column(table, "turn")
    out = np.zeros(len(rewards), dtype=np.float64)
    trajectories: dict[tuple[Hashable, ...], list[int]] = {}
    for row, key in enumerate(_keys(table, "episode", "seat")):
        trajectories.setdefault(key, []).append(row)
    for rows in trajectories.values():
        running = 0.0
        for row in sorted(rows, key=lambda r: turns[r], reverse=True):
            running = rewards[row] + gamma * running
            out[row] = running
    return out


def grpo(table: Table, state: Any = None, *, eps: float = 1e-6) -> tuple[np.ndarray, Any]:
    """Group-relative advantage (GRPO, Shao et al. 2024, arXiv:2402.03300), groups sharing env, seed and seat.

    For the episodes ``i`` of a group ``g = (env_id, seed, seat)`` (the same
    deal played several times from the same seat) with returns ``R_i``::

        A_i = (R_i - mean_{j in g} R_j) / (std_{j in g} R_j + eps)

    and every turn of episode ``i`` gets ``A_i``. Each episode counts once in
    the statistics, however many turns it has. ``state`` is passed through.
    """
    return _episode_normalised(table, ("env_id", "seed", "seat"), eps), state


def rae(table: Table, state: Mapping[Hashable, float] | None = None, *, decay: float = 0.95) -> tuple[np.ndarray, dict]:
    """SPIRAL's role-conditioned advantage estimation (Liu et al. 2025, arXiv:2506.24119).

    One baseline ``b[G, p]`` per game ``G`` (``env_id``) and role ``p``
    (``seat``), an exponential moving average of that role's returns. The
    episodes are taken in ascending ``episode`` order; for each (episode, seat)
    with return ``R``::

        A = R - b[G, p]                              (the baseline before this episode)
        b[G, p] <- decay * b[G, p] + (1 - decay) * R

    and every turn of the episode gets ``A``. Baselines start at 0. This is the
    update of the reference implementation (github.com/spiral-rl/spiral,
    ``train_spiral.py``: the baseline is read before it is updated, so the
    advantage does not depend on its own return; ``role_baseline_ema_gamma = 0.95``).

    ``state`` is the baselines dict ``{(env_id, seat): b}`` from the previous
    call (``None`` to start); the updated copy is returned beside the advantages.
    """
    if not 0.0 <= decay < 1.0:
        raise ValueError(f"decay must be in [0, 1), got {decay}")
    baselines = dict(state or {})
    episodes = _keys(table, "episode", "seat")
    games = _column(table, "env_id").tolist()
    returns = _column(table, "episode_return").astype(np.float64)
    first: dict[tuple[Hashable, ...], int] = {}
    for row, key in enumerate(episodes):
        first.setdefault(key, row)
    advantage: dict[tuple[Hashable, ...], float] = {}
    for key in sorted(first, key=lambda k: (k[0], str(k[1]))):
        row = first[key]
        role = (games[row], key[1])
        baseline = baselines.get(role, 0.0)
        advantage[key] = float(returns[row]) - baseline
        baselines[role] = decay * baseline + (1.0 - decay) * float(returns[row])
    return np.array([advantage[key] for key in episodes], dtype=np.float64), baselines


def turn_rtg(table: Table, state: Any = None, *, gamma: float = 1.0, eps: float = 1e-6) -> tuple[np.ndarray, Any]:
    """MARS's turn-level advantage with agent-specific normalisation (Yuan et al. 2025, arXiv:2510.15414).

    Each turn ``t`` of a seat gets its reward-to-go over that seat's own turns
    of the episode, then the reward-to-go is normalised per seat over the batch::

        G_t = sum_{k >= t} gamma^(k - t) * r_k
        A_t = (G_t - mean_{seat} G) / (std_{seat} G + eps)

    so a move is credited with what followed it, not with what came before
    (the turn-level estimator), and each role is compared with itself, not with
    a role that wins more often by construction (the agent-specific
    normalisation; the reference code, github.com/thu-nics/MARS, normalises
    separately per player, ``separate_norm_for_selfplay``). ``state`` is passed through.
    """
    returns = _returns_to_go(table, gamma)
    return _normalise(returns, _keys(table, "env_id", "seat"), eps), state


def gigpo(table: Table, state: Any = None, *, gamma: float = 0.95, step_weight: float = 1.0, eps: float = 1e-6) -> tuple[np.ndarray, Any]:
    """GiGPO's two-level advantage (Feng et al. 2025, "Group-in-Group Policy Optimization", arXiv:2505.10978).

    Episode level: the GRPO advantage of the episode within its group
    ``(env_id, seed, seat)`` (:func:`grpo`). Step level: turns of the group's
    episodes that faced the same anchor state (equal ``state``, a hash of the
    acting player's own view, never of hidden information) form a step group,
    and their discounted returns over the seat's own turns are compared::

        A_E(i)   = (R_i - mean_g R) / (std_g R + eps)
        G_t      = r_t + gamma * G_{t+1}
        A_S(t)   = (G_t - mean_{s} G) / (std_{s} G + eps)      s = (env_id, seed, seat, state)
        A(t)     = A_E(i) + step_weight * A_S(t)

    The defaults (``gamma = 0.95``, ``step_weight = 1``) are those of the
    reference implementation (github.com/langfengQ/verl-agent, ``gigpo/core_gigpo.py``).
    ``state`` (the estimator state, not the column) is passed through.
    """
    episode_level = _episode_normalised(table, ("env_id", "seed", "seat"), eps)
    returns = _returns_to_go(table, gamma)
    step_level = _normalise(returns, _keys(table, "env_id", "seed", "seat", "state"), eps)
    return episode_level + step_weight * step_level, state


Estimator = Callable[..., tuple[np.ndarray, Any]]

#: The estimators by name: ``(table, state, **options) -> (advantages, state)``.
ESTIMATORS: dict[str, Estimator] = {"grpo": grpo, "rae": rae, "turn_rtg": turn_rtg, "gigpo": gigpo}


def compute_advantages(name: str, table: Table, state: Any = None, **options: Any) -> tuple[np.ndarray, Any]:
    """Advantages of every row of ``table`` by the estimator ``name``, and the estimator's state for the next batch."""
    if name not in ESTIMATORS:
        raise ValueError(f"unknown advantage estimator {name!r}; choose one of {', '.join(ESTIMATORS)}")
    if len(table) and len({len(np.asarray(column)) for column in table.values()}) > 1:
        raise ValueError("the turn table's columns have different lengths")
    return ESTIMATORS[name](table, state, **options)
