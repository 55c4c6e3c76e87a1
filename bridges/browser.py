"""The Shop in a real browser: the same episode served as web pages on loopback and played with BrowserGym's actions.

A face, not a second game (the design's "Agentic worlds"): :class:`ShopBrowserEnv` is a Gymnasium environment
that holds a :class:`~parlour.envs.core.match.Match` of ``parlour/Shop-v0``, serves its pages from a
``ThreadingHTTPServer`` bound to ``127.0.0.1`` and drives headless Chromium through Playwright. The agent
reads the page's accessibility tree (BrowserGym's ``axtree_txt``, with a ``bid`` on every element) and
answers with one BrowserGym high-level action: ``click('12')``, ``fill('7', 'shampoo')``,
``press('7', 'Enter')``, ``go_back()``, ``goto(url)``, ... The action runs in the browser; a form the page
submits reaches the server, which turns it into the text game's action and submits it to the match (the page's
script sends the form and puts the answer's page in place of the document, with a history entry, as a navigation
would, without a navigation's cost: :data:`_PAGE_SCRIPT`):

==================================================== =====================================
in the browser                                        submitted to the match
==================================================== =====================================
the search box filled, then the Search button         ``search[<the box's text>]``
(or Enter in the box)                                 (square brackets read as spaces)
a button: a result's id, an option value, ``next >``,  ``click[<the button's name>]``
``< prev``, ``back to search``, ``description``,
``reviews``, ``buy now``
==================================================== =====================================

So the record is the text game's record, action for action, and :func:`parlour.replay` re-executes it with
the text game; the browser action of each step is in ``info["browser_action"]``, its game action (if any)
in ``info["game_action"]``. ``reset(seed=s)`` plays the episode that ``gymnasium.make("parlour/Shop-v0")``
plays on ``reset(seed=s)``: the same instruction, the same reward, the same record.

Actions that play no game action: filling or clearing the search box, focus, hover, scroll, ``noop()``,
``go_back()`` / ``go_forward()`` / ``goto()`` within the shop (every page is the shop's one address and shows
the match as it stands; a page left open in history submits nothing: each form carries the state it was
drawn from, and the server ignores a stale one). They pay nothing and cost no game step, but every browser
action counts towards ``max_browser_steps`` (default four times the game's step limit), past which the
episode is truncated (the record then holds the game's actions so far and replays as an unfinished episode).

A browser action that maps to nothing is an invalid action, submitted to the match as one (a fixed text the
game refuses; see :data:`UNMAPPED`), so it counts against ``error_allowance`` like any invalid text and replays
as the same refusal: text that is not one call of the action space (:data:`ACTIONS`), a ``bid`` the page does
not have, a ``goto`` off the shop's address, or an element that does not take the action (a ``fill`` on a
button: Playwright's refusal, not a timeout, so the verdict does not depend on how busy the machine is; see
:data:`ELEMENT_TIMEOUT_MS`). ``info["invalid_action"]`` and the observation's ``last_action_error`` say why, in
the face's words (never the agent's); a search the game refuses (an empty one) is the game's invalid action with
the game's reason.

The server binds ``127.0.0.1`` only, on a port of its own (the same port each episode when it is free, so
observations repeat across resets), serves only the shop's pages, and is shut down when the episode ends
(bought, forfeited, truncated) and on :meth:`ShopBrowserEnv.close`; Chromium lives until ``close()``.
Observations hold what the page shows (the instruction, the page, the steps left), never the product the
instruction was written from. Needs ``pip install 'parlour[browser]'`` (browsergym-core and Playwright) and
Chromium (Debian's ``chromium``, ``scripts/system_packages.sh``); :func:`browser_unavailable` says what is
missing.

Example::

    from parlour.bridges.browser import ShopBrowserEnv
    env = ShopBrowserEnv(difficulty=2)
    obs, info = env.reset(seed=7)
    print(obs["axtree_txt"])                  # ... [9] textbox 'Search the catalogue'  [10] button 'Search'
    obs, reward, terminated, truncated, info = env.step("fill('9', 'shampoo sulfate free')")
    obs, reward, terminated, truncated, info = env.step("click('10')")
    print(info["game_action"])                # search[shampoo sulfate free]
    env.close()
"""

