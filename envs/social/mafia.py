"""Mafia for 5 to 9 players: hidden roles, night actions on private channels, day talk and votes, team rewards.

Options: ``num_players`` (5..9, default 7; players ``player_0`` ..),
``num_mafia`` (default ``(num_players - 1) // 3``: 1 with 5 or 6 players, 2
with 7 to 9; at most ``(num_players - 1) // 2``), ``detective`` and
``doctor`` (default ``True``: the village has one of each),
``discussion_rounds`` (1..5, default 2) and ``max_days`` (1..20, default
``num_players``).

Roles are dealt at random. The mafia know each other; everyone else (the
detective, the doctor and the villagers) is the village and knows only its
own role. The game opens with a quiet night 1: the mafia meet (they are
told each other's names), only the detective acts, and nobody dies, so every
player acts before anyone can be out (a Gymnasium learner is never out before
its first move). Then day and night alternate, from day 1:

* Day: ``discussion_rounds`` rounds in which the living players speak in seat
  order, ``[say] message`` (heard by everyone) or ``[pass]``; then every
  living player votes at once, ``vote player_4``, and may name privately the
  player it most suspects, ``suspect player_1`` (default: the player it votes
  for). Votes are then shown to all. The player with the most votes is out
  and its role revealed; a tie puts nobody out (no random tie-break, so a
  record replays exactly).
* Night (simultaneous): each living mafia member names a victim, ``kill
  player_3``; the mafia see each other's choices on their private channel,
  and may add ``[say] message`` after the kill, which only living mafia
  members read. The victim is the player most of them named; a tie goes to the
  choice of the lowest-seated mafia member among those who named a tied
  player. The detective investigates one player, ``check player_5``, and
  alone learns whether that player is mafia. The doctor protects one player,
  ``protect player_2`` (itself allowed, not the same player two nights in a
  row); a protected victim survives. At dawn everyone learns who died and
  their role, or that nobody died. (Night 1 is the quiet night above; a game
  without a detective starts at day 1.)

Players who die or are voted out are eliminated at once (terminated on every
face; they never act again). The village wins when no mafia member is left;
the mafia win when they are at least as many as the living villagers. After
day ``max_days`` the game ends in a draw.

Rewards (team game, ``zero_sum = False``): the winning team's players get +1
and the losing team's -1 at the end, the players already out included (their
share shows in the returns and the outcome's scores; a face cannot deliver it
to a player it has already terminated); a draw pays 0. A player who exceeds
the invalid-action allowance loses the game for its team.

Outcome: ``teams`` (``village``, ``mafia``) and the ``winning_team``;
details: the ``roles``, ``days``, ``deaths`` (who, role, day, killed at night or
voted out), every town player's daily ``suspects`` with whether each was
mafia, ``suspect_accuracy`` (the share of the village's suspects who were
mafia: reading others) beside ``suspect_chance`` (the share a uniform guess
among the other living players would get), and ``mafia_left``.

Version history: v0, first release.
"""

from __future__ import annotations

import re
from typing import Any

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import FrozenDict
from parlour.envs.core.game import Game, InvalidMove, int_option

MAFIA, DETECTIVE, DOCTOR, VILLAGER = "mafia", "detective", "doctor", "villager"
VILLAGE_ROLES = (DETECTIVE, DOCTOR, VILLAGER)
NIGHT_VERBS = {MAFIA: "kill", DETECTIVE: "check", DOCTOR: "protect"}
#: Words accepted for each night action beside its verb.
VERB_WORDS = {"kill": "kill|eliminate", "check": "check|investigate", "protect": "protect|save|heal"}

_SAY = re.compile(r"\[(say|pass)\]", re.IGNORECASE)
_VOTE = re.compile(r"\bvote\s+(?:for\s+|against\s+)?(player_\d+)\b", re.IGNORECASE)
_SUSPECT = re.compile(r"\bsuspect\s+(player_\d+)\b", re.IGNORECASE)

