"""Chess: known positions (mate, stalemate, promotion, castling, en passant, every draw), UCI and SAN parsing, the
fixed move encoding and vector, an OpenSpiel cross-check on random play, and the stockfish agent (skipped, saying
what to install, where Debian's stockfish is absent)."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pyspiel
import pytest

import parlour
from parlour.baselines.chess import MISSING, StockfishAgent, stockfish_path
from parlour.envs.core.match import Match
from parlour.envs.games.chess import VECTOR_SIZE, Chess, legal_indices, move_names, san_without_suffix

ENV_ID = "parlour/Chess-v0"
needs_stockfish = pytest.mark.skipif(stockfish_path() is None, reason=MISSING)


def play(moves: list[str], **options) -> Match:
    """A match after the given moves (UCI or SAN) were played in turn, each checked to be valid."""
    match = Match(Chess, options)
    match.reset(0)
    for move in moves:
        match.submit(match.acting()[0], move)
        assert match.steps[-1]["error"] is None, (move, match.steps[-1]["error"])
    return match


def test_mate_in_one_wins():
    match = play(["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6"])
    assert "h5f7" in match.infos(["player_0"])["player_0"]["legal_moves"]
    match.submit("player_0", "Qxf7#")
    assert match.over and match.outcome.winner == "player_0"
    assert match.returns == {"player_0": 1.0, "player_1": -1.0}
    assert match.outcome.details["termination"] == "checkmate" and match.outcome.details["plies"] == 7


def test_black_can_mate_too():
    match = play(["f3", "e5", "g4"])
    match.submit("player_1", "d8h4")
    assert match.outcome.winner == "player_1" and match.returns == {"player_0": -1.0, "player_1": 1.0}


def test_stalemate_is_a_draw():
    match = play(["f1f7"], fen="7k/8/6K1/8/8/8/8/5Q2 w - - 0 1")
    assert match.over and match.outcome.winner is None
    assert match.outcome.details["termination"] == "stalemate" and match.returns == {"player_0": 0.0, "player_1": 0.0}


def test_promotion_to_any_piece_in_uci_or_san():
    fen = "8/P6k/8/8/8/8/8/K7 w - - 0 1"
    legal = play([], fen=fen).infos(["player_0"])["player_0"]["legal_moves"]
    assert {"a7a8q", "a7a8r", "a7a8b", "a7a8n"} <= set(legal) and "a7a8" not in legal
    assert play(["a8=N"], fen=fen).game.board.fen().startswith("N7/")
    assert play(["a7a8r"], fen=fen).game.board.fen().startswith("R7/")
    assert play(["a8Q"], fen=fen).game.board.fen().startswith("Q7/")


def test_castling_both_ways_and_its_rights():
    match = play(["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5"])
    match.submit("player_0", "O-O")
    assert match.steps[-1]["move"] == "e1g1"
    assert match.game.board.fen().split()[0].endswith("RNBQ1RK1") and match.game.board.fen().split()[2] == "kq"
    match = play(["d4", "d5", "Nc3", "Nc6", "Bf4", "Bf5", "Qd2", "Qd7"])
    match.submit("player_0", "0-0-0")
    assert match.steps[-1]["move"] == "e1c1" and match.game.board.fen().split()[0].endswith("2KR1BNR")
    # A king that has moved may no longer castle.
    match = play(["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "Ke2", "Nf6", "Ke1", "Ng4"])
    match.submit("player_0", "e1g1")
    assert "not legal" in match.last_error["player_0"]


def test_en_passant_captures_the_passed_pawn():
    match = play(["e4", "a6", "e5", "d5"])
    assert "e5d6" in match.infos(["player_0"])["player_0"]["legal_moves"]
    assert match.game.vector("player_0")[12 * 64 + 5 + 3] == 1.0  # the d file
    match.submit("player_0", "exd6")
    board = match.game.board
    assert board.piece_at(43).symbol() == "P" and board.piece_at(35) is None  # d6 holds the pawn; d5 is empty
    # The chance passes after one move.
    match = play(["e4", "a6", "e5", "d5", "h3", "h6"])
    assert "e5d6" not in match.infos(["player_0"])["player_0"]["legal_moves"]


@pytest.mark.parametrize(
    "fen,moves,termination",
    [
        ("k7/8/8/8/8/8/1r6/K7 w - - 0 1", ["Kxb2"], "insufficient_material"),
        ("k7/8/8/8/8/8/8/KR6 w - - 99 60", ["Rb2"], "fifty_moves"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", ["Nf3", "Nf6", "Ng1", "Ng8"] * 2, "threefold_repetition"),
    ],
)
def test_draws_are_applied_at_once(fen, moves, termination):
    match = play(moves, fen=fen)
    assert match.over and match.outcome.winner is None and match.outcome.details["termination"] == termination
    assert not match.outcome.truncated


def test_mate_on_the_hundredth_quiet_ply_is_still_mate():
    match = play(["Rh8#"], fen="k7/8/1K6/8/8/8/8/7R w - - 99 60")
    assert match.outcome.details["termination"] == "checkmate" and match.outcome.winner == "player_0"


def test_max_plies_ends_the_game_as_a_draw_and_is_announced():
    match = play(["e4"], max_plies=2)
    prompt = match.messages("player_1")[-1]["text"]
    assert "1 plies remain" in prompt and "drawn once 2 plies" in match.messages("player_1")[0]["text"]
    match.submit("player_1", "e5")
    assert match.over and match.outcome.details["termination"] == "max_plies" and match.returns == {"player_0": 0.0, "player_1": 0.0}
    with pytest.raises(ValueError, match="max_plies"):
        Chess(max_plies=0)


def test_parsing_takes_the_last_move_in_either_notation():
    match = play([])
    match.submit("player_0", "Nf3 looks good, but I will open with E2E4.")
    assert match.steps[-1]["move"] == "e2e4"
    match.submit("player_1", "After e2e4 I answer with the Sicilian: c5!")
    assert match.steps[-1]["move"] == "c7c5"
    match.submit("player_0", "Ke2")
    assert match.steps[-1]["move"] == "e1e2"
    match.submit("player_1", "Ke7")
    assert match.steps[-1]["error"].startswith("'Ke7' is not a legal move now")
    match.submit("player_1", "e8e6")
    assert match.steps[-1]["error"].startswith("'e8e6' is not legal now")
    match.submit("player_1", "no idea")
    assert match.steps[-1]["error"].startswith("No move found")


def test_error_allowance_forfeits():
    match = play([], error_allowance=0)
    match.submit("player_0", "castle now")
    assert match.over and match.returns == {"player_0": -1.0, "player_1": 1.0}


def test_the_move_encoding_is_fixed_and_indices_play():
    names = move_names()
    assert len(names) == 1968 == len(set(names)) and names[0] == "a1b1"
    assert sum(len(name) == 5 for name in names) == 176
    match = play([])
    legal = match.game.legal_actions("player_0")
    assert legal == sorted(legal) and len(legal) == 20
    assert [names[i] for i in legal] == match.infos(["player_0"])["player_0"]["legal_moves"]
    match.submit("player_0", names.index("g1f3"))
    assert match.steps[-1]["move"] == "g1f3"
    assert match.action_mask("player_1").sum() == 20


def test_vector_is_from_the_players_side():
    game = play(["e4"]).game
    white, black = game.vector("player_0"), game.vector("player_1")
    assert white.shape == black.shape == (VECTOR_SIZE,) and white.dtype == np.float32
    pawns = np.flatnonzero(white[:64]).tolist()
    assert pawns == [8, 9, 10, 11, 13, 14, 15, 28]  # e2 went to e4
    assert np.flatnonzero(black[:64]).tolist() == list(range(48, 56))
    assert np.array_equal(white[6 * 64 : 12 * 64], black[: 6 * 64]) and np.array_equal(black[6 * 64 : 12 * 64], white[: 6 * 64])
    tail = 12 * 64
    assert white[tail] == 1.0 and black[tail] == 0.0
    assert white[tail + 1 : tail + 5].tolist() == [1.0] * 4 and white[tail + 5 : tail + 13].sum() == 0.0


def test_a_bad_fen_is_refused_at_the_start():
    match = Match(Chess, {"fen": "not a position"})
    with pytest.raises(ValueError, match="not a FEN position"):
        match.reset(0)
    match = Match(Chess, {"fen": "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"})  # stalemate: no move to play
    with pytest.raises(ValueError, match="with a move to play"):
        match.reset(0)


def test_the_game_lists_without_python_chess_and_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "chess", None)
    match = Match(Chess, {})
    assert len(match.game.moves) == 1968
    with pytest.raises(ImportError, match=r"pip install 'parlour\[games\]'"):
        match.reset(0)


#: Positions where move generation is subtle (the perft suites' Kiwipete, positions 3 to 5, and a pin across en passant).
TRICKY_FENS = [
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "8/8/8/K2pP2r/8/8/8/7k w - d6 0 2",
]


def assert_moves_and_names_agree(board) -> None:
    """parlour's legal indices, check flag and SAN agree with python-chess's own in ``board``'s position."""
    names = move_names()
    legal, check = legal_indices(board)
    assert [names[i] for i in legal] == sorted((m.uci() for m in board.legal_moves), key=names.index), board.fen()
    assert check == board.is_check(), board.fen()
    for move in board.legal_moves:
        assert san_without_suffix(board, move, legal) == board.san(move).rstrip("+#"), (board.fen(), move.uci())


