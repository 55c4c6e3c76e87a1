"""The floor of a Python PettingZoo AEC loop: hand-written minimal TicTacToe and Kuhn poker beside parlour's and TextArena's.

Each minimal environment does only what the text-mode benchmark asks of every
library, and nothing more: strings for the state and the messages, a text
observation (its inbox, then the state and the legal moves when it is to act;
no action mask, as parlour's text mode builds none), ``infos`` with the legal
moves, and PettingZoo's bookkeeping. No record, no typed messages, no
invalid-action policy, no outcome. What it reaches against raw TextArena is
about the most a Python AEC loop can reach. TicTacToe's episodes are long (up
to nine moves); Kuhn poker's are two or three moves, so there PettingZoo's
per-episode protocol weighs most (``reset``, a deal drawn from the seed, and
the closing ``step(None)`` of every agent after the end, which TextArena has
no counterpart of): its floor bounds what any AEC face can reach on short
games. parlour's text mode is measured beside it, interleaved in the same
rounds and by the same unit (moves, closing steps not counted), all three
replaying the same episodes (``env_throughput.shared_scripts``), with the
loops of ``env_throughput.py``; ``text/minimal`` is the share of the floor
parlour reaches.

Run: ``.venv/bin/python benchmarks/aec_floor.py [--rounds 3] [--seconds 0.4]``.
"""

from __future__ import annotations

import argparse
import random

from env_throughput import TARGETS, Loop, Script, measure, parlour_text_loop, report_ratio, shared_scripts, text_replay_loop, textarena_loop
from pettingzoo import AECEnv

#: The eight lines of the board.
LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
#: A rules text as long as the one parlour shows first.
RULES = "Rules of tic-tac-toe. " * 20


class MinimalTwoPlayer(AECEnv):
    """PettingZoo's bookkeeping for two players taking turns, as lean as it gets: what both minimal games share.

    A game gives ``reset`` (calling :meth:`_start`, then :meth:`_select`), ``_legal()`` (the mover's moves),
    ``_prompt()`` (what the mover is shown after its inbox) and ``_play(agent, action)`` (the rules of a move).
    """

    metadata: dict = {}

    def __init__(self):
        super().__init__()
        self.possible_agents = ["player_0", "player_1"]

    def _start(self):
        """Both players in, nothing paid, nobody done, ``player_0`` to move."""
        self.agents = list(self.possible_agents)
        self.turn = 0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)

    def _select(self):
        """Select the player to move; ``infos`` give it its legal moves and the other player none."""
        mover = self.possible_agents[self.turn]
        legal = self._legal()
        self.infos = {agent: {"acting": agent == mover, "legal_moves": legal if agent == mover else []} for agent in self.agents}
        self.agent_selection = mover

    def observe(self, agent):
        """The inbox, then the prompt for the player to move."""
        messages = self.inbox[agent]
        if agent == self.possible_agents[self.turn] and not self.terminations[agent]:
            messages = [*messages, self._prompt()]
        return {"text": "\n\n".join(messages)}

    def step(self, action):
        """A dead agent's closing step, or the mover's move: its inbox read, the move played, the turn passed."""
        agent = self.agent_selection
        if self.terminations[agent]:
            self._was_dead_step(action)
            return
        if action not in self._legal():
            raise ValueError(f"illegal move {action!r}")
        self.inbox[agent] = []
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._play(agent, action)
        self.turn = 1 - self.turn
        self._select()

    def _end(self, message):
        """Terminate both players, telling them ``message``."""
        for other in self.agents:
            self.terminations[other] = True
            self.inbox[other].append(message)


class MinimalTicTacToe(MinimalTwoPlayer):
    """TicTacToe written straight onto PettingZoo's AEC API, as lean as a text environment gets."""

    def reset(self, seed=None, options=None):
        """An empty board; both players get the rules."""
        self._start()
        self.board = [" "] * 9
        self.inbox = {agent: [RULES] for agent in self.agents}
        self.legal = [str(cell) for cell in range(9)]
        self._select()

    def _legal(self):
        return self.legal

    def _prompt(self):
        return f"Board:\n{' | '.join(self.board)}\nEmpty cells: {', '.join(self.legal)}"

    def _play(self, agent, action):
        """Place the mark; on a line or a full board every player is terminated."""
        cell = int(action)
        board = self.board
        board[cell] = "XO"[self.turn]
        for other in self.agents:
            self.inbox[other].append(f"{agent} plays {cell}")
        self.legal = [str(c) for c in range(9) if board[c] == " "]
        if any(board[a] != " " and board[a] == board[b] == board[c] for a, b, c in LINES) or not self.legal:
            self._end("Game over.")


class MinimalKuhnPoker(MinimalTwoPlayer):
    """Kuhn poker written straight onto PettingZoo's AEC API: one hand, a seeded deal, the pot to the higher card."""

    CARDS = "JQK"

    def reset(self, seed=None, options=None):
        """Deal a card to each player from the seed; both get the rules and their own card."""
        self._start()
        deck = list(self.CARDS)
        random.Random(seed).shuffle(deck)
        self.cards = deck[:2]
        self.history = []
        self.pot = [1, 1]
        self.inbox = {agent: [RULES, f"Your card is {card}."] for agent, card in zip(self.agents, self.cards)}
        self._select()

    def _legal(self):
        return ["fold", "call"] if "bet" in self.history else ["check", "bet"]

    def _prompt(self):
        return f"Your card: {self.cards[self.turn]}. Pot: {sum(self.pot)}. Legal moves: {', '.join(self._legal())}."

    def _play(self, agent, action):
        """Check, bet, call or fold; a fold, a call or a second check ends the hand and pays the pot."""
        self.history.append(action)
        if action in ("bet", "call"):
            self.pot[self.turn] += 1
        for other in self.agents:
            self.inbox[other].append(f"{agent}: {action}")
        if action in ("fold", "call") or self.history == ["check", "check"]:
            winner = 1 - self.turn if action == "fold" else max(range(2), key=lambda seat: self.CARDS.index(self.cards[seat]))
            won = self.pot[1 - winner]
            self.rewards = {self.agents[winner]: float(won), self.agents[1 - winner]: -float(won)}
            self._accumulate_rewards()
            self._end(f"Game over: {self.agents[winner]} wins {won}.")


#: The minimal environment of each game measured here.
MINIMAL = {"TicTacToe": MinimalTicTacToe, "KuhnPoker": MinimalKuhnPoker}


def minimal_loop(name: str, script: Script) -> Loop:
    """The minimal environment replaying TextArena's side of ``script`` (its moves ``[cell]``, ``[bet]``), the observation's text read every move."""
    return text_replay_loop(MINIMAL[name](), [[move.strip("[]") for move in episode] for episode in script])


def main() -> None:
    """Measure the three loops interleaved and print each ratio to TextArena beside the text-mode target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=0.4)
    args = parser.parse_args()
    print(f"moves per CPU second, median of {args.rounds} interleaved rounds of {args.seconds:g}s each")
    for name in MINIMAL:
        mine, theirs = shared_scripts(name)
        loops = {
            "minimal": minimal_loop(name, theirs),
            "text": parlour_text_loop(name, mine),
            "TextArena": textarena_loop(name, theirs, wrapped=False),
        }
        rates = measure(loops, args.rounds, args.seconds)
        print(f"{name}:")
        for library in ("minimal", "text"):
            report_ratio(library, "TextArena", rates, TARGETS[("text", "TextArena raw")])
        report_ratio("text", "minimal", rates, None)


if __name__ == "__main__":
    main()
