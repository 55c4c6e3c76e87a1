"""The LLM agent: a backend plus prompting, action extraction, retries and accounting.

Build one with :func:`make_llm_agent` from a spec string (``hf:PATH_OR_ID``,
``openai:MODEL@BASE_URL``), or directly as ``LLMAgent(backend, ...)``.

A checkpoint plays as it was trained. ``parlour train llm`` writes
:data:`CHECKPOINT_FILE` beside the weights (:func:`write_checkpoint_settings`):
the action mode and the decoding its own evaluation used. ``hf:FOLDER`` reads
it, and the options given to the spec override it.
"""

from __future__ import annotations

import inspect
import json
import time
from pathlib import Path
from typing import Any, Hashable, Mapping, NamedTuple

import numpy as np

from parlour.envs.core.agent import AgentFailure
from parlour.envs.core.errors import did_you_mean
from parlour.wrappers.backend import Backend, BackendError, Completion, Message
from parlour.wrappers.extraction import FORMAT_HINTS, Extractor, default_extraction, resolve_extractor, strip_reasoning
from parlour.wrappers.llm_policy import MODES, LMPolicy
from parlour.wrappers.prompting import SYSTEM_TEMPLATE, Conversation, EpisodeConversations

#: The file beside a checkpoint's weights that says how it plays (see the module docstring).
CHECKPOINT_FILE = "parlour_agent.json"
#: What :data:`CHECKPOINT_FILE` holds, in :class:`~parlour.wrappers.llm_policy.LMPolicy`'s terms.
CHECKPOINT_KEYS = ("mode", "temperature", "greedy", "max_new_tokens", "history_turns")
#: Options of the backends that the spec itself sets.
SPEC_SET = ("model", "base_url")
#: Options of :class:`~parlour.wrappers.transformers_backend.TransformersBackend` that are decoding, which
#: :class:`~parlour.wrappers.llm_policy.LMPolicy` does itself in ``score_legal`` mode.
DECODING = ("max_new_tokens", "do_sample", "temperature", "top_p", "top_k")
#: Keys of :meth:`LLMAgent.stats`.
STAT_KEYS = ("prompt_tokens", "completion_tokens", "calls", "batches", "latency_s", "parse_failures", "retries", "backend_failures")


