"""parlour: text and tool-use environments for LLM agents, with Gymnasium and PettingZoo faces.

``import parlour`` registers every environment as ``parlour/<Name>-v<version>``
in Gymnasium and PettingZoo.
"""

from parlour.agents import AgentScheme, AgentSpec, agent_name, ladder_specs, make_agent, register_agent_scheme
from parlour.envs.core import (
    Agent,
    Context,
    Game,
    InvalidMove,
    Match,
    Message,
    Outcome,
    ReplayMismatch,
    Snapshot,
    TextSpace,
    Tool,
    int_option,
    replay,
    winners_by_score,
)
from parlour.envs.core.gym import set_agent_resolver, set_ladder_resolver
from parlour.envs.registry import game_class, list_envs, make_aec, make_parallel, register, register_all
from parlour.evaluation import Results, evaluate
from parlour.version import __version__

# The core's Gymnasium face knows no agents; the agents layer tells it how to read opponent specs.
set_agent_resolver(make_agent)
set_ladder_resolver(ladder_specs)
register_all()

__all__ = [
    "__version__",
    "Agent",
    "AgentScheme",
    "AgentSpec",
    "Context",
    "Game",
    "InvalidMove",
    "Match",
    "Message",
    "Outcome",
    "ReplayMismatch",
    "Results",
    "Snapshot",
    "TextSpace",
    "Tool",
    "agent_name",
    "evaluate",
    "int_option",
    "game_class",
    "list_envs",
    "make_aec",
    "make_agent",
    "make_parallel",
    "register",
    "register_agent_scheme",
    "replay",
    "winners_by_score",
]
