"""Bodies of the stateless HTTP API v1-alpha."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictFloat

from wire.basics import Player
from wire.board import Board
from wire.records import MoveAnswer, MoveOption


class StatelessBoard(Board):
    """The stateless API's board: the stones plus the side to move."""

    to_move: Player


class StatelessMoveRequest(BaseModel):
    """Body of ``POST <api_root>/turn``; ``time_limit`` in seconds, absent = unlimited."""

    model_config = ConfigDict(frozen=True)

    board: StatelessBoard
    time_limit: Annotated[StrictFloat, Field(ge=0, allow_inf_nan=False)] | None = None


class StatelessMove(MoveOption):
    """A move in the stateless API: 2 pieces and an optional evaluation."""


class StatelessMoveResponse(BaseModel):
    """The answer to ``POST <api_root>/turn``: 2 pieces (1 when it wins), like a
    ``move_response``."""

    model_config = ConfigDict(frozen=True)

    move: MoveAnswer
    considerations: list[StatelessMove] | None = None
