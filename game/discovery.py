"""Find out how to play a bot: its URL, its capabilities document, the address policy.

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

``discover`` does it all: it checks the URL and the address policy, fetches the document
(with a timeout and a size cap, redirects not followed), validates it and returns a
``BotEndpoint``. Every failure is a ``DiscoveryError`` whose message is fit for a 422
answer: it names the URL and what was wrong. The pure parts (``capabilities_url``,
``resolve_api_root``, ``endpoint_for``, ``AddressPolicy.check_address``) do no I/O.

Decisions:

- ``api_root`` is always a path relative to the document's directory. A leading ``/``
  is dropped rather than read as the host's root, as the spec says "relative" and our
  own bot server (``bot.serve``) serves ``"/x"`` at ``<base>/x``. ``..`` segments are
  resolved (they cannot leave the host). A full URL, a query or a fragment is refused
  (``BadApiRoot``): the host of the bot URL is the one the address policy checked and
  the game record names, so the capabilities must not send us elsewhere.
- A bot URL with user info, a query or a fragment is refused (``BadBotUrl``): credentials
  would end up in game records, and a query has no place once paths are appended.
- Address policy (``AddressPolicy``): see its docstring. Private ranges (RFC 1918,
  unique-local IPv6, shared 100.64/10) are *not* allowed by default: a public server
  must not become a way to probe its own network. ``allow=loopback,public,private``
  opens them for a LAN deployment.
- DNS rebinding: ``discover`` checks every address the host resolves to, but a name
  may resolve differently a moment later when aiohttp connects. A session built on
  ``policy.connector()`` checks the addresses aiohttp actually connects to, which closes
  that gap for the capabilities fetch and for every later socket or ``turn`` request.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias
from urllib.parse import urljoin, urlsplit, urlunsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

from models import Capabilities, ProtocolError, parse_body

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
    "CapabilitiesTooLarge",
    "DiscoveryError",
    "ForbiddenAddress",
    "NoUsableProtocol",
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

Transport: TypeAlias = Literal["websocket", "stateless"]
IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network

_HTTP_SCHEME = {"http": "http", "https": "https", "ws": "http", "wss": "https"}


# ------------------------------------------------------------------------ errors


class DiscoveryError(ValueError):
    """A bot that cannot be seated; the message says why, for a 422 answer."""


class BadBotUrl(DiscoveryError):
    """The bot URL is malformed or uses a scheme other than http, https, ws, wss."""


class ForbiddenAddress(DiscoveryError):
    """The bot's host is, or resolves to, an address the policy does not allow."""


class BotUnreachable(DiscoveryError):
    """The capabilities document could not be fetched: connection refused, name not
    resolved, TLS failed, connection broken. Subclasses name the other causes."""


class BotTimedOut(BotUnreachable):
    """No complete answer within the timeout."""


class BotRedirected(BotUnreachable):
    """The bot answered with a redirect; they are not followed."""


class BotHttpError(BotUnreachable):
    """The bot answered with a status other than 200."""


class BadCapabilities(DiscoveryError):
    """The document is not valid JSON or not a valid capabilities document."""


class CapabilitiesTooLarge(BadCapabilities):
    """The document is over the size cap."""


class BadApiRoot(BadCapabilities):
    """An ``api_root`` that is not a relative path (a URL, a query, a fragment...)."""


class NoUsableProtocol(DiscoveryError):
    """The bot declares neither basic_websocket v1-alpha nor stateless v1-alpha."""


class PolicySyntaxError(ValueError):
    """A policy string that cannot be read; the message names the bad part."""


