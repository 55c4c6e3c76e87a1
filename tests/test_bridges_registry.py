"""Bridges are a registry, as games and agent schemes are: parlour's own and a user's are listed and loaded the same
way, a missing library is one error naming the extra to install, and listing them imports no optional library."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

import parlour.bridges as registry
from parlour.bridges import Bridge, BridgeNotInstalled, bridges, load_bridge, register_bridge
from parlour.cli import main

ROOT = Path(__file__).resolve().parent.parent
BUILT_IN = {"openenv", "mcp", "verifiers", "trl", "browser", "sb3"}
#: The libraries of the built-in bridges: none may be imported to list them.
OPTIONAL = ("openenv", "fastapi", "uvicorn", "mcp", "mcp_types", "verifiers", "trl", "browsergym", "playwright", "stable_baselines3")
GHOST = Bridge("ghost", "a bridge whose library is not installed", "parlour-ghost[serve]", ("parlour_no_such_library",), "parlour_ghost:serve")


@pytest.fixture(autouse=True)
def own_registry(monkeypatch):
    """Each test registers into a copy of the registry, so a user's bridge does not outlive its test."""
    monkeypatch.setattr(registry, "_BRIDGES", dict(registry._BRIDGES))


def test_the_built_in_bridges_are_listed_with_extras_of_pyproject():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    found = bridges()
    assert BUILT_IN <= set(found)
    for name in BUILT_IN:
        bridge = found[name]
        assert bridge.extra.removeprefix("parlour[").removesuffix("]") in extras, bridge
        module = bridge.entry.partition(":")[0]
        assert (ROOT / "bridges" / (module.removeprefix("parlour.bridges.") + ".py")).is_file(), bridge.entry


def test_an_installed_bridge_loads_its_entry():
    pytest.importorskip("stable_baselines3")
    from parlour.bridges.sb3 import sb3_vec_env

    assert not bridges()["sb3"].missing()
    assert load_bridge("sb3") is sb3_vec_env


def test_listing_and_the_command_import_no_optional_library():
    script = f"import sys\nfrom parlour.cli import main\nmain(['bridges'])\nprint('imported:', sorted(m for m in {OPTIONAL!r} if m in sys.modules))\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "imported: []", done.stdout
    assert all(name in done.stdout for name in BUILT_IN)


def test_a_bridge_published_through_an_entry_point_is_listed_and_loads(tmp_path, monkeypatch, capsys):
    (tmp_path / "published_bridge.py").write_text(
        textwrap.dedent(
            """
            from parlour.bridges import Bridge

            BRIDGE = Bridge("echo", "answers what it is sent", "published-bridge", (), "published_bridge:open_bridge")


            def open_bridge(text):
                return text
            """
        ),
        encoding="utf-8",
    )
    dist = tmp_path / "published_bridge-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: published-bridge\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[parlour.bridges]\necho = published_bridge:BRIDGE\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry._load_entry_points.cache_clear()
    try:
        assert bridges()["echo"].summary == "answers what it is sent"
        assert load_bridge("echo")("hello") == "hello"
        assert main(["bridges"]) == 0
        echo = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("echo "))
        assert echo.split()[1:3] == ["yes", "published-bridge"]
    finally:
        registry._load_entry_points.cache_clear()


def test_a_bridge_whose_library_is_missing_names_the_extra_to_install(capsys):
    register_bridge(GHOST)
    with pytest.raises(BridgeNotInstalled, match=r"the ghost bridge needs parlour_no_such_library.*pip install 'parlour-ghost\[serve\]'"):
        load_bridge("ghost")
    # A library the bridge imports without declaring it is caught when its entry is imported, with the same hint.
    register_bridge(replace(GHOST, name="ghost-entry", requires=(), entry="parlour.bridges.no_such_module:serve"))
    with pytest.raises(BridgeNotInstalled, match=r"could not import 'parlour.bridges.no_such_module': pip install 'parlour-ghost\[serve\]'"):
        load_bridge("ghost-entry")
    assert main(["bridges"]) == 0
    out = capsys.readouterr().out
    assert next(line for line in out.splitlines() if line.startswith("ghost ")).split()[1:3] == ["no", "parlour-ghost[serve]"]
    assert "ghost needs parlour_no_such_library, parlour_ghost: pip install 'parlour-ghost[serve]'" in out


@pytest.mark.parametrize(("command", "name"), [(["serve", "parlour/TicTacToe-v0"], "openenv"), (["mcp", "parlour/Search-v0"], "mcp")])
def test_serve_and_mcp_without_their_bridge_say_what_to_install(command, name, capsys):
    registry._BRIDGES[name] = replace(registry._BRIDGES[name], requires=("parlour_no_such_library",))
    assert main(command) == 2
    err = capsys.readouterr().err
    assert f"the {name} bridge needs parlour_no_such_library, which is not installed: pip install 'parlour[bridges]'" in err
    assert "Traceback" not in err


def test_a_misspelt_bridge_names_the_closest_one():
    with pytest.raises(KeyError, match=r"no bridge 'opnenv' \(did you mean 'openenv'\?\); bridges: .*sb3"):
        load_bridge("opnenv")


def test_register_refuses_a_taken_name_and_a_malformed_entry():
    assert register_bridge(GHOST) is GHOST
    assert register_bridge(GHOST) is GHOST  # the same bridge again is harmless
    with pytest.raises(ValueError, match="already registered"):
        register_bridge(replace(GHOST, summary="another"))
    with pytest.raises(ValueError, match="'package.module:attribute'"):
        register_bridge(replace(GHOST, name="ghost2", entry="parlour_ghost.serve"))
    with pytest.raises(ValueError, match="lower-case"):
        register_bridge(replace(GHOST, name="My Bridge"))
    with pytest.raises(TypeError, match="takes a parlour.bridges.Bridge"):
        register_bridge("openenv")  # type: ignore[arg-type]
