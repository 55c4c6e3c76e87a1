"""Prompt and history: the system prompt, the conversation as chat messages, and the context window.

A :class:`Conversation` is one player's chat in one episode. Its system prompt
holds the agent's role, the answer format and the environment's rules, read
from the first observation's typed messages (the ``"rules"`` message); an
observation without messages keeps all its text in the first turn. Then come *turns*: a
turn starts with an observation (a user message) and holds the replies to it
and any retry feedback. :meth:`Conversation.messages` applies the window:
the last ``max_turns`` turns and/or as many recent turns as fit in
``max_tokens``; the system prompt and the current turn are always kept, and
the first turn (which carries the rules when they stay in the first message)
is kept for as long as it fits.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Callable, Mapping

import numpy as np

from parlour.envs.core.context import Message as ContextMessage
from parlour.envs.core.rendering import render
from parlour.wrappers.backend import Message
from parlour.wrappers.extraction import FORMAT_HINTS

SYSTEM_TEMPLATE = "You are {player} in the environment {env_id}. {format}"
RULES_TEMPLATE = "{header}\n\n{rules}"
#: Prepended to the first turn kept after dropped ones.
OMITTED = "({n} earlier turn(s) omitted.)\n\n"


def split_rules(observation: Mapping[str, Any]) -> tuple[str | None, str]:
    """``(rules, rest)`` of a first observation: the text of its ``"rules"`` messages and of the others.

    ``(None, text)`` when the observation carries no typed messages or no rules message.
    """
    # The game context's typed messages where the observation has them; the checks below skip anything else.
    messages: list[ContextMessage] | None = observation.get("messages")
    if not isinstance(messages, list):
        return None, str(observation.get("text") or "")
    rules = [m for m in messages if isinstance(m, dict) and m.get("kind") == "rules"]
    if not rules:
        return None, str(observation.get("text") or "")
    rules_text = "\n\n".join(m["text"] for m in rules)
    text = str(observation.get("text") or "")
    # The text is the messages rendered, rules first; taking the rest from it keeps any edit made to the text.
    shown = render(rules)
    if text.startswith(shown):
        return rules_text, text[len(shown) :].strip()
    # Rendered, never joined raw: the rest may hold other players' words, which only their frames keep apart.
    return rules_text, render([m for m in messages if isinstance(m, dict) and m.get("kind") != "rules"])


def system_prompt(observation: Mapping[str, Any], format_hint: str, template: str = SYSTEM_TEMPLATE) -> tuple[str, str]:
    """``(system prompt, first user message)`` for an episode's first observation.

    ``template`` may use ``{player}``, ``{env_id}`` and ``{format}``; the rules
    are appended to it when :func:`split_rules` can separate them.
    """
    header = template.format(player=observation.get("player") or "a player", env_id=observation.get("env_id") or "an environment", format=format_hint)
    rules, rest = split_rules(observation)
    if rules is None:
        return header, rest
    return RULES_TEMPLATE.format(header=header, rules=rules), rest


class Conversation:
    """One player's chat in one episode: a system prompt and a list of turns."""

    def __init__(self, system: str):
        self.system = system
        self.turns: list[list[Message]] = []

    def observe(self, text: str) -> None:
        """Start a turn with a new observation."""
        self.turns.append([{"role": "user", "content": text}])

    def reply(self, text: str) -> None:
        """Add the model's reply to the current turn."""
        self.turns[-1].append({"role": "assistant", "content": text})

    def feedback(self, text: str) -> None:
        """Add retry feedback (a user message) to the current turn."""
        self.turns[-1].append({"role": "user", "content": text})

    def messages(
        self,
        max_turns: int | None = None,
        max_tokens: int | None = None,
        count_tokens: Callable[[list[Message]], int] | None = None,
    ) -> list[Message]:
        """The chat messages inside the window (see the module docstring); dropped turns are noted in the next kept one."""
        system: list[Message] = [{"role": "system", "content": self.system}]
        last = len(self.turns) - 1
        # Drop order: the middle turns oldest first, then the first turn; the current one always stays.
        order = list(range(1, last)) + ([0] if last > 0 else [])
        kept = set(range(len(self.turns)))
        if max_turns is not None:
            for index in order[: max(0, len(self.turns) - max_turns)]:
                kept.discard(index)
        if max_tokens is not None and count_tokens is not None:
            sizes = {i: count_tokens(turn) for i, turn in enumerate(self.turns)}
            total = count_tokens(system) + sum(sizes[i] for i in kept)
            # Turns are dropped in one contiguous run, so at most one omission note is added.
            note_size = count_tokens([{"role": "user", "content": OMITTED.format(n=len(self.turns))}])
            if len(kept) < len(self.turns):
                total += note_size
            for index in order:
                if total <= max_tokens:
                    break
                if index in kept:
                    if len(kept) == len(self.turns):
                        total += note_size
                    kept.discard(index)
                    total -= sizes[index]
        messages = list(system)
        dropped = 0
        for index, turn in enumerate(self.turns):
            if index not in kept:
                dropped += 1
                continue
            if dropped:
                turn = [{"role": turn[0]["role"], "content": OMITTED.format(n=dropped) + turn[0]["content"]}, *turn[1:]]
                dropped = 0
            messages.extend(turn)
        return messages


class EpisodeConversations:
    """What an LLM agent keeps per episode: its conversations, keyed ``(episode, player)``, and a sampling generator.

    One agent serves many episodes at once (the runner puts the episode index
    in every observation), so it forgets an episode's conversations when told
    the episode ended. Subclasses set ``self.conversations = {}``, ``self.rng`` and ``self.system_template``.
    """

    conversations: dict[tuple[Hashable, str], Conversation]
    rng: np.random.Generator
    system_template: str

    def reset(self, seed: int | None = None, episode: Hashable | None = None) -> None:
        """Start afresh: forget ``episode``'s conversations (all when ``None``); reseed sampling when ``seed`` is given."""
        if episode is None:
            self.conversations.clear()
        else:
            self.forget(episode)
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def forget(self, episode: Hashable) -> None:
        """Drop the conversations of a finished episode."""
        for key in [key for key in self.conversations if key[0] == episode]:
            del self.conversations[key]

    def _observe(self, key: tuple[Hashable, str], observation: Mapping[str, Any], extraction: str) -> Conversation:
        """The conversation of ``key`` with ``observation`` added as a new turn (the first one starts it with its system prompt)."""
        conversation = self.conversations.get(key)
        text = str(observation.get("text") or "")
        if conversation is None:
            system, text = system_prompt(observation, FORMAT_HINTS.get(extraction, FORMAT_HINTS["auto"]), self.system_template)
            conversation = self.conversations[key] = Conversation(system)
        conversation.observe(text)
        return conversation
