"""The OpenAI-compatible backend: chat completions over HTTP (vLLM, Ollama, llama.cpp server, TGI, hosted APIs).

httpx is imported when a backend is built, never at ``import parlour``.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from parlour.wrappers.backend import BackendError, Completion, Message, estimate_tokens

#: HTTP statuses worth retrying: rate limiting and server-side failures.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class OpenAIBackend:
    """Chat completions from an OpenAI-compatible server, many requests in flight at once.

    A batch of conversations is sent as concurrent requests, at most
    ``concurrency`` at a time. A request that fails with 429, a 5xx, a timeout
    or a connection error is retried up to ``max_attempts`` times in all, waiting
    ``backoff * 2**attempt`` seconds (at most ``max_backoff``, at least the
    server's ``Retry-After``) between tries; then, or at once for any other
    error status or a malformed response, :class:`BackendError` is raised naming
    the URL and the status.

    Args:
        model: the model name the server knows.
        base_url: the API root, e.g. ``http://localhost:8000/v1``.
        api_key_env: the environment variable holding the API key (none sent when unset).
        concurrency: the most requests in flight.
        timeout: seconds for each request (connecting, reading, writing).
        max_attempts: tries per request, the first included.
        backoff, max_backoff: the retry delays (seconds).
        max_new_tokens: ``max_tokens`` of each request.
        temperature, top_p: sampling parameters.
        context_limit: the model's context length, if known, for the agent's token window.
        extra_body: more fields for every request (``stop``, ``max_completion_tokens``, ...).
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        timeout: float = 60.0,
        max_attempts: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        max_new_tokens: int = 256,
        temperature: float = 1.0,
        top_p: float = 1.0,
        context_limit: int | None = None,
        extra_body: dict[str, Any] | None = None,
    ):
        import httpx

        if concurrency < 1 or max_attempts < 1:
            raise ValueError(f"concurrency and max_attempts must be >= 1, got {concurrency} and {max_attempts}")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        self.model = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.name = f"openai:{model}"
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_new_tokens = max_new_tokens
        self.context_limit = context_limit
        self.sampling = {"temperature": temperature, "top_p": top_p, **(extra_body or {})}
        headers = {"Content-Type": "application/json"}
        api_key = os.environ.get(api_key_env)
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.client = httpx.Client(
            headers=headers, timeout=timeout, limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        )

    def count_tokens(self, messages: list[Message]) -> int:
        """An estimate of the prompt tokens of ``messages`` (the server's tokenizer is not at hand)."""
        return estimate_tokens(messages)

    def generate(self, conversations: list[list[Message]], seed: int | None = None) -> list[Completion]:
        """One completion per conversation; requests run concurrently, at most ``concurrency`` at a time."""
        seeds = [None if seed is None else seed + index for index in range(len(conversations))]
        if len(conversations) <= 1:
            return [self.complete(messages, s) for messages, s in zip(conversations, seeds)]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(conversations))) as pool:
            return list(pool.map(self.complete, conversations, seeds))

    def complete(self, messages: list[Message], seed: int | None = None) -> Completion:
        """One chat completion, with retries and backoff."""
        import httpx

        payload: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": self.max_new_tokens, **self.sampling}
        if seed is not None:
            payload["seed"] = seed
        problem = ""
        for attempt in range(self.max_attempts):
            retry_after = 0.0
            try:
                response = self.client.post(self.url, json=payload)
            except httpx.TimeoutException:
                problem = f"timed out after {self.timeout:g}s"
            except httpx.TransportError as error:
                problem = f"could not connect ({type(error).__name__}: {error})"
            else:
                if response.status_code == 200:
                    return self._completion(response, messages)
                problem = f"HTTP {response.status_code}: {response.text[:200]}"
                if response.status_code not in RETRY_STATUSES:
                    raise BackendError(f"POST {self.url} failed: {problem}")
                retry_after = _retry_after(response.headers.get("Retry-After"))
            if attempt + 1 < self.max_attempts:
                time.sleep(min(self.max_backoff, max(self.backoff * 2**attempt, retry_after)))
        raise BackendError(f"POST {self.url} failed after {self.max_attempts} attempt(s): {problem}")

    def _completion(self, response: Any, messages: list[Message]) -> Completion:
        try:
            data = response.json()
            content = data["choices"][0]["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as error:
            raise BackendError(
                f"POST {self.url} returned a malformed chat completion ({type(error).__name__}): {response.text[:200]!r}"
            ) from None
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        prompt_tokens = usage.get("prompt_tokens")
        completion_tokens = usage.get("completion_tokens")
        return Completion(
            text=str(content),
            prompt_tokens=int(prompt_tokens) if prompt_tokens is not None else estimate_tokens(messages),
            completion_tokens=int(completion_tokens)
            if completion_tokens is not None
            else estimate_tokens([{"role": "assistant", "content": str(content)}]),
        )

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()


def _retry_after(value: str | None) -> float:
    """Seconds from a ``Retry-After`` header given in seconds; 0 when absent or given as a date."""
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0
