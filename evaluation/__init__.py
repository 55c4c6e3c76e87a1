"""parlour.evaluation: play agents against each other and summarise what happened.

The layer between the agents and everything that consumes results (the
leaderboard, the trainers, the command line):

* :mod:`~parlour.evaluation.rollout`: the episode engine for many episodes at
  once (batched agent calls, local workers, Ray);
* :mod:`~parlour.evaluation.runner`: :func:`evaluate`, seats, rotation, resume,
  challenges, and the bundle it writes;
* :mod:`~parlour.evaluation.results`: :class:`Results`, the statistics and
  intervals of a run, and the bundle's files;
* :mod:`~parlour.evaluation.challenges`: the submitter's side of server-issued
  challenges (the run's seed comes from the server's nonce);
* :mod:`~parlour.evaluation.seating`: who sits where when the built-in agents
  play an environment (the demo's and the leaderboard seed's line-ups), and a
  seat's role.

It imports the environments and agents below it and nothing of the
leaderboard above it.
"""

from parlour.evaluation.results import Results
from parlour.evaluation.runner import evaluate

__all__ = ["Results", "evaluate"]