from __future__ import annotations

import contextlib
import functools
import html
import importlib.resources
import importlib.util
import os
import pickle
import re
import shutil
import socket
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import gymnasium

from parlour.envs.agentic.shop import Shop
from parlour.envs.core.match import Match, Snapshot
from parlour.envs.core.record import Record
from parlour.envs.core.seeding import episode_seeds
from parlour.envs.core.spaces import TextSpace

PLAYER = "player_0"
#: Where Debian installs Chromium; ``PARLOUR_CHROMIUM`` or ``chromium=`` name another.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
#: BrowserGym's high-level actions this face takes: its ``bid`` and ``nav`` subsets, less file uploads and drag and
#: drop (the shop has neither), and ``noop``.
ACTIONS = ("noop", "click", "dblclick", "fill", "clear", "press", "focus", "hover", "scroll", "select_option", "go_back", "go_forward", "goto")
_BID_ACTIONS = {"click", "dblclick", "fill", "clear", "press", "focus", "hover", "select_option"}
#: What the face submits to the match for a browser action that maps to nothing, by why: text the game refuses (it
#: holds no ``search[...]`` or ``click[...]`` and names no clickable), so it counts as an invalid action and replays
#: as the same refusal.
UNMAPPED = {
    "syntax": "(browser) not one action of the action space",
    "bid": "(browser) no element with that bid on the page",
    "origin": "(browser) a page outside the shop",
    "failed": "(browser) the element does not take that action",
}
_ERRORS = {
    "syntax": f"Not one action of this action space: write one call such as click('12') or fill('7', 'shampoo'); actions: {', '.join(ACTIONS)}.",
    "bid": "There is no element with that bid on this page: use a bid of the accessibility tree.",
    "origin": "goto() leaves the shop: its pages are at {origin}/.",
    "failed": "That element does not take that action: fill() types into the search box, click() presses a button.",
}
# The page's script. A form's submission is fetched and the page shown replaced in place, not navigated to: a new
# document costs Playwright's injected script (evaluated anew in every document before a locator finds a bid) and
# a navigation's round trips, more than half of a step. What a navigation does, it does: the answer's page (after the
# server's redirect) replaces the whole document, with BrowserGym's bid counter reset so its marking numbers the new
# page from 0 as on a fresh document; one history entry is pushed, at the same address; going back or forward to an
# entry of this document fetches the page as it stands (the server's page for that address, as a reload would),
# while entries of other documents load as ever. Each entry is numbered, and ``parlourShown`` is the number of the
# entry whose page is shown: the face waits until it is the current entry's and no fetch is pending.
_PAGE_SCRIPT = """window.parlourShown = window.parlourLast = history.state?.parlour ?? 0;
function parlourShow(address, request, push) {
  window.parlourPending = fetch(address, request).then((answer) => answer.text()).then((text) => {
    const page = new DOMParser().parseFromString(text, "text/html");
    if (push) history.pushState({ parlour: ++window.parlourLast }, "", "/");
    delete window.browsergym_elem_counter;
    document.replaceChild(document.adoptNode(page.documentElement), document.documentElement);
    scrollTo(0, 0);
  }).finally(() => {
    window.parlourShown = history.state?.parlour ?? 0;
    window.parlourPending = null;
    dispatchEvent(new Event("parlourshown"));
  });
}
addEventListener("submit", (event) => {
  event.preventDefault();
  const body = new URLSearchParams(new FormData(event.target, event.submitter));
  parlourShow(event.target.action, { method: "POST", body }, true);
});
addEventListener("popstate", () => parlourShow("/", {}, false));"""
# True once the page shown is the current history entry's, fetched and loaded: awaited in the page (a form's fetch,
# a popstate's), so the face's wait is one call.
_SHOWN = """async () => {
    const current = () => (history.state?.parlour ?? 0) === window.parlourShown;
    while (window.parlourPending || !current())
        await (window.parlourPending ?? new Promise((shown) => addEventListener("parlourshown", shown, { once: true })));
    if (document.readyState !== "complete") await new Promise((loaded) => addEventListener("load", loaded, { once: true }));
    return true;
}"""
_SHOWN_NOW = "() => !window.parlourPending && (history.state?.parlour ?? 0) === window.parlourShown && document.readyState === 'complete'"
_FOCUSED = "() => document.activeElement?.getAttribute('bid') ?? ''"
# BrowserGym's element actions, as its action set writes them into each action's code: ``elem.press(key, timeout=500)``.
_BROWSERGYM_TIMEOUT = re.compile(r"\btimeout=500\b")
# BrowserGym's marking waits (40 ms at least, polling) for an IntersectionObserver to record each element's share of
# the viewport; the accessibility tree does not hold it (axtree_txt never shows it), so the face runs BrowserGym's
# script without that wait: the same bids, the same ARIA data. (Another BrowserGym's script without this statement
# runs as it is: slower, the same marks.)
_VISIBILITY_WAIT = "await until(() => elems_to_be_visited.size == 0, visibility_marking_timeout);"
#: How long the face waits for a page to load (the server's work: a search, a cold catalogue index).
NAVIGATION_TIMEOUT_MS = 60_000
#: How long an element action (click, fill, press, ...) may take before the face calls it refused. BrowserGym gives
#: each 500 ms of wall time, so a busy machine (a slow renderer) turned valid actions into invalid ones: the same
#: action on the same page must get the same verdict however loaded the machine. Every action an element of the
#: shop's pages does not take is refused at once (Playwright's error, not its timeout), so this bound only stops a
#: stuck browser from hanging the episode.
ELEMENT_TIMEOUT_MS = 30_000
#: The largest form body the server reads (a search box filled to ``max_action_chars`` fits, percent-encoded).
MAX_BODY_BYTES = 1 << 20


