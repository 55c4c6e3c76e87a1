"""What an LLM backend is: chat conversations in, completions out.

:class:`parlour.wrappers.llm_agent.LLMAgent` drives any object with this
interface; :mod:`parlour.wrappers.transformers_backend` and
:mod:`parlour.wrappers.openai_backend` are the two built in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

#: A chat message: ``{"role": "system" | "user" | "assistant", "content": str}``.
Message = dict[str, str]

#: Characters per token assumed where no tokenizer is at hand (OpenAI's rule of thumb for English).
CHARS_PER_TOKEN = 4


@dataclass
class Completion:
    """One generated reply with its token usage, or, with ``error`` set, why this one conversation got none.

    A backend that serves many conversations at once reports a request that failed after its retries this
    way, so the others' replies are kept; the agent turns it into an
    :class:`~parlour.envs.core.agent.AgentFailure` for that turn.
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    error: str | None = None


class BackendError(RuntimeError):
    """A backend could not produce a completion (server down, bad response, ...); the message says where and why."""


class Backend(Protocol):
    """Generates replies to many conversations at once.

    ``name`` is the agent name for records (``"hf:/path"``, ``"openai:model"``);
    ``context_limit`` the model's context length in tokens, or ``None`` when
    unknown; ``max_new_tokens`` the longest reply it generates.
    """

    name: str
    context_limit: int | None
    max_new_tokens: int

    def generate(self, conversations: list[list[Message]], seed: int | None = None) -> list[Completion]:
        """One completion per conversation, in order; ``seed`` makes sampling reproducible where supported."""
        ...

    def count_tokens(self, messages: list[Message]) -> int:
        """How many prompt tokens ``messages`` take."""
        ...


def estimate_tokens(messages: list[Message]) -> int:
    """A tokenizer-free token estimate of ``messages``: characters over :data:`CHARS_PER_TOKEN`, plus a few per message."""
    return sum(len(m["content"]) // CHARS_PER_TOKEN + 4 for m in messages)
