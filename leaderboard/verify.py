"""Verification of submitted bundles: only episodes that reproduce count.

A bundle is what ``Results.save`` writes: a directory with ``summary.json``
(``env_id``, ``env_version``, the run's settings ``agents``, ``seed``,
``episodes`` and ``rotate_seats``, and statistics that are never trusted) and
``episodes.jsonl`` (one episode record per line, each with ``"agents": {seat:
agent_name}`` and ``"episode"``, its index in the run). Over HTTP it travels as
one JSON object ``{"summary": {...}, "episodes": [record, ...]}``.

:func:`verify_bundle` replays every episode with :func:`parlour.replay` and
rejects the whole bundle, naming the first failing episode and the reason, if
any episode does not reproduce, is unfinished, or belongs to another
environment or version. Nothing about a run is the submitter's choice but the
agents, the base seed and whether seats rotate:

* the records must be episodes ``0 .. episodes-1`` of the summary's run, each
  once, and each record's game seed, per-seat agent seeds and seating must be
  the ones :func:`parlour.evaluate` derives from the summary (see
  :mod:`parlour.evaluation.runner`), so nobody can pick favourable deals,
  seats or episodes. A fixed seating given to ``evaluate`` as a dict is
  accepted only where it equals the list rule's, without rotation;
* the game's options must be its defaults (entries equal to a default are
  dropped, so equivalent spellings are the same episode): the leaderboard
  rates environments with their default options;
* a seat named after a built-in scripted agent of the environment (``random``,
  ``minimax``, or the runner's ``random #2`` for a second one) must carry its
  seed in the record's ``agent_seeds``, and that agent, rebuilt and reseeded,
  must make exactly the recorded moves: the reference agents anchor the
  ratings and the normalised scores, so nobody can play under their names.
  The names of every environment's built-in agents are reserved: one may not
  name an agent of an environment where it is not built in.

* a built-in agent that reads hidden data through the privileged oracle
  (:func:`parlour.envs.coding.oracle.is_privileged`: Code's ``reference``)
  is refused: it is an upper bound measured locally, never counted; and an
  environment whose instance is not ``rateable`` (a coding task set whose
  verdicts a solution could forge) is refused whole (:func:`unrated_reason`);

* agent names must be canonical and visible (:func:`parlour.leaderboard.names.check_name`),
  and a name that looks like a reserved one (``Minimax``, ``minimax`` with a
  Cyrillic ``і``, ``m1nimax``) is refused;
* a bundle played for a challenge (its summary names the challenge) must be
  exactly the challenge's run (challenges are issued for runs of built-in
  agents only, see :mod:`parlour.leaderboard.api`): its environment, agents and episode count, the
  base seed derived from its nonce, seats rotated. Whether the challenge is
  the submitter's, unexpired and unused is checked against the store by
  :class:`parlour.leaderboard.api.Leaderboard`.

Episodes with the same environment, options, seed and seating share a
fingerprint and count once. Which submitter owns which agent name is the
store's business (:class:`parlour.leaderboard.store.NameTaken`).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from parlour.baselines import make_scripted, scripted_names
from parlour.envs.core.game import Game
from parlour.envs.core.match import ENGINE_OPTIONS, engine_options, make_game
from parlour.envs.core.record import Record, ReplayMismatch, replay
from parlour.envs.core.seeding import episode_seeds
from parlour.envs.registry import game_class, list_envs
from parlour.evaluation.challenges import challenge_seed
from parlour.evaluation.results import outcome_of
from parlour.evaluation.runner import default_lineup, seat_order
from parlour.evaluation.seating import privileged
from parlour.leaderboard.names import BadName, lookalike
from parlour.leaderboard.names import check_name as canonical_name
from parlour.leaderboard.store import NewEpisode, outcome_details

#: Base seeds of a run are below this (SeedSequence takes any size; the bound keeps records and databases sane).
SEED_LIMIT = 2**63

# The runner names a second copy of an agent "name #2", a third "name #3", ...
_NUMBERED = re.compile(r"(.+) #[0-9]+")


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
    """A bundle whose every episode reproduced: its environment, summary, episodes ready to store, and the built-in agent names it uses."""

    env_id: str
    env_version: int
    summary: dict[str, Any]
    episodes: list[NewEpisode] = field(default_factory=list)
    #: Seat names that verification replayed as built-in agents: they belong to no submitter.
    builtin: set[str] = field(default_factory=set)
    #: The id of the challenge the bundle was played for, or None for a self-reported run.
    challenge: str | None = None


@dataclass
class Run:
    """The settings of the run a bundle claims to be, from its summary: what every record is checked against."""

    env_id: str
    env_version: int
    game_cls: type[Game]
    players: list[str]
    names: list[str]
    seed: int
    episodes: int
    rotate_seats: bool
    #: The scripted agents built into the environment: seats named after them are replayed as them.
    builtin: set[str]
    #: The agent number in each seat before rotation.
    lineup: list[int]


def load_bundle(path: str | Path) -> dict[str, Any]:
    """Read the bundle directory ``path`` into ``{"summary": ..., "episodes": [...]}`` (the wire format)."""
    path = Path(path)
    summary = json.loads((path / "summary.json").read_text(encoding="utf-8"))
    with open(path / "episodes.jsonl", encoding="utf-8") as lines:
        episodes = [json.loads(line) for line in lines if line.strip()]
    return {"summary": summary, "episodes": episodes}


def as_bundle(value: Any) -> dict[str, Any]:
    """The wire form of a bundle given as a wire dict, a bundle directory, or a :class:`~parlour.evaluation.results.Results`."""
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


def fingerprint(record: Record) -> str:
    """The identity of an episode: environment, version, options, seed and seating (duplicates share it).

    Give it a record whose options are normalised (:func:`non_default_options`), so equivalent spellings agree.
    """
    key = [record["env_id"], record["env_version"], record.get("options", {}), record["seed"], record["agents"]]
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def _canonical(value: Any) -> str:
    # JSON text, so that a default tuple equals the list a record holds, and True never equals 1.
    return json.dumps(value, sort_keys=True)


@functools.cache
def _option_defaults(game_cls: type[Game]) -> dict[str, frozenset[str]]:
    """Each option of ``game_cls`` and of the engine with the JSON spellings of its default.

    The game's defaults are read from the signature of its ``__init__``; the
    engine's are those :func:`parlour.envs.core.match.engine_options` fills in.
    """
    parameters = inspect.signature(game_cls.__init__).parameters
    defaults = {name: {_canonical(parameter.default)} for name, parameter in parameters.items() if parameter.default is not inspect.Parameter.empty}
    engine = engine_options(make_game(game_cls, {}), {})
    for name in ENGINE_OPTIONS:
        defaults[name] = {_canonical(getattr(engine, name))}
    return {name: frozenset(spellings) for name, spellings in defaults.items()}


def non_default_options(game_cls: type[Game], options: dict[str, Any]) -> dict[str, Any]:
    """``options`` without the entries equal to the game's defaults: what is left makes it another game."""
    # Every class is hashable; mypy checks the class object against Hashable with the instances' __hash__, a false error.
    defaults = _option_defaults(game_cls)  # type: ignore[arg-type]
    return {key: value for key, value in options.items() if _canonical(value) not in defaults.get(key, frozenset())}


