"""Writing the wire: ``dump_packet`` (reading it is ``wire.codec``).

Every packet is written as compact JSON by orjson from pydantic's dump, with the
``null``s that mean something put back. The two packets of every move — a
``move_request`` without ``board``, the compact stream's ``board_update`` — are
written straight from their fields instead, the same bytes several times faster
(tests/test_models.py compares the two ways). A board a ``GrowingBoard`` already
encoded goes in as those bytes, not cell by cell.
"""

from __future__ import annotations

import json
import math
import secrets
from functools import cache
from types import NoneType, UnionType
from typing import Annotated, Any, Final, Union, get_args, get_origin

import orjson
from pydantic import BaseModel

from wire.basics import Cell, Coord
from wire.board import _ENCODED_CELLS, Board, Move, _cells_json
from wire.packets import BoardUpdatePacket, MoveRequestPacket
from wire.records import PositionEvaluation

__all__ = ["dump_packet"]


@cache
def _json_names(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(
        field.serialization_alias or field.alias or name
        for name, field in model.model_fields.items()
    )


@cache
def _always_written(model: type[BaseModel]) -> frozenset[str]:
    """Required fields that may be None: their ``null`` means something."""
    return frozenset(
        json_name
        for json_name, field in zip(_json_names(model), model.model_fields.values(), strict=True)
        if field.is_required() and _allows_none(field.annotation)
    )


def _with_meaningful_nulls(packet: BaseModel, data: dict[str, Any]) -> dict[str, Any]:
    """Put back the ``null``s that ``exclude_none`` dropped but that carry meaning: required
    fields that may be None, and extra settings (``config``) explicitly set to null.

    Only the top level needs this: no nested wire model has such a field.
    """
    extras = packet.model_extra or {}
    nulls = _always_written(type(packet)) | {name for name, v in extras.items() if v is None}
    if nulls <= data.keys():
        return data
    order = [*_json_names(type(packet)), *extras]
    return {name: data.get(name) for name in order if name in data or name in nulls}


def _allows_none(annotation: object) -> bool:
    if annotation is None or annotation is NoneType:
        return True
    if get_origin(annotation) in (Union, UnionType):
        return any(_allows_none(arg) for arg in get_args(annotation))
    if get_origin(annotation) is Annotated:
        return _allows_none(get_args(annotation)[0])
    return False


def dump_packet(packet: BaseModel) -> bytes:
    """Encode a packet or any wire body as compact JSON bytes.

    Optional fields that are ``None`` are left out, as the spec requires (a bot that
    does not declare ``move_time_limit`` must not see one). Required fields that may be
    ``None`` — ``end.winner`` for a draw, ``board_update.to_move`` after the end — are
    always written, as are ``null`` settings of a ``config`` packet. Capabilities use
    their JSON names (``"v1-alpha"``).

    >>> from models import EndPacket, MoveRequestPacket, Player, ResultReason
    >>> dump_packet(MoveRequestPacket(side=Player.O, previous=[]))
    b'{"type":"move_request","side":"o","previous":[]}'
    >>> dump_packet(EndPacket(winner=None, reason=ResultReason.DRAW))
    b'{"type":"end","winner":null,"reason":"draw"}'
    """
    if type(packet) is MoveRequestPacket and packet.board is None:
        # The packet of every move: written straight from its fields, the same bytes.
        text = _dump_move_request(packet)
        if text is not None:
            return text
    elif type(packet) is BoardUpdatePacket and packet.board is None:
        # The compact stream's update, one per move of a watched game: the same.
        text = _dump_board_update(packet)
        if text is not None:
            return text
    return _dump_model(packet)


def _dump_model(packet: BaseModel) -> bytes:
    """``dump_packet`` for any packet, through pydantic's dump."""
    nested = getattr(packet, "board", None)
    board = packet if isinstance(packet, Board) else nested
    encoded = _encoded_cells(board) if isinstance(board, Board) else None
    # Cells a GrowingBoard already encoded go in as a placeholder, replaced at the end.
    cells = _CELLS_PLACEHOLDER if encoded is not None else None
    if isinstance(board, Board) and board is not packet:
        data = packet.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"board"})
        data["board"] = _board_json(board, cells)
    elif isinstance(board, Board):
        data = _board_json(board, cells)
    else:
        data = packet.model_dump(mode="json", by_alias=True, exclude_none=True)
    data = _with_meaningful_nulls(packet, data)
    try:
        text = orjson.dumps(data)
    except orjson.JSONEncodeError:
        # orjson stops at 64-bit integers and 255 levels of nesting; json does not.
        text = json.dumps(data, separators=(",", ":"), allow_nan=False).encode()
    if encoded is not None:
        text = text.replace(_CELLS_PLACEHOLDER_JSON, b"[" + encoded + b"]", 1)
    return text


