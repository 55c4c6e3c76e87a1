"""Views that share the game's read-only histories (issue 21): same content, no aliasing, snapshots intact."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from parlour.envs.core.frozen import FrozenDict, freeze
from parlour.envs.core.match import Match
from parlour.envs.registry import game_class


def mafia(match: Match, player: str, index: int) -> str:
    """A legal Mafia move from the view: the first night target, a speech, or a vote for the first other living player."""
    view = match.game.view(player)
    if view["phase"] == "night":
        verb = {"mafia": "kill", "detective": "check", "doctor": "protect"}[view["role"]]
        return f"{verb} {view['night_targets'][0]}" + (" [say] this one" if view["role"] == "mafia" else "")
    if view["phase"] == "discussion":
        return f"[say] speech {index}"
    return "vote " + next(p for p in view["alive"] if p != player)


def hanabi(match: Match, player: str, index: int) -> str:
    """Hints, and a discard every third move once one is allowed (a token is spent), so both the log and the discards
    grow without losing a life."""
    moves = match.legal_moves(player)
    discards = [m for m in moves if m.startswith("discard")]
    hints = [m for m in moves if m.startswith("hint")]
    return discards[0] if discards and (index % 3 == 2 or not hints) else hints[0]


def debate(match: Match, player: str, index: int) -> str:
    """Speeches quoting facts (one of them twice), then a verdict."""
    return "[verdict] A" if player == "judge" else f"See [fact {index % 3 + 1}] and [fact 1], again [fact 1]."


#: Per game: options and the texts its players send in turn (every acting player answers from the list in order),
#: or a policy ``(match, player, index) -> text`` where the right text depends on the state.
SCRIPTS = {
    "parlour/IteratedPrisonersDilemma-v0": ({"rounds": 5, "communication": True}, ["hi", "hello", "cooperate", "defect"] * 3),
    "parlour/Bargaining-v0": ({"deadline": 12}, ["Mine. [propose] 0, 0, 0", "No. [pass]", "Take it. [propose] 0, 0, 0", "[pass]"] * 2),
    "parlour/PriceNegotiation-v0": (
        {"deadline": 12, "critic": True},
        ["[offer] 190", "Too much. [offer] 20", "be firm", "[offer] 180", "[pass]", "hold"] * 2,
    ),
    "parlour/ResourceTrade-v0": (
        {"deadline": 12},
        ["[offer] I give 1 wheat; you give 1 ore", "[deny]", "[offer] I give 1 wood; you give 1 brick", "[pass]"] * 2,
    ),
    "parlour/Ultimatum-v0": ({"rounds": 6}, ["Fair? [offer] 4", "[reject]", "[offer] 5", "[accept]"] * 3),
    "parlour/GraphCoordination-v0": ({"num_players": 4, "rounds": 3}, ["[all] group 1 here"] * 12),
    "parlour/ColonelBlotto-v0": ({"rounds": 6}, ["10 0 0", "3 3 4", "2 4 4", "5 5 0"] * 3),
    "parlour/Mafia-v0": ({}, mafia),
    "parlour/Debate-v0": ({"rounds": 5}, debate),
    "parlour/SplitMaze-v0": ({"mode": "pair"}, ["Try east? [step] stay", "Wait. [step] stay", "[step] stay", "Stay put [step] stay"] * 3),
    "parlour/Hanabi-v0": ({}, hanabi),
    "parlour/AskOrSearch-v0": (
        {"world_seed": 3, "world_size": 600},
        [
            "<search>city</search>",
            "<ask>What do you know?</ask>",
            "Little.",
            "<search>river</search>",
            "<ask>And rivers?</ask>",
            "None.",
            "<search>author</search>",
            "<ask>Any name?</ask>",
        ],
    ),
}

#: The keys of each game's view that hold a history shared with the game.
HISTORIES = {
    "parlour/IteratedPrisonersDilemma-v0": ["history", "messages_received"],
    "parlour/Bargaining-v0": ["proposals"],
    "parlour/PriceNegotiation-v0": ["offers"],
    "parlour/ResourceTrade-v0": ["history"],
    "parlour/Ultimatum-v0": ["history"],
    "parlour/GraphCoordination-v0": ["received", "sent"],
    "parlour/ColonelBlotto-v0": ["history"],
    "parlour/Mafia-v0": ["talk"],
    "parlour/Debate-v0": ["transcript", "facts"],
    "parlour/SplitMaze-v0": ["heard"],
    "parlour/Hanabi-v0": ["log", "discards"],
    "parlour/AskOrSearch-v0": ["dialogue", "calls", "retrieved"],
}


def action(env_id: str, match: Match, player: str, index: int) -> str:
    """The text ``player`` sends as the ``index``-th action of ``env_id``'s script."""
    script = SCRIPTS[env_id][1]
    return script(match, player, index) if callable(script) else script[index]


def go_on(env_id: str, match: Match, start: int, stop: int) -> list[str]:
    """Play the script's actions ``start`` to ``stop`` while the match lasts; the players who acted."""
    acted = []
    for index in range(start, stop):
        if match.over:
            break
        player = match.acting()[0]
        match.submit(player, action(env_id, match, player, index))
        assert match.steps[-1]["error"] is None, match.steps[-1]["error"]
        acted.append(player)
    return acted


def play(env_id: str, moves: int) -> Match:
    """A seeded match of ``env_id`` after ``moves`` scripted actions."""
    match = Match(game_class(env_id), SCRIPTS[env_id][0])
    match.reset(seed=3)
    go_on(env_id, match, 0, moves)
    assert not match.over
    return match


