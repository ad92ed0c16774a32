"""A bot's URLs: from the URL it is named by to its capabilities document, and from
the document's ``api_root`` to its socket and stateless endpoint. Pure: no I/O.

A bot is named by a URL (``protocol.md``, "Addressing a bot"):

- ``http(s)://host:port/some/path`` is the base; the document is
  ``<base>/capabilities.json``. A URL already ending in ``/capabilities.json`` is the
  document itself. ``ws://`` and ``wss://`` name the same base over ``http``/``https``.
- ``api_root`` is relative to the directory of the document (defaults
  ``bws/v1-alpha`` and ``stateless/v1-alpha``); the socket is ``<api_root>/game``, the
  stateless endpoint ``<api_root>/turn``.
- A bot declaring ``basic_websocket`` v1-alpha is played over one WebSocket per game;
  one declaring only ``stateless`` v1-alpha by one ``POST .../turn`` per move; neither
  cannot be seated.

Decisions:

- ``api_root`` is always a path relative to the document's directory. A leading ``/``
  is dropped rather than read as the host's root, as the spec says "relative" and our
  own bot server (``bot.serve``) serves ``"/x"`` at ``<base>/x``. ``..`` segments are
  resolved (they cannot leave the host). A full URL, a query or a fragment is refused
  (``BadApiRoot``): the host of the bot URL is the one the address policy checked and
  the game record names, so the capabilities must not send us elsewhere.
- A bot URL with user info, a query or a fragment is refused (``BadBotUrl``): credentials
  would end up in game records, and a query has no place once paths are appended.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias
from urllib.parse import urljoin, urlsplit, urlunsplit

from game.discovery_errors import BadApiRoot, BadBotUrl, NoUsableProtocol
from models import Capabilities

__all__ = [
    "DOCUMENT",
    "BotEndpoint",
    "Transport",
    "capabilities_url",
    "endpoint_for",
    "resolve_api_root",
    "websocket_url",
]

DOCUMENT = "capabilities.json"

Transport: TypeAlias = Literal["websocket", "stateless"]

_HTTP_SCHEME = {"http": "http", "https": "https", "ws": "http", "wss": "https"}


def capabilities_url(bot_url: str) -> str:
    """The URL of the capabilities document of the bot named by ``bot_url``.

    >>> capabilities_url("http://127.0.0.1:8002")
    'http://127.0.0.1:8002/capabilities.json'
    >>> capabilities_url("wss://bots.example/center/")
    'https://bots.example/center/capabilities.json'
    >>> capabilities_url("http://h/x/capabilities.json")
    'http://h/x/capabilities.json'
    >>> capabilities_url("ftp://h/")
    Traceback (most recent call last):
    ...
    game.discovery_errors.BadBotUrl: 'ftp://h/': unsupported scheme 'ftp'; use http, https, ws \
or wss
    """
    text = bot_url.strip()
    if not text:
        raise BadBotUrl("empty bot URL; expected e.g. http://127.0.0.1:8002")
    if any(ord(c) < 0x21 or c in "\\\x7f" for c in text):
        raise BadBotUrl(f"{bot_url!r}: spaces, control characters and backslashes not allowed")
    try:
        parts = urlsplit(text)
        port = parts.port  # raises on a bad port
    except ValueError as exc:
        raise BadBotUrl(f"{bot_url!r}: not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if "://" not in text:  # "localhost:8002" would otherwise read as scheme "localhost"
        raise BadBotUrl(f"{bot_url!r}: no scheme; did you mean 'http://{text}'?")
    if scheme not in _HTTP_SCHEME:
        raise BadBotUrl(
            f"{bot_url!r}: unsupported scheme {parts.scheme!r}; use http, https, ws or wss"
        )
    if not parts.hostname:
        raise BadBotUrl(f"{bot_url!r}: no host; expected e.g. http://127.0.0.1:8002")
    if parts.username is not None or parts.password is not None:
        raise BadBotUrl(f"{bot_url!r}: user names and passwords are not allowed in a bot URL")
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        raise BadBotUrl(f"{bot_url!r}: a bot URL has no query or fragment")
    if port == 0:
        raise BadBotUrl(f"{bot_url!r}: port 0 cannot be dialled")
    path = parts.path.rstrip("/")
    if path.rsplit("/", 1)[-1] != DOCUMENT:
        path = f"{path}/{DOCUMENT}"
    return urlunsplit((_HTTP_SCHEME[scheme], parts.netloc, path, "", ""))


def resolve_api_root(document_url: str, api_root: str, leaf: str) -> str:
    """``<api_root>/<leaf>`` resolved against the directory of ``document_url``.

    The result stays on the document's host: a leading ``/`` is dropped (the spec says
    relative), and a full URL, a query or a fragment raise ``BadApiRoot``.

    >>> doc = "http://h:1/bots/center/capabilities.json"
    >>> resolve_api_root(doc, "bws/v1-alpha", "game")
    'http://h:1/bots/center/bws/v1-alpha/game'
    >>> resolve_api_root(doc, "/api/", "turn")
    'http://h:1/bots/center/api/turn'
    >>> resolve_api_root(doc, "../shared/v1", "turn")
    'http://h:1/bots/shared/v1/turn'
    >>> resolve_api_root(doc, "https://elsewhere/", "game")
    Traceback (most recent call last):
    ...
    game.discovery_errors.BadApiRoot: api_root 'https://elsewhere/': expected a path relative \
