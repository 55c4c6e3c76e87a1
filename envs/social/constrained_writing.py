"""ConstrainedWriting: a writer drafts a text under checkable constraints, a critic points out violations, the writer revises.

Players: ``writer`` and ``critic``.

The task, drawn from the seed: ``difficulty`` (1 to 7, default 3) distinct
constraints of these kinds, numbered from 1, each checked exactly by
:func:`check`:

* ``acrostic``: the first letters of the lines spell a word (so the text has
  that many lines);
* ``lines``: exactly L lines (3 to 6; the acrostic's length when there is one);
* ``words``: exactly N words (16 to 40);
* ``include``: each of two given words appears;
* ``exclude``: neither of two given common words appears;
* ``ending``: every line's last word ends with a given letter;
* ``length``: no word is longer than M letters (5 to 7).

A *word* is a run of ASCII letters, with inner apostrophes (``don't`` is one
word); a *line* is a line of the text holding a word (blank lines and lines of
punctuation alone do not count); a line's first and last letters are those of
its first and last words. Words compare case-insensitively. The words of a
task come from :data:`VOCABULARY`, a small list written for parlour, so that
every task can be met.

Protocol: three turns.

1. The writer replies with its draft inside ``<text>`` and ``</text>`` (the
   last such block counts; text outside it is private). The draft reaches the
   critic as the writer's own words.
2. The critic replies with comments and a verdict, ``[verdict] 2, 4`` (the
   numbers of the constraints it finds violated) or ``[verdict] none``; the
   last verdict counts. Its comments (the text outside the verdict) reach the
   writer as its own words, and the verdict is announced.
3. The writer replies with its final text, as in 1; it reaches the critic.

A reply without its move (an empty text, a verdict naming a constraint that
does not exist) is an invalid action.

Rewards, at the end: the writer gets the fraction of the constraints its
final text satisfies; the critic gets the fraction of the constraints whose
status in the draft its verdict got right (named if violated, not named if
met). Nobody wins: each seat is scored on its own task. A player who exceeds
the invalid-action allowance gets -1 and the other 0.

Outcome details: ``difficulty``; ``constraints`` (each as a dict:
``kind`` and its parameters); ``draft`` and ``final`` (whether each
constraint holds, ``None`` for a text never written); ``verdict`` (the
constraint numbers the critic named, ``None`` if it never replied);
``score`` (the writer's reward) and ``critic_accuracy``.

Version history: v0, first release.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import FrozenDict, freeze
from parlour.envs.core.game import Game, InvalidMove, int_option

#: The words tasks are made of (written for parlour; free to reuse): short, common, and covering the letters the
#: acrostics and endings use, each of those with a word of at most five letters.
VOCABULARY: tuple[str, ...] = (
    "air",
    "apple",
    "ash",
    "bay",
    "bear",
    "bell",
    "bells",
    "bird",
    "blue",
    "bread",
    "bright",
    "brook",
    "calm",
    "cedar",
    "clay",
    "clear",
    "cloud",
    "cold",
    "dark",
    "dawn",
    "day",
    "deep",
    "deer",
    "door",
    "dream",
    "dry",
    "dusk",
    "dust",
    "early",
    "earth",
    "east",
    "echo",
    "fair",
    "fern",
    "field",
    "fields",
    "fire",
    "flame",
    "flower",
    "fog",
    "frost",
    "garden",
    "glass",
    "gold",
    "grass",
    "green",
    "grey",
    "hall",
    "hand",
    "heat",
    "hill",
    "hills",
    "holy",
    "home",
    "honey",
    "hope",
    "hours",
    "ice",
    "iron",
    "island",
    "ivy",
    "kind",
    "lake",
    "land",
    "lark",
    "lawn",
    "leaf",
    "leaves",
    "light",
    "lily",
    "line",
    "lion",
    "lonely",
    "long",
    "meadow",
    "milk",
    "mist",
    "moon",
    "morning",
    "moss",
    "nest",
    "night",
    "north",
    "oak",
    "ocean",
    "old",
    "open",
    "owls",
    "park",
    "path",
    "pearl",
    "pine",
    "pond",
    "quiet",
    "rain",
    "ray",
    "red",
    "reed",
    "river",
    "road",
    "rose",
    "salt",
    "sand",
    "sea",
    "seed",
    "seen",
    "shadow",
    "shell",
    "silk",
    "silver",
    "sky",
    "slow",
    "small",
    "snow",
    "soft",
    "song",
    "star",
    "steel",
    "still",
    "stone",
    "storm",
    "stream",
    "summer",
    "sun",
    "tall",
    "thorn",
    "tide",
    "time",
    "tower",
    "tree",
    "trees",
    "tune",
    "under",
    "upon",
    "vale",
    "valley",
    "violet",
    "wand",
    "warm",
    "water",
    "wave",
    "waves",
    "ways",
    "west",
    "wheel",
    "white",
    "wide",
    "wild",
    "wind",
    "winter",
    "wood",
    "wool",
    "yellow",
    "young",
)
#: Acrostic words: every letter starts a word of :data:`VOCABULARY` of at most five letters.
ACROSTICS: tuple[str, ...] = (
    "sun",
    "tree",
    "light",
    "river",
    "stone",
    "cloud",
    "dream",
    "ocean",
    "bird",
    "rain",
    "moon",
    "seed",
    "wind",
    "leaf",
    "hope",
    "star",
    "path",
    "snow",
    "field",
    "honey",
    "lake",
    "wave",
    "gold",
    "calm",
    "dawn",
)
#: Letters a line may be asked to end with: each ends a word of :data:`VOCABULARY` of at most five letters.
ENDINGS = "estdynrlk"
#: Common words a task may ban (none of them is in :data:`VOCABULARY`).
BANNED = ("the", "and", "of", "to", "in", "is", "it", "with", "my", "we")
KINDS = ("acrostic", "lines", "words", "include", "exclude", "ending", "length")

WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*")
VERDICT = re.compile(r"\[verdict\]\s*+(?::\s*+)?(none|\d++(?:\s*+(?:,|and)?\s*+\d++)*+)", re.IGNORECASE)

RULES = """You are the {player} in a constrained writing task: the writer writes a short text that must meet every constraint below; the critic checks the draft before the writer revises it.
The constraints:
{constraints}
A word is a run of letters (inner apostrophes allowed); a line is a line of the text holding a word. Words compare case-insensitively.
Turns: the writer replies with a draft between <text> and </text> (text outside the tags stays private); the critic sees the draft and replies with comments (sent to the writer word for word) and a verdict naming the constraints it finds violated, "[verdict] 2, 4" or "[verdict] none"; then the writer replies with its final text between <text> and </text>.
Rewards: the writer gets the fraction of constraints its final text meets; the critic gets the fraction of constraints whose status in the draft its verdict got right."""


def words_of(text: str) -> list[str]:
    """The words of ``text``, lower-cased."""
    return [w.lower() for w in WORD.findall(text)]


def lines_of(text: str) -> list[list[str]]:
    """The words of each line of ``text`` that holds a word."""
    return [found for found in map(words_of, text.splitlines()) if found]


def describe(constraint: Mapping[str, Any]) -> str:
    """A constraint in words."""
    kind = constraint["kind"]
    if kind == "acrostic":
        return f"the first letters of the lines spell {constraint['word'].upper()} (so {len(constraint['word'])} lines)"
    if kind == "lines":
        return f"exactly {constraint['count']} lines"
    if kind == "words":
        return f"exactly {constraint['count']} words"
    if kind == "include":
        return f"use each of the words: {', '.join(constraint['words'])}"
    if kind == "exclude":
        return f"use none of the words: {', '.join(constraint['words'])}"
    if kind == "ending":
        return f"every line ends with a word ending in the letter {constraint['letter']}"
    return f"no word longer than {constraint['max']} letters"


def check(constraint: Mapping[str, Any], text: str) -> bool:
    """Whether ``text`` meets ``constraint`` (the rules of the module docstring)."""
    kind = constraint["kind"]
    lines = lines_of(text)
    if kind == "acrostic":
        return "".join(line[0][0] for line in lines) == constraint["word"]
    if kind == "lines":
        return len(lines) == constraint["count"]
    if kind == "ending":
        return bool(lines) and all(line[-1].endswith(constraint["letter"]) for line in lines)
    words = [w for line in lines for w in line]
    if kind == "words":
        return len(words) == constraint["count"]
    if kind == "include":
        return set(constraint["words"]) <= set(words)
    if kind == "exclude":
        return not set(constraint["words"]) & set(words)
    return all(len(w) - w.count("'") <= constraint["max"] for w in words)


def draw_constraints(rng: Any, count: int) -> list[dict[str, Any]]:
    """``count`` distinct constraints that one text can meet together, in random order."""
    kinds = [KINDS[int(i)] for i in rng.permutation(len(KINDS))[:count]]
    longest = int(rng.integers(5, 8)) if "length" in kinds else None
    pool = [w for w in sorted(set(VOCABULARY)) if longest is None or len(w) <= longest]
    drawn: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        if kind not in kinds:
            continue
        if kind == "acrostic":
            drawn[kind] = {"kind": kind, "word": ACROSTICS[int(rng.integers(len(ACROSTICS)))]}
        elif kind == "lines":
            count_ = len(drawn["acrostic"]["word"]) if "acrostic" in drawn else int(rng.integers(3, 7))
            drawn[kind] = {"kind": kind, "count": count_}
        elif kind == "words":
            # At least two words a line for six lines and the two included words: the scripted writer's layout fits.
            drawn[kind] = {"kind": kind, "count": int(rng.integers(16, 41))}
        elif kind == "include":
            drawn[kind] = {"kind": kind, "words": tuple(pool[int(i)] for i in rng.choice(len(pool), size=2, replace=False))}
        elif kind == "exclude":
            drawn[kind] = {"kind": kind, "words": tuple(BANNED[int(i)] for i in rng.choice(len(BANNED), size=2, replace=False))}
        elif kind == "ending":
            drawn[kind] = {"kind": kind, "letter": ENDINGS[int(rng.integers(len(ENDINGS)))]}
        else:
            drawn[kind] = {"kind": kind, "max": longest}
    return [drawn[kind] for kind in kinds]


def extract_text(reply: str) -> str:
    """The last ``<text>...</text>`` block of ``reply``, stripped; ``InvalidMove`` without one or when it is empty."""
    lowered = reply.lower()
    # rfind, not a lazy regex: a reply full of unclosed tags stays linear in its length.
    end = lowered.rfind("</text>")
    start = lowered.rfind("<text>", 0, end) if end >= 0 else -1
    if start < 0:
        raise InvalidMove("No text found. Put your text between <text> and </text>.")
    text = reply[start + len("<text>") : end].strip()
    if not text:
        raise InvalidMove("Your text is empty. Put your text between <text> and </text>.")
    return text


class ConstrainedWriting(Game):
    """A writer, a critic and a checker of constraints drawn from the seed; see the module docstring."""

    name = "ConstrainedWriting"
    reference_agents = ("checker", "random")
    description = (
        "A writer drafts a text under checkable constraints (acrostic, word and line counts, required and banned "
        "words, line endings, word length), a critic names violations, the writer revises; "
        "difficulty 1-7 (default 3) is the number of constraints."
    )
    category = "social"
    zero_sum = False

    def __init__(self, *, difficulty: int = 3):
        self.difficulty = int_option("difficulty", difficulty, 1, len(KINDS))
        self.players = ["writer", "critic"]
        self.constraints: tuple[FrozenDict, ...] = ()
        self.phase = "draft"
        self.draft: str | None = None
        self.final: str | None = None
        self.verdict: tuple[int, ...] | None = None

    def start(self, ctx: Context) -> None:
        """Draw the constraints; the writer drafts first."""
        self.constraints = freeze(draw_constraints(ctx.rng, self.difficulty))
        self.phase = "draft"
        self.draft = self.final = None
        self.verdict = None

    def constraints_text(self) -> str:
        """The numbered constraints, one a line."""
        return "\n".join(f"  {i}. {describe(c)}" for i, c in enumerate(self.constraints, start=1))

    def to_move(self) -> list[str]:
        """The writer drafts, the critic reviews, the writer revises."""
        return ["critic" if self.phase == "review" else "writer"]

    def rules(self, player: str) -> str:
        """The task and its constraints."""
        return RULES.format(player=player, constraints=self.constraints_text())

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """What the acting player is to write now."""
        if self.phase == "draft":
            return f"Constraints:\n{self.constraints_text()}\nWrite your draft between <text> and </text>."
        if self.phase == "review":
            return (
                f"Constraints:\n{self.constraints_text()}\nThe writer's draft is in its message above. Reply with your comments "
                'and "[verdict] N, M" naming the constraints it violates, or "[verdict] none".'
            )
        return f"Constraints:\n{self.constraints_text()}\nWrite your final text between <text> and </text>; it is scored."

    def parse(self, player: str, text: str) -> dict[str, Any]:
        """The writer's text, or the critic's verdict and the comments around it."""
        if player == "writer":
            return {"text": extract_text(text)}
        found = list(VERDICT.finditer(text))
        if not found:
            raise InvalidMove('No verdict found. End with "[verdict] 2, 4" (the violated constraints\' numbers) or "[verdict] none".')
        match = found[-1]
        named = () if match.group(1).lower() == "none" else tuple(sorted({int(n) for n in re.findall(r"\d+", match.group(1))}))
        wrong = [n for n in named if not 1 <= n <= len(self.constraints)]
        if wrong:
            raise InvalidMove(f"There is no constraint {wrong[0]}: they are numbered 1 to {len(self.constraints)}.")
        return {"verdict": named, "talk": (text[: match.start()] + text[match.end() :]).strip()}

    def apply(self, ctx: Context, moves: dict[str, dict[str, Any]]) -> None:
        """Relay the draft, the comments and verdict, or the final text; score after the final text."""
        ((player, move),) = moves.items()
        if self.phase == "draft":
            self.draft = move["text"]
            ctx.say("writer", move["text"], to="critic")
            ctx.tell("The writer submits its draft.", kind="move", sender="writer")
            self.phase = "review"
        elif self.phase == "review":
            self.verdict = move["verdict"]
            if move["talk"]:
                ctx.say("critic", move["talk"], to="writer")
            named = ", ".join(map(str, self.verdict)) or "none"
            ctx.tell(f"The critic's verdict: constraints violated: {named}.", kind="move", sender="critic")
            self.phase = "revise"
        else:
            self.final = move["text"]
            ctx.say("writer", move["text"], to="critic")
            ctx.tell("The writer submits its final text.", kind="move", sender="writer")
            details = self.report()
            ctx.finish(
                {"writer": details["score"], "critic": details["critic_accuracy"]},
                reason=f"the final text meets {sum(details['final'])} of {len(self.constraints)} constraints",
                details=details,
            )

    def met(self, text: str | None) -> list[bool] | None:
        """Whether ``text`` meets each constraint, ``None`` for a text never written."""
        return None if text is None else [check(c, text) for c in self.constraints]

    def report(self) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        draft, final = self.met(self.draft), self.met(self.final)
        accuracy = None
        if draft is not None and self.verdict is not None:
            accuracy = sum((i in self.verdict) != ok for i, ok in enumerate(draft, start=1)) / len(draft)
        return {
            "difficulty": self.difficulty,
            "constraints": [{k: list(v) if isinstance(v, tuple) else v for k, v in c.items()} for c in self.constraints],
            "draft": draft,
            "final": final,
            "verdict": None if self.verdict is None else list(self.verdict),
            "score": None if final is None else sum(final) / len(final),
            "critic_accuracy": accuracy,
        }

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """-1 to the offender, 0 to the other; nobody wins."""
        ctx.finish({player: -1.0, self.other(player): 0.0}, reason=reason, details=self.report())

    def view(self, player: str) -> dict[str, Any]:
        """The constraints, the phase, the texts written so far and the verdict (everything is public to both seats)."""
        return {
            "player": player,
            "phase": self.phase,
            "constraints": self.constraints,
            "draft": self.draft,
            "verdict": self.verdict,
        }

    def render(self) -> str:
        """The constraints, the phase, and what each text meets."""
        return (
            f"{self.phase}; constraints:\n{self.constraints_text()}\n"
            f"draft meets {self.met(self.draft)}, verdict {self.verdict}, final meets {self.met(self.final)}"
        )
