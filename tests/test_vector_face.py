"""The batched vector face agrees move by move with the one-episode game, and trains MaskablePPO through its SB3 view.

Two cross-checks, both playing random moves side by side:

* the rules: a game's batch class against one :class:`parlour.Match` per
  episode, both seats' moves, comparing the seat to act, the legal moves, both
  seats' vector observations, the rewards and the ends after every move;
* the face: ``gymnasium.make_vec(..., obs_mode="vector")`` against one
  ``gymnasium.make(..., obs_mode="vector")`` environment per episode, with the
  learner's seat drawn per episode, illegal moves and forfeits, truncation,
  autoreset, and a deterministic batched opponent policy that the one-episode
  face plays as an agent, comparing observations, masks, rewards,
  terminations, truncations and invalid-action flags after every step.

Chance: the batch deals from its own per-slot streams, the one-episode game
from its own generator, so the one-episode game is handed the batch's deal as
its episode starts (:func:`adopt_deal`, which knows each card game's state);
everything that follows, both games work out for themselves. Chance drawn
during play (Pig's dice, Goofspiel's prizes) is queued per slot as the batch
draws it (:class:`QueuedDraws`) and the one-episode game of that slot draws
the same, in the same order and from the same range.
"""

from __future__ import annotations

import random
import zlib
from typing import Any

import gymnasium
import numpy as np
import pytest

import parlour
from parlour.bridges.sb3 import sb3_vec_env
from parlour.envs.core.gym import GymGame
from parlour.envs.core.match import split_options
from parlour.envs.core.vector import Streams, VectorGame
from parlour.envs.games.goofspiel import Goofspiel
from parlour.envs.games.kuhn_poker import CARDS, KuhnPoker
from parlour.envs.games.leduc_holdem import LeducHoldem

CONFIGS = [
    ("TicTacToe", {}),
    ("ConnectFour", {}),
    ("ConnectFour", {"rows": 4, "columns": 5, "x_in_row": 3}),
    ("KuhnPoker", {}),
    ("LeducHoldem", {}),
    ("Nim", {}),
    ("Nim", {"heaps": [2, 3], "misere": True}),
]
IDS = [f"{name}{options or ''}" for name, options in CONFIGS]


def adopt_deal(game: parlour.Game, cards: np.ndarray) -> None:
    """Give a one-episode card game the batch's deal for its episode (the only chance in these games)."""
    if isinstance(game, KuhnPoker):
        game.cards = [CARDS[int(card)] for card in cards]
    elif isinstance(game, LeducHoldem):
        game.cards = [int(card) for card in cards]


def deal_of(batch, i: int) -> np.ndarray | None:
    """Episode ``i``'s cards in the batch, if the game deals any."""
    return batch.cards[i] if hasattr(batch, "cards") else None


def start_match(game_cls, options: dict, batch, i: int) -> parlour.Match:
    """A Match playing episode ``i`` of the batch from its start."""
    match = parlour.Match(game_cls, options)
    match.reset(seed=i)
    adopt_deal(match.game, deal_of(batch, i))
    return match


def assert_same_position(batch, matches: list[parlour.Match], rows: np.ndarray) -> None:
    """Seat to act, legal moves and both seats' vectors of the batch's episodes equal those of the matches.

    A simultaneous game's batch has every seat act in every live episode, each with its own legal moves.
    """
    legal = batch.legal(rows)
    for seat in range(batch.n_players):
        vectors = batch.vector(rows, np.full(len(rows), seat))
        for j, i in enumerate(rows):
            expected = matches[i].game.vector(matches[i].players[seat])
            assert vectors[j].dtype == expected.dtype and np.array_equal(vectors[j], expected), (i, seat, vectors[j], expected)
    for j, i in enumerate(rows):
        match = matches[i]
        if match.over:
            continue
        if batch.simultaneous:
            assert match.acting() == match.players
            for seat, player in enumerate(match.players):
                assert np.array_equal(legal[j, seat], match.action_mask(player).astype(bool)), (i, seat, legal[j, seat])
            continue
        (player,) = match.acting()
        assert batch.turn[i] == match.players.index(player)
        assert np.array_equal(legal[j], match.action_mask(player).astype(bool)), (i, legal[j], match.action_mask(player))


