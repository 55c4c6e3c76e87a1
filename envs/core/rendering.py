"""Rendering: the one place typed messages become the text an LLM reads, keeping player words from passing for anything else.

A player's words (a ``talk`` message, made by ``Context.say``) become one line,
``sender: "words"``, the words as a JSON string literal: quotes, backslashes,
newlines and every other line break are escaped, so they can neither close
their frame nor start a line of their own. Every other message is the
environment's and opens with :data:`ENV_MARK`, which a player cannot produce:
the mark (and the characters that look like it or like the frame's quotes)
are escaped inside frames too.

The engine (:class:`~parlour.envs.core.match.Match`), the faces' observations,
the LLM prompt builder, exports and the leaderboard's pages all render through
it; none joins message texts itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from parlour.envs.core.context import Message

#: Opens every environment message in rendered text; inside a player's frame it is escaped, so only the environment writes it.
ENV_MARK = "\u25b6"
#: Characters that look like :data:`ENV_MARK` or like the frame's quotes.
LOOK_ALIKES = "\u25b7\u25b8\u25b9\u25ba\u25bb\u27a4\u2bc8\u201c\u201d\u201e\u201f\u2033\u2036\uff02"
#: What :func:`quote` escapes beyond JSON's own escapes: the line breaks JSON leaves alone (``str.splitlines`` and
#: many readers break lines at them), lone surrogates (which no UTF-8 reader accepts), the mark and its look-alikes.
_ESCAPED = re.compile(f"[\u0085\u2028\u2029\ud800-\udfff{ENV_MARK}{LOOK_ALIKES}]")


def quote(words: str) -> str:
    """``words`` as one JSON string literal that holds no line break, no :data:`ENV_MARK` and no look-alike quote."""
    return _ESCAPED.sub(lambda found: f"\\u{ord(found.group()):04x}", json.dumps(words, ensure_ascii=False))


def render_message(message: Message) -> str:
    """One message as the text an LLM reads: a player's words framed as ``sender: "words"``, anything else marked as the environment's."""
    if message["kind"] == "talk":
        return f"{message['sender']}: {quote(message['text'])}"
    return f"{ENV_MARK} {message['text']}"


def render(messages: Iterable[Message]) -> str:
    """The text of an observation: its messages rendered (see :func:`render_message`), separated by blank lines."""
    # render_message written out: this runs for every message of every text observation.
    return "\n\n".join(
        [f"{ENV_MARK} {message['text']}" if message["kind"] != "talk" else f"{message['sender']}: {quote(message['text'])}" for message in messages]
    )