@functools.cache
def reserved_names() -> frozenset[str]:
    """The names of the built-in scripted agents of every environment: nobody may name their own agent so."""
    return frozenset(name for env_id in list_envs() for name in scripted_names(env_id))


def builtin_base(name: str) -> str | None:
    """The built-in agent a seat name stands for (``random`` for ``random`` and ``random #2``), or None."""
    numbered = _NUMBERED.fullmatch(name)
    base = numbered.group(1) if numbered else name
    return base if base in reserved_names() else None


def check_unprivileged(env_id: str, names: list[str]) -> None:
    """:class:`Rejected` if a built-in agent among ``names`` is a privileged oracle (see the module docstring)."""
    for name in names:
        base = builtin_base(name)
        if base is not None and base in scripted_names(env_id) and privileged(env_id, base):
            raise Rejected(
                f"{name!r} reads the hidden task through the privileged oracle (parlour.envs.coding.oracle): it is a labelled "
                f"upper bound, measured locally with `parlour eval {env_id} --agent {base}`, and never counted on a leaderboard"
            )


def unrated_reason(game_cls: type[Game]) -> str | None:
    """Why the leaderboard does not rate ``game_cls`` with its default options, or None when it does.

    A coding environment says through ``rateable`` whether every verdict comes from the host; where it does not,
    a solution could forge its own pass, so no run of it is stored, counted or self-reported.
    """
    if getattr(make_game(game_cls, {}), "rateable", True) is False:
        return (
            f"{game_cls.env_id()} is not rateable: its default task set has tests a solution could defeat "
            "(see parlour.envs.coding.judge), so the leaderboard stores no run of it"
        )
    return None


