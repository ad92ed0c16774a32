"""The board of a request, as the bot session reads it: the stones of a ``board`` field,
or the confirmed stones plus ``previous``; the order of the moves; and short
descriptions for close reasons. Shared with the desktop client's seat.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import NamedTuple

from bot.session_errors import ImpossibleBoardError, MoveOrderError, MoveSkipError
from game.hexgrid import Hex
from game.reachable import UnreachablePositionError, check_reachable
from game.rules import IllegalMoveError, InvalidSetupError, Position, Side
from models import Board, BwsV1Alpha, Cell, Match, Move, MoveRequestPacket, Player

__all__ = [
    "STANDARD_STONES",
    "ConfirmedBoard",
    "SentAnswer",
    "build_position",
    "builds_as",
    "check_alternation",
    "check_answer_kept",
    "derive_position",
    "describe_board",
    "describe_move",
    "guess_to_move",
    "is_standard",
    "request_position",
    "request_stones",
    "rewound",
    "stones_of_board",
]


class SentAnswer(NamedTuple):
    """The bot's last move, sent but not yet confirmed by a request's ``previous``."""

    side: Player
    pieces: frozenset[Hex]

    def __str__(self) -> str:
        return f"{self.side.value} {sorted(self.pieces)}"


def check_answer_kept(
    answer: SentAnswer,
    packet: MoveRequestPacket,
    piece_at: Callable[[int, int], str | None],
    free_move_order: bool,
) -> None:
    """The bot's last ``answer`` is on the request's board: in its ``board``, else as the
    first move of ``previous`` (any move of it with ``free_move_order``). Raises
    ``MoveSkipError`` otherwise, for bots that do not declare ``move_skips``."""
    skips = "only bots that declare 'move_skips' accept a replaced or skipped move"
    if packet.board is not None:
        if any(piece_at(*cell) != answer.side.value for cell in answer.pieces):
            raise MoveSkipError(
                f"move_request.board does not hold the bot's move ({answer}); {skips}"
            )
        return
    moves = packet.previous
    candidates = moves if free_move_order else moves[:1]
    if not any(_same_move(move, answer) for move in candidates):
        got = describe_move(moves[0]) if moves else "nothing"
        raise MoveSkipError(
            f"move_request.previous must start with the bot's move ({answer}), got {got}; {skips}"
        )


def _same_move(move: Move, answer: SentAnswer) -> bool:
    return move.side is answer.side and {p.as_tuple() for p in move.pieces} == answer.pieces


def is_standard(board: Board) -> bool:
    return len(board.cells) == 1 and board.cells[0] == Cell(q=0, r=0, p=Player.X)


def stones_of_board(board: Board, where: str) -> dict[Hex, Side]:
    """The stones of a ``board`` packet field by cell; two stones on one cell raise
    ``ImpossibleBoardError`` naming ``where``. Shared with the desktop client's seat."""
    stones: dict[Hex, Side] = {}
    for cell in board.cells:
        key = (cell.q, cell.r)
        if key in stones:
            raise ImpossibleBoardError(f"impossible board: {where} has two stones on {key}")
        stones[key] = cell.p.value
    return stones


def request_stones(packet: MoveRequestPacket, confirmed: dict[Hex, Side]) -> dict[Hex, Side]:
    """The stones of a move request: its ``board`` when it has one, else the
    ``confirmed`` board (not changed) plus the moves of ``previous``. A stone twice on
    a cell raises ``ImpossibleBoardError``. Shared with the desktop client's seat."""
    if packet.board is not None:
        return stones_of_board(packet.board, "move_request.board")
    stones = dict(confirmed)
    for index, move in enumerate(packet.previous):
        _add_previous_move(stones, move, index)
    return stones


def _add_previous_move(stones: dict[Hex, Side], move: Move, index: int) -> None:
    """Put ``move`` (``previous[index]`` of a move request) on ``stones``; a stone on a
    taken cell raises ``ImpossibleBoardError``."""
    for piece in move.pieces:
        cell = piece.as_tuple()
        taken = stones.get(cell)
        if taken is not None:
            raise ImpossibleBoardError(
                f"impossible board: move_request.previous[{index}] puts {move.side.value} on "
                f"{cell}, which already holds {taken}"
            )
        stones[cell] = move.side.value