RULES = """You are {player} in a game of Mafia with {n} players ({players}). Your role: {role}.{team}
The village (detective, doctor, villagers) must find the mafia; the mafia ({num_mafia} of them) know each other and kill at night.
Night: the mafia each reply "kill player_N" (they see each other's choices and may add "[say] message" for their team only); the victim is the player most of them named (a tie goes to the choice of the lowest-seated mafia member among the tied). {special}
At dawn everyone learns who died and their role. A protected victim survives.
{opening} Day: {rounds} round(s) of discussion in seat order: reply "[say] your message" (everyone hears it) or "[pass]". Then everyone votes at once: reply "vote player_N", and add "suspect player_M" to name, privately, the player you most suspect (default: the one you vote for). The player with the most votes is out and their role revealed; a tie puts nobody out.
The dead and the voted out take no further part. The village wins when no mafia member is left; the mafia win when they are at least as many as the living villagers. After day {max_days} the game is a draw.
Rewards: +1 to every player of the winning team, -1 to every player of the losing team (out or not); 0 for a draw."""

#: What each role is told of the night's other actions: what it does itself, what the others do.
OWN_NIGHT = {
    DETECTIVE: 'Each night you check one player (reply "check player_N") and alone learn whether they are mafia.',
    DOCTOR: 'Each night you protect one player (reply "protect player_N"; yourself allowed, not the same player two nights in a row).',
}
OTHERS_NIGHT = {
    DETECTIVE: "The detective checks a player each night and alone learns whether they are mafia.",
    DOCTOR: "The doctor protects a player each night (not the same one two nights in a row).",
}


