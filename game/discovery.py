"""Find out how to play a bot: check its URL and address, fetch and read its capabilities.

``discover`` does it all: it checks the URL (``game.bot_urls``) and the address policy
(``game.address_policy``), fetches the document (with a timeout and a size cap,
redirects not followed), validates it and returns a ``BotEndpoint``; given a
``CapabilitiesCache`` (``game.capabilities_cache``), it reuses what it found while the
bot's ``Cache-Control`` says that is fresh. Every failure is a
``DiscoveryError`` (``game.discovery_errors``) whose message is fit for a 422 answer: it
names the URL and what was wrong.

This module also re-exports the names of those three, so ``game.discovery`` stays the
one import for everything about finding a bot.
"""

from __future__ import annotations

import asyncio
import errno
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import aiohttp

from game.address_policy import DEFAULT_POLICY, AddressPolicy, PolicyConnector, PolicyResolver
from game.bot_urls import (
    BotEndpoint,
    Transport,
    capabilities_url,
    endpoint_for,
    resolve_api_root,
    websocket_url,
)
from game.capabilities_cache import CapabilitiesCache, freshness_s
from game.discovery_errors import (
    BadApiRoot,
    BadBotUrl,
    BadCapabilities,
    BotHttpError,
    BotRedirected,
    BotTimedOut,
    BotUnreachable,
    CannotLearnRules,
    CannotStartFromOpening,
    CapabilitiesTooLarge,
    DiscoveryError,
    ForbiddenAddress,
    NoUsableProtocol,
    PolicySyntaxError,
)
from models import Capabilities, ProtocolError, parse_body
from wire.names import display_text

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_POLICY",
    "DEFAULT_TIMEOUT",
    "AddressPolicy",
    "BadApiRoot",
    "BadBotUrl",
    "BadCapabilities",
    "BotEndpoint",
    "BotHttpError",
    "BotRedirected",
    "BotTimedOut",
    "BotUnreachable",
    "CannotLearnRules",
    "CannotStartFromOpening",
    "CapabilitiesCache",
    "CapabilitiesTooLarge",
    "DiscoveryError",
    "ForbiddenAddress",
    "NoUsableProtocol",
    "PolicyConnector",
    "PolicyResolver",
    "PolicySyntaxError",
    "Transport",
    "capabilities_url",
    "discover",
    "endpoint_for",
    "resolve_api_root",
    "websocket_url",
]

DEFAULT_TIMEOUT = 5.0
DEFAULT_MAX_BYTES = 256 * 1024
DOCUMENT = "capabilities.json"


# ------------------------------------------------------------------- discovery


def _size(count: int) -> str:
    """``300 KiB``, ``256.5 KiB``, ``900 bytes``."""
    if count < 1024:
        return f"{count} bytes"
    kib = count / 1024
    return f"{kib:.0f} KiB" if kib.is_integer() else f"{kib:.1f} KiB"


#: capabilities_url gives http or https URLs only.
_DEFAULT_PORTS = {"http": 80, "https": 443}
#: Characters of what a bot said itself (a reason phrase, a Location) kept in an error.
_PEER_TEXT_LIMIT = 200
_NO_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=None, sock_read=None, sock_connect=None)


@dataclass
class _Fetch:
    url: str
    max_bytes: int
    body: bytearray = field(default_factory=bytearray)
    #: The response's caching headers (several ``Cache-Control`` fields joined).
    cache_control: str | None = None
    age: str | None = None


async def discover(
    bot_url: str,
    session: aiohttp.ClientSession,
    *,
    policy: AddressPolicy = DEFAULT_POLICY,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
    cache: CapabilitiesCache[BotEndpoint] | None = None,
) -> BotEndpoint:
    """Fetch and validate the capabilities of the bot at ``bot_url``; how to play it.

    With ``cache``, an endpoint found for ``bot_url`` while still fresh is returned
    without a fetch, and one fetched is kept as long as its response allows
    (``game.capabilities_cache``).

    ``timeout`` (seconds) bounds everything: resolving the name, connecting, reading.
    A document over ``max_bytes`` is refused without reading the rest. Redirects are
    not followed. Prefers basic_websocket v1-alpha, else stateless v1-alpha.

    Raises a ``DiscoveryError`` subclass: ``BadBotUrl``, ``ForbiddenAddress``,
    ``BotUnreachable`` (``BotTimedOut``, ``BotRedirected``, ``BotHttpError``),
    ``BadCapabilities`` (``CapabilitiesTooLarge``, ``BadApiRoot``) or
    ``NoUsableProtocol``.
    """
    if not timeout > 0:
        raise ValueError(f"timeout must be more than 0 seconds, got {timeout!r}")
    if max_bytes < 1:
        raise ValueError(f"max_bytes must be at least 1, got {max_bytes!r}")
    if cache is not None and (kept := cache.get(bot_url, time.monotonic())) is not None:
        return kept
    document_url = capabilities_url(bot_url)
    parts = urlsplit(document_url)
    host = parts.hostname
    assert host is not None  # capabilities_url checked it
    # The port too: the policy's ``self`` is this server's own address *and* port.
    port = parts.port or _DEFAULT_PORTS[parts.scheme.lower()]
    fetch = _Fetch(document_url, max_bytes)
    try:
        async with asyncio.timeout(timeout):
            try:
                await policy.check_host(host, port)
            except DiscoveryError as exc:
                raise type(exc)(f"{document_url}: {exc}") from None
            await _fetch(fetch, session)
    except TimeoutError:
        got = f" (got {_size(len(fetch.body))} so far)" if fetch.body else ""
        raise BotTimedOut(f"{document_url}: no complete answer within {timeout:g} s{got}") from None
    try:
        # JSON is UTF-8 (RFC 8259): say so here, where the URL is known, rather than
        # leave a decoding error to whoever reads the document next.
        text = bytes(fetch.body).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadCapabilities(
            f"{document_url}: capabilities.json is not valid UTF-8 (byte "
            f"0x{exc.object[exc.start]:02x} at offset {exc.start}); JSON must be UTF-8"
        ) from None
    try:
        capabilities = parse_body(Capabilities, text)
    except ProtocolError as exc:
        raise BadCapabilities(f"{document_url}: invalid capabilities document: {exc}") from None
    endpoint = endpoint_for(bot_url, document_url, capabilities)
    if cache is not None:
        fresh_s = freshness_s(fetch.cache_control, fetch.age)
        cache.keep(bot_url, endpoint, fresh_s=fresh_s, now=time.monotonic())
    return endpoint


