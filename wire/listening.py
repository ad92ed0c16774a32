"""A listening socket bound before a server starts, so that an unknown host or a port
already taken is one clear line from the command, not a traceback from inside uvicorn
(which logs the ``OSError`` and exits with status 3) or, for a port above 65535, a
server silently bound to another port (the kernel takes the number modulo 65536).

Both commands that serve (``htttx-server``, ``htttx-bot``) and the tournament runner bind
their socket with ``listen`` and hand it to uvicorn, so the port cannot be taken in
between.

>>> listen("127.0.0.1", 70000)
Traceback (most recent call last):
...
wire.listening.ListenError: --port must be from 0 to 65535, got 70000
"""

from __future__ import annotations

import errno
import socket

__all__ = ["ListenError", "listen", "reachable_url"]


class ListenError(Exception):
    """The socket cannot listen: one line saying why (``--host`` or ``--port``)."""


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` (0: any free port) and listening. Raises
    ``ListenError`` when the port is out of range, the host unknown or the port taken."""
    if not 0 <= port <= 65535:
        raise ListenError(f"--port must be from 0 to 65535, got {port}")
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family)
    except socket.gaierror as error:
        raise ListenError(f"--host {host!r}: {error.strerror}") from None
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise ListenError(
                f"cannot listen on {host}:{port}: the port is already in use"
            ) from None
        raise ListenError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None


def reachable_url(host: str, port: int) -> str:
    """Where a server listening on ``host``:``port`` is reached from this machine: a
    wildcard address on loopback.

    >>> reachable_url("0.0.0.0", 8001), reachable_url("::1", 8001)
    ('http://127.0.0.1:8001', 'http://[::1]:8001')
    """
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "[::1]"
    elif ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"
