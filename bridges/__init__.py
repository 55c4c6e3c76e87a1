"""parlour.bridges: parlour environments spoken in the protocols other trainers and harnesses use.

Each bridge is a thin adapter over the same games, faces and records as the
rest of parlour, and hands back per-turn rewards and the episode's record so
every training run can still be replayed. Each needs its extra (``pip install
'parlour[bridges]'``, ``'parlour[browser]'`` or ``'parlour[sb3]'``) and imports
its library only when used.

The bridges are a registry, as games and agent schemes are: a :class:`Bridge`
record names each one, the extra it needs, the libraries that must import and
its entry (``module:attr``). :func:`bridges` lists parlour's own and those
other packages publish under the entry-point group ``parlour.bridges`` (each
entry point loads a :class:`Bridge`); :func:`register_bridge` adds one at run
time; :func:`load_bridge` imports a bridge's entry, or says which extra to
install. Listing them imports no optional library: whether a bridge is
installed is read from where its libraries would be found (:meth:`Bridge.missing`).
``parlour bridges`` prints the list; ``parlour serve`` and ``parlour mcp``
load their bridge through :func:`load_bridge`.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import re
from dataclasses import dataclass
from typing import Any

from parlour.envs.core.errors import did_you_mean
from parlour.envs.core.plugins import load_published


@dataclass(frozen=True)
class Bridge:
    """One bridge: its name, what it does in a line, the extra it needs, the libraries that must import, its entry.

    ``extra`` is what to install for it, as pip takes it (``"parlour[bridges]"``;
    another package's bridge names its own). ``requires`` are the top-level
    modules its entry imports (``"openenv"``, ``"fastapi"``, ...); ``entry`` is
    ``"module:attr"``, what :func:`load_bridge` returns.
    """

    name: str
    summary: str
    extra: str
    requires: tuple[str, ...]
    entry: str

    def missing(self) -> list[str]:
        """The modules of ``requires`` (and the entry's own package) that cannot be found here; none are imported."""
        modules = [*self.requires, self.entry.partition(":")[0].split(".")[0]]
        return [module for module in dict.fromkeys(modules) if not _findable(module)]

    def install_hint(self) -> str:
        """The command that installs what the bridge needs."""
        return f"pip install '{self.extra}'"


class BridgeNotInstalled(ImportError):
    """A bridge whose libraries are not installed; the message names the extra to install."""


#: The entry-point group through which other packages publish bridges.
BRIDGE_GROUP = "parlour.bridges"
_NAME = re.compile(r"[a-z][a-z0-9_-]*")
_BRIDGES: dict[str, Bridge] = {}


def _findable(module: str) -> bool:
    """Whether top-level ``module`` can be imported, read from the import system's finders without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        # A module already imported without a spec, or a broken package: it will not import cleanly either.
        return False


def register_bridge(bridge: Bridge) -> Bridge:
    """Add ``bridge`` to the registry; returns it. A name already taken by another bridge is refused."""
    if not isinstance(bridge, Bridge):
        raise TypeError(f"register_bridge() takes a parlour.bridges.Bridge, got {type(bridge).__name__}")
    if not _NAME.fullmatch(bridge.name):
        raise ValueError(f"a bridge's name is lower-case letters, digits, '-' and '_', starting with a letter, such as 'mylab'; got {bridge.name!r}")
    module, colon, attr = bridge.entry.partition(":")
    if not (module and colon and attr):
        raise ValueError(f"bridge {bridge.name!r}: entry must read 'package.module:attribute', got {bridge.entry!r}")
    known = _BRIDGES.get(bridge.name)
    if known is not None and known != bridge:
        raise ValueError(f"bridge {bridge.name!r} is already registered ({known.summary}); choose another name")
    _BRIDGES[bridge.name] = bridge
    return bridge


@functools.cache
def _load_entry_points() -> None:
    """Register the bridges other packages publish under :data:`BRIDGE_GROUP` (once)."""
    load_published(BRIDGE_GROUP, register_bridge)


def bridges() -> dict[str, Bridge]:
    """Every registered bridge by name: parlour's own, then those of installed packages' entry points and :func:`register_bridge`."""
    _load_entry_points()
    return dict(_BRIDGES)


def bridge_named(name: str) -> Bridge:
    """The bridge registered as ``name``; a ``KeyError`` naming the closest one and every bridge otherwise."""
    known = bridges()
    if name not in known:
        raise KeyError(f"no bridge {name!r}{did_you_mean(name, known)}; bridges: {', '.join(sorted(known))} (`parlour bridges` lists them)")
    return known[name]


def load_bridge(name: str) -> Any:
    """Import bridge ``name`` and return its entry; :class:`BridgeNotInstalled` naming the extra to install when it cannot."""
    bridge = bridge_named(name)
    missing = bridge.missing()
    if missing:
        raise BridgeNotInstalled(
            f"the {name} bridge needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not installed: {bridge.install_hint()}"
        )
    module_name, _, attr = bridge.entry.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        # A library the bridge imports beyond those it declares (or one of theirs) is missing.
        raise BridgeNotInstalled(f"the {name} bridge could not import {error.name or module_name!r}: {bridge.install_hint()}") from error
    try:
        return getattr(module, attr)
    except AttributeError:
        raise AttributeError(f"bridge {name!r}: module {module_name!r} has no {attr!r} (its entry is {bridge.entry!r})") from None


#: parlour's own bridges, registered when this package is imported.
BUILT_IN = (
    Bridge(
        "openenv",
        "an OpenEnv server: OpenEnv's HTTP and WebSocket API, one seat per client session (parlour serve)",
        "parlour[bridges]",
        ("openenv", "fastapi", "uvicorn", "websockets"),
        "parlour.bridges.openenv_server:serve",
    ),
    Bridge(
        "mcp",
        "one seat as a Model Context Protocol server over stdio, for MCP-capable harnesses (parlour mcp)",
        "parlour[bridges]",
        ("mcp", "mcp_types", "anyio"),
        "parlour.bridges.mcp_server:mcp_server",
    ),
    Bridge(
        "verifiers",
        "the verifiers taskset parlour_verifiers: vf-eval and prime-rl play any environment, a trace per seat",
        "parlour[bridges]",
        ("verifiers",),
        "parlour.bridges.verifiers_env:ParlourTaskset",
    ),
    Bridge(
        "trl",
        "TRL's GRPOTrainer(environment_factory=...): the game's tools as typed methods, per-turn rewards",
        "parlour[bridges]",
        ("trl",),
        "parlour.bridges.trl:environment_class",
    ),
    Bridge(
        "browser",
        "the Shop in headless Chromium, played with BrowserGym's actions (needs Chromium too)",
        "parlour[browser]",
        ("browsergym", "playwright"),
        "parlour.bridges.browser:ShopBrowserEnv",
    ),
    Bridge(
        "sb3",
        "the batched vector face as a stable-baselines3 VecEnv, which sb3_contrib's MaskablePPO trains on",
        "parlour[sb3]",
        ("stable_baselines3",),
        "parlour.bridges.sb3:sb3_vec_env",
    ),
)
for _built_in in BUILT_IN:
    register_bridge(_built_in)