to capabilities.json, not a URL
    """
    if any(ord(c) < 0x21 or c in "\\\x7f" for c in api_root):
        raise BadApiRoot(
            f"api_root {api_root!r}: spaces, control characters and backslashes not allowed"
        )
    parts = urlsplit(api_root)
    if parts.scheme or parts.netloc or api_root.startswith("//") or ":" in parts.path:
        raise BadApiRoot(
            f"api_root {api_root!r}: expected a path relative to capabilities.json, not a URL"
        )
    if "?" in api_root or "#" in api_root:
        raise BadApiRoot(f"api_root {api_root!r}: expected a path, without query or fragment")
    directory = document_url.rsplit("/", 1)[0] + "/"
    root = api_root.strip("/")
    resolved = urljoin(directory, f"{root}/{leaf}" if root else leaf)
    # By construction; kept as a guard because this is what keeps us on the bot's host.
    if urlsplit(resolved).netloc != urlsplit(document_url).netloc:
        raise BadApiRoot(f"api_root {api_root!r}: leaves the bot's host")
    return resolved


def websocket_url(http_url: str) -> str:
    """The ``ws://``/``wss://`` form of an ``http://``/``https://`` URL.

    >>> websocket_url("https://h/bws/v1-alpha/game")
    'wss://h/bws/v1-alpha/game'
    """
    scheme, rest = http_url.split(":", 1)
    return {"http": "ws", "https": "wss"}[scheme.lower()] + ":" + rest


# ----------------------------------------------------------------- the endpoint


@dataclass(frozen=True)
class BotEndpoint:
    """How to play one bot.

    ``transport`` is how the server plays it: ``"websocket"`` when it declares
    basic_websocket v1-alpha (``socket_url``), else ``"stateless"`` (``turn_url``).
    Both URLs are filled in when both APIs are declared.
    """

    url: str
    document_url: str
    capabilities: Capabilities
    transport: Transport
    socket_url: str | None
    turn_url: str | None
    name: str | None


def endpoint_for(bot_url: str, document_url: str, capabilities: Capabilities) -> BotEndpoint:
    """The ``BotEndpoint`` of a bot whose document at ``document_url`` says
    ``capabilities`` (pure: ``discover`` without the fetch).

    >>> from models import parse_body
    >>> caps = parse_body(Capabilities, '{"stateless": {"versions": {"v1-alpha": {}}}}')
    >>> endpoint = endpoint_for("ws://h:1", "http://h:1/capabilities.json", caps)
    >>> endpoint.transport, endpoint.turn_url
    ('stateless', 'http://h:1/stateless/v1-alpha/turn')
    >>> endpoint_for("http://h:1", "http://h:1/capabilities.json", Capabilities())
    Traceback (most recent call last):
    ...
    game.discovery_errors.NoUsableProtocol: http://h:1/capabilities.json: declares neither \
basic_websocket v1-alpha nor stateless v1-alpha, so the bot cannot be seated
    """
    bws = capabilities.bws_v1_alpha
    stateless = capabilities.stateless_v1_alpha
    try:
        socket_url = (
            websocket_url(resolve_api_root(document_url, bws.api_root, "game"))
            if bws is not None
            else None
        )
        turn_url = (
            resolve_api_root(document_url, stateless.api_root, "turn")
            if stateless is not None
            else None
        )
    except BadApiRoot as exc:
        raise BadApiRoot(f"{document_url}: {exc}") from None
    if socket_url is None and turn_url is None:
        declared = _declared(capabilities)
        raise NoUsableProtocol(
            f"{document_url}: declares neither basic_websocket v1-alpha nor stateless "
            "v1-alpha, so the bot cannot be seated"
            + (f" (it declares {declared})" if declared else "")
        )
    return BotEndpoint(
        url=bot_url,
        document_url=document_url,
        capabilities=capabilities,
        transport="websocket" if socket_url is not None else "stateless",
        socket_url=socket_url,
        turn_url=turn_url,
        name=capabilities.meta.name if capabilities.meta is not None else None,
    )


def _declared(capabilities: Capabilities) -> str:
    """What a document declares instead, e.g. ``basic_websocket v2``, for the message."""
    found: list[str] = []
    for api, capability in (
        ("basic_websocket", capabilities.basic_websocket),
        ("stateless", capabilities.stateless),
    ):
        if capability is not None:
            found += [f"{api} {version}" for version in capability.versions.model_extra or {}]
    found += list(capabilities.model_extra or {})
    return ", ".join(found)