def _move_data(move: Move) -> dict[str, Any]:
    """A ``Move`` as the JSON data its model dumps, for orjson: a Coord's ``__dict__`` is
    exactly ``{"q", "r"}``, and orjson writes Player as its value."""
    pieces = [c.__dict__ if type(c) is Coord else {"q": c.q, "r": c.r} for c in move.pieces]
    return {"side": move.side, "pieces": pieces}


def _dump_move_request(packet: MoveRequestPacket) -> bytes | None:
    """A ``move_request`` without ``board`` as ``_dump_model`` writes it, several times
    faster; None for anything unusual (a subclassed part, a number orjson refuses), which
    then goes the general way."""
    previous: list[dict[str, Any]] = []
    for move in packet.previous:
        if type(move) is not Move:
            return None
        previous.append(_move_data(move))
    data: dict[str, Any] = {"type": "move_request", "side": packet.side, "previous": previous}
    if packet.move_time_limit is not None:
        data["move_time_limit"] = packet.move_time_limit
    if packet.clock_x_ms is not None:
        data["clock_x_ms"] = packet.clock_x_ms
    if packet.clock_o_ms is not None:
        data["clock_o_ms"] = packet.clock_o_ms
    try:
        return orjson.dumps(data)
    except orjson.JSONEncodeError:
        return None


def _dump_board_update(packet: BoardUpdatePacket) -> bytes | None:
    """A ``board_update`` without ``board`` (the compact stream's) as ``_dump_model``
    writes it; None for anything unusual (considerations, an evaluation with extra
    fields or a number JSON has no plain form for, a subclassed part), which then goes
    the general way."""
    move = packet.move
    if type(move) is not Move or packet.considerations is not None:
        return None
    data: dict[str, Any] = {
        "type": "board_update",
        "move": _move_data(move),
        "to_move": packet.to_move,  # written when None too: the game is over
        "status": packet.status,
    }
    if packet.clock_x_ms is not None:
        data["clock_x_ms"] = packet.clock_x_ms
    if packet.clock_o_ms is not None:
        data["clock_o_ms"] = packet.clock_o_ms
    evaluation = packet.evaluation
    if evaluation is not None:
        if type(evaluation) is not PositionEvaluation or evaluation.__pydantic_extra__:
            return None
        heuristic, win_in = evaluation.heuristic, evaluation.win_in
        if heuristic is not None and not math.isfinite(heuristic):
            return None
        data["evaluation"] = {
            name: value
            for name, value in (("heuristic", heuristic), ("win_in", win_in))
            if value is not None
        }
    try:
        return orjson.dumps(data)
    except orjson.JSONEncodeError:
        return None


# Random per process, so no string a peer sends (a name, a reason) can be mistaken for
# it; both JSON encoders write it the same way (control characters as \u00XX).
_CELLS_PLACEHOLDER: Final = f"\x00cells-{secrets.token_hex(8)}\x00"
_CELLS_PLACEHOLDER_JSON: Final = orjson.dumps(_CELLS_PLACEHOLDER)


def _encoded_cells(board: Board) -> bytes | None:
    """The JSON a ``GrowingBoard`` left on ``board``, if its cells are still those."""
    cached: tuple[list[Cell], int, bytes] | None = board.__dict__.get(_ENCODED_CELLS)
    if cached is None:
        return None
    cells, count, encoded = cached
    return encoded if board.cells is cells and len(cells) == count else None


def _board_json(board: Board, cells: str | None) -> dict[str, Any]:
    """A board as JSON data, with ``cells`` standing for its cells when given."""
    cells_data: object = _cells_json(board.cells) if cells is None else cells
    if type(board) is Board:
        return {"cells": cells_data}
    data = board.model_dump(mode="json", exclude_none=True, exclude={"cells"})
    data["cells"] = cells_data
    return data
