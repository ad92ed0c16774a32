"""The address of a game server as a person types it, and as the client uses it.

``normalize_server_url`` turns what was typed ("localhost:8001", "ws://host/") into the
base URL every request and socket address is built on, or raises ``ServerAddressError``
with a sentence saying what is expected; ``split_address`` splits any typed link (a
game's, a challenge's, a bot's) with its host and port checked; ``server_origin``
shortens a URL to ``scheme://host:port`` for messages. Pure functions: no Qt, no I/O.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

__all__ = ["ServerAddressError", "normalize_server_url", "server_origin", "split_address"]


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
    parts = _split(url)
    if isinstance(parts, str):
        raise ServerAddressError(f"The server address {given!r} is not valid: {parts}, {example}")
    if not parts.hostname:
        raise ServerAddressError(f"The server address {given!r} has no host name, {example}")
    if any(character.isspace() for character in given):
        raise ServerAddressError(f"The server address {given!r} must not contain spaces, {example}")
    if parts.query or parts.fragment:
        raise ServerAddressError(
            f"The server address {given!r} must not have a query or fragment, {example}"
        )
    return url


def split_address(text: str) -> SplitResult:
    """``urlsplit(text)``, its host and port checked: Python's parser only refuses a
    malformed host or port when it is read, with a bare ``ValueError`` that would escape
    a Qt slot and abort the client. Raises ``ServerAddressError`` saying what is wrong.

    >>> split_address("http://127.0.0.1:8001/g/4f2a").port
    8001
    >>> split_address("http://[::1/g/4f2a")
    Traceback (most recent call last):
    ...
    ui.server_address.ServerAddressError: 'http://[::1/g/4f2a' is not a valid address: \
its IPv6 host has no closing ]
    >>> split_address("http://127.0.0.1:99999/g/4f2a")
    Traceback (most recent call last):
    ...
    ui.server_address.ServerAddressError: 'http://127.0.0.1:99999/g/4f2a' is not a valid \
address: its port must be a number from 0 to 65535
    """
    parts = _split(text.strip())
    if isinstance(parts, str):
        raise ServerAddressError(f"{text.strip()!r} is not a valid address: {parts}")
    return parts


def _split(text: str) -> SplitResult | str:
    """``urlsplit(text)`` with its host and port read, or what is wrong with them."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port that is not one
    except ValueError as error:
        reason = str(error)
        if reason == "Invalid IPv6 URL":
            return "its IPv6 host has no closing ]"
        if reason.startswith("Port"):
            return "its port must be a number from 0 to 65535"
        return f"its host is not valid ({reason})"
    return parts


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