# ------------------------------------------------------------------------- URLs


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
    game.discovery.BadBotUrl: 'ftp://h/': unsupported scheme 'ftp'; use http, https, ws or wss
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
    game.discovery.BadApiRoot: api_root 'https://elsewhere/': expected a path relative \
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

    >>> caps = parse_body(Capabilities, '{"stateless": {"versions": {"v1-alpha": {}}}}')
    >>> endpoint = endpoint_for("ws://h:1", "http://h:1/capabilities.json", caps)
    >>> endpoint.transport, endpoint.turn_url
    ('stateless', 'http://h:1/stateless/v1-alpha/turn')
    >>> endpoint_for("http://h:1", "http://h:1/capabilities.json", Capabilities())
    Traceback (most recent call last):
    ...
    game.discovery.NoUsableProtocol: http://h:1/capabilities.json: declares neither \
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


# ------------------------------------------------------------- address policy


def _nets(*texts: str) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(text) for text in texts)


# Named groups usable in a policy string. "public" is not a list of networks but
# "globally routable" as the ipaddress module knows it (IANA special-purpose registry).
_GROUPS: Mapping[str, tuple[IPNetwork, ...]] = {
    "loopback": _nets("127.0.0.0/8", "::1/128"),
    "private": _nets("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"),
    "link-local": _nets("169.254.0.0/16", "fe80::/10"),
    "metadata": _nets("169.254.169.254/32", "fd00:ec2::254/128", "100.100.100.200/32"),
    "any": _nets("0.0.0.0/0", "::/0"),
}
PUBLIC: Literal["public"] = "public"
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_BROADCAST = ipaddress.IPv4Address("255.255.255.255")

Rule: TypeAlias = IPNetwork | Literal["public"]


def _rule_matches(rule: Rule, address: IPAddress) -> bool:
    if rule == PUBLIC:
        return address.is_global
    assert not isinstance(rule, str)
    return address.version == rule.version and address in rule


def _rule_text(rules: tuple[Rule, ...]) -> str:
    """Rules back to policy-string form, in their order, whole groups by name."""
    rest = list(rules)
    items: list[tuple[int, str]] = []
    for name, members in _GROUPS.items():
        if all(member in rest for member in members):
            items.append((rules.index(members[0]), name))
            rest = [rule for rule in rest if rule not in members]
    items += [(rules.index(rule), str(rule)) for rule in rest]
    return ",".join(text for _, text in sorted(items))


def _effective(address: IPAddress) -> IPAddress:
    """The address a connection really reaches: the IPv4 address inside an IPv4-mapped
    (``::ffff:a.b.c.d``) or NAT64 (``64:ff9b::a.b.c.d``) one, else the address itself.
    Otherwise ``::ffff:169.254.169.254`` would slip past a rule for 169.254.0.0/16."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


@dataclass(frozen=True)
class AddressPolicy:
    """Which addresses bots may live at: a deny list and an allow list.

    An address passes when it is not in a hard floor (unspecified ``0.0.0.0``/``::``,
    multicast, the broadcast address — never dialable whatever the configuration, as
    connecting to ``0.0.0.0`` reaches this machine), matches no ``deny`` rule (deny
    wins), and matches some ``allow`` rule. A rule is a network or ``"public"``
    (globally routable). An IPv6 address that carries an IPv4 one (mapped, NAT64) is
    judged by the IPv4 address it reaches. A host name passes when every address it
    resolves to passes.

    Default: allow loopback and public addresses; deny link-local and the cloud
    metadata addresses (169.254.169.254, fd00:ec2::254, 100.100.100.200). Everything
    else, private ranges included, is not allowed.

    Configuration string (``parse``; ``str`` gives it back): ``;``-separated parts
    ``allow=...`` and ``deny=...``, each a ``,``-separated list of networks and group
    names: ``loopback``, ``public``, ``private``, ``link-local``, ``metadata``, ``any``.
    A part that is left out keeps its default; an empty one (``deny=``) is empty.

    >>> policy = AddressPolicy.parse("allow=loopback,public,10.1.0.0/16")
    >>> str(policy)
    'allow=loopback,public,10.1.0.0/16;deny=metadata,link-local'
    >>> policy.check_address("10.1.2.3")
    >>> DEFAULT_POLICY.check_address("169.254.169.254")
    Traceback (most recent call last):
    ...
    game.discovery.ForbiddenAddress: 169.254.169.254: denied by the bot address policy \
