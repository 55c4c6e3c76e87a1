"""Seating rules: who sits where when the built-in agents play an environment, and what a seat's role is.

:func:`lineups` gives an environment's runs from its category, seats and roles
only, so a newly registered environment needs nothing here:

* single-agent tasks (search, coding, one seat): each scripted agent alone;
* cooperative games and tasks whose seats share one reward
  (``Game.shared_reward``, such as AskOrSearch): every agent in self-play (a
  whole team of it), and every pair of agents mixed (one seat each way round,
  seats rotated), so each agent is also seen with the baseline as its partner;
* games whose seats have roles some agents cannot take (a debate's judge, a
  search proposer): agents are seated by role, one line-up per combination of
  agents able to hold each role (seats fixed; at most :data:`MAX_ROLE_LINEUPS`);
* other games: every pair of distinct scripted agents, seats rotated.

``parlour demo`` plays these line-ups, ``parlour leaderboard seed`` stores
them, and tests seat reference agents by them. :func:`counted_lineups` sets
apart those a leaderboard refuses (a privileged oracle, :func:`privileged`),
and :func:`episodes_per_lineup` says how many episodes each wants.
:func:`role_of` is the rule the leaderboard rates roles by, and the one
:func:`seat_roles` groups seats by.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from parlour.baselines import make_scripted, scripted_names
from parlour.envs.coding.oracle import is_privileged
from parlour.envs.core.match import make_game
from parlour.envs.registry import game_class
from parlour.evaluation.runner import evaluate

#: Most line-ups played for one environment whose agents are seated by role.
MAX_ROLE_LINEUPS = 27


@dataclass(frozen=True)
class Lineup:
    """One run of an environment: the agents (a list, seated by the runner's rule; or one per seat, fixed) and a label."""

    agents: tuple[str, ...]
    #: True: ``agents`` holds one agent per seat in seat order, seats fixed; False: the runner's rotated line-up.
    fixed: bool
    label: str

    def spec(self, players: list[str]) -> Any:
        """What :func:`parlour.evaluate` takes as ``agents``."""
        return dict(zip(players, self.agents)) if self.fixed else list(self.agents)


def role_of(seat: str, details: Mapping[str, object] | None = None, fixed_roles: bool = False) -> str:
    """A seat's role: its team in the episode's outcome if it had one, else its name without the trailing number.

    ``details``: the episode's outcome, or what the leaderboard keeps of it (its ``teams``).
    In a game with ``fixed_roles`` the seat alone decides, without its trailing number or letter
    (``debater_a`` and ``debater_b`` are both ``debater``): a debate's teams are the sides its
    debaters happen to defend in one episode, not roles an agent is built for.
    """
    if fixed_roles:
        return re.sub(r"(_[a-z]|_?[0-9]+)$", "", seat) or seat
    teams = details.get("teams") if details else None
    if isinstance(teams, Mapping):
        for team, members in teams.items():
            if seat in members:
                return str(team)
    return re.sub(r"_?[0-9]+$", "", seat) or seat


def seat_roles(players: list[str]) -> dict[str, list[str]]:
    """The seats of each role, roles in seat order (a role is a seat's name without its trailing number)."""
    roles: dict[str, list[str]] = {}
    for player in players:
        roles.setdefault(role_of(player), []).append(player)
    return roles


@functools.cache
def privileged(env_id: str, name: str) -> bool:
    """Whether ``name``, a built-in agent of ``env_id``, reads hidden data through the privileged oracle."""
    return is_privileged(make_scripted(name, env_id))


@functools.cache
def can_play(env_id: str, agent: str, seat: str) -> bool:
    """Whether scripted ``agent`` can hold ``seat`` of ``env_id``: one episode with ``random`` in the other seats runs without error."""
    players = list(make_game(game_class(env_id), {}).players)
    seating = {player: agent if player == seat else "random" for player in players}
    try:
        evaluate(env_id, seating, episodes=1, seed=0, progress=False)
    except Exception:  # noqa: BLE001 - an agent refusing a seat (or failing in it) is what is probed
        return False
    return True


def lineups(env_id: str, names: list[str] | None = None) -> list[Lineup]:
    """The runs of ``env_id``, by its category, seats and roles (see the module docstring).

    ``names``: the scripted agents to seat, sorted (default: all of the environment's), so a
    reference agent can be measured against ``random`` seated as the leaderboard seats it.
    """
    game_cls = game_class(env_id)
    players = list(make_game(game_cls, {}).players)
    names = scripted_names(env_id) if names is None else names
    if len(players) == 1:
        return [Lineup((name,), False, name) for name in names]
    roles = seat_roles(players)
    if len(roles) > 1:
        able = {role: [name for name in names if all(can_play(env_id, name, seat) for seat in seats)] for role, seats in roles.items()}
        if any(len(agents) < len(names) for agents in able.values()):
            if not all(able.values()):
                return []  # some role has no scripted agent able to hold it: nothing to play
            runs = []
            for choice in itertools.islice(itertools.product(*able.values()), MAX_ROLE_LINEUPS):
                by_role = dict(zip(roles, choice))
                agents = tuple(by_role[role] for player in players for role, seats in roles.items() if player in seats)
                runs.append(Lineup(agents, True, "-".join(f"{role}={name}" for role, name in by_role.items())))
            return runs
    pairs = [Lineup((a, b), False, f"{a}-vs-{b}") for a, b in itertools.combinations(names, 2)]
    # A shared reward makes a rotated pair's agents score alike: only self-play tells the team of one agent from another's.
    if game_cls.category == "cooperation" or game_cls.shared_reward:
        return [Lineup((name,), False, f"{name}-team") for name in names] + [
            Lineup(lineup.agents, False, lineup.label.replace("-vs-", "-with-")) for lineup in pairs
        ]
    return pairs


def counted_lineups(env_id: str) -> tuple[list[Lineup], list[Lineup]]:
    """The line-ups of ``env_id`` that a leaderboard counts, and apart those it refuses: line-ups seating a
    privileged oracle (Code's ``reference``), an upper bound measured locally (``parlour eval``), never counted."""
    runs = lineups(env_id)
    oracles = [run for run in runs if any(privileged(env_id, name) for name in run.agents)]
    return [run for run in runs if run not in oracles], oracles


def episodes_per_lineup(env_id: str, lineups: int, episodes: int, game_episodes: int) -> int:
    """Episodes of each line-up: ``episodes``, or for a competitive game, and a game rated per role, enough for
    ``game_episodes`` in all: a role splits an agent's episodes (Mafia's random held the mafia side in 8 of 20), and an
    agent under the leaderboard's minimum in a role is provisional there."""
    game_cls = game_class(env_id)
    rated_by_role = game_cls.category == "social" or game_cls.fixed_roles
    if (game_cls.category != "game" and not rated_by_role) or len(make_game(game_cls, {}).players) == 1:
        return episodes
    return max(episodes, -(-game_episodes // max(lineups, 1)))
