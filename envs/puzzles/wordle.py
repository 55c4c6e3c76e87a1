"""Wordle: find a hidden five-letter English word in a few guesses, told after each which letters are right.

One player, ``player_0``. The answer is drawn from the seed out of
:data:`WORDS`, a list of 693 common five-letter English words (US spelling)
written for parlour: everyday words, facts of the language rather than
anyone's selection, given under the project's licence. Every guess must be a
word of the same list; the rules show it.

After each guess every letter is marked, with the standard rule for repeated
letters: ``G`` (green) the letter is in that place in the answer; ``Y``
(yellow) the answer holds the letter elsewhere; ``-`` (grey) it holds no more
of it. Greens are marked first; then, left to right, a letter is yellow only
while the answer has copies of it not already marked green or yellow, so with
the answer ``apple`` the guess ``papal`` scores ``Y Y G - Y`` (its second
``a`` is grey: the answer has one ``a``).

A word not in the list is an invalid action that says so and costs no guess;
as a made-up word is an easy slip, the allowance is 4 (one more forfeits).
The guess is the last five-letter word of the reply written in capitals
(``CRANE is my guess``), else the reply's last word in any case (``I will
try crane``), so reasoning before it is fine; everyday words in the middle
of the reasoning are never taken for a guess.

``difficulty`` (1 to 5, default 3, Wordle's own): the guesses allowed, 8, 7,
6, 5 or 4.

Rewards: 1 when a guess is the answer (the player wins), 0 when the guesses
run out (the answer is then told). A player that exceeds the invalid-action
allowance gets -1. Outcome details: ``difficulty``, ``success``,
``guesses``, ``max_guesses`` and ``answer``.

Vector observation: what the marks so far prove, 313 values: per letter
whether the answer holds it (26) and whether it holds none (26), per place
and letter whether the place holds it (130) and whether it does not (130),
then the fraction of the guesses used. The action is an index into
:data:`WORDS`.

Version history: v0, first release.
"""

from __future__ import annotations

import re
from string import ascii_lowercase
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.game import Game, int_option
from parlour.envs.puzzles.solo import SoloPuzzle

#: difficulty -> guesses allowed
LEVELS = {1: 8, 2: 7, 3: 6, 4: 5, 5: 4}
LENGTH = 5
GREEN, YELLOW, GREY = "G", "Y", "-"
TOKEN = re.compile(r"[A-Za-z]+")

