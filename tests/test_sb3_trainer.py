"""The SB3 self-play trainer: it learns TicTacToe, its policy is an agent spec everywhere, and its parts are right.

The learning test trains MaskablePPO by self-play on TicTacToe with a fixed
seed, one torch thread and deterministic algorithms, and checks the final
policy (greedy) against ``random`` over both seats and against its own first
snapshot. Its bars hold for every seed measured, since another machine's
kernels round differently and so take another path from the same seed. The rest checks the league's PFSP
weights, the Wilson interval, OpenSpiel exploitability on known policies, the
``sb3:`` spec (errors, replay from agent seeds, the Gymnasium face) and the
command's outputs.
"""

from __future__ import annotations

import csv
import json
import time

import gymnasium
import numpy as np
import pytest

import parlour
from parlour.baselines.train.evaluation import strong_agent, wilson
from parlour.baselines.train.league import League
from parlour.cli import main

pytest.importorskip("sb3_contrib")

TTT = "parlour/TicTacToe-v0"
KUHN = "parlour/KuhnPoker-v0"
#: The learning test's settings: the trainer's defaults (a 128x128 net, PFSP over random and the learner's
#: snapshots), 100k steps, one fixed seed; evaluations kept small.
TTT_SETTINGS = {
    "steps": 100_000,
    "seed": 0,
    "eval_every": 51_200,
    "eval_episodes": 40,
    "anchors": ["random"],
    "opponents": ["random"],
    "deterministic": True,
    "progress": False,
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory, deterministic_torch):
    """A TicTacToe policy trained by self-play (the slow part of this file), with its summary and wall time."""
    from parlour.baselines.train.sb3 import SB3TrainConfig, train_sb3

    out = tmp_path_factory.mktemp("ttt")
    started = time.perf_counter()
    summary = train_sb3(SB3TrainConfig(env_id=TTT, out=out, **TTT_SETTINGS))
    return out, summary, time.perf_counter() - started


def test_self_play_learns_tic_tac_toe(trained) -> None:
    out, summary, seconds = trained
    policy = f"sb3:{out / 'policy.zip'}"
    results = parlour.evaluate(TTT, [policy, "random"], episodes=1000, seed=7, progress=False)
    block = results.summary[policy]
    print(
        f"trained in {seconds:.0f} s ({summary['metadata']['cpu_seconds']:.0f} CPU s); non-losing vs random {1 - block['loss_rate']:.3f} by seat "
        f"{ {seat: 1 - b['loss_rate'] for seat, b in block['seats'].items()} }"
    )
    # Over training seeds 0-7 (400 evaluation games each) it did not lose 0.925-0.985 of its games, and beat its first
    # snapshot 31:2 at worst; a policy that had not learnt stays near random's 0.56. The bars leave room for a
    # machine whose rounding takes the run down another path.
    assert 1 - block["loss_rate"] >= 0.88
    first = next(row for row in summary["final"] if row["opponent"] == "snapshot@0")
    assert first["wins"] > 2 * first["losses"]
    # The periodic evaluation saw it improve against random.
    rows = [row for row in csv.DictReader((out / "eval.csv").open()) if row["opponent"] == "random"]
    assert [int(row["timesteps"]) for row in rows] == [0, 51_200, summary["metadata"]["steps"]]
    assert float(rows[-1]["non_loss_rate"]) > float(rows[0]["non_loss_rate"])


def test_checkpoint_is_an_agent_spec_everywhere(trained) -> None:
    out, summary, _ = trained
    spec = f"sb3:{out / 'policy.zip'}"
    metadata = json.loads((out / "policy.json").read_text())
    assert metadata["env_id"] == TTT and metadata["moves"][0] == "a1" and metadata["steps"] == summary["metadata"]["steps"]
    results = parlour.evaluate(TTT, [spec, "minimax"], episodes=4, seed=1, progress=False)
    for record in results.records:
        seat = next(seat for seat, name in record["agents"].items() if name == spec)
        assert all(step["error"] is None for step in record["steps"] if step["player"] == seat)
        # Re-run from the recorded agent seed, the policy makes the recorded moves (what the leaderboard checks).
        parlour.replay(record, agents={seat: parlour.make_agent(spec, env_id=TTT)})
    env = gymnasium.make(TTT, opponent=spec, seat=1)
    env.reset(seed=3)
    assert env.unwrapped.match.steps[0]["player"] == "player_0" and env.unwrapped.match.steps[0]["error"] is None
    assert main(["eval", TTT, "--agent", spec, "--opponent", "random", "--episodes", "2", "--out", str(out / "bundle"), "--quiet"]) == 0


def test_sb3_spec_errors_name_the_fix(trained, tmp_path) -> None:
    out, _, _ = trained
    with pytest.raises(FileNotFoundError, match="parlour train sb3"):
        parlour.make_agent(f"sb3:{tmp_path / 'missing.zip'}", env_id=TTT)
    with pytest.raises(ValueError, match="trained on parlour/TicTacToe-v0"):
        parlour.make_agent(f"sb3:{out / 'policy.zip'}", env_id="parlour/Nim-v0")
    assert main(["eval", "parlour/Nim-v0", "--agent", f"sb3:{out / 'policy.zip'}", "--episodes", "1", "--out", str(tmp_path / "b")]) == 2
    agent = parlour.make_agent(f"sb3:{out / 'policy.zip'}", env_id=TTT)
    with pytest.raises(ValueError, match="needs the vector observation"):
        agent.act({"legal_moves": ["a1"], "text": ""})


