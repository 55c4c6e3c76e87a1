"""The leaderboard's HTTP server (FastAPI, run by uvicorn).

API (every POST carries ``Authorization: Bearer <token>``; 401 without a valid one):

* ``POST /api/challenges``, body ``{"env_id", "agents": [names in order],
  "episodes": wish, "lineup": [agent number per seat] or null, "rotate_seats"}``: 201 with a single-use challenge ``{"id", "env_id",
  "agents", "episodes", "nonce", "seed", "expires_at", ...}``; 422 with the
  reason when refused (unknown environment, bad names, a challenge for the
  same run still open).
* ``POST /api/submissions``, body the bundle as JSON ``{"summary": {...},
  "episodes": [record, ...]}``. Answers 201 with ``{"submission", "env_id",
  "episodes", "new_episodes", "duplicates", "counted"}`` (200 when every
  episode was already stored); 413 for a body over ``max_bytes`` or a
  submission past the submitter's storage quota, 429 past ``rate_limit``
  submissions per ``rate_window`` seconds for one submitter, 400 for a body
  that cannot be parsed as JSON, 422 with ``{"reason", "episode"}`` when the
  bundle does not verify, is not exactly its challenge's run (or the challenge
  is unknown, expired or used), or uses an agent name that another submitter
  owns or that looks like another name (all refuse the bundle's content, not
  the token, so all are 422 rather than 403).
* Live matches (see :mod:`parlour.leaderboard.live`): ``POST /api/live``
  (429 past ``live_rate_limit`` starts per ``rate_window`` seconds, 422 past
  the hub's caps), ``GET /api/live/{id}/turn?wait=S``, ``POST /api/live/{id}/act``
  (the GET also takes the token). A move the server fails on is answered 200 ``{"status": "failed", "detail"}``,
  never 500: its episode is forfeited and the match goes on (see :mod:`parlour.leaderboard.live`).
* Any URL holding a NUL character, and an id outside 1 .. 2**63-1, is a 400
  (no row can match it, and PostgreSQL cannot compare a NUL).
* ``GET /api/progress``: a demo's progress while it fills the board (``parlour demo``; 404 elsewhere).
* ``GET /api/leaderboard`` (overall), ``GET /api/leaderboard?env=ID`` (add
  ``&self_reported=true`` for the self-reported table), ``GET /api/agents/{name}``,
  ``GET /api/episodes/{id}`` (a stored record), ``GET /api/submissions/{id}`` (a stored submission and its
  summary: a live match's ``status``, ``complete`` or ``failed``, and each failure's episode, reason and
  record as played).

Pages: ``/`` (``/index.html``), ``/env/<slug>.html``, ``/agent/<slug>.html``,
``/submitter/<slug>.html``, ``/submission/<id>.html``, ``/episode/<id>.html``
and ``/static/*`` (see :mod:`parlour.leaderboard.site`); and, served live only,
``/live.html`` (the live matches to watch), ``/live/<id>.html`` (one match, each
turn as it is played, fed by ``GET /api/live/<id>/events``, server-sent events)
and ``/play.html`` (a person plays a live match in the browser, with a submitter token).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from parlour.leaderboard.live import LiveHub, LiveMatch
from parlour.leaderboard.site import STATIC, Site
from parlour.leaderboard.store import QuotaExceeded
from parlour.leaderboard.verify import Rejected

if TYPE_CHECKING:
    from parlour.leaderboard.api import Leaderboard

#: Pages may load only their own CSS and script: submitted names can never pull anything in or run.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'",
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


#: Seconds between a spectator stream's looks at its match.
SSE_POLL = 0.2
#: Ids are database integers: anything from here up is no id (and would overflow the database's integer column).
ID_LIMIT = 2**63


class _Refusal(Exception):
    """A request's check failed: the handler stops and the client gets ``response`` (a 4xx) as it is.

    Raised rather than returned so that each handler reads as its checks in order
    (token, rate, body), with no test-and-return after every one.
    """

    def __init__(self, response: JSONResponse):
        super().__init__(response.status_code)
        self.response = response


def _check_id(value: int) -> None:
    """Refuse (400) an id no row can have."""
    if not 0 < value < ID_LIMIT:
        raise _Refusal(_error(400, "bad id", f"ids are positive integers below 2**63, got {str(value)[:40]}"))


def _check_rate(limiter: RateLimiter, submitter: str, events: str) -> None:
    """Count one of ``submitter``'s ``events`` (a plural noun) against ``limiter``; refuse (429) past its limit."""
    if not limiter.allow(submitter):
        raise _Refusal(_error(429, "rate limited", f"at most {limiter.limit} {events} per {limiter.window:g} s; retry later"))


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


