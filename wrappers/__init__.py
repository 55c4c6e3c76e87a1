"""LLM agents: prompting, action extraction, retries and accounting over a backend.

* :class:`LLMAgent` and :func:`make_llm_agent` (spec strings ``hf:PATH_OR_ID``
  and ``openai:MODEL@BASE_URL``, also accepted by :func:`parlour.make_agent`);
* backends: :class:`TransformersBackend` (local causal LM) and
  :class:`OpenAIBackend` (OpenAI-compatible HTTP), loaded on first use so that
  importing this package pulls in neither torch nor httpx;
* :mod:`parlour.wrappers.extraction` and :mod:`parlour.wrappers.prompting`.
"""

from __future__ import annotations

from typing import Any

from parlour.wrappers.backend import Backend, BackendError, Completion
from parlour.wrappers.extraction import EXTRACTORS, extract_action, strip_reasoning
from parlour.wrappers.llm_agent import LLMAgent, make_llm_agent
from parlour.wrappers.prompting import Conversation

#: Backends imported on first access, with the module that defines each.
_LAZY = {
    "TransformersBackend": "parlour.wrappers.transformers_backend",
    "OpenAIBackend": "parlour.wrappers.openai_backend",
}


def __getattr__(name: str) -> Any:
    """Import a backend class on first access."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "EXTRACTORS",
    "Backend",
    "BackendError",
    "Completion",
    "Conversation",
    "LLMAgent",
    "OpenAIBackend",
    "TransformersBackend",
    "extract_action",
    "make_llm_agent",
    "strip_reasoning",
]
