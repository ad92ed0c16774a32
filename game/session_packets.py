"""The packets of a game session, read and built by pure functions: a seat's frame
read as a packet, and the ``config``, ``setup``, ``move_request``, stateless turn and
``board_update`` the session sends.

Private to ``game.session.GameSession``, which decides what to send and when; this
module only says what each packet holds, from the values it is handed.

>>> from models import BwsConfigCapability, BwsV1Alpha
>>> info = SeatInfo("bot_ws", declares=BwsV1Alpha(config=BwsConfigCapability()))
>>> config_packet(info, Match()) is None  # it declares config, but has no settings
True
>>> read_frame(Player.O, "bot_ws", '{"type": "hello"}', 1000)
Traceback (most recent call last):
...
game.seat_errors.SeatProtocolError: bad packet: ...
"""

from __future__ import annotations

from pydantic import BaseModel

from game.seat_errors import SeatProtocolError
from game.session_actions import RequestStatelessTurn
from game.session_config import SeatInfo, SeatKind
from models import (
    CLIENT_PACKETS,
    HUMAN_CLIENT_PACKETS,
    MATCH_CONFIG_KEY,
    Board,
    BoardUpdatePacket,
    BwsV1Alpha,
    ConfigPacket,
    Coord,
    GameStatus,
    Match,
    Move,
    MoveOption,
    MoveRequestPacket,
    Player,
    PositionEvaluation,
    ProtocolError,
    StatelessBoard,
    StatelessMoveRequest,
    StatelessV1Alpha,
    parse_packet,
)
from wire.frames import RefusedFrame

__all__ = ["board_update", "config_packet", "move_request", "read_frame", "stateless_turn"]

Clocks = dict[Player, int | None]


def read_frame(side: Player, kind: SeatKind, data: object, max_frame_bytes: int) -> BaseModel:
    """One frame of a websocket or human seat as a packet; ``SeatProtocolError`` (the
    seat's forfeit) for a frame the adapter refused, one too large, or one that is not
    a packet such a seat may send."""
    if isinstance(data, RefusedFrame):  # the adapter refused it: binary, not UTF-8, flood
        raise SeatProtocolError(side, data.reason)
    if not isinstance(data, str | bytes | bytearray | memoryview):
        raise SeatProtocolError(side, f"unreadable frame of type {type(data).__name__}")
    if len(data) > max_frame_bytes:
        raise SeatProtocolError(side, f"frame of {len(data)} bytes; at most {max_frame_bytes}")
    try:
        if kind == "human":
            return parse_packet(data, allowed=HUMAN_CLIENT_PACKETS)
        return parse_packet(data, allowed=CLIENT_PACKETS)
    except ProtocolError as exc:
        raise SeatProtocolError(side, f"bad packet: {exc}") from None


def config_packet(info: SeatInfo, match: Match) -> ConfigPacket | None:
    """The seat's ``config`` packet, or None: its own settings and, for a bot that says
    it reads them, the game's ``Match`` under ``MATCH_CONFIG_KEY``; only to a websocket
    bot that declares ``config``."""
    declares = info.declares
    if not isinstance(declares, BwsV1Alpha) or declares.config is None:
        return None
    settings = {} if info.config is None else info.config.model_dump(by_alias=True)
    if declares.config.accepts_match_settings:
        settings[MATCH_CONFIG_KEY] = match.model_dump(mode="json")
    elif info.config is None:
        return None
    return ConfigPacket.model_validate(settings)


def move_request(
    side: Player,
    info: SeatInfo,
    previous: list[Move],
    board: Board | None,
    time_left: float | None,
    clocks: Clocks,
) -> MoveRequestPacket:
    """A websocket or human seat's ``move_request``: ``board`` when given (None leaves
    the field off the wire: the caller gives it only to a seat whose
    ``SeatInfo.send_board`` is set), ``move_time_limit`` (``time_left``: the seconds
    until the seat's deadline, its clock's flag or the stall limit, so a game without a
    clock has one too) only for a bot that declares it."""
    declared = isinstance(info.declares, BwsV1Alpha) and info.declares.move_time_limit
    return MoveRequestPacket(
        side=side,
        previous=previous,
        board=board,
        move_time_limit=time_left if declared else None,
        clock_x_ms=clocks[Player.X],
        clock_o_ms=clocks[Player.O],
    )


def stateless_turn(
    side: Player,
    info: SeatInfo,
    board: StatelessBoard,
    time_left: float | None,
    flag_in: float | None,
) -> RequestStatelessTurn:
    """A stateless bot's turn: ``time_limit`` only when it declares it; ``flag_in`` is
    the seconds until the flag, for the adapter's HTTP timeout."""
    declared = isinstance(info.declares, StatelessV1Alpha) and info.declares.move_time_limit
    turn = StatelessMoveRequest(board=board, time_limit=time_left if declared else None)
    return RequestStatelessTurn(side, turn, flag_in)


def board_update(
    board: Board | None,
    mover: Player,
    new: list[Coord],
    to_move: Player | None,
    clocks: Clocks,
    evaluation: PositionEvaluation | None,
    considerations: list[MoveOption],
    status: GameStatus = GameStatus.IN_PROGRESS,
) -> BoardUpdatePacket:
    """The spectators' ``board_update`` for the stones ``new`` of ``mover`` (without
    ``board``: the compact stream's)."""
    return BoardUpdatePacket(
        board=board,
        move=Move(side=mover, pieces=new),
        to_move=to_move,
        status=status,
        clock_x_ms=clocks[Player.X],
        clock_o_ms=clocks[Player.O],
        evaluation=evaluation,
        considerations=considerations or None,
    )
