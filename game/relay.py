"""A person's socket relayed to another worker of a cluster: the decisions (pure, no
I/O). ``game.cluster_relay`` is the adapter that pumps the frames. Two sockets are
relayed so: a human seat's ``/ws?token=`` to the worker that runs its game (``GAME``),
and a ``/queue`` to the worker that leads the queue (``QUEUE``, ``game.cluster_queue``).

A person's ``/ws?token=T`` may reach any worker of a cluster (a load balancer with no
affinity). The worker that runs the game (its *owner*, ``htttx:token:<sha256 of T>``)
seats it; any other worker opens a WebSocket to the owner's ``/ws?token=T`` and passes
text frames both ways until one side closes, then closes the other side with what
``person_close`` / ``owner_close`` say. The owner sees an ordinary connection: its
drops, returns and reconnect window apply as to any.

>>> route("w-a", "w-b", "http://10.0.0.7:8001")
'ws://10.0.0.7:8001/ws'
>>> route("w-b", "w-b", "http://h:1") is None, route(None, "w-b", None) is None
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final

from models import (
    CLOSE_GOING_AWAY,
    CLOSE_INTERNAL_ERROR,
    CLOSE_MESSAGE_TOO_BIG,
    CLOSE_NORMAL,
    CLOSE_TRY_AGAIN_LATER,
    clip_close_reason,
)

__all__ = [
    "CONNECT_TIMEOUT",
    "GAME",
    "QUEUE",
    "Ending",
    "LeaderChanging",
    "Peer",
    "owner_close",
    "owner_ws_url",
    "peer_ws_url",
    "person_close",
    "queue_route",
    "queue_ws_url",
    "route",
    "sendable",
]

#: How long opening the socket to the owner may take.
CONNECT_TIMEOUT: Final = 10.0


@dataclass(frozen=True)
class Peer:
    """The worker a socket is relayed to, as the person's close reasons name it."""

    #: Who it is, e.g. "the game's worker".
    name: str
    #: Why the relay ends when it no longer holds what it was relayed to for.
    gone: str


#: A seat relayed to the worker that runs its game.
GAME: Final = Peer("the game's worker", "the game's worker is gone (its lease expired)")
#: A ``/queue`` socket relayed to the queue's leader.
QUEUE: Final = Peer(
    "the queue's worker", "the queue moved to another worker (its leader changed): join again"
)


def peer_ws_url(base: str, path: str) -> str:
    """A socket of the worker at ``base`` (its worker key's URL): ``path`` as given.

    >>> peer_ws_url("https://a.example/", "/queue")
    'wss://a.example/queue'
    """
    base = base.rstrip("/")
    if base.startswith("https://"):
        base = "wss://" + base[len("https://") :]
    elif base.startswith("http://"):
        base = "ws://" + base[len("http://") :]
    return f"{base}{path}"


def owner_ws_url(base: str, token: str | None = None) -> str:
    """The owner's seat socket for ``token``, from its base URL (its worker key's).

    >>> owner_ws_url("https://a.example/", "t0k")
    'wss://a.example/ws?token=t0k'
    >>> owner_ws_url("http://127.0.0.1:8101", "a b")
    'ws://127.0.0.1:8101/ws?token=a%20b'
    """
    from urllib.parse import quote

    return peer_ws_url(base, "/ws" if token is None else f"/ws?token={quote(token, safe='')}")


def queue_ws_url(base: str) -> str:
    """The queue leader's ``/queue`` socket.

    >>> queue_ws_url("http://127.0.0.1:8101")
    'ws://127.0.0.1:8101/queue'
    """
    return peer_ws_url(base, "/queue")


def route(owner_id: str | None, self_id: str, owner_url: str | None) -> str | None:
    """Where a seat socket goes: None to seat (or refuse) it here, else the owner's
    ``/ws`` URL, the token left out (``owner_ws_url``). Here when the token has no owner
    (unknown, or its game is over), when this worker owns it, or when the owner's
    lease is gone (no URL)."""
    if owner_id is None or owner_id == self_id or owner_url is None:
        return None
    return owner_ws_url(owner_url)


class LeaderChanging(Exception):
    """The queue's leader is named but its worker's lease is gone: it is changing."""


