"""The OpenAI-compatible client against hostile or broken servers on loopback: every body is capped while it
is read, compressed or not, and the client's memory stays under twice its cap whatever the server sends."""

from __future__ import annotations

import contextlib
import gzip
import json
import multiprocessing
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from parlour.wrappers import BackendError
from parlour.wrappers.openai_backend import OpenAIBackend, ResponseTooLarge

CAP = 1024 * 1024
MESSAGES = [{"role": "user", "content": "Your move."}]

#: A scenario writes a whole HTTP response (status line, headers, body) to the socket file it is given.
Scenario = Callable[[BaseHTTPRequestHandler], None]


@contextlib.contextmanager
def serve(scenario: Scenario) -> Iterator[str]:
    """A server in its own process on a free loopback port, answering every POST with ``scenario``; yields its URL.

    A process of its own, so that what the server allocates never counts in the client's traced memory.
    """
    parent, child = multiprocessing.get_context("fork").Pipe()

    def run() -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                with contextlib.suppress(OSError):  # the client hangs up on a body past its cap
                    scenario(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        child.send(server.server_address[1])
        server.serve_forever()

    process = multiprocessing.get_context("fork").Process(target=run, daemon=True)
    process.start()
    try:
        yield f"http://127.0.0.1:{parent.recv()}/v1"
    finally:
        process.kill()
        process.join()


def head(handler: BaseHTTPRequestHandler, status: int = 200, **headers: str) -> None:
    """Send the status line and headers; the body follows."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    for key, value in headers.items():
        handler.send_header(key.replace("_", "-"), value)
    handler.end_headers()


def gzip_bomb(handler: BaseHTTPRequestHandler) -> None:
    """One valid gzip stream of 2 GB of zeros, about 2 MB on the wire, sent until the connection closes."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(64 * 1024 * 1024)
    head(handler, Content_Encoding="gzip")
    for _ in range(32):
        handler.wfile.write(compressor.compress(zeros))
    handler.wfile.write(compressor.flush())


def endless_stream(handler: BaseHTTPRequestHandler) -> None:
    """A chunked body that never ends."""
    handler.protocol_version = "HTTP/1.1"
    head(handler, Transfer_Encoding="chunked")
    chunk = b'{"choices": [' * 4096
    while True:
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))


def slow_trickle(handler: BaseHTTPRequestHandler) -> None:
    """One byte every 50 ms, far slower than any deadline allows."""
    head(handler, Content_Length="100000")
    for _ in range(100000):
        handler.wfile.write(b" ")
        handler.wfile.flush()
        time.sleep(0.05)


def always_500(handler: BaseHTTPRequestHandler) -> None:
    """A server error, every time, with a large body."""
    body = b"x" * (3 * CAP)
    head(handler, 500, Content_Length=str(len(body)))
    handler.wfile.write(body)


def malformed_json(handler: BaseHTTPRequestHandler) -> None:
    """Half a JSON document."""
    body = b'{"choices": [{"message": {"content": "b2"'
    head(handler, Content_Length=str(len(body)))
    handler.wfile.write(body)


def huge_tool_arguments(handler: BaseHTTPRequestHandler) -> None:
    """A tool call whose arguments alone are 8 MB, gzip-compressed to a few kilobytes."""
    arguments = json.dumps({"query": "a" * (8 * CAP)})
    call = {"type": "function", "function": {"name": "search", "arguments": arguments}}
    body = gzip.compress(json.dumps({"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}).encode())
    head(handler, Content_Encoding="gzip", Content_Length=str(len(body)))
    handler.wfile.write(body)


def client(url: str) -> OpenAIBackend:
    """A backend with the test's cap, fast retries and short deadlines."""
    return OpenAIBackend("tiny", url, max_response_bytes=CAP, timeout=2.0, request_deadline=2.0, max_attempts=2, backoff=0.01)


SCENARIOS = {
    "gzip bomb": (gzip_bomb, ResponseTooLarge, "max_response_bytes"),
    "endless stream": (endless_stream, ResponseTooLarge, "max_response_bytes"),
    "slow trickle": (slow_trickle, BackendError, "deadline"),
    "500s forever": (always_500, ResponseTooLarge, "max_response_bytes"),
    "malformed JSON": (malformed_json, BackendError, "malformed"),
    "oversized tool-call arguments": (huge_tool_arguments, ResponseTooLarge, "max_response_bytes"),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_hostile_server_fails_cleanly_within_twice_the_cap(name: str) -> None:
    scenario, error, words = SCENARIOS[name]
    with serve(scenario) as url:
        backend = client(url)
        tracemalloc.start()
        try:
            with pytest.raises(error, match=words):
                backend.complete(MESSAGES)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
            backend.close()
    assert peak < 2 * CAP, f"{name}: the client held {peak:,} bytes at its peak, over twice its cap of {CAP:,}"


def test_a_body_within_the_cap_is_read_whatever_its_encoding() -> None:
    answer = json.dumps({"choices": [{"message": {"role": "assistant", "content": "b2 " + "z" * 1000}}]}).encode()
    for encoding, body in (("gzip", gzip.compress(answer)), ("deflate", zlib.compress(answer)), ("identity", answer)):

        def scenario(handler: BaseHTTPRequestHandler, body: bytes = body, encoding: str = encoding) -> None:
            head(handler, Content_Encoding=encoding, Content_Length=str(len(body)))
            handler.wfile.write(body)

        with serve(scenario) as url:
            assert client(url).complete(MESSAGES).text.startswith("b2 z"), encoding


def test_an_unknown_encoding_is_refused_by_name() -> None:
    def scenario(handler: BaseHTTPRequestHandler) -> None:
        head(handler, Content_Encoding="br", Content_Length="4")
        handler.wfile.write(b"\0\0\0\0")

    with serve(scenario) as url, pytest.raises(BackendError, match="'br'"):
        client(url).complete(MESSAGES)


def test_a_cap_that_is_not_a_positive_size_is_refused() -> None:
    with pytest.raises(ValueError, match="max_response_bytes"):
        OpenAIBackend("tiny", "http://127.0.0.1:9/v1", max_response_bytes=0)


def test_a_trickling_server_holds_a_turn_for_one_deadline_across_all_its_retries() -> None:
    """Each try used to get a deadline of its own: four tries of 120 s held one turn for about 8 minutes."""
    with serve(slow_trickle) as url:
        backend = OpenAIBackend("tiny", url, timeout=2.0, request_deadline=2.0, max_attempts=4, backoff=0.01)
        started = time.monotonic()
        try:
            with pytest.raises(BackendError, match="request deadline of 2s"):
                backend.complete(MESSAGES)
        finally:
            backend.close()
    # One deadline (2 s), where four tries would take 8 s; the margin absorbs a loaded machine's scheduling.
    assert time.monotonic() - started < 5.0
