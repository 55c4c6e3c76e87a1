"""The cross-check of a turn-based parlour game against its OpenSpiel twin on seeded random play, shared by the game tests.

:func:`turn_based_disagreements` is the loop the game tests used to copy: it plays ``episodes`` matches (match
``episode`` reset with ``seed + episode``) side by side with OpenSpiel, each move drawn uniformly from the parlour
game's legal actions by one generator (seeded ``seed`` unless the caller passes its own) and sent as its index on odd
episodes and as its name on even ones. Each step compares the seat to move, the legal actions (mapped to OpenSpiel's
action numbers), optionally their names, and whatever the game's ``observations`` check compares (observation
tensors, information states, move names); after the move it compares whether the game is over, and each episode's
end compares the returns. What differs between games comes in as arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from parlour.envs.core.game import Game
from parlour.envs.core.match import Match


def same_action(game: Game, seat: int, action: int) -> int:
    """OpenSpiel's action number of parlour's ``Discrete`` action ``action``, for games that number moves alike."""
    return action


def turn_based_disagreements(
    episodes: int,
    seed: int,
    game_class: type[Game],
    options: Mapping[str, Any],
    spiel_name: str,
    spiel_params: Mapping[str, Any],
    observations: Callable[[Match, Any, int], bool] | None = None,
    to_spiel: Callable[[Game, int, int], int] = same_action,
    names: bool = False,
    chance_outcome: Callable[[Game], int] | None = None,
    rng: np.random.Generator | None = None,
) -> tuple[int, int]:
    """(episodes, episodes where any step differs from OpenSpiel's ``spiel_name``) on uniformly random play.

    ``game_class(**options)`` is played against ``pyspiel.load_game(spiel_name, spiel_params)``.
    ``observations(match, state, seat)``, when given, says whether both sides' observations agree before the move of the
    player in ``seat``; ``to_spiel(game, seat, action)`` is OpenSpiel's number for parlour's action in the position it
    is chosen in; with ``names`` each legal action's parlour move name must equal OpenSpiel's ``action_to_string``;
    ``chance_outcome(game)``, when given, is the outcome fed to a chance node that follows a move (the chance parlour
    drew). ``rng``, when given, draws the moves instead of a generator seeded ``seed``, so that the calls for several
    board sizes can go on drawing from one stream.
    """
    import pyspiel

    spiel_game = pyspiel.load_game(spiel_name, dict(spiel_params))
    rng = np.random.default_rng(seed) if rng is None else rng
    mismatches = 0
    for episode in range(episodes):
        match = Match(game_class, options)
        match.reset(seed + episode)
        game, state = match.game, spiel_game.new_initial_state()
        agrees = True
        while agrees and not match.over:
            (player,) = match.acting()
            seat = match.players.index(player)
            agrees &= seat == state.current_player()
            legal = game.legal_actions(player)
            agrees &= [to_spiel(game, seat, a) for a in legal] == state.legal_actions()
            if names:
                agrees &= [game.moves[a] for a in legal] == [state.action_to_string(seat, to_spiel(game, seat, a)) for a in legal]
            if observations is not None:
                agrees &= observations(match, state, seat)
            if not agrees:
                break  # the move drawn next may be illegal to OpenSpiel, which would raise instead of counting
            action = int(rng.choice(legal))
            spiel_action = to_spiel(game, seat, action)  # before the move changes the position
            match.submit(player, action if episode % 2 else game.moves[action])
            state.apply_action(spiel_action)
            if chance_outcome is not None and state.is_chance_node():
                state.apply_action(chance_outcome(game))
            agrees &= match.over == state.is_terminal()
        agrees &= [match.returns[p] for p in match.players] == state.returns()
        mismatches += not agrees
    return episodes, mismatches