class LLMAgent(EpisodeConversations):
    """An agent that asks an LLM backend for its moves, with history, extraction, retries and accounting.

    Conversations: the agent keeps one :class:`~parlour.wrappers.prompting.Conversation`
    per key ``(observation.get("episode"), observation["player"])``. A runner
    that plays many episodes at once with one agent puts a distinct, hashable
    ``"episode"`` id in each observation; without it, all observations of a
    player share one conversation. ``reset(seed, episode=None)`` forgets the
    conversations of that episode id (all of them when ``episode`` is ``None``)
    and, given a seed, reseeds sampling; ``forget(episode)`` frees a finished
    episode's conversations.

    Each observation's text becomes a user message. A reply is stripped of
    reasoning and passed to the extractor; when it yields no action, the agent
    tells the model why (the legal moves or the expected format) and asks
    again, up to ``max_retries`` times, then passes the last non-empty reply on
    as is, so the environment's invalid-action policy takes over.

    Failures: when the backend gives no reply for a turn (its error after its
    own retries), the agent plays an :class:`~parlour.envs.core.agent.AgentFailure`
    with the error as reason, which the engine records as that turn's invalid
    action, so a failing server costs turns, not the run. After
    ``failure_limit`` failed turns in a row the circuit breaker opens: the
    agent stops calling the backend and forfeits every later turn with the
    reason, so the rest of an evaluation ends quickly and says why.

    Args:
        backend: a :class:`~parlour.wrappers.backend.Backend`.
        name: the agent's name for records; defaults to the backend's.
        extraction: an extractor name (see :mod:`parlour.wrappers.extraction`),
            a function ``(text, legal_moves) -> str | None``, or a dict from env
            id to either; ``None`` picks per environment with ``default_extraction``.
        max_retries: extra generations for a reply without an action.
        max_turns: keep at most this many turns of history (``None``: all).
        max_context_tokens: keep the prompt within this many tokens; defaults to
            the backend's context limit minus its ``max_new_tokens``.
        system_template: the system prompt's first line; may use ``{player}``,
            ``{env_id}`` and ``{format}``.
        seed: seeds sampling; each generate call draws its seed from an
            ``np.random.Generator`` seeded with it.
        failure_limit: failed turns in a row that open the circuit breaker.

    :meth:`stats` returns the accounting since construction (or
    :meth:`reset_stats`): ``prompt_tokens`` and ``completion_tokens`` (summed
    over calls), ``calls`` (completions requested, retries included),
    ``batches`` (backend ``generate`` calls), ``latency_s`` (wall time spent in
    the backend), ``backend_failures`` (turns the backend gave no reply for),
    ``parse_failures`` (replies with no action) and ``retries``
    (re-asks after a parse failure).
    """

    def __init__(
        self,
        backend: Backend,
        *,
        name: str | None = None,
        extraction: str | Extractor | Mapping[str, str | Extractor] | None = None,
        max_retries: int = 2,
        max_turns: int | None = None,
        max_context_tokens: int | None = None,
        system_template: str = SYSTEM_TEMPLATE,
        seed: int | None = None,
        failure_limit: int = 5,
    ):
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if max_turns is not None and max_turns < 1:
            raise ValueError(f"max_turns must be >= 1 or None, got {max_turns}")
        self.backend = backend
        self.name = name or backend.name
        self.extraction = extraction
        self.max_retries = max_retries
        self.max_turns = max_turns
        if max_context_tokens is None and backend.context_limit is not None:
            max_context_tokens = backend.context_limit - backend.max_new_tokens
        self.max_context_tokens = max_context_tokens
        self.system_template = system_template
        self.rng = np.random.default_rng(seed)
        if not (isinstance(failure_limit, int) and failure_limit >= 1):
            raise ValueError(f"failure_limit must be an int >= 1, got {failure_limit!r}")
        self.failure_limit = failure_limit
        self.failures_in_a_row = 0
        #: Why the circuit breaker opened, once it has; from then on every turn forfeits.
        self.broken: str | None = None
        self.conversations: dict[tuple[Hashable, str], Conversation] = {}
        self._stats: dict[str, float] = {}
        self.reset_stats()

    def stats(self) -> dict[str, float]:
        """The accounting dict (see the class docstring)."""
        return dict(self._stats)

    def reset_stats(self) -> None:
        """Zero the accounting."""
        self._stats = {key: 0 for key in STAT_KEYS}
        self._stats["latency_s"] = 0.0

    # ------------------------------------------------------------------ acting
    def act(self, observation: Mapping[str, Any]) -> str | AgentFailure:
        """The action text for one observation (an :class:`AgentFailure` where the backend failed)."""
        return self.act_batch([observation])[0]

    def act_batch(self, observations: list[Mapping[str, Any]]) -> list[str | AgentFailure]:
        """Action texts for many observations (of distinct conversations), with one backend call per retry round.

        A turn the backend failed on is an :class:`AgentFailure` instead of text (see the class docstring).
        """
        if not observations:
            return []
        if self.broken is not None:
            return [AgentFailure(self.broken, forfeit=True) for _ in observations]
        keys = [(obs.get("episode"), str(obs.get("player"))) for obs in observations]
        if len(set(keys)) != len(keys):
            raise ValueError("act_batch got two observations of the same (episode, player); give each episode its own 'episode' id")
        extractors = [self._extractor(obs) for obs in observations]
        conversations = [self._observe(key, obs, name) for key, obs, (name, _) in zip(keys, observations, extractors)]
        actions: list[str | AgentFailure] = [""] * len(observations)
        fallback = [""] * len(observations)
        pending = list(range(len(observations)))
        for attempt in range(self.max_retries + 1):
            completions = self._generate([conversations[i] for i in pending])
            still: list[int] = []
            for i, completion in zip(pending, completions):
                if completion.error is not None:
                    actions[i] = self._failed(completion.error)
                    continue
                self.failures_in_a_row = 0
                reply = strip_reasoning(completion.text)
                conversations[i].reply(reply)
                legal = observations[i].get("legal_moves")
                action = extractors[i][1](reply, legal)
                if action is not None:
                    actions[i] = action
                    continue
                self._stats["parse_failures"] += 1
                fallback[i] = reply or fallback[i] or completion.text
                if attempt < self.max_retries:
                    self._stats["retries"] += 1
                    conversations[i].feedback(self._feedback(extractors[i][0], legal))
                    still.append(i)
                else:
                    actions[i] = fallback[i]
            pending = still
            if not pending:
                break
        return actions

    # --------------------------------------------------------------- internals
    def _extractor(self, observation: Mapping[str, Any]) -> tuple[str, Extractor]:
        env_id: str | None = observation.get("env_id")
        choice = self.extraction
        if isinstance(choice, Mapping):
            choice = choice.get(env_id) if env_id is not None else None
        if choice is None:
            choice = default_extraction(env_id)
        return resolve_extractor(choice)

    def _feedback(self, extraction: str, legal: list[str] | None) -> str:
        hint = FORMAT_HINTS.get(extraction, FORMAT_HINTS["auto"])
        if legal:
            return f"Your reply contained no legal move. {hint} Legal moves: {', '.join(legal)}."
        return f"Your reply contained no well-formed action. {hint}"

    def _failed(self, error: str) -> AgentFailure:
        """The failure a turn plays when the backend gave it no reply; opens the breaker after too many in a row."""
        self._stats["backend_failures"] += 1
        self.failures_in_a_row += 1
        if self.failures_in_a_row >= self.failure_limit and self.broken is None:
            self.broken = f"circuit breaker open after {self.failures_in_a_row} failed backend calls in a row; the last: {error}"
        return AgentFailure(error)

    def _generate(self, conversations: list[Conversation]) -> list[Completion]:
        prompts: list[list[Message]] = [c.messages(self.max_turns, self.max_context_tokens, self.backend.count_tokens) for c in conversations]
        seed = int(self.rng.integers(1 << 31))
        started = time.perf_counter()
        try:
            completions = self.backend.generate(prompts, seed=seed)
        except BackendError as error:
            # A backend that fails a whole batch (a local model out of memory) fails each of its turns.
            completions = [Completion(text="", prompt_tokens=0, completion_tokens=0, error=str(error)) for _ in prompts]
        self._stats["latency_s"] += time.perf_counter() - started
        self._stats["batches"] += 1
        self._stats["calls"] += len(prompts)
        for completion in completions:
            self._stats["prompt_tokens"] += completion.prompt_tokens
            self._stats["completion_tokens"] += completion.completion_tokens
        return completions


