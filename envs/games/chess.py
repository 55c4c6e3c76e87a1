"""Chess, on python-chess.

Players ``player_0`` (white, moves first) and ``player_1`` (black) play
standard chess by the FIDE rules of movement, python-chess's (the ``chess``
package, in the ``games`` extra: ``pip install 'parlour[games]'``; parlour
imports and lists without it, and an episode started without it raises an
``ImportError`` that names the install). The game ends at checkmate (the
mated side loses) or at a draw, which, as in OpenSpiel's ``chess``, is
applied at once rather than claimed: stalemate, insufficient material
(python-chess's definition: no sequence of legal moves could mate), the
fifty-move rule (100 plies without a capture or a pawn move) and threefold
repetition of a position (same pieces, side to move, castling rights and
en-passant capture). Option ``max_plies`` (default ``None``, no limit) ends
the game as a draw when that many plies have been played, a rule the players
are told, so LLM games have a bounded length; option ``fen`` starts from
another legal position (default the standard one).

Moves are accepted in UCI (``e2e4``, ``e7e8q``, castling as the king's move
``e1g1``; any case) or SAN (``e4``, ``Nf3``, ``exd5``, ``e8=Q``, ``O-O``,
``0-0-0``, with or without ``+``/``#``); the last move written in the reply
counts. ``legal_moves`` are in UCI, sorted. The ``Discrete`` actions are a
fixed list of every UCI move that some position allows (:func:`move_names`):
the 1792 queen-line and knight moves between two squares, then the 176 pawn
promotions (to q, r, b, n on the last rank), 1968 in all, the same for both
sides. Vector observation (783 values): 12 planes of 64 squares (a1, b1, ...,
h8), the player's pawns, knights, bishops, rooks, queens and king, then the
opponent's; whether the player is white; castling rights (own king side,
own queen side, the opponent's); the file of a capturable en-passant square
(8); the fifty-move clock / 100; whether the position has occurred before.

Rewards (zero-sum): +1 to the side that mates and -1 to the mated side, 0
each for a draw. A player who exceeds the invalid-action allowance gets -1
and the opponent +1. Outcome details: ``termination`` (``checkmate``,
``stalemate``, ``insufficient_material``, ``fifty_moves``,
``threefold_repetition``, ``max_plies``), ``plies`` and the final ``fen``.

Strength is the opponent's (``stockfish`` with its ``skill`` and ``depth``
options, see :mod:`parlour.baselines.chess`), not the game's: no option of
the position makes chess easier for one seat without making it harder for
the other.

Version history: v0, first release.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.game import Game, int_option

COLOURS = ("white", "black")
FILES = "abcdefgh"
#: python-chess's piece numbers: pawn 1 to king 6.
PAWN, KING = 1, 6
#: SAN's letter of each piece, by python-chess's piece number.
PIECE_LETTERS = ("", "", "N", "B", "R", "Q", "K")
#: The standard starting position.
STANDARD_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
#: Length of the vector observation: 12 planes of 64 squares, then side, castling (4), en-passant file (8), clock, repetition.
VECTOR_SIZE = 12 * 64 + 1 + 4 + 8 + 1 + 1

RULES = """You are playing chess as {colour} ({player}); {first}.
Standard chess rules apply: checkmate wins. The game is drawn at once on stalemate, insufficient material, 100 plies (50 moves each) without a capture or a pawn move, or the third occurrence of a position.{limit}
The board is shown with rank 8 at the top and rank 1 at the bottom; white pieces are upper-case (K Q R B N P), black pieces lower-case, empty squares are dots.
Reply with one legal move, in UCI (from-square and to-square, plus the piece for a promotion: e2e4, e7e8q; castle as the king's move: e1g1) or in SAN (e4, Nf3, exd5, e8=Q, O-O). If you write several moves, the last one counts."""

#: A UCI move anywhere in text (any case); the lookarounds keep it from matching inside a longer word.
UCI_PATTERN = re.compile(r"(?<![A-Za-z0-9])([a-h][1-8][a-h][1-8][qrbn]?)(?![A-Za-z0-9])", re.IGNORECASE)
#: A SAN move anywhere in text (case matters: ``B`` is a bishop, ``b`` a file): castling, piece moves, pawn moves.
SAN_PATTERN = re.compile(
    r"(?<![A-Za-z0-9-])("
    r"(?:O-O-O|O-O|0-0-0|0-0)"
    r"|[KQRBN][a-h]?[1-8]?x?[a-h][1-8]"
    r"|[a-h](?:x[a-h])?[1-8](?:=?[QRBNqrbn])?"
    r")[+#!?]*(?![A-Za-z0-9-])"
)


def chess_module() -> Any:
    """The ``chess`` package (python-chess), or an ImportError that says how to install it."""
    try:
        import chess
    except ImportError as error:
        raise ImportError("parlour/Chess-v0 plays on python-chess, which is not installed: pip install 'parlour[games]'") from error
    return chess


def square_name(square: int) -> str:
    """The name of a square numbered as python-chess does (a1 = 0, b1 = 1, ..., h8 = 63)."""
    return f"{FILES[square % 8]}{square // 8 + 1}"


@functools.cache
def move_names() -> tuple[str, ...]:
    """Every UCI move some position allows, in ``Discrete`` index order (see the module docstring).

    Origin square by square (a1 first), each origin's destinations in square
    order, reached along a queen line or a knight's jump; then the promotions,
    origin and destination in square order, each to q, r, b, n.
    """
    names = []
    for origin in range(64):
        file, rank = origin % 8, origin // 8
        for target in range(64):
            d_file, d_rank = target % 8 - file, target // 8 - rank
            if target == origin:
                continue
            if d_file == 0 or d_rank == 0 or abs(d_file) == abs(d_rank) or {abs(d_file), abs(d_rank)} == {1, 2}:
                names.append(square_name(origin) + square_name(target))
    for origin_rank, target_rank in ((6, 7), (1, 0)):
        for file in range(8):
            for target_file in (file - 1, file, file + 1):
                if 0 <= target_file < 8:
                    for piece in "qrbn":
                        names.append(square_name(origin_rank * 8 + file) + square_name(target_rank * 8 + target_file) + piece)
    return tuple(names)


@functools.cache
def move_table() -> tuple[list[list[int]], list[int], dict[str, Any], tuple[list[int], ...]]:
    """Tables between python-chess's moves and parlour's move indices: ``(by_squares, by_key, by_name, pushes)``.

    ``by_squares[from_square][to_square]`` is the index of the move between two squares without a promotion,
    ``by_key[from_square | to_square << 6 | promotion << 12]`` that of any move (python-chess's square and piece
    numbers), ``by_name`` maps each move name to its python-chess ``Move``, and ``pushes[2 * white + steps - 1]``
    gives, by target square, the index of a pawn's push of ``steps`` squares. Reading a generated move's
    index is then list look-ups, where its UCI name would be a string built per move.
    """
    chess = chess_module()
    by_squares = [[-1] * 64 for _ in range(64)]
    by_key = [-1] * (7 << 12)
    by_name = {}
    for i, name in enumerate(move_names()):
        move = chess.Move.from_uci(name)
        by_key[move.from_square | move.to_square << 6 | (move.promotion or 0) << 12] = i
        if move.promotion is None:
            by_squares[move.from_square][move.to_square] = i
        by_name[name] = move
    pushes = tuple([by_squares[target - step][target] if 0 <= target - step < 64 else -1 for target in range(64)] for step in (-8, -16, 8, 16))
    return by_squares, by_key, by_name, pushes


def legal_indices(board: Any) -> tuple[list[int], bool]:
    """``(the indices of the legal moves, ascending; whether the side to move is in check)`` in ``board``'s position.

    The same moves as python-chess's ``board.legal_moves``, read as parlour's indices straight from its bitboards
    (the attack tables and ``attacks_mask`` of python-chess) rather than built as ``Move`` objects and filtered
    one by one: out of check, a piece not pinned to its king may go to every square it attacks that its own
    side does not hold, a pinned one only along the pin, and the king to any square not attacked. Check
    evasions and en passant, rarer and subtler, are python-chess's own.
    """
    chess = chess_module()
    by_squares, by_key, _, pushes = move_table()
    turn = board.turn
    king = board.king(turn)
    if king is None or board.attackers_mask(not turn, king):
        indices = [by_key[m.from_square | m.to_square << 6 | (m.promotion or 0) << 12] for m in board.generate_legal_moves()]
        indices.sort()
        return indices, king is not None
    ours, occupied, theirs = board.occupied_co[turn], board.occupied, board.occupied_co[not turn]
    squares, scan, ray = chess.BB_SQUARES, chess.scan_reversed, chess.ray
    # Pinned pieces: those alone between the king and an enemy slider on its line (python-chess's slider blockers).
    pinned = 0
    snipers = (chess.BB_RANK_ATTACKS[king][0] | chess.BB_FILE_ATTACKS[king][0]) & (board.rooks | board.queens)
    snipers |= chess.BB_DIAG_ATTACKS[king][0] & (board.bishops | board.queens)
    for sniper in scan(snipers & theirs):
        between = chess.between(king, sniper) & occupied
        if between and between & (between - 1) == 0:
            pinned |= between
    pinned &= ours
    indices = []
    free, them, attackers = ~ours, not turn, board.attackers_mask
    for origin in scan(ours & ~board.pawns):
        row = by_squares[origin]
        if origin == king:
            indices += [row[target] for target in scan(chess.BB_KING_ATTACKS[king] & free) if not attackers(them, target)]
            continue
        targets = board.attacks_mask(origin) & free
        if pinned & squares[origin]:
            targets &= ray(king, origin)
        indices += map(row.__getitem__, scan(targets))
    backrank = chess.BB_RANK_1 if turn else chess.BB_RANK_8
    if board.castling_rights & backrank:
        indices += [by_squares[m.from_square][m.to_square] for m in board.generate_castling_moves()]
    pawns = board.pawns & ours
    if pawns:
        attacks, empty = chess.BB_PAWN_ATTACKS[turn], ~occupied
        # Most pawns neither promote next move nor are pinned: their pushes are read for all of them at once.
        special = pawns & (pinned | (chess.BB_RANK_7 if turn else chess.BB_RANK_2))
        plain = pawns & ~special
        for origin in scan(plain):
            targets = attacks[origin] & theirs
            if targets:
                indices += map(by_squares[origin].__getitem__, scan(targets))
        if turn:
            single = plain << 8 & empty
            double = single << 8 & empty & chess.BB_RANK_4
        else:
            single = plain >> 8 & empty
            double = single >> 8 & empty & chess.BB_RANK_5
        one, two = pushes[2 * turn], pushes[2 * turn + 1]
        indices += map(one.__getitem__, scan(single))
        indices += map(two.__getitem__, scan(double))
        step, start_rank = (8, 1) if turn else (-8, 6)
        for origin in scan(special):
            targets = attacks[origin] & theirs
            if empty & squares[origin + step]:
                targets |= squares[origin + step]
                if origin >> 3 == start_rank and empty & squares[origin + 2 * step]:
                    targets |= squares[origin + 2 * step]
            if pinned & squares[origin]:
                targets &= ray(king, origin)
            for target in scan(targets):
                if target < 8 or target >= 56:
                    key = origin | target << 6
                    indices += [by_key[key | piece << 12] for piece in (5, 4, 3, 2)]
                else:
                    indices.append(by_squares[origin][target])
        if board.ep_square is not None:
            indices += [by_squares[m.from_square][m.to_square] for m in board.generate_pseudo_legal_ep() if board.is_legal(m)]
    indices.sort()
    return indices, False


def san_without_suffix(board: Any, move: Any, legal: list[int]) -> str:
    """``move``'s SAN before its check suffix, as python-chess's ``Board.san`` writes it; ``legal``: the position's move indices.

    python-chess works out a piece move's disambiguation by generating legal moves again; here the moves of the
    other pieces of the same kind to the same square are looked up among the legal moves already at hand.
    """
    origin, target = move.from_square, move.to_square
    piece = board.piece_type_at(origin)
    if piece == KING and board.is_castling(move):
        return "O-O-O" if target % 8 < origin % 8 else "O-O"
    capture = board.is_capture(move)
    if piece == PAWN:
        san = f"{FILES[origin % 8]}x" if capture else ""
    else:
        san = PIECE_LETTERS[piece]
        rivals = board.pieces_mask(piece, board.turn) & ~(1 << origin)
        if rivals:
            by_squares = move_table()[0]
            others = [other for other in chess_module().scan_reversed(rivals) if by_squares[other][target] in legal]
            if others:
                same_file = any(other % 8 == origin % 8 for other in others)
                if not same_file or any(other // 8 == origin // 8 for other in others):
                    san += FILES[origin % 8]
                if same_file:
                    san += str(origin // 8 + 1)
        if capture:
            san += "x"
    san += square_name(target)
    if move.promotion:
        san += "=" + PIECE_LETTERS[move.promotion]
    return san


class Chess(Game):
    """Chess for two players; see the module docstring for moves, draws and rewards.

    The state is ``board``, a ``chess.Board`` (python-chess) holding the
    position and its move stack (for repetitions), made by :meth:`start` and
    changed only by :meth:`apply`. The legal moves of its position are
    worked out once per ply (:func:`legal_indices`), when :meth:`apply` checks
    whether the game is over, and kept for :meth:`legal_actions` (a pickle
    leaves them out: they are worked out again when first asked for).
    """

    name = "Chess"
    reference_agents = ("stockfish", "random")
    description = (
        "Standard chess on python-chess, UCI or SAN moves, automatic draws as OpenSpiel's chess "
        "(difficulty: the stockfish opponent's skill 0-20 and depth; max_plies bounds a game)."
    )
    zero_sum = True
    fixed_rules = True

    def __init__(self, *, max_plies: int | None = None, fen: str = STANDARD_FEN):
        if max_plies is not None:
            int_option("max_plies", max_plies, 1)
        if not isinstance(fen, str):
            raise ValueError(f"fen must be a FEN string, got {fen!r}")
        self.max_plies = max_plies
        self.fen = fen
        self.players = ["player_0", "player_1"]
        self.moves = list(move_names())
        self.vector_size = VECTOR_SIZE
        # Made by start(): the constructor runs without python-chess, so `parlour list` shows the game everywhere.
        self.board: Any = None
        self.plies = 0
        self._legal: tuple[list[int], bool] | None = None

    def start(self, ctx: Context) -> None:
        """The starting position (``fen``), its side to move first."""
        chess = chess_module()
        try:
            board = chess.Board(self.fen)
        except ValueError as error:
            raise ValueError(f"fen {self.fen!r} is not a FEN position: {error}") from None
        if not board.is_valid() or board.is_game_over():
            raise ValueError(f"fen {self.fen!r} is not a legal position with a move to play")
        self.board = board
        self.plies = 0
        self._legal = None

    def __getstate__(self) -> dict[str, Any]:
        """The game without its legal-move cache, which is worked out again from the board when asked for."""
        state = dict(self.__dict__)
        state["_legal"] = None
        return state

    def position_moves(self) -> tuple[list[int], bool]:
        """:func:`legal_indices` of the position, worked out once per position (do not mutate the list)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = legal_indices(self.board)
        return legal

    @property
    def turn(self) -> int:
        """The index of the side to move: 0 white, 1 black."""
        return 0 if self.board.turn else 1

    def rules(self, player: str) -> str:
        """Rules, the player's colour and the ply limit."""
        index = self.players.index(player)
        first = "white moves first" + (", you" if index == 0 else ", your opponent")
        if self.fen != STANDARD_FEN:
            first = f"the game starts from the position {self.fen}"
        limit = "" if self.max_plies is None else f" The game is also drawn once {self.max_plies} plies (single moves) have been played."
        return RULES.format(colour=COLOURS[index], player=player, first=first, limit=limit)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The board, the FEN, the last move, check, the plies left and the legal moves."""
        board = self.board
        lines = [f"Board:\n{self.board_text()}", f"FEN: {board.fen()}"]
        if board.move_stack:
            lines.append(f"Last move: {board.peek().uci()}.")
        state = "You are in check. " if board.is_check() else ""
        if self.max_plies is not None:
            state += f"{self.max_plies - self.plies} plies remain before the game is drawn. "
        lines.append(f"{state}You are {COLOURS[self.players.index(player)]}. Legal moves: {', '.join(legal or [])}.")
        return "\n".join(lines)

    def legal_actions(self, player: str) -> list[int]:
        """The indices of the legal moves, ascending."""
        return list(self.position_moves()[0])

    def parse(self, player: str, text: str) -> str:
        """The last UCI or SAN move in ``text``, as its UCI name; ``InvalidMove`` if none, or if it is not legal."""
        legal = self.legal_moves(player)
        candidate = text.strip().lower()
        if candidate in legal:
            return candidate
        found = [(m.start(), m.group(1).lower(), "uci") for m in UCI_PATTERN.finditer(text)]
        found += [(m.start(), m.group(1), "san") for m in SAN_PATTERN.finditer(text)]
        if not found:
            raise InvalidMove(f"No move found. Reply with a move in UCI (e2e4) or SAN (e4). Legal moves: {', '.join(legal)}.")
        _, written, kind = max(found)
        if kind == "uci":
            if written in legal:
                return written
            raise InvalidMove(f"'{written}' is not legal now. Legal moves: {', '.join(legal)}.")
        try:
            move = self.board.parse_san(written.replace("0", "O"))
        except ValueError:
            raise InvalidMove(f"'{written}' is not a legal move now. Legal moves (UCI): {', '.join(legal)}.") from None
        return move.uci()

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Play the move; end the game at checkmate or at a draw."""
        ((player, move),) = moves.items()
        board = self.board
        # The engine hands over legal moves only (a name from legal_actions, or what parse checked), so the move is
        # pushed without python-chess validating it again, and named from the legal moves already generated.
        chess_move = move_table()[2][move]
        san = san_without_suffix(board, chess_move, self.position_moves()[0])
        board.push(chess_move)
        self._legal = None
        self.plies += 1
        legal, check = self.position_moves()
        if check:
            san += "+" if legal else "#"
        ctx.tell(f"{player} ({COLOURS[1 - self.turn]}) plays {move} ({san}).", kind="move", sender=player)
        termination = self.termination()
        if termination is None:
            return
        details = {"termination": termination, "plies": self.plies, "fen": board.fen()}
        if termination == "checkmate":
            ctx.finish({player: 1.0, self.other(player): -1.0}, winners=[player], reason=f"{player} checkmated", details=details)
        else:
            ctx.finish(reason=f"a draw by {termination.replace('_', ' ')}", details=details)

    def termination(self) -> str | None:
        """Why the game is over in this position, or ``None`` while it goes on; checkmate before any draw."""
        board = self.board
        legal, check = self.position_moves()
        if not legal:
            return "checkmate" if check else "stalemate"
        if board.is_insufficient_material():
            return "insufficient_material"
        if board.halfmove_clock >= 100:
            return "fifty_moves"
        if board.is_repetition(3):
            return "threefold_repetition"
        if self.max_plies is not None and self.plies >= self.max_plies:
            return "max_plies"
        return None

    def view(self, player: str) -> dict:
        """The FEN where the game started, its moves in UCI, the current FEN, the player's colour and the ply limit."""
        return {
            "start_fen": self.fen,
            "moves": [move.uci() for move in self.board.move_stack],
            "fen": self.board.fen(),
            "colour": COLOURS[self.players.index(player)],
            "to_move": COLOURS[self.turn],
            "max_plies": self.max_plies,
            "plies": self.plies,
        }

    def vector(self, player: str) -> np.ndarray:
        """Piece planes (own, then the opponent's), side, castling, en passant, clock and repetition (see the module docstring)."""
        chess = chess_module()
        board = self.board
        me = chess.WHITE if self.players.index(player) == 0 else chess.BLACK
        masks = [board.pieces_mask(piece, colour) for colour in (me, not me) for piece in chess.PIECE_TYPES]
        raw = np.array(masks, dtype=np.uint64).view(np.uint8)
        out = np.zeros(VECTOR_SIZE, dtype=np.float32)
        out[: 12 * 64] = np.unpackbits(raw, bitorder="little")
        tail = 12 * 64
        out[tail] = me == chess.WHITE
        out[tail + 1 : tail + 5] = [
            board.has_kingside_castling_rights(me),
            board.has_queenside_castling_rights(me),
            board.has_kingside_castling_rights(not me),
            board.has_queenside_castling_rights(not me),
        ]
        if board.has_legal_en_passant():
            out[tail + 5 + board.ep_square % 8] = 1.0
        out[tail + 13] = min(board.halfmove_clock, 100) / 100
        out[tail + 14] = board.is_repetition(2)
        return out

    def board_text(self) -> str:
        """The board, rank 8 at the top, with rank numbers and file letters."""
        rows = str(self.board).splitlines()
        return "\n".join(f"{8 - r} {row}" for r, row in enumerate(rows)) + "\n  " + " ".join(FILES)

    def render(self) -> str:
        """The board and its FEN."""
        return f"{self.board_text()}\n{self.board.fen()}"