def browser_unavailable(chromium: str | None = None) -> str | None:
    """Why the browser face cannot run here (what to install), or ``None`` when it can."""
    missing = [
        name
        for module, name in (("playwright", "playwright"), ("browsergym.core", "browsergym-core"))
        if importlib.util.find_spec(module.split(".")[0]) is None or importlib.util.find_spec(module) is None
    ]
    if missing:
        return f"the browser face needs {' and '.join(missing)}: pip install 'parlour[browser]'"
    path = chromium_path(chromium)
    if path is None:
        return f"the browser face needs Chromium: apt-get install -y chromium (or set PARLOUR_CHROMIUM to its path; looked at {CHROMIUM})"
    return None


def chromium_path(chromium: str | None = None) -> str | None:
    """The Chromium to launch: ``chromium``, else ``$PARLOUR_CHROMIUM``, else Debian's, else ``chromium`` on the PATH."""
    for candidate in (chromium, os.environ.get("PARLOUR_CHROMIUM"), CHROMIUM, shutil.which("chromium")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@functools.cache
def marking_scripts() -> tuple[str, str]:
    """BrowserGym's scripts that mark a page's elements with bids (its ``_pre_extract``, less the visibility wait) and
    take the marks' ARIA data out again (its ``_post_extract``), as the face runs them on the shop's frameless pages."""
    scripts = importlib.resources.files("browsergym.core") / "javascript"
    mark = (scripts / "frame_mark_elements.js").read_text("utf-8")
    return mark.replace(_VISIBILITY_WAIT, ""), (scripts / "frame_unmark_elements.js").read_text("utf-8")


def search_text(query: str) -> str:
    """The text game's action for a search box holding ``query``: square brackets read as spaces (they cannot be
    written inside ``search[...]``, and the search ignores punctuation), runs of white space as one."""
    return f"search[{' '.join(query.replace('[', ' ').replace(']', ' ').split())}]"


# ------------------------------------------------------------------------------------------------ pages


def _button(name: str, pressed: bool | None = None) -> str:
    state = "" if pressed is None else f' aria-pressed="{str(pressed).lower()}"'
    value = html.escape(name)
    return f'<button type="submit" name="click" value="{value}"{state}>{value}</button>'


def _shop(match: Match) -> Shop:
    """The match's game, which Match types as any Game: the browser face only ever builds matches of Shop."""
    game = match.game
    assert isinstance(game, Shop)
    return game


def shop_page(match: Match, token: int) -> str:
    """The HTML of the match's page: what :meth:`Shop.page_model` holds, every clickable a button of one form
    posted to ``/act?t=<token>``, the search page a text box and a Search button; the outcome once it is over."""
    game = _shop(match)
    esc = html.escape
    body = [f"<p>Instruction: {esc(game.instruction)}</p>"]
    if match.outcome is not None:
        body.append(f"<h1>Game over</h1><p>{esc(match.outcome.reason)}. Your total reward: {match.returns[PLAYER]:g}.</p>")
    else:
        model = game.page_model()
        kind, clickable = model["kind"], model["clickable"]
        body.append(f"<p>Steps left: {game.max_steps - game.steps}</p>")
        form = [f'<form method="post" action="/act?t={token}">']
        buttons = "".join(_button(name) for name in clickable if name in ("back to search", "< prev", "next >"))
        if kind == "search":
            form.append('<input type="text" name="q" aria-label="Search the catalogue" autocomplete="off"> <button type="submit">Search</button>')
        elif kind == "results":
            if model["items"]:
                form.append(f"<h1>Results page {model['page']} of {model['pages']}: {model['total']} results</h1>{buttons}<ul>")
                form += [f"<li>{_button(item['id'])} {esc(item['title'])} | ${item['price']:.2f}</li>" for item in model["items"]]
                form.append("</ul>")
            else:
                form.append(f"<h1>No product matches that search.</h1>{buttons}")
        elif kind == "item":
            form.append(
                f"<h1>{esc(model['title'])}</h1><p>Item {esc(model['id'])}</p><p>Category: {esc(model['category'])}</p>"
                f"<p>Price: ${model['price']:.2f} | Rating: {model['rating']} out of 5</p>"
            )
            for option in model["options"]:
                chosen = model["selected"].get(option["name"])
                form.append(
                    f"<fieldset><legend>{esc(option['name'])}</legend>"
                    + "".join(_button(value, value == chosen) for value in option["values"])
                    + "</fieldset>"
                )
            chosen = ", ".join(f"{name} {value}" for name, value in model["selected"].items())
            form.append(f"<p>Chosen: {esc(chosen or 'nothing yet')}</p>{_button('description')}{_button('reviews')}{_button('buy now')}{buttons}")
        elif kind == "description":
            form.append(
                f"<h1>Description of {esc(model['id'])}</h1><p>{esc(model['title'])}</p><p>{esc(model['description'])}</p>"
                "<h2>Features</h2><ul>" + "".join(f"<li>{esc(feature)}</li>" for feature in model["features"]) + f"</ul>{buttons}"
            )
        else:
            form.append(
                f"<h1>Reviews of {esc(model['id'])}</h1><p>{esc(model['title'])}</p><ul>"
                + "".join(f"<li>{review['stars']} out of 5 stars: {esc(review['text'])}</li>" for review in model["reviews"])
                + f"</ul>{buttons}"
            )
        body.append("".join(form) + "</form>")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>'
        f"<script>{_PAGE_SCRIPT}</script></head><body>" + "".join(body) + "</body></html>"
    )


