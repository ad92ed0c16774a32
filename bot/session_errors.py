"""Why a bot session ends early: one error class per cause, each with its close code.

Raised inside ``bot.session.BotSession`` (and its board readers) and turned into a
``Close`` by it; the message is the close reason.
"""

from __future__ import annotations

from typing import ClassVar

from models import CLOSE_POLICY_VIOLATION, CLOSE_PROTOCOL_ERROR, CLOSE_UNSUPPORTED_DATA

__all__ = [
    "CLOSE_UNSUPPORTED_DATA",
    "HeartbeatStateError",
    "ImpossibleBoardError",
    "InvalidMatchError",
    "MoveOrderError",
    "MoveSkipError",
    "OutOfOrderError",
    "SessionError",
    "UndeclaredFeatureError",
    "WrongSideError",
]


class SessionError(Exception):
    """A reason to end the session; the message is the close reason."""

    code: ClassVar[int] = CLOSE_PROTOCOL_ERROR


class UndeclaredFeatureError(SessionError):
    """The client used an optional feature the bot does not declare."""


class OutOfOrderError(SessionError):
    """A well-formed packet the protocol does not allow at this point."""


class WrongSideError(SessionError):
    """A request for another side than the session's, from a bot not ``dual_sided``."""


class MoveOrderError(SessionError):
    """Moves that do not alternate, from a bot without ``free_move_order``."""


class MoveSkipError(SessionError):
    """The client replaced or left out the bot's move, or sent more than 2 moves at
    once, to a bot without ``move_skips``."""


class InvalidMatchError(SessionError):
    """The ``x-match`` config key does not hold valid match settings."""


class ImpossibleBoardError(SessionError):
    """A board no game can reach: two stones on a cell, or a winning line already."""

    code = CLOSE_POLICY_VIOLATION


class HeartbeatStateError(SessionError):
    """``waiting: true`` while the bot has nothing to answer: the spec's error state."""

    code = CLOSE_POLICY_VIOLATION
