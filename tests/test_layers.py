"""The house's layers, read from the imports: each layer imports only the layers below it, and no module
imports itself back through others (no import circles).

Every ``import`` counts, at module level, inside functions and under ``TYPE_CHECKING`` alike: a lazy
import is still a dependency, and a circle that only type checkers see is still a circle a reader follows.
docs/architecture.md draws the same layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# setuptools' package-dir, read the same way: which folder holds which import package.
PACKAGE_DIRS = {
    "parlour": "parlour",
    "parlour.envs": "envs",
    "parlour.wrappers": "wrappers",
    "parlour.baselines": "baselines",
    "parlour.leaderboard": "leaderboard",
    "parlour.evaluation": "evaluation",
    "parlour.bridges": "bridges",
}

# Lowest first. A module belongs to the first layer one of whose prefixes it starts with, most specific first.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("parlour.version", "parlour.envs.core", "parlour.envs.registry", "parlour.sandbox", "parlour.sandbox_server")),
    ("environments", ("parlour.envs",)),
    ("agents", ("parlour.agents", "parlour.wrappers", "parlour.baselines")),
    ("evaluation", ("parlour.evaluation",)),
    ("leaderboard, trainers and bridges", ("parlour.leaderboard", "parlour.baselines.train", "parlour.export", "parlour.bridges")),
    ("commands", ("parlour.cli", "parlour.commands", "parlour")),
]


def layer_of(module: str) -> int:
    """The index in LAYERS of the layer a module belongs to (its longest matching prefix decides)."""
    best, best_length = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    assert best is not None, f"{module} is in no layer: add it to LAYERS and docs/architecture.md"
    return best


def modules() -> dict[str, Path]:
    """Every module of the parlour package, by dotted name, from the folders setuptools maps."""
    found = {}
    for package, folder in PACKAGE_DIRS.items():
        base = ROOT / folder
        for path in base.rglob("*.py"):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join([package, *parts])
            if package == "parlour" and parts and ".".join(["parlour", parts[0]]) in PACKAGE_DIRS:
                continue
            found[name] = path
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The parlour modules a module imports, anywhere in its source; ``from a import b`` counts ``a.b`` when it is a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    targets = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in names:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target.startswith("parlour") and target != name:
                targets.add(target)
    return targets


def import_graph() -> dict[str, set[str]]:
    """Module -> the parlour modules it imports (package ``__init__`` files that only re-export count too)."""
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


GRAPH = import_graph()


def test_every_module_has_a_layer():
    for name in GRAPH:
        layer_of(name)


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_imports_only_downward(name):
    own = layer_of(name)
    upward = sorted(t for t in GRAPH[name] if layer_of(t) > own)
    assert not upward, f"{name} ({LAYERS[own][0]}) imports from a higher layer: " + ", ".join(f"{t} ({LAYERS[layer_of(t)][0]})" for t in upward)


def test_environments_never_name_an_agent():
    for name, targets in GRAPH.items():
        if name.startswith("parlour.envs"):
            named = sorted(t for t in targets if t.startswith(("parlour.agents", "parlour.wrappers", "parlour.baselines")))
            assert not named, f"{name} imports {named}: the core takes an agent resolver instead"


#: Other trainers' and harnesses' libraries: only the bridges and the trainers adapt parlour to them.
TRAINER_LIBRARIES = ("stable_baselines3", "sb3_contrib", "trl", "verifiers", "openenv", "mcp")


def test_the_core_and_the_environments_hold_no_trainers_adapter():
    """The SB3 VecEnv view sat in the core's vector face; it is a bridge (parlour.bridges.sb3)."""
    for name, path in modules().items():
        if layer_of(name) > layer_of("parlour.envs"):
            continue
        libraries = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                libraries |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                libraries.add(node.module.split(".")[0])
        assert not libraries & set(TRAINER_LIBRARIES), f"{name} imports {sorted(libraries & set(TRAINER_LIBRARIES))}: move the adapter to bridges/"


def test_evaluation_imports_nothing_from_the_leaderboard():
    for name, targets in GRAPH.items():
        if name.startswith("parlour.evaluation"):
            assert not [t for t in targets if t.startswith("parlour.leaderboard")], name


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module: the import circles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def test_no_import_circles():
    assert strongly_connected(GRAPH) == []


def test_the_checker_sees_a_circle_and_an_upward_import():
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer_of("parlour.envs.core.gym") < layer_of("parlour.agents")