def queue_route(leader: str | None, self_id: str, leader_url: str | None) -> str | None:
    """Where a ``/queue`` socket goes: None to serve it here (no leader, or this worker
    leads), else the leader's ``/queue`` URL; ``LeaderChanging`` when the leader's
    worker lease is gone (no URL).

    >>> queue_route("w-a", "w-b", "http://10.0.0.7:8001")
    'ws://10.0.0.7:8001/queue'
    >>> queue_route("w-b", "w-b", None) is None, queue_route(None, "w-b", None) is None
    (True, True)
    >>> queue_route("w-a", "w-b", None)
    Traceback (most recent call last):
    game.relay.LeaderChanging: the queue's leader w-a stopped answering; try again in a moment
    """
    if leader is None or leader == self_id:
        return None
    if leader_url is None:
        why = f"the queue's leader {leader} stopped answering; try again in a moment"
        raise LeaderChanging(why)
    return queue_ws_url(leader_url)


class Ending(Enum):
    """Why a relay ends."""

    #: The owner closed its side (the game's end, a refusal, a replaced connection).
    OWNER_CLOSED = "owner closed"
    #: The person closed (or dropped) their side.
    PERSON_CLOSED = "person closed"
    #: The owner could not be reached (refused, timed out).
    CONNECT_FAILED = "connect failed"
    #: The owner's worker lease expired while relaying (for the queue: another
    #: worker leads it now).
    OWNER_GONE = "owner gone"
    #: A frame larger than the relay carries.
    TOO_BIG = "too big"
    #: This worker is shutting down.
    SHUTDOWN = "shutdown"


def sendable(code: int | None) -> bool:
    """Whether a close frame may carry ``code`` (RFC 6455 7.4: not 1004-1006, 1015).

    >>> [sendable(c) for c in (1000, 1008, 1006, 1005, 4001, None, 999)]
    [True, True, False, False, True, False, False]
    """
    if code is None or not 1000 <= code <= 4999:
        return False
    return code not in (1004, 1005, 1006, 1015) and not 1016 <= code <= 2999


def person_close(
    ending: Ending, code: int | None = None, reason: str = "", peer: Peer = GAME
) -> tuple[int, str]:
    """The close the person gets. The owner's close passes through as it is (a ``nope``
    and 1008 reach the person unchanged); a broken link to the owner is 1011. ``peer``
    names the worker relayed to (a game's, by default, or the queue's).

    >>> person_close(Ending.OWNER_CLOSED, 1008, "unknown token, or its game is over")
    (1008, 'unknown token, or its game is over')
    >>> person_close(Ending.OWNER_CLOSED, 1006)
    (1011, "the connection to the game's worker broke")
    >>> person_close(Ending.CONNECT_FAILED, reason="timed out")[0]
    1013
    >>> person_close(Ending.OWNER_GONE)
    (1011, "the game's worker is gone (its lease expired)")
    >>> person_close(Ending.CONNECT_FAILED, reason="refused", peer=QUEUE)
    (1013, "cannot reach the queue's worker: refused")
    """
    if ending is Ending.OWNER_CLOSED:
        if sendable(code):
            assert code is not None
            return code, clip_close_reason(reason)
        return CLOSE_INTERNAL_ERROR, f"the connection to {peer.name} broke"
    if ending is Ending.CONNECT_FAILED:
        why = f"cannot reach {peer.name}: {reason}" if reason else "cannot reach it"
        return CLOSE_TRY_AGAIN_LATER, clip_close_reason(why)
    if ending is Ending.OWNER_GONE:
        return CLOSE_INTERNAL_ERROR, clip_close_reason(peer.gone)
    if ending is Ending.TOO_BIG:
        return CLOSE_MESSAGE_TOO_BIG, clip_close_reason(reason or "frame too large")
    if ending is Ending.SHUTDOWN:
        return CLOSE_GOING_AWAY, "the game server is shutting down"
    return CLOSE_NORMAL, ""  # the person closed: nothing more is sent


def owner_close(ending: Ending, code: int | None = None, reason: str = "") -> tuple[int, str]:
    """The close the owner gets: the person's own close when it can be sent, else
    1001 (to the owner a drop like any other: the seat's reconnect window begins).

    >>> owner_close(Ending.PERSON_CLOSED, 1000, "bye")
    (1000, 'bye')
    >>> owner_close(Ending.PERSON_CLOSED, 1006)
    (1001, "the person's connection to the relaying worker ended")
    >>> owner_close(Ending.TOO_BIG, reason="frame of 9 bytes")
    (1009, 'frame of 9 bytes')
    """
    if ending is Ending.PERSON_CLOSED and sendable(code):
        assert code is not None
        return code, clip_close_reason(reason)
    if ending is Ending.TOO_BIG:
        return CLOSE_MESSAGE_TOO_BIG, clip_close_reason(reason or "frame too large")
    if ending is Ending.SHUTDOWN:
        return CLOSE_GOING_AWAY, "the relaying worker is shutting down"
    return CLOSE_GOING_AWAY, "the person's connection to the relaying worker ended"