class _Handler(BaseHTTPRequestHandler):
    """The shop's pages: ``GET /`` draws the match as it stands, ``POST /act?t=<token>`` plays a form's action."""

    face: ShopBrowserEnv

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the face reports what happened through its infos."""

    def _send(self, status: int, body: bytes = b"", location: str | None = None) -> None:
        self.send_response(status)
        if location is not None:
            self.send_header("Location", location)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        """The page; any other address is sent to it, but the icon Chromium asks for on every page (none: answered
        at once, not with a second drawing of the page)."""
        path = urllib.parse.urlsplit(self.path).path
        if path == "/favicon.ico":
            self._send(404)
            return
        if path != "/":
            self._send(303, location="/")
            return
        self._send(200, self.face.page_html().encode("utf-8"))

    def do_POST(self) -> None:
        """A form's action, played if the form was drawn from the state as it stands; then the page."""
        parts = urllib.parse.urlsplit(self.path)
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if parts.path == "/act" and 0 <= length <= MAX_BODY_BYTES:
            fields = urllib.parse.parse_qs(self.rfile.read(length).decode("utf-8", "replace"), keep_blank_values=True)
            token = urllib.parse.parse_qs(parts.query).get("t", [""])[0]
            self.face.post(token, fields)
        self.close_connection = True
        self._send(303, location="/")


