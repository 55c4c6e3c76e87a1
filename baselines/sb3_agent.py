"""Stable-baselines3 policies as parlour agents: the ``sb3:PATH`` agent spec.

A policy trained on the vector face (``sb3_contrib.MaskablePPO``, by ``parlour
train sb3`` or by your own code on ``gym.make(ENV_ID, obs_mode="vector")``)
plays wherever an agent is taken: ``parlour eval --agent sb3:PATH``,
``gym.make(ENV_ID, opponent="sb3:PATH")``, ``parlour.evaluate`` and the
leaderboard. ``PATH`` is the ``.zip`` that ``model.save`` wrote; the
``.json`` beside it (written by ``parlour train sb3``) names the environment,
its options and move list, how the policy should play, and how it was trained.
Without it, the move list is the environment's with default options.

The agent reads only its observation: it asks for the vector observation
(``needs_vector``), which rollouts, the Gymnasium face and replay hand it, and
masks the policy's distribution with the observation's legal moves. It samples
from the masked distribution with its own generator, reseeded by
``reset(seed)`` (so an episode replays from its record's agent seeds), or plays
the most likely move when ``deterministic``. Policies and plain observations
(``Box``) and policies trained on the face's ``Dict`` observations
(``observation`` and ``action_mask``) both load. Plain MLP policies (SB3's
``MlpPolicy`` and ``MultiInputPolicy``) run in numpy on a copy of their
weights (:class:`NumpyPolicy`), the cost of one move being what it is for a
scripted agent; anything else runs in torch.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: The ``format`` field of the metadata file beside a policy.
METADATA_FORMAT = "parlour.sb3-policy"

_CACHE: dict[tuple[str, int], tuple[Any, dict[str, Any]]] = {}
_CACHE_LOCK = threading.Lock()


def metadata_path(path: str | Path) -> Path:
    """The metadata file beside the policy ``path`` (``policy.zip`` -> ``policy.json``)."""
    return Path(path).with_suffix(".json")


def policy_path(spec_or_path: str | Path) -> Path:
    """The ``.zip`` an ``sb3:PATH`` spec (or a bare path, with or without ``.zip``) names; ``FileNotFoundError`` naming the fix."""
    text = str(spec_or_path)
    text = text.removeprefix("sb3:")
    if not text:
        raise ValueError("agent spec 'sb3:' names no policy; use 'sb3:PATH' with the .zip written by `parlour train sb3`")
    path = Path(text).expanduser()
    if path.suffix != ".zip" and not path.exists() and path.with_suffix(".zip").exists():
        path = path.with_suffix(".zip")
    if not path.is_file():
        raise FileNotFoundError(
            f"no stable-baselines3 policy at {str(path)!r}; give the .zip that `parlour train sb3 ... --out DIR` wrote (DIR/policy.zip)"
        )
    return path


def load_policy(path: str | Path) -> tuple[Any, dict[str, Any]]:
    """The policy network in ``path`` (a MaskablePPO ``.zip``) and its metadata, loaded once per process and file version."""
    path = Path(path).resolve()
    key = (str(path), path.stat().st_mtime_ns)
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
    try:
        from sb3_contrib import MaskablePPO
    except ImportError:
        raise ImportError("sb3: agents need stable-baselines3 and sb3-contrib: pip install 'parlour[sb3]'") from None
    model = MaskablePPO.load(str(path), device="cpu")
    policy = model.policy
    policy.set_training_mode(False)
    meta_file = metadata_path(path)
    metadata = json.loads(meta_file.read_text(encoding="utf-8")) if meta_file.exists() else {}
    with _CACHE_LOCK:
        _CACHE[key] = (policy, metadata)
    return policy, metadata


#: Activations of SB3's MLP policies, in numpy.
_ACTIVATIONS = {
    "Tanh": np.tanh,
    "ReLU": lambda x: np.maximum(x, 0.0),
    "Identity": lambda x: x,
}


class NumpyPolicy:
    """The action head of an SB3 MLP policy as numpy arrays: a copy of its weights, ~10x faster than torch for one observation.

    Built by :meth:`from_policy`, which returns ``None`` for a network it does
    not know (a custom feature extractor or layer), so the caller keeps torch.
    """

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: Any, head: tuple[np.ndarray, np.ndarray], keys: list[str] | None):
        self.layers = layers
        self.activation = activation
        self.head = head
        #: The Dict observation's keys in the order the extractor concatenates them, or ``None`` for a Box.
        self.keys = keys

    @classmethod
    def from_policy(cls, policy: Any) -> NumpyPolicy | None:
        """A numpy copy of ``policy``'s actor, or ``None`` when it is not a plain MLP over a Box or flat Dict."""
        import torch

        try:
            extractor = type(policy.pi_features_extractor).__name__
            modules = list(policy.mlp_extractor.policy_net)
            head = policy.action_net
        except (AttributeError, TypeError):
            return None
        keys = None
        if extractor == "CombinedExtractor":
            keys = list(policy.observation_space.spaces)
            if any(type(sub).__name__ != "Flatten" for sub in policy.pi_features_extractor.extractors.values()):
                return None
        elif extractor != "FlattenExtractor" or not isinstance(head, torch.nn.Linear):
            return None
        layers, activation = [], None
        for module in modules:
            if isinstance(module, torch.nn.Linear):
                layers.append((module.weight.detach().numpy().T.copy(), module.bias.detach().numpy().copy()))
            elif type(module).__name__ in _ACTIVATIONS and activation in (None, _ACTIVATIONS[type(module).__name__]):
                activation = _ACTIVATIONS[type(module).__name__]
            else:
                return None
        weights = (head.weight.detach().numpy().T.copy(), head.bias.detach().numpy().copy())
        return cls(layers, activation or _ACTIVATIONS["Identity"], weights, keys)

    def logits(self, vectors: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The unmasked action logits for a batch (float32)."""
        if self.keys is None:
            x = vectors
        else:
            parts = {"observation": vectors, "action_mask": masks.astype(np.float32)}
            x = np.concatenate([parts[key] for key in self.keys], axis=1)
        for weight, bias in self.layers:
            x = self.activation(x @ weight + bias)
        weight, bias = self.head
        return x @ weight + bias


class PolicyAgent:
    """A masked policy network as a parlour agent (see the module docstring).

    Args:
        policy: a ``MaskableActorCriticPolicy`` (or any policy with ``get_distribution(obs, action_masks)``).
        moves: the environment's move list, in the policy's action order.
        name: the agent's display name.
        deterministic: play the most likely legal move instead of sampling.
    """

    needs_vector = True

    def __init__(self, policy: Any, moves: Sequence[str], name: str = "sb3", deterministic: bool = False):
        self.policy = policy
        self.moves = list(moves)
        self.index = {move: i for i, move in enumerate(self.moves)}
        self.name = name
        self.deterministic = deterministic
        #: The sampling generator, made on first use after ``reset`` (an unused seed costs nothing).
        self.rng: np.random.Generator | None = None
        self.seed: int | None = 0
        self.dict_observations = _is_dict_space(getattr(policy, "observation_space", None))
        self.stats: dict[str, float] = {"entropy_sum": 0.0, "entropy_decisions": 0}
        self.fast: NumpyPolicy | None = None
        self.refresh()

    def refresh(self) -> None:
        """Copy the network's current weights into the fast numpy path (call after the network was trained further)."""
        self.fast = NumpyPolicy.from_policy(self.policy)

    def __deepcopy__(self, memo: dict[int, Any]) -> PolicyAgent:
        # Rollouts copy a non-batching agent for every seat of every episode: the copies share the network
        # (it is only read) and get their own generator and accounting.
        clone = copy.copy(self)
        clone.rng = None
        clone.stats = {"entropy_sum": 0.0, "entropy_decisions": 0}
        return clone

    def reset(self, seed: int | None = None) -> None:
        """Reseed the sampling generator (each episode's seat seed, so episodes replay)."""
        self.seed = seed
        self.rng = None

    def mask(self, legal_moves: Sequence[str]) -> np.ndarray:
        """The boolean action mask of ``legal_moves``; ``ValueError`` for a move the policy does not know."""
        mask = np.zeros(len(self.moves), dtype=bool)
        try:
            mask[[self.index[move] for move in legal_moves]] = True
        except KeyError as unknown:
            raise ValueError(
                f"policy {self.name!r} was trained with the moves {self.moves[:12]}..., not {unknown.args[0]!r}: "
                "play it on the environment and options it was trained on"
            ) from None
        return mask

    def probabilities(self, vectors: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The masked policy's move probabilities for a batch of vector observations and boolean masks (float64)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        masks = np.asarray(masks, dtype=bool)
        expected = getattr(self.policy, "observation_space", None)
        # dict_observations means __init__ found a Dict observation space on the policy.
        shape = self.policy.observation_space["observation"].shape if self.dict_observations else getattr(expected, "shape", None)
        if shape is not None and tuple(shape) != vectors.shape[1:]:
            raise ValueError(
                f"policy {self.name!r} takes vector observations of shape {tuple(shape)}, got {vectors.shape[1:]}: another environment or options"
            )
        if self.fast is not None:
            logits = np.where(masks, self.fast.logits(vectors, masks).astype(np.float64), -np.inf)
            logits -= logits.max(axis=1, keepdims=True)
            weights = np.exp(logits)
            return weights / weights.sum(axis=1, keepdims=True)
        import torch

        obs: Any = torch.as_tensor(vectors)
        if self.dict_observations:
            obs = {"observation": obs, "action_mask": torch.as_tensor(masks.astype(np.float32))}
        with torch.no_grad():
            distribution = self.policy.get_distribution(obs, action_masks=masks)
            probs = distribution.distribution.probs.double().numpy()
        probs = np.where(masks, probs, 0.0)
        return probs / probs.sum(axis=1, keepdims=True)

    def act(self, observation: Mapping[str, Any]) -> str:
        """A legal move drawn from the masked policy (the most likely one when ``deterministic``)."""
        vector = observation.get("vector")
        if vector is None:
            raise ValueError(
                f"{self.name} needs the vector observation, which parlour's rollouts, Gymnasium face and replay give agents "
                "with needs_vector; this environment or caller gave none"
            )
        legal = observation.get("legal_moves")
        if not legal:
            raise ValueError(f"{self.name} plays games with enumerable moves; the observation has no legal moves")
        (probs,) = self.probabilities(vector[None], self.mask(legal)[None])
        positive = probs[probs > 0]
        self.stats["entropy_sum"] += float(-(positive * np.log(positive)).sum())
        self.stats["entropy_decisions"] += 1
        if self.deterministic:
            choice = int(np.argmax(probs))
        else:
            if self.rng is None:
                self.rng = np.random.default_rng(self.seed)
            # Inverse-CDF sampling: what Generator.choice(p=...) does, without its checks on every move.
            cumulative = np.cumsum(probs)
            choice = min(int(np.searchsorted(cumulative, self.rng.random() * cumulative[-1], side="right")), len(probs) - 1)
            while probs[choice] == 0.0:
                choice -= 1
        return self.moves[choice]


def _is_dict_space(space: Any) -> bool:
    from gymnasium import spaces

    return isinstance(space, spaces.Dict)


def load_agent(spec: str, env_id: str | None = None, deterministic: bool | None = None, name: str | None = None) -> PolicyAgent:
    """The agent of an ``sb3:PATH`` spec for ``env_id`` (see the module docstring).

    ``deterministic`` overrides the metadata's ``deterministic`` (default: sample).
    ``ValueError`` when the policy was trained for another environment.
    """
    path = policy_path(spec)
    policy, metadata = load_policy(path)
    trained_for = metadata.get("env_id")
    if env_id is not None and trained_for is not None and trained_for != env_id:
        raise ValueError(f"{spec} was trained on {trained_for}, not {env_id}")
    moves = metadata.get("moves")
    if moves is None:
        target = env_id or trained_for
        if target is None:
            raise ValueError(f"{spec} has no {metadata_path(path).name} naming its environment; pass env_id")
        from parlour.envs.core.match import make_game
        from parlour.envs.registry import game_class

        moves = make_game(game_class(target), {}).moves
        if moves is None:
            raise ValueError(f"{target} has no enumerable moves, so no stable-baselines3 policy can play it")
    play = bool(metadata.get("deterministic", False)) if deterministic is None else bool(deterministic)
    return PolicyAgent(policy, moves, name=name or metadata.get("name") or f"sb3:{path.stem}", deterministic=play)


def check_spec(spec: str, env_id: str) -> None:
    """Check an ``sb3:PATH`` spec without loading the network: the file, the libraries, and the environment it was trained on."""
    import importlib.util

    path = policy_path(spec)
    if importlib.util.find_spec("sb3_contrib") is None:
        raise ImportError("sb3: agents need stable-baselines3 and sb3-contrib: pip install 'parlour[sb3]'")
    meta_file = metadata_path(path)
    if meta_file.exists():
        trained_for = json.loads(meta_file.read_text(encoding="utf-8")).get("env_id")
        if trained_for is not None and trained_for != env_id:
            raise ValueError(f"{spec} was trained on {trained_for}, not {env_id}")