def test_legal_moves_and_their_names_are_python_chess_s_own():
    # parlour reads the legal moves from the bitboards and names moves without python-chess's generator: every
    # position two plies from the tricky ones, and every position of random games, must agree with python-chess.
    import chess

    for fen in TRICKY_FENS:
        board = chess.Board(fen)
        assert_moves_and_names_agree(board)
        for move in list(board.legal_moves):
            board.push(move)
            assert_moves_and_names_agree(board)
            for reply in list(board.legal_moves):
                board.push(reply)
                assert_moves_and_names_agree(board)
                board.pop()
            board.pop()
    rng = np.random.default_rng(7)
    for _ in range(30):
        board = chess.Board()
        while not board.is_game_over() and board.ply() < 300:
            assert_moves_and_names_agree(board)
            moves = list(board.legal_moves)
            board.push(moves[int(rng.integers(len(moves)))])


def test_a_ply_asks_python_chess_for_no_names_no_revalidation_and_its_moves_at_most_once(monkeypatch):
    # Issue 37: legal_actions built and sorted a UCI string per move, and apply validated the move again and named it
    # with Board.san (which generates moves again): half of the time of a random game was spent there.
    import chess

    calls = {"uci": 0, "parse_uci": 0, "san": 0, "generate_legal_moves": 0}

    def counting(name, original):
        def counted(*args, **kwargs):
            calls[name] += 1
            return original(*args, **kwargs)

        return counted

    for owner, name in ((chess.Move, "uci"), (chess.Board, "parse_uci"), (chess.Board, "san"), (chess.Board, "generate_legal_moves")):
        monkeypatch.setattr(owner, name, counting(name, getattr(owner, name)))
    match = Match(Chess, {"max_plies": 120})
    rng = np.random.default_rng(3)
    match.reset(3)
    positions = 1
    while not match.over:
        player = match.acting()[0]
        legal = match.legal_moves_of(player)
        match.submit(player, legal[int(rng.integers(len(legal)))])
        positions += 1
    assert calls["uci"] == calls["parse_uci"] == calls["san"] == 0, calls
    assert calls["generate_legal_moves"] <= positions, calls