def _int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def brief(value: Any) -> str:
    """``value`` shortened for an error message; never fails (Python refuses to turn a huge int into text)."""
    try:
        return repr(value)[:80]
    except ValueError:
        return f"<{type(value).__name__} too large to show>"


def check_name(name: Any, what: str) -> str:
    """``name`` if it is an acceptable agent name (canonical, visible, no look-alike of a reserved name); :class:`Rejected` otherwise."""
    try:
        canonical_name(name, what)
    except BadName as bad:
        raise Rejected(str(bad)) from None
    numbered = _NUMBERED.fullmatch(name)
    base = numbered.group(1) if numbered else name
    if base not in reserved_names():
        similar = lookalike(base, sorted(reserved_names()))
        if similar is not None:
            raise Rejected(f"{what} {name[:80]!r} looks like {similar!r}, the name of a built-in agent; choose a clearly different name")
    return name


def challenge_of(bundle: Any) -> str | None:
    """The id of the challenge a bundle says it was played for, or None; :class:`Rejected` if the field is malformed."""
    summary = bundle.get("summary") if isinstance(bundle, dict) else None
    value = summary.get("challenge") if isinstance(summary, dict) else None
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("id"), str) or not 0 < len(value["id"]) <= 64:
        raise Rejected('summary.challenge must be {"id": ..., "nonce": ...} as the server issued it')
    if "\x00" in value["id"]:
        raise Rejected("summary.challenge.id contains a NUL character; send the id as the server issued it")
    return value["id"]


def _check_challenge(run: Run, summary: dict[str, Any], challenge: dict[str, Any]) -> None:
    """Reject a bundle that is not exactly the run ``challenge`` asked for."""
    claimed = summary.get("challenge") or {}
    if claimed.get("id") != challenge["id"] or claimed.get("nonce") != challenge["nonce"]:
        raise Rejected(f"summary.challenge does not match challenge {challenge['id']} as issued")
    if run.env_id != challenge["env_id"]:
        raise Rejected(f"challenge {challenge['id']} is for {challenge['env_id']}, the bundle is for {run.env_id}")
    if run.names != challenge["agents"]:
        raise Rejected(f"challenge {challenge['id']} is for the agents {challenge['agents']}, the bundle has {run.names}")
    if run.episodes != challenge["episodes"]:
        raise Rejected(
            f"challenge {challenge['id']} asks for all {challenge['episodes']} episodes, the bundle holds {run.episodes}: "
            "a challenge counts complete or not at all"
        )
    if run.seed != challenge_seed(challenge["nonce"]):
        raise Rejected(f"summary.seed {run.seed} is not the seed {challenge_seed(challenge['nonce'])} that challenge {challenge['id']}'s nonce gives")
    if run.rotate_seats != challenge["rotate_seats"] or run.lineup != challenge["lineup"]:
        raise Rejected(
            f"challenge {challenge['id']} seats the agents as {challenge['lineup']} (rotated: {challenge['rotate_seats']}), "
            f"the bundle as {run.lineup} (rotated: {run.rotate_seats})"
        )


