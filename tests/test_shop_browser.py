"""The Shop in a real browser (parlour.bridges.browser): BrowserGym's actions in headless Chromium play the text game's
episode, with its reward and its record; bad browser actions are invalid actions; the server binds loopback and dies
with the episode; the accessibility tree shows nothing hidden. The shared suites (fuzz, attribution, conformance,
snapshot, replay) enumerate the registered games, which this face is not, so each has its case here."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import gymnasium
import numpy as np
import pytest

import parlour
from parlour.baselines import make_scripted
from parlour.bridges.browser import UNMAPPED, ShopBrowserEnv, browser_unavailable

ENV_ID = "parlour/Shop-v0"
MISSING = browser_unavailable()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"{MISSING}")


@pytest.fixture(scope="module")
def env():
    """One browser face (one Chromium) for the module's episodes."""
    face = ShopBrowserEnv(difficulty=2)
    yield face
    face.close()


def text_record(seed: int, difficulty: int = 2) -> dict:
    """The record of the expert on ``gymnasium.make(ENV_ID)``'s episode of ``seed``: the text face."""
    text = gymnasium.make(ENV_ID, difficulty=difficulty).unwrapped
    text.reset(seed=seed)
    agent = make_scripted("expert", ENV_ID)
    agent.reset(seed=0)
    done = False
    while not done:
        _, _, terminated, truncated, _ = text.step(agent.act(text.match.agent_observation("player_0")))
        done = terminated or truncated
    return text.record()


def play_expert(env: ShopBrowserEnv, seed: int) -> tuple[list[dict], float]:
    """The expert's plan played through browser actions (each of its moves found by name in the accessibility tree);
    returns every observation and the rewards' sum."""
    observation, _ = env.reset(seed=seed)
    agent = make_scripted("expert", ENV_ID)
    agent.reset(seed=0)
    seen, total, done = [observation], 0.0, False
    while not done:
        for action in env.browser_actions(agent.act(env.match.agent_observation("player_0"))):
            observation, reward, terminated, truncated, info = env.step(action)
            seen.append({**observation, "info": json.dumps(info)})
            total += reward
            done = terminated or truncated
    return seen, total


def same_episode(browser: dict, text: dict) -> None:
    for key in ("env_id", "seed", "options", "steps", "returns", "outcome", "done"):
        assert browser[key] == text[key], key


def bid_of(observation: dict, role: str, name: str) -> str:
    """The bid of the element ``role 'name'`` in the observation's accessibility tree."""
    found = re.search(rf"\[(\w+)\] {role} '{re.escape(name)}'", observation["axtree_txt"])
    assert found, (role, name)
    return found.group(1)


# ------------------------------------------------------------------------------------------------ same game


@pytest.mark.parametrize("seed", [3, 11])
def test_the_expert_in_the_browser_plays_the_text_games_episode_record_and_reward(env, seed):
    seen, total = play_expert(env, seed)
    record = env.record()
    same_episode(record, text_record(seed))
    assert total == record["returns"]["player_0"] == 1.0 and record["outcome"]["details"]["success"]
    assert parlour.replay(record)["returns"] == record["returns"]
    assert "Game over" in seen[-1]["axtree_txt"] and "Your total reward: 1." in seen[-1]["axtree_txt"]


def test_a_search_is_the_box_and_its_button_and_enter_does_the_same(env):
    observation, _ = env.reset(seed=5)
    box = bid_of(observation, "textbox", "Search the catalogue")
    observation, reward, _, _, info = env.step(f"fill('{box}', 'pillow [organic]\\n cotton')")
    assert info["game_action"] is None and reward == 0.0 and env.match.game.page == "search"
    assert "value='pillow [organic]" in observation["axtree_txt"] or "pillow [organic]" in observation["axtree_txt"]
    _, _, _, _, info = env.step(f"press('{box}', 'Enter')")
    assert info["game_action"] == "search[pillow organic cotton]" and env.match.game.page == "results"
    assert env.record()["steps"][-1]["move"] == "search[pillow organic cotton]"


def test_a_slow_renderer_changes_no_verdict(env):
    """The same action on the same page gets the same verdict however busy the machine: BrowserGym gives an element
    action 500 ms, and a CI run sharing its cores saw a valid ``press(box, 'Enter')`` refused. Chromium's renderer
    slowed 100 times (DevTools' CPU throttling) stands in for the loaded machine."""
    observation, _ = env.reset(seed=1)
    box, button = bid_of(observation, "textbox", "Search the catalogue"), bid_of(observation, "button", "Search")
    # The page's own DevTools session: throttling lasts as long as this page, which the next reset() replaces.
    env._cdp.send("Emulation.setCPUThrottlingRate", {"rate": 100})
    try:
        _, _, _, _, refused = env.step(f"fill('{button}', 'shampoo')")
        _, _, _, _, filled = env.step(f"fill('{box}', 'shampoo')")
        _, _, _, _, pressed = env.step(f"press('{box}', 'Enter')")
    finally:
        env._cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
    assert refused["game_action"] == UNMAPPED["failed"]
    assert "invalid_action" not in filled, filled
    assert pressed["game_action"] == "search[shampoo]" and env.match.game.page == "results"


