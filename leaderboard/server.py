"""The leaderboard's HTTP server (FastAPI, run by uvicorn).

API:

* ``POST /api/submissions``: header ``Authorization: Bearer <token>``, body the
  bundle as JSON ``{"summary": {...}, "episodes": [record, ...]}``. Answers
  201 with ``{"submission", "env_id", "episodes", "new_episodes", "duplicates"}``
  (200 when every episode was already stored); 401 for a missing or wrong
  token, 413 for a body over ``max_bytes``, 429 past ``rate_limit`` submissions
  per ``rate_window`` seconds for one submitter, 400 for a body that cannot be
  parsed as JSON, 422 with ``{"reason", "episode"}`` when the bundle does not
  verify or uses an agent name that another submitter owns (both refuse the
  bundle's content, not the token, so both are 422 rather than 403).
* ``GET /api/leaderboard`` (overall) and ``GET /api/leaderboard?env=ID``.
* ``GET /api/agents/{name}``.

Pages: ``/`` (``/index.html``), ``/env/<slug>.html``, ``/agent/<slug>.html``
and ``/static/*`` (see :mod:`parlour.leaderboard.site`).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from parlour.leaderboard.site import STATIC, Site
from parlour.leaderboard.verify import Rejected, verify_bundle

if TYPE_CHECKING:
    from parlour.leaderboard.api import Leaderboard

#: Pages may load only their own CSS and script: submitted names can never pull anything in or run.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:",
    "X-Content-Type-Options": "nosniff",
}


class RateLimiter:
    """At most ``limit`` events per ``window`` seconds for each key (a sliding window, kept in memory)."""

    def __init__(self, limit: int, window: float):
        self.limit = limit
        self.window = window
        self._events: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        """Record an event for ``key`` if it is within the limit; False if it is not."""
        now = time.monotonic()
        with self._lock:
            events = self._events.setdefault(key, deque())
            while events and events[0] <= now - self.window:
                events.popleft()
            if len(events) >= self.limit:
                return False
            events.append(now)
            return True


def _error(status: int, error: str, detail: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": error, "detail": detail, **extra}, status_code=status)


async def _read_body(request: Request, max_bytes: int) -> bytes | None:
    """The request body, or None as soon as it is known to exceed ``max_bytes``."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def create_app(board: Leaderboard, max_bytes: int = 64 * 1024 * 1024, rate_limit: int = 60, rate_window: float = 60.0) -> FastAPI:
    """The FastAPI application serving ``board``: the API and the pages described in the module docstring."""
    app = FastAPI(title="parlour leaderboard", docs_url=None, redoc_url=None, openapi_url=None)
    limiter = RateLimiter(rate_limit, rate_window)
    site = Site(board)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.post("/api/submissions")
    async def submit(request: Request) -> JSONResponse:
        """Verify and store a bundle."""
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return _error(401, "unauthorized", "send the submitter token as 'Authorization: Bearer <token>'")
        submitter = await run_in_threadpool(board.store.submitter_for, token.strip())
        if submitter is None:
            return _error(401, "unauthorized", "unknown token; ask the leaderboard admin for one")
        if not limiter.allow(submitter):
            return _error(429, "rate limited", f"at most {rate_limit} submissions per {rate_window:g} s; retry later")
        body = await _read_body(request, max_bytes)
        if body is None:
            return _error(413, "too large", f"the body exceeds the limit of {max_bytes} bytes; split the bundle")
        try:
            bundle = json.loads(body)
        except (ValueError, RecursionError) as error:
            # ValueError covers bad JSON and bad UTF-8, and also an integer too long to convert; RecursionError deep nesting.
            return _error(400, "malformed JSON", f"the body is not valid UTF-8 JSON: {str(error)[:300]}")
        try:
            verified = await run_in_threadpool(verify_bundle, bundle)
            result = await run_in_threadpool(board.store_verified, verified, submitter)
        except Rejected as rejected:
            return JSONResponse(rejected.to_dict(), status_code=422)
        return JSONResponse(result, status_code=201 if result["submission"] is not None else 200)

    @app.get("/api/leaderboard")
    def leaderboard(env: str | None = None) -> JSONResponse:
        """The overall table, or one environment's with ``?env=``."""
        if env is not None and env not in board.store.env_ids():
            return _error(404, "not found", f"no episodes of {env!r} on this leaderboard")
        return JSONResponse(board.ratings(env))

    @app.get("/api/agents/{name:path}")
    def agent(name: str) -> JSONResponse:
        """One agent across environments."""
        info = board.agent(name)
        if info is None:
            return _error(404, "not found", f"no agent {name!r} on this leaderboard")
        return JSONResponse(info)

    def page(html: str | None) -> HTMLResponse:
        """An HTML response with the page headers, or a 404 page for None."""
        if html is None:
            return HTMLResponse("<!doctype html><title>not found</title><p>Not found.</p>", status_code=404, headers=PAGE_HEADERS)
        return HTMLResponse(html, headers=PAGE_HEADERS)

    @app.get("/")
    @app.get("/index.html")
    def index() -> HTMLResponse:
        """The overall page."""
        return page(site.index())

    @app.get("/env/{env_slug}.html")
    def environment(env_slug: str) -> HTMLResponse:
        """One environment's page."""
        env_id = site.env_ids_by_slug().get(env_slug)
        return page(None if env_id is None else site.environment(env_id))

    @app.get("/agent/{agent_slug}.html")
    def agent_page(agent_slug: str) -> HTMLResponse:
        """One agent's page."""
        name = board.store.agent_by_slug(agent_slug)
        return page(None if name is None else site.agent(name))

    return app