def write_checkpoint_settings(folder: str | Path, **settings: Any) -> Path:
    """Write :data:`CHECKPOINT_FILE` into ``folder``: how the checkpoint there plays (:data:`CHECKPOINT_KEYS`, plus notes such as ``env_id``)."""
    missing = [key for key in CHECKPOINT_KEYS if key not in settings]
    if missing:
        raise ValueError(f"checkpoint settings need {', '.join(missing)}")
    if settings["mode"] not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {settings['mode']!r}")
    path = Path(folder) / CHECKPOINT_FILE
    path.write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def checkpoint_settings(spec: str) -> dict[str, Any]:
    """The settings a local ``hf:FOLDER`` checkpoint was saved with (:data:`CHECKPOINT_KEYS`); empty for any other spec."""
    if not spec.startswith("hf:"):
        return {}
    path = Path(spec.removeprefix("hf:")) / CHECKPOINT_FILE
    if not path.is_file():
        return {}
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ValueError(f"{path} is not JSON ({error}); delete it to play the model without its training settings") from None
    if not isinstance(saved, dict) or saved.get("mode") not in MODES or any(key not in saved for key in CHECKPOINT_KEYS):
        raise ValueError(
            f"{path} must be an object with {', '.join(CHECKPOINT_KEYS)} and a mode among {', '.join(MODES)}; "
            "delete it to play the model without its training settings"
        )
    return {key: saved[key] for key in CHECKPOINT_KEYS}


def _parameters(factory: Any, leave_out: tuple[str, ...] = ()) -> list[str]:
    """The keyword options of ``factory`` (a class's ``__init__``), less ``leave_out``."""
    return [key for key in inspect.signature(factory).parameters if key not in leave_out]


def _mode_options(kind: str, mode: str) -> tuple[list[str], list[str]]:
    """The options of an ``hf:``/``openai:`` agent in ``mode``: those of the agent, and those of its backend."""
    if kind == "openai":
        from parlour.wrappers.openai_backend import OpenAIBackend

        return _parameters(LLMAgent, ("backend",)), _parameters(OpenAIBackend, SPEC_SET)
    from parlour.wrappers.transformers_backend import TransformersBackend

    if mode == "score_legal":
        return _parameters(LMPolicy, ("backend", "model")), _parameters(TransformersBackend, SPEC_SET + DECODING)
    return _parameters(LLMAgent, ("backend",)), _parameters(TransformersBackend, SPEC_SET)


class LLMOptions(NamedTuple):
    """An LLM spec's mode and its options split between the agent and its backend (:func:`llm_options`)."""

    mode: str
    agent: dict[str, Any]
    backend: dict[str, Any]