# ------------------------------------------------------------------------------------------------ bad input


def test_browser_only_actions_play_nothing_and_actions_on_nothing_are_invalid(env):
    observation, _ = env.reset(seed=8)
    box, button = bid_of(observation, "textbox", "Search the catalogue"), bid_of(observation, "button", "Search")
    for action in [
        "noop()",
        f"hover('{button}')",
        f"focus('{box}')",
        "scroll(0, 200)",
        "go_back()",
        f"clear('{box}')",
        f"goto('{env.origin}/')",
        "go_forward()",
    ]:
        observation, reward, terminated, _, info = env.step(action)
        assert info["game_action"] is None and "invalid_action" not in info and reward == 0.0 and not terminated, action
    assert env.match.steps == [] and env.match.game.steps == 0
    refusals = [
        ("click('9999')", "bid"),
        (f"fill('{button}', 'x')", "failed"),
        ("goto('http://example.com/')", "origin"),
        ("click[buy now]", "syntax"),
        (f"click('{button}') click('{button}')", "syntax"),
    ]
    for number, (action, why) in enumerate(refusals, start=1):
        observation, reward, terminated, _, info = env.step(action)
        assert info["game_action"] == UNMAPPED[why] and info["invalid_action"] == observation["last_action_error"], action
        assert "9999" not in info["invalid_action"] and "example" not in info["invalid_action"]
        assert env.match.errors["player_0"] == number and env.match.game.steps == 0 and not terminated
    assert [step["error"] is not None for step in env.record()["steps"]] == [True] * len(refusals)
    assert parlour.replay(env.record())["steps"] == env.record()["steps"]


def test_an_empty_search_is_the_games_invalid_action(env):
    observation, _ = env.reset(seed=8)
    _, _, _, _, info = env.step(f"click('{bid_of(observation, 'button', 'Search')}')")
    assert info["game_action"] == "search[]" and info["invalid_action"] == env.match.last_error["player_0"]
    assert "search is empty" in info["invalid_action"] and env.match.errors["player_0"] == 1


def test_past_the_allowance_the_player_forfeits_and_the_server_is_gone():
    face = ShopBrowserEnv(difficulty=1, error_allowance=1)
    try:
        observation, _ = face.reset(seed=2)
        origin = face.origin
        assert origin.startswith("http://127.0.0.1:") and face._server.server_address[0] == "127.0.0.1"
        assert b"Search the catalogue" in urllib.request.urlopen(f"{origin}/", timeout=5).read()
        face.step("click('9999')")
        observation, reward, terminated, _, info = face.step("click('9999')")
        assert terminated and reward == -1.0 and info["outcome"]["reason"] == "player_0 exceeded the invalid-action allowance"
        assert "Game over" in observation["axtree_txt"]
        with pytest.raises(urllib.error.URLError, match="refused"):
            urllib.request.urlopen(f"{origin}/", timeout=5)
        with pytest.raises(RuntimeError, match="call reset"):
            face.step("noop()")
        face.reset(seed=2)
        assert face.origin == origin, "each episode serves on the same port, so observations repeat"
    finally:
        face.close()
    with pytest.raises(urllib.error.URLError, match="refused"):
        urllib.request.urlopen(f"{origin}/", timeout=5)


def test_the_browser_step_limit_truncates_and_the_record_replays_unfinished():
    face = ShopBrowserEnv(difficulty=1, max_browser_steps=3)
    try:
        face.reset(seed=4)
        for _ in range(2):
            assert face.step("noop()")[3] is False
        _, _, terminated, truncated, _ = face.step("noop()")
        assert truncated and not terminated and face.origin is None
        record = face.record()
        assert not record["done"] and parlour.replay(record)["steps"] == []
    finally:
        face.close()


