"""``parlour train llm --roles FILE.toml``: the model per role from a file, its errors, and a run trained from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parlour.cli import main
from parlour.commands.train import read_roles

#: Small enough to run in seconds: one update of four Nim games, two evaluation games.
SMALL = [
    "--updates",
    "1",
    "--episodes",
    "4",
    "--group-size",
    "2",
    "--eval-episodes",
    "2",
    "--opponent",
    "random",
    "--device",
    "cpu",
    "--dtype",
    "float32",
    "--quiet",
]


def roles_file(tmp_path: Path, text: str) -> str:
    """``text`` written as ``roles.toml``; its path."""
    path = tmp_path / "roles.toml"
    path.write_text(text)
    return str(path)


def test_a_table_per_role_gives_its_model_and_whether_it_is_frozen(tmp_path: Path) -> None:
    path = roles_file(tmp_path, '[solver]\nmodel = "models/b"\nfrozen = true\n\n[proposer]\nmodel = "Qwen/Qwen3-0.6B"\nfrozen = false\n')
    assert read_roles(path) == ({"solver": "models/b", "proposer": "Qwen/Qwen3-0.6B"}, ["solver"])
    assert read_roles(roles_file(tmp_path, '[a]\nmodel = "x"\n')) == ({"a": "x"}, [])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[solver]\nmodel = "a"\n\n[solver]\nmodel = "b"\n', "not valid TOML"),  # a role given twice
        ('[solver]\nmodel = "a"\nmodel = "b"\n', "not valid TOML"),  # a key given twice
        ('[solver]\nmodel = "a"\nfrozn = true\n', "role 'solver' has unknown keys 'frozn' (did you mean 'frozen'?); a role takes model and frozen"),
        ("[solver]\nfrozen = true\n", "role 'solver' has no model"),
        ('[solver]\nmodel = ""\n', "role 'solver' has no model"),
        ('[solver]\nmodel = "a"\nfrozen = "yes"\n', "write frozen = true or false"),
        ('solver = "models/a"\n', "'solver' is not a role table"),
        ("", "no roles"),
        ("[solver\n", "not valid TOML"),
    ],
)
def test_a_bad_file_is_refused_with_what_to_write(tmp_path: Path, text: str, message: str) -> None:
    path = roles_file(tmp_path, text)
    with pytest.raises(ValueError, match="--roles .*roles.toml: ") as refused:
        read_roles(path)
    assert message in str(refused.value)


def test_the_command_refuses_unknown_roles_missing_models_and_two_sources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from parlour.wrappers.tiny_model import make_tiny_model

    model = make_tiny_model(tmp_path / "tiny")
    base = ["train", "llm", "parlour/Nim-v0", "--out", str(tmp_path / "out"), *SMALL]
    cases = [
        (f'[player_0]\nmodel = "{model}"\n[solver]\nmodel = "{model}"\n', [], "roles solver play no seat; the seats are ['player_0', 'player_1']"),
        (f'[player_0]\nmodel = "{model}"\n[player_1]\nmodel = "{tmp_path / "nowhere"}"\n', [], "role 'player_1': no model folder"),
        (f'[player_0]\nmodel = "{model}"\n[player_1]\nmodel = "{model}"\n', ["--model", model], "not both"),
        (f'[player_0]\nmodel = "{model}"\nfrozen = true\n[player_1]\nmodel = "{model}"\n', ["--frozen", "player_1"], "every role is frozen"),
        (f'[player_0]\nmodel = "{model}"\n[player_1]\nmodel = "{model}"\n', ["--frozen", "judge"], "--frozen names roles given a model"),
    ]
    for text, extra, message in cases:
        assert main([*base, "--roles", roles_file(tmp_path, text), *extra]) == 2
        assert message in capsys.readouterr().err
    assert main([*base, "--roles", str(tmp_path / "missing.toml")]) == 2
    assert "no file" in capsys.readouterr().err
    assert main(base) == 2
    assert "give a model" in capsys.readouterr().err


def test_the_command_trains_the_roles_of_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from parlour.wrappers.tiny_model import make_tiny_model

    model = make_tiny_model(tmp_path / "tiny")
    out = tmp_path / "run"
    path = roles_file(tmp_path, f'[player_0]\nmodel = "{model}"\n\n[player_1]\nmodel = "{model}"\nfrozen = true\n')
    assert main(["train", "llm", "parlour/Nim-v0", "--roles", path, "--out", str(out), *SMALL]) == 0
    assert f"checkpoint of player_0: hf:{out / 'player_0'}" in capsys.readouterr().out
    settings = json.loads((out / "training.json").read_text())
    assert settings["roles"] == {"player_0": model, "player_1": model} and settings["frozen"] == ["player_1"]
    assert (out / "player_0" / "config.json").exists() and not (out / "player_1").exists()
