"""Playing people online, the network side: the queue socket and open challenges.

``QueueLink`` is one ``/queue`` WebSocket driven by the pure ``ui.queue_client``
state machine: ``join`` (or ``create_challenge``) opens the socket and sends the
request; the server's answers come back as Qt signals, in the GUI thread:

* ``tokenIssued(name, token)`` the first time a name is used (keep the token: it proves
  the name is this person's from now on; ``ui.settings`` keeps it per server);
* ``waiting(QueueWaiting)`` whenever the queue changes;
* ``challengeCreated(ChallengeCreated)`` for an open challenge (share its ``url``);
* ``matched(Matched)``: a game, to play with the seat token (the socket then closes);
* ``failed(text)``: a sentence for the person (the server is unreachable, refused the
  name or the token — its ``nope`` reason — or the connection dropped); the link is
  over.

Open challenges are accepted over REST: ``challenge_address`` reads a challenge link
(``http://HOST/c/ID``) and ``accept_challenge`` makes the ``POST
/challenges/{id}/accept`` call, whose ``finished`` carries a ``ChallengeSeat``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, urlsplit, urlunsplit

import msgspec
from PyQt5.QtCore import QObject, pyqtSignal

from models import ChallengeAccepted, parse_body
from ui.net import Call, Network, SocketLink, normalize_server_url
from ui.queue_client import (
    ChallengeCreated,
    Matched,
    Opponent,
    QueueClient,
    QueueRefused,
    QueueViolation,
    QueueWaiting,
    TokenIssued,
)

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
    failed = pyqtSignal(str)

    def __init__(self, network: Network, base_url: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.network = network
        self.base_url = normalize_server_url(base_url)
        self.client = QueueClient()
        self.link: SocketLink | None = None
        self._over = False
        self._failure: str | None = None

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
        if self.client.state in ("joining", "waiting"):
            self.link.send(self.client.leave())
        self.link.close()

    # ------------------------------------------------------------------ internals

    def _open(self, first_frame: str) -> None:
        link = self.network.open_socket(websocket_url(self.base_url, "/queue"))
        self.link = link
        link.message.connect(self._message)
        link.failed.connect(self._socket_failed)
        link.closed.connect(self._closed)
        link.send(first_frame)

    def _message(self, text: str) -> None:
        if self._over:
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
        self._failure = text

    def _closed(self, code: int, reason: str) -> None:
        if self._over:
            return
        if self._failure is not None:
            self._fail(self._failure)
        else:
            why = f": {reason}" if reason else ""
            self._fail(f"The server closed the queue connection ({code}){why}")

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
    parts = urlsplit(text.strip())
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
    return normalize_server_url(base), segments[-1]


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
    who = accepted.opponent
    matched = Matched(
        game_id=accepted.game_id,
        side=accepted.side.value,
        token=accepted.token,
        ws_url=accepted.ws_url,
        opponent=Opponent(who.name, who.kind, who.rating),
        time_control=accepted.time_control,
        rated=accepted.rated,
    )
    return ChallengeSeat(matched, accepted.player_token)