@pytest.mark.parametrize("name, options", CONFIGS, ids=IDS)
def test_batched_rules_agree_with_the_game_move_by_move(name, options):
    game_cls = parlour.game_class(f"parlour/{name}-v0")
    n = 16
    batch = game_cls.batch(game_cls(**options), n)
    streams = Streams(7, n)
    rows = np.arange(n)
    batch.reset(rows, streams)
    matches = [start_match(game_cls, options, batch, i) for i in range(n)]
    rng = random.Random(7)
    episodes = 0
    for _ in range(120):
        assert_same_position(batch, matches, rows)
        legal = batch.legal(rows)
        actions = np.array([rng.choice(np.flatnonzero(legal[i]).tolist()) for i in range(n)])
        rewards, ended = batch.step(rows, actions)
        for i in range(n):
            match = matches[i]
            (player,) = match.acting()
            paid = match.submit(player, int(actions[i]))
            assert [paid.get(p, 0.0) for p in match.players] == rewards[i].tolist(), (i, paid, rewards[i])
            assert ended[i] == match.over
        # The last position of an ended episode too: the learner's final observation is read from it.
        assert_same_position(batch, matches, rows)
        restart = np.flatnonzero(ended)
        if restart.size:
            episodes += restart.size
            batch.reset(restart, streams)
            for i in restart:
                matches[i] = start_match(game_cls, options, batch, i)
    assert episodes >= 2 * n


def pick(vector: np.ndarray, mask: np.ndarray) -> int:
    """A deterministic opponent: a legal move chosen by a checksum of the observation."""
    legal = np.flatnonzero(mask)
    return int(legal[zlib.crc32(vector.tobytes()) % len(legal)])


