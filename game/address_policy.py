"""Where bots may live: the address policy, and the aiohttp pieces that enforce it on
every connection the server makes on a bot's behalf.

- ``AddressPolicy`` judges literal IP addresses, with the port when a rule needs it
  (``self``: this server's own listening address and port, which the composition root
  gives it once bound, ``serving_at``); ``check_host`` judges a name by every address it
  resolves to. ``default_policy`` is the default for a server listening at an address.
- ``AddressPolicy.connector()`` is an aiohttp connector that checks every address it is
  about to connect to, literal IPs and cached names included. A name may resolve
  differently a moment after ``discover`` checked it (DNS rebinding); checking what the
  connector actually dials closes that gap for the capabilities fetch, every bot's
  WebSocket handshake and every stateless ``turn`` request.
- ``AddressPolicy.client_session()`` is the server's one outbound session: that
  connector, and no redirect followed whatever a caller asks (``ws_connect`` has no way
  to refuse them), so a bot cannot send the server anywhere else with a 3xx.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any, ClassVar, Literal, TypeAlias

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver
from aiohttp.tracing import Trace

from game.discovery_errors import BotRedirected, BotUnreachable, ForbiddenAddress, PolicySyntaxError

__all__ = [
    "DEFAULT_POLICY",
    "EXPOSED_POLICY",
    "SELF",
    "AddressPolicy",
    "OwnEndpoint",
    "PolicyConnector",
    "PolicyResolver",
    "default_policy",
    "embedded_ipv4",
    "own_endpoints",
]

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network


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
#: This server's own listening address(es) and port (``AddressPolicy.own``): the only
#: rule that looks at the port, so that allowing the server's hosted bots (``/bots/...``
#: on its own port) does not allow every other port of its machine.
SELF: Literal["self"] = "self"
_BROADCAST = ipaddress.IPv4Address("255.255.255.255")

Rule: TypeAlias = IPNetwork | Literal["public", "self"]


@dataclass(frozen=True)
class OwnEndpoint:
    """An address (a network, for a server bound to a wildcard address) and a port at
    which this server itself listens: what the ``self`` rule matches.

    >>> own = OwnEndpoint(ipaddress.ip_network("127.0.0.0/8"), 8001)
    >>> own.matches(ipaddress.ip_address("127.0.0.1"), 8001), str(own)
    (True, 'port 8001 of 127.0.0.0/8')
    >>> own.matches(ipaddress.ip_address("127.0.0.1"), 6379)
    False
    """

    network: IPNetwork
    port: int

    def matches(self, address: IPAddress, port: int | None) -> bool:
        return (
            port == self.port
            and address.version == self.network.version
            and (address in self.network)
        )

    def __str__(self) -> str:
        network = self.network
        where = network.network_address if network.num_addresses == 1 else network
        return f"port {self.port} of {where}"


def own_endpoints(address: str | IPAddress, port: int) -> tuple[OwnEndpoint, ...]:
    """Where a server listening on ``address``:``port`` (as its socket says: a literal
    IP) is reached: that address, or for a wildcard one every loopback address of its
    family (``0.0.0.0`` takes connections to 127.0.0.0/8; ``::``, IPv6-only as
    ``wire.listening`` binds it, to ``::1``). Its other interfaces' addresses are not
    guessed: allow them by network if bots are to be named by them.

    >>> [str(own) for own in own_endpoints("0.0.0.0", 8001)]
    ['port 8001 of 127.0.0.0/8']
    >>> [str(own) for own in own_endpoints("203.0.113.5", 443)]
    ['port 443 of 203.0.113.5']
    """
    ip = _ip(address)
    if ip is None:
        raise ValueError(f"{address!r} is not an IP address")
    if not 0 <= port <= 65535:
        raise ValueError(f"port must be from 0 to 65535, got {port}")
    if ip.is_unspecified:
        return (OwnEndpoint(_GROUPS["loopback"][0 if ip.version == 4 else 1], port),)
    return (OwnEndpoint(ipaddress.ip_network(ip), port),)


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


_IPV4_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # RFC 2765 (SIIT)
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated, but still routable
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_TEREDO = ipaddress.IPv6Network("2001::/32")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052 well-known prefix
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215 local-use prefix
#: Where RFC 6052 puts the IPv4 address under a local-use NAT64 prefix: after the
#: prefix, which may be 48, 56, 64 or 96 bits long inside 64:ff9b:1::/48, skipping
#: bits 64-71 (the "u" octet) for the shorter ones. Nothing in the address says which,
#: so every non-zero candidate is judged.
_NAT64_LOCAL_PREFIX_LENGTHS = (48, 56, 64)
_LOW_32 = 0xFFFFFFFF


def embedded_ipv4(address: IPAddress) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses an IPv6 address carries, which a connection to it may reach:
    mapped (``::ffff:a.b.c.d``), translated (``::ffff:0:a.b.c.d``), compatible
    (``::a.b.c.d``), 6to4 (``2002:AABB:CCDD::``), Teredo (server and client), NAT64
    (``64:ff9b::a.b.c.d``) and every place a local-use NAT64 prefix may put one.
    Empty for IPv4 addresses and for IPv6 ones that carry none (``::`` and ``::1``
    are themselves, not ``0.0.0.0`` and ``0.0.0.1``).

    >>> embedded_ipv4(ipaddress.ip_address("::a9fe:a9fe"))
    (IPv4Address('169.254.169.254'),)
    >>> embedded_ipv4(ipaddress.ip_address("2002:7f00:1::5"))
    (IPv4Address('127.0.0.1'),)
    >>> embedded_ipv4(ipaddress.ip_address("2001:4860:4860::8888"))
    ()
    """
    if isinstance(address, ipaddress.IPv4Address):
        return ()
    value = int(address)
    low = ipaddress.IPv4Address(value & _LOW_32)
    if address in _IPV4_MAPPED or address in _IPV4_TRANSLATED or address in _NAT64:
        return (low,)
    if address in _IPV4_COMPATIBLE:
        return () if value <= 1 else (low,)
    if address.sixtofour is not None:
        return (address.sixtofour,)
    if address.teredo is not None:
        return address.teredo
    if address in _NAT64_LOCAL:
        without_u = ((value >> 64) << 56) | (value & ((1 << 56) - 1))  # 120 bits
        found = [
            ipaddress.IPv4Address((without_u >> (120 - length - 32)) & _LOW_32)
            for length in _NAT64_LOCAL_PREFIX_LENGTHS
        ]
        # The places the prefix does not use are zero: they carry nothing.
        return tuple(a for a in dict.fromkeys([*found, low]) if int(a))
    return ()