def _check_summary(bundle: Any) -> tuple[Run, list[Any]]:
    if not isinstance(bundle, dict) or not isinstance(bundle.get("summary"), dict) or not isinstance(bundle.get("episodes"), list):
        raise Rejected('a submission is a JSON object {"summary": {...}, "episodes": [...]}')
    summary, episodes = bundle["summary"], bundle["episodes"]
    env_id = summary.get("env_id")
    if not isinstance(env_id, str):
        raise Rejected("summary.env_id is missing")
    try:
        game_cls = game_class(env_id)
    except KeyError as error:
        raise Rejected(str(error.args[0])) from None
    if summary.get("env_version") != game_cls.version:
        raise Rejected(f"bundle is for {env_id} version {summary.get('env_version')!r}, the server runs version {game_cls.version}")
    players = list(make_game(game_cls, {}).players)
    declared = summary.get("agents")
    if not isinstance(declared, list) or not declared:
        raise Rejected("summary.agents must list the agent names of the bundle")
    names = [check_name(name, "declared agent") for name in declared]
    if len(set(names)) != len(names) or len(names) > len(players):
        raise Rejected(f"summary.agents must be 1 to {len(players)} distinct names (one per seat at most), got {len(names)}")
    builtin = set(scripted_names(env_id))
    for name in names:
        base = builtin_base(name)
        if base is not None and base not in builtin:
            raise Rejected(f"agent name {name!r} is reserved for a built-in agent of other environments; {env_id} has no {base!r}")
    check_unprivileged(env_id, names)
    unrated = unrated_reason(game_cls)
    if unrated is not None:
        raise Rejected(unrated)
    seed, count, rotate = summary.get("seed"), summary.get("episodes"), summary.get("rotate_seats")
    if not _int(seed) or not 0 <= seed < SEED_LIMIT:
        raise Rejected(f"summary.seed must be an int in [0, 2**63), got {brief(seed)}")
    if not isinstance(rotate, bool):
        raise Rejected(f"summary.rotate_seats must be true or false, got {brief(rotate)}")
    if not episodes:
        raise Rejected("the bundle has no episodes")
    if not _int(count) or count != len(episodes):
        raise Rejected(f"summary.episodes is {brief(count)}, the bundle holds {len(episodes)} episodes; all of a run's episodes count, or none")
    lineup = check_lineup(summary.get("lineup"), len(names), len(players))
    return Run(env_id, game_cls.version, game_cls, players, names, seed, count, rotate, builtin, lineup), episodes


def check_lineup(lineup: Any, agents: int, seats: int) -> list[int]:
    """A run's line-up (agent number per seat): the default for None; :class:`Rejected` unless it seats every agent."""
    if lineup is None:
        return default_lineup(agents, seats)
    if (
        not isinstance(lineup, list)
        or len(lineup) != seats
        or not all(_int(n) and 0 <= n < agents for n in lineup)
        or set(lineup) != set(range(agents))
    ):
        raise Rejected(f"lineup must give each of the {seats} seats an agent number below {agents}, using every agent, got {brief(lineup)}")
    return list(lineup)


def _check_run(record: dict[str, Any], run: Run) -> None:
    """Reject ``record`` unless its seed, agent seeds and seating are the ones the runner derives for its episode index."""
    index = record.get("episode")
    if not _int(index) or not 0 <= index < run.episodes:
        raise Rejected(f"the record's episode index must be an int in 0..{run.episodes - 1}, got {brief(index)}")
    game_seed, seat_seeds = episode_seeds(run.seed, index, len(run.players))
    seed = record.get("seed")
    if not _int(seed) or seed != game_seed:
        raise Rejected(f"seed {brief(seed)} is not the seed {game_seed} of episode {index} of a run with seed {run.seed}")
    expected = dict(zip(run.players, seat_seeds))
    agent_seeds = record.get("agent_seeds", {})
    if not isinstance(agent_seeds, dict):
        raise Rejected('"agent_seeds" must be an object {seat: seed}')
    for seat, value in agent_seeds.items():
        if seat not in expected or not _int(value) or value != expected[seat]:
            raise Rejected(f"agent seed {brief(value)} of seat {brief(seat)} is not the one episode {index} of the run derives")
    order = seat_order(run.lineup, index, run.rotate_seats)
    seating = {seat: run.names[number] for seat, number in zip(run.players, order)}
    if record.get("agents") != seating:
        raise Rejected(f"seating {brief(record.get('agents'))} is not the seating {seating} of episode {index} of the run")