def batched_pick(vectors: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """:func:`pick` as a batched opponent policy."""
    return np.array([pick(v, m) for v, m in zip(vectors, masks)], dtype=np.int64)


class Picker:
    """:func:`pick` as a one-episode agent, reading its vector observation."""

    needs_vector = True

    def __init__(self, moves: list[str]):
        self.moves = moves

    def act(self, observation: dict) -> str:
        """The move :func:`pick` chooses."""
        mask = np.zeros(len(self.moves), dtype=np.int8)
        for move in observation["legal_moves"]:
            mask[self.moves.index(move)] = 1
        return self.moves[pick(observation["vector"], mask)]


#: Games whose batch draws chance during play (dice, prizes), from the streams its reset was given.
CHANCE_IN_PLAY = {"Pig", "Goofspiel"}


def plain_game(game_cls: type[parlour.Game], state: dict) -> parlour.Game:
    """A ``game_cls`` holding ``state``, made without its ``__init__`` (as pickle makes one)."""
    game = object.__new__(game_cls)
    game.__dict__.update(state)
    return game


class QueuedDraws:
    """The chance a batch draws during play, queued per slot: the batch's streams stand-in, and each slot's one-episode generator.

    A batch that draws during play keeps the streams given to its ``reset``
    (see :class:`parlour.envs.core.vector.GameBatch`); the test hands it this
    instead, which draws from them and queues each draw and its range for its
    slot, and the one-episode game of slot ``i`` gets :meth:`generator` as
    ``ctx.rng``, which hands the draws back and checks that the game asks for
    the same range.
    """

    def __init__(self, n: int, streams: Streams | None = None):
        self.queues: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        self.streams = streams

    def below(self, rows: np.ndarray, bounds: int | np.ndarray) -> np.ndarray:
        """The streams' draws, each queued for its slot with its bound."""
        assert self.streams is not None
        drawn = self.streams.below(rows, bounds)
        for row, value, bound in zip(rows.tolist(), drawn.tolist(), np.broadcast_to(bounds, rows.shape).tolist()):
            self.queues[row].append((value, bound))
        return drawn

    def generator(self, i: int) -> Any:
        """A stand-in for slot ``i``'s one-episode generator: ``integers(low, high)`` is ``low`` plus the batch's next draw there."""
        queue = self.queues[i]

        class Drawn:
            """The slot's generator: only ``integers``, which a die roll and a prize's turn-up call."""

            def integers(self, low: int, high: int | None = None) -> int:
                """``low`` plus the batch's next draw in this slot (``integers(high)``: from 0), which was drawn from as many values."""
                if high is None:
                    low, high = 0, low
                value, bound = queue.pop(0)
                assert bound == high - low, (bound, low, high)
                return low + value

        return Drawn()

    def replaying(self, game_cls: type[parlour.Game], i: int) -> type[parlour.Game]:
        """``game_cls`` drawing slot ``i``'s queued draws from its start on."""
        draws = self

        class Replayed(game_cls):  # type: ignore[valid-type, misc]
            def start(self, ctx):
                ctx.rng = draws.generator(i)
                super().start(ctx)

            def __reduce__(self):
                # Copies (Game.clone pickles) are plain games, as a class made here cannot be pickled; they draw no more.
                return plain_game, (game_cls, self.__dict__)

        return Replayed


def one_episode_env(game_cls, options: dict, envs: VectorGame, i: int, seat: int, draws: QueuedDraws | None = None) -> GymGame:
    """The one-episode face for slot ``i``, dealt the batch's cards when its episode starts, and drawing its draws."""

    class Dealt(game_cls if draws is None else draws.replaying(game_cls, i)):
        def start(self, ctx):
            super().start(ctx)
            adopt_deal(self, deal_of(envs.batch, i))

    own, _ = split_options(game_cls, options)
    return GymGame(Dealt, opponent=Picker(game_cls(**own).moves), seat=seat, obs_mode="vector", **options)


FACE_CONFIGS = [
    ("TicTacToe", {"error_allowance": 1}, "random"),
    ("TicTacToe", {"max_turns": 4}, 1),
    ("ConnectFour", {"error_allowance": 0}, "random"),
    ("KuhnPoker", {"error_allowance": 1}, "random"),
    ("LeducHoldem", {"error_allowance": 1}, "random"),
    ("LeducHoldem", {}, 1),
    ("Nim", {"heaps": [2, 3], "misere": True}, "random"),
    ("Othello", {"error_allowance": 1}, "random"),
    ("Hex", {"error_allowance": 0}, "random"),
    ("Breakthrough", {"max_turns": 12}, 1),
    ("Clobber", {"error_allowance": 1}, "random"),
    ("Mancala", {"error_allowance": 1}, "random"),
    ("Oware", {"houses": 3, "seeds": 2}, "random"),
    ("DotsAndBoxes", {"num_rows": 2, "num_cols": 2, "error_allowance": 1}, 1),
    # To 40, no game ends before the learner's first move (the one-episode face skips such a deal, this one hands it over ended).
    ("Pig", {"num_players": 3, "win_score": 40, "error_allowance": 1}, "random"),
    ("Goofspiel", {"error_allowance": 1}, "random"),
    ("Goofspiel", {"num_cards": 5, "max_turns": 3}, 1),
]


@pytest.mark.parametrize("name, options, seat", FACE_CONFIGS, ids=[f"{n}{o}-seat{s}" for n, o, s in FACE_CONFIGS])
def test_batched_face_agrees_with_the_gymnasium_env_step_by_step(name, options, seat, monkeypatch):
    env_id = f"parlour/{name}-v0"
    game_cls = parlour.game_class(env_id)
    n = 8
    draws = None
    if name in CHANCE_IN_PLAY:
        draws = QueuedDraws(n)
        reset = game_cls.batch.reset

        def reset_with_queued_draws(batch, rows, rng):
            # The batch keeps what its reset is given, and draws from it then and during play.
            draws.streams = rng
            reset(batch, rows, draws)

        monkeypatch.setattr(game_cls.batch, "reset", reset_with_queued_draws)
    envs = gymnasium.make_vec(
        env_id, num_envs=n, vectorization_mode="vector_entry_point", obs_mode="vector", opponent=batched_pick, seat=seat, **options
    )
    game = envs.unwrapped
    assert isinstance(game, VectorGame)
    rng = random.Random(3)
    n_moves = envs.single_action_space.n

    def restart(i: int, observations: dict, seats: np.ndarray) -> GymGame:
        env = one_episode_env(game_cls, options, game, i, int(seats[i]), draws)
        observation, _ = env.reset(seed=i)
        assert np.array_equal(observations["observation"][i], observation["observation"])
        assert np.array_equal(observations["action_mask"][i], observation["action_mask"])
        return env

    observations, infos = envs.reset(seed=11)
    singles = [restart(i, observations, infos["seat"]) for i in range(n)]
    done = np.zeros(n, dtype=bool)
    ended = invalid_moves = forfeits = 0
    for _ in range(150):
        actions = []
        for i in range(n):
            legal = np.flatnonzero(observations["action_mask"][i]).tolist()
            if rng.random() < 0.15 or not legal:
                actions.append(rng.choice([a for a in range(-1, n_moves + 1) if a not in legal]))
            else:
                actions.append(rng.choice(legal))
        observations, rewards, terminated, truncated, infos = envs.step(np.array(actions))
        for i in range(n):
            if done[i]:
                singles[i] = restart(i, observations, infos["seat"])
                assert rewards[i] == 0.0 and not terminated[i] and not truncated[i] and not infos["invalid_action"][i]
                continue
            observation, reward, single_terminated, single_truncated, info = singles[i].step(int(actions[i]))
            assert np.array_equal(observations["observation"][i], observation["observation"]), (
                i,
                observations["observation"][i],
                observation["observation"],
            )
            assert np.array_equal(observations["action_mask"][i], observation["action_mask"])
            assert rewards[i] == reward, (i, rewards[i], reward)
            assert (terminated[i], truncated[i]) == (single_terminated, single_truncated)
            assert infos["invalid_action"][i] == ("invalid_action" in info)
            invalid_moves += "invalid_action" in info
            if single_terminated or single_truncated:
                ended += 1
                forfeits += "exceeded the invalid-action allowance" in info["outcome"]["reason"]
        done = terminated | truncated
    assert ended >= 2 * n and invalid_moves > 0
    if options.get("error_allowance") is not None:
        assert forfeits > 0


def test_random_opponent_is_uniform_over_legal_moves_and_seeded():
    envs = gymnasium.make_vec("parlour/TicTacToe-v0", num_envs=1800, obs_mode="vector", opponent="random", seat=1)
    observations, _ = envs.reset(seed=0)
    # X (the random opponent) opened on an empty board: each of the 9 cells about 200 times.
    opened = (observations["observation"][:, 9:] == 1).argmax(axis=1)
    counts = np.bincount(opened, minlength=9)
    assert counts.sum() == 1800 and counts.min() > 140 and counts.max() < 260, counts
    again, _ = envs.reset(seed=0)
    assert np.array_equal(again["observation"], observations["observation"])
    other, _ = envs.reset(seed=1)
    assert not np.array_equal(other["observation"], observations["observation"])


def mirrored(vectors: np.ndarray, game: Goofspiel) -> np.ndarray:
    """Goofspiel vectors as the other seat sees the same positions: the points and the hands swapped."""
    cards, slots = game.num_cards, game.point_slots
    points, hands = 2 * cards, 2 * cards + 2 * slots
    order = np.arange(game.vector_size)
    order[points : points + 2 * slots] = np.roll(order[points : points + 2 * slots], slots)
    order[hands:] = np.roll(order[hands:], cards)
    return vectors[:, order]


def test_simultaneous_opponents_choose_on_the_position_the_learner_is_shown():
    """Goofspiel's opponent policy is asked once per position, on the position the learner then bids on: without the learner's bid in it."""
    asked: list[np.ndarray] = []

    def opponent(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        asked.append(observations.copy())
        return batched_pick(observations, masks)

    envs = gymnasium.make_vec("parlour/Goofspiel-v0", num_envs=6, obs_mode="vector", opponent=opponent, seat="random")
    rng = random.Random(2)
    observations, infos = envs.reset(seed=2)
    seats = set(infos["seat"].tolist())
    positions = 0
    for _ in range(80):
        # Asked in the reset or step that reached the positions, once for every live episode (a step can end them all).
        live = np.flatnonzero(observations["action_mask"].any(axis=1))
        assert len(asked) == (1 if live.size else 0)
        if live.size:
            assert np.array_equal(asked.pop(), mirrored(observations["observation"][live], Goofspiel()))
            positions += live.size
        actions = np.array([rng.choice(np.flatnonzero(mask).tolist()) if mask.any() else 0 for mask in observations["action_mask"]])
        observations, _, _, _, infos = envs.step(actions)
        seats.update(infos["seat"].tolist())
    assert positions > 300 and seats == {0, 1}


def test_each_slot_has_its_own_stream():
    """Slot i plays the same episodes whatever the number of slots (the learner playing its first legal move)."""
    runs = []
    for n in (3, 7):
        envs = gymnasium.make_vec("parlour/LeducHoldem-v0", num_envs=n, obs_mode="vector", opponent="random", seat="random")
        observations, infos = envs.reset(seed=5)
        trace = [(observations["observation"][:3].copy(), infos["seat"][:3].copy())]
        for _ in range(40):
            masks = observations["action_mask"].astype(bool)
            observations, rewards, terminated, truncated, infos = envs.step(np.argmax(masks, axis=1))
            trace.append((observations["observation"][:3].copy(), rewards[:3].copy(), infos["seat"][:3].copy()))
        runs.append(trace)
    for first, second in zip(*runs):
        for a, b in zip(first, second):
            assert np.array_equal(a, b)
    assert len({tuple(seats) for *_, seats in runs[0]}) > 1  # seats were drawn per episode


def test_observation_spaces_and_masks():
    envs = gymnasium.make_vec("parlour/ConnectFour-v0", num_envs=5, obs_mode="vector")
    single = gymnasium.make("parlour/ConnectFour-v0", obs_mode="vector")
    assert envs.single_observation_space == single.observation_space
    assert envs.single_action_space == single.action_space
    observations, _ = envs.reset(seed=0)
    assert observations["observation"].shape == (5, 84) and observations["observation"].dtype == np.float32
    assert observations["action_mask"].shape == (5, 7) and observations["action_mask"].dtype == np.int8
    assert observations in envs.observation_space
    assert np.array_equal(envs.unwrapped.action_masks(), observations["action_mask"].astype(bool))


def test_clear_errors():
    with pytest.raises(ValueError, match="opponent='random' or a batched policy.*vectorization_mode='sync'"):
        gymnasium.make_vec("parlour/TicTacToe-v0", num_envs=2, obs_mode="vector", opponent="minimax")
    with pytest.raises(ValueError, match="seat must be"):
        gymnasium.make_vec("parlour/TicTacToe-v0", num_envs=2, obs_mode="vector", seat=2)
    with pytest.raises(TypeError, match="unknown option"):
        gymnasium.make_vec("parlour/TicTacToe-v0", num_envs=2, obs_mode="vector", colour="red")
    with pytest.raises(ValueError, match="64 bits"):
        gymnasium.make_vec("parlour/ConnectFour-v0", num_envs=2, obs_mode="vector", rows=10, columns=10)
    envs = gymnasium.make_vec("parlour/TicTacToe-v0", num_envs=2, obs_mode="vector")
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros(2, dtype=np.int64))
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="move indices"):
        envs.step(np.zeros(3, dtype=np.int64))
    broken = gymnasium.make_vec("parlour/TicTacToe-v0", num_envs=2, obs_mode="vector", seat=1, opponent=lambda obs, mask: np.zeros(1))
    with pytest.raises(ValueError, match="opponent policy must return 2 move indices"):
        broken.reset(seed=0)