def plain(value):
    """``value`` through JSON: lists and dicts only, nothing shared with the game."""
    return json.loads(json.dumps(value))


def test_a_frozen_dict_refuses_every_change_and_stays_a_json_dict():
    entry = freeze({"player": "player_0", "keep": [1, 2], "to": {"a": "b"}})
    assert entry == {"player": "player_0", "keep": (1, 2), "to": {"a": "b"}} and isinstance(entry["to"], FrozenDict)
    changes = [
        lambda: entry.__setitem__("player", "x"),
        lambda: entry.__delitem__("player"),
        lambda: entry.update(player="x"),
        lambda: entry.setdefault("new", 1),
        lambda: entry.pop("player"),
        lambda: entry.popitem(),
        lambda: entry.clear(),
        lambda: entry["to"].__setitem__("a", "c"),
    ]
    for change in changes:
        with pytest.raises(TypeError, match="read-only"):
            change()
    with pytest.raises(TypeError):
        entry |= {"new": 1}
    assert entry == {"player": "player_0", "keep": (1, 2), "to": {"a": "b"}}
    assert json.loads(json.dumps(entry)) == {"player": "player_0", "keep": [1, 2], "to": {"a": "b"}}
    for twin in (pickle.loads(pickle.dumps(entry)), copy.deepcopy(entry), copy.copy(entry)):
        assert twin == entry and type(twin) is FrozenDict and type(twin["to"]) is FrozenDict
    mutable = dict(entry)
    mutable["player"] = "player_1"
    assert entry["player"] == "player_0"


@pytest.mark.parametrize("env_id", sorted(SCRIPTS))
def test_a_view_cannot_change_the_game_and_later_play_cannot_change_an_earlier_view(env_id):
    match = play(env_id, 4)
    player = match.players[0]
    view = match.agent_observation(player)["view"]
    before, game_view = plain(view), plain(match.game.view(player))
    for key in HISTORIES[env_id]:
        history = view[key]
        assert isinstance(history, tuple) and len(history) > 0, key
        with pytest.raises((TypeError, AttributeError)):
            history.append(history[0])
        for entry in history:
            if isinstance(entry, dict):
                with pytest.raises(TypeError):
                    entry[next(iter(entry))] = "changed"
    # Replacing a whole history in the view only changes that view.
    view[HISTORIES[env_id][0]] = ()
    assert plain(match.game.view(player)) == game_view
    # The game goes on: the histories it shares grow, the view taken before does not.
    go_on(env_id, match, 4, 8)
    view[HISTORIES[env_id][0]] = before[HISTORIES[env_id][0]]
    assert plain(view) == before
    assert any(len(match.game.view(player)[key]) > len(before[key]) for key in HISTORIES[env_id])


def test_views_hold_what_they_held_before_for_known_positions():
    ipd = play("parlour/IteratedPrisonersDilemma-v0", 8).game.view("player_1")
    assert ipd["history"] == ({"you": "defect", "opponent": "cooperate"}, {"you": "defect", "opponent": "cooperate"})
    assert ipd["messages_received"] == ("hi", "hi")
    bargaining = play("parlour/Bargaining-v0", 3).game.view("player_1")
    assert bargaining["proposals"] == ({"player": "player_0", "keep": (0, 0, 0)}, {"player": "player_0", "keep": (0, 0, 0)})
    assert bargaining["standing"] == {"player": "player_0", "keep": (0, 0, 0)}
    price = play("parlour/PriceNegotiation-v0", 4)
    assert price.game.view("buyer")["offers"] == (
        {"player": "seller", "price": 190},
        {"player": "buyer", "price": 20},
        {"player": "seller", "price": 180},
    )
    assert price.game.view("buyer")["standing"] == {"player": "seller", "price": 180}
    assert len(price.game.view("critic")["dialogue"]) == 4
    trade = play("parlour/ResourceTrade-v0", 3).game.view("player_0")
    assert [(e["turn"], e["player"], e["type"]) for e in trade["history"]] == [
        (0, "player_0", "offer"),
        (1, "player_1", "deny"),
        (2, "player_0", "offer"),
    ]
    assert trade["standing_offer"]["from"] == "player_0" and trade["standing_offer"]["to"] == "player_1"
    ultimatum = play("parlour/Ultimatum-v0", 4).game.view("responder")
    assert ultimatum["history"] == ({"proposer": "proposer", "offer": 4, "accepted": False}, {"proposer": "proposer", "offer": 5, "accepted": True})
    graph = play("parlour/GraphCoordination-v0", 4).game
    view = graph.view("player_0")
    assert view["sent"] == ({"round": 1, "to": {n: "group 1 here" for n in graph.neighbours("player_0")}},)
    assert sorted(m["from"] for m in view["received"]) == sorted(graph.neighbours("player_0"))
    assert all(m == {"round": 1, "from": m["from"], "text": "group 1 here"} for m in view["received"])


@pytest.mark.parametrize("env_id", sorted(SCRIPTS))
def test_restore_brings_back_the_views_and_the_same_play_gives_the_same_views(env_id):
    match = play(env_id, 3)
    snapshot = match.snapshot()
    views = {player: plain(match.game.view(player)) for player in match.players}

    def views_after_each_move() -> list:
        seen = []
        for index in range(3, 8):
            for player in go_on(env_id, match, index, index + 1):
                seen.append(plain(match.agent_observation(player)["view"]))
        return seen

    first = views_after_each_move()
    match.restore(snapshot)
    assert {player: plain(match.game.view(player)) for player in match.players} == views
    assert views_after_each_move() == first
