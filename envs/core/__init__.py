"""The game protocol, its faces (PettingZoo AEC and Parallel, Gymnasium), spaces, records and replay."""

from parlour.envs.core.agent import Agent
from parlour.envs.core.game import Game, InvalidMove, Outcome
from parlour.envs.core.match import Match
from parlour.envs.core.record import ReplayMismatch, replay
from parlour.envs.core.spaces import TextSpace

__all__ = ["Agent", "Game", "InvalidMove", "Match", "Outcome", "ReplayMismatch", "TextSpace", "replay"]