@dataclass(frozen=True)
class AddressPolicy:
    """Which addresses bots may live at: a deny list and an allow list.

    An address passes when it is not in a hard floor (unspecified ``0.0.0.0``/``::``,
    multicast, the broadcast address — never dialable whatever the configuration, as
    connecting to ``0.0.0.0`` reaches this machine), matches no ``deny`` rule (deny
    wins), and matches some ``allow`` rule. A rule is a network or ``"public"``
    (globally routable). An IPv6 address that carries IPv4 ones (mapped, translated,
    compatible, 6to4, Teredo, NAT64: ``embedded_ipv4``) is judged by the IPv4 addresses
    it may reach: each must pass the floor, the deny list and the allow list (the IPv6
    address itself must also escape the floor and the deny list). Otherwise
    ``::a9fe:a9fe`` would pass as "public" while it reaches 169.254.169.254. A host name
    passes when every address it resolves to passes.

    The rule ``"self"`` matches an address *and port* in ``own``: where this server
    itself listens (``serving_at``, told by the composition root once it is bound), so
    that its hosted bots play without opening every port of its machine. An address
    judged without a port (``problem(address)``) never matches ``self``.

    Default: allow loopback and public addresses; deny link-local and the cloud
    metadata addresses (169.254.169.254, fd00:ec2::254, 100.100.100.200). Everything
    else, private ranges included, is not allowed. That suits a server listening on
    loopback only; one that listens on another address defaults to ``EXPOSED_POLICY``
    (``default_policy``), which allows ``self`` instead of ``loopback``: otherwise
    anyone could make it fetch ``capabilities.json`` from any port of its own machine
    (a database on 127.0.0.1) and tell open ports from closed ones by the answer.

    Configuration string (``parse``; ``str`` gives it back, ``own`` aside):
    ``;``-separated parts ``allow=...`` and ``deny=...``, each a ``,``-separated list of
    networks and group names: ``loopback``, ``public``, ``private``, ``link-local``,
    ``metadata``, ``any``, ``self``. A part that is left out keeps its default (``parse``'s
    ``base``); an empty one (``deny=``) is empty.

    >>> policy = AddressPolicy.parse("allow=loopback,public,10.1.0.0/16")
    >>> str(policy)
    'allow=loopback,public,10.1.0.0/16;deny=metadata,link-local'
    >>> policy.check_address("10.1.2.3")
    >>> DEFAULT_POLICY.check_address("169.254.169.254")
    Traceback (most recent call last):
    ...
    game.discovery_errors.ForbiddenAddress: 169.254.169.254: denied by the bot address policy \
(metadata)
    >>> own = AddressPolicy.parse("allow=self,public").serving_at("0.0.0.0", 8001)
    >>> own.describe()
    'allow=self,public;deny=metadata,link-local (self: port 8001 of 127.0.0.0/8)'
    >>> own.problem("127.0.0.1", 8001) is None, own.problem("127.0.0.1", 6379) is None
    (True, False)
    """

    allow: tuple[Rule, ...] = (*_GROUPS["loopback"], PUBLIC)
    # Metadata first, so that 169.254.169.254 is refused naming the more telling rule.
    deny: tuple[Rule, ...] = (*_GROUPS["metadata"], *_GROUPS["link-local"])
    #: Where this server listens: what ``self`` matches. Not part of the policy string.
    own: tuple[OwnEndpoint, ...] = ()

    GROUPS: ClassVar[tuple[str, ...]] = (*_GROUPS, PUBLIC, SELF)

    def __str__(self) -> str:
        return f"allow={_rule_text(self.allow)};deny={_rule_text(self.deny)}"

    def describe(self) -> str:
        """The policy string, and what ``self`` stands for when a rule names it."""
        if SELF not in (*self.allow, *self.deny):
            return str(self)
        own = ", ".join(str(endpoint) for endpoint in self.own) or "nothing yet"
        return f"{self} (self: {own})"

    def serving_at(self, address: str | IPAddress, port: int) -> AddressPolicy:
        """This policy, with the server also listening at ``address``:``port`` (a literal
        IP, as the socket says; ``own_endpoints``), which ``self`` then matches."""
        return replace(self, own=(*self.own, *own_endpoints(address, port)))

    @classmethod
    def parse(cls, text: str, *, base: AddressPolicy | None = None) -> AddressPolicy:
        """A policy from its configuration string (see the class docstring); a part left
        out keeps ``base``'s (default ``AddressPolicy()``), as do its ``own`` endpoints."""
        default = base if base is not None else cls()
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
        return replace(default, allow=lists["allow"], deny=lists["deny"])

    def problem(self, address: str | IPAddress, port: int | None = None) -> str | None:
        """Why ``address`` (a literal IP) is not allowed, or ``None`` if it is; ``port``,
        the port to be dialled there, is what ``self`` also needs to match."""
        # Asked for every connection a game opens (its capabilities, each seat's
        # socket), about the same few addresses: the answer is kept (a policy never
        # changes, and an address says the same thing every time).
        return _problem(self, address, port)

    def _problem(self, address: str | IPAddress, port: int | None) -> str | None:
        ip = _ip(address)
        if ip is None:
            return f"{address!r} is not an IP address"
        embedded = embedded_ipv4(ip)
        for target in (ip, *embedded):
            # Name the IPv4 address at fault, as the IPv6 one may look harmless.
            carried = f"it carries {target}, which is " if target is not ip else ""
            problem = self._refusal(target, port)
            if problem is not None:
                return carried + problem
        for target in embedded or (ip,):
            if not any(self._matches(rule, target, port) for rule in self.allow):
                carried = f"it carries {target}, which is " if target is not ip else ""
                return (
                    f"{carried}not allowed by the bot address policy (allowed: "
                    f"{self._allowed_text()}){self._loopback_hint(target)}"
                )
        return None

    def _matches(self, rule: Rule, address: IPAddress, port: int | None) -> bool:
        if rule == PUBLIC:
            return address.is_global
        if rule == SELF:
            return any(endpoint.matches(address, port) for endpoint in self.own)
        assert not isinstance(rule, str)
        return address.version == rule.version and address in rule

    def _allowed_text(self) -> str:
        """The allow list, and what ``self`` stands for when it is on it."""
        allowed = _rule_text(self.allow) or "nothing"
        if SELF in self.allow and self.own:
            own = ", ".join(str(endpoint) for endpoint in self.own)
            allowed += f"; self is this server's own {own}"
        return allowed

    @staticmethod
    def _loopback_hint(target: IPAddress) -> str:
        """For a refused loopback address (a developer's bot beside the server): how
        the operator allows it."""
        if not target.is_loopback:
            return ""
        return "; the server's operator allows bots on this machine with --allow loopback"

    def _refusal(self, target: IPAddress, port: int | None) -> str | None:
        """Why ``target`` is refused outright (the floor, a deny rule), or ``None``."""
        if target.is_unspecified or target.is_multicast or target == _BROADCAST:
            return "an unspecified, multicast or broadcast address, never a bot"
        for rule in self.deny:
            if self._matches(rule, target, port):
                return f"denied by the bot address policy ({_describe_rule(rule)})"
        return None

    def check_address(self, address: str | IPAddress, port: int | None = None) -> None:
        """Raise ``ForbiddenAddress`` unless ``address`` (a literal IP; at ``port``, for
        ``self``) is allowed."""
        problem = self.problem(address, port)
        if problem is not None:
            raise ForbiddenAddress(f"{address}: {problem}")

    async def check_host(self, host: str, port: int | None = None) -> list[IPAddress]:
        """Check ``host`` (an IP or a name, resolved with the loop's getaddrinfo) at
        ``port``: every address it resolves to must be allowed. Returns them; raises
        ``ForbiddenAddress``, or ``BotUnreachable`` when the name does not resolve."""
        literal = _ip(host)
        if literal is not None:
            self.check_address(literal, port)
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
            problem = self.problem(address, port)
            if problem is not None:
                raise ForbiddenAddress(f"{host} resolves to {address}: {problem}")
        return found

    def resolver(self) -> PolicyResolver:
        """An aiohttp resolver that refuses names resolving to forbidden addresses."""
        return PolicyResolver(self)

    def connector(self, **options: Any) -> PolicyConnector:
        """An aiohttp connector that checks every address it is about to connect to,
        literal IPs and cached names included (see the module docstring)."""
        return PolicyConnector(self, **options)

    def client_session(self, **options: Any) -> aiohttp.ClientSession:
        """An aiohttp session for requests on a bot's behalf: every connection through
        ``connector()``, and no redirect ever followed (``BotRedirected`` instead), even
        by calls that follow them by default, such as ``ws_connect``. Its connection
        pool has no limit of its own."""
        never_redirect = aiohttp.TraceConfig()
        never_redirect.on_request_redirect.append(_refuse_redirect)
        # No pool limit (aiohttp's default is 100 connections): each game holds a socket
        # per bot seat for its whole length, so a limit of 100 would cap the server at 50
        # games of socket bots, whatever --max-games says. --max-games bounds them.
        return aiohttp.ClientSession(
            connector=self.connector(limit=0), trace_configs=[never_redirect], **options
        )


