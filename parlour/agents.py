"""Agent specs: turn strings such as ``"random"`` or ``"python:pkg.mod:factory"`` into agents, and check them first.

:func:`make_agent` builds an agent from its spec. :func:`check_agent_spec`
checks a spec without building it (no model is loaded), so that a command can
refuse a bad one before it starts anything; it also tries what can fail on the
network (a hub model, a server) with a short timeout, so a typo or a missing
connection fails in seconds.

Options and names. Extra keyword arguments of :func:`make_agent` are the
agent's options (``hf:PATH`` takes ``mode``, ``temperature``,
``max_new_tokens``, ...; see :func:`parlour.wrappers.make_llm_agent`);
:class:`AgentSpec` holds a spec with its options and name as one picklable
value, for :func:`parlour.evaluate` and the command line's ``--agent-kwarg``
and ``--name``. An agent built from a spec is named after the spec (or the
name given), never after its class, so the same agent carries the same name
in an evaluation, a live match and the Gymnasium face.

``openai:MODEL@BASE_URL``: ``BASE_URL`` is the API root, the URL that
``/chat/completions`` is appended to, which for vLLM, Ollama, llama.cpp's
server, TGI and the OpenAI API ends in ``/v1`` (``http://localhost:8000/v1``).
A URL with no path, or one ending in ``/chat/completions``, is an error naming
the fix; another path that does not end in ``/v1`` only draws a warning from
:func:`check_agent_spec`, since some providers mount the API elsewhere (Gemini's
``.../v1beta/openai``).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import urlsplit

from parlour.baselines import make_scripted, opponent_ladder
from parlour.envs.core.errors import did_you_mean
from parlour.envs.core.plugins import load_published

#: Seconds the network checks of :func:`check_agent_spec` and of ``hf:`` hub ids wait before giving up.
NETWORK_TIMEOUT = 5.0
#: Where ``openai:MODEL`` without ``@BASE_URL`` goes when ``$OPENAI_BASE_URL`` is unset (the backend's default).
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
#: Hub ids found on the hub or in the cache in this process, so building the agent again does not ask again.
_KNOWN_HUB_MODELS: set[str] = set()


@dataclass(frozen=True)
class AgentSpec:
    """An agent spec string with its options and, optionally, its name: what to build, not yet built.

    Picklable, so an evaluation's worker processes each build their own agent
    from it. ``AgentSpec("hf:ckpt", kwargs={"mode": "generate"}, name="mine")``
    is ``make_agent("hf:ckpt", mode="generate", name="mine")``; its name is
    ``name``, else the spec string.
    """

    spec: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    name: str | None = None


@dataclass(frozen=True)
class AgentScheme:
    """One kind of agent spec, ``PREFIX:REST``: how a spec of that kind is checked and built.

    ``build(spec, env_id, name, options)`` returns the agent; ``check(spec, env_id,
    options)`` checks the spec and its options without building anything costly and
    returns warnings (errors are raised, naming the fix). ``batching`` says that its
    agents answer many observations in one ``act_batch`` call (LLMs), so a run builds
    one per process and shares it between episodes. A package adds a scheme of its own
    through the entry-point group ``parlour.agents`` (each entry point loads an
    :class:`AgentScheme`), or at run time with :func:`register_agent_scheme`.
    """

    prefix: str
    build: Callable[[str, str | None, str, Mapping[str, Any]], Any]
    check: Callable[[str, str, Mapping[str, Any]], list[str]]
    summary: str
    batching: bool = False


#: The entry-point group through which other packages publish agent schemes.
AGENT_SCHEME_GROUP = "parlour.agents"
_SCHEMES: dict[str, AgentScheme] = {}


def register_agent_scheme(scheme: AgentScheme) -> AgentScheme:
    """Make ``PREFIX:...`` specs build through ``scheme``; returns it. A prefix already taken by another scheme is refused."""
    if not isinstance(scheme, AgentScheme):
        raise TypeError(f"register_agent_scheme() takes an AgentScheme, got {type(scheme).__name__}")
    if not scheme.prefix.isidentifier():
        raise ValueError(f"an agent scheme's prefix is an identifier such as 'mylab' (specs then read 'mylab:...'), got {scheme.prefix!r}")
    known = _SCHEMES.get(scheme.prefix)
    if known is not None and known != scheme:
        raise ValueError(f"agent scheme {scheme.prefix!r} is already registered ({known.summary}); choose another prefix")
    _SCHEMES[scheme.prefix] = scheme
    return scheme


def agent_schemes() -> dict[str, AgentScheme]:
    """Every registered agent scheme by prefix: parlour's own and those of installed packages' entry points."""
    _load_entry_points()
    return dict(_SCHEMES)


@functools.cache
def _load_entry_points() -> None:
    """Register the agent schemes other packages publish under :data:`AGENT_SCHEME_GROUP` (once)."""
    load_published(AGENT_SCHEME_GROUP, register_agent_scheme)


def scheme_of(spec: str) -> AgentScheme | None:
    """The scheme a spec string is written in, or ``None`` for a scripted baseline's name (no ``PREFIX:``).

    A spec with a prefix that no scheme has is an error naming the closest one.
    """
    prefix, colon, _ = spec.partition(":")
    if not colon:
        return None
    schemes = agent_schemes()
    if prefix not in schemes:
        hint = did_you_mean(prefix, schemes, suffix=":")
        raise ValueError(f"agent spec {spec!r}: no agent scheme {prefix!r}{hint}; schemes: {', '.join(f'{p}:' for p in sorted(schemes))}")
    return schemes[prefix]


def is_batching(spec: Any) -> bool:
    """Whether an agent or spec is, or builds, an agent that answers with ``act_batch`` (known without building it)."""
    if isinstance(spec, AgentSpec):
        spec = spec.spec
    if isinstance(spec, str):
        scheme = scheme_of(spec)
        return scheme is not None and scheme.batching
    return hasattr(spec, "act_batch")


def make_agent(spec: Any, env_id: str | None = None, *, name: str | None = None, **kwargs: Any) -> Any:
    """Build an agent from ``spec``, named ``name`` or after the spec.

    ``spec`` may be an object with ``act(observation) -> str`` (returned as is,
    renamed if ``name`` is given), an :class:`AgentSpec`, the name of a scripted
    baseline for ``env_id`` (``"random"``, ``"minimax"``, ``"nash"``, ...), or a
    ``PREFIX:REST`` string of a registered :class:`AgentScheme`: an LLM
    (``"hf:PATH_OR_ID"``, ``"openai:MODEL@BASE_URL"``; see
    :func:`parlour.wrappers.make_llm_agent` for their options, and the module
    docstring for the URL), a stable-baselines3 policy (``"sb3:PATH"``, the
    ``.zip`` that ``parlour train sb3`` wrote; see :mod:`parlour.baselines.sb3_agent`),
    ``"python:module:factory"`` (``factory(**kwargs)`` is called; the
    module must be importable), or a scheme an installed package adds. Extra ``kwargs`` are the agent's options.
    A hub id that is neither cached nor reachable fails within :data:`NETWORK_TIMEOUT` seconds.

    The agent's ``name`` is set to ``name``, else to the spec string, whatever
    its class calls itself: :func:`agent_name` of the spec and of the agent agree.
    """
    if isinstance(spec, AgentSpec):
        return make_agent(spec.spec, env_id, name=name or spec.name, **{**spec.kwargs, **kwargs})
    if hasattr(spec, "act"):
        if kwargs:
            raise ValueError(f"options {sorted(kwargs)} are for agent specs; an agent object is used as it is: set them when you build it")
        return _named(spec, name) if name is not None else spec
    if not isinstance(spec, str):
        raise TypeError(f"an agent is an object with act(observation) -> str, or a spec string; got {type(spec).__name__}")
    name = spec if name is None else name
    scheme = scheme_of(spec)
    if scheme is not None:
        return _named(scheme.build(spec, env_id, name, kwargs), name)
    if env_id is None:
        raise ValueError(f"agent {spec!r} is a scripted baseline name; pass env_id to know which game it plays")
    return _named(make_scripted(spec, env_id, **kwargs), name)


def _named(agent: Any, name: str) -> Any:
    """``agent`` with its ``name`` attribute set to ``name``; a clear error when its class does not allow that."""
    if getattr(agent, "name", None) != name:
        try:
            agent.name = name
        except AttributeError:
            raise TypeError(
                f"cannot name the {type(agent).__name__} agent {name!r}: its name attribute is read-only; make it a plain attribute"
            ) from None
    return agent


def check_agent_spec(spec: Any, env_id: str) -> list[str]:
    """Check that ``spec`` can be built for ``env_id`` without loading a model or calling a factory; returns warnings.

    ``spec`` may be an :class:`AgentSpec`, whose options are checked too: an
    option the agent does not take is an error naming the closest one.
    Raises ``ValueError``, ``ImportError``, ``FileNotFoundError`` or
    ``ConnectionError`` with a message naming the fix: an unknown scripted name
    (with the closest one), an unknown scheme, a module that cannot be imported, a missing model
    folder, a hub id that is neither cached nor on the hub, an ``openai:`` URL
    that is malformed or whose server does not answer. Network checks give up
    after :data:`NETWORK_TIMEOUT` seconds.
    """
    options: Mapping[str, Any] = {}
    if isinstance(spec, AgentSpec):
        spec, options = spec.spec, spec.kwargs
    if hasattr(spec, "act"):
        return []
    if not isinstance(spec, str):
        raise TypeError(f"an agent is an object with act(observation) -> str, or a spec string; got {type(spec).__name__}")
    scheme = scheme_of(spec)
    if scheme is not None:
        return scheme.check(spec, env_id, options)
    # Scripted agents are cheap to build, and building one is the check (of the options' values too).
    check_options(spec, type(make_scripted(spec, env_id)), options, fixed=("env_id",))
    make_scripted(spec, env_id, **options)
    return []


def _build_llm(spec: str, env_id: str | None, name: str, options: Mapping[str, Any]) -> Any:
    if spec.startswith("hf:"):
        check_hf_model(spec)
    else:
        openai_base_url(spec)
    # Imported here so that torch, transformers and httpx load only when an LLM agent is asked for.
    from parlour.wrappers.llm_agent import make_llm_agent

    return make_llm_agent(spec, name=name, **options)


def _check_llm(spec: str, env_id: str, options: Mapping[str, Any]) -> list[str]:
    from parlour.wrappers.llm_agent import llm_options

    warnings: list[str] = []
    if spec.startswith("hf:"):
        check_hf_model(spec)
        llm_options(spec, options)
    else:
        base_url, warning = openai_base_url(spec)
        warnings += [warning] if warning else []
        llm_options(spec, options)
        check_server(spec, base_url)
    return warnings


def _build_sb3(spec: str, env_id: str | None, name: str, options: Mapping[str, Any]) -> Any:
    # Imported here so that torch and stable-baselines3 load only when a policy is asked for.
    from parlour.baselines.sb3_agent import load_agent

    return load_agent(spec, env_id=env_id, name=name, **options)


def _check_sb3(spec: str, env_id: str, options: Mapping[str, Any]) -> list[str]:
    from parlour.baselines.sb3_agent import check_spec, load_agent

    check_spec(spec, env_id)
    check_options(spec, load_agent, options, fixed=("spec", "env_id", "name"))
    return []


def _build_python(spec: str, env_id: str | None, name: str, options: Mapping[str, Any]) -> Any:
    agent = python_factory(spec)(**options)
    if not hasattr(agent, "act"):
        raise TypeError(f"{spec} returned {type(agent).__name__}, which has no act(observation) method")
    return agent


def _check_python(spec: str, env_id: str, options: Mapping[str, Any]) -> list[str]:
    check_options(spec, python_factory(spec), options)
    return []


register_agent_scheme(AgentScheme("hf", _build_llm, _check_llm, "a transformers model: hf:PATH_OR_HUB_ID", batching=True))
register_agent_scheme(AgentScheme("openai", _build_llm, _check_llm, "an OpenAI-compatible server: openai:MODEL@BASE_URL", batching=True))
register_agent_scheme(AgentScheme("sb3", _build_sb3, _check_sb3, "a stable-baselines3 policy: sb3:PATH.zip"))
register_agent_scheme(AgentScheme("python", _build_python, _check_python, "a factory of yours: python:package.module:factory"))


def check_options(spec: str, factory: Callable[..., Any], options: Mapping[str, Any], fixed: tuple[str, ...] = ()) -> None:
    """``ValueError`` naming the closest option when ``factory`` takes no keyword named like one of ``options``.

    ``fixed`` are parameters the spec itself sets. A factory that takes
    ``**kwargs`` accepts anything here and judges for itself when called.
    """
    parameters = inspect.signature(factory).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    known = [
        key
        for key, p in parameters.items()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY) and key not in fixed
    ]
    for key in options:
        if key not in known:
            raise ValueError(f"no option {key!r} for agent {spec!r}{did_you_mean(key, known)}; its options: {', '.join(known) or 'none'}")


def python_factory(spec: str) -> Callable[..., Any]:
    """The factory named by ``python:module:factory``; errors say that the module must be importable."""
    parts = spec.split(":")
    if len(parts) != 3 or not all(parts[1:]):
        raise ValueError(f"python agent spec must look like 'python:package.module:factory', got {spec!r}")
    _, module_name, attr = parts
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name is not None and (module_name == error.name or module_name.startswith(error.name + ".")):
            raise ModuleNotFoundError(
                f"agent spec {spec!r}: there is no module {module_name!r} to import; the module must be importable: "
                "install its package, or add the folder that holds it to PYTHONPATH (e.g. PYTHONPATH=. parlour ...)"
            ) from None
        raise ImportError(f"agent spec {spec!r}: importing {module_name!r} failed: {error}") from error
    except Exception as error:
        raise ImportError(f"agent spec {spec!r}: importing {module_name!r} failed: {type(error).__name__}: {error}") from error
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise AttributeError(f"agent spec {spec!r}: module {module_name!r} has no function or class {attr!r}")
    return factory


def openai_base_url(spec: str) -> tuple[str, str | None]:
    """The API root an ``openai:`` spec talks to and a warning about it, if any; ``ValueError`` for a malformed one.

    See the module docstring for the rules on ``/v1``.
    """
    model, _, given = spec.removeprefix("openai:").partition("@")
    if not model:
        raise ValueError(f"agent spec {spec!r} names no model; use 'openai:MODEL@BASE_URL', e.g. openai:my-model@http://localhost:8000/v1")
    base_url = given or os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_URL
    source = "" if given else " (from $OPENAI_BASE_URL)"
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"agent spec {spec!r}: base URL {base_url!r}{source} is not an http(s) URL; e.g. http://localhost:8000/v1")
    path = parts.path.rstrip("/")
    root = f"{parts.scheme}://{parts.netloc}"
    if path.endswith("/chat/completions"):
        raise ValueError(
            f"agent spec {spec!r}: give the API root, not the endpoint: {root}{path.removesuffix('/chat/completions')}{source} "
            "(parlour appends /chat/completions itself)"
        )
    if not path:
        raise ValueError(
            f"agent spec {spec!r}: base URL {base_url!r}{source} has no path; OpenAI-compatible servers serve the API under /v1: use {root}/v1"
        )
    warning = None
    if not path.endswith("/v1"):
        warning = (
            f"agent spec {spec!r}: base URL {base_url!r}{source} does not end in /v1; requests go to "
            f"{root}{path}/chat/completions (vLLM, Ollama, llama.cpp and OpenAI serve {root}/v1/chat/completions)"
        )
    return root + path, warning


def check_server(spec: str, base_url: str) -> None:
    """``ConnectionError`` naming the fix when nothing answers at ``base_url`` (any HTTP answer will do)."""
    import httpx

    def probe() -> None:
        httpx.get(base_url + "/models", timeout=NETWORK_TIMEOUT)

    problem = _within(probe, NETWORK_TIMEOUT)
    if problem is not None:
        raise ConnectionError(
            f"agent spec {spec!r}: no server answers at {base_url} ({problem}); start it (e.g. `vllm serve MODEL` or `ollama serve`) or fix the URL"
        )


def check_hf_model(spec: str) -> None:
    """Fail fast for an ``hf:`` spec that cannot load: a missing folder, an id neither cached nor on the hub.

    A folder that exists is left to the backend. A hub id is taken from the local
    cache when it is there; otherwise, with ``HF_HUB_OFFLINE`` set it is an error,
    and without it the hub is asked once, for at most :data:`NETWORK_TIMEOUT`
    seconds (the libraries' own retries take about a minute to give up).
    """
    target = spec.removeprefix("hf:")
    if not target:
        raise ValueError(f"agent spec {spec!r} names no model; use 'hf:PATH_OR_ID'")
    if Path(target).exists() or target in _KNOWN_HUB_MODELS:
        return
    if target.startswith((".", "/", "~")) or target.count("/") > 1:
        # Hub ids are "name" or "namespace/name"; anything else is a folder that is not there.
        raise FileNotFoundError(f"no model folder at {target!r} (and it is not a hub id such as 'namespace/name')")
    try:
        from huggingface_hub import model_info, try_to_load_from_cache
        from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError
    except ImportError:
        # Without huggingface_hub there is no transformers either; the backend says what to install.
        return
    if isinstance(try_to_load_from_cache(target, "config.json"), str):
        _KNOWN_HUB_MODELS.add(target)
        return
    if any(os.environ.get(name, "").upper() in ("1", "ON", "YES", "TRUE") for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")):
        raise FileNotFoundError(
            f"{target!r} is not a folder and not in the local Hugging Face cache, and HF_HUB_OFFLINE is set: "
            f"download it while online (`hf download {target}`) or give the model's folder"
        )
    errors: list[BaseException] = []

    def probe() -> None:
        try:
            model_info(target, timeout=NETWORK_TIMEOUT)
        except HfHubHTTPError as error:
            # The hub answered: only "no such model" is ours to report; other answers are left to the backend.
            if isinstance(error, RepositoryNotFoundError):
                errors.append(error)

    problem = _within(probe, NETWORK_TIMEOUT)
    if errors:
        raise FileNotFoundError(
            f"no model {target!r} on the Hugging Face hub and no folder of that name (a private or gated model needs `hf auth login`)"
        )
    if problem is not None:
        raise ConnectionError(
            f"cannot reach the Hugging Face hub to fetch {target!r} ({problem}); connect to the network, give the model's "
            "folder, or download it and set HF_HUB_OFFLINE=1"
        )
    _KNOWN_HUB_MODELS.add(target)


def _within(probe: Callable[[], None], seconds: float) -> str | None:
    """Run ``probe`` for at most ``seconds``; ``None`` if it returned, else what went wrong, in words.

    A daemon thread, because name resolution ignores the HTTP clients' timeouts
    and a stuck one must not keep the process alive.
    """
    failures: list[BaseException] = []

    def run() -> None:
        try:
            probe()
        except Exception as error:
            failures.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds + 1.0)
    if thread.is_alive():
        return f"no answer within {seconds:g} s"
    if failures:
        return f"{type(failures[0]).__name__}: {failures[0]}"
    return None


def ladder_specs(env_id: str) -> list[AgentSpec]:
    """``env_id``'s opponent ladder (see :func:`parlour.baselines.register_ladder`) as agent specs, weakest first; a rung
    with options is named after them (``minimax(depth=2)``), so records and tables tell the rungs apart."""
    specs = []
    for name, options in opponent_ladder(env_id):
        label = name if not options else f"{name}({', '.join(f'{key}={value}' for key, value in options.items())})"
        specs.append(AgentSpec(name, kwargs=options, name=label))
    return specs


def agent_name(spec: Any) -> str:
    """The name of an agent or its spec: an :class:`AgentSpec`'s name, else its spec string; a spec string; an agent's ``name``, else its class's."""
    if isinstance(spec, AgentSpec):
        return spec.name or spec.spec
    if isinstance(spec, str):
        return spec
    return str(getattr(spec, "name", type(spec).__name__))
