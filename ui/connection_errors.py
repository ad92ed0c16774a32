"""Why a connection failed, as a sentence a person can act on.

``connection_error`` words an aiohttp or OS error met while reaching a server, for
HTTP calls and WebSockets alike: "Cannot reach the server at http://127.0.0.1:9:
connection refused", "The server at ... refused the connection (403): ...", and for
an ``https://`` address of a server that speaks plain HTTP, "it does not speak HTTPS
(try http://...)" rather than OpenSSL's "[SSL: WRONG_VERSION_NUMBER]".
"""

from __future__ import annotations

import errno
import ssl
from typing import Final

import aiohttp

from ui.server_address import server_origin

__all__ = ["connection_error"]

_ERRNO_WORDS: Final = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "the connection was reset",
    errno.ETIMEDOUT: "the connection timed out",
    errno.EHOSTUNREACH: "the host is unreachable",
    errno.ENETUNREACH: "the network is unreachable",
    errno.EADDRNOTAVAIL: "the address is not available",
}

#: What OpenSSL says when the other end answers a TLS hello with something that is not
#: TLS: a plain HTTP server (the usual "https://" typed for an "http://" server).
_NOT_TLS: Final = frozenset(
    {"WRONG_VERSION_NUMBER", "PACKET_LENGTH_TOO_LONG", "RECORD_LAYER_FAILURE", "UNKNOWN_PROTOCOL"}
)


def connection_error(url: str, exc: BaseException, verb: str) -> str:
    """``"Cannot reach the server at <origin>: connection refused"`` and the like."""
    origin = server_origin(url)
    where = f"the server at {origin}"
    why: str
    if isinstance(exc, aiohttp.WSServerHandshakeError):
        return f"The server at {origin} refused the connection ({exc.status}): {exc.message}"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        why = "its host name cannot be resolved"
    elif isinstance(exc, aiohttp.ClientConnectorCertificateError):
        why = f"its certificate is not trusted ({exc.certificate_error})"
    elif isinstance(exc, aiohttp.ClientConnectorSSLError):
        why = _tls_words(exc.os_error, origin)
    elif isinstance(exc, aiohttp.ClientConnectorError):
        why = _os_words(exc.os_error)
    elif isinstance(exc, aiohttp.ServerDisconnectedError):
        why = "the server closed the connection"
    elif isinstance(exc, OSError):
        why = _os_words(exc)
    elif isinstance(exc, TimeoutError):
        why = "it did not answer in time"
    else:
        why = str(exc) or type(exc).__name__
    return f"Cannot {verb} {where}: {why}"


def _os_words(error: OSError) -> str:
    if error.errno in _ERRNO_WORDS:
        return _ERRNO_WORDS[error.errno]
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    text = error.strerror or str(error) or type(error).__name__
    return text[:1].lower() + text[1:]


def _tls_words(error: OSError, origin: str) -> str:
    reason = error.reason if isinstance(error, ssl.SSLError) else None
    scheme, _, host = origin.partition("://")
    if reason in _NOT_TLS and scheme in ("https", "wss"):
        return f"it does not speak HTTPS (try http://{host})"
    return f"the secure connection failed ({reason or _os_words(error)})"