@functools.lru_cache(maxsize=4096)
def _problem(policy: AddressPolicy, address: str | IPAddress, port: int | None) -> str | None:
    return policy._problem(address, port)


def _ip(value: str | IPAddress) -> IPAddress | None:
    if isinstance(value, ipaddress.IPv4Address | ipaddress.IPv6Address):
        return value
    try:
        return ipaddress.ip_address(value.strip("[]"))
    except ValueError:
        return None


def _rules(item: str) -> tuple[Rule, ...]:
    name = item.lower()
    if name in (PUBLIC, SELF):
        return (PUBLIC,) if name == PUBLIC else (SELF,)
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
    if isinstance(rule, str):
        return rule
    for name, members in _GROUPS.items():
        if name != "any" and rule in members:
            return name
    return str(rule)


DEFAULT_POLICY = AddressPolicy()
#: The default of a server that listens on an address other than loopback: its own
#: address and port (its hosted bots) rather than all of loopback.
EXPOSED_POLICY = AddressPolicy(allow=(SELF, PUBLIC))


def default_policy(listening_at: str | IPAddress) -> AddressPolicy:
    """The default policy of a server listening at ``listening_at`` (a literal IP):
    ``DEFAULT_POLICY`` on loopback, where only this machine reaches it (a developer's
    bot on another port of it is expected); ``EXPOSED_POLICY`` elsewhere, wildcard
    addresses included, where a stranger could otherwise probe the machine's loopback.

    >>> str(default_policy("127.0.0.1"))
    'allow=loopback,public;deny=metadata,link-local'
    >>> str(default_policy("0.0.0.0"))
    'allow=self,public;deny=metadata,link-local'
    """
    ip = _ip(listening_at)
    if ip is None:
        raise ValueError(f"{listening_at!r} is not an IP address")
    return DEFAULT_POLICY if ip.is_loopback else EXPOSED_POLICY


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
            problem = self.policy.problem(result["host"], result["port"])
            if problem is not None:
                raise ForbiddenAddress(f"{host} resolves to {result['host']}: {problem}")
        return results

    async def close(self) -> None:
        await self._inner.close()


