"""The address of a game server as a person types it, and as the client uses it.

``normalize_server_url`` turns what was typed ("localhost:8001", "ws://host/") into the
base URL every request and socket address is built on, or raises ``ServerAddressError``
with a sentence saying what is expected; ``server_origin`` shortens a URL to
``scheme://host:port`` for messages. Pure functions: no Qt, no I/O.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = ["ServerAddressError", "normalize_server_url", "server_origin"]


#: A scheme and a colon followed by a single slash: "htp:/host", "http:/host".
_SCHEME_TYPO = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/(?!/)")


class ServerAddressError(ValueError):
    """A server address the client cannot use; the message says what is expected."""


def normalize_server_url(text: str) -> str:
    """The base URL of a game server from what a person typed: ``http://`` is assumed
    when no scheme is given, ``ws://``/``wss://`` mean ``http://``/``https://``, and a
    trailing ``/`` is dropped. Raises ``ServerAddressError`` for anything else.

    >>> normalize_server_url(" localhost:8001/ ")
    'http://localhost:8001'
    >>> normalize_server_url("ftp://example.org")
    Traceback (most recent call last):
    ...
    ui.server_address.ServerAddressError: The server address must start with http:// or https://, \
like http://127.0.0.1:8001 (got 'ftp://example.org')
    >>> normalize_server_url("htp:/nonsense host")
    Traceback (most recent call last):
    ...
    ui.server_address.ServerAddressError: The server address must start with http:// or https://, \
like http://127.0.0.1:8001 (got 'htp:/nonsense host')
    """
    given = text.strip()
    example = "like http://127.0.0.1:8001"
    if not given:
        raise ServerAddressError(f"Enter the server's address, {example}")
    # "htp:/x" or "http:/x" is a mistyped scheme, not the host "htp" with an empty port.
    mistyped_scheme = _SCHEME_TYPO.match(given) is not None
    url = given if "://" in given else f"http://{given}"
    scheme, _, rest = url.partition("://")
    scheme = {"ws": "http", "wss": "https"}.get(scheme.lower(), scheme.lower())
    if scheme not in ("http", "https") or mistyped_scheme:
        raise ServerAddressError(
            f"The server address must start with http:// or https://, {example} (got {given!r})"
        )
    url = f"{scheme}://{rest}".rstrip("/")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise ServerAddressError(
            f"The server address {given!r} has an invalid port, {example}"
        ) from None
    if not parts.hostname:
        raise ServerAddressError(f"The server address {given!r} has no host name, {example}")
    if any(character.isspace() for character in given):
        raise ServerAddressError(f"The server address {given!r} must not contain spaces, {example}")
    if parts.query or parts.fragment:
        raise ServerAddressError(
            f"The server address {given!r} must not have a query or fragment, {example}"
        )
    return url


def server_origin(url: str) -> str:
    """``scheme://host:port`` of ``url``, for messages.

    >>> server_origin("http://127.0.0.1:8001/games?limit=5")
    'http://127.0.0.1:8001'
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else url
