"""Challenges on the submitter's side: ask a leaderboard for one, and derive the run's seed from it.

A challenge is the server's answer to "I want to evaluate these agents on
this environment": a single-use id, the episode count, and a fresh nonce from
which the run's base seed derives (:func:`challenge_seed`), so the submitter
cannot pick the seed, play several and keep the best, or send part of a run::

    results = parlour.evaluate("parlour/KuhnPoker-v0", [my_agent, "nash"],
                               challenge="https://board.example.org")   # token from $PARLOUR_TOKEN
    # then: parlour submit <bundle> --server https://board.example.org

``parlour eval ENV --agent SPEC --challenge URL`` does the same from the
command line. The server accepts the bundle once, only complete, only before
the challenge expires, and only from the submitter it was issued to, and it
holds one open challenge per submitter and environment.

A challenge's run is played here, on the submitter's machine, so everything
random in it (the deals, the seeded opponents) follows from the nonce the
submitter holds. The leaderboard therefore issues challenges only for runs of
its built-in agents (anchor runs, whose every move it re-derives on replay);
a submitter's own agent is counted in a live match
(:func:`parlour.leaderboard.live.connect`), where the server keeps the seeds
secret until the match is over.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

#: The fields every challenge carries.
CHALLENGE_FIELDS = ("id", "env_id", "agents", "episodes", "nonce")


def challenge_seed(nonce: str) -> int:
    """The base seed of a challenge's run, derived from its nonce (below 2**63, as run seeds are)."""
    return int.from_bytes(hashlib.sha256(nonce.encode()).digest()[:8], "big") >> 1


def challenges_url(server: str) -> str:
    """The challenge endpoint of a leaderboard given by its base URL (or by the endpoint itself)."""
    server = server.rstrip("/")
    return server if server.endswith("/api/challenges") else server + "/api/challenges"


def request_challenge(
    server: str,
    env_id: str,
    agents: list[str],
    episodes: int | None = None,
    lineup: list[int] | None = None,
    rotate_seats: bool = True,
    token: str | None = None,
    timeout: float = 60.0,
) -> dict[str, Any]:
    """Ask the leaderboard at ``server`` for a challenge for ``agents`` on ``env_id`` (token: ``token`` or ``$PARLOUR_TOKEN``).

    ``episodes`` is a wish: the server answers with the count it requires.
    ``lineup`` (agent number per seat) and ``rotate_seats`` fix the seating,
    as :func:`parlour.evaluate` plays it.
    Raises ``ValueError`` with the server's reason when it refuses.
    """
    import httpx

    token = token or os.environ.get("PARLOUR_TOKEN")
    if not token:
        raise ValueError("set PARLOUR_TOKEN to your submitter token (from `parlour leaderboard add-submitter`) to ask for a challenge")
    url = challenges_url(server)
    body: dict[str, Any] = {"env_id": env_id, "agents": list(agents), "lineup": lineup, "rotate_seats": rotate_seats}
    if episodes is not None:
        body["episodes"] = episodes
    try:
        response = httpx.post(url, json=body, headers={"Authorization": f"Bearer {token}"}, timeout=timeout)
    except httpx.HTTPError as error:
        raise ConnectionError(f"cannot reach the leaderboard at {url}: {error}") from None
    try:
        answer = response.json()
    except ValueError:
        answer = {"detail": response.text[:300]}
    if not response.is_success:
        raise ValueError(f"the leaderboard refused a challenge ({response.status_code}): {answer.get('detail', answer)}")
    return check_challenge(answer)


def check_challenge(challenge: Any) -> dict[str, Any]:
    """``challenge`` if it has every field of a challenge; ``ValueError`` naming the missing ones otherwise."""
    if not isinstance(challenge, dict):
        raise ValueError(f"a challenge is a dict as the server issued it, got {type(challenge).__name__}")
    missing = [key for key in CHALLENGE_FIELDS if key not in challenge]
    if missing:
        raise ValueError(f"the challenge lacks {', '.join(missing)}; pass the dict the server issued, or its URL")
    return challenge


def resolve_challenge(challenge: Any, env_id: str, agents: list[str], episodes: int | None, lineup: list[int], rotate_seats: bool) -> dict[str, Any]:
    """The challenge for a run of ``agents`` on ``env_id``: ``challenge`` itself if a dict, else one asked of the server at that URL."""
    if isinstance(challenge, str):
        issued = request_challenge(challenge, env_id, agents, episodes, list(lineup), rotate_seats)
    else:
        issued = check_challenge(challenge)
    if issued["env_id"] != env_id:
        raise ValueError(f"the challenge is for {issued['env_id']}, not {env_id}")
    if list(issued["agents"]) != list(agents):
        raise ValueError(f"the challenge is for the agents {issued['agents']}, this run has {agents}")
    if list(issued.get("lineup") or lineup) != list(lineup) or bool(issued.get("rotate_seats", True)) != rotate_seats:
        raise ValueError(f"the challenge seats the agents as {issued.get('lineup')} (rotated: {issued.get('rotate_seats')}); play it so")
    return issued