class PolicyConnector(aiohttp.TCPConnector):
    """aiohttp's TCP connector, refusing to connect to any address ``policy`` does not
    allow, with ``ForbiddenAddress``.

    The check sits where aiohttp turns a host into the addresses it will dial, after
    its DNS cache and its shortcut for literal IPs (which skip the resolver), so no
    connection of the session escapes it: not a handshake, not a redirect target.
    """

    def __init__(self, policy: AddressPolicy, **options: Any) -> None:
        super().__init__(**options)
        self.policy = policy

    async def _resolve_host(
        self, host: str, port: int, traces: Sequence[Trace] | None = None
    ) -> list[ResolveResult]:
        results = await super()._resolve_host(host, port, traces=traces)
        for result in results:
            problem = self.policy.problem(result["host"], result["port"])
            if problem is not None:
                if _ip(host) is not None:
                    raise ForbiddenAddress(f"{host}: {problem}")
                raise ForbiddenAddress(f"{host} resolves to {result['host']}: {problem}")
        return results


async def _refuse_redirect(
    session: aiohttp.ClientSession,
    context: SimpleNamespace,
    params: aiohttp.TraceRequestRedirectParams,
) -> None:
    """A ``TraceConfig`` hook: aiohttp is about to follow a redirect; stop it."""
    response = params.response
    location = response.headers.get("Location")
    where = f" to {location}" if location else ""
    response.close()
    raise BotRedirected(
        f"{params.url}: answered {response.status} redirect{where}; redirects are not "
        "followed, so name the bot by its final address"
    )