#: The answers and the allowed guesses, sorted.
WORDS = """
about above abuse actor acute admit adopt adult after again agent agree ahead alarm album alert alike alive
allow alone along alter among anger angle angry apart apple apply arena argue arise array aside asset audio
audit avoid award aware awful bacon badge badly baker basic basin basis batch beach beard beast begin being
below bench berry birth black blade blame blank blast blend bless blind block blood bloom board boast bonus
boost booth bound brain brand brave bread break breed brick bride brief bring broad brown brush build bunch
burst buyer cabin cable camel canal candy cargo carry catch cause chain chair chalk charm chart chase cheap
check cheek cheer chess chest chief child chill choir chose civil claim class clean clear clerk click cliff
climb clock close cloth cloud coach coast color couch could count court cover crack craft crane crash crazy
cream crime crisp cross crowd crown crude cruel crush curve cycle daily dairy dance dated dealt death debut
delay depth diary dirty doubt dozen draft drain drama drank drawn dream dress drift drill drink drive drove
dying eager early earth eight elbow elder elect empty enemy enjoy enter entry equal error essay event every
exact exist extra faint faith false fancy fault favor feast fence fever fewer fiber field fifth fifty fight
final first flame flash fleet flesh float flock flood floor flour fluid focus force forge forth forty forum
found frame frank fraud fresh front frost fruit fully funny giant given glass globe glory glove grace grade
grain grand grant grape grasp grass grave great greed green greet grief grill gross group grown guard guess
guest guide habit happy harsh heart heavy hello hence hobby honey honor horse hotel house human humor hurry
ideal image imply index inner input issue ivory jelly jewel joint judge juice knife knock known label labor
large laser later laugh layer learn least leave legal lemon level light limit linen liver lobby local logic
loose lover lower loyal lucky lunch magic major maker manor maple march match mayor medal media melon mercy
merit metal meter might minor mixed model money month moral motor mount mouse mouth movie muddy music nerve
never newly night noble noise north novel nurse ocean offer often olive onion opera orbit order organ other
ought ounce outer owner paint panel panic paper party pasta patch pause peace peach pearl penny phase phone
photo piano piece pilot pinch pitch pizza place plain plane plant plate plaza plead point polar porch pound
power press price pride prime print prior prize proof proud prove pulse punch pupil puppy purse queen quest
quick quiet quite quota quote radar radio raise rally ranch range rapid ratio reach react ready realm rebel
refer relax reply rider ridge rifle right rigid rival river roast robot rocky rough round route royal rural
salad sauce scale scare scarf scene scent scope score scout scrap sense serve seven shade shake shall shame
shape share shark sharp sheep sheet shelf shell shift shine shirt shock shoot shore short shout sight silly
since skill skirt skull sleep slice slide slope small smart smell smile smoke snake solar solid solve sorry
sound south space spare spark speak speed spell spend spice spike spine spoke spoon sport spray squad stack
staff stage stain stair stake stamp stand stare start state steak steal steam steel steep stick stiff still
stock stone stool store storm story stove straw strip stuck study stuff style sugar suite sunny super swamp
swear sweat sweep sweet swift swing sword table taste teach teeth thank theme there thick thief thing think
third thorn those three throw thumb tiger tight timer tired title toast today token tooth topic torch total
touch tough tower toxic trace track trade trail train trait treat trend trial tribe trick truck truly trunk
trust truth tulip twice twist uncle under union unity until upper upset urban usage usual valid value valve
vapor vault video vigor virus visit vital vivid vocal voice voter wagon waste watch water weary weigh whale
wheat wheel where which while white whole whose wider width woman world worry worse worst worth would wound
woven wrist write wrong yacht yield young youth zebra
""".split()
LISTED = frozenset(WORDS)

RULES = """You are {player}, playing Wordle: find the hidden five-letter English word in {guesses} guesses or fewer.
After each guess every letter is marked: G (green) the letter is in that place in the word; Y (yellow) the word holds this letter in another place; - (grey) the word holds no more of this letter. Greens are marked first, then yellows left to right, only while the word has copies of the letter not already marked, so a letter guessed twice may be yellow once and grey once.
Every guess must be one of these {count} words (a word outside the list is refused and costs no guess):
{words}
You win when you guess the word. Reply with one word, for example: {example} (if you write more, end with your guess or write it in capitals: I will try {capital})."""


def feedback(guess: str, answer: str) -> str:
    """The marks of ``guess`` against ``answer``, one of ``G``, ``Y``, ``-`` per letter (the repeated-letter rule above).

    The one statement of the rule; the game and the solver both use it.
    """
    marks = [GREY] * LENGTH
    unmatched: dict[str, int] = {}
    for i, (g, a) in enumerate(zip(guess, answer)):
        if g == a:
            marks[i] = GREEN
        else:
            unmatched[a] = unmatched.get(a, 0) + 1
    for i, g in enumerate(guess):
        if marks[i] == GREY and unmatched.get(g, 0) > 0:
            marks[i] = YELLOW
            unmatched[g] -= 1
    return "".join(marks)


