"""The leaderboard: the evaluation runner (``runner``), result bundles (``results``), and the store, ratings, server and web page."""
