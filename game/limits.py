"""Bounds on the connections people open to the game server: how many one client
address may hold, how long a request may take to arrive, and the process's fd limit.

uvicorn closes a keep-alive connection that stays idle after a response
(``timeout_keep_alive``), but nothing bounds a connection that never sends a whole
request: one opened and left silent, or one that trickles its headers (and a WebSocket
handshake is such a request) holds its file descriptor for as long as the client likes.
With a 1024-fd limit, about a thousand of them make every new request fail.

``uvicorn_protocols(limits)`` makes the two protocol classes the server runs with:

* an HTTP protocol (httptools) that counts open TCP connections per client address and
  refuses one over ``max_per_client`` as it is accepted (a ``429`` written at once, then
  closed: no request is read, no task started), and that closes a connection whose
  request is not all in within ``request_timeout`` seconds of its first byte, or of the
  connection itself (``408``);
* the WebSocket protocol (``wire.inbound_ws.GuardedWebSocketProtocol``) for connections
  upgraded from it, which keeps them counted until they close.

Clients on loopback are not counted by default: the hosted bots are dialled by the
server itself on its own port, two sockets a game, and behind a reverse proxy on the
same machine every client would share one address anyway.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import math
import resource
from collections import Counter
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from wire.inbound_ws import GuardedWebSocketProtocol

__all__ = [
    "DEFAULT_KEEP_ALIVE_TIMEOUT",
    "DEFAULT_MAX_CONNECTIONS_PER_CLIENT",
    "DEFAULT_REQUEST_TIMEOUT",
    "ConnectionCounter",
    "ConnectionLimits",
    "parse_networks",
    "raise_fd_limit",
    "uvicorn_protocols",
]

log = logging.getLogger("game.limits")

DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 64
#: Seconds from a connection (or the first byte of its next request) to the last byte of
#: the request: a browser or a bot sends its request at once.
DEFAULT_REQUEST_TIMEOUT = 10.0
#: uvicorn's own default for an idle keep-alive connection, in seconds.
DEFAULT_KEEP_ALIVE_TIMEOUT = 5
#: The most the soft fd limit is raised to when the hard limit is unlimited.
MAX_FD_LIMIT = 1 << 20

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
LOOPBACK: tuple[IPNetwork, ...] = (
    ipaddress.ip_network("127.0.0.0/8"),
    ipaddress.ip_network("::1/128"),
)


@dataclass(frozen=True)
class ConnectionLimits:
    """The bounds ``uvicorn_protocols`` enforces; ``exempt`` addresses are not counted."""

    max_per_client: int = DEFAULT_MAX_CONNECTIONS_PER_CLIENT
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    keep_alive_timeout: int = DEFAULT_KEEP_ALIVE_TIMEOUT
    exempt: tuple[IPNetwork, ...] = LOOPBACK

    def __post_init__(self) -> None:
        if self.max_per_client < 1:
            raise ValueError(f"max_per_client must be at least 1, got {self.max_per_client}")
        if not (math.isfinite(self.request_timeout) and self.request_timeout > 0):
            raise ValueError(
                f"request_timeout must be a positive number of seconds, got {self.request_timeout}"
            )
        if self.keep_alive_timeout < 1:
            raise ValueError(
                f"keep_alive_timeout must be at least 1 second, got {self.keep_alive_timeout}"
            )


def parse_networks(text: str) -> tuple[IPNetwork, ...]:
    """Comma-separated addresses or networks (CIDR), e.g. a cluster's other workers or
    a load balancer, whose connections are not counted per client.

    >>> parse_networks("10.0.0.0/8, 192.168.1.7")
    (IPv4Network('10.0.0.0/8'), IPv4Network('192.168.1.7/32'))
    >>> parse_networks("10.0.0.0/33")
    Traceback (most recent call last):
    ValueError: '10.0.0.0/33' is not an address or a network (CIDR)
    """
    networks: list[IPNetwork] = []
    for part in text.split(","):
        if not (part := part.strip()):
            continue
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(f"{part!r} is not an address or a network (CIDR)") from None
    return tuple(networks)


class ConnectionCounter:
    """Open connections per client address, by transport (pure bookkeeping).

    >>> counter = ConnectionCounter(ConnectionLimits(max_per_client=1, exempt=()))
    >>> counter.admit("a", "10.0.0.1"), counter.admit("b", "10.0.0.1")
    (True, False)
    >>> counter.release("a"); counter.admit("b", "10.0.0.1")
    True
    """

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self._open: Counter[str] = Counter()
        self._client_of: dict[object, str] = {}

    def admit(self, connection: object, client: str | None) -> bool:
        """Count ``connection`` from ``client``; false (and not counted) if that client
        already holds ``max_per_client`` connections."""
        if client is None:
            return True
        client = _canonical(client)
        if self._exempt(client):
            return True
        if self._open[client] >= self.limits.max_per_client:
            return False
        self._open[client] += 1
        self._client_of[connection] = client
        return True

    def release(self, connection: object) -> None:
        """Forget ``connection`` (harmless if it was never counted or already released)."""
        client = self._client_of.pop(connection, None)
        if client is not None:
            self._open[client] -= 1
            if not self._open[client]:
                del self._open[client]

    def open(self, client: str) -> int:
        return self._open[_canonical(client)]

    def _exempt(self, client: str) -> bool:
        try:
            address = ipaddress.ip_address(client)
        except ValueError:
            return False
        return any(address.version == net.version and address in net for net in self.limits.exempt)


def _canonical(client: str) -> str:
    """One key per client: a dual-stack socket reports IPv4 peers as ``::ffff:a.b.c.d``."""
    try:
        address = ipaddress.ip_address(client)
    except ValueError:
        return client
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


def _response(status: str, detail: str) -> bytes:
    body = ('{"detail": "' + detail.replace('"', "'") + '"}').encode()
    return (
        f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body


def uvicorn_protocols(
    limits: ConnectionLimits,
) -> tuple[type[HttpToolsProtocol], type[GuardedWebSocketProtocol]]:
    """The HTTP and WebSocket protocol classes for one server (they share its counter);
    see the module docstring. For ``uvicorn.Config(http=..., ws=...)``."""
    counter = ConnectionCounter(limits)
    refused = _response(
        "429 Too Many Requests",
        f"this client already has {limits.max_per_client} open connections, the most "
        "allowed; close one first",
    )
    too_slow = _response(
        "408 Request Timeout",
        f"the request did not arrive whole within {limits.request_timeout:g} s",
    )

    class CountedWebSocketProtocol(GuardedWebSocketProtocol):
        def connection_lost(self, exc: Exception | None) -> None:
            counter.release(self.transport)
            super().connection_lost(exc)

    class BoundedHttpProtocol(HttpToolsProtocol):
        _refused = False
        _request_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            peer: Any = transport.get_extra_info("peername")
            client = str(peer[0]) if isinstance(peer, tuple) and peer else None
            if not counter.admit(transport, client):
                self._refused = True
                log.info("refused a connection from %s: %d open", client, limits.max_per_client)
                transport.write(refused)
                transport.close()
                return
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._refused:
                return  # never set up: nothing to tear down
            self._disarm()
            counter.release(self.transport)
            super().connection_lost(exc)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._request_timer is None:
                self._arm()

        def on_message_complete(self) -> None:
            self._disarm()
            super().on_message_complete()

        def handle_websocket_upgrade(self) -> None:
            self._disarm()  # the handshake request is in: the socket is the app's now
            super().handle_websocket_upgrade()

        def _arm(self) -> None:
            self._request_timer = self.loop.call_later(limits.request_timeout, self._timed_out)

        def _disarm(self) -> None:
            if self._request_timer is not None:
                self._request_timer.cancel()
                self._request_timer = None

        def _timed_out(self) -> None:
            self._request_timer = None
            if self.transport.is_closing():
                return
            if self.cycle is None or not self.cycle.response_started:
                self.transport.write(too_slow)
            self.transport.close()

    return BoundedHttpProtocol, CountedWebSocketProtocol


def raise_fd_limit() -> tuple[int, int]:
    """Raise this process's soft limit on open files to its hard limit (at most
    ``MAX_FD_LIMIT``), where the OS allows; returns the (soft, hard) limits in force.

    Every connection is a file descriptor, and the usual soft limit (1024) is far below
    what a server holding many games' sockets needs, while the hard limit rarely is."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = MAX_FD_LIMIT if hard == resource.RLIM_INFINITY else min(hard, MAX_FD_LIMIT)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError) as error:
            log.warning("cannot raise the open-file limit from %d to %d: %s", soft, wanted, error)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft, hard
