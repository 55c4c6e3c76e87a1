"""Agent specs: turn strings such as ``"random"`` or ``"python:pkg.mod:factory"`` into agents."""

from __future__ import annotations

import importlib
from typing import Any

from parlour.baselines import make_scripted


def make_agent(spec: Any, env_id: str | None = None, **kwargs: Any) -> Any:
    """Build an agent from ``spec``.

    ``spec`` may be an object with ``act(observation) -> str`` (returned as is),
    the name of a scripted baseline for ``env_id`` (``"random"``, ``"minimax"``,
    ``"nash"``, ...), an LLM (``"hf:PATH_OR_ID"``, ``"openai:MODEL@BASE_URL"``;
    see :func:`parlour.wrappers.make_llm_agent`), or ``"python:module:factory"``
    (``factory(**kwargs)`` is called). Extra ``kwargs`` go to the agent's constructor.
    """
    if hasattr(spec, "act"):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"an agent is an object with act(observation) -> str, or a spec string; got {type(spec).__name__}")
    if spec.startswith(("hf:", "openai:")):
        # Imported here so that torch, transformers and httpx load only when an LLM agent is asked for.
        from parlour.wrappers.llm_agent import make_llm_agent

        return make_llm_agent(spec, **kwargs)
    if spec.startswith("python:"):
        try:
            _, module, attr = spec.split(":")
        except ValueError:
            raise ValueError(f"python agent spec must look like 'python:package.module:factory', got {spec!r}") from None
        factory = getattr(importlib.import_module(module), attr)
        agent = factory(**kwargs)
        if not hasattr(agent, "act"):
            raise TypeError(f"{spec} returned {type(agent).__name__}, which has no act(observation) method")
        return agent
    if env_id is None:
        raise ValueError(f"agent {spec!r} is a scripted baseline name; pass env_id to know which game it plays")
    return make_scripted(spec, env_id, **kwargs)


def agent_name(spec: Any) -> str:
    """A display name for an agent or its spec."""
    if isinstance(spec, str):
        return spec
    return str(getattr(spec, "name", type(spec).__name__))
