"""The leaderboard pages in headless Chromium (Debian ``chromium``, driven by Playwright): sorting, plots, navigation."""

from __future__ import annotations

import os

import pytest

from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.runner import evaluate
from tests.test_leaderboard_server import ENV, NASTY, Named, server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs the Debian package 'chromium' (apt-get install -y chromium)")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A served leaderboard with four TicTacToe agents, one with a name full of markup."""
    db = f"sqlite:///{tmp_path_factory.mktemp('web')}/lb.db"
    board = Leaderboard(db, bootstrap=50)
    board.add_submitter("alice")
    for seed, agents in enumerate([["minimax", "random"], [Named(NASTY), "random"], [Named("also random"), "minimax"]]):
        board.submit(evaluate(ENV, agents, episodes=20, seed=seed, progress=False), "alice")
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
    """A page that must raise no script error and request nothing outside the server."""
    page = browser.new_page()
    requests, errors = [], []
    page.on("request", lambda request: requests.append(request.url))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_default_timeout(15_000)
    yield page
    page.close()
    assert not errors, errors
    assert all(url.startswith(site) for url in requests), [url for url in requests if not url.startswith(site)]


def column(page, table: str, index: int) -> list[str]:
    """The sort values of one column of a table, top to bottom."""
    return page.eval_on_selector_all(f"#{table} tbody tr", f"rows => rows.map(r => r.cells[{index}].dataset.value)")


def test_overall_table_sorts_by_a_clicked_column(page, site):
    page.goto(site + "/")
    agents = column(page, "overall", 1)
    assert set(agents) == {"minimax", "random", NASTY, "also random"}
    page.click("#overall th:nth-child(2)")
    assert column(page, "overall", 1) == sorted(agents)
    page.click("#overall th:nth-child(3)")
    assert [float(v) for v in column(page, "overall", 2)] == sorted(float(v) for v in column(page, "overall", 2))
    page.click("#overall th:nth-child(3)")
    scores = [float(v) for v in column(page, "overall", 2)]
    assert scores == sorted(scores, reverse=True) and scores[0] == pytest.approx(100.0)


def test_environment_page_draws_ratings_and_heat_map_and_opens_an_agent_page(page, site):
    page.goto(site + "/")
    page.click("#environments a[href^='env/']")
    page.wait_for_selector("#rating-plot")
    assert page.locator("#rating-plot circle").count() == 4
    box = page.locator("#rating-plot").bounding_box()
    assert box["width"] > 300 and box["height"] > 100
    intervals = page.eval_on_selector_all("#rating-plot line.interval", "lines => lines.map(l => l.getBBox().width)")
    assert len(intervals) == 4 and sum(width > 0 for width in intervals) == 3  # the anchor's interval is a point
    assert page.locator("#heat-map rect").count() == 16
    assert page.locator("img").count() == 0  # the name with <img ...> is text, not markup
    page.get_by_role("link", name=NASTY, exact=True).first.click()
    page.wait_for_url("**/agent/*.html")
    assert page.locator("#agent-name").inner_text() == NASTY
    assert page.locator("#agent-envs tbody tr").count() == 1
