"""Every example in the README runs, and the README lists every environment."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import parlour

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
EXAMPLES = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)


def test_readme_has_examples_and_the_two_commands():
    assert len(EXAMPLES) >= 3
    assert "make demo" in README and "make test" in README


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_readme_example_runs(index, capsys):
    exec(compile(EXAMPLES[index], f"README example {index + 1}", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip(), "every README example prints something"


@pytest.mark.parametrize("env_id", parlour.list_envs())
def test_readme_lists_every_environment(env_id):
    assert f"`{env_id}`" in README
