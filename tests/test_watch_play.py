"""Watch and play live matches in the browser (issue 35), in headless Chromium (Debian ``chromium``, driven by Playwright).

A person plays a live match against a built-in agent on ``/play.html``: the moves are buttons where the game lists
them (TicTacToe, played by clicks) and a text box otherwise (Bargaining, played by typing); the match is stored as
a live match like any other. ``/live/<id>.html`` shows the same match as it is played, each turn as it happens,
drawn as the episode viewer draws a turn, from server-sent events. Mafia's episode viewer shows the dealt roles and
separates day from night.
"""

from __future__ import annotations

import os

import httpx
import pytest

from parlour.evaluation.runner import evaluate
from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.site import Site
from tests.test_leaderboard_challenges import seeded_nonces
from tests.test_leaderboard_server import server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
TTT, BARGAINING = "parlour/TicTacToe-v0", "parlour/Bargaining-v0"
#: Turns a test plays before it gives up on a match ending (a TicTacToe game has at most 5 of the person's moves).
MAX_TURNS = 40

browser_only = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs the Debian package 'chromium' (apt-get install -y chromium)")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A served leaderboard whose live matches are one episode long (one game: what a person plays); alice's token."""
    db = f"sqlite:///{tmp_path_factory.mktemp('play')}/lb.db"
    board = Leaderboard(db)
    token = board.add_submitter("alice")
    board.store.close()
    with server(db, "--live-episodes", "1") as (base, _):
        yield base, token, db


@pytest.fixture(scope="module")
def browser():
    """Headless Debian Chromium through Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()


def new_page(browser, base: str, errors: list[str]):
    """A page that records script errors and may request nothing outside the server."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("request", lambda request: None if request.url.startswith(base) else errors.append(f"outside request: {request.url}"))
    page.set_default_timeout(60_000)
    return page


def start(page, base: str, token: str, env_id: str, opponent: str, name: str) -> str:
    """Open the play page, start a match of ``name`` against ``opponent`` on ``env_id``; the watch page's URL."""
    page.goto(base + "/play.html")
    page.fill("#token", token)
    page.fill("#name", name)
    page.select_option("#env", env_id)
    page.select_option("#opponent", opponent)
    page.click("#start")
    page.wait_for_selector("#play-area:not([hidden])")
    return base + "/" + page.get_attribute("#watch-link", "href")


def finish(page) -> int:
    """The submission the finished match was stored as (its link on the play page)."""
    href = page.get_attribute("#submission-link", "href")
    return int(href.split("/")[-1].removesuffix(".html"))


@browser_only
def test_a_person_plays_tictactoe_by_clicks_while_a_spectator_watches_each_turn(browser, served):
    base, token, _ = served
    errors: list[str] = []
    player, watcher = new_page(browser, base, errors), new_page(browser, base, errors)
    watch_url = start(player, base, token, TTT, "minimax", "alice at the keyboard")
    watcher.goto(watch_url)
    clicks = 0
    for _ in range(MAX_TURNS):
        player.wait_for_selector("button.move, #submission-link")
        if player.locator("#submission-link").count():
            break
        player.locator("button.move").first.click()
        clicks += 1
        # The spectator sees the turn as it happens, drawn as the episode viewer draws one.
        watcher.locator("#turns li.turn").nth(clicks - 1).wait_for()
        assert watcher.locator("#turns li.turn .seat").last.inner_text().startswith("player_")
        assert watcher.locator("#turns li.turn .who").last.inner_text() == "(alice at the keyboard)"
    else:
        pytest.fail(f"the game did not end within {MAX_TURNS} moves")
    assert 3 <= clicks <= 5
    submission = finish(player)
    watcher.wait_for_selector("#watch-status a.submission")
    assert "episode-end" in watcher.inner_html("#turns")
    stored = httpx.get(f"{base}/api/submissions/{submission}", timeout=60).json()
    assert stored["source"] == "live" and stored["summary"]["status"] == "complete" and stored["episodes"] == 1
    assert stored["summary"]["agents"] == ["alice at the keyboard", "minimax"]
    # The live page lists the match (kept after its end for its result) with a link to watch it.
    live = new_page(browser, base, errors)
    live.goto(base + "/live.html")
    assert live.locator("a.watch").count() >= 1
    # The served index leads to both pages.
    live.goto(base + "/")
    assert live.locator("#play-in-browser a[href='play.html']").count() == 1 and live.locator("#play-in-browser a[href='live.html']").count() == 1
    assert not errors, errors


