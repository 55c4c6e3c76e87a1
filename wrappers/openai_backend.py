"""The OpenAI-compatible backend: chat completions over HTTP (vLLM, Ollama, llama.cpp server, TGI, hosted APIs).

:mod:`parlour.wrappers` imports this module (and so httpx) on first use, never at ``import parlour``.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import math
import os
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterator

import httpcore
import httpx

from parlour.wrappers.backend import BackendError, Completion, Message, estimate_tokens

#: HTTP statuses worth retrying: rate limiting and server-side failures.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})

#: The default cap on one response body, after decompression (and on what arrives compressed).
MAX_RESPONSE_BYTES = 8 * 1024 * 1024

#: How much of the body is read from the socket at a time.
READ_CHUNK = 64 * 1024


class ResponseTooLarge(BackendError):
    """A response body (compressed or not) went past ``max_response_bytes``; reading stopped there."""


class OpenAIBackend:
    """Chat completions from an OpenAI-compatible server, many requests in flight at once.

    A batch of conversations is sent as concurrent requests, at most
    ``concurrency`` at a time. A request that fails with 429, a 5xx, a timeout
    or a connection error is retried up to ``max_attempts`` times in all, waiting
    ``backoff * 2**attempt`` seconds (at most ``max_backoff``) between tries, or
    longer when the server's ``Retry-After`` (seconds or an HTTP date) asks for
    it; a server asking for more than ``max_retry_after`` seconds fails the
    request at once. Then, or at once for any other error status or a malformed
    response, :class:`BackendError` is raised naming the URL and the status.

    ``timeout`` bounds each network operation, so a server that sends a byte
    now and then never trips it; ``request_deadline`` bounds the whole request,
    every try, read and backoff of it, down to each socket read, so a trickling
    server holds a turn for one deadline at most, however many tries are left.
    A try that times out is retried like a failed one while time is left, and the
    final :class:`BackendError` names the URL and the deadline.

    Every body is read in chunks and counted as it arrives, compressed bytes
    and decompressed bytes alike (decompression is bounded per chunk), so a
    gzip bomb or an endless stream stops at ``max_response_bytes`` with
    :class:`ResponseTooLarge`, never after buffering it; the client holds at
    most about one cap of body at a time. Only ``gzip``, ``deflate`` and
    ``identity`` are accepted as content encodings.

    A malformed response is one that is not JSON (or is nested too deep to
    read), has no ``choices[0].message``, or whose message has neither text
    ``content`` (a string, or a list of text parts) nor ``tool_calls``: a chat
    model that says nothing has failed, rather than played an empty move. Tool
    calls without content become one ``{"tool": NAME, "arguments": {...}}``
    JSON line each, which the ``json`` extractor reads. Token counts in
    ``usage`` that are not non-negative numbers are ignored, and the
    accounting counts estimated tokens instead (:func:`~parlour.wrappers.backend.estimate_tokens`).

    Args:
        model: the model name the server knows.
        base_url: the API root, e.g. ``http://localhost:8000/v1``.
        api_key_env: the environment variable holding the API key (none sent when unset).
        concurrency: the most requests in flight.
        timeout: seconds for each network operation (connecting, each read, each write).
        request_deadline: seconds for the whole request, all its tries and waits included,
            from the first connection to the last byte of the answer; ``None`` means
            twice ``timeout`` (120 s by default).
        max_attempts: tries per request, the first included.
        backoff, max_backoff: the retry delays (seconds).
        max_retry_after: the longest ``Retry-After`` (seconds) worth waiting for.
        max_new_tokens: ``max_tokens`` of each request.
        temperature, top_p: sampling parameters.
        context_limit: the model's context length, if known, for the agent's token window.
        extra_body: more fields for every request (``stop``, ``max_completion_tokens``, ...).
        max_response_bytes: the largest response body read, compressed or decompressed
            (8 MiB by default; on the command line ``openai:MODEL@URL`` takes it as an agent option).
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        timeout: float = 60.0,
        request_deadline: float | None = None,
        max_attempts: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        max_retry_after: float = 60.0,
        max_new_tokens: int = 256,
        temperature: float = 1.0,
        top_p: float = 1.0,
        context_limit: int | None = None,
        extra_body: dict[str, Any] | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ):
        if concurrency < 1 or max_attempts < 1:
            raise ValueError(f"concurrency and max_attempts must be >= 1, got {concurrency} and {max_attempts}")
        request_deadline = 2 * timeout if request_deadline is None else request_deadline
        if not request_deadline > 0:
            raise ValueError(f"request_deadline must be > 0 seconds, got {request_deadline}")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        self.model = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.name = f"openai:{model}"
        self.concurrency = concurrency
        self.timeout = timeout
        self.request_deadline = request_deadline
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.max_new_tokens = max_new_tokens
        self.context_limit = context_limit
        if not (isinstance(max_response_bytes, int) and max_response_bytes > 0):
            raise ValueError(f"max_response_bytes must be a positive number of bytes, got {max_response_bytes!r}")
        self.max_response_bytes = max_response_bytes
        self.sampling = {"temperature": temperature, "top_p": top_p, **(extra_body or {})}
        # Only encodings whose decompression can be bounded chunk by chunk (see _read_body).
        headers = {"Content-Type": "application/json", "Accept-Encoding": "gzip, deflate"}
        api_key = os.environ.get(api_key_env)
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.client = httpx.Client(headers=headers, timeout=timeout, transport=_DeadlineTransport(concurrency))

    def count_tokens(self, messages: list[Message]) -> int:
        """An estimate of the prompt tokens of ``messages`` (the server's tokenizer is not at hand)."""
        return estimate_tokens(messages)

    def generate(self, conversations: list[list[Message]], seed: int | None = None) -> list[Completion]:
        """One completion per conversation; requests run concurrently, at most ``concurrency`` at a time.

        A request that fails after its retries gives a :class:`Completion` with ``error`` set (and no text)
        instead of raising, so one bad request costs only its own conversation's turn.
        """
        seeds = [None if seed is None else seed + index for index in range(len(conversations))]
        if len(conversations) <= 1:
            return [self._complete_or_error(messages, s) for messages, s in zip(conversations, seeds)]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(conversations))) as pool:
            return list(pool.map(self._complete_or_error, conversations, seeds))

    def _complete_or_error(self, messages: list[Message], seed: int | None) -> Completion:
        try:
            return self.complete(messages, seed)
        except BackendError as error:
            return Completion(text="", prompt_tokens=0, completion_tokens=0, error=str(error))

    def complete(self, messages: list[Message], seed: int | None = None) -> Completion:
        """One chat completion, with retries and backoff, all of it ended by ``request_deadline``."""
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": self.max_new_tokens, **self.sampling}
        if seed is not None:
            payload["seed"] = seed
        problem = ""
        deadline = time.monotonic() + self.request_deadline
        tries = 0
        for attempt in range(self.max_attempts):
            retry_after = 0.0
            tries += 1
            try:
                with _deadline(deadline), self.client.stream("POST", self.url, json=payload) as response:
                    body = self._read_body(response)
            except httpx.TimeoutException:
                if time.monotonic() >= deadline:
                    problem = f"no complete answer within the request deadline of {self.request_deadline:g}s"
                else:
                    problem = f"timed out after {self.timeout:g}s"
            except httpx.TransportError as error:
                problem = f"could not connect ({type(error).__name__}: {error})"
            else:
                if response.status_code == 200:
                    return self._completion(body, messages)
                problem = f"HTTP {response.status_code}: {body[:200].decode('utf-8', 'replace')}"
                if response.status_code not in RETRY_STATUSES:
                    raise BackendError(f"POST {self.url} failed: {problem}")
                retry_after = _retry_after(response.headers.get("Retry-After"))
            if attempt + 1 == self.max_attempts:
                break
            if retry_after > self.max_retry_after:
                raise BackendError(
                    f"POST {self.url} failed: HTTP {response.status_code}, and the server asked to wait {retry_after:g}s "
                    f"before retrying, more than max_retry_after of {self.max_retry_after:g}s"
                )
            wait = max(min(self.max_backoff, self.backoff * 2**attempt), retry_after)
            if time.monotonic() + wait >= deadline:
                problem += f"; no time left for another try within the request deadline of {self.request_deadline:g}s"
                break
            time.sleep(wait)
        raise BackendError(f"POST {self.url} failed after {tries} attempt(s): {problem}")

    def _read_body(self, response: httpx.Response) -> bytes:
        """The response body, read and decompressed chunk by chunk, never more than ``max_response_bytes`` of either."""
        cap = self.max_response_bytes
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding in ("gzip", "x-gzip", "deflate"):
            # wbits 32 + 15: a gzip or zlib header, whichever the server sent.
            decoder = zlib.decompressobj(32 + zlib.MAX_WBITS)
        elif encoding in ("", "identity"):
            decoder = None
        else:
            raise BackendError(f"POST {self.url} answered in the content encoding {encoding!r}; only gzip, deflate and identity are read")
        chunks: list[bytes] = []
        received = size = 0
        too_large = ResponseTooLarge(
            f"POST {self.url}: the response is larger than max_response_bytes={cap:,} bytes; reading stopped there "
            "(raise it with the backend option max_response_bytes)"
        )
        for chunk in response.iter_raw(READ_CHUNK):
            received += len(chunk)
            if received > cap:
                raise too_large
            if decoder is None:
                chunks.append(chunk)
                size += len(chunk)
                continue
            try:
                # max_length bounds what one call may inflate (a bomb inflates 1000-fold); the rest waits in
                # unconsumed_tail and is inflated a chunk at a time while the cap allows.
                while chunk and size <= cap:
                    piece = decoder.decompress(chunk, READ_CHUNK)
                    chunks.append(piece)
                    size += len(piece)
                    chunk = decoder.unconsumed_tail
            except zlib.error as error:
                raise BackendError(f"POST {self.url} sent a body that does not decompress as {encoding}: {error}") from None
            if size > cap:
                raise too_large
        return b"".join(chunks)

    def _completion(self, body: bytes, messages: list[Message]) -> Completion:
        try:
            data = json.loads(body)
            text = _message_text(data["choices"][0]["message"])
        except (ValueError, KeyError, IndexError, TypeError, RecursionError) as error:
            raise BackendError(
                f"POST {self.url} returned a malformed chat completion ({type(error).__name__}: {str(error)[:100]}): "
                f"{body[:200].decode('utf-8', 'replace')!r}"
            ) from None
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        prompt_tokens = _token_count(usage.get("prompt_tokens"))
        completion_tokens = _token_count(usage.get("completion_tokens"))
        return Completion(
            text=text,
            prompt_tokens=estimate_tokens(messages) if prompt_tokens is None else prompt_tokens,
            completion_tokens=estimate_tokens([{"role": "assistant", "content": text}]) if completion_tokens is None else completion_tokens,
        )

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()


