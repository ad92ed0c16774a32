"""game.address_policy: IPv6 addresses that carry IPv4 ones, and the outbound session
that checks every connection (literal IPs and WebSocket handshakes included) and never
follows a redirect.

Real servers listen on 127.0.0.1 only; other addresses are judged as literals, never
dialled.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from game.address_policy import DEFAULT_POLICY, AddressPolicy, embedded_ipv4
from game.discovery_errors import BotRedirected, ForbiddenAddress
from game.seats import BotSocketSeat, SeatConnectError

TIMEOUT = 20.0  # only against hangs
NO_LOOPBACK = AddressPolicy.parse("allow=public")
#: What a refusal of a loopback address adds: how the operator allows it.
LOOPBACK_HINT = "; the server's operator allows bots on this machine with --allow loopback"

# ------------------------------------------------------------ embedded IPv4


@pytest.mark.parametrize(
    ("address", "carried"),
    [
        ("::ffff:169.254.169.254", "169.254.169.254"),  # IPv4-mapped
        ("::ffff:0:a9fe:a9fe", "169.254.169.254"),  # IPv4-translated (SIIT)
        ("::a9fe:a9fe", "169.254.169.254"),  # IPv4-compatible
        ("::7f00:1", "127.0.0.1"),  # IPv4-compatible
        ("2002:a9fe:a9fe::1", "169.254.169.254"),  # 6to4
        ("64:ff9b::a9fe:a9fe", "169.254.169.254"),  # NAT64, well-known prefix
        ("64:ff9b:1::a9fe:a9fe", "169.254.169.254"),  # NAT64, local-use, /96
        ("64:ff9b:1:a9fe:a9:fe00::", "169.254.169.254"),  # NAT64, local-use, /48
        ("64:ff9b:1:a9:fe:a9fe::", "169.254.169.254"),  # NAT64, local-use, /56
        ("64:ff9b:1:0:a9:fea9:fe00:0", "169.254.169.254"),  # NAT64, local-use, /64
    ],
)
def test_embedded_ipv4_finds_the_address_reached(address: str, carried: str) -> None:
    assert ipaddress.IPv4Address(carried) in embedded_ipv4(ipaddress.IPv6Address(address))


@pytest.mark.parametrize("address", ["::", "::1", "2001:4860:4860::8888", "fe80::1", "8.8.8.8"])
def test_addresses_that_carry_no_ipv4_have_none(address: str) -> None:
    assert embedded_ipv4(ipaddress.ip_address(address)) == ()


@pytest.mark.parametrize(
    "address",
    [
        "::a9fe:a9fe",
        "::ffff:0:a9fe:a9fe",
        "2002:a9fe:a9fe::",
        "64:ff9b::a9fe:a9fe",
        "64:ff9b:1::a9fe:a9fe",
        "64:ff9b:1:a9fe:a9:fe00::",
    ],
)
def test_default_policy_judges_the_metadata_address_inside(address: str) -> None:
    with pytest.raises(ForbiddenAddress) as caught:
        DEFAULT_POLICY.check_address(address)
    assert str(caught.value) == (
        f"{address}: it carries 169.254.169.254, which is denied by the bot address "
        "policy (metadata)"
    )


@pytest.mark.parametrize(
    ("address", "carried", "hint"),
    [
        ("::7f00:1", "127.0.0.1", LOOPBACK_HINT),
        ("2002:7f00:1::", "127.0.0.1", LOOPBACK_HINT),
        ("::ffff:0:a00:1", "10.0.0.1", ""),
    ],
)
def test_a_carried_address_must_be_allowed_too(address: str, carried: str, hint: str) -> None:
    with pytest.raises(ForbiddenAddress) as caught:
        NO_LOOPBACK.check_address(address)
    assert str(caught.value) == (
        f"{address}: it carries {carried}, which is not allowed by the bot address policy "
        f"(allowed: public){hint}"
    )


@pytest.mark.parametrize("address", ["2002:808:808::1", "64:ff9b::808:808", "::ffff:8.8.8.8"])
def test_a_carried_public_address_passes(address: str) -> None:
    DEFAULT_POLICY.check_address(address)


def test_a_deny_rule_for_the_ipv6_form_still_applies() -> None:
    policy = AddressPolicy.parse("deny=2002::/16")
    with pytest.raises(ForbiddenAddress, match=r"denied by the bot address policy \(2002::/16\)"):
        policy.check_address("2002:808:808::1")


# ------------------------------------------------------ the outbound session


@dataclass
class Redirector:
    """A raw HTTP server on 127.0.0.1 that answers every request with a 302 to
    ``target``, and a target that notes every connection it gets."""

    url: str = ""
    target_url: str = ""
    target_hits: list[bytes] = field(default_factory=list)


@pytest.fixture
async def redirector() -> AsyncIterator[Redirector]:
    state = Redirector()

    async def target(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            state.target_hits.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def redirect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(
                b"HTTP/1.1 302 Found\r\nLocation: "
                + state.target_url.encode()
                + b"\r\nContent-Length: 0\r\n\r\n"
            )
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    target_server = await asyncio.start_server(target, "127.0.0.1", 0)
    redirect_server = await asyncio.start_server(redirect, "127.0.0.1", 0)
    state.target_url = f"http://127.0.0.1:{target_server.sockets[0].getsockname()[1]}/elsewhere"
    state.url = f"http://127.0.0.1:{redirect_server.sockets[0].getsockname()[1]}"
    try:
        yield state
    finally:
        for server in (redirect_server, target_server):
            server.close()
            await server.wait_closed()


async def test_the_session_never_follows_a_redirect(redirector: Redirector) -> None:
    async with DEFAULT_POLICY.client_session() as session:
        with pytest.raises(BotRedirected) as caught:
            async with session.get(f"{redirector.url}/capabilities.json"):  # follows by default
                pass
    assert str(caught.value) == (
        f"{redirector.url}/capabilities.json: answered 302 redirect to "
        f"{redirector.target_url}; redirects are not followed, so name the bot by its final "
        "address"
    )
    assert redirector.target_hits == []


async def test_a_websocket_handshake_does_not_follow_a_redirect(redirector: Redirector) -> None:
    reports: list[str] = []

    async def ignore(_: object) -> None:
        reports.append("reported")

    async with DEFAULT_POLICY.client_session() as session:
        seat = BotSocketSeat(
            f"ws://127.0.0.1:{redirector.url.rsplit(':', 1)[1]}/bws/v1-alpha/game",
            session,
            on_frame=ignore,
            on_closed=ignore,
            on_rtt=lambda _: None,
            max_frame_bytes=1024,
            connect_timeout=TIMEOUT,
        )
        with pytest.raises(SeatConnectError, match=r"answered 302 redirect to .*not followed"):
            await seat.connect()
    assert redirector.target_hits == []
    assert reports == []


async def test_the_session_checks_literal_ips_at_connect_time(redirector: Redirector) -> None:
    # aiohttp's resolver never sees a literal IP: the connector checks it anyway.
    async with NO_LOOPBACK.client_session() as session:
        with pytest.raises(ForbiddenAddress) as caught:
            async with session.get(redirector.target_url):
                pass
        assert str(caught.value) == (
            f"127.0.0.1: not allowed by the bot address policy (allowed: public){LOOPBACK_HINT}"
        )
        with pytest.raises(ForbiddenAddress):
            async with session.ws_connect("ws://[::ffff:127.0.0.1]:1/game"):
                pass
    assert redirector.target_hits == []


def test_each_policy_keeps_its_own_answers() -> None:
    # Answers are kept per policy and address: asking one policy first must not
    # decide what another one says about the same address.
    strict, lenient = AddressPolicy(), AddressPolicy.parse("allow=private")
    for _ in range(2):
        assert strict.problem("10.0.0.1") is not None
        assert lenient.problem("10.0.0.1") is None
        assert strict.problem(ipaddress.ip_address("10.0.0.1")) is not None
