"""The Resistance: Avalon for 5 players: good against evil, team proposals, votes, quests and the assassination.

Players ``player_0`` .. ``player_4``. Roles are dealt at random: good has
``merlin`` and two ``servant`` s (loyal servants of Arthur), evil the
``assassin`` and a ``minion``. The evil players know each other; Merlin
knows who is evil (not which evil role); the servants know only themselves.

Five quests, of 2, 3, 2, 3 and 3 players. For each:

* the leader (the first drawn at random, then passing up the seats) proposes a
  team of the quest's size, ``propose player_1 player_3`` (itself allowed),
  and may add ``[say] message`` after it, heard by everyone;
* everyone votes at once, ``approve`` or ``reject``; the votes are shown. A
  majority (3 of 5) sends the team; otherwise the next leader proposes. The
  fifth rejected proposal in a row for one quest makes evil win;
* the team's members play at once ``success`` or ``fail`` (good players may
  only play ``success``); one fail fails the quest. Everyone learns how many
  fails were played, never by whom.

Three failed quests win for evil. After three successful quests the assassin
names one good player, ``assassinate player_2``: Merlin named wins for evil,
anyone else for good.

Rewards (team game, ``zero_sum = False``: three good players and two evil):
+1 to every player of the winning team and -1 to every player of the losing
team. A player who exceeds the invalid-action allowance loses the game for
its team.

Outcome: ``teams`` (``good``, ``evil``) and the ``winning_team``; details: the
``roles``, ``quests`` (each quest's team, fails and result), ``proposals``
(how many were made), ``assassinated`` (the assassin's pick or ``None``) and
``merlin``.

Vector mode: the action is an index into :attr:`Avalon.moves` (every team of
2 and 3, ``approve``, ``reject``, ``success``, ``fail``, ``assassinate``
each player); the observation holds the player's role (4), the players it
knows to be evil (5), the phase (4), the leader (5), the proposed team (5),
the quest (5), the quests' results (success, fail: 10), the rejections so far
(1, a fifth each), the last vote's approvals (5) and the player's seat (5).

Version history: v0, first release.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import freeze
from parlour.envs.core.game import Game, InvalidMove

MERLIN, SERVANT, ASSASSIN, MINION = "merlin", "servant", "assassin", "minion"
ROLES = (MERLIN, SERVANT, ASSASSIN, MINION)
EVIL_ROLES = (ASSASSIN, MINION)
DECK = (MERLIN, SERVANT, SERVANT, ASSASSIN, MINION)
#: Team size of each quest with five players.
QUEST_SIZES = (2, 3, 2, 3, 3)
#: Rejected proposals in a row that hand the game to evil.
MAX_REJECTIONS = 5
PHASES = ("propose", "vote", "quest", "assassinate")

_SAY = re.compile(r"\[say\]", re.IGNORECASE)
_PROPOSE = re.compile(r"\bpropose((?:\s*,?\s*(?:and\s+)?player_\d+)+)", re.IGNORECASE)

RULES = """You are {player} in a game of The Resistance: Avalon with 5 players ({players}). Your role: {role}.{knowledge}
Good (merlin and two servants) against evil (the assassin and a minion). The evil players know each other; merlin knows who is evil; servants know only themselves.
Five quests, of 2, 3, 2, 3 and 3 players. For each, the leader (passing up the seats) proposes a team of the quest's size: reply "propose player_1 player_3" (yourself allowed), optionally followed by "[say] message", heard by everyone.
Then everyone votes at once: reply "approve" or "reject". A majority (3 of 5) sends the team; otherwise the next leader proposes. A fifth rejected proposal in a row for one quest makes evil win.
The team's members then play at once "success" or "fail" (good players may only play success); one fail fails the quest. Everyone learns how many fails were played, not by whom.
Three failed quests: evil wins. Three successful quests: the assassin names one good player ("assassinate player_2"); if it is merlin, evil wins, else good wins.
Rewards: +1 to every player of the winning team, -1 to every player of the losing team."""


class Avalon(Game):
    """Avalon for five players; see the module docstring."""

    name = "Avalon"
    reference_agents = ("reasoner", "random")
    description = "Hidden roles: good sends teams on quests, hidden evil sabotages them, and the assassin hunts merlin at the end."
    category = "social"
    zero_sum = False
    simultaneous = True

    def __init__(self) -> None:
        self.players = [f"player_{i}" for i in range(len(DECK))]
        self.teams_by_size = {size: [list(team) for team in itertools.combinations(self.players, size)] for size in sorted(set(QUEST_SIZES))}
        self.moves = (
            [f"propose {' '.join(team)}" for size in sorted(self.teams_by_size) for team in self.teams_by_size[size]]
            + ["approve", "reject", "success", "fail"]
            + [f"assassinate {p}" for p in self.players]
        )
        self.vector_size = 4 + 5 + len(PHASES) + 5 + 5 + 5 + 10 + 1 + 5 + 5
        self.roles: dict[str, str] = {}
        self.phase = "propose"
        self.quest = 0
        self.leader = 0
        self.rejections = 0
        self.team: list[str] = []
        self.results: list[int] = []
        self.proposals: tuple[Any, ...] = ()
        self.quests: tuple[Any, ...] = ()
        self.talk: tuple[Any, ...] = ()
        self.assassinated: str | None = None

    # ----------------------------------------------------------------- episode
    def start(self, ctx: Context) -> None:
        """Deal the roles, tell the evil players each other and merlin the evil players, draw the first leader."""
        order = ctx.rng.permutation(len(DECK))
        self.roles = {p: DECK[int(i)] for p, i in zip(self.players, order)}
        self.phase, self.quest, self.rejections, self.team = "propose", 0, 0, []
        self.results, self.proposals, self.quests, self.talk, self.assassinated = [], (), (), (), None
        self.leader = int(ctx.rng.integers(len(self.players)))
        evil = self.evil()
        ctx.tell(f"The evil players are {', '.join(evil)}.", to=[*evil, self.merlin()])
        ctx.tell(f"Quest 1 needs 2 players. {self.players[self.leader]} leads.")

    def evil(self) -> list[str]:
        """The evil players, in seat order."""
        return [p for p in self.players if self.roles[p] in EVIL_ROLES]

    def merlin(self) -> str:
        """The player who is merlin."""
        return next(p for p in self.players if self.roles[p] == MERLIN)

    def knows_evil(self, player: str) -> bool:
        """Whether ``player`` knows who is evil (merlin and the evil players)."""
        return self.roles[player] != SERVANT

    def to_move(self) -> list[str]:
        """The leader, every player for the vote, the team on its quest, or the assassin."""
        if self.phase == "propose":
            return [self.players[self.leader]]
        if self.phase == "vote":
            return list(self.players)
        if self.phase == "quest":
            return list(self.team)
        return [p for p in self.players if self.roles[p] == ASSASSIN]

    def rules(self, player: str) -> str:
        """The rules, the player's role and what it knows."""
        role = self.roles.get(player, SERVANT)
        knowledge = ""
        if role in EVIL_ROLES or role == MERLIN:
            others = [p for p in self.evil() if p != player]
            knowledge = f" The evil players: {', '.join(self.evil())}." if role == MERLIN else f" Your evil teammate: {', '.join(others)}."
        return RULES.format(player=player, players=", ".join(self.players), role=role, knowledge=knowledge)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The score, the phase and the reply expected."""
        score = f"Quests so far: {self.results.count(1)} succeeded, {self.results.count(0)} failed. Quest {self.quest + 1} needs {QUEST_SIZES[self.quest]} players."
        if self.phase == "propose":
            return f'{score} You lead (rejections so far for this quest: {self.rejections}). Reply "propose" and {QUEST_SIZES[self.quest]} players, optionally followed by "[say] message".'
        if self.phase == "vote":
            return f'{score} Proposed team: {", ".join(self.team)}. Reply "approve" or "reject" (rejections so far: {self.rejections}; a fifth makes evil win).'
        if self.phase == "quest":
            options = " or ".join(f'"{m}"' for m in legal or ["success"])
            return f"{score} You are on the quest. Reply {options}."
        return f'Good has won three quests. Name merlin: reply "assassinate player_N" with one of: {", ".join(p for p in self.players if self.roles[p] not in EVIL_ROLES)}.'

    def legal_actions(self, player: str) -> list[int]:
        """Teams of the quest's size for the leader; the votes; success (and fail for evil); whom the assassin may name."""
        first_vote = len(self.teams_by_size[2]) + len(self.teams_by_size[3])
        if self.phase == "propose":
            size = QUEST_SIZES[self.quest]
            start = 0 if size == 2 else len(self.teams_by_size[2])
            return list(range(start, start + len(self.teams_by_size[size])))
        if self.phase == "vote":
            return [first_vote, first_vote + 1]
        if self.phase == "quest":
            return [first_vote + 2, first_vote + 3] if self.roles[player] in EVIL_ROLES else [first_vote + 2]
        return [first_vote + 4 + i for i, p in enumerate(self.players) if self.roles[p] not in EVIL_ROLES]

    def parse(self, player: str, text: str) -> Any:
        """A move of the phase; a proposal may carry ``[say] message`` (then the move is ``{"move", "say"}``)."""
        legal = self.legal_moves(player)
        if self.phase != "propose":
            found = [m for m in self.find_moves(text) if m in legal]
            if not found:
                raise InvalidMove(f"No move found. Reply with one of: {', '.join(legal)}.")
            return found[-1]
        tags = list(_SAY.finditer(text))
        action, message = (text[: tags[-1].start()], text[tags[-1].end() :].strip()) if tags else (text, "")
        proposals = _PROPOSE.findall(action)
        size = QUEST_SIZES[self.quest]
        if not proposals:
            raise InvalidMove(f'No proposal found. Reply "propose" and {size} players, e.g. "propose {" ".join(self.players[:size])}".')
        named = [p.lower() for p in re.findall(r"player_\d+", proposals[-1], re.IGNORECASE)]
        team = sorted(set(named), key=self.players.index) if set(named) <= set(self.players) else None
        if team is None or len(team) != size or len(named) != size:
            raise InvalidMove(f"Propose {size} different players out of {', '.join(self.players)}; you named {', '.join(named)}.")
        move = f"propose {' '.join(team)}"
        return {"move": move, "say": message} if message else move

    def apply(self, ctx: Context, moves: dict[str, Any]) -> None:
        """A proposal, the vote, the quest, or the assassination."""
        if self.phase == "propose":
            ((player, move),) = moves.items()
            self._propose(ctx, player, move)
        elif self.phase == "vote":
            self._vote(ctx, moves)
        elif self.phase == "quest":
            self._quest(ctx, moves)
        else:
            ((player, move),) = moves.items()
            target = move.split()[1]
            self.assassinated = target
            ctx.tell(f"{player}, the assassin, names {target}.", kind="move", sender=player)
            if self.roles[target] == MERLIN:
                self._finish(ctx, "evil", f"the assassin found merlin ({target})")
            else:
                self._finish(ctx, "good", f"the assassin named {target}, not merlin ({self.merlin()})")

    def _propose(self, ctx: Context, player: str, move: Any) -> None:
        """Record the team, tell it (and the leader's words), open the vote."""
        name, message = (move["move"], move["say"]) if isinstance(move, dict) else (move, "")
        self.team = name.split()[1:]
        self.proposals += (freeze({"quest": self.quest + 1, "leader": player, "team": list(self.team), "votes": {}}),)
        ctx.tell(f"{player} proposes {', '.join(self.team)} for quest {self.quest + 1}.", kind="move", sender=player)
        if message:
            self.talk += (freeze({"quest": self.quest + 1, "player": player, "text": message}),)
            ctx.say(player, message)
        self.phase = "vote"

    def _vote(self, ctx: Context, moves: dict[str, str]) -> None:
        """Show the votes; a majority sends the team, else the next leader (or evil wins on the fifth rejection)."""
        votes = {p: moves[p] for p in self.players}
        last = dict(self.proposals[-1])
        last["votes"] = votes
        self.proposals = (*self.proposals[:-1], freeze(last))
        approvals = sum(v == "approve" for v in votes.values())
        shown = "; ".join(f"{p} {v}s" for p, v in votes.items())
        if approvals * 2 > len(self.players):
            ctx.tell(f"Votes: {shown}. Approved ({approvals} of {len(self.players)}): {', '.join(self.team)} go on quest {self.quest + 1}.")
            self.phase = "quest"
            return
        self.rejections += 1
        if self.rejections >= MAX_REJECTIONS:
            ctx.tell(f"Votes: {shown}. Rejected: the fifth rejection in a row.")
            self._finish(ctx, "evil", f"{MAX_REJECTIONS} proposals in a row were rejected")
            return
        self._next_leader()
        ctx.tell(f"Votes: {shown}. Rejected ({self.rejections} in a row). {self.players[self.leader]} leads.")
        self.phase = "propose"

    def _quest(self, ctx: Context, moves: dict[str, str]) -> None:
        """Count the fails; three successes open the assassination, three failures end the game."""
        fails = sum(m == "fail" for m in moves.values())
        success = fails == 0
        self.results.append(int(success))
        self.quests += (freeze({"quest": self.quest + 1, "team": list(self.team), "fails": fails, "success": success}),)
        ctx.tell(
            f"Quest {self.quest + 1} {'succeeds' if success else 'fails'} ({fails} fail{'s' if fails != 1 else ''} played). "
            f"Quests: {self.results.count(1)} succeeded, {self.results.count(0)} failed."
        )
        if self.results.count(0) == 3:
            self._finish(ctx, "evil", "three quests failed")
            return
        if self.results.count(1) == 3:
            self.phase = "assassinate"
            ctx.tell("Good has succeeded three times: the assassin now names merlin.")
            return
        self.quest += 1
        self.rejections = 0
        self._next_leader()
        self.phase, self.team = "propose", []
        ctx.tell(f"Quest {self.quest + 1} needs {QUEST_SIZES[self.quest]} players. {self.players[self.leader]} leads.")

    def _next_leader(self) -> None:
        """Leadership passes to the next seat."""
        self.leader = (self.leader + 1) % len(self.players)

    def _finish(self, ctx: Context, winner: str, reason: str) -> None:
        """Pay the teams and end."""
        teams = {"good": [p for p in self.players if self.roles[p] not in EVIL_ROLES], "evil": self.evil()}
        rewards = {p: 1.0 if p in teams[winner] else -1.0 for p in self.players}
        ctx.finish(rewards, reason=reason, winners=teams[winner], teams=teams, winning_team=winner, details=self.report())

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The offender's team loses the game."""
        self._finish(ctx, "good" if self.roles[player] in EVIL_ROLES else "evil", reason)

    def report(self) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        return {
            "roles": dict(self.roles),
            "quests": [{**q, "team": list(q["team"])} for q in self.quests],
            "proposals": len(self.proposals),
            "assassinated": self.assassinated,
            "merlin": self.merlin(),
        }

    # ------------------------------------------------------------ observations
    def view(self, player: str) -> dict[str, Any]:
        """What ``player`` knows: its role, the evil players if it knows them, and the public record."""
        role = self.roles[player]
        return {
            "player": player,
            "role": role,
            "team": "evil" if role in EVIL_ROLES else "good",
            "evil": self.evil() if self.knows_evil(player) else None,
            "players": list(self.players),
            "phase": self.phase,
            "quest": self.quest + 1,
            "quest_size": QUEST_SIZES[self.quest],
            "leader": self.players[self.leader],
            "team_proposed": list(self.team),
            "rejections": self.rejections,
            "proposals": self.proposals,
            "quests": self.quests,
            "talk": self.talk,
        }

    def vector(self, player: str) -> np.ndarray:
        """See the module docstring for the layout."""
        values = np.zeros(self.vector_size, dtype=np.float32)
        values[ROLES.index(self.roles[player])] = 1.0
        at = 4
        if self.knows_evil(player):
            for p in self.evil():
                values[at + self.players.index(p)] = 1.0
        at += 5
        values[at + PHASES.index(self.phase)] = 1.0
        at += len(PHASES)
        values[at + self.leader] = 1.0
        at += 5
        for p in self.team:
            values[at + self.players.index(p)] = 1.0
        at += 5
        values[at + self.quest] = 1.0
        at += 5
        for i, result in enumerate(self.results):
            values[at + 2 * i + (1 - result)] = 1.0
        at += 10
        values[at] = self.rejections / MAX_REJECTIONS
        at += 1
        if self.proposals and self.proposals[-1]["votes"]:
            for p, vote in self.proposals[-1]["votes"].items():
                values[at + self.players.index(p)] = float(vote == "approve")
        at += 5
        values[at + self.players.index(player)] = 1.0
        return values

    def render(self) -> str:
        """Every role (a spectator sees them), the quests, the phase."""
        roles = ", ".join(f"{p}: {self.roles[p]}" for p in self.players)
        results = "".join("S" if r else "F" for r in self.results) or "-"
        return f"quest {self.quest + 1} {self.phase} (leader {self.players[self.leader]}, team {','.join(self.team) or '-'}) | {results} | {roles}"
