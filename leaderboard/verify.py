"""Verification of submitted bundles: only episodes that reproduce count.

A bundle is what ``Results.save`` writes: a directory with ``summary.json``
(``env_id``, ``env_version``, ``agents``: the declared agent names, and
statistics that are never trusted) and ``episodes.jsonl`` (one episode record
per line, each with ``"agents": {seat: agent_name}``). Over HTTP it travels as
one JSON object ``{"summary": {...}, "episodes": [record, ...]}``.

:func:`verify_bundle` replays every episode with :func:`parlour.replay` and
rejects the whole bundle, naming the first failing episode and the reason, if
any episode does not reproduce, is unfinished, belongs to another environment
or version, or names agents the summary does not declare. A seat named after a
built-in scripted agent of the environment (``random``, ``minimax``, ...) must
carry its seed in the record's ``agent_seeds``, and that agent, rebuilt and
reseeded, must make exactly the recorded moves: the reference agents anchor the
ratings and the normalised scores, so nobody can play under their names.
Episodes with the same environment, options, seed and seating share a
fingerprint and count once.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parlour.baselines import make_scripted, scripted_names
from parlour.envs.core.record import ReplayMismatch, replay
from parlour.envs.registry import game_class
from parlour.leaderboard.store import NAME_LIMIT, NewEpisode


class Rejected(Exception):
    """A bundle that is not accepted: ``reason`` says why, ``episode`` is the index of the first bad episode (or None)."""

    def __init__(self, reason: str, episode: int | None = None):
        super().__init__(reason if episode is None else f"episode {episode}: {reason}")
        self.reason = reason
        self.episode = episode

    def to_dict(self) -> dict[str, Any]:
        """The JSON body of the rejection."""
        return {"error": "rejected", "reason": self.reason, "episode": self.episode, "detail": str(self)}


@dataclass
class VerifiedBundle:
    """A bundle whose every episode reproduced: its environment, summary and episodes ready to store."""

    env_id: str
    env_version: int
    summary: dict[str, Any]
    episodes: list[NewEpisode] = field(default_factory=list)

    @property
    def duplicates(self) -> int:
        """Episodes of the bundle that repeat an earlier one of the same bundle."""
        return len(self.episodes) - len({episode.fingerprint for episode in self.episodes})


def load_bundle(path: str | Path) -> dict[str, Any]:
    """Read the bundle directory ``path`` into ``{"summary": ..., "episodes": [...]}`` (the wire format)."""
    path = Path(path)
    summary = json.loads((path / "summary.json").read_text(encoding="utf-8"))
    with open(path / "episodes.jsonl", encoding="utf-8") as lines:
        episodes = [json.loads(line) for line in lines if line.strip()]
    return {"summary": summary, "episodes": episodes}


def as_bundle(value: Any) -> dict[str, Any]:
    """The wire form of a bundle given as a wire dict, a bundle directory, or a :class:`~parlour.leaderboard.results.Results`."""
    if isinstance(value, dict):
        return value
    if isinstance(value, (str, Path)):
        return load_bundle(value)
    if hasattr(value, "metadata") and hasattr(value, "records"):
        return {"summary": {**value.metadata(), "summary": value.summary}, "episodes": list(value.records)}
    raise TypeError(f"a bundle is a dict, a directory or a Results, got {type(value).__name__}")


def bundle_dirs(path: str | Path) -> list[Path]:
    """``path`` itself if it is a bundle, else the bundles directly inside it (sorted); ``FileNotFoundError`` if none."""
    path = Path(path)
    if (path / "summary.json").is_file():
        return [path]
    found = sorted(child for child in path.iterdir() if (child / "summary.json").is_file()) if path.is_dir() else []
    if not found:
        raise FileNotFoundError(f"{path} is not a bundle (no summary.json) and holds no bundle directories")
    return found


def fingerprint(record: dict[str, Any]) -> str:
    """The identity of an episode: environment, version, options, seed and seating (duplicates share it)."""
    key = [record["env_id"], record["env_version"], record.get("options", {}), record["seed"], record["agents"]]
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def check_name(name: Any, what: str) -> str:
    """``name`` if it is an acceptable agent name (text, 1 to NAME_LIMIT characters, no control characters)."""
    if not isinstance(name, str) or not 0 < len(name) <= NAME_LIMIT:
        raise Rejected(f"{what} must be a name of 1 to {NAME_LIMIT} characters, got {str(name)[:80]!r}")
    if any(unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn") for char in name):
        raise Rejected(f"{what} {name[:80]!r} contains control or unassigned characters")
    return name


def _check_summary(bundle: Any) -> tuple[str, int, dict[str, Any], set[str], list[Any]]:
    if not isinstance(bundle, dict) or not isinstance(bundle.get("summary"), dict) or not isinstance(bundle.get("episodes"), list):
        raise Rejected('a submission is a JSON object {"summary": {...}, "episodes": [...]}')
    summary, episodes = bundle["summary"], bundle["episodes"]
    env_id = summary.get("env_id")
    if not isinstance(env_id, str):
        raise Rejected("summary.env_id is missing")
    try:
        installed = game_class(env_id).version
    except KeyError as error:
        raise Rejected(str(error.args[0])) from None
    if summary.get("env_version") != installed:
        raise Rejected(f"bundle is for {env_id} version {summary.get('env_version')!r}, the server runs version {installed}")
    declared = summary.get("agents")
    if not isinstance(declared, list) or not declared:
        raise Rejected("summary.agents must list the agent names of the bundle")
    names = {check_name(name, "declared agent") for name in declared}
    if not episodes:
        raise Rejected("the bundle has no episodes")
    return env_id, installed, summary, names, episodes


def verify_episode(record: Any, env_id: str, env_version: int, declared: set[str]) -> NewEpisode:
    """Replay one episode record of a bundle for ``env_id``; :class:`Rejected` (without index) if it does not count."""
    if not isinstance(record, dict):
        raise Rejected(f"an episode is a record object, got {type(record).__name__}")
    if record.get("env_id") != env_id:
        raise Rejected(f"episode is from {record.get('env_id')!r}, the bundle is for {env_id}")
    if record.get("env_version") != env_version:
        raise Rejected(f"episode is for {env_id} version {record.get('env_version')!r}, the server runs version {env_version}")
    seating = record.get("agents")
    if not isinstance(seating, dict):
        raise Rejected('episode lacks "agents": {seat: agent name}')
    for name in seating.values():
        check_name(name, "agent")
        if name not in declared:
            raise Rejected(f"agent {name!r} is not among the bundle's declared agents {sorted(declared)}")
    builtin = set(scripted_names(env_id))
    checked = {seat: make_scripted(name, env_id) for seat, name in seating.items() if name in builtin}
    try:
        fresh = replay(record, agents=checked)
    except ReplayMismatch as mismatch:
        raise Rejected(f"does not reproduce: {mismatch}") from None
    if sorted(seating) != sorted(fresh["players"]):
        raise Rejected(f"agents are given for seats {sorted(seating)}, the game's seats are {fresh['players']}")
    if not fresh["done"]:
        raise Rejected("the episode is unfinished; only finished episodes count")
    return NewEpisode(
        env_id=env_id,
        env_version=env_version,
        seed=fresh["seed"],
        seating=dict(seating),
        returns={seat: float(value) for seat, value in fresh["returns"].items()},
        fingerprint=fingerprint(fresh),
        record=fresh,
    )


def verify_bundle(bundle: Any) -> VerifiedBundle:
    """Check every episode of ``bundle`` (the wire format); raises :class:`Rejected` at the first that does not count."""
    env_id, env_version, summary, declared, episodes = _check_summary(bundle)
    verified = VerifiedBundle(env_id, env_version, summary)
    for index, record in enumerate(episodes):
        try:
            verified.episodes.append(verify_episode(record, env_id, env_version, declared))
        except Rejected as rejected:
            raise Rejected(rejected.reason, index) from None
    used = {name for episode in verified.episodes for name in episode.seating.values()}
    if used != declared:
        raise Rejected(f"declared agents {sorted(declared - used)} play in no episode")
    return verified