# ------------------------------------------------------------------------------------------------ the face


def _refuse(text: str) -> None:
    """BrowserGym's chat callbacks: this action space has no chat actions, so nothing calls them."""
    raise ValueError("the shop's action space has no chat actions")


# The one sync Playwright of the process, shared by the environments open at once (the sync API allows one per
# thread) and stopped when the last of them closes. BrowserGym's own process-wide Playwright is never stopped, and a
# sync Playwright left running keeps its asyncio loop running in the thread: a later asyncio.run() or sync
# Playwright there fails.
_PLAYWRIGHT: Any = None
_PLAYWRIGHT_USERS = 0


def _acquire_playwright() -> Any:
    """The shared sync Playwright, started for the first environment that needs it."""
    global _PLAYWRIGHT, _PLAYWRIGHT_USERS
    if _PLAYWRIGHT is None:
        from playwright.sync_api import sync_playwright

        _PLAYWRIGHT = sync_playwright().start()
    _PLAYWRIGHT_USERS += 1
    return _PLAYWRIGHT


def _release_playwright() -> None:
    """One environment done with the shared Playwright; the last one stops it."""
    global _PLAYWRIGHT, _PLAYWRIGHT_USERS
    _PLAYWRIGHT_USERS -= 1
    if _PLAYWRIGHT_USERS == 0 and _PLAYWRIGHT is not None:
        _PLAYWRIGHT.stop()
        _PLAYWRIGHT = None