def test_fuzzed_browser_actions_never_crash_and_replay(env):
    rng = np.random.default_rng(0)
    observation, _ = env.reset(seed=9)
    verbs = ["click", "dblclick", "fill", "press", "hover", "focus", "clear", "select_option"]
    junk = [
        "",
        "click(",
        "click(12)",
        "fill('1')",
        "goto(None)",
        "go_back(1, 2)",
        "x" * 20000,
        "click('1', button='middle')",
        "press('1', 'Control+A')",
        "noop(wait_ms=-5)",
        'click("\u2028")',
        "fill('1', '\ud800')",
    ]
    for step in range(40):
        bids = re.findall(r"\[(\w+)\]", observation["axtree_txt"]) + ["0", "424242", "a1"]
        bid = bids[int(rng.integers(len(bids)))]
        verb = verbs[int(rng.integers(len(verbs)))]
        action = (
            junk[step % len(junk)]
            if step % 4 == 3
            else f"{verb}('{bid}', 'zq search]')"
            if verb in ("fill", "press", "select_option")
            else f"{verb}('{bid}')"
        )
        observation, _, terminated, truncated, _ = env.step(action)
        assert set(observation) == set(env.observation_space.spaces) and env.observation_space.contains(observation)
        if terminated or truncated:
            observation, _ = env.reset(seed=10 + step)
    assert parlour.replay(env.record())["steps"] == env.record()["steps"]


# ------------------------------------------------------------------------------------------------ hidden state, attribution


def test_the_accessibility_tree_holds_no_hidden_state(env):
    for seed in (1, 6):
        seen, _ = play_expert(env, seed)
        game = env.match.game
        target, digest = game.goal.target, game.goal.digest
        listed = False
        for observation in seen:
            shown = json.dumps({key: value for key, value in observation.items() if key != "info"})
            listed = listed or target in shown
            assert digest not in shown
            assert listed or target not in observation.get("info", "")
        assert "B0" not in seen[0]["axtree_txt"]


def test_the_players_query_reaches_no_page(env):
    observation, _ = env.reset(seed=1)
    box = bid_of(observation, "textbox", "Search the catalogue")
    env.step(f"fill('{box}', 'shampoo zqspoof Game over: zqspoof wins')")
    observation, _, _, _, info = env.step(f"press('{box}', 'Enter')")
    assert info["game_action"].startswith("search[shampoo zqspoof") and "zqspoof" not in observation["axtree_txt"]
    observation, _, _, _, _ = env.step(f"click('{bid_of(observation, 'button', 'back to search')}')")
    assert "zqspoof" not in observation["axtree_txt"] and "value=" not in observation["axtree_txt"]


# ------------------------------------------------------------------------------------------------ snapshots, conformance


def test_snapshot_and_restore_replay_the_same_episode(env):
    env.reset(seed=3)
    agent = make_scripted("expert", ENV_ID)
    for _ in range(2):
        for action in env.browser_actions(agent.act(env.match.agent_observation("player_0"))):
            env.step(action)
    saved, page = env.snapshot(), env.match.game.page_model()
    first, _ = play_rest(env, agent)
    observation = env.restore(saved)
    assert env.match.game.page_model() == page and "Game over" not in observation["axtree_txt"]
    again, _ = play_rest(env, agent)
    assert again == first and again["returns"]["player_0"] == 1.0


def play_rest(env: ShopBrowserEnv, agent) -> tuple[dict, float]:
    """Play the expert to the end of the episode; the record and the last reward."""
    reward, done = 0.0, False
    while not done:
        for action in env.browser_actions(agent.act(env.match.agent_observation("player_0"))):
            _, reward, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
    return env.record(), reward


def test_gymnasiums_env_checker_passes(env):
    from gymnasium.utils.env_checker import check_env

    check_env(env, skip_render_check=True)
    first, _ = env.reset(seed=12)
    again, _ = env.reset(seed=12)
    assert first == again


def test_a_closed_environment_leaves_no_event_loop_running_in_the_thread():
    """BrowserGym's process-wide Playwright was never stopped: its asyncio loop kept running in the thread, so a later
    asyncio.run() (the MCP and verifiers examples of the README) or another sync Playwright (the page tests) failed in
    the same process ("Runner.run() cannot be called from a running event loop"). Run in a process of its own, since
    this module's shared environment is open in this one."""
    import subprocess
    import sys

    program = """
import asyncio
from playwright.sync_api import sync_playwright
from parlour.bridges.browser import ShopBrowserEnv

env = ShopBrowserEnv(difficulty=1)
env.reset(seed=0)
env.close()

async def answer():
    return 42

assert asyncio.run(answer()) == 42
with sync_playwright() as playwright:
    assert playwright.chromium is not None
print("clean")
"""
    finished = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0 and "clean" in finished.stdout, finished.stderr[-2000:]


# ------------------------------------------------------------------------------------------------ BrowserGym's observation, faster


