"""Agent schemes are a registry: parlour's own (hf:, openai:, sb3:, python:) and a user's are found the same way,
and an agent given as a spec string or as an AgentSpec is built the same number of times on every path."""

from __future__ import annotations

from typing import Any

import pytest

import parlour
from parlour.agents import AgentSpec, agent_schemes, check_agent_spec, is_batching, make_agent, register_agent_scheme
from parlour.evaluation import rollout
from parlour.evaluation.rollout import make_plan


class _Echo:
    """A one-move agent for a user's scheme."""

    def __init__(self, move: str):
        self.move = move
        self.name = "echo"

    def act(self, observation: Any) -> str:
        return self.move


def _build(spec: str, env_id: str | None, name: str, options: Any) -> _Echo:
    return _Echo(spec.partition(":")[2] or "0")


def _check(spec: str, env_id: str, options: Any) -> list[str]:
    return [] if spec.partition(":")[2] else [f"{spec}: no move given, playing 0"]


def test_a_users_scheme_builds_and_checks_its_specs() -> None:
    scheme = register_agent_scheme(parlour.AgentScheme("echo", _build, _check, "always the same move: echo:MOVE"))
    assert agent_schemes()["echo"] is scheme
    agent = make_agent("echo:1", "parlour/Nim-v0")
    assert isinstance(agent, _Echo) and agent.name == "echo:1" and agent.act(None) == "1"
    assert check_agent_spec("echo:", "parlour/Nim-v0") == ["echo:: no move given, playing 0"]
    # Registering the same scheme again is harmless; another scheme under the prefix is refused.
    register_agent_scheme(scheme)
    with pytest.raises(ValueError, match="already registered"):
        register_agent_scheme(parlour.AgentScheme("echo", _build, _check, "another"))


def test_an_unknown_scheme_names_the_closest_one() -> None:
    with pytest.raises(ValueError, match=r"no agent scheme 'hff' \(did you mean 'hf:'\?\)"):
        make_agent("hff:model", "parlour/Nim-v0")
    with pytest.raises(ValueError, match="no agent scheme 'pyhton'"):
        check_agent_spec("pyhton:pkg.mod:factory", "parlour/Nim-v0")
    with pytest.raises(ValueError, match="identifier"):
        register_agent_scheme(parlour.AgentScheme("my lab", _build, _check, "bad prefix"))


def test_batching_is_known_from_the_scheme_for_strings_and_agent_specs() -> None:
    for spec in ("hf:/no/such/model", AgentSpec("hf:/no/such/model", kwargs={"mode": "generate"}), "openai:m@http://127.0.0.1:9/v1"):
        assert is_batching(spec)
    for spec in ("random", "python:pkg.mod:factory", AgentSpec("sb3:policy.zip"), _Echo("1")):
        assert not is_batching(spec)


def test_equal_agent_specs_in_two_seats_are_one_agent() -> None:
    """Two equal AgentSpecs used to build two models: equal specs, strings or not, share one agent."""
    spec = AgentSpec("random", kwargs={}, name="mine")
    plan = make_plan("parlour/TicTacToe-v0", {"player_0": spec, "player_1": AgentSpec("random", kwargs={}, name="mine")})
    assert plan.specs == [spec] and plan.lineup == [0, 0]
    plan = make_plan("parlour/TicTacToe-v0", {"player_0": "random", "player_1": "random"})
    assert plan.specs == ["random"] and plan.lineup == [0, 0]


@pytest.mark.parametrize("spec", ["hf:/no/such/model", AgentSpec("hf:/no/such/model", kwargs={"mode": "generate"})])
def test_an_llm_spec_goes_to_the_workers_unbuilt_however_it_is_given(spec: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An AgentSpec with options used to be built (its model loaded) in the parent before the workers; a bare string was not."""
    spawned: list[list[int]] = []

    def fake_spawn(plan: Any, indices: list[int], workers: int, totals: Any) -> tuple[list[Any], Any]:
        spawned.append(indices)
        return [], iter(())

    def no_build(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the agent was built in the parent")

    monkeypatch.setattr(rollout, "_spawn", fake_spawn)
    monkeypatch.setattr(rollout, "Rollout", no_build)
    plan = make_plan("parlour/TicTacToe-v0", [spec, "random"], in_flight=2)
    assert list(rollout.play_in_workers(plan, list(range(8)), 2, [{}, {}])) == []
    assert spawned == [list(range(8))]


def _publish(tmp_path, monkeypatch, module: str, source: str, entries: str) -> None:
    """Install a package on ``sys.path`` that publishes ``entries`` (lines ``name = module:attr``) under ``parlour.agents``."""
    (tmp_path / f"{module}.py").write_text(source, encoding="utf-8")
    dist = tmp_path / f"{module}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(f"[parlour.agents]\n{entries}\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))


def test_a_scheme_published_through_an_entry_point_builds_and_a_broken_one_is_left_out(tmp_path, monkeypatch) -> None:
    import parlour.agents as agents

    source = (
        "from parlour.agents import AgentScheme\n"
        "class Constant:\n"
        "    def __init__(self, move): self.move = move\n"
        "    def act(self, observation): return self.move\n"
        "SCHEME = AgentScheme('published', lambda spec, env_id, name, options: Constant(spec.partition(':')[2]), "
        "lambda spec, env_id, options: [], 'a published scheme: published:MOVE')\n"
        "BROKEN = 'not a scheme'\n"
    )
    _publish(tmp_path, monkeypatch, "published_scheme", source, "published = published_scheme:SCHEME\nbroken = published_scheme:BROKEN")
    agents._load_entry_points.cache_clear()
    try:
        # Another package's broken scheme is named in a warning and does not take the others (or parlour's own) down.
        with pytest.warns(UserWarning, match=r"parlour\.agents entry point 'broken' \(published_scheme:BROKEN\) failed to load"):
            schemes = agent_schemes()
        assert schemes["published"].summary == "a published scheme: published:MOVE" and "hf" in schemes
        assert make_agent("published:take 1 from heap 1", "parlour/Nim-v0").act(None) == "take 1 from heap 1"
    finally:
        agents._load_entry_points.cache_clear()
        agents._SCHEMES.pop("published", None)