def check_alternation(packet: MoveRequestPacket, next_mover: Player | None) -> None:
    """Moves of ``previous`` then the requested side alternate, starting with
    ``next_mover`` when it is known."""
    if not packet.previous and (next_mover is None or packet.side is next_mover):
        return  # a request with nothing before it, for the side due (a move_skips bot)
    rule = "moves alternate unless the bot declares 'free_move_order'"
    movers = [move.side for move in packet.previous] + [packet.side]
    if next_mover is not None and movers[0] is not next_mover:
        what = "previous starts with" if packet.previous else "the request is for"
        raise MoveOrderError(
            f"move_request: {next_mover.value} is due to move, but {what} {movers[0].value}; {rule}"
        )
    for index, (earlier, later) in enumerate(pairwise(movers)):
        if earlier is later:
            what = f"previous[{index + 1}]" if index + 1 < len(packet.previous) else "the request"
            raise MoveOrderError(
                f"move_request: {what} is for {later.value} right after a move by "
                f"{earlier.value}; {rule}"
            )


def guess_to_move(stones: dict[Hex, Side]) -> Player:
    crosses = sum(1 for side in stones.values() if side == "x")
    return Player.O if crosses > len(stones) - crosses else Player.X


def describe_move(move: Move) -> str:
    return f"{move.side.value} {sorted(piece.as_tuple() for piece in move.pieces)}"


def describe_board(board: Board) -> str:
    shown = ", ".join(f"{cell.p.value} ({cell.q}, {cell.r})" for cell in board.cells[:4])
    more = f" and {len(board.cells) - 4} more" if len(board.cells) > 4 else ""
    return f"[{shown}{more}]" if board.cells else "an empty board"


def derive_position(
    packet: MoveRequestPacket, old: Position, cells: list[Cell] | None, match: Match
) -> Position | None:
    """The position of ``packet`` made from the confirmed one, ``old`` (whose packet
    listed ``cells``), by placing the stones of ``previous`` in order, when that gives
    exactly the position the bot session builds from the request's board (or the
    confirmed one plus ``previous``): the same stones in the same order, the same side to
    move, 2 stones left. None otherwise (the full path then decides, and raises what it
    always raised).

    ``old`` itself is advanced (and rebased) and returned: O(new stones), no copy of the
    board, however long the game (with ``board``, one comparison of its cells with the
    confirmed ones, C loops that mostly compare identical, interned cells). When the
    stones do not fit, those placed are taken back and ``old`` is as it was. The session
    that owns ``old`` rebuilds it from its first stones if it needs it back
    (``BotSession`` on an interrupt).
    """
    if packet.board is not None and not _extends(packet.board, packet, cells):
        return None
    if old.view_distance != match.view_distance or old.win_distance != match.win_distance:
        return None
    if not packet.previous:
        # ``old`` was built from all its stones, or derived and rebased: as it is.
        # (Player is a str enum: comparing it with the side's letter needs no ``.value``,
        # a property that costs more than the comparison, on the path of every move.)
        fits = old.to_move == packet.side and old.stones_left == 2
        return old if fits and old.outcome is None else None
    position, placed = old, 0
    try:
        for move in packet.previous:
            side = move.side
            for piece in move.pieces:
                if position.to_move != side:
                    return _taken_back(position, placed)
                position.place(piece.q, piece.r)
                placed += 1
    except IllegalMoveError:  # a taken cell, out of view (allowed here), game over
        return _taken_back(position, placed)
    if position.outcome is not None or position.stones_left != 2 or position.to_move != packet.side:
        return _taken_back(position, placed)
    position.rebase()  # as if built from all its stones: they are all its setup
    return position


def _taken_back(position: Position, placed: int) -> Position | None:
    """None, once the last ``placed`` stones of ``position`` (placed since its last
    rebase) are taken back: what ``derive_position`` answers for stones that do not fit."""
    for _ in range(placed):
        position.undo()
    return None


def rewound(
    board: ConfirmedBoard, stones: int, to_move: Player, match: Match, capabilities: BwsV1Alpha
) -> ConfirmedBoard:
    """``board`` as it was before ``derive_position`` moved its position on in place,
    when it held its first ``stones`` stones with ``to_move`` to move: rebuilt from
    them, O(stones), for a request that is dropped (an interrupt: rare)."""
    assert board.position is not None
    kept = {(q, r): side for q, r, side in board.position.stones[:stones]}
    return board._replace(position=build_position(kept, to_move, match, capabilities))


