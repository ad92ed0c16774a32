"""What a game session is given: who sits in each seat (``SeatInfo``) and the
server-wide limits it referees with (``SessionLimits``). Re-exported by
``game.session``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, TypeAlias

from game.clock import DEFAULT_STALL_LIMIT
from models import BwsV1Alpha, ConfigPacket, Meta, StatelessV1Alpha, TimeControl

__all__ = [
    "SEND_BOARD_POLICIES",
    "OpeningChannel",
    "OpeningSeatError",
    "SeatInfo",
    "SeatKind",
    "SendBoardPolicy",
    "SessionLimits",
    "SessionLimitsError",
    "resolve_send_board",
]

SeatKind: TypeAlias = Literal["bot_ws", "bot_stateless", "human"]
#: How a seat learns the stones of an opening (``SeatInfo.learns_opening_by``).
OpeningChannel: TypeAlias = Literal["setup", "previous", "board"]
#: The server's default for seats that do not say whether they get ``board``
#: (``htttx-server --send-board``): ``"auto"`` by seat kind, ``"always"`` every seat.
SendBoardPolicy: TypeAlias = Literal["auto", "always"]
SEND_BOARD_POLICIES: tuple[SendBoardPolicy, ...] = ("auto", "always")


def resolve_send_board(kind: SeatKind, asked: bool | None, policy: SendBoardPolicy) -> bool:
    """Whether a seat's ``move_request`` carries ``board``: the seat's own choice
    (``asked``) when it made one; else, with ``"always"``, yes; else (``"auto"``) yes
    for a human (the desktop client and the prototype's clients read it, and a human's
    few moves make its cost moot) and no for a websocket bot (``previous`` only, as the
    spec says). A stateless bot's request is the board whatever this says.

    >>> resolve_send_board("bot_ws", None, "auto"), resolve_send_board("human", None, "auto")
    (False, True)
    >>> resolve_send_board("bot_ws", None, "always"), resolve_send_board("human", False, "always")
    (True, False)
    """
    if asked is not None:
        return asked
    if policy == "always":
        return True
    return kind == "human"


@dataclass(frozen=True)
class SeatInfo:
    """Who sits in a seat and what it declares.

    ``declares`` is the bot's ``BwsV1Alpha`` (websocket) or ``StatelessV1Alpha``
    (stateless); ``None`` means base features only (always so for humans). ``config``
    is sent only to a websocket bot that declares ``config``. ``time_control`` is the
    seat's own clock (``None``: the game's ``Match`` clock times it).

    ``send_board``: whether this seat's ``move_request`` carries ``board``, the full
    board (our extension, read by the prototype's bots and clients). Without it a
    request holds ``previous`` only, as the spec says, and costs O(new stones) to build
    and send instead of O(stones). ``GameManager`` resolves it from the seat's and the
    server's options; the default here is off (a spec seat). Stateless bots ignore it:
    their request is the board.
    """

    kind: SeatKind
    name: str | None = None
    declares: BwsV1Alpha | StatelessV1Alpha | None = None
    config: ConfigPacket | None = None
    url: str | None = None
    meta: Meta | None = None
    time_control: TimeControl | None = None
    send_board: bool = False

    @property
    def speaks_websocket(self) -> bool:
        """Bots over a WebSocket and humans: the seats that get packets."""
        return self.kind != "bot_stateless"

    @property
    def learns_rules(self) -> bool:
        """Whether this seat can be told a game's rules when they are not the standard
        ones (``Match.rules_not_standard``): a human (the client reads them from the
        game), or a websocket bot whose ``config`` accepts ``x-match``. A stateless
        request carries no rules, nor does any spec packet but ``config``.

        >>> SeatInfo("human").learns_rules, SeatInfo("bot_ws").learns_rules
        (True, False)
        """
        if self.kind == "human":
            return True
        declares = self.declares
        return (
            isinstance(declares, BwsV1Alpha)
            and declares.config is not None
            and declares.config.accepts_match_settings
        )

    @property
    def learns_opening_by(self) -> OpeningChannel | None:
        """How this seat can be told an opening's stones without breaking the protocol:
        ``"setup"`` (its ``setup`` holds them: a human, or a websocket bot declaring
        ``free_setup``), ``"previous"`` (its first ``move_request`` lists them: a bot
        declaring ``move_skips``), ``"board"`` (a stateless bot: every request carries
        the whole board); None for a websocket bot that declares neither.

        >>> SeatInfo("bot_ws", declares=BwsV1Alpha(move_skips=True)).learns_opening_by
        'previous'
        >>> SeatInfo("bot_ws").learns_opening_by is None
        True
        """
        if self.kind == "human":
            return "setup"
        if self.kind == "bot_stateless":
            return "board"
        declares = self.declares
        if isinstance(declares, BwsV1Alpha) and declares.free_setup:
            return "setup"
        if isinstance(declares, BwsV1Alpha) and declares.move_skips:
            return "previous"
        return None


@dataclass(frozen=True)
class SessionLimits:
    """Server-wide limits, in seconds (``max_frame_bytes`` in bytes).

    ``stall_s`` bounds how long a seat may owe an answer, whatever the clock type, a
    human's included (``None``: no bound, which only the clock can then give).
    ``max_rtt_s`` caps the round trip credited to a seat.
    """

    no_show_s: float = 30.0
    stall_s: float | None = DEFAULT_STALL_LIMIT
    reconnect_s: float = 60.0
    max_rtt_s: float = 2.0
    max_frame_bytes: int = 1 << 20

    def __post_init__(self) -> None:
        # An infinite or NaN limit would let one game wait forever: refuse it here.
        for name in ("no_show_s", "reconnect_s", "max_rtt_s"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise SessionLimitsError(
                    f"{name}: expected a finite number of seconds >= 0, got {value!r}"
                )
        if self.stall_s is not None and not (math.isfinite(self.stall_s) and self.stall_s > 0):
            raise SessionLimitsError(
                f"stall_s: expected a finite number of seconds > 0 (or None), got {self.stall_s!r}"
            )
        if self.max_frame_bytes < 1:
            raise SessionLimitsError(
                f"max_frame_bytes: expected at least 1, got {self.max_frame_bytes!r}"
            )


class SessionLimitsError(ValueError):
    """A ``SessionLimits`` value that is not a usable limit."""


class OpeningSeatError(ValueError):
    """A game with an opening and a seat that cannot be told it (a websocket bot that
    declares neither ``free_setup`` nor ``move_skips``)."""
