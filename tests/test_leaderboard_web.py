"""The leaderboard pages in headless Chromium (Debian ``chromium``, driven by Playwright), checked on screenshots too.

Each page must show its parts (method, rules, table with intervals, plot with
round-number ticks, head-to-head matrix without a blank band above its cells,
episode links, the episode viewer) and fit a 1280-pixel window with no
horizontal overflow, which the full-page screenshot's width shows.
"""

from __future__ import annotations

import io
import os

import pytest

from parlour.evaluation.results import INTERVAL_SENTENCE
from parlour.evaluation.runner import evaluate
from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.live import LiveHub, play_local
from parlour.leaderboard.store import slug
from tests.test_leaderboard_challenges import Named, seeded_nonces
from tests.test_leaderboard_server import NASTY, server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
WIDTH = 1280
TTT, KUHN, BARGAINING, HANABI = "parlour/TicTacToe-v0", "parlour/KuhnPoker-v0", "parlour/Bargaining-v0", "parlour/Hanabi-v0"

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs the Debian package 'chromium' (apt-get install -y chromium)")


def counted(board: Leaderboard, env_id: str, agents: list[str], episodes: int) -> None:
    """Play built-in ``agents`` on ``env_id`` for a challenge and submit the run as alice."""
    challenge = board.issue_challenge("alice", env_id, agents, episodes)
    board.submit(evaluate(env_id, agents, challenge=challenge, progress=False), "alice")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A served leaderboard: a win/loss game, poker, a negotiation and a cooperative game, one self-reported run.

    Built-in line-ups count through challenges; alice's own agents (one with a name full of markup) only
    through live matches, as the server allows (an own agent on a challenge could re-simulate the seeds).
    """
    db = f"sqlite:///{tmp_path_factory.mktemp('web')}/lb.db"
    board = Leaderboard(db, bootstrap=50, min_challenge_episodes=1, nonces=seeded_nonces(0))
    board.add_submitter("alice")
    counted(board, TTT, ["minimax", "random"], 20)
    for env_id, episodes, strong in ((TTT, 20, "minimax"), (KUHN, 200, "nash")):
        hub = LiveHub(board, episodes=episodes, match_secrets=seeded_nonces(1))
        play_local(hub, "alice", Named(NASTY, env_id), env_id, opponent="random", seed=2)
        play_local(hub, "alice", Named("also random", env_id), env_id, opponent=strong, seed=3)
    # Enough hands that nash and random separate: the 100 of normalisation is a reference measured above random.
    counted(board, KUHN, ["nash", "random"], 1200)
    counted(board, BARGAINING, ["boulware", "random"], 20)
    counted(board, HANABI, ["convention"], 10)
    counted(board, HANABI, ["random"], 10)
    counted(board, HANABI, ["convention", "random"], 10)
    board.submit(evaluate(KUHN, [Named("self-made", KUHN), "random"], episodes=10, progress=False), "alice")
    board.store.close()
    with server(db) as (base, _):
        yield base


@pytest.fixture(scope="module")
def browser():
    """Headless Debian Chromium through Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, site):
    """A 1280-pixel-wide page that must raise no script error and request nothing outside the server."""
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    requests, errors = [], []
    page.on("request", lambda request: requests.append(request.url))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_default_timeout(15_000)
    yield page
    page.close()
    assert not errors, errors
    assert all(url.startswith(site) for url in requests), [url for url in requests if not url.startswith(site)]


def screenshot(page):
    """The full-page screenshot as a Pillow image."""
    from PIL import Image

    return Image.open(io.BytesIO(page.screenshot(full_page=True))).convert("RGB")