async def _fetch(fetch: _Fetch, session: aiohttp.ClientSession) -> None:
    """GET the document into ``fetch.body``, translating aiohttp's errors."""
    url = fetch.url
    try:
        async with session.get(
            url,
            allow_redirects=False,
            headers={"Accept": "application/json"},
            # ``discover``'s own deadline bounds the whole fetch; the session's default
            # timeouts would only blur which limit was hit.
            timeout=_NO_TIMEOUT,
        ) as response:
            _check_response(url, response, fetch.max_bytes)
            fetch.cache_control = ", ".join(response.headers.getall("Cache-Control", ())) or None
            fetch.age = response.headers.get("Age")
            async for chunk in response.content.iter_any():
                fetch.body += chunk
                if len(fetch.body) > fetch.max_bytes:
                    # Stop here: closing drops the connection instead of draining it.
                    response.close()
                    raise CapabilitiesTooLarge(
                        f"{url}: capabilities.json is over the {_size(fetch.max_bytes)} "
                        "limit (stopped reading there)"
                    )
    except aiohttp.ServerTimeoutError as exc:  # both a ClientError and a TimeoutError
        raise BotTimedOut(f"{url}: timed out: {exc}") from None
    except ForbiddenAddress as exc:  # from the PolicyConnector, at connect time
        raise ForbiddenAddress(f"{url}: {exc}") from None
    except aiohttp.ClientConnectorDNSError as exc:
        raise BotUnreachable(f"{url}: cannot resolve host {exc.host!r}") from None
    except aiohttp.ClientConnectorCertificateError as exc:
        raise BotUnreachable(
            f"{url}: TLS certificate not accepted: {exc.certificate_error}"
        ) from None
    except aiohttp.ClientSSLError as exc:
        raise BotUnreachable(f"{url}: TLS handshake failed: {exc}") from None
    except aiohttp.ClientConnectorError as exc:
        if exc.os_error.errno == errno.ECONNREFUSED:
            raise BotUnreachable(f"{url}: connection refused") from None
        reason = exc.os_error.strerror or str(exc.os_error) or type(exc.os_error).__name__
        raise BotUnreachable(f"{url}: cannot connect: {reason}") from None
    except aiohttp.InvalidURL as exc:
        raise BadBotUrl(f"{url}: not a valid URL ({exc})") from None
    except aiohttp.ClientError as exc:
        detail = display_text(str(exc), _PEER_TEXT_LIMIT) or type(exc).__name__
        raise BotUnreachable(f"{url}: connection failed while fetching: {detail}") from None


def _check_response(url: str, response: aiohttp.ClientResponse, max_bytes: int) -> None:
    status = response.status
    if 300 <= status < 400:
        # The bot's own words go into errors read on terminals, in logs and on pages:
        # no escape sequences or line breaks of its choosing (display_text).
        location = display_text(response.headers.get("Location") or "", _PEER_TEXT_LIMIT)
        where = f" to {location}" if location else ""
        raise BotRedirected(
            f"{url}: answered {status} redirect{where}; redirects are not followed, "
            "so name the bot by its final address"
        )
    if status != 200:
        said = display_text(response.reason or "", _PEER_TEXT_LIMIT)
        reason = f" {said}" if said else ""
        hint = (
            "; is this the bot's base URL, the directory of its capabilities.json?"
            if status == 404
            else ""
        )
        raise BotHttpError(
            f"{url}: answered HTTP {status}{reason}, expected 200 with the capabilities "
            f"document{hint}"
        )
    length = response.content_length
    if length is not None and length > max_bytes:
        raise CapabilitiesTooLarge(
            f"{url}: capabilities.json is {_size(length)}, over the {_size(max_bytes)} limit"
        )
