"""Codenames for two teams of two: a spymaster gives one-word clues, its guesser reveals words on a shared board.

Players: ``red_spymaster``, ``red_guesser``, ``blue_spymaster``, ``blue_guesser``.

The board: words drawn from the seed out of :data:`THEMES`, a small word list
written for parlour (26 themes of 8 everyday English words; some words belong
to two or three themes, as ``orange`` to fruit and colour, which is where clues
become ambiguous). A board draws a few themes at random and its words from
their union, so clusters of related words are always on it. A secret key
colours each word: red (the team that starts), blue, neutral or the assassin.
``difficulty`` (1 to 3, default 3) sets the board: 16 words (6 red, 5 blue,
4 neutral, 1 assassin), 20 words (7, 6, 6, 1) or the classic 25 (9, 8, 7, 1).

The spymasters see the key; the guessers see only what has been revealed.
Teams alternate turns, red first:

* the spymaster replies ``clue THEME N``: a theme name from :data:`THEMES`
  (the clue vocabulary: the relation "a word relates to a theme" is the
  theme's list, public knowledge) and N from 1 to 5, the number of its words it
  means;
* the guesser then replies ``guess WORD`` (an unrevealed board word), up to
  N + 1 times, or ``pass`` after at least one guess. A word of its own team
  lets it go on; a neutral or opposing word ends the turn (an opposing word
  counts for the opponent); the assassin loses the game at once.

A team wins when all its words are revealed (by either team), or when the
other team reveals the assassin. Every guesser turn reveals a word, so a game
ends within the board's size of turns.

Rewards (team game, zero-sum): +1 to both players of the winning team, -1 to
both of the losing team. A player who exceeds the invalid-action allowance
loses the game for its team.

Outcome: ``teams`` (``red``, ``blue``) and the ``winning_team``; details: the
``difficulty``, ``clues`` (each clue with the guesses it led to and their
colours), ``left`` (each team's unrevealed words) and ``assassin`` (whether
it ended the game).

Vector mode: the action is an index into :attr:`Codenames.moves` (every
``clue THEME N``, every ``guess WORD`` of the word list, ``pass``); the
observation has, per board slot, the revealed colour (red, blue, neutral,
assassin, or none), the key colour (spymasters only), the word's themes and
the word itself (one-hot over the word list), then the current clue's theme,
the guesses left, the player's team and role.

Version history: v0, first release.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import freeze
from parlour.envs.core.game import Game, InvalidMove, int_option
from parlour.envs.core.numbers import NUMBER, whole_number

#: The clue vocabulary and the words each theme relates to (written for parlour; free to reuse).
THEMES: dict[str, tuple[str, ...]] = {
    "fruit": ("apple", "banana", "cherry", "grape", "lemon", "orange", "peach", "plum"),
    "colour": ("orange", "violet", "scarlet", "amber", "indigo", "ivory", "olive", "plum"),
    "animal": ("tiger", "horse", "rabbit", "mouse", "eagle", "shark", "wolf", "bear"),
    "ocean": ("shark", "whale", "coral", "wave", "tide", "reef", "anchor", "pearl"),
    "music": ("piano", "guitar", "drum", "violin", "trumpet", "chord", "melody", "bass"),
    "kitchen": ("knife", "spoon", "oven", "kettle", "pan", "plate", "fork", "bowl"),
    "weather": ("rain", "snow", "storm", "thunder", "cloud", "wind", "frost", "fog"),
    "space": ("planet", "comet", "moon", "star", "rocket", "orbit", "galaxy", "meteor"),
    "sport": ("tennis", "golf", "soccer", "hockey", "boxing", "racket", "goal", "ball"),
    "tools": ("hammer", "saw", "drill", "wrench", "chisel", "ladder", "nail", "screw"),
    "body": ("hand", "knee", "elbow", "heart", "brain", "lung", "spine", "finger"),
    "school": ("pencil", "teacher", "exam", "desk", "chalk", "lesson", "ruler", "book"),
    "royalty": ("king", "queen", "crown", "throne", "castle", "prince", "knight", "palace"),
    "chess": ("king", "queen", "knight", "bishop", "rook", "pawn", "board", "check"),
    "computer": ("mouse", "keyboard", "screen", "cable", "server", "code", "virus", "pixel"),
    "medicine": ("doctor", "nurse", "pill", "virus", "fever", "heart", "clinic", "vaccine"),
    "forest": ("tree", "moss", "fern", "oak", "pine", "bear", "wolf", "mushroom"),
    "desert": ("sand", "cactus", "camel", "dune", "oasis", "scorpion", "mirage", "heat"),
    "film": ("actor", "camera", "director", "scene", "star", "screen", "script", "ticket"),
    "travel": ("passport", "ticket", "luggage", "hotel", "map", "train", "airport", "suitcase"),
    "money": ("coin", "bank", "cash", "wallet", "price", "loan", "penny", "credit"),
    "garden": ("rose", "tulip", "spade", "hose", "seed", "fence", "soil", "bee"),
    "cards": ("ace", "joker", "deck", "spade", "heart", "club", "diamond", "trump"),
    "jewel": ("diamond", "pearl", "ruby", "emerald", "gold", "ring", "crown", "silver"),
    "farm": ("cow", "pig", "barn", "tractor", "hay", "goat", "sheep", "horse"),
    "winter": ("snow", "ice", "sled", "scarf", "frost", "skate", "glove", "mitten"),
}
#: Every word of the list, sorted: the word one-hot's order in vector mode.
WORDS: tuple[str, ...] = tuple(sorted({word for words in THEMES.values() for word in words}))
#: The themes each word relates to.
WORD_THEMES: dict[str, tuple[str, ...]] = {word: tuple(t for t, words in THEMES.items() if word in words) for word in WORDS}
#: difficulty -> (board size, red words, blue words, assassins); the rest are neutral.
LEVELS = {1: (16, 6, 5, 1), 2: (20, 7, 6, 1), 3: (25, 9, 8, 1)}
#: The largest number a clue may give.
MAX_CLUE = 5
TEAMS = ("red", "blue")
RED, BLUE, NEUTRAL, ASSASSIN = "red", "blue", "neutral", "assassin"
COLOURS = (RED, BLUE, NEUTRAL, ASSASSIN)

_CLUE = re.compile(rf"\bclue\s+([a-z]+)\s+({NUMBER})(?!\w)", re.IGNORECASE)
_GUESS = re.compile(r"\bguess\s+([a-z]+)\b|\b(pass)\b", re.IGNORECASE)

RULES = """You are {player} in a game of Codenames: team red (red_spymaster, red_guesser) against team blue (blue_spymaster, blue_guesser). You are the {role} of team {team}.
The board holds {size} words. A secret key colours each: {red} red, {blue} blue, {neutral} neutral, 1 assassin. The spymasters see the key; the guessers see only the colours revealed so far.
Teams alternate turns, red first. The spymaster replies "clue THEME N": THEME is one of these theme words, N from 1 to {max_clue} (how many of its team's words the clue points to):
{themes}
A word relates to a theme when it is in that theme's list (public: every player may use it); some words belong to several themes.
Then the guesser replies "guess WORD" with an unrevealed board word, up to N + 1 times, or "pass" after at least one guess. A word of its own team lets it guess again; a neutral or opposing word ends the turn (an opposing word counts for the other team); the assassin loses the game at once.
A team wins when all its words are revealed (by either team), or when the other team reveals the assassin.
Rewards: +1 to both players of the winning team, -1 to both of the losing team."""


class Codenames(Game):
    """Codenames on generated themed boards; see the module docstring."""

    name = "Codenames"
    reference_agents = ("thematic", "random")
    description = (
        "Word association for two teams: a spymaster clues its team's words by theme, its guesser reveals them; "
        "difficulty 1-3 (default 3) sets the board: 16, 20 or 25 words."
    )
    category = "social"
    zero_sum = True
    fixed_rules = True

    def __init__(self, *, difficulty: int = 3):
        self.difficulty = int_option("difficulty", difficulty, 1, len(LEVELS))
        self.size, self.red_count, self.blue_count, self.assassins = LEVELS[self.difficulty]
        self.players = [f"{team}_{role}" for team in TEAMS for role in ("spymaster", "guesser")]
        self.themes = list(THEMES)
        self.moves: list[str] = (
            [f"clue {theme} {n}" for theme in self.themes for n in range(1, MAX_CLUE + 1)] + [f"guess {w}" for w in WORDS] + ["pass"]
        )
        self._guess_base = len(self.themes) * MAX_CLUE
        self._slot = len(COLOURS) + 1 + len(COLOURS) + len(self.themes) + len(WORDS)
        self.vector_size = self.size * self._slot + len(self.themes) + 1 + 2 + 2
        self.board: list[str] = []
        self.key: list[str] = []
        self.revealed: list[bool] = []
        self.team = RED
        self.phase = "clue"
        self.clue: tuple[str, int] | None = None
        self.guesses_left = 0
        self.guessed = 0
        self.clues: tuple[dict[str, Any], ...] = ()

    # ----------------------------------------------------------------- episode
    def start(self, ctx: Context) -> None:
        """Draw themes, the board's words from their union, and the key; red's spymaster gives the first clue."""
        order = [self.themes[int(i)] for i in ctx.rng.permutation(len(self.themes))]
        pool: list[str] = []
        # Themes are added until their union can fill the board, so the board is made of a few dense clusters.
        for theme in order:
            pool += [w for w in THEMES[theme] if w not in pool]
            if len(pool) >= self.size * 3 // 2:
                break
        self.board = [pool[int(i)] for i in ctx.rng.choice(len(pool), size=self.size, replace=False)]
        neutral = self.size - self.red_count - self.blue_count - self.assassins
        colours = [RED] * self.red_count + [BLUE] * self.blue_count + [NEUTRAL] * neutral + [ASSASSIN] * self.assassins
        self.key = [colours[int(i)] for i in ctx.rng.permutation(self.size)]
        self.revealed = [False] * self.size
        self.team, self.phase, self.clue, self.guesses_left, self.guessed = RED, "clue", None, 0, 0
        self.clues = ()
        ctx.tell(f"The board: {', '.join(self.board)}. Red starts.")

    def to_move(self) -> list[str]:
        """The spymaster or the guesser of the team whose turn it is."""
        return [f"{self.team}_{'spymaster' if self.phase == 'clue' else 'guesser'}"]

    def rules(self, player: str) -> str:
        """The rules, the theme list and the player's team and role."""
        team, role = player.split("_")
        return RULES.format(
            player=player,
            role=role,
            team=team,
            size=self.size,
            red=self.red_count,
            blue=self.blue_count,
            neutral=self.size - self.red_count - self.blue_count - self.assassins,
            max_clue=MAX_CLUE,
            themes="\n".join(f"  {theme}: {', '.join(words)}" for theme, words in THEMES.items()),
        )

    def board_text(self, spymaster: bool) -> str:
        """The board, one word a line: its revealed colour, or for a spymaster its key colour in brackets."""
        lines = []
        for word, colour, shown in zip(self.board, self.key, self.revealed):
            if shown:
                lines.append(f"  {word}: revealed {colour}")
            else:
                lines.append(f"  {word}" + (f" [{colour}]" if spymaster else ""))
        return "\n".join(lines)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The board as the player may see it, the words left, and the reply expected."""
        left = ", ".join(f"{t} {self.left(t)}" for t in TEAMS)
        if self.phase == "clue":
            return (
                f"Board (key colours in brackets):\n{self.board_text(True)}\nWords left: {left}. "
                f'Your clue: reply "clue THEME N" (THEME a theme word from the rules, N from 1 to {MAX_CLUE}).'
            )
        theme, n = self.clue  # type: ignore[misc]
        more = ' or "pass"' if self.guessed else ""
        return (
            f"Board:\n{self.board_text(False)}\nWords left: {left}. Your spymaster's clue: {theme} {n}. "
            f'Guesses left this turn: {self.guesses_left}. Reply "guess WORD"{more}.'
        )

    def left(self, team: str) -> int:
        """How many of ``team``'s words are still hidden."""
        return sum(1 for colour, shown in zip(self.key, self.revealed) if colour == team and not shown)

    def legal_actions(self, player: str) -> list[int]:
        """Every clue for a spymaster; the unrevealed words (and ``pass`` after a guess) for a guesser."""
        if self.phase == "clue":
            return list(range(self._guess_base))
        actions = sorted(self._guess_base + WORDS.index(w) for w, shown in zip(self.board, self.revealed) if not shown)
        if self.guessed:
            actions.append(len(self.moves) - 1)
        return actions

    def parse(self, player: str, text: str) -> str:
        """``clue THEME N`` for a spymaster; ``guess WORD`` (or a bare board word) or ``pass`` for a guesser."""
        if self.phase == "clue":
            found = _CLUE.findall(text)
            if not found:
                raise InvalidMove(f'No clue found. Reply "clue THEME N": THEME one of {", ".join(self.themes)}; N from 1 to {MAX_CLUE}.')
            theme = found[-1][0].lower()
            if theme not in THEMES:
                raise InvalidMove(f"'{theme}' is not a theme word. Clue with one of: {', '.join(self.themes)}.")
            # 2.5 is refused, not read as 2.
            n = whole_number(found[-1][1], 1, MAX_CLUE, f"A clue's number must be from 1 to {MAX_CLUE}, got {{written}}.", f"clue {theme} 2")
            return f"clue {theme} {n}"
        hidden = [w for w, shown in zip(self.board, self.revealed) if not shown]
        found = [(g or p).lower() for g, p in _GUESS.findall(text)]
        if not found and text.strip().lower() in hidden:
            found = [text.strip().lower()]
        if not found:
            options = 'Reply "guess WORD"' + (' or "pass"' if self.guessed else "")
            raise InvalidMove(f"No guess found. {options} with one of: {', '.join(hidden)}.")
        choice = found[-1]
        if choice == "pass":
            if not self.guessed:
                raise InvalidMove("You must guess at least one word before you pass.")
            return "pass"
        if choice not in hidden:
            raise InvalidMove(f"'{choice}' is not an unrevealed word on the board. Unrevealed: {', '.join(hidden)}.")
        return f"guess {choice}"

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """A clue, a guess (and what it reveals), or a pass."""
        ((player, move),) = moves.items()
        if move.startswith("clue "):
            _, theme, n = move.split()
            self.clue = (theme, int(n))
            self.phase, self.guesses_left, self.guessed = "guess", int(n) + 1, 0
            self.clues += (freeze({"team": self.team, "theme": theme, "number": int(n), "guesses": ()}),)
            ctx.tell(f"{player} gives the clue: {theme} {n}.", kind="move", sender=player)
            return
        if move == "pass":
            ctx.tell(f"{player} passes.", kind="move", sender=player)
            self._end_turn(ctx)
            return
        word = move.split()[1]
        slot = self.board.index(word)
        colour = self.key[slot]
        self.revealed[slot] = True
        self.guessed += 1
        self.guesses_left -= 1
        # Entries are shared with every view (frozen), so the last one is replaced, never changed.
        last = dict(self.clues[-1])
        last["guesses"] = (*last["guesses"], freeze({"word": word, "colour": colour}))
        self.clues = (*self.clues[:-1], freeze(last))
        ctx.tell(f"{player} guesses {word}: it is {colour}.", kind="move", sender=player)
        other = BLUE if self.team == RED else RED
        if colour == ASSASSIN:
            self._finish(ctx, other, f"team {self.team} revealed the assassin ({word})")
        elif self.left(self.team) == 0:
            self._finish(ctx, self.team, f"every {self.team} word is revealed")
        elif self.left(other) == 0:
            self._finish(ctx, other, f"every {other} word is revealed")
        elif colour != self.team or self.guesses_left == 0:
            self._end_turn(ctx)

    def _end_turn(self, ctx: Context) -> None:
        """The other team's spymaster gives the next clue."""
        self.team = BLUE if self.team == RED else RED
        self.phase, self.clue, self.guesses_left, self.guessed = "clue", None, 0, 0
        ctx.tell(f"Team {self.team}'s turn: red has {self.left(RED)} words left, blue {self.left(BLUE)}.")

    def _finish(self, ctx: Context, winner: str, reason: str) -> None:
        """+1 to the winning team's players, -1 to the losing team's."""
        teams = {team: [p for p in self.players if p.startswith(team)] for team in TEAMS}
        rewards = {p: 1.0 if p.startswith(winner) else -1.0 for p in self.players}
        ctx.finish(rewards, reason=reason, winners=teams[winner], teams=teams, winning_team=winner, details=self.report(reason))

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The offender's team loses the game."""
        self._finish(ctx, BLUE if player.startswith(RED) else RED, reason)

    def report(self, reason: str = "") -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        return {
            "difficulty": self.difficulty,
            "clues": [{**c, "guesses": [dict(g) for g in c["guesses"]]} for c in self.clues],
            "left": {team: self.left(team) for team in TEAMS},
            "assassin": "assassin" in reason,
        }

    # ------------------------------------------------------------ observations
    def view(self, player: str) -> dict[str, Any]:
        """The board, what is revealed, the key for a spymaster, the current clue and the clue history."""
        team, role = player.split("_")
        return {
            "player": player,
            "team": team,
            "role": role,
            "turn": self.team,
            "phase": self.phase,
            "board": list(self.board),
            "revealed": {w: c for w, c, shown in zip(self.board, self.key, self.revealed) if shown},
            "key": dict(zip(self.board, self.key)) if role == "spymaster" else None,
            "clue": list(self.clue) if self.clue else None,
            "guesses_left": self.guesses_left,
            "guessed": self.guessed,
            "clues": self.clues,
            "left": {t: self.left(t) for t in TEAMS},
        }

    def vector(self, player: str) -> np.ndarray:
        """See the module docstring for the layout."""
        team, role = player.split("_")
        values = np.zeros(self.vector_size, dtype=np.float32)
        themes = {theme: i for i, theme in enumerate(self.themes)}
        for slot, (word, colour, shown) in enumerate(zip(self.board, self.key, self.revealed)):
            at = slot * self._slot
            values[at + (COLOURS.index(colour) if shown else len(COLOURS))] = 1.0
            at += len(COLOURS) + 1
            if role == "spymaster":
                values[at + COLOURS.index(colour)] = 1.0
            at += len(COLOURS)
            for theme in WORD_THEMES[word]:
                values[at + themes[theme]] = 1.0
            at += len(self.themes)
            values[at + WORDS.index(word)] = 1.0
        at = self.size * self._slot
        if self.clue:
            values[at + themes[self.clue[0]]] = 1.0
        at += len(self.themes)
        values[at] = self.guesses_left / (MAX_CLUE + 1)
        values[at + 1 + TEAMS.index(team)] = 1.0
        values[at + 3 + (role == "guesser")] = 1.0
        return values

    def render(self) -> str:
        """The board with the key (a spectator sees it), whose turn, the clue."""
        clue = f" | clue {self.clue[0]} {self.clue[1]}, {self.guesses_left} guesses left" if self.clue else ""
        words = ", ".join(f"{w}={c[0].upper() if shown else c[0]}" for w, c, shown in zip(self.board, self.key, self.revealed))
        return f"{self.team} {self.phase}{clue} | {words}"