def fits(page) -> None:
    """The page has no horizontal overflow: the DOM says so, and the full-page screenshot is exactly the window's width.

    Every page states the one interval method, once.
    """
    assert page.locator("#interval-method").count() == 1 and page.inner_text("#interval-method") == INTERVAL_SENTENCE
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    image = screenshot(page)
    assert image.width == WIDTH and image.height > 200
    # Not a blank page: the header's colour and plenty of others are there.
    assert len(set(image.resize((160, max(1, image.height // 8))).getdata())) > 20


def column(page, table: str, index: int) -> list[str]:
    """The sort values of one column of a table, top to bottom."""
    return page.eval_on_selector_all(f"#{table} tbody tr", f"rows => rows.map(r => r.cells[{index}].dataset.value)")


def test_index_ranks_specialists_above_random_with_a_reference_row_and_says_how_to_submit(page, site):
    page.goto(site + "/")
    # The first row is the reference (each environment's 100), unranked; then every ranked agent, the
    # specialists (one environment of four each) above random; the own agents, provisional everywhere, are not scored.
    reference, *rows = page.eval_on_selector_all("#overall tbody tr", "rows => rows.map(r => r.cells[1].innerText)")
    assert reference.startswith("reference") and page.locator("#overall tr.reference").count() == 1
    assert set(rows) == {"minimax", "nash", "boulware", "convention", "random"} and rows[-1] == "random"
    # Issue 32: they were in no table of the index; each of their live matches met one built-in, so each needs one more opponent.
    waiting = page.eval_on_selector_all("#provisional tbody tr", "rows => rows.map(r => [r.cells[0].innerText, r.cells[4].innerText])")
    assert sorted(waiting) == sorted([[name, "one more opponent"] for name in (NASTY, "also random") for _ in (TTT, KUHN)])
    coverage = dict(zip(rows, page.eval_on_selector_all("#overall tbody tr:not(.reference)", "rows => rows.map(r => r.cells[4].innerText)")))
    assert coverage["random"] == "4/4" and coverage["minimax"] == "1/4"
    agents = column(page, "overall", 1)[1:]
    intervals = column(page, "overall", 3)[1:]
    assert all(float(low) <= float(score) for low, score in zip(intervals, column(page, "overall", 2)[1:]))
    page.click("#overall th:nth-child(2)")
    assert [name for name in column(page, "overall", 1) if name] == sorted(agents)
    page.click("#overall th:nth-child(3)")
    scores = [float(v) for v in column(page, "overall", 2)]
    assert scores == sorted(scores)
    for category in ("game", "negotiation", "cooperation"):
        assert page.locator(f"#category-table-{category}").count() == 1
    # Your own agent's path is the live one (issue 35: the page taught challenges, which refuse it); built-in runs' follows.
    assert page.locator("#how-to-submit").count() == 1 and "parlour connect python:my_pkg:make_agent" in page.inner_text("#howto-own")
    assert "--challenge" in page.inner_text("main")
    fits(page)


def test_poker_page_shows_method_rules_table_plot_and_matrix(page, site):
    page.goto(f"{site}/env/{slug(KUHN)}.html")
    assert "Expected payoff against the field" in page.inner_text("#method")
    page.click("#rules summary")
    assert "Kuhn" in page.inner_text("#rules pre") or "card" in page.inner_text("#rules pre")
    assert column(page, "ratings", 1)[0] == "nash"
    header = page.inner_text("#ratings thead")
    assert "95% interval" in header and "mean payoff" in header and "Nash mass" in header
    assert page.locator("#rating-plot circle").count() == 4
    ticks = [float(t) for t in page.eval_on_selector_all("#rating-plot text.tick", "ts => ts.map(t => t.textContent)")]
    steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:])}
    assert len(steps) == 1 and next(iter(steps)) in {m * 10.0**e for m in (1, 2, 2.5, 5) for e in range(-3, 4)}
    assert page.locator("#heat-map rect").count() == 16
    # No blank band: the turned column labels start right at the top of the matrix, and the cells right below them.
    gap = page.evaluate("""() => {
        const svg = document.querySelector('#heat-map').getBoundingClientRect();
        const labels = [...document.querySelectorAll('#heat-map text[transform]')].map(t => t.getBoundingClientRect().top);
        const cells = [...document.querySelectorAll('#heat-map rect')].map(r => r.getBoundingClientRect().top);
        return {labels: Math.min(...labels) - svg.top, cells: Math.min(...cells) - svg.top};
    }""")
    assert gap["labels"] < 12 and gap["cells"] < 200, gap
    matrix = page.locator("#heat-map").screenshot()
    from PIL import Image

    image = Image.open(io.BytesIO(matrix)).convert("L")
    first_ink = next(y for y in range(image.height) if min(image.crop((0, y, image.width, y + 1)).getdata()) < 200)
    # The old fixed 180-pixel label band left some 140 blank pixels above short names.
    assert first_ink < 30
    assert page.locator("#self-reported-table").count() == 1 and "self-made" in page.inner_text("#self-reported-table")
    assert page.locator("table.episodes a.episode").count() > 0
    fits(page)


def test_win_loss_page_uses_bradley_terry_and_links_agents(page, site):
    page.goto(f"{site}/env/{slug(TTT)}.html")
    assert "Bradley–Terry" in page.inner_text("#method") and "First-mover advantage" in page.inner_text("main")
    assert column(page, "ratings", 1)[0] == "minimax"
    assert "reference" in page.inner_text("#ratings")  # random, the anchor
    # The head-to-head "win rate" counted draws as half without saying so; the table's score rate says what it counts.
    assert "a draw counting half" in page.inner_text("main") and "win rate" not in page.inner_text("main")
    assert page.locator("img").count() == 0  # the name with <img ...> is text, not markup
    fits(page)
    page.get_by_role("link", name=NASTY, exact=True).first.click()
    page.wait_for_url("**/agent/*.html")
    assert page.locator("#agent-name").inner_text() == NASTY
    assert page.locator("#agent-envs tbody tr").count() == 2
    fits(page)
    page.click("a[href*='submitter/']")
    page.wait_for_url("**/submitter/*.html")
    assert page.locator("#submissions tbody tr").count() == 11 and "self" in page.inner_text("#submissions")
    assert "abandoned" in page.inner_text("main")
    fits(page)


def test_negotiation_and_team_pages_show_their_tables(page, site):
    page.goto(f"{site}/env/{slug(BARGAINING)}.html")
    header = page.inner_text("#negotiation thead")
    for part in ("agreement rate", "mean utility", "mean welfare", "Pareto distance", "Nash-bargaining distance"):
        assert part in header
    assert "α-Rank mass" in page.inner_text("#ratings thead")
    fits(page)
    page.goto(f"{site}/env/{slug(HANABI)}.html")
    assert "Cross-play team score" in page.inner_text("#method")
    assert column(page, "ratings", 1)[0] == "convention"
    teams = column(page, "teams", 0)
    assert teams[0] == "convention ×2" and "convention + random" in teams
    assert page.locator("#roles tbody tr").count() == 2
    references = page.inner_text("#references")
    assert "random team scores 0.000" in references and "best scripted team, convention ×2, scores" in references
    fits(page)


def test_episode_viewer_shows_every_turn_as_the_player_saw_it_and_the_final_state(page, site):
    page.goto(f"{site}/env/{slug(KUHN)}.html")
    page.click("table.episodes a.episode")
    page.wait_for_url("**/episode/*.html")
    turns = page.locator("#turns li.turn")
    assert turns.count() >= 2
    turns.first.locator("summary").click()
    seen = turns.first.locator("pre").inner_text()
    assert "Your card" in seen and "Legal moves" in seen
    assert page.locator("#final-state").inner_text().strip()
    assert page.locator("details.final").count() == 2
    # The viewer names each seat's role (the viewer showed seats only); Kuhn's two seats are both "player".
    assert page.eval_on_selector_all("#seats td.role", "cells => cells.map(c => c.innerText)") == ["player", "player"]
    fits(page)
    page.click("a[href*='submission/']")
    page.wait_for_url("**/submission/*.html")
    assert "Source:" in page.inner_text("main") and page.locator("table.episodes a.episode").count() > 0
    fits(page)