def llm_options(spec: str, options: Mapping[str, Any]) -> LLMOptions:
    """The mode of an LLM spec and its options split between the agent and its backend, the checkpoint's settings first.

    ``options`` override what :data:`CHECKPOINT_FILE` says. ``mode`` is
    ``score_legal`` (an :class:`~parlour.wrappers.llm_policy.LMPolicy`: a softmax
    over the legal moves; ``hf:`` only) or ``generate`` (an :class:`LLMAgent`:
    free text read by an extractor); without a checkpoint file, ``generate``.
    A checkpoint's decoding maps onto ``generate`` as its trainer played it:
    ``greedy`` is ``do_sample=False``, ``history_turns`` is ``max_turns``, and
    a reply without a move is not asked again (``max_retries=0``).
    ``ValueError`` names the fix for an unknown mode or option.
    """
    kind = spec.partition(":")[0]
    if kind not in ("hf", "openai"):
        raise ValueError(f"unknown LLM agent spec {spec!r}; use 'hf:PATH_OR_ID' or 'openai:MODEL@BASE_URL'")
    options = dict(options)
    saved = checkpoint_settings(spec)
    mode = options.pop("mode", saved.get("mode", "generate"))
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if kind == "openai" and mode != "generate":
        raise ValueError(f"{spec}: mode={mode} scores moves with the model's weights; a server only generates text: load the model with hf:")
    agent_keys, backend_keys = _mode_options(kind, mode)
    for key in options:
        if key in agent_keys or key in backend_keys:
            continue
        other = [m for m in MODES if m != mode and kind == "hf" and key in sum(_mode_options(kind, m), [])]
        if other:
            raise ValueError(
                f"{key} is an option of mode={other[0]}, not of mode={mode} ({spec}); its options: {', '.join(agent_keys + backend_keys)}"
            )
        hint = did_you_mean(key, agent_keys + backend_keys)
        raise ValueError(f"no option {key!r} for agent {spec!r} in mode={mode}{hint}; its options: {', '.join(agent_keys + backend_keys)}")
    if saved:
        saved.pop("mode")
        if mode == "generate":
            saved = {
                "temperature": saved["temperature"],
                "do_sample": not saved["greedy"],
                "max_new_tokens": saved["max_new_tokens"],
                "max_turns": saved["history_turns"],
                "max_retries": 0,
            }
        options = {**saved, **options}
    agent_options = {key: value for key, value in options.items() if key in agent_keys}
    backend_options = {key: value for key, value in options.items() if key not in agent_keys}
    if mode == "score_legal":
        agent_options["mode"] = mode
    return LLMOptions(mode, agent_options, backend_options)


def make_llm_agent(spec: str, **kwargs: Any) -> LLMAgent | LMPolicy:
    """Build the agent of ``hf:PATH_OR_ID`` or ``openai:MODEL@BASE_URL``: an :class:`LLMAgent`, or an :class:`LMPolicy` in ``score_legal`` mode.

    A checkpoint plays as it was trained (see :func:`llm_options`, which also
    says how ``kwargs`` split between the agent and its backend:
    :class:`~parlour.wrappers.transformers_backend.TransformersBackend` or
    :class:`~parlour.wrappers.openai_backend.OpenAIBackend`, so that
    ``max_response_bytes`` of the one and ``failure_limit`` of the agent are
    options alike). Without ``@BASE_URL`` the OpenAI backend uses
    ``$OPENAI_BASE_URL`` or the OpenAI API. The agent's name defaults to the spec.
    """
    mode, agent_kwargs, backend_kwargs = llm_options(spec, kwargs)
    kind, _, target = spec.partition(":")
    if not target:
        raise ValueError(f"agent spec {spec!r} names no model; use 'hf:PATH_OR_ID' or 'openai:MODEL@BASE_URL'")
    backend: Backend
    if kind == "hf":
        from parlour.wrappers.transformers_backend import TransformersBackend

        backend = TransformersBackend(target, **backend_kwargs)
        if mode == "score_legal":
            return LMPolicy(backend, **{"name": spec, **agent_kwargs})
    else:
        from parlour.wrappers.openai_backend import OpenAIBackend

        model, _, base_url = target.partition("@")
        if base_url:
            backend_kwargs["base_url"] = base_url
        backend = OpenAIBackend(model, **backend_kwargs)
    return LLMAgent(backend, **agent_kwargs)