@browser_only
def test_a_person_plays_bargaining_by_typing(browser, served):
    base, token, db = served
    errors: list[str] = []
    page = new_page(browser, base, errors)
    start(page, base, token, BARGAINING, "boulware", "alice typing")
    typed = 0
    for _ in range(MAX_TURNS):
        page.wait_for_selector("#text-move:not([hidden]), #submission-link")
        if page.locator("#submission-link").count():
            break
        assert page.locator("button.move").count() == 0  # free text: no buttons, a box
        page.fill("#action", "I only want the books. [propose] 1 book, 0 hats, 0 balls" if typed == 0 else "[pass]")
        page.click("#send")
        typed += 1
    else:
        pytest.fail(f"the game did not end within {MAX_TURNS} turns")
    submission = finish(page)
    stored = httpx.get(f"{base}/api/submissions/{submission}", timeout=60).json()
    assert stored["source"] == "live" and stored["env_id"] == BARGAINING and stored["summary"]["status"] == "complete"
    # The record holds what was typed, as the person's first move.
    board = Leaderboard(db)
    (listed,) = board.store.episodes(submission=submission, limit=5)
    record = board.store.episode(listed["id"])["record"]
    mine = [step["action"] for step in record["steps"] if record["agents"][step["player"]] == "alice typing"]
    assert mine[0] == "I only want the books. [propose] 1 book, 0 hats, 0 balls" and len(mine) == typed
    assert not errors, errors


def test_the_mafia_viewer_shows_the_dealt_roles_and_separates_day_from_night(tmp_path):
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db", min_challenge_episodes=1, nonces=seeded_nonces(3))
    board.add_submitter("alice")
    challenge = board.issue_challenge("alice", "parlour/Mafia-v0", ["random"], 1)
    board.submit(evaluate("parlour/Mafia-v0", ["random"], challenge=challenge, progress=False), "alice")
    (episode,) = board.store.episodes(env_id="parlour/Mafia-v0", limit=1)
    html = Site(board).episode(episode["id"])
    assert "(detective)" in html and "(doctor)" in html
    assert '<li class="phase">Night 1</li>' in html and '<li class="phase">Day 1</li>' in html
    assert html.index('<li class="phase">Night 1</li>') < html.index('<li class="phase">Day 1</li>')


class FirstMove:
    """Plays the first legal move."""

    def act(self, observation):
        return observation["legal_moves"][0]


def test_a_spectator_joining_a_long_match_gets_the_newest_events_and_its_end(tmp_path, monkeypatch):
    from parlour.leaderboard import live as live_module
    from parlour.leaderboard.live import LiveHub, play_local

    # A long match would keep every observation it showed; the transcript keeps the newest, half dropped at a time.
    monkeypatch.setattr(live_module, "TRANSCRIPT_EVENTS", 10)
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db")
    board.add_submitter("alice")
    hub = LiveHub(board, episodes=5, match_secrets=seeded_nonces(4))
    play_local(hub, "alice", FirstMove(), TTT, opponent="random", name="first move", seed=0)
    (match,) = hub.watchable()
    events, following, over = hub.events(match["match"], 0)
    assert over and events[-1]["kind"] == "end" and events[-1]["submission"] is not None
    assert len(events) <= 11 and events[0]["kind"] in ("turn", "episode") and following > len(events) - 1
    assert [event["episode"] for event in events if event["kind"] == "episode"][-1] == 4
    # Asking again from where the stream stopped gives nothing new.
    assert hub.events(match["match"], following)[0] == [events[-1]]