def test_text_mode_and_games_without_batch_keep_one_episode_environments():
    envs = gymnasium.make_vec("parlour/KuhnPoker-v0", num_envs=2)
    assert isinstance(envs, gymnasium.vector.SyncVectorEnv)
    observations, _ = envs.reset(seed=0)
    assert len(observations["text"]) == 2
    with pytest.raises(gymnasium.error.Error, match="vector entry point"):
        gymnasium.make_vec("parlour/LiarsDice-v0", num_envs=2, vectorization_mode="vector_entry_point", obs_mode="vector")


def test_sb3_view_restarts_in_the_same_step():
    pytest.importorskip("stable_baselines3")
    envs = gymnasium.make_vec("parlour/KuhnPoker-v0", num_envs=6, obs_mode="vector", opponent="random", seat="random")
    venv = sb3_vec_env(envs)
    venv.seed(3)
    observations = venv.reset()
    ended = 0
    for _ in range(20):
        masks = np.stack(venv.env_method("action_masks"))
        assert masks.shape == (6, 4) and masks.any(axis=1).all()
        observations, rewards, dones, infos = venv.step(np.argmax(masks, axis=1))
        assert observations["action_mask"].any(axis=1).all()  # every episode is live again at once
        for i in np.flatnonzero(dones):
            terminal = infos[i]["terminal_observation"]
            assert not terminal["action_mask"].any() and rewards[i] != 0 and infos[i]["TimeLimit.truncated"] is False
            ended += 1
        assert all("terminal_observation" not in infos[i] for i in np.flatnonzero(~dones))
    assert ended > 6


def test_maskable_ppo_trains_through_the_sb3_view():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import torch
    from stable_baselines3.common.callbacks import BaseCallback

    torch.set_num_threads(1)

    class NoInvalid(BaseCallback):
        """Counts the moves MaskablePPO made that the environment refused (there must be none)."""

        invalid = 0

        def _on_step(self) -> bool:
            NoInvalid.invalid += sum("invalid_action" in info for info in self.locals["infos"])
            return True

    venv = sb3_vec_env(gymnasium.make_vec("parlour/TicTacToe-v0", num_envs=16, obs_mode="vector", opponent="random", seat="random"))
    model = sb3_contrib.MaskablePPO("MultiInputPolicy", venv, n_steps=16, batch_size=64, n_epochs=2, seed=0, device="cpu")
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=512, callback=NoInvalid())
    assert model.num_timesteps >= 512
    assert NoInvalid.invalid == 0
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters()))
