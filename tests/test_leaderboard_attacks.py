"""Ways to climb the leaderboard (issue 22), each played as an attack that must fail."""

from __future__ import annotations

import hashlib

import pytest

from parlour.envs.core.match import Match
from parlour.envs.core.seeding import episode_seeds
from parlour.envs.registry import game_class
from parlour.evaluation.challenges import challenge_seed
from parlour.evaluation.runner import evaluate
from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.live import LiveHub
from parlour.leaderboard.verify import Rejected

KUHN = "parlour/KuhnPoker-v0"
LEDUC = "parlour/LeducHoldem-v0"
LIARS = "parlour/LiarsDice-v0"


class Resimulator:
    """Re-simulates Kuhn poker deals from every base seed it can derive from what its submitter knows.

    ``known`` are the strings the submitter holds (a challenge's nonce, a live
    match's id and commitment, ...); each gives candidate base seeds. In an
    episode, the first candidate whose rebuilt deal gives the agent the card
    it really holds is taken as the truth: the agent then bets or calls with
    the higher card and checks or folds with the lower. ``guesses`` keeps
    (episode, seat, the opponent's card it believed).
    """

    name = "resimulator"

    def __init__(self, known: list[str] | None = None, seeds: list[int] | None = None):
        self.candidates = list(seeds or [])
        for text in known or []:
            self.candidates += [challenge_seed(text), int(hashlib.sha256(text.encode()).hexdigest(), 16) % 2**63]
        self.guesses: list[tuple[int, int, str]] = []

    def __deepcopy__(self, memo):
        # The runner copies agents for every seat; this one keeps one tally across them.
        return self

    def act(self, observation):
        """Bet or call with the card it believes wins, check or fold otherwise."""
        episode, seat, mine = observation["episode"], observation["view"]["seat"], observation["view"]["card"]
        theirs = "Q" if mine != "Q" else "K"
        for base in self.candidates:
            match = Match(game_class(KUHN), {})
            match.reset(episode_seeds(base, episode, 2)[0])
            if match.game.cards[seat] == mine:
                theirs = match.game.cards[1 - seat]
                break
        self.guesses.append((episode, seat, theirs))
        legal = observation["legal_moves"]
        winning = "JQK".index(mine) > "JQK".index(theirs)
        return ("bet" if "bet" in legal else "call") if winning else ("check" if "check" in legal else "fold")


def right_guesses(guesses: list[tuple[int, int, str]], base_seed: int) -> float:
    """The share of ``guesses`` that name the opponent's real card in the run of ``base_seed``."""
    right = 0
    for episode, seat, theirs in guesses:
        match = Match(game_class(KUHN), {})
        match.reset(episode_seeds(base_seed, episode, 2)[0])
        right += match.game.cards[1 - seat] == theirs
    return right / len(guesses)


@pytest.fixture
def board(tmp_path):
    """A leaderboard with the submitter alice."""
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db", bootstrap=10, min_challenge_episodes=4)
    board.add_submitter("alice")
    yield board
    board.store.close()


def test_the_resimulation_attack_works_wherever_the_agent_knows_the_seed():
    # The attack is real: with the run's seed, every deal is known, and nash (whose game value is -1/18 for either side) is beaten.
    cheat = Resimulator(seeds=[7])
    results = evaluate(KUHN, [cheat, "nash"], episodes=200, seed=7, progress=False)
    assert right_guesses(cheat.guesses, 7) == 1.0
    mine = [r["returns"][seat] for r in results.records for seat, name in r["agents"].items() if name == "resimulator"]
    assert sum(mine) / len(mine) > 0


@pytest.mark.parametrize(("env_id", "opponent"), [(KUHN, "nash"), (LEDUC, "heuristic"), (LIARS, "probabilistic")])
def test_no_challenge_is_issued_for_an_agent_that_would_know_the_nonce(board, env_id, opponent):
    # A challenge is played on the submitter's machine from its nonce: an own agent there could re-simulate everything.
    with pytest.raises(Rejected, match="built-in agents only.*parlour connect"):
        board.issue_challenge("alice", env_id, ["resimulator", opponent], 8)
    # Anchor runs, whose every move the server re-derives, are still issued.
    assert board.issue_challenge("alice", env_id, [opponent, "random"], 8)["env_id"] == env_id


def test_in_a_live_match_an_agent_knowing_all_its_submitter_knows_cannot_predict_the_deal(board):
    hub = LiveHub(board, episodes=100)
    created = hub.create("alice", KUHN, "resimulator", "nash")
    # Everything the submitter is told before and during play; the agent is handed all of it.
    cheat = Resimulator(known=[str(value) for value in created.values()] + [created["match"]])
    live = hub.get(created["match"], "alice")
    while (turn := hub.turn(live, wait=10.0))["status"] == "act":
        hub.act(live, turn["turn"], cheat.act(turn["observation"]))
    assert turn["status"] == "done" and turn["episodes"] == 100
    # The revealed secret is the one committed to, and it alone fixes the deals: knowing it would have been enough...
    assert hashlib.sha256(turn["secret"].encode()).hexdigest() == created["commitment"]
    assert right_guesses(cheat.guesses, challenge_seed(turn["secret"])) < 0.7
    # ...but during play the agent guessed the opponent's card at chance (one of the two cards it does not hold).
    stored = board.store.submission(turn["submission"])
    assert stored["source"] == "live" and stored["summary"]["commitment"] == created["commitment"]
    assert stored["summary"]["secret"] == turn["secret"]
