"""The game protocol, its context, tools and messages, its faces (PettingZoo AEC and Parallel, Gymnasium), spaces, records and replay."""

from parlour.envs.core.agent import Agent
from parlour.envs.core.context import Context, Message
from parlour.envs.core.errors import InvalidMove, ReplayMismatch
from parlour.envs.core.game import Game, Outcome, int_option, winners_by_score
from parlour.envs.core.match import Match, Snapshot
from parlour.envs.core.record import replay
from parlour.envs.core.spaces import TextSpace
from parlour.envs.core.tools import Tool

__all__ = [
    "Agent",
    "Context",
    "Game",
    "InvalidMove",
    "Match",
    "Message",
    "Outcome",
    "ReplayMismatch",
    "Snapshot",
    "TextSpace",
    "Tool",
    "int_option",
    "replay",
    "winners_by_score",
]
