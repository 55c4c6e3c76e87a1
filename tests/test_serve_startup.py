"""``parlour serve`` starts without OpenEnv's Gradio web UI and MCP client (issue 37), and OpenEnv still works whole."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("gradio", "fastmcp", "mcp")


def loaded_after(code: str) -> list[str]:
    """The top-level packages of :data:`HEAVY` loaded once ``code`` has run in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r}))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip().splitlines()[-1])


def test_the_server_and_its_app_load_without_gradio_or_mcp():
    assert loaded_after("import parlour.bridges.openenv_server") == []
    app = "from parlour.bridges.openenv_server import create_app\ncreate_app('parlour/TicTacToe-v0')"
    assert loaded_after(app) == []


def test_openenv_s_web_interface_and_mcp_module_still_import_when_asked_for():
    code = (
        "import parlour.bridges.openenv_server\n"
        "from openenv.core.env_server.mcp_environment import MCPEnvironment, get_server_tools\n"
        "from openenv.core.env_server.web_interface import create_web_interface_app\n"
        "from openenv.core.env_server import http_server\n"
        "assert MCPEnvironment.__name__ == 'MCPEnvironment' and callable(create_web_interface_app)\n"
        "assert http_server.get_server_tools is not get_server_tools and callable(http_server.get_server_tools)"
    )
    assert set(loaded_after(code)) == {"gradio", "fastmcp", "mcp"}
