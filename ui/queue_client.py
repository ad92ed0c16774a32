"""The person's side of the matchmaking queue (``/queue``), as a pure state machine.

No I/O, no Qt, no clock: ``QueueClient`` turns what the person asked for into the text
frames to send (``join``, ``leave``, ``create_challenge``) and each frame from the
server into events for the window (``receive``). ``ui.online`` moves the frames over a
WebSocket. The protocol (``docs/extensions.md``, "The queue protocol"):

* client -> server: ``queue_join`` {name, player_token?, time_control, bot_after_s},
  ``queue_leave``, ``challenge_create`` {name, player_token?, time_control, side};
* server -> client: ``player_token`` {name, token} (the first time a name is used),
  ``queue_waiting`` {players_waiting, rating, since_ms}, ``challenge_created``
  {challenge_id, url}, ``matched`` {game_id, side, token, ws_url, opponent,
  time_control, rated}, ``nope`` {reason} (then the server closes).

The queue lives in the server's memory, so a restart (or a network blip) drops every
waiting socket. A person who was in the queue is not told to start over: ``dropped``
decides, with no clock of its own (the caller passes ``now`` and a jitter), whether to
try again and after how long (``backoff_delay``: 0.5 s doubling to 10 s, jittered), and
gives up ``RECONNECT_GIVE_UP_S`` after the drop; ``rejoin`` is then the same
``queue_join`` again (same name, the person token, time control and bot wait). A ``nope``
is an answer, not a drop: it is never retried; nor is a socket that never got into the
queue (the server is unreachable, say so at once). An open challenge is kept by the
server (in its database) when the creator's socket drops, but no socket can watch it
again: the creator's client asks ``GET /challenges/{id}?token=`` on the same backoff
instead and hands the ``ChallengeView`` to ``polled`` (still open: ask again; accepted:
the creator's seat).

>>> client = QueueClient()
>>> client.join("alice", None, "5+2", 30)
'{"type":"queue_join","name":"alice","time_control":"5+2","bot_after_s":30.0}'
>>> client.receive('{"type":"player_token","name":"alice","token":"s3cret"}')
[TokenIssued(name='alice', token='s3cret')]
>>> [waiting] = client.receive('{"type":"queue_waiting","players_waiting":2,"rating":1500,'
...                            '"since_ms":1200}')
>>> waiting.players_waiting, client.state
(2, 'waiting')
>>> [matched] = client.receive('{"type":"matched","game_id":"g1","side":"o","token":"t",'
...     '"ws_url":"/ws?token=t","opponent":{"name":"bob","kind":"human","rating":1480},'
...     '"time_control":"5+2","rated":true}')
>>> matched.side, matched.opponent.name, client.state
('o', 'bob', 'matched')

Frames are read and written with the server's own wire types (``wire.queue``,
re-exported by ``models``), so the client reads exactly what the server writes. Anything
the server sends that breaks the protocol (unreadable, unknown, out of order) is a
``QueueViolation``; a ``nope`` is a ``QueueRefused`` carrying the server's reason.
Unknown fields are ignored, so a newer server's additions do not break the client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from pydantic import BaseModel

from models import (
    MAX_BOT_AFTER_S,
    MAX_NAME_LENGTH,
    QUEUE_SERVER_PACKETS,
    ChallengeAccepted,
    ChallengeCreatedPacket,
    ChallengeCreatePacket,
    ChallengeView,
    MatchedPacket,
    NopePacket,
    PlayerTokenPacket,
    QueueJoinPacket,
    QueueWaitingPacket,
    TimeControl,
    TimeControlError,
    dump_packet,
)
from ui.frames import UnreadableFrame, read_frame

__all__ = [
    "RECONNECT_FIRST_S",
    "RECONNECT_GIVE_UP_S",
    "RECONNECT_MAX_S",
    "ChallengeCreated",
    "Matched",
    "Opponent",
    "QueueClient",
    "QueueEvent",
    "QueueInputError",
    "QueueLost",
    "QueueRefused",
    "QueueStateError",
    "QueueViolation",
    "QueueWaiting",
    "Reconnect",
    "TokenIssued",
    "backoff_delay",
    "check_name",
    "check_time_control",
    "matched_seat",
]

#: The longest name a person may choose (the server's limit for names).
MAX_NAME_CHARS: Final = MAX_NAME_LENGTH

State: TypeAlias = Literal[
    "idle", "joining", "waiting", "reconnecting", "matched", "refused", "closed"
]

#: The first wait before reconnecting a dropped queue socket (seconds); it doubles...
RECONNECT_FIRST_S: Final = 0.5
#: ...up to this.
RECONNECT_MAX_S: Final = 10.0
#: How long after the drop the client keeps trying before it gives up (seconds).
RECONNECT_GIVE_UP_S: Final = 120.0


# ------------------------------------------------------------------------ errors


class QueueInputError(ValueError):
    """What the person typed cannot be sent (an empty name, a bad time control); the
    message says what is expected."""


class QueueStateError(RuntimeError):
    """A request that makes no sense now (joining twice, leaving when not queued)."""


# ------------------------------------------------------------------------ events


@dataclass(frozen=True)
class TokenIssued:
    """The server claimed ``name`` for this person: ``token`` proves it from now on
    (keep it; it is sent only once)."""

    name: str
    token: str


@dataclass(frozen=True)
class QueueWaiting:
    """In the queue: ``players_waiting`` people queue (this one included), the person's
    rating, how long they have waited (milliseconds, by the server's count) and, when
    they chose to play a bot after a wait, in how long one will be found."""

    players_waiting: int
    rating: float | None
    since_ms: int
    bot_in_ms: int | None = None


@dataclass(frozen=True)
class ChallengeCreated:
    """An open challenge was created: share ``url``; ``Matched`` follows when accepted."""

    challenge_id: str
    url: str


@dataclass(frozen=True)
class Opponent:
    """Who the person was paired with: ``kind`` is ``human`` or ``bot``."""

    name: str
    kind: str
    rating: float | None


@dataclass(frozen=True)
class Matched:
    """A game: play ``side`` with the seat ``token`` (``ws_url`` is the seat's socket,
    relative to the server)."""

    game_id: str
    side: str
    token: str
    ws_url: str | None
    opponent: Opponent
    time_control: str | None
    rated: bool


@dataclass(frozen=True)
class QueueRefused:
    """A ``nope``: the server refused (name taken, wrong token, bad time control...)."""

    reason: str


@dataclass(frozen=True)
class QueueViolation:
    """The server broke the queue protocol: close the socket."""

    reason: str


@dataclass(frozen=True)
class Reconnect:
    """The queue socket dropped while the person waited: open it again after
    ``delay_s`` seconds and send ``QueueClient.rejoin()`` (``attempt`` counts from 1)."""

    attempt: int
    delay_s: float


@dataclass(frozen=True)
class QueueLost:
    """The queue socket dropped and the client does not try again: ``reason`` is a
    sentence for the person."""

    reason: str


QueueEvent: TypeAlias = (
    TokenIssued | QueueWaiting | ChallengeCreated | Matched | QueueRefused | QueueViolation
)


# ------------------------------------------------------------------- input checks


def check_name(name: str) -> str:
    """The name to queue under, stripped; ``QueueInputError`` if it cannot be one.

    >>> check_name("  Alice ")
    'Alice'
    >>> check_name(" ")
    Traceback (most recent call last):
    ...
    ui.queue_client.QueueInputError: Enter a name to play under
    """
    given = name.strip()
    if not given:
        raise QueueInputError("Enter a name to play under")
    if len(given) > MAX_NAME_CHARS:
        raise QueueInputError(f"A name has at most {MAX_NAME_CHARS} characters")
    if any(not char.isprintable() for char in given):
        raise QueueInputError("A name cannot hold control characters")
    return given


def check_time_control(text: str) -> str:
    """The time control in its canonical spelling; ``QueueInputError`` saying the
    syntax if it is not one.

    >>> check_time_control(" 300 "), check_time_control("5+2")
    ('300', '5+2')
    """
    try:
        return TimeControl.parse(text).text
    except TimeControlError as error:
        raise QueueInputError(str(error)[:1].upper() + str(error)[1:]) from None


# --------------------------------------------------------------------- reconnect


def backoff_delay(attempt: int, jitter: float) -> float:
    """The wait before reconnect ``attempt`` (1, 2...): ``RECONNECT_FIRST_S`` doubling
    up to ``RECONNECT_MAX_S``, then scaled by ``0.5 + jitter / 2`` (``jitter`` in
    [0, 1]) so that people dropped together by a restart do not all come back at once.

    >>> [backoff_delay(n, 1.0) for n in (1, 2, 3, 5, 6, 20)]
    [0.5, 1.0, 2.0, 8.0, 10.0, 10.0]
    >>> backoff_delay(3, 0.0), backoff_delay(6, 0.5)
    (1.0, 7.5)
    """
    if attempt < 1:
        raise ValueError(f"attempts count from 1, not {attempt}")
    doubled = RECONNECT_FIRST_S * 2.0 ** min(attempt - 1, 30)
    return min(doubled, RECONNECT_MAX_S) * (0.5 + min(max(jitter, 0.0), 1.0) / 2)


# ------------------------------------------------------------------------ client


class QueueClient:
    """One person on one ``/queue`` socket.

    ``state``: ``idle`` (nothing sent), ``joining`` (``queue_join`` or
    ``challenge_create`` sent, no answer yet), ``waiting`` (queued, or a challenge is
    open), ``matched`` (a game: the socket's work is done), ``refused`` (a ``nope``),
    ``closed`` (left, or the server broke the protocol), ``reconnecting`` (the socket
    dropped while queued; see ``dropped``). ``name`` and ``token`` are the person's, once
    known (a ``player_token`` sets the token). ``attempt`` counts the reconnects since
    the last drop (0 when connected).
    """

    def __init__(self) -> None:
        self.state: State = "idle"
        self.name: str | None = None
        self.token: str | None = None
        self.challenge: ChallengeCreated | None = None
        self.match: Matched | None = None
        self.attempt = 0
        self._join: QueueJoinPacket | None = None
        self._queued = False  # the server once answered the join with queue_waiting
        self._dropped_at: float | None = None

    # ----------------------------------------------------------------- inputs

    def join(self, name: str, token: str | None, time_control: str, bot_after_s: int | None) -> str:
        """The ``queue_join`` frame; ``bot_after_s`` None: never a bot, people only."""
        who = self._who(name, token)
        tc = check_time_control(time_control)
        if bot_after_s is not None and not 0 <= bot_after_s <= MAX_BOT_AFTER_S:
            raise QueueInputError(
                f"The wait before a bot is from 0 to {MAX_BOT_AFTER_S:.0f} s, not {bot_after_s}"
            )
        wait = None if bot_after_s is None else float(bot_after_s)
        packet = QueueJoinPacket(**who, time_control=tc, bot_after_s=wait)
        self._join = packet
        return self._start(packet)

    def create_challenge(
        self, name: str, token: str | None, time_control: str, side: str = "random"
    ) -> str:
        """The ``challenge_create`` frame: an open seat anyone with the link can take."""
        if side not in ("x", "o", "random"):
            raise QueueInputError(f"side must be x, o or random, not {side!r}")
        who = self._who(name, token)
        tc = check_time_control(time_control)
        return self._start(ChallengeCreatePacket(**who, time_control=tc, side=side))

    def dropped(self, now: float, jitter: float, why: str) -> Reconnect | QueueLost:
        """The socket ended (``why``: a sentence saying how) at ``now`` (seconds, any
        monotonic clock): try again, or not.

        >>> client = QueueClient()
        >>> _ = client.join("alice", "tok", "300", None)
        >>> client.dropped(0.0, 1.0, "Cannot connect")  # never got in: say so
        QueueLost(reason='Cannot connect')
        >>> client = QueueClient()
        >>> _ = client.join("alice", "tok", "300", None)
        >>> _ = client.receive(
        ...     '{"type":"queue_waiting","players_waiting":1,"rating":1500,"since_ms":0}'
        ... )
        >>> client.dropped(100.0, 1.0, "lost"), client.state
        (Reconnect(attempt=1, delay_s=0.5), 'reconnecting')
        >>> client.rejoin()
        '{"type":"queue_join","name":"alice","player_token":"tok","time_control":"300"}'
        >>> client.dropped(101.0, 1.0, "refused")  # the server is still down
        Reconnect(attempt=2, delay_s=1.0)
        >>> _ = client.rejoin()
        >>> client.dropped(220.0, 1.0, "refused"), client.state  # 2 minutes on
        (QueueLost(reason='Lost the connection to the queue and could not get back in \
within 2 minutes (refused). Try again later.'), 'closed')
        """
        if self.state not in ("joining", "waiting", "reconnecting"):
            return QueueLost(why)
        queued = self._join is not None and self._queued
        challenged = self.challenge is not None and self.token is not None
        if not (queued or challenged):
            self.state = "closed"
            return QueueLost(why)
        if self._dropped_at is None:
            self._dropped_at = now
        if now - self._dropped_at >= RECONNECT_GIVE_UP_S:
            self.state = "closed"
            return QueueLost(
                "Lost the connection to the queue and could not get back in within "
                f"{RECONNECT_GIVE_UP_S / 60:g} minutes ({why}). Try again later."
            )
        self.attempt += 1
        self.state = "reconnecting"
        return Reconnect(self.attempt, backoff_delay(self.attempt, jitter))

    def rejoin(self) -> str:
        """The ``queue_join`` to send on the new socket after a ``Reconnect``: the same
        request, with the person token the server may have handed out since."""
        if self.state != "reconnecting" or self._join is None:
            raise QueueStateError(f"not reconnecting (state {self.state})")
        self.state = "joining"
        packet = self._join.model_copy(update={"player_token": self.token})
        return dump_packet(packet).decode()

    def polled(self, view: ChallengeView, jitter: float) -> Matched | Reconnect | QueueLost:
        """The person's open challenge as ``GET /challenges/{id}?token=`` read it while
        reconnecting: its seat once accepted, ask again while it is open (the server is
        back: the clock of ``dropped`` starts over), or the end of the wait."""
        if self.state != "reconnecting" or self.challenge is None:
            raise QueueStateError(f"not waiting on a challenge (state {self.state})")
        if view.matched is not None:
            self.state = "matched"
            self.match = matched_seat(view.matched)
            return self.match
        if view.status == "open":
            self._dropped_at = None
            self.attempt += 1
            return Reconnect(self.attempt, RECONNECT_MAX_S * (0.5 + min(max(jitter, 0), 1) / 2))
        self.state = "closed"
        if view.status == "expired":
            return QueueLost("Nobody accepted the challenge before it expired.")
        if view.status == "cancelled":  # its queue socket closed while cut off
            return QueueLost("The challenge was cancelled when the connection dropped.")
        return QueueLost(
            f"The challenge was accepted by {view.accepted_by or 'someone'}, but its game "
            "is over already."
        )

    def leave(self) -> str:
        """The ``queue_leave`` frame; the client is ``closed`` afterwards (while
        reconnecting there is no socket to send it on: it stops the reconnecting)."""
        if self.state not in ("joining", "waiting", "reconnecting"):
            raise QueueStateError(f"not in the queue (state {self.state})")
        self.state = "closed"
        return '{"type":"queue_leave"}'

    def receive(self, text: str | bytes) -> list[QueueEvent]:
        """One frame from the server -> events. Never raises."""
        if self.state in ("refused", "closed", "matched", "reconnecting"):
            return []
        try:
            packet = read_frame(text, QUEUE_SERVER_PACKETS, "the queue")
        except UnreadableFrame as error:
            return self._violation(str(error))
        match packet:
            case NopePacket(reason=reason):
                self.state = "refused"
                return [QueueRefused(reason)]
            case _ if self.state == "idle":
                return self._violation(f"{packet.type} before the client joined")
            case PlayerTokenPacket(name=name, token=token):
                self.token = token
                return [TokenIssued(name, token)]
            case QueueWaitingPacket():
                self.state = "waiting"
                self._queued = self._join is not None
                self.attempt, self._dropped_at = 0, None
                return [
                    QueueWaiting(
                        packet.players_waiting, packet.rating, packet.since_ms, packet.bot_in_ms
                    )
                ]
            case ChallengeCreatedPacket(challenge_id=challenge_id, url=url):
                self.state = "waiting"
                self.challenge = ChallengeCreated(challenge_id, url)
                return [self.challenge]
            case MatchedPacket():
                self.state = "matched"
                self.match = matched_seat(packet)
                return [self.match]
        return self._violation(f"unexpected packet {packet!r}")  # pragma: no cover

    # ---------------------------------------------------------------- helpers

    def _who(self, name: str, token: str | None) -> dict[str, str | None]:
        if self.state != "idle":
            raise QueueStateError(f"this queue client already joined (state {self.state})")
        return {"name": check_name(name), "player_token": token or None}

    def _start(self, packet: BaseModel) -> str:
        self.name = getattr(packet, "name", None)
        self.token = getattr(packet, "player_token", None)
        self.state = "joining"
        return dump_packet(packet).decode()

    def _violation(self, reason: str) -> list[QueueEvent]:
        self.state = "closed"
        return [QueueViolation(reason)]


def matched_seat(seat: MatchedPacket | ChallengeAccepted) -> Matched:
    """The person's seat as the window reads it, from the queue's ``matched`` packet or
    the answer to an accepted challenge (the server sends the same fields in both)."""
    who = seat.opponent
    return Matched(
        game_id=seat.game_id,
        side=seat.side.value,
        token=seat.token,
        ws_url=seat.ws_url,
        opponent=Opponent(who.name, who.kind, who.rating),
        time_control=seat.time_control,
        rated=seat.rated,
    )
