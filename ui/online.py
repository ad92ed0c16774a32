"""Playing people online, the network side: the queue socket and open challenges.

``QueueLink`` is one ``/queue`` WebSocket driven by the pure ``ui.queue_client``
state machine: ``join`` (or ``create_challenge``) opens the socket and sends the
request; the server's answers come back as Qt signals, in the GUI thread:

* ``tokenIssued(name, token)`` the first time a name is used (keep the token: it proves
  the name is this person's from now on; ``ui.settings`` keeps it per server);
* ``waiting(QueueWaiting)`` whenever the queue changes;
* ``challengeCreated(ChallengeCreated)`` for an open challenge (share its ``url``);
* ``matched(Matched)``: a game, to play with the seat token (the socket then closes);
* ``reconnecting(attempt, delay_s)``: the socket dropped while the person was in the
  queue (a server restart, a network blip); the link opens a new one after ``delay_s``
  and joins again with the same request (``QueueClient.dropped`` decides; ``waiting``
  follows once back in). A creator waiting on an open challenge instead asks
  ``GET /challenges/{id}?token=`` on the same schedule until it is accepted (then
  ``matched``) or over;
* ``failed(text)``: a sentence for the person (the server is unreachable, refused the
  name or the token — its ``nope`` reason — or the connection dropped and could not be
  made again); the link is over.

Open challenges are accepted over REST: ``challenge_address`` reads a challenge link
(``http://HOST/c/ID``) and ``accept_challenge`` makes the ``POST
/challenges/{id}/accept`` call, whose ``finished`` carries a ``ChallengeSeat``.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, urlunsplit

import msgspec
from PyQt5.QtCore import QObject, QTimer, pyqtSignal

from models import ChallengeAccepted, ChallengeView, parse_body
from ui.net import Call, Network
from ui.queue_client import (
    ChallengeCreated,
    Matched,
    QueueClient,
    QueueLost,
    QueueRefused,
    QueueViolation,
    QueueWaiting,
    Reconnect,
    TokenIssued,
    matched_seat,
)
from ui.server_address import ServerAddressError, normalize_server_url, split_address
from ui.socket_link import SocketLink

__all__ = [
    "ACCEPT_TIMEOUT",
    "ChallengeAddressError",
    "ChallengeSeat",
    "QueueLink",
    "accept_challenge",
    "challenge_address",
    "is_challenge_url",
    "websocket_url",
]

#: How long accepting a challenge may take (seconds): the server creates the game.
ACCEPT_TIMEOUT: Final = 30.0


def websocket_url(base_url: str, path: str) -> str:
    """The WebSocket address of ``path`` on the server at ``base_url``.

    >>> websocket_url("https://example.org/arena", "/queue")
    'wss://example.org/arena/queue'
    """
    scheme, rest = base_url.split("://", 1)
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest}{path}"


# ------------------------------------------------------------------ the queue


class QueueLink(QObject):
    """One person in the queue of the server at ``base_url`` (see the module's doc)."""

    tokenIssued = pyqtSignal(str, str)
    waiting = pyqtSignal(object)
    challengeCreated = pyqtSignal(object)
    matched = pyqtSignal(object)
    reconnecting = pyqtSignal(int, float)
    failed = pyqtSignal(str)

    def __init__(self, network: Network, base_url: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.network = network
        self.base_url = normalize_server_url(base_url)
        self.client = QueueClient()
        self.link: SocketLink | None = None
        self._over = False
        self._failure: str | None = None
        self._poll: Call | None = None
        self._retry = QTimer(self)
        self._retry.setSingleShot(True)
        self._retry.timeout.connect(self._reopen)

    @property
    def active(self) -> bool:
        """Whether the link is still at work (joining, waiting)."""
        return self.link is not None and not self._over

    def join(
        self, name: str, token: str | None, time_control: str, bot_after_s: int | None
    ) -> None:
        """Queue for a game; raises ``QueueInputError`` for a bad name or time control
        (nothing is sent then)."""
        self._open(self.client.join(name, token, time_control, bot_after_s))

    def create_challenge(
        self, name: str, token: str | None, time_control: str, side: str = "random"
    ) -> None:
        """Open a challenge anyone with its link can accept; raises ``QueueInputError``."""
        self._open(self.client.create_challenge(name, token, time_control, side))

    def leave(self) -> None:
        """Leave the queue (or withdraw the challenge) and close the socket."""
        if self.link is None or self._over:
            return
        self._over = True
        self._retry.stop()
        if self._poll is not None:
            self._poll.cancel()
            self._poll = None
        if self.client.state == "reconnecting":
            self.client.leave()  # no socket to tell: stop trying
            return
        if self.client.state in ("joining", "waiting"):
            self.link.send(self.client.leave())
        self.link.close()

    # ------------------------------------------------------------------ internals

    def _open(self, first_frame: str) -> None:
        link = self.network.open_socket(websocket_url(self.base_url, "/queue"))
        self.link = link
        self._failure = None
        link.message.connect(self._message)
        link.failed.connect(self._socket_failed)
        link.closed.connect(self._closed)
        link.send(first_frame)

    def _current(self) -> bool:
        """Whether the signal being handled comes from the socket in use (a late one
        from a dropped socket is ignored)."""
        return self.sender() is self.link

    def _reopen(self) -> None:
        if self._over or self.client.state != "reconnecting":
            return
        challenge = self.client.challenge
        if challenge is None:
            self._open(self.client.rejoin())
            return
        token = quote(self.client.token or "", safe="")
        call = self.network.request(
            "GET",
            f"{self.base_url}/challenges/{quote(challenge.challenge_id, safe='')}?token={token}",
            description=f"challenge {challenge.challenge_id}",
            parse=lambda value: parse_body(ChallengeView, msgspec.json.encode(value)),
        )
        self._poll = call
        call.finished.connect(self._polled)
        call.failed.connect(self._poll_failed)

    def _polled(self, view: ChallengeView) -> None:
        self._poll = None
        if not self._over:
            self._decide(self.client.polled(view, random.random()))

    def _poll_failed(self, text: str) -> None:
        self._poll = None
        if not self._over:
            self._decide(self.client.dropped(time.monotonic(), random.random(), text))

    def _decide(self, decision: Matched | Reconnect | QueueLost) -> None:
        match decision:
            case Reconnect(attempt=attempt, delay_s=delay_s):
                self._retry.start(round(delay_s * 1000))
                self.reconnecting.emit(attempt, delay_s)
            case QueueLost(reason=text):
                self._fail(text)
            case Matched():
                self._over = True
                self.matched.emit(decision)

    def _message(self, text: str) -> None:
        if self._over or not self._current():
            return
        for event in self.client.receive(text):
            match event:
                case TokenIssued(name=name, token=token):
                    self.tokenIssued.emit(name, token)
                case QueueWaiting():
                    self.waiting.emit(event)
                case ChallengeCreated():
                    self.challengeCreated.emit(event)
                case Matched():
                    self._over = True
                    self.matched.emit(event)
                    if self.link is not None:
                        self.link.close()
                case QueueRefused(reason=reason):
                    self._fail(f"The server refused: {reason}")
                case QueueViolation(reason=reason):
                    self._fail(f"The server broke the queue protocol ({reason})")
                    if self.link is not None:
                        self.link.close()

    def _socket_failed(self, text: str) -> None:
        if self._current():
            self._failure = text

    def _closed(self, code: int, reason: str) -> None:
        if self._over or not self._current():
            return
        if self._failure is not None:
            why = self._failure
        else:
            said = f": {reason}" if reason else ""
            why = f"The server closed the queue connection ({code}){said}"
        if self.client.state in ("refused", "closed", "matched"):
            self._fail(why)  # already told (a nope, a violation)
            return
        self._decide(self.client.dropped(time.monotonic(), random.random(), why))

    def _fail(self, text: str) -> None:
        if self._over:
            return
        self._over = True
        self.failed.emit(text)


# ------------------------------------------------------------ open challenges


class ChallengeAddressError(ValueError):
    """A link that names no challenge; the message says what is expected."""


def is_challenge_url(text: str) -> bool:
    """Whether ``text`` is a challenge link (``http(s)://HOST/.../c/ID``).

    >>> is_challenge_url("http://h:8001/c/ab12"), is_challenge_url("http://h/g/ab12")
    (True, False)
    """
    try:
        challenge_address(text)
    except ChallengeAddressError:
        return False
    return True


def challenge_address(text: str) -> tuple[str, str]:
    """The server's base URL and the challenge id of a challenge link; whatever comes
    before ``/c/`` is kept (a server behind a path prefix).

    >>> challenge_address("http://127.0.0.1:8001/c/ab12?from=mail")
    ('http://127.0.0.1:8001', 'ab12')
    >>> challenge_address("http://127.0.0.1:8001/g/ab12")
    Traceback (most recent call last):
    ...
    ui.online.ChallengeAddressError: 'http://127.0.0.1:8001/g/ab12' is no challenge link: \
expected http://HOST/c/CHALLENGE_ID
    """
    try:
        parts = split_address(text)
    except ServerAddressError as error:
        raise ChallengeAddressError(str(error)) from None
    segments = parts.path.rstrip("/").split("/")
    if (
        parts.scheme.lower() not in ("http", "https")
        or not parts.hostname
        or len(segments) < 3
        or segments[-2] != "c"
        or not segments[-1]
    ):
        raise ChallengeAddressError(
            f"{text!r} is no challenge link: expected http://HOST/c/CHALLENGE_ID"
        )
    base = urlunsplit((parts.scheme.lower(), parts.netloc, "/".join(segments[:-2]), "", ""))
    try:
        return normalize_server_url(base), segments[-1]
    except ServerAddressError as error:  # "http://a host/c/ID": a server it cannot be
        raise ChallengeAddressError(str(error)) from None


@dataclass(frozen=True)
class ChallengeSeat:
    """The seat a person took by accepting a challenge, as the queue's ``Matched``;
    ``player_token`` is set when the server claimed a new name for them."""

    matched: Matched
    player_token: str | None = None


def accept_challenge(
    network: Network, base_url: str, challenge_id: str, name: str, player_token: str | None
) -> Call:
    """``POST /challenges/{id}/accept``; ``finished`` carries a ``ChallengeSeat``,
    ``failed`` a sentence (no such challenge, already taken, name taken...)."""
    body: dict[str, object] = {"name": name}
    if player_token is not None:
        body["player_token"] = player_token
    return network.request(
        "POST",
        f"{base_url}/challenges/{quote(challenge_id, safe='')}/accept",
        body,
        timeout=ACCEPT_TIMEOUT,
        description=f"challenge {challenge_id}",
        parse=_challenge_seat,
        refused="The server refused the challenge",
    )


def _challenge_seat(value: object) -> ChallengeSeat:
    # Runs in the network's worker thread.
    accepted = parse_body(ChallengeAccepted, msgspec.json.encode(value))
    return ChallengeSeat(matched_seat(accepted), accepted.player_token)