class ShopBrowserEnv(gymnasium.Env):
    """``parlour/Shop-v0`` as web pages in headless Chromium, played with BrowserGym's actions (module docstring).

    Args:
        chromium: the Chromium executable (default: :func:`chromium_path`).
        max_browser_steps: browser actions per episode before it is truncated (default: 4 x the game's step limit).
        **options: the game's options (``difficulty``, ``split``) and the engine's (``error_allowance``, ...).

    Observations (BrowserGym's names): ``goal`` (the instruction), ``url``, ``axtree_txt`` (the page's
    accessibility tree, flattened by BrowserGym, with each element's ``bid``), ``focused_element_bid``,
    ``last_action`` and ``last_action_error``.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, *, chromium: str | None = None, max_browser_steps: int | None = None, **options: Any):
        missing = browser_unavailable(chromium)
        if missing is not None:
            raise RuntimeError(missing)
        self.match = Match(Shop, options, face_options=("chromium", "max_browser_steps"))
        self.chromium = chromium_path(chromium)
        self.max_browser_steps = 4 * _shop(self.match).max_steps if max_browser_steps is None else int(max_browser_steps)
        if self.max_browser_steps < 1:
            raise ValueError(f"max_browser_steps must be positive, got {max_browser_steps!r}")
        text = TextSpace()
        self.observation_space = gymnasium.spaces.Dict(
            {key: text for key in ("goal", "url", "axtree_txt", "focused_element_bid", "last_action", "last_action_error")}
        )
        self.action_space = TextSpace(self.match.settings.max_action_chars)
        from browsergym.core.action import functions
        from browsergym.core.action.highlevel import HighLevelActionSet

        self._actions = HighLevelActionSet(
            subsets=["custom"], custom_actions=[getattr(functions, name) for name in ACTIONS], multiaction=False, strict=True
        )
        self._actions.python_includes = _BROWSERGYM_TIMEOUT.sub(f"timeout={ELEMENT_TIMEOUT_MS}", self._actions.python_includes)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._port = 0
        self._playwright: Any = None
        self._browser: Any = None
        self._context: Any = None
        self._page: Any = None
        self._cdp: Any = None
        self._token = 0
        self._moves = 0
        self._in_step = False
        self._played: list[str] = []
        self._paid = 0.0
        self._bids: set[str] = set()
        self._names: dict[tuple[str, str], str] = {}

    # ------------------------------------------------------------------------------------------ server
    @property
    def origin(self) -> str | None:
        """``http://127.0.0.1:<port>`` while the episode's server runs, else ``None``."""
        if self._server is None:
            return None
        host, port = self._server.server_address[:2]
        # getsockname() gives an AF_INET server's host as a str; typeshed also allows the bytes bind() takes.
        assert isinstance(host, str)
        return f"http://{host}:{port}"

    def page_html(self) -> str:
        """The page of the match as it stands (what the server answers ``GET /`` with)."""
        with self._lock:
            return shop_page(self.match, self._token)

    def post(self, token: str, fields: dict[str, list[str]]) -> None:
        """A form's action from the server: played as the text game's action if it comes during a step, from the page
        of the state as it stands (``token``), and the episode is not over; anything else changes nothing."""
        with self._lock:
            if not self._in_step or self.match.over or token != str(self._token):
                return
            if "click" in fields:
                text = f"click[{fields['click'][0]}]"
            elif "q" in fields:
                text = search_text(fields["q"][0])
            else:
                return
            self._token += 1
            self._played.append(text)
            self._paid += self.match.submit(PLAYER, text).get(PLAYER, 0.0)

    def _serve(self) -> None:
        """Start the episode's server on 127.0.0.1 (the last episode's port when it is free)."""
        handler = type("ShopHandler", (_Handler,), {"face": self})
        try:
            server = ThreadingHTTPServer(("127.0.0.1", self._port), handler)
        except OSError:
            server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        self._server, self._port = server, server.server_address[1]
        threading.Thread(target=server.serve_forever, name="parlour-shop-web", daemon=True).start()

    def _unserve(self) -> None:
        """Shut the episode's server down and free its port."""
        server, self._server = self._server, None
        if server is not None:
            # serve_forever() looks for the shutdown request only between polls half a second apart, which was the
            # last step of every episode; a connection ends the poll at once (answered as an empty request).
            stopping = threading.Thread(target=server.shutdown, name="parlour-shop-web-stop")
            stopping.start()
            while stopping.is_alive():
                with contextlib.suppress(OSError):
                    socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=1).close()
                stopping.join(0.01)
            server.server_close()

    # ------------------------------------------------------------------------------------------ browser
    def _launch(self) -> None:
        """Start Chromium (once per environment) and open a fresh context and page on the episode's server."""
        if self._browser is None:
            self._playwright = playwright = _acquire_playwright()
            # BrowserGym finds elements by their bid through Playwright's test-id selector.
            playwright.selectors.set_test_id_attribute("bid")
            self._browser = playwright.chromium.launch(executable_path=self.chromium, args=CHROMIUM_ARGS, headless=True)
        if self._context is not None:
            self._context.close()
        self._context = self._browser.new_context()
        # Element actions carry their own timeout (ELEMENT_TIMEOUT_MS); this bounds the rest (a goto, a page's load).
        self._context.set_default_timeout(NAVIGATION_TIMEOUT_MS)
        self._page = self._context.new_page()
        self._page.goto(f"{self.origin}/")
        # One DevTools session for the page's life (it outlives navigations): the accessibility tree is one call on it.
        self._cdp = self._context.new_cdp_session(self._page)
        # The blank page a new tab opens on would be in the history: go_back() must not leave the shop.
        self._cdp.send("Page.resetNavigationHistory")

    def _settle(self) -> None:
        """Wait until the page shown is the current history entry's and has loaded (a form's answer, a page fetched
        on going back)."""
        from playwright.sync_api import Error

        try:
            self._page.evaluate(_SHOWN)
        except Error:  # the document was replaced while asked (a goto, a traversal to another document's entry)
            self._page.wait_for_function(_SHOWN_NOW)

    def _observe(self, action: str, error: str | None) -> dict[str, str]:
        """BrowserGym's observation of the page: mark the elements with bids, read the accessibility tree, flatten it."""
        from browsergym.core.constants import BROWSERGYM_ID_ATTRIBUTE
        from browsergym.utils.obs import flatten_axtree_to_str

        page = self._page
        mark, unmark = marking_scripts()
        # BrowserGym's _pre_extract and _post_extract run these in every frame; the shop's pages have none.
        page.main_frame.evaluate(mark, ["", BROWSERGYM_ID_ATTRIBUTE, "standard_html"])
        tree = self._axtree()
        focused = page.evaluate(_FOCUSED)
        page.main_frame.evaluate(unmark)
        nodes = [node for node in tree["nodes"] if node.get("browsergym_id")]
        self._bids = {node["browsergym_id"] for node in nodes}
        self._names = {(node["role"]["value"], node.get("name", {}).get("value", "")): node["browsergym_id"] for node in nodes}
        return {
            "goal": _shop(self.match).instruction,
            "url": page.url,
            "axtree_txt": flatten_axtree_to_str(tree),
            "focused_element_bid": focused or "",
            "last_action": action,
            "last_action_error": error or "",
        }

    def _axtree(self) -> dict[str, Any]:
        """The marked page's accessibility tree as BrowserGym's ``extract_merged_axtree`` gives it for a page without
        frames: Chromium's tree in one call on the page's session (BrowserGym opens two sessions and lists the frames
        first), each node's bid taken out of the ARIA data the marking put there, as BrowserGym does."""
        from browsergym.core.observation import extract_data_items_from_aria

        nodes = self._cdp.send("Accessibility.getFullAXTree")["nodes"]
        for node in nodes:
            data_items: list[str] = []
            for index, prop in enumerate(node.get("properties", [])):
                if prop["name"] == "roledescription":
                    data_items, value = extract_data_items_from_aria(prop["value"]["value"])
                    prop["value"]["value"] = value
                    if value == "":
                        del node["properties"][index]
                    break
            if "description" in node:
                fallback, value = extract_data_items_from_aria(node["description"]["value"])
                node["description"]["value"] = value
                if value == "":
                    del node["description"]
                data_items = data_items or fallback
            if data_items:
                (node["browsergym_id"],) = data_items
        return {"nodes": nodes}

    # ------------------------------------------------------------------------------------------ episode
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict[str, str], dict[str, Any]]:
        """Start the episode that ``gymnasium.make("parlour/Shop-v0").reset(seed=seed)`` starts, its server and its page."""
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(1 << 62))
        self._unserve()
        self.match.reset(episode_seeds(seed, 0, 1)[0])
        self._token, self._moves = 0, 0
        self._serve()
        self._launch()
        return self._observe("", None), self._info(None, None)

    def step(self, action: str) -> tuple[dict[str, str], float, bool, bool, dict[str, Any]]:
        """Run one BrowserGym action in the browser; the game action a form submits is played on the match, an action
        that maps to nothing is an invalid one. Returns the new page's observation and what the game paid."""
        if self._server is None:
            raise RuntimeError("the episode is over (or was never started); call reset() to start one")
        self._moves += 1
        text = action if isinstance(action, str) else repr(action)[:200]
        kind, code = self._compile(action)
        self._played, self._paid = [], 0.0
        if code is not None:
            from browsergym.core.action.base import execute_python_code

            with self._lock:
                self._in_step = True
            try:
                execute_python_code(code, self._page, send_message_to_user=_refuse, report_infeasible_instructions=_refuse)
            except Exception:  # noqa: BLE001 - Playwright's errors and BrowserGym's: the element does not take the action
                kind = "failed"
            finally:
                self._settle()
                with self._lock:
                    self._in_step = False
        if self._played:
            # A form was sent: that is the step's game action, even if BrowserGym's action raised once it had gone
            # (its timeout); the refusal, if any, is the game's.
            played, error = self._played[-1], self.match.last_error.get(PLAYER)
        elif kind is not None:
            played, error = UNMAPPED[kind], _ERRORS[kind].format(origin=self.origin)
            self._paid += self.match.submit(PLAYER, played).get(PLAYER, 0.0)
            if self.match.over:
                self._page.goto(f"{self.origin}/")  # the forfeit's page
        else:
            played, error = None, None
        observation = self._observe(text, error)
        terminated = self.match.over
        truncated = not terminated and self._moves >= self.max_browser_steps
        if terminated or truncated:
            self._unserve()
        return observation, self._paid, terminated, truncated, self._info(played, error, text)

    def _compile(self, action: Any) -> tuple[str | None, str | None]:
        """``(None, code)``: BrowserGym's code for ``action``, for the browser to run; or ``(why, None)`` when it maps to
        nothing before it runs (see :data:`UNMAPPED`)."""
        if not isinstance(action, str) or len(action) > self.match.settings.max_action_chars:
            return "syntax", None
        from browsergym.core.action.parsers import (
            NamedArgument,
            highlevel_action_parser,
        )

        try:
            calls = highlevel_action_parser.parse_string(action, parse_all=True).as_list()
            code = self._actions.to_python_code(action)
        except Exception:  # noqa: BLE001 - pyparsing's and ast's errors on malformed text, BrowserGym's checks of the call
            return "syntax", None
        if len(calls) != 1 or calls[0][0] not in ACTIONS:
            return "syntax", None
        name, arguments = calls[0]
        positional = [argument for argument in arguments if not isinstance(argument, NamedArgument)]
        named = {argument.name: argument.value for argument in arguments if isinstance(argument, NamedArgument)}
        if name in _BID_ACTIONS:
            bid = positional[0] if positional else named.get("bid")
            if not isinstance(bid, str) or bid not in self._bids:
                return "bid", None
        if name == "goto":
            url = positional[0] if positional else named.get("url")
            if not isinstance(url, str):
                return "syntax", None
            target, home = urllib.parse.urlsplit(urllib.parse.urljoin(f"{self.origin}/", url)), urllib.parse.urlsplit(f"{self.origin}/")
            if (target.scheme, target.netloc) != (home.scheme, home.netloc):
                return "origin", None
        return None, code

    def _info(self, played: str | None, error: str | None, action: str | None = None) -> dict[str, Any]:
        """The step's infos: the browser action, the game action it played, why it was refused, the outcome."""
        info: dict[str, Any] = {"browser_action": action, "game_action": played, "browser_steps": self._moves, "game_steps": _shop(self.match).steps}
        if error is not None:
            info["invalid_action"] = error
        if self.match.outcome is not None:
            info["outcome"] = self.match.outcome.to_dict()
        return info

    # ------------------------------------------------------------------------------------------ driving, records
    def browser_actions(self, move: str) -> list[str]:
        """The browser actions that play the text game's ``move`` (``search[...]`` or ``click[...]``) on the page
        shown, found by name in the last observation's accessibility tree: for driving the face with a text agent."""
        verb, _, rest = move.partition("[")
        argument = rest.removesuffix("]")
        if verb == "search":
            box, button = self._names.get(("textbox", "Search the catalogue")), self._names.get(("button", "Search"))
            if box is None or button is None:
                raise ValueError("there is no search box on this page")
            return [f"fill({box!r}, {argument!r})", f"click({button!r})"]
        bid = self._names.get(("button", argument))
        if verb != "click" or bid is None:
            raise ValueError(f"the page has no button for {move[:80]!r}")
        return [f"click({bid!r})"]

    def record(self, agents: dict[str, str] | None = None) -> Record:
        """The episode's record: the text game's, replayable with :func:`parlour.replay`."""
        return self.match.record({PLAYER: "learner", **(agents or {})})

    def snapshot(self) -> Snapshot:
        """A picklable copy of the episode; :meth:`restore` puts it back and redraws the page."""
        return self.match.snapshot(pickle.dumps({"moves": self._moves}, pickle.HIGHEST_PROTOCOL))

    def restore(self, snapshot: Snapshot) -> dict[str, str]:
        """Return to the episode as :meth:`snapshot` saw it (its server restarted if the episode had ended); returns
        the page's observation."""
        self.match.restore(snapshot)
        state = pickle.loads(snapshot.face)
        # A fresh token: pages drawn before the restore must not play on the restored state.
        self._token, self._moves = self._token + 1, state["moves"]
        if self._server is None:
            self._serve()
        self._launch()
        return self._observe("", None)

    def close(self) -> None:
        """Stop the server and Chromium."""
        self._unserve()
        if self._browser is not None:
            self._browser.close()
        if self._playwright is not None:
            _release_playwright()
        self._playwright = self._browser = self._context = self._page = self._cdp = None
        super().close()
