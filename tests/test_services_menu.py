"""The Services menu (issue 34): an honest, enumerable action set that an agent builds from what it was shown.

:func:`parlour.baselines.services.candidate_calls` reads the request, the tools offered and the tool results, never
the view's task handle nor the goal. These tests check that it is a function of the observation, that every call in
it is well formed, that it stays bounded, and how much of the world it reaches: a privileged oracle that may only
pick from the menu (the expert's plan when its calls are there, the lookups the menu offers otherwise) measures the
ceiling of any policy over it.
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from parlour.baselines.services import MENU_CAP, Call, Transcript, call, candidate_calls, literal_calls, plan, sightings
from parlour.envs.agentic.services import Services
from parlour.envs.agentic.services_world import Turn, answer_holds
from parlour.envs.core.match import Match

#: Tools that only read a service's state: the oracle's lookups (the test may know this; the menu does not).
LOOKUPS = frozenset(
    "list_dir read_file list_contacts list_inbox list_events list_accounts list_payees list_transactions list_tickets get_ticket".split()
)
#: Difficulty-1 episodes the ceiling is measured on, per split.
CEILING_EPISODES = 300
#: The least share of difficulty-1 tasks the menu oracle carries out, on either split (measured: see the test).
CEILING = 0.95


def started(seed: int, **options) -> Match:
    match = Match(Services, options)
    match.reset(seed)
    return match


def closing(turn: Turn, menu: list[Call]) -> Call | None:
    """The ``finish`` of ``menu`` that closes ``turn``: ``impossible`` for the impossible, an answer that states every
    value asked for, or the plain one."""
    if turn.impossible:
        return ("finish", {"impossible": True})
    if not turn.answers:
        return ("finish", {})
    return next(
        (
            (name, arguments)
            for name, arguments in menu
            if name == "finish" and all(answer_holds(arguments.get("answer", ""), kind, value) for kind, value in turn.answers)
        ),
        None,
    )


def oracle(match: Match) -> tuple[bool, bool]:
    """Plays a started difficulty-1 episode choosing only from the menu: the expert's plan, call by call, when the
    next call is in the menu; else the first lookup of the menu not yet made; then the ``finish`` that closes the turn.
    Returns whether every planned call was found in the menu, and whether the episode was won."""
    world = match.game.world
    turn = world.turns[0]
    # The expert turns a move into a write and a delete (its goal has the file at its new path); what the request
    # states in full, the literal agent's calls do as well, and those the menu has.
    pending = literal_calls(turn.instruction) or plan(world.initial, turn.goal)
    transcript, made = Transcript(), []
    while not match.over:
        transcript.read(match.agent_observation("player_0"))
        menu = transcript.menu()
        finish = closing(turn, menu)
        lookup = next((c for c in menu if c[0] in LOOKUPS and c not in made), None)
        if pending and pending[0] in menu:
            choice = pending.pop(0)
        elif not pending and finish is not None:
            choice = finish
        elif lookup is not None and transcript.calls_left > 0:
            choice = lookup
        else:
            choice = ("finish", {})
        made.append(choice)
        match.submit("player_0", call(choice[0], **choice[1]))
    return not pending, match.returns["player_0"] == 1.0


@pytest.mark.parametrize("split", ["train", "test"])
def test_the_expert_plan_is_in_the_menu_on_most_easiest_tasks(split):
    """The ceiling of a policy over the menu at difficulty 1: the share of tasks whose plan (and closing ``finish``)
    an agent picking only from the menu carries out. Measured on 300 episodes: 0.967 of the training split and 0.973
    of the test split; every task missed asks to move the part of a balance above an amount to keep, an amount no
    result shows (it takes arithmetic)."""
    results = [oracle(started(seed, difficulty=1, split=split)) for seed in range(CEILING_EPISODES)]
    planned = np.mean([found for found, _ in results])
    won = np.mean([won for _, won in results])
    print(f"{split}: plan in the menu {planned:.3f}, carried out {won:.3f}")
    assert won >= CEILING and planned >= CEILING


def test_the_menu_is_a_function_of_what_the_player_was_shown():
    """Two worlds whose first observations are the same but whose goals differ (another balance to tell, another
    state to leave unchanged) give the same menu; and the menu ignores the view (task handle, turn counters) entirely."""
    firsts: dict[tuple, Match] = {}
    pair = None
    for seed in range(400):
        match = started(seed, difficulty=1)
        observation = match.agent_observation("player_0")
        key = (observation["text"], json.dumps(observation["tools"]))
        turn, other = match.game.world.turns[0], firsts[key].game.world.turns[0] if key in firsts else None
        if other is not None and (other.goal, other.answers) != (turn.goal, turn.answers):
            pair = (firsts[key], match)
            break
        firsts.setdefault(key, match)
    assert pair is not None, "no two worlds of the first 400 seeds start with the same observation"
    menus = []
    for match in pair:
        transcript = Transcript()
        transcript.read(match.agent_observation("player_0"))
        menus.append(transcript.menu())
    assert menus[0] == menus[1] and len(menus[0]) > 2
    # The view is not read: an observation without it, or with another task's, gives the same menu.
    observation = pair[0].agent_observation("player_0")
    for view in ({}, {**observation["view"], "task_id": "t-0", "instruction": "Book me a flight."}):
        transcript = Transcript()
        transcript.read({**observation, "view": view})
        assert transcript.menu() == menus[0]


def test_the_menu_reads_results_and_joins_a_listing_to_its_folder():
    instruction = 'Delete every file in the folder /home/docs whose name ends with .txt (and nothing else). Pay "Ana Lopez" 12.50.'
    results = [
        json.dumps({"path": "/home/docs", "folders": [], "files": ["a.txt", "b.md"]}),
        json.dumps([{"name": "Ana Lopez", "account": "ACC-12345678"}]),
        json.dumps({"error": 'there is no file "/home/x.txt".'}),
    ]
    seen = sightings(instruction, results)
    assert [s.value for s in seen if s.from_request] == ["Ana Lopez", "/home/docs", 12.5]
    assert {"/home/docs/a.txt", "/home/docs/b.md", "ACC-12345678", 2} <= {s.value for s in seen}
    assert next(s for s in seen if s.value == "ACC-12345678").record == ("Ana Lopez",)
    tools = [{"type": "function", "function": {"name": name, "parameters": schema}} for name, schema in TOOLS.items()]
    menu = candidate_calls(instruction, tools, results)
    assert ("delete_file", {"path": "/home/docs/a.txt"}) in menu
    assert ("finish", {"answer": "2"}) in menu and ("finish", {"impossible": True}) in menu
    assert ("send_message", {"to": "ACC-12345678", "text": "Ana Lopez"}) in menu
    assert not any("/home/x.txt" in json.dumps(arguments) for _, arguments in menu), "a refusal's words are no values"
    # With no calls left, only finish is offered.
    assert {name for name, _ in candidate_calls(instruction, tools, results, calls_left=0)} == {"finish"}


#: Two tool schemas in the shapes Services offers (a path; a code and a text), for the direct test above.
TOOLS = {
    "delete_file": {"type": "object", "properties": {"path": {"type": "string", "minLength": 1}}, "required": ["path"]},
    "send_message": {"type": "object", "properties": {"to": {"type": "string"}, "text": {"type": "string"}}, "required": ["to", "text"]},
    "finish": {"type": "object", "properties": {"answer": {"type": "string"}, "impossible": {"type": "boolean"}}},
}


@pytest.mark.parametrize("difficulty", [1, 3, 5])
def test_every_menu_call_is_well_formed_and_the_menu_is_bounded(difficulty):
    """Uniform play over the menu never makes an invalid action (every call fits its schema) and no menu passes the
    cap; the same observations give the same menu."""
    rng = np.random.default_rng(difficulty)
    for seed in range(40):
        match = started(seed, difficulty=difficulty)
        transcript = Transcript()
        while not match.over:
            observation = match.agent_observation("player_0")
            assert observation["invalid_action"] is None, observation["invalid_action"]
            transcript.read(observation)
            menu = transcript.menu()
            assert 2 <= len(menu) <= MENU_CAP and menu == copy.deepcopy(transcript).menu()
            name, arguments = menu[int(rng.integers(len(menu)))]
            match.submit("player_0", call(name, **arguments))
        assert match.errors["player_0"] == 0