def _message_text(message: Any) -> str:
    """The text of a chat completion message: its content, or its tool calls as JSON lines.

    Raises ``TypeError`` or ``ValueError`` for a message that is not an object,
    content that is not text, or a message with neither content nor tool calls.
    """
    if not isinstance(message, dict):
        raise TypeError(f"the message is a {type(message).__name__}, not an object")
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text_part(part) for part in content)
    if content is not None:
        raise TypeError(f"the content is a {type(content).__name__}, not text")
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        raise ValueError("the message has no content and no tool calls")
    return "\n".join(_tool_call_line(call) for call in calls)


def _text_part(part: Any) -> str:
    """The text of one content part (``{"type": "text", "text": ...}``); other parts (images, audio) have none."""
    if not isinstance(part, dict):
        raise TypeError(f"a content part is a {type(part).__name__}, not an object")
    text = part.get("text", "") if part.get("type") == "text" else ""
    if not isinstance(text, str):
        raise TypeError(f"a text part holds a {type(text).__name__}")
    return text


def _tool_call_line(call: Any) -> str:
    """An OpenAI tool call (``{"function": {"name", "arguments"}}``) as the JSON line ``{"tool": ..., "arguments": ...}``."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise TypeError("a tool call has no function name")
    arguments = function.get("arguments") or {}
    if isinstance(arguments, str):
        arguments = json.loads(arguments)
    return json.dumps({"tool": function["name"], "arguments": arguments}, ensure_ascii=False)


def _token_count(value: Any) -> int | None:
    """A token count from ``usage``, or ``None`` when it is not a non-negative finite number (or numeric string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, float) and math.isfinite(value) and value >= 0:
        return int(value)
    return None