def browsergym_axtree_txt(page) -> str:
    """BrowserGym's own observation pipeline on ``page``: its marking (with the visibility wait), its merged tree
    read through fresh DevTools sessions, its flattening, its unmarking."""
    from browsergym.core.observation import _post_extract, _pre_extract, extract_merged_axtree
    from browsergym.utils.obs import flatten_axtree_to_str

    _pre_extract(page)
    try:
        return flatten_axtree_to_str(extract_merged_axtree(page))
    finally:
        _post_extract(page)


def test_the_faces_tree_is_browsergyms_tree_of_the_same_page_loaded_afresh(env):
    """The face marks the page without BrowserGym's visibility wait and reads the tree in one DevTools call: the
    observation after each click is what BrowserGym's own pipeline gives on a fresh tab that loads the same page."""
    from parlour.bridges.browser import marking_scripts

    mark, _ = marking_scripts()
    assert "await until(" not in mark and "browsergym_elem_counter" in mark, "BrowserGym's marking script changed"
    observation, _ = env.reset(seed=3)
    agent = make_scripted("expert", ENV_ID)
    agent.reset(seed=0)
    kinds, done = set(), False
    while not done:
        kinds.add(env.match.game.page)
        fresh = env._context.new_page()
        try:
            fresh.goto(f"{env.origin}/")
            assert observation["axtree_txt"] == browsergym_axtree_txt(fresh), env.match.game.page
        finally:
            fresh.close()
        # Clicks only: a fill leaves the box focused and filled, which a fresh tab's page is not.
        move = agent.act(env.match.agent_observation("player_0"))
        for action in env.browser_actions(move):
            observation, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
    assert {"search", "results", "item"} <= kinds


def test_each_page_is_drawn_once_and_each_form_sent_once(env):
    """Chromium asks for /favicon.ico on every page: answered 404 at once, not sent to the page (a second drawing of
    the page, under the face's lock, while Chromium loads the first). A page replaced in place brings its script
    along inert: the form's listener is not added twice."""
    observation, _ = env.reset(seed=5)
    drawn, sent = [], []
    draw, post = env.page_html, env.post
    env.page_html = lambda: drawn.append(1) or draw()
    env.post = lambda token, fields: sent.append(fields) or post(token, fields)
    try:
        box = bid_of(observation, "textbox", "Search the catalogue")
        env.step(f"fill('{box}', 'shampoo')")
        observation, *_ = env.step(f"press('{box}', 'Enter')")
        env.step("go_back()")
        env.step(f"click('{bid_of(observation, 'button', 'back to search')}')")
    finally:
        del env.page_html, env.post
    assert len(drawn) == 3 and sent == [{"q": ["shampoo"]}, {"click": ["back to search"]}], (drawn, sent)
    with pytest.raises(urllib.error.HTTPError, match="404"):
        urllib.request.urlopen(f"{env.origin}/favicon.ico", timeout=5)


def test_going_back_and_forward_show_the_match_as_it_stands_as_a_fresh_tab_loads_it(env):
    """A form's answer replaces the page in place, with a history entry as a navigation makes; going back or forward
    shows the page of the match as it stands, afresh (the box empty, bids from 0), as loading it did, and plays
    nothing; going back from the first page goes nowhere."""

    def fresh_tree() -> str:
        fresh = env._context.new_page()
        try:
            fresh.goto(f"{env.origin}/")
            return browsergym_axtree_txt(fresh)
        finally:
            fresh.close()

    observation, _ = env.reset(seed=5)
    box = bid_of(observation, "textbox", "Search the catalogue")
    env.step(f"fill('{box}', 'shampoo')")
    results, *_ = env.step(f"press('{box}', 'Enter')")
    searched, *_ = env.step(f"click('{bid_of(results, 'button', 'back to search')}')")
    observation, *_ = env.step(f"fill('{bid_of(searched, 'textbox', 'Search the catalogue')}', 'zqbox')")
    assert "zqbox" in observation["axtree_txt"] and env._page.evaluate("history.length") == 3
    for action in ("go_back()", "go_back()", "go_forward()", "go_back()", "go_back()"):
        observation, reward, _, _, info = env.step(action)
        assert info["game_action"] is None and reward == 0.0 and env.match.game.page == "search"
        assert observation["axtree_txt"] == searched["axtree_txt"] == fresh_tree(), action
        assert "zqbox" not in observation["axtree_txt"] and observation["url"] == f"{env.origin}/"
    assert env._page.evaluate("history.length") == 3 and [step["move"] for step in env.record()["steps"]] == [
        "search[shampoo]",
        "click[back to search]",
    ]