(metadata)
    """

    allow: tuple[Rule, ...] = (*_GROUPS["loopback"], PUBLIC)
    # Metadata first, so that 169.254.169.254 is refused naming the more telling rule.
    deny: tuple[Rule, ...] = (*_GROUPS["metadata"], *_GROUPS["link-local"])

    GROUPS: ClassVar[tuple[str, ...]] = (*_GROUPS, PUBLIC)

    def __str__(self) -> str:
        return f"allow={_rule_text(self.allow)};deny={_rule_text(self.deny)}"

    @classmethod
    def parse(cls, text: str) -> AddressPolicy:
        """A policy from its configuration string (see the class docstring)."""
        default = cls()
        lists: dict[str, tuple[Rule, ...]] = {"allow": default.allow, "deny": default.deny}
        seen: set[str] = set()
        for part in filter(None, (p.strip() for p in text.split(";"))):
            key, equals, values = part.partition("=")
            key = key.strip().lower()
            if not equals or key not in lists:
                raise PolicySyntaxError(
                    f"bot address policy: {part!r}: expected allow=... or deny=..."
                )
            if key in seen:
                raise PolicySyntaxError(f"bot address policy: {key!r} given twice")
            seen.add(key)
            lists[key] = tuple(
                rule for item in values.split(",") if item.strip() for rule in _rules(item.strip())
            )
        return cls(allow=lists["allow"], deny=lists["deny"])

    def problem(self, address: str | IPAddress) -> str | None:
        """Why ``address`` (a literal IP) is not allowed, or ``None`` if it is."""
        ip = _ip(address)
        if ip is None:
            return f"{address!r} is not an IP address"
        target = _effective(ip)
        if target.is_unspecified or target.is_multicast or target == _BROADCAST:
            return "an unspecified, multicast or broadcast address is never a bot"
        for rule in self.deny:
            if _rule_matches(rule, target):
                return f"denied by the bot address policy ({_describe_rule(rule)})"
        if not any(_rule_matches(rule, target) for rule in self.allow):
            return (
                "not allowed by the bot address policy (allowed: "
                f"{_rule_text(self.allow) or 'nothing'})"
            )
        return None

    def check_address(self, address: str | IPAddress) -> None:
        """Raise ``ForbiddenAddress`` unless ``address`` (a literal IP) is allowed."""
        problem = self.problem(address)
        if problem is not None:
            raise ForbiddenAddress(f"{address}: {problem}")

    async def check_host(self, host: str, port: int | None = None) -> list[IPAddress]:
        """Check ``host`` (an IP or a name, resolved with the loop's getaddrinfo): every
        address it resolves to must be allowed. Returns them; raises ``ForbiddenAddress``,
        or ``BotUnreachable`` when the name does not resolve."""
        literal = _ip(host)
        if literal is not None:
            self.check_address(literal)
            return [literal]
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise BotUnreachable(f"cannot resolve host {host!r}: {exc}") from None
        addresses = list(dict.fromkeys(_ip(str(info[4][0])) for info in infos))
        found = [a for a in addresses if a is not None]
        if not found:
            raise BotUnreachable(f"host {host!r} resolves to no IP address")
        for address in found:
            problem = self.problem(address)
            if problem is not None:
                raise ForbiddenAddress(f"{host} resolves to {address}: {problem}")
        return found

    def resolver(self) -> PolicyResolver:
        """An aiohttp resolver that refuses names resolving to forbidden addresses."""
        return PolicyResolver(self)

    def connector(self, **options: Any) -> aiohttp.TCPConnector:
        """An aiohttp connector that checks every address it connects to by name (see
        the module docstring on DNS rebinding). Literal IPs do not go through a
        resolver in aiohttp, so ``discover`` checks those itself."""
        return aiohttp.TCPConnector(resolver=self.resolver(), **options)


def _ip(value: str | IPAddress) -> IPAddress | None:
    if isinstance(value, ipaddress.IPv4Address | ipaddress.IPv6Address):
        return value
    try:
        return ipaddress.ip_address(value.strip("[]"))
    except ValueError:
        return None


def _rules(item: str) -> tuple[Rule, ...]:
    name = item.lower()
    if name == PUBLIC:
        return (PUBLIC,)
    if name in _GROUPS:
        return _GROUPS[name]
    try:
        return (ipaddress.ip_network(item, strict=False),)
    except ValueError:
        raise PolicySyntaxError(
            f"bot address policy: {item!r} is neither a network (10.0.0.0/8, ::1) nor one "
            f"of {', '.join(AddressPolicy.GROUPS)}"
        ) from None


def _describe_rule(rule: Rule) -> str:
    if rule == PUBLIC:
        return PUBLIC
    for name, members in _GROUPS.items():
        if name != "any" and rule in members:
            return name
    return str(rule)


DEFAULT_POLICY = AddressPolicy()


class PolicyResolver(AbstractResolver):
    """Resolves like aiohttp's threaded resolver, then refuses the whole name with
    ``ForbiddenAddress`` if any address is not allowed by ``policy``."""

    def __init__(self, policy: AddressPolicy, inner: AbstractResolver | None = None) -> None:
        self.policy = policy
        self._inner = inner if inner is not None else ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        for result in results:
            problem = self.policy.problem(result["host"])
            if problem is not None:
                raise ForbiddenAddress(f"{host} resolves to {result['host']}: {problem}")
        return results

    async def close(self) -> None:
        await self._inner.close()


# ------------------------------------------------------------------- discovery


def _size(count: int) -> str:
    """``300 KiB``, ``256.5 KiB``, ``900 bytes``."""
    if count < 1024:
        return f"{count} bytes"
    kib = count / 1024
    return f"{kib:.0f} KiB" if kib.is_integer() else f"{kib:.1f} KiB"


_NO_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=None, sock_read=None, sock_connect=None)


@dataclass
class _Fetch:
    url: str
    max_bytes: int
    body: bytearray = field(default_factory=bytearray)


async def discover(
    bot_url: str,
    session: aiohttp.ClientSession,
    *,
    policy: AddressPolicy = DEFAULT_POLICY,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> BotEndpoint:
    """Fetch and validate the capabilities of the bot at ``bot_url``; how to play it.

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
    document_url = capabilities_url(bot_url)
    host = urlsplit(document_url).hostname
    assert host is not None  # capabilities_url checked it
    fetch = _Fetch(document_url, max_bytes)
    try:
        async with asyncio.timeout(timeout):
            try:
                await policy.check_host(host)
            except DiscoveryError as exc:
                raise type(exc)(f"{document_url}: {exc}") from None
            await _fetch(fetch, session)
    except TimeoutError:
        got = f" (got {_size(len(fetch.body))} so far)" if fetch.body else ""
        raise BotTimedOut(f"{document_url}: no complete answer within {timeout:g} s{got}") from None
    try:
        capabilities = parse_body(Capabilities, bytes(fetch.body))
    except ProtocolError as exc:
        raise BadCapabilities(f"{document_url}: invalid capabilities document: {exc}") from None
    return endpoint_for(bot_url, document_url, capabilities)


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
    except ForbiddenAddress as exc:  # from a PolicyResolver, at connect time
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
        detail = str(exc) or type(exc).__name__
        raise BotUnreachable(f"{url}: connection failed while fetching: {detail}") from None


def _check_response(url: str, response: aiohttp.ClientResponse, max_bytes: int) -> None:
    status = response.status
    if 300 <= status < 400:
        location = response.headers.get("Location")
        where = f" to {location}" if location else ""
        raise BotRedirected(
            f"{url}: answered {status} redirect{where}; redirects are not followed, "
            "so name the bot by its final address"
        )
    if status != 200:
        reason = f" {response.reason}" if response.reason else ""
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