def _retry_after(value: str | None) -> float:
    """Seconds from a ``Retry-After`` header, given in seconds or as an HTTP date; 0 when absent or unreadable."""
    if not value:
        return 0.0
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            return 0.0
    return max(0.0, seconds) if not math.isnan(seconds) else 0.0


# The deadline of the request the current thread is making (httpx's own timeouts bound each operation only, so a
# server sending a byte now and then would hold a request forever). Every socket operation is given at most the
# time left; past the deadline it times out at once.
_DEADLINES = threading.local()


@contextlib.contextmanager
def _deadline(at: float) -> Iterator[None]:
    """Bound the socket operations of this thread by ``at`` (a ``time.monotonic()`` time) while in the block."""
    _DEADLINES.at = at
    try:
        yield
    finally:
        _DEADLINES.at = None


def _time_left(timeout: float | None, expired: type[Exception]) -> float | None:
    """``timeout`` cut to the time left before this thread's deadline; ``expired`` is raised when none is left."""
    at = getattr(_DEADLINES, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise expired("the request deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A network stream whose reads and writes end by the calling thread's request deadline."""

    def __init__(self, stream: httpcore.NetworkStream):
        self.stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Read at most ``max_bytes``, waiting no longer than the deadline allows."""
        return self.stream.read(max_bytes, _time_left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Write ``buffer``, waiting no longer than the deadline allows."""
        self.stream.write(buffer, _time_left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        """Close the connection."""
        self.stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> _DeadlineStream:
        """Upgrade to TLS within the deadline."""
        left = _time_left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self.stream.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        """Connection details (``"ssl_object"``, ``"socket"``, ...)."""
        return self.stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's network backend, opening connections within the deadline and wrapping them in :class:`_DeadlineStream`."""

    def __init__(self) -> None:
        self.backend = httpcore.SyncBackend()

    def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None, socket_options: Any = None
    ) -> _DeadlineStream:
        """Connect to ``host:port`` within the deadline."""
        left = _time_left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self.backend.connect_tcp(host, port, left, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> _DeadlineStream:
        """Connect to the Unix socket ``path`` within the deadline."""
        left = _time_left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self.backend.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        """Sleep (between connection retries)."""
        self.backend.sleep(seconds)


@contextlib.contextmanager
def _httpx_errors(request: httpx.Request) -> Iterator[None]:
    """Raise httpcore's transport errors as the httpx errors of the same name, as httpx's own transport does."""
    try:
        yield
    except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol) as error:
        raise getattr(httpx, type(error).__name__)(str(error), request=request) from error


class _Body(httpx.SyncByteStream):
    """A response body read through httpcore, its errors raised as httpx's."""

    def __init__(self, stream: Any, request: httpx.Request):
        self.stream = stream
        self.request = request

    def __iter__(self) -> Iterator[bytes]:
        with _httpx_errors(self.request):
            yield from self.stream

    def close(self) -> None:
        """Release the connection."""
        self.stream.close()


class _DeadlineTransport(httpx.BaseTransport):
    """An httpx transport whose connections honour the calling thread's request deadline on every socket operation.

    httpx offers no overall timeout (encode/httpx#1450) and no way to give its
    own transport a network backend, so this one drives an httpcore
    connection pool (HTTP/1.1, at most ``connections`` open) built with
    :class:`_DeadlineBackend`. Proxies from the environment still go through
    httpx's own transports, where only ``timeout`` applies.
    """

    def __init__(self, connections: int):
        self.pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=connections,
            max_keepalive_connections=connections,
            keepalive_expiry=5.0,  # httpx's default
            network_backend=_DeadlineBackend(),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` and return the response, its body still to be read."""
        url = request.url
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _httpx_errors(request):
            response = self.pool.handle_request(core)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response.stream, request),
            extensions=response.extensions,
        )

    def close(self) -> None:
        """Close every connection."""
        self.pool.close()
