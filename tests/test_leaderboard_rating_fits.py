"""The fast paths of the rating fits give what the plain methods give: a bootstrap stack solved by chord steps from
a start equals each sample fitted alone by Newton's method, and Nash averaging's entropy over the best responses is
the entropy over all agents."""

from __future__ import annotations

import numpy as np
import pytest

from parlour.leaderboard import ratings


@pytest.mark.parametrize("first_mover", [True, False])
def test_a_stack_fitted_from_a_start_equals_each_sample_fitted_alone(first_mover):
    rng = np.random.default_rng(0)
    k, samples = 7, 30
    games = rng.integers(0, 5, size=(samples, k, k)).astype(float)
    games[:, np.arange(k), np.arange(k)] = 0.0
    wins = rng.binomial(games.astype(np.int64), 0.6).astype(float)
    # A lopsided sample (every game won by the earlier seat) and a nearly empty one, far from the stack's mean.
    wins[0] = games[0]
    games[1] = np.where(rng.random((k, k)) < 0.1, 1.0, 0.0) * (1 - np.eye(k))
    wins[1] = games[1]
    theta, eta, _ = ratings.fit_bradley_terry(wins.mean(axis=0), games.mean(axis=0), first_mover)
    together, together_eta, _ = ratings.fit_bradley_terry(wins, games, first_mover, start=np.r_[theta, eta], covariance=False)
    for b in range(samples):
        alone, alone_eta, _ = ratings.fit_bradley_terry(wins[b], games[b], first_mover)
        assert np.allclose(together[b], alone, atol=1e-7) and np.isclose(together_eta[b], alone_eta, atol=1e-7)


def test_nash_averaging_spreads_mass_over_copies_of_an_agent():
    # Rock, paper, scissors with rock entered twice: the most entropic equilibrium splits rock's third between them.
    rps = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], dtype=float)
    doubled = rps[np.ix_([0, 0, 1, 2], [0, 0, 1, 2])]
    mass, against = ratings.nash_averaging(doubled)
    assert mass == pytest.approx([1 / 6, 1 / 6, 1 / 3, 1 / 3], abs=1e-5) and against == pytest.approx(np.zeros(4), abs=1e-6)