def verify_episode(record: Any, run: Run) -> NewEpisode:
    """Check and replay one episode record of a bundle of ``run``; :class:`Rejected` (without index) if it does not count."""
    if not isinstance(record, dict):
        raise Rejected(f"an episode is a record object, got {type(record).__name__}")
    if record.get("env_id") != run.env_id:
        raise Rejected(f"episode is from {brief(record.get('env_id'))}, the bundle is for {run.env_id}")
    if record.get("env_version") != run.env_version:
        raise Rejected(f"episode is for {run.env_id} version {brief(record.get('env_version'))}, the server runs version {run.env_version}")
    options = record.get("options", {})
    if not isinstance(options, dict):
        raise Rejected('"options" must be an object')
    changed = non_default_options(run.game_cls, options)
    if changed:
        raise Rejected(f"options {_canonical(changed)[:300]} are not the defaults: the leaderboard rates environments with their default options")
    _check_run(record, run)
    checked = {seat: make_scripted(base, run.env_id) for seat, name in record["agents"].items() if (base := builtin_base(name)) in run.builtin}
    try:
        # Replayed with the normalised options, so the stored record and its fingerprint spell them one way.
        fresh = replay(dict(record, options={}), agents=checked)
    except ReplayMismatch as mismatch:
        raise Rejected(f"does not reproduce: {mismatch}") from None
    if not fresh["done"]:
        raise Rejected("the episode is unfinished; only finished episodes count")
    # The replayed game's own word, in case an instance differs from the default one checked with the summary.
    if (outcome_of(fresh).get("details") or {}).get("rateable") is False:
        raise Rejected(f"the episode's task set is not rateable (its outcome says so): {run.env_id} is not rated")
    return NewEpisode(
        env_id=run.env_id,
        env_version=run.env_version,
        seed=fresh["seed"],
        seating=dict(fresh["agents"]),
        returns={seat: float(value) for seat, value in fresh["returns"].items()},
        fingerprint=fingerprint(fresh),
        record=fresh,
        details=outcome_details(fresh),
    )


def verify_bundle(bundle: Any, challenge: dict[str, Any] | None = None) -> VerifiedBundle:
    """Check every episode of ``bundle`` (the wire format); raises :class:`Rejected` at the first that does not count.

    ``challenge``: the challenge the bundle names, as the store holds it (see
    :meth:`parlour.leaderboard.store.Store.challenge`); the bundle must be exactly its run.
    """
    run, episodes = _check_summary(bundle)
    claimed = challenge_of(bundle)
    if claimed is not None and (challenge is None or challenge["id"] != claimed):
        raise Rejected(f"the bundle names challenge {claimed!r}, which this server did not issue")
    if challenge is not None:
        _check_challenge(run, bundle["summary"], challenge)
    builtin = {name for name in run.names if builtin_base(name) is not None}
    verified = VerifiedBundle(run.env_id, run.env_version, bundle["summary"], builtin=builtin, challenge=claimed)
    seen: set[int] = set()
    for index, record in enumerate(episodes):
        try:
            episode = verify_episode(record, run)
            if record["episode"] in seen:
                raise Rejected(f"episode index {record['episode']} appears twice")
            seen.add(record["episode"])
        except Rejected as rejected:
            raise Rejected(rejected.reason, index) from None
        except Exception as error:  # noqa: BLE001 - a record is untrusted input: whatever it breaks, it does not count
            raise Rejected(f"cannot be replayed: {type(error).__name__}: {str(error)[:300]}", index) from None
        verified.episodes.append(episode)
    return verified
