"""Type-check parlour as it is installed (``parlour.envs`` is the folder ``envs/``, and so on), and the benchmarks.

setuptools maps the import package onto the repository's top-level folders (``package-dir`` in
pyproject.toml), a mapping mypy cannot read, so checking the folders themselves hides ``parlour.envs.core``
and the rest from it. This script lays the installed layout out as symbolic links under
``build/typecheck/parlour`` (each mapped folder, and the files of ``parlour/``), then runs mypy on it and on
``benchmarks/`` (scripts that import the package as installed, and each other by name) with pyproject.toml's
``[tool.mypy]`` settings. Extra arguments go to mypy.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "typecheck"


def lay_out() -> Path:
    """The installed layout as links under ``build/typecheck``; returns the ``parlour`` folder there."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    shutil.rmtree(TREE, ignore_errors=True)
    package = TREE / "parlour"
    package.mkdir(parents=True)
    for entry in (ROOT / mapping["parlour"]).iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, folder in mapping.items():
        if name != "parlour":
            (package / name.removeprefix("parlour.")).symlink_to(ROOT / folder)
    return package


def main() -> int:
    """Lay the package out and run mypy on it and on the benchmarks; mypy's exit status."""
    package = lay_out()
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), str(package), str(ROOT / "benchmarks"), *sys.argv[1:]]
    return subprocess.call(command, cwd=TREE)


if __name__ == "__main__":
    sys.exit(main())