def test_pfsp_weights_favour_the_opponents_the_learner_loses_to() -> None:
    league = League(power=2.0, floor=0.05, window=4, max_snapshots=2)
    strong, weak = league.add("strong", object()), league.add("weak", object())
    for score in (0.0, 0.0, 0.5, 1.0):  # mean 0.375: weight 0.625^2
        league.report(strong, score)
    for score in (1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0):  # the window keeps the last 4: mean 1, weight at the floor
        league.report(weak, score)
    assert strong.score() == 0.375 and weak.score() == 1.0 and weak.games == 9
    np.testing.assert_allclose(league.weights(), np.array([0.390625, 0.05]) / 0.440625)
    draws = [league.draw(np.random.default_rng(seed)).name for seed in range(400)]
    assert 0.8 < draws.count("strong") / 400 < 0.95
    for n in range(4):
        league.add(f"snapshot {n}", object(), "snapshot")
    assert [m.name for m in league.members] == ["strong", "weak", "snapshot 0", "snapshot 3"]


def test_wilson_interval_and_strong_agents() -> None:
    low, high = wilson(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0) and wilson(10, 10)[1] == pytest.approx(1.0) and wilson(0, 10)[0] == 0.0
    assert strong_agent(TTT) == "minimax" and strong_agent(KUHN) == "nash" and strong_agent("parlour/Nim-v0") == "nim_sum"


def kuhn_nash(vectors: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Kuhn poker's equilibrium with alpha = 0, read from parlour's vector (seat, card, then pass/bet per action)."""
    probs = np.zeros(masks.shape)
    for row, (vector, mask) in enumerate(zip(vectors, masks)):
        seat, card = int(np.argmax(vector[:2])), int(np.argmax(vector[2:5]))  # card 0 J, 1 Q, 2 K
        if mask[0]:  # check (0) or bet (1): first to act, or player 1 after a check
            bet = {0: 0.0, 1: 0.0, 2: 0.0}[card] if seat == 0 else {0: 1 / 3, 1: 0.0, 2: 1.0}[card]
            probs[row, [0, 1]] = [1 - bet, bet]
        else:  # fold (2) or call (3), facing a bet
            call = {0: 0.0, 1: 1 / 3, 2: 1.0}[card]
            probs[row, [2, 3]] = [1 - call, call]
    return probs


def test_exploitability_of_known_kuhn_and_leduc_policies() -> None:
    pytest.importorskip("pyspiel")
    from parlour.evaluation.exploitability import exploitability, supported

    def uniform(vectors: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return masks / masks.sum(axis=1, keepdims=True)

    kuhn_moves = ["check", "bet", "fold", "call"]
    # OpenSpiel's own figures for the uniform policy.
    assert exploitability(KUHN, uniform, kuhn_moves) == pytest.approx(0.458333, abs=1e-5)
    assert exploitability("parlour/LeducHoldem-v0", uniform, ["fold", "call", "raise"]) == pytest.approx(2.373611, abs=1e-5)
    # The equilibrium is unexploitable only if every information state was translated to the right vector.
    assert exploitability(KUHN, kuhn_nash, kuhn_moves) == pytest.approx(0.0, abs=1e-9)
    assert supported(KUHN) and not supported(TTT) and not supported(KUHN, {"error_allowance": 0})


def test_train_command_writes_policy_curves_and_exploitability(tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "kuhn"
    argv = [
        "train",
        "sb3",
        KUHN,
        "--steps",
        "512",
        "--n-envs",
        "2",
        "--n-steps",
        "128",
        "--batch-size",
        "64",
        "--epochs",
        "2",
        "--eval-every",
        "256",
        "--eval-episodes",
        "20",
        "--snapshot-every",
        "256",
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "exploitability" in printed and f"sb3:{out / 'policy.zip'}" in printed
    assert {p.name for p in out.iterdir()} >= {
        "policy.zip",
        "policy.json",
        "eval.csv",
        "train.csv",
        "learning.png",
        "learning_time.png",
        "league.json",
    }
    rows = list(csv.DictReader((out / "eval.csv").open()))
    assert {row["opponent"] for row in rows} == {"random", "nash", "best response", "snapshot@0"}
    assert all(0 <= float(row["exploitability"]) < 1 for row in rows if row["opponent"] == "best response")
    assert len([row for row in rows if row["opponent"] == "best response"]) == 3  # before, after 256 steps, at the end
    train_rows = list(csv.DictReader((out / "train.csv").open()))
    assert [int(row["update"]) for row in train_rows] == [1, 2]
    league = json.loads((out / "league.json").read_text())
    assert {"random", "nash", "snapshot@0"} <= {member["name"] for member in league}
    assert main(["train", "sb3", "parlour/Bargaining-v0", "--steps", "10", "--out", str(tmp_path / "x"), "--quiet"]) == 2
    assert "no enumerable moves" in capsys.readouterr().err