def test_a_move_is_announced_with_its_san_and_check_or_mate():
    match = play(["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6"])
    match.submit("player_0", "h5f7")
    assert "player_0 (white) plays h5f7 (Qxf7#)." in match.observation_text("player_1")
    match = play(["e4", "f5"])
    match.submit("player_0", "d1h5")
    assert "player_0 (white) plays d1h5 (Qh5+)." in match.observation_text("player_1")
    match = play(["Nf3", "a6", "Nc3", "a5", "Nd4", "a4", "Ncb5"])
    assert "player_0 (white) plays Ncb5 " not in match.observation_text("player_1")
    assert "plays c3b5 (Ncb5)." in match.observation_text("player_1")


def test_a_pickled_game_works_its_legal_moves_out_again():
    match = play(["e4", "e5"])
    twin = pickle.loads(pickle.dumps(match.game))
    assert twin._legal is None and twin.legal_actions("player_0") == match.game.legal_actions("player_0")


def test_legal_moves_and_results_match_openspiel():
    # OpenSpiel's chess seats black as player 0; parlour seats white, the first mover, as player_0.
    spiel_game = pyspiel.load_game("chess")
    rng = np.random.default_rng(1)
    endings = set()
    for episode in range(100):
        match = Match(Chess, {})
        match.reset(episode)
        state = spiel_game.new_initial_state()
        while not state.is_terminal():
            player = match.acting()[0]
            assert 1 - match.players.index(player) == state.current_player()
            board = state.board()
            theirs = {pyspiel.chess.action_to_move(action, board).to_lan(): action for action in state.legal_actions()}
            legal = match.game.legal_moves(player)
            assert set(legal) == set(theirs), (episode, board.to_fen())
            move = legal[int(rng.integers(len(legal)))]
            match.submit(player, match.game.move_index(move) if episode % 2 else move)
            state.apply_action(theirs[move])
            assert match.over == state.is_terminal(), (episode, board.to_fen())
        assert [match.returns[p] for p in reversed(match.players)] == state.returns()
        endings.add(match.outcome.details["termination"])
    assert {"checkmate", "stalemate", "insufficient_material", "fifty_moves"} <= endings