class Wordle(SoloPuzzle, Game):
    """Wordle on a word drawn from :data:`WORDS`; see the module docstring for the rules and rewards."""

    name = "Wordle"
    description = (
        "Find a hidden five-letter English word, each guess marked green/yellow/grey with the standard "
        "repeated-letter rule; difficulty 1-5 (default 3, Wordle's 6) sets the guesses allowed (8 to 4)."
    )
    default_error_allowance = 4

    def __init__(self, *, difficulty: int = 3):
        self.difficulty = int_option("difficulty", difficulty, 1, len(LEVELS))
        self.max_guesses = LEVELS[self.difficulty]
        self.players = ["player_0"]
        self.moves = list(WORDS)
        self.vector_size = 2 * 26 + 2 * LENGTH * 26 + 1
        self.answer = ""
        self.history: list[tuple[str, str]] = []

    def start(self, ctx: Context) -> None:
        """Draw the answer."""
        self.answer = WORDS[int(ctx.rng.integers(len(WORDS)))]
        self.history = []

    def rules(self, player: str) -> str:
        """The rules, the guesses allowed and the word list."""
        return RULES.format(
            player=player, guesses=self.max_guesses, count=len(WORDS), words=" ".join(WORDS), example=WORDS[0], capital=WORDS[0].upper()
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The guesses so far with their marks, and the guesses left (every listed word is legal, so none are listed)."""
        board = "\n".join(f"{guess.upper()}  {' '.join(marks)}" for guess, marks in self.history) or "No guesses yet."
        return f"{board}\nGuesses left: {self.max_guesses - len(self.history)}. Your guess:"

    def legal_actions(self, player: str) -> list[int]:
        """Every listed word, guessed before or not."""
        return list(range(len(WORDS)))

    def parse(self, player: str, text: str) -> str:
        """The last five-letter word in capitals, else the last word, if it is listed; an unlisted one is refused by name."""
        tokens = TOKEN.findall(text)
        capitals = [token for token in tokens if len(token) == LENGTH and token.isupper()]
        guess = (capitals or tokens or [""])[-1].lower()
        if len(guess) != LENGTH:
            raise InvalidMove("No guess found. Reply with the word, or end with it, or write it in capitals: I will try CRANE.")
        if guess not in LISTED:
            raise InvalidMove(f"'{guess}' is not in the word list; guess one of the listed words (no guess was used).")
        return guess

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Mark the guess; the answer wins, the last guess missed loses and tells the answer."""
        ((player, guess),) = moves.items()
        marks = feedback(guess, self.answer)
        self.history.append((guess, marks))
        ctx.tell(f"{player} guesses {guess.upper()}: {' '.join(marks)}", kind="move", sender=player)
        if guess == self.answer:
            self.solved(ctx, "guessed the word")
        elif len(self.history) >= self.max_guesses:
            self.failed(ctx, f"the guesses ran out; the word was {self.answer.upper()}")

    def report(self, success: bool) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        return {
            "difficulty": self.difficulty,
            "success": success,
            "guesses": len(self.history),
            "max_guesses": self.max_guesses,
            "answer": self.answer,
        }

    def view(self, player: str) -> dict[str, Any]:
        """The guesses with their marks and the guesses allowed; never the answer."""
        return {"difficulty": self.difficulty, "guesses": [[guess, marks] for guess, marks in self.history], "max_guesses": self.max_guesses}

    def vector(self, player: str) -> np.ndarray:
        """What the marks prove (see the module docstring), then the share of the guesses used."""
        values = np.zeros(self.vector_size, dtype=np.float32)
        present, absent, placed, excluded = 0, 26, 52, 52 + LENGTH * 26
        for guess, marks in self.history:
            found = {g for g, mark in zip(guess, marks) if mark != GREY}
            for i, (g, mark) in enumerate(zip(guess, marks)):
                letter = ascii_lowercase.index(g)
                if mark == GREEN:
                    values[placed + i * 26 + letter] = 1.0
                else:
                    values[excluded + i * 26 + letter] = 1.0
                if g in found:
                    values[present + letter] = 1.0
                else:
                    values[absent + letter] = 1.0
        values[-1] = len(self.history) / self.max_guesses
        return values

    def render(self) -> str:
        """The answer and the guesses with their marks."""
        board = "; ".join(f"{guess.upper()} {marks}" for guess, marks in self.history)
        return f"answer {self.answer.upper()}, guesses {len(self.history)}/{self.max_guesses}: {board}"