class Mafia(Game):
    """Mafia with a detective and a doctor; see the module docstring."""

    name = "Mafia"
    reference_agents = ("reasoner", "random")
    description = "Social deduction: a hidden mafia kills at night; the village talks and votes by day to find them."
    category = "social"
    zero_sum = False
    simultaneous = True

    def __init__(
        self,
        *,
        num_players: int = 7,
        num_mafia: int | None = None,
        detective: bool = True,
        doctor: bool = True,
        discussion_rounds: int = 2,
        max_days: int | None = None,
    ):
        self.num_players = int_option("num_players", num_players, 5, 9)
        most = (num_players - 1) // 2
        self.num_mafia = int_option("num_mafia", (num_players - 1) // 3 if num_mafia is None else num_mafia, 1, most)
        for option, value in (("detective", detective), ("doctor", doctor)):
            if not isinstance(value, bool):
                raise ValueError(f"{option} must be True or False, got {value!r}")
        self.has_detective = detective
        self.has_doctor = doctor
        self.discussion_rounds = int_option("discussion_rounds", discussion_rounds, 1, 5)
        self.max_days = int_option("max_days", num_players if max_days is None else max_days, 1, 20)
        self.players = [f"player_{i}" for i in range(num_players)]
        self.roles: dict[str, str] = {}
        self.alive: list[str] = list(self.players)
        self.phase = "discussion"
        self.day = 0
        self.night = 0
        self.discussion_round = 0
        self.speaker = 0
        # The records views show are tuples of read-only entries that only grow: every view shares them instead
        # of copying them (see parlour.envs.core.frozen). The suspects are never shown, so they stay a list.
        self.log: tuple[FrozenDict, ...] = ()
        self.votes: tuple[FrozenDict, ...] = ()
        self.deaths: tuple[FrozenDict, ...] = ()
        self.suspects: list[dict[str, Any]] = []
        self.checks: tuple[FrozenDict, ...] = ()
        self.protections: tuple[FrozenDict, ...] = ()
        self.mafia_log: tuple[FrozenDict, ...] = ()

    # ----------------------------------------------------------------- episode
    def start(self, ctx: Context) -> None:
        """Deal the roles at random, tell each player its role (and the mafia their team), begin the quiet night 1."""
        village = [DETECTIVE] * self.has_detective + [DOCTOR] * self.has_doctor
        deck = [MAFIA] * self.num_mafia + village + [VILLAGER] * (self.num_players - self.num_mafia - len(village))
        order = ctx.rng.permutation(self.num_players)
        self.roles = {player: deck[int(i)] for player, i in zip(self.players, order)}
        self.alive = list(self.players)
        self.day = 0
        self.night = 0
        self.log, self.votes, self.deaths, self.suspects = (), (), (), []
        self.checks, self.protections, self.mafia_log = (), (), ()
        mafia = self.team(MAFIA)
        ctx.tell(f"The mafia are {', '.join(mafia)}.", to=mafia)
        if self.has_detective:
            self._begin_night(ctx)
        else:
            self._begin_day(ctx)

    def team(self, role: str, alive: bool = False) -> list[str]:
        """The players of a team: ``"mafia"``, or ``"village"`` for everyone else; only the living if ``alive``."""
        pool = self.alive if alive else self.players
        return [p for p in pool if (self.roles[p] == MAFIA) == (role == MAFIA)]

    def _begin_night(self, ctx: Context) -> None:
        """Night falls: the living mafia, detective and doctor act at once (on the quiet night 1, the detective alone)."""
        self.night += 1
        self.phase = "night"
        quiet = " It is the quiet first night: only the detective acts, and nobody dies." if self.quiet else ""
        ctx.tell(f"Night {self.night} falls.{quiet}")

    @property
    def quiet(self) -> bool:
        """Whether this is the quiet first night (nobody is killed or protected); a game without a detective has none."""
        return self.phase == "night" and self.night == 1 and self.has_detective

    def _begin_day(self, ctx: Context) -> None:
        """Day breaks: discussion round 1 from the lowest living seat."""
        self.day += 1
        self.phase = "discussion"
        self.discussion_round = 1
        self.speaker = 0
        ctx.tell(f"Day {self.day}: living players: {', '.join(self.alive)}. Discussion round 1 of {self.discussion_rounds}.")

    # ------------------------------------------------------------------- rules
    def to_move(self) -> list[str]:
        """The night's actors, the speaker, or every living player for the vote."""
        if self.phase == "night":
            acting = DETECTIVE if self.quiet else NIGHT_VERBS
            return [p for p in self.alive if self.roles[p] in acting]
        if self.phase == "discussion":
            return [self.alive[self.speaker]]
        return list(self.alive)

    def rules(self, player: str) -> str:
        """The rules, the player's role and, for the mafia, its team."""
        role = self.roles.get(player, VILLAGER)
        team = ""
        if role == MAFIA:
            mates = [p for p in self.team(MAFIA) if p != player]
            team = f" Your fellow mafia: {', '.join(mates)}." if mates else " You are the only mafia member."
        return RULES.format(
            player=player,
            n=self.num_players,
            players=", ".join(self.players),
            role=role,
            team=team,
            num_mafia=self.num_mafia,
            special=" ".join(OWN_NIGHT[r] if r == role else OTHERS_NIGHT[r] for r in (DETECTIVE, DOCTOR) if r in self.roles.values())
            or "The village has no detective and no doctor.",
            rounds=self.discussion_rounds,
            max_days=self.max_days,
            opening="The game opens with a quiet night 1: the mafia meet, only the detective acts, nobody dies; then day 1."
            if self.has_detective
            else "The game opens with day 1.",
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The phase, the living players and the reply expected."""
        alive = ", ".join(self.alive)
        if self.phase == "night":
            role = self.roles[player]
            verb = NIGHT_VERBS[role]
            targets = ", ".join(self.night_targets(player))
            extra = ' You may add "[say] message" after it for your team.' if role == MAFIA else ""
            return f'Night {self.night}. Living players: {alive}. Reply "{verb} player_N" with one of: {targets}.{extra}'
        if self.phase == "discussion":
            return f'Day {self.day}, discussion round {self.discussion_round} of {self.discussion_rounds}. Living players: {alive}. Reply "[say] your message" or "[pass]".'
        others = ", ".join(p for p in self.alive if p != player)
        return f'Day {self.day}: vote. Living players: {alive}. Reply "vote player_N" (one of: {others}), optionally with "suspect player_M".'

    def night_targets(self, player: str) -> list[str]:
        """Whom ``player`` may target tonight."""
        role = self.roles[player]
        if role == MAFIA:
            return [p for p in self.alive if self.roles[p] != MAFIA]
        if role == DETECTIVE:
            return [p for p in self.alive if p != player]
        last = self.protections[-1]["target"] if self.protections and self.protections[-1]["night"] == self.night - 1 else None
        return [p for p in self.alive if p != last]

    def parse(self, player: str, text: str) -> dict[str, Any]:
        """The move for the phase (grammar in the module docstring)."""
        if self.phase == "night":
            return self._parse_night(player, text)
        if self.phase == "discussion":
            found = list(_SAY.finditer(text))
            if not found:
                raise InvalidMove('No move found. In the discussion reply "[say] your message" or "[pass]".')
            last = found[-1]
            return {"say": text[last.end() :].strip() if last.group(1).lower() == "say" else ""}
        return self._parse_vote(player, text)

    def _parse_night(self, player: str, text: str) -> dict[str, Any]:
        """``{"target": P}`` and, for the mafia, ``"say"``: the text after the last ``[say]``."""
        role = self.roles[player]
        verb = NIGHT_VERBS[role]
        action, message = text, ""
        if role == MAFIA:
            tags = list(re.finditer(r"\[say\]", text, re.IGNORECASE))
            if tags:
                action, message = text[: tags[-1].start()], text[tags[-1].end() :].strip()
        found = re.findall(rf"\b(?:{VERB_WORDS[verb]})\s+(player_\d+)\b", action, re.IGNORECASE)
        targets = self.night_targets(player)
        if not found:
            raise InvalidMove(f'No {verb} found. Reply "{verb} player_N" with one of: {", ".join(targets)}.')
        target = found[-1].lower()
        if target not in targets:
            raise InvalidMove(f"You cannot {verb} {target} tonight{self._why_not(player, target)}. Choose one of: {', '.join(targets)}.")
        move: dict[str, Any] = {"target": target}
        if role == MAFIA:
            move["say"] = message
        return move

    def _why_not(self, player: str, target: str) -> str:
        """Why a night target is refused, in a few words."""
        if target not in self.players:
            return " (no such player)"
        if target not in self.alive:
            return " (they are out)"
        if target == player:
            return " (that is you)"
        if self.roles[player] == MAFIA:
            return " (they are mafia)"
        return " (you protected them last night)"

    def _parse_vote(self, player: str, text: str) -> dict[str, Any]:
        """``{"vote": P, "suspect": Q}``: the last vote and the last suspect named (default: the vote)."""
        votes = _VOTE.findall(text)
        others = [p for p in self.alive if p != player]
        if not votes:
            raise InvalidMove(f'No vote found. Reply "vote player_N" with one of: {", ".join(others)}.')
        vote = votes[-1].lower()
        if vote not in others:
            raise InvalidMove(f"You cannot vote for {vote}: vote for one of {', '.join(others)}.")
        suspects = _SUSPECT.findall(text)
        suspect = suspects[-1].lower() if suspects else vote
        if suspect not in others:
            raise InvalidMove(f"You cannot suspect {suspect}: name one of {', '.join(others)}.")
        return {"vote": vote, "suspect": suspect}

    def apply(self, ctx: Context, moves: dict[str, Any]) -> None:
        """Resolve the night, a speech, or the vote."""
        if self.phase == "night":
            self._resolve_night(ctx, moves)
        elif self.phase == "discussion":
            ((player, move),) = moves.items()
            self._speak(ctx, player, move["say"])
        else:
            self._resolve_vote(ctx, moves)

    def _resolve_night(self, ctx: Context, moves: dict[str, Any]) -> None:
        """The mafia's victim, the detective's answer, the doctor's save; dawn."""
        mafia = [p for p in self.alive if self.roles[p] == MAFIA]
        if self.quiet:
            for player, move in moves.items():
                self._investigate(ctx, player, move["target"])
            ctx.tell("Dawn of day 1: the first night was quiet; nobody died.")
            self._begin_day(ctx)
            return
        choices = {p: moves[p]["target"] for p in mafia}
        for p in mafia:
            self.mafia_log += (FrozenDict(night=self.night, player=p, target=choices[p], say=moves[p]["say"]),)
            ctx.tell(f"Night {self.night}: {p} chooses to kill {choices[p]}.", to=mafia, kind="move", sender=p)
            if moves[p]["say"]:
                ctx.say(p, moves[p]["say"], to=mafia)
        counts = {t: list(choices.values()).count(t) for t in choices.values()}
        top = max(counts.values())
        tied = {t for t, c in counts.items() if c == top}
        victim = next(choices[p] for p in mafia if choices[p] in tied)
        ctx.tell(f"The mafia's victim tonight: {victim}.", to=mafia)
        protected = None
        for player, move in moves.items():
            role = self.roles[player]
            if role == DETECTIVE:
                self._investigate(ctx, player, move["target"])
            elif role == DOCTOR:
                protected = move["target"]
                self.protections += (FrozenDict(night=self.night, target=protected),)
                ctx.tell(f"You protect {protected} tonight.", to=player)
        if victim == protected:
            ctx.tell(f"Dawn of day {self.day + 1}: nobody died in the night.")
        else:
            self._remove(ctx, victim, "killed", f"Dawn of day {self.day + 1}: {victim} was killed in the night. They were {_a(self.roles[victim])}.")
        if not self._settled(ctx):
            self._begin_day(ctx)

    def _investigate(self, ctx: Context, detective: str, target: str) -> None:
        """Tell the detective alone whether ``target`` is mafia."""
        guilty = self.roles[target] == MAFIA
        self.checks += (FrozenDict(night=self.night, target=target, mafia=guilty),)
        ctx.tell(f"Your investigation: {target} {'IS' if guilty else 'is NOT'} a member of the mafia.", to=detective)

    def _speak(self, ctx: Context, player: str, message: str) -> None:
        """One speech; then the next speaker, the next round, or the vote."""
        self.log += (FrozenDict(day=self.day, round=self.discussion_round, player=player, text=message),)
        if message:
            ctx.say(player, message)
        else:
            ctx.tell(f"{player} passes.", kind="move", sender=player)
        self.speaker += 1
        if self.speaker < len(self.alive):
            return
        self.speaker = 0
        if self.discussion_round < self.discussion_rounds:
            self.discussion_round += 1
            ctx.tell(f"Discussion round {self.discussion_round} of {self.discussion_rounds}.")
            return
        self.phase = "vote"
        ctx.tell(f"Day {self.day}: time to vote.")

    def _resolve_vote(self, ctx: Context, moves: dict[str, Any]) -> None:
        """Show the votes; the player with the most is out, a tie puts nobody out; record the village's suspects."""
        living_mafia = sum(self.roles[p] == MAFIA for p in self.alive)
        self.votes += tuple(FrozenDict(day=self.day, player=player, target=moves[player]["vote"]) for player in self.alive)
        for player in self.alive:
            move = moves[player]
            if self.roles[player] != MAFIA:
                suspect = move["suspect"]
                self.suspects.append(
                    {
                        "day": self.day,
                        "player": player,
                        "suspect": suspect,
                        "mafia": self.roles[suspect] == MAFIA,
                        "chance": living_mafia / (len(self.alive) - 1),
                    }
                )
        tally = {p: sum(moves[v]["vote"] == p for v in self.alive) for p in self.alive}
        shown = "; ".join(f"{v} -> {moves[v]['vote']}" for v in self.alive)
        top = max(tally.values())
        leaders = [p for p, count in tally.items() if count == top]
        if len(leaders) > 1:
            ctx.tell(f"Votes of day {self.day}: {shown}. Tied between {', '.join(leaders)} ({top} each): nobody is voted out.")
        else:
            (out,) = leaders
            self._remove(
                ctx, out, "voted out", f"Votes of day {self.day}: {shown}. {out} is voted out with {top} votes. They were {_a(self.roles[out])}."
            )
        if self._settled(ctx):
            return
        if self.day >= self.max_days:
            self._finish(ctx, None, f"no side won within {self.max_days} days")
            return
        self._begin_night(ctx)

    def _remove(self, ctx: Context, player: str, how: str, announcement: str) -> None:
        """Take a player out: announce it with its role, record it, eliminate it."""
        ctx.tell(announcement)
        self.alive.remove(player)
        day = self.day + 1 if how == "killed" else self.day
        self.deaths += (FrozenDict(player=player, role=self.roles[player], day=day, how=how),)
        ctx.eliminate(player, f"{player} was {how}")

    def _settled(self, ctx: Context) -> bool:
        """End the game if a team has won; whether it ended."""
        mafia = len(self.team(MAFIA, alive=True))
        village = len(self.alive) - mafia
        if mafia == 0:
            self._finish(ctx, "village", "every mafia member is out")
        elif mafia >= village:
            self._finish(ctx, MAFIA, f"the mafia ({mafia}) are as many as the living villagers ({village})")
        return ctx.over

    def _finish(self, ctx: Context, winner: str | None, reason: str) -> None:
        """Pay the teams and end: +1 / -1, or 0 for a draw."""
        teams = {"village": self.team("village"), "mafia": self.team(MAFIA)}
        rewards = dict.fromkeys(self.players, 0.0)
        if winner is not None:
            for team, members in teams.items():
                for p in members:
                    rewards[p] = 1.0 if team == winner else -1.0
        ctx.finish(rewards, reason=reason, teams=teams, winning_team=winner, details=self.report())

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The offender's team loses the game."""
        self._finish(ctx, "village" if self.roles[player] == MAFIA else MAFIA, reason)

    def report(self) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        named = len(self.suspects)
        return {
            "roles": dict(self.roles),
            "days": self.day,
            "deaths": [dict(d) for d in self.deaths],
            "suspects": [{k: v for k, v in s.items() if k != "chance"} for s in self.suspects],
            "suspect_accuracy": sum(s["mafia"] for s in self.suspects) / named if named else None,
            "suspect_chance": sum(s["chance"] for s in self.suspects) / named if named else None,
            "mafia_left": len(self.team(MAFIA, alive=True)),
        }

    # ------------------------------------------------------------ observations
    def view(self, player: str) -> dict[str, Any]:
        """What ``player`` knows: its role (and team), the public record, and its own private results.

        The records (deaths, talk, votes, checks, protections, the mafia's log) are shared, read-only tuples.
        """
        role = self.roles[player]
        view: dict[str, Any] = {
            "player": player,
            "role": role,
            "team": MAFIA if role == MAFIA else "village",
            "mafia": self.team(MAFIA) if role == MAFIA else None,
            "players": list(self.players),
            "alive": list(self.alive),
            "phase": self.phase,
            "day": self.day,
            "night": self.night,
            "discussion_round": self.discussion_round,
            "discussion_rounds": self.discussion_rounds,
            "num_mafia": self.num_mafia,
            "deaths": self.deaths,
            "talk": self.log,
            "votes": self.votes,
            "night_targets": self.night_targets(player) if self.phase == "night" and role in NIGHT_VERBS and player in self.alive else [],
        }
        if role == DETECTIVE:
            view["checks"] = self.checks
        if role == DOCTOR:
            view["protections"] = self.protections
        if role == MAFIA:
            view["mafia_log"] = self.mafia_log
        return view

    def render(self) -> str:
        """Every role (a spectator sees them), who is alive, the phase."""
        roles = ", ".join(f"{p}: {self.roles[p]}{'' if p in self.alive else ' (out)'}" for p in self.players)
        where = f"night {self.night}" if self.phase == "night" else f"day {self.day} {self.phase}"
        return f"{where} | {roles}"


def _a(role: str) -> str:
    """``"a villager"``, ``"the detective"``."""
    return {MAFIA: "a member of the mafia", DETECTIVE: "the detective", DOCTOR: "the doctor", VILLAGER: "a villager"}[role]