@needs_stockfish
def test_stockfish_mates_in_one_and_checks_its_options():
    observation = play(["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6"]).agent_observation("player_0")
    assert StockfishAgent(seed=0, depth=2).act(observation) == "h5f7"
    for bad in ({"skill": 21}, {"skill": True}, {"depth": 0}):
        with pytest.raises(ValueError):
            StockfishAgent(**bad)


@needs_stockfish
def test_stockfish_below_full_skill_is_deterministic_under_a_seed_and_pickles_without_its_engine():
    observation = play(["e4", "e5"]).agent_observation("player_0")
    first, second = StockfishAgent(seed=3, skill=0, depth=4), StockfishAgent(seed=3, skill=0, depth=4)
    moves = [first.act(observation) for _ in range(6)]
    assert moves == [second.act(observation) for _ in range(6)]
    copy = pickle.loads(pickle.dumps(first))
    assert copy._engine is None and copy.act(observation) in play(["e4", "e5"]).game.legal_moves("player_0")


@needs_stockfish
@pytest.mark.parametrize("skill", [0, 20])
def test_stockfish_beats_random_from_either_seat(skill):
    for seed in range(4):
        match = Match(Chess, {})
        match.reset(seed)
        strong = parlour.make_agent("stockfish", env_id=ENV_ID, skill=skill, depth=4)
        weak = parlour.make_agent("random", env_id=ENV_ID)
        strong.reset(seed)
        weak.reset(seed + 100)
        seat = match.players[seed % 2]
        agents = {seat: strong, match.game.other(seat): weak}
        while not match.over:
            player = match.acting()[0]
            match.submit(player, agents[player].act(match.agent_observation(player)))
        assert match.outcome.winner == seat, (seed, match.outcome.details)


@needs_stockfish
def test_a_process_that_never_closes_its_stockfish_agent_still_exits():
    # python-chess's engine thread kept such a process waiting on itself at exit; a pipe needs no thread.
    script = (
        "import parlour\nfrom parlour.envs.core.match import Match\nfrom parlour.envs.games.chess import Chess\n"
        "match = Match(Chess, {})\nmatch.reset(0)\nagent = parlour.make_agent('stockfish', env_id='parlour/Chess-v0', depth=2)\n"
        "print(agent.act(match.agent_observation('player_0')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and len(done.stdout.strip()) == 4, done.stderr


@needs_stockfish
def test_an_evaluation_leaves_no_engine_running():
    # The runner plays a copy of the agent per episode; each copy's engine (about 85 MB) used to outlive its episode,
    # and a demo over every environment ran the machine out of memory.
    import gc
    import os

    def engines() -> int:
        children = open(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read().split()
        return sum(1 for pid in children if "stockfish" in open(f"/proc/{pid}/comm").read())

    results = parlour.evaluate("parlour/Chess-v0", ["stockfish", "random"], episodes=6, seed=0, progress=False, env_kwargs={"max_plies": 10})
    gc.collect()
    assert len(results.records) == 6 and engines() == 0
