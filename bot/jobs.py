"""What a bot session hands its adapter: think jobs for the bot, and the actions that
carry a session's decisions out (send, think, cancel, configure, reset, close), with
the timing rules of an answer. Pure values: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from pydantic import BaseModel

from bot.bot import MoveDecision
from game.rules import Position
from models import Match, Player, PositionEvaluation, dump_packet

__all__ = [
    "Action",
    "Cancel",
    "Close",
    "Configure",
    "JobResult",
    "Reset",
    "Send",
    "Think",
    "ThinkJob",
    "answer_within",
    "heartbeat_grace",
    "network_margin",
    "time_left",
]

# The answer must cross the network before the client's limit runs out: keep this much
# back, but never more than a fifth of a short limit (the bot needs time to think too).
_MAX_NETWORK_MARGIN = 0.5
_NETWORK_MARGIN_SHARE = 0.2
_MIN_HEARTBEAT_GRACE = 1.0


def network_margin(time_limit: float) -> float:
    """Seconds kept back from a time limit for the answer to travel:
    ``min(0.5, 20% of the limit)``.

    >>> network_margin(10.0), network_margin(1.0)
    (0.5, 0.2)
    """
    return min(_MAX_NETWORK_MARGIN, _NETWORK_MARGIN_SHARE * time_limit)


def answer_within(time_limit: float | None) -> float | None:
    """When the answer is due, in seconds from the request: the limit less the margin.

    >>> answer_within(10.0), answer_within(None)
    (9.5, None)
    """
    return None if time_limit is None else time_limit - network_margin(time_limit)


def time_left(seconds: float | None, elapsed: float) -> float | None:
    """What is left of ``seconds`` counted from a request's arrival, ``elapsed`` seconds
    after it (never below 0); None for no limit. Every adapter counts a job's
    ``time_limit`` and ``answer_within`` from the request's arrival (a frame read, an
    HTTP request's head), as the client's clock runs from its sending: reading and
    parsing the request are the bot's time too.

    >>> time_left(2.0, 0.5), time_left(2.0, 3.0), time_left(None, 1.0)
    (1.5, 0.0, None)
    """
    return None if seconds is None else max(0.0, seconds - elapsed)


def heartbeat_grace(observed_interval: float | None, match: Match) -> float:
    """How long after an answer a ``waiting: true`` heartbeat is taken to have crossed
    it on the wire: twice the heartbeat interval (as observed, else the match's), at
    least 1 s.

    >>> heartbeat_grace(None, Match(heartbeat=5000)), heartbeat_grace(0.2, Match())
    (10.0, 1.0)
    """
    interval = match.heartbeat / 1000 if observed_interval is None else observed_interval
    return max(_MIN_HEARTBEAT_GRACE, 2 * interval)


# ----------------------------------------------------------------------- actions


class ThinkJob:
    """A request for the bot: a move or an evaluation. A value: nobody changes it.

    ``position`` is the bot's own copy (``side`` to move, 2 stones left). ``time_limit``
    is the request's limit in seconds, only when the bot declared it honours limits;
    ``answer_within`` is when the adapter must call ``answer_due`` (the limit less a
    safety margin for the network), or None for no limit.

    The bot may change ``position`` as it thinks; ``original_position()`` gives the
    position as asked, against which its answer is checked. ``asked_as``, when given, is
    that position (a different object, equal to ``position``, which nobody changes: the
    session's own); by default it is a copy of ``position`` taken here.

    A plain class with slots, not a frozen dataclass: one is made per move, and a frozen
    dataclass's keyword ``__init__`` costs ten times as much.
    """

    __slots__ = (
        "_original",
        "answer_within",
        "job_id",
        "kind",
        "match",
        "position",
        "side",
        "time_limit",
    )

    def __init__(
        self,
        job_id: int,
        kind: Literal["move", "eval"],
        position: Position,
        side: Player,
        match: Match,
        time_limit: float | None,
        answer_within: float | None,
        *,
        asked_as: Position | None = None,
    ) -> None:
        self.job_id = job_id
        self.kind = kind
        self.position = position
        self.side = side
        self.match = match
        self.time_limit = time_limit
        self.answer_within = answer_within
        # Taken before the bot sees ``position``: checking its answer must not depend
        # on what the bot did to its copy, nor race with a bot still thinking.
        if asked_as is None or asked_as is position:
            asked_as = position.copy()
        self._original = asked_as

    def __repr__(self) -> str:
        return (
            f"ThinkJob(job_id={self.job_id!r}, kind={self.kind!r}, position={self.position!r}, "
            f"side={self.side!r}, time_limit={self.time_limit!r}, "
            f"answer_within={self.answer_within!r})"
        )

    def original_position(self) -> Position:
        """A fresh copy of the position as it was when the job was made."""
        return self._original.copy()

    @property
    def asked(self) -> Position:
        """The position as it was when the job was made: the session's own, to read and
        not to change (``original_position()`` gives a copy to change), and only while
        the job's request is pending: the session's next request moves it on in place."""
        return self._original


class Send:
    """Send this packet to the client.

    ``warning``, when set, says why the packet is not what the bot answered (an illegal
    move or none in time, replaced by a fallback): the adapter logs it. ``encoded`` is
    the packet already encoded (``dump_packet``), when the session had to encode it.

    With ``encoded``, the packet may instead be given as ``build``, which makes it when
    ``packet`` is first read: the adapter only sends the bytes, so the common answer
    never builds its pydantic models. A value: equal when packet and warning are.
    """

    __slots__ = ("_build", "_packet", "encoded", "warning")

    def __init__(
        self,
        packet: BaseModel | None = None,
        warning: str | None = None,
        encoded: bytes | None = None,
        *,
        build: Callable[[], BaseModel] | None = None,
    ) -> None:
        if packet is None and (build is None or encoded is None):
            raise TypeError("Send needs a packet, or its encoding and a build for it")
        self._packet = packet
        self._build = build
        self.warning = warning
        self.encoded = encoded

    @property
    def packet(self) -> BaseModel:
        packet = self._packet
        if packet is None:
            assert self._build is not None  # the constructor makes sure
            packet = self._packet = self._build()
        return packet

    def data(self) -> bytes:
        """The packet's JSON bytes, encoded once."""
        return self.encoded if self.encoded is not None else dump_packet(self.packet)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Send):
            return NotImplemented
        return (self.packet, self.warning) == (other.packet, other.warning)

    def __hash__(self) -> int:
        return hash((self.packet, self.warning))

    def __repr__(self) -> str:
        return f"Send(packet={self.packet!r}, warning={self.warning!r})"


@dataclass(frozen=True)
class Think:
    """Start the bot on ``job`` off the event loop; report with ``job_done``/``job_failed``
    and, if ``job.answer_within`` is set, call ``answer_due`` when it elapses."""

    job: ThinkJob


@dataclass(frozen=True)
class Cancel:
    """Tell the running job to stop (cancel its ``Deadline``); its result is void."""

    job_id: int


@dataclass(frozen=True)
class Configure:
    """Call ``bot.on_config(depth, extras)`` (in order with the bot's other calls)."""

    depth: int | None
    extras: dict[str, object]


@dataclass(frozen=True)
class Reset:
    """A new start position: call ``bot.on_setup(position)`` (in order)."""

    position: Position


@dataclass(frozen=True)
class Close:
    """Close the connection. ``code`` is a WebSocket close code (1000 normal, 1002
    protocol error, 1008 policy, 1011 internal error); ``reason`` is logged and sent."""

    code: int
    reason: str


Action: TypeAlias = Send | Think | Cancel | Configure | Reset | Close

JobResult: TypeAlias = MoveDecision | PositionEvaluation
