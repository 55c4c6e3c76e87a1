"""OpenEnv's server package, loaded without the web UI and the MCP client that it imports on load and parlour never uses.

openenv-core's ``openenv.core.env_server`` (0.3) imports its Gradio web
interface and, through its HTTP server, its MCP environment (fastmcp, mcp)
whenever any part of it is imported: seconds of start-up and hundreds of
modules for ``parlour serve``, which serves neither. Its package tolerates a
missing web interface, and its HTTP server takes from the MCP module only
``get_server_tools``, which it calls for MCP environments alone. So
:func:`load_env_server` imports the package while the web interface reads as
absent and the MCP module as a stand-in whose ``get_server_tools`` loads the
real module when first called; afterwards both import normally for whoever
asks. Should a later openenv-core need more of them at load, the package is
imported in full instead: slower to start, never broken.

Importing this module loads the package so, and gives the names of it that
:mod:`parlour.bridges.openenv_server` uses, which imports them from here.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

ENV_SERVER = "openenv.core.env_server"
WEB_INTERFACE = f"{ENV_SERVER}.web_interface"
MCP_ENVIRONMENT = f"{ENV_SERVER}.mcp_environment"


def get_server_tools(*args: Any, **kwargs: Any) -> Any:
    """OpenEnv's ``get_server_tools`` (for MCP environments), its module imported on the first call."""
    return importlib.import_module(MCP_ENVIRONMENT).get_server_tools(*args, **kwargs)


def _not_loaded(name: str) -> Any:
    """Any other name of the MCP stand-in: missing, as OpenEnv's package expects when fastmcp is not installed."""
    if name.startswith("__"):
        raise AttributeError(name)  # the import system's own questions (``__path__``: not a package)
    raise ModuleNotFoundError(f"{MCP_ENVIRONMENT}.{name} is loaded when used, not at start", name=MCP_ENVIRONMENT)


def load_env_server() -> types.ModuleType:
    """``openenv.core.env_server``, imported without its web interface and MCP environment (see the module docstring)."""
    if ENV_SERVER in sys.modules:
        return sys.modules[ENV_SERVER]
    stand_in = types.ModuleType(MCP_ENVIRONMENT)
    # The stand-in's names live in its namespace, as a module's do (PEP 562 reads a module's __getattr__ from there).
    vars(stand_in).update(get_server_tools=get_server_tools, __getattr__=_not_loaded)
    sys.modules[WEB_INTERFACE] = None  # type: ignore[assignment]  # an import of it raises ModuleNotFoundError
    sys.modules[MCP_ENVIRONMENT] = stand_in
    try:
        return importlib.import_module(ENV_SERVER)
    except ImportError:
        # This openenv-core needs more at load than the stand-ins give: forget the half-loaded package, load it whole.
        for name in [name for name in sys.modules if name == "openenv.core" or name.startswith("openenv.core.")]:
            del sys.modules[name]
        sys.modules.pop(WEB_INTERFACE, None)
        return importlib.import_module(ENV_SERVER)
    finally:
        for name, placeholder in ((WEB_INTERFACE, None), (MCP_ENVIRONMENT, stand_in)):
            if name in sys.modules and sys.modules[name] is placeholder:
                del sys.modules[name]


load_env_server()
from openenv.core.env_server import Action, Environment, HTTPEnvServer, Observation, State  # noqa: E402
from openenv.core.env_server.types import EnvironmentMetadata  # noqa: E402

__all__ = ["Action", "Environment", "EnvironmentMetadata", "HTTPEnvServer", "Observation", "State", "load_env_server"]