def serve(board: Leaderboard, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
    """Serve ``board``'s HTTP API, live matches and pages with uvicorn until interrupted (``options``: see :func:`create_app`)."""
    import uvicorn

    uvicorn.run(create_app(board, **options), host=host, port=port, log_level="warning")


def create_app(
    board: Leaderboard,
    max_bytes: int = 64 * 1024 * 1024,
    rate_limit: int = 60,
    rate_window: float = 60.0,
    turn_timeout: float = 60.0,
    live_episodes: int = 100,
    live_rate_limit: int = 10,
    progress: Callable[[], dict[str, Any]] | None = None,
) -> FastAPI:
    """The FastAPI application serving ``board``: the API, live matches and the pages described in the module docstring.

    ``live_episodes`` is the fixed size of every live match; ``live_rate_limit``
    the live matches one submitter may start per ``rate_window`` seconds.
    ``progress`` (``parlour demo``'s) says what a demo filling this board has played: the index shows it, and
    ``GET /api/progress`` answers it.
    """
    app = FastAPI(title="parlour leaderboard", docs_url=None, redoc_url=None, openapi_url=None)
    limiter = RateLimiter(rate_limit, rate_window)
    site = Site(board, progress, served=True)
    live = LiveHub(board, turn_timeout=turn_timeout, episodes=live_episodes)
    live_limiter = RateLimiter(live_rate_limit, rate_window)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.middleware("http")
    async def refuse_nul(request: Request, call_next: Any) -> Any:
        """A 400 for a NUL character anywhere in the path or query: no name, id or slug holds one, and PostgreSQL cannot compare it."""
        if "\x00" in request.url.path or "\x00" in unquote(request.url.query):
            return _error(400, "bad request", "the URL contains a NUL character, which no name, id or slug holds")
        return await call_next(request)

    @app.exception_handler(_Refusal)
    async def refused(request: Request, refusal: _Refusal) -> JSONResponse:
        """Answer a request that one of its checks refused with the response that check chose."""
        return refusal.response

    async def authorised(request: Request) -> str:
        """The submitter holding the request's bearer token; refuse (401) without one."""
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise _Refusal(_error(401, "unauthorized", "send the submitter token as 'Authorization: Bearer <token>'"))
        submitter = await run_in_threadpool(board.store.submitter_for, token.strip())
        if submitter is None:
            raise _Refusal(_error(401, "unauthorized", "unknown token; ask the leaderboard admin for one"))
        return submitter

    async def json_body(request: Request, limit: int) -> Any:
        """The request's JSON body; refuse it when it is too large (413) or not JSON (400)."""
        body = await _read_body(request, limit)
        if body is None:
            raise _Refusal(_error(413, "too large", f"the body exceeds the limit of {limit} bytes; split the bundle"))
        try:
            return json.loads(body)
        except (ValueError, RecursionError) as error:
            # ValueError covers bad JSON and bad UTF-8, and also an integer too long to convert; RecursionError deep nesting.
            raise _Refusal(_error(400, "malformed JSON", f"the body is not valid UTF-8 JSON: {str(error)[:300]}")) from None

    async def json_object(request: Request, limit: int, shape: str) -> dict:
        """The request's JSON body when it is an object; otherwise refuse it (422), saying what to send (``shape``)."""
        body = await json_body(request, limit)
        if not isinstance(body, dict):
            raise _Refusal(_error(422, "rejected", f"send {shape}"))
        return body

    def live_match(match_id: str, submitter: str) -> LiveMatch:
        """The submitter's live match ``match_id``; refuse (404) another's or an unknown one."""
        try:
            return live.get(match_id, submitter)
        except KeyError as error:
            raise _Refusal(_error(404, "not found", str(error.args[0]))) from None

    @app.post("/api/challenges")
    async def challenge(request: Request) -> JSONResponse:
        """Issue a single-use challenge."""
        submitter = await authorised(request)
        body = await json_object(request, 64 * 1024, '{"env_id": ..., "agents": [...], "episodes": ...}')
        try:
            # The client's JSON values as they came (Any): issue_challenge checks each and names the field it refuses.
            env_id: Any = body.get("env_id")
            agents: Any = body.get("agents")
            issued = await run_in_threadpool(
                board.issue_challenge,
                submitter,
                env_id,
                agents,
                body.get("episodes"),
                body.get("lineup"),
                body.get("rotate_seats", True),
            )
        except Rejected as rejected:
            return JSONResponse(rejected.to_dict(), status_code=422)
        return JSONResponse(issued, status_code=201)

    @app.post("/api/submissions")
    async def submit(request: Request) -> JSONResponse:
        """Verify and store a bundle."""
        submitter = await authorised(request)
        _check_rate(limiter, submitter, "submissions")
        bundle = await json_body(request, max_bytes)
        try:
            verified = await run_in_threadpool(board.verify, bundle, submitter)
            result = await run_in_threadpool(board.store_verified, verified, submitter)
        except Rejected as rejected:
            return JSONResponse(rejected.to_dict(), status_code=422)
        except QuotaExceeded as exceeded:
            return _error(413, "quota exceeded", str(exceeded))
        return JSONResponse(result, status_code=201 if result["submission"] is not None else 200)

    @app.post("/api/live")
    async def live_create(request: Request) -> JSONResponse:
        """Start a live match against a built-in agent."""
        submitter = await authorised(request)
        _check_rate(live_limiter, submitter, "live matches started")
        body = await json_object(request, 64 * 1024, '{"env_id": ..., "agent": ..., "opponent": ...}')
        try:
            created = await run_in_threadpool(
                live.create, submitter, body.get("env_id"), body.get("agent"), body.get("opponent", "random"), body.get("episodes")
            )
        except Rejected as rejected:
            return JSONResponse(rejected.to_dict(), status_code=422)
        return JSONResponse(created, status_code=201)

    @app.get("/api/live/{match_id}/turn")
    async def live_turn(match_id: str, request: Request, wait: float = 0.0) -> JSONResponse:
        """The turn the remote agent must play now (long-polls up to ``wait`` seconds), or the match's result."""
        match = live_match(match_id, await authorised(request))
        return JSONResponse(await run_in_threadpool(live.turn, match, wait))

    @app.post("/api/live/{match_id}/act")
    async def live_act(match_id: str, request: Request) -> JSONResponse:
        """The remote agent's action for the awaited turn."""
        match = live_match(match_id, await authorised(request))
        body = await json_object(request, 1024 * 1024, '{"turn": ..., "action": ...}')
        try:
            return JSONResponse(await run_in_threadpool(live.act, match, body.get("turn"), body.get("action")))
        except Rejected as rejected:
            return JSONResponse(rejected.to_dict(), status_code=409)

    @app.get("/api/live/{match_id}/events")
    async def live_events(match_id: str, request: Request) -> Response:
        """Server-sent events: a spectator's view of a live match as it is played (see :meth:`LiveHub.events`), one
        ``data:`` line of JSON per event, ending after the match's ``end`` event. Public: it shows only what the
        remote agent itself sees, and finished episodes as they end."""
        if live.events(match_id, 0) is None:
            return _error(404, "not found", f"no live match {match_id!r} on this server (a finished one is kept {live.keep_finished:g} s)")

        async def stream() -> Any:
            sent = 0
            while not await request.is_disconnected():
                answer = await run_in_threadpool(live.events, match_id, sent)
                if answer is None:
                    return
                events, sent, over = answer
                for event in events:
                    yield f"data: {json.dumps(event)}\n\n"
                if over:
                    return
                await asyncio.sleep(SSE_POLL)

        return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache", **PAGE_HEADERS})

    @app.get("/live.html")
    def live_page() -> HTMLResponse:
        """The live matches a spectator can watch, and the way to play one in the browser."""
        return page(site.live_index(live.watchable()))

    @app.get("/live/{match_id}.html")
    def watch_page(match_id: str) -> HTMLResponse:
        """One live match, each turn shown as it is played."""
        found = next((item for item in live.watchable() if item["match"] == match_id), None)
        return page(None if found is None else site.watch(found))

    @app.get("/play.html")
    def play_page() -> HTMLResponse:
        """Play a live match in the browser against a built-in agent, as a submitter."""
        return page(site.play(live_episodes))

    @app.get("/api/progress")
    def demo_progress() -> JSONResponse:
        """What the demo filling this board has played so far (404 on a board no demo fills)."""
        if progress is None:
            return _error(404, "not found", "no demo is filling this leaderboard")
        return JSONResponse(progress())

    @app.get("/api/leaderboard")
    def leaderboard(env: str | None = None, self_reported: bool = False) -> JSONResponse:
        """The overall table, or one environment's with ``?env=`` (its self-reported one with ``&self_reported=true``)."""
        if env is not None and env not in board.store.env_ids():
            return _error(404, "not found", f"no episodes of {env!r} on this leaderboard")
        return JSONResponse(board.ratings(env, counted=not self_reported))

    @app.get("/api/agents/{name:path}")
    def agent(name: str) -> JSONResponse:
        """One agent across environments."""
        info = board.agent(name)
        if info is None:
            return _error(404, "not found", f"no agent {name!r} on this leaderboard")
        return JSONResponse(info)

    @app.get("/api/submissions/{submission_id}")
    def submission(submission_id: int) -> JSONResponse:
        """One stored submission: who sent it, its source and summary (a failed live match's failures included)."""
        _check_id(submission_id)
        stored = board.store.submission(submission_id)
        if stored is None:
            return _error(404, "not found", f"no submission {submission_id} on this leaderboard")
        return JSONResponse(stored)

    @app.get("/api/episodes/{episode_id}")
    def episode(episode_id: int) -> JSONResponse:
        """One stored episode's record."""
        _check_id(episode_id)
        stored = board.store.episode(episode_id)
        if stored is None:
            return _error(404, "not found", f"no episode {episode_id} on this leaderboard")
        return JSONResponse(stored)

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

    @app.get("/submitter/{submitter_slug}.html")
    def submitter_page(submitter_slug: str) -> HTMLResponse:
        """One submitter's page."""
        name = board.store.submitter_by_slug(submitter_slug)
        return page(None if name is None else site.submitter(name))

    @app.get("/submission/{submission_id}.html")
    def submission_page(submission_id: int) -> Response:
        """One submission's page."""
        _check_id(submission_id)
        return page(site.submission(submission_id))

    @app.get("/episode/{episode_id}.html")
    def episode_page(episode_id: int) -> Response:
        """The viewer of one stored episode."""
        _check_id(episode_id)
        return page(site.episode(episode_id))

    return app