def _extends(board: Board, packet: MoveRequestPacket, confirmed: list[Cell] | None) -> bool:
    """Whether ``board`` lists the ``confirmed`` cells, in the same order, then the
    stones of ``packet.previous``, in order."""
    cells = board.cells
    if confirmed is None:
        return False
    if not packet.previous:  # the same board again (a bot that declares move_skips)
        return cells is confirmed or cells == confirmed
    known = len(confirmed)
    added = [(p.q, p.r, move.side) for move in packet.previous for p in move.pieces]
    if len(cells) != known + len(added):
        return False
    # Interned cells: nearly every element is the same object, which list equality
    # checks first.
    if cells is not confirmed and cells[:known] != confirmed:
        return False
    return [(cell.q, cell.r, cell.p) for cell in cells[known:]] == added


#: The board of the standard start: X's stone on (0, 0).
STANDARD_STONES: dict[Hex, Side] = {(0, 0): "x"}


class ConfirmedBoard(NamedTuple):
    """A confirmed board: the session's own ``Position`` of it, with the side of the
    request that confirmed it to move (the bot's copies are made from it; nobody
    changes it, so keeping the old value is a snapshot), and the cells of the packet
    that carried it, in the packet's order, to tell cheaply whether the next ``board``
    extends it. ``position`` is None for the standard start before any setup. (A tuple:
    one is made a move.)"""

    position: Position | None
    cells: list[Cell] | None = None

    def stones(self) -> dict[Hex, Side]:
        """The stones by cell, in placement order."""
        if self.position is None:
            return dict(STANDARD_STONES)
        return {(q, r): side for q, r, side in self.position.stones}


def request_position(
    packet: MoveRequestPacket,
    board: ConfirmedBoard,
    next_mover: Player | None,
    answer: SentAnswer | None,
    capabilities: BwsV1Alpha,
    match: Match,
    *,
    derive: bool = True,
) -> Position:
    """The position of a move request: its ``board``, else the confirmed ``board`` plus
    ``previous``, with the requested side to move; checking ``previous`` against the
    declared ``capabilities`` (``next_mover``: the side due to move, if known;
    ``answer``: the bot's last answer, not confirmed yet). With ``derive``, a request
    that only adds stones to the confirmed board costs O(new stones)."""
    moves = packet.previous
    if len(moves) > 2 and not (capabilities.move_skips or capabilities.free_move_order):
        raise MoveSkipError(
            f"move_request.previous holds {len(moves)} moves; at most 2 (the bot's and "
            f"the opponent's) unless the bot declares 'move_skips'"
        )
    free_move_order = bool(capabilities.free_move_order)
    if not free_move_order:
        check_alternation(packet, next_mover if packet.board is None else None)
    position = None
    if derive and board.position is not None:
        position = derive_position(packet, board.position, board.cells, match)
    if position is not None:
        # The derived board holds exactly the stones of the full path below, and it has
        # neither a repeated cell nor a line: only the answer check can fail.
        if answer is not None and not capabilities.move_skips:
            check_answer_kept(answer, packet, position.piece_at, free_move_order)
        return position
    stones = request_stones(packet, board.stones())
    if answer is not None and not capabilities.move_skips:
        check_answer_kept(answer, packet, lambda q, r: stones.get((q, r)), free_move_order)
    return build_position(stones, packet.side, match, capabilities)


def builds_as(position: Position, side: Player, match: Match) -> bool:
    """Whether ``position`` (a session's, 2 stones left, no outcome) is the one
    ``build_position`` would build from its stones for ``side`` under ``match``."""
    return (
        position.to_move == side
        and position.view_distance == match.view_distance
        and position.win_distance == match.win_distance
    )


def build_position(
    stones: dict[Hex, Side], to_move: Player, match: Match, capabilities: BwsV1Alpha
) -> Position:
    """The position of ``stones`` with ``to_move`` to move, under ``match``. A board no
    game can have (a repeated cell, a line already) raises ``ImpossibleBoardError``, and
    so does one that legal play from the standard opening cannot reach, unless the bot
    declares ``free_setup``: that is checked in O(stones), before any work per cell."""
    setup = [(q, r, side) for (q, r), side in stones.items()]
    try:
        if not capabilities.free_setup:
            alternating = not capabilities.free_move_order
            check_reachable(setup, to_move.value, match.view_distance, alternating=alternating)
        return Position(
            match.view_distance,
            match.win_distance,
            setup=setup,
            to_move=to_move.value,
            reject_setup_lines=True,
        )
    except UnreachablePositionError as exc:
        raise ImpossibleBoardError(
            f"impossible board: {exc} (the bot does not declare 'free_setup', so every "
            f"board must come from the standard opening)"
        ) from None
    except InvalidSetupError as exc:
        raise ImpossibleBoardError(f"impossible board: {exc}") from None
