"""game.discovery: bot URLs, api_root resolution, the address policy, and ``discover``
against real servers on 127.0.0.1 (CenterBot via ``bot.serve``, and small Starlette apps
for bots that misbehave).

No test touches a non-loopback address: policy checks of other addresses use literal
IPs, and name resolution to a forbidden address is faked. Timeouts are short but no
assertion depends on how long anything took.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import aiohttp
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import BaseRoute, Route

from bot.bots import CenterBot
from bot.serve import BotPool, create_app, mount_bot, serving
from game.discovery import (
    DEFAULT_MAX_BYTES,
    DEFAULT_POLICY,
    AddressPolicy,
    BadApiRoot,
    BadBotUrl,
    BadCapabilities,
    BotEndpoint,
    BotHttpError,
    BotRedirected,
    BotTimedOut,
    BotUnreachable,
    CapabilitiesTooLarge,
    DiscoveryError,
    ForbiddenAddress,
    NoUsableProtocol,
    PolicySyntaxError,
    capabilities_url,
    discover,
    endpoint_for,
    resolve_api_root,
    websocket_url,
)
from models import (
    Capabilities,
    Meta,
    StatelessCapability,
    StatelessV1Alpha,
    StatelessVersions,
    parse_body,
)

TIMEOUT = 20.0  # only against hangs
SHORT = 0.3  # for the tests that want a timeout

Json = dict[str, Any]


# ======================================================================= pure parts

# ---------------------------------------------------------------- capabilities_url


@pytest.mark.parametrize(
    ("bot_url", "expected"),
    [
        ("http://127.0.0.1:8002", "http://127.0.0.1:8002/capabilities.json"),
        ("http://127.0.0.1:8002/", "http://127.0.0.1:8002/capabilities.json"),
        ("http://h/bots/center", "http://h/bots/center/capabilities.json"),
        ("http://h/bots/center///", "http://h/bots/center/capabilities.json"),
        ("https://h:8443/x", "https://h:8443/x/capabilities.json"),
        ("ws://h:1/x", "http://h:1/x/capabilities.json"),
        ("wss://h/x/", "https://h/x/capabilities.json"),
        ("WS://h/x", "http://h/x/capabilities.json"),
        ("http://h/x/capabilities.json", "http://h/x/capabilities.json"),
        ("http://h/capabilities.json/", "http://h/capabilities.json"),
        ("http://h/my-capabilities.json", "http://h/my-capabilities.json/capabilities.json"),
        ("http://[::1]:8002/bot", "http://[::1]:8002/bot/capabilities.json"),
        ("  http://h/x  ", "http://h/x/capabilities.json"),
    ],
)
def test_capabilities_url(bot_url: str, expected: str) -> None:
    assert capabilities_url(bot_url) == expected


@pytest.mark.parametrize(
    ("bot_url", "reason"),
    [
        ("", "empty bot URL"),
        ("ftp://h/", "unsupported scheme 'ftp'; use http, https, ws or wss"),
        ("file:///etc/passwd", "unsupported scheme 'file'"),
        ("mailto://h", "unsupported scheme 'mailto'"),
        ("127.0.0.1:8002", "no scheme; did you mean 'http://127.0.0.1:8002'"),
        ("localhost:8002", "no scheme"),
        ("localhost", "no scheme"),
        ("http:///x", "no host"),
        ("http://h:99999/", "not a valid URL"),
        ("http://h:0/", "port 0 cannot be dialled"),
        ("http://user:secret@h/", "user names and passwords are not allowed"),
        ("http://h/x?token=1", "no query or fragment"),
        ("http://h/x#frag", "no query or fragment"),
        ("http://h/a b", "spaces, control characters"),
        ("http://h\\@evil/", "backslashes"),
    ],
)
def test_bad_bot_urls_are_refused_with_the_reason(bot_url: str, reason: str) -> None:
    with pytest.raises(BadBotUrl, match=reason.replace("?", r"\?")):
        capabilities_url(bot_url)


def test_bot_url_errors_are_discovery_errors_and_value_errors() -> None:
    with pytest.raises(DiscoveryError):
        capabilities_url("gopher://h")
    assert issubclass(DiscoveryError, ValueError)


# ---------------------------------------------------------------- resolve_api_root

DOC = "http://h:1/bots/center/capabilities.json"


@pytest.mark.parametrize(
    ("document_url", "api_root", "leaf", "expected"),
    [
        ("http://h:1/capabilities.json", "bws/v1-alpha", "game", "http://h:1/bws/v1-alpha/game"),
        (DOC, "bws/v1-alpha", "game", "http://h:1/bots/center/bws/v1-alpha/game"),
        (DOC, "stateless/v1-alpha", "turn", "http://h:1/bots/center/stateless/v1-alpha/turn"),
        (DOC, "bws/v1-alpha/", "game", "http://h:1/bots/center/bws/v1-alpha/game"),
        (DOC, "/api/v1", "game", "http://h:1/bots/center/api/v1/game"),  # leading / dropped
        (DOC, "", "turn", "http://h:1/bots/center/turn"),
        (DOC, "/", "turn", "http://h:1/bots/center/turn"),
        (DOC, ".", "turn", "http://h:1/bots/center/turn"),
        (DOC, "./a/./b", "turn", "http://h:1/bots/center/a/b/turn"),
        (DOC, "../shared", "turn", "http://h:1/bots/shared/turn"),
        (DOC, "../../../../up", "turn", "http://h:1/up/turn"),  # cannot climb past the host
        (DOC, "a%20b", "turn", "http://h:1/bots/center/a%20b/turn"),
        ("https://h/x/capabilities.json", "v1", "game", "https://h/x/v1/game"),
    ],
)
def test_resolve_api_root(document_url: str, api_root: str, leaf: str, expected: str) -> None:
    assert resolve_api_root(document_url, api_root, leaf) == expected


@pytest.mark.parametrize(
    ("api_root", "reason"),
    [
        ("http://169.254.169.254/latest", "not a URL"),
        ("//evil.example/x", "not a URL"),
        ("javascript:alert(1)", "not a URL"),
        ("v1?debug=1", "without query or fragment"),
        ("v1#x", "without query or fragment"),
        ("v 1", "spaces"),
        ("..\\..\\x", "backslashes"),
    ],
)
def test_api_root_that_is_not_a_relative_path_is_refused(api_root: str, reason: str) -> None:
    with pytest.raises(BadApiRoot, match=reason):
        resolve_api_root(DOC, api_root, "game")


def test_websocket_url_keeps_the_security_of_the_scheme() -> None:
    assert websocket_url("http://h/x") == "ws://h/x"
    assert websocket_url("https://h/x") == "wss://h/x"


# ---------------------------------------------------------------- endpoint_for


def caps(document: Json) -> Capabilities:
    return parse_body(Capabilities, json.dumps(document))


def test_endpoint_prefers_the_websocket_and_keeps_both_urls() -> None:
    endpoint = endpoint_for(
        "wss://h/bot",
        "https://h/bot/capabilities.json",
        caps(
            {
                "meta": {"name": "Both"},
                "basic_websocket": {"versions": {"v1-alpha": {}}},
                "stateless": {"versions": {"v1-alpha": {"api_root": "api"}}},
            }
        ),
    )
    assert endpoint == BotEndpoint(
        url="wss://h/bot",
        document_url="https://h/bot/capabilities.json",
        capabilities=endpoint.capabilities,
        transport="websocket",
        socket_url="wss://h/bot/bws/v1-alpha/game",
        turn_url="https://h/bot/api/turn",
        name="Both",
    )


def test_endpoint_of_a_stateless_only_bot() -> None:
    endpoint = endpoint_for(
        "http://h",
        "http://h/capabilities.json",
        caps({"stateless": {"versions": {"v1-alpha": {}}}}),
    )
    assert (endpoint.transport, endpoint.socket_url, endpoint.name) == ("stateless", None, None)
    assert endpoint.turn_url == "http://h/stateless/v1-alpha/turn"


def test_no_usable_protocol_says_what_the_bot_declares_instead() -> None:
    document: Json = {"basic_websocket": {"versions": {"v2": {}}}, "telepathy": {}}
    with pytest.raises(NoUsableProtocol) as caught:
        endpoint_for("http://h", "http://h/capabilities.json", caps(document))
    assert str(caught.value) == (
        "http://h/capabilities.json: declares neither basic_websocket v1-alpha nor "
        "stateless v1-alpha, so the bot cannot be seated (it declares basic_websocket v2, "
        "telepathy)"
    )


def test_endpoint_with_a_foreign_api_root_is_refused() -> None:
    document = {"basic_websocket": {"versions": {"v1-alpha": {"api_root": "ws://other/"}}}}
    with pytest.raises(BadApiRoot, match=r"^http://h/capabilities.json: api_root 'ws://other/'"):
        endpoint_for("http://h", "http://h/capabilities.json", caps(document))


# ---------------------------------------------------------------- address policy


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "127.8.9.10", "::1", "8.8.8.8", "2001:4860:4860::8888", "::ffff:127.0.0.1"],
)
def test_default_policy_allows_loopback_and_public(address: str) -> None:
    DEFAULT_POLICY.check_address(address)


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("169.254.169.254", "denied by the bot address policy (metadata)"),
        ("fd00:ec2::254", "denied by the bot address policy (metadata)"),
        ("100.100.100.200", "denied by the bot address policy (metadata)"),
        ("169.254.1.1", "denied by the bot address policy (link-local)"),
        ("fe80::1", "denied by the bot address policy (link-local)"),
        ("::ffff:169.254.169.254", "(metadata)"),  # IPv4-mapped
        ("64:ff9b::a9fe:a9fe", "(metadata)"),  # NAT64 of 169.254.169.254
        ("0.0.0.0", "never a bot"),
        ("::", "never a bot"),
        ("224.0.0.1", "never a bot"),
        ("ff02::1", "never a bot"),
        ("255.255.255.255", "never a bot"),
        ("10.0.0.1", "not allowed by the bot address policy (allowed: loopback,public)"),
        ("192.168.1.10", "not allowed"),
        ("172.16.0.1", "not allowed"),
        ("fd12::1", "not allowed"),
        ("100.64.0.1", "not allowed"),
    ],
)
def test_default_policy_refuses(address: str, reason: str) -> None:
    with pytest.raises(ForbiddenAddress) as caught:
        DEFAULT_POLICY.check_address(address)
    assert str(caught.value).startswith(f"{address}: ")
    assert reason in str(caught.value)


def test_policy_string_round_trips_and_names_groups() -> None:
    assert str(DEFAULT_POLICY) == "allow=loopback,public;deny=metadata,link-local"
    assert AddressPolicy.parse(str(DEFAULT_POLICY)) == DEFAULT_POLICY
    assert AddressPolicy.parse("") == DEFAULT_POLICY


def test_policy_can_open_private_ranges() -> None:
    policy = AddressPolicy.parse("allow = loopback, public, private")
    policy.check_address("192.168.1.10")
    policy.check_address("fd12::1")
    with pytest.raises(ForbiddenAddress, match="metadata"):
        policy.check_address("169.254.169.254")  # the default deny part still applies


def test_policy_deny_wins_over_allow() -> None:
    policy = AddressPolicy.parse("allow=any;deny=127.0.0.2/32")
    policy.check_address("127.0.0.1")
    policy.check_address("169.254.1.1")  # an empty-handed deny list was replaced
    with pytest.raises(ForbiddenAddress, match=r"\(127.0.0.2/32\)"):
        policy.check_address("127.0.0.2")


def test_policy_floor_cannot_be_configured_away() -> None:
    policy = AddressPolicy.parse("allow=any;deny=")
    with pytest.raises(ForbiddenAddress, match="never a bot"):
        policy.check_address("0.0.0.0")


def test_policy_that_allows_nothing_says_so() -> None:
    with pytest.raises(ForbiddenAddress, match=r"allowed: nothing"):
        AddressPolicy.parse("allow=").check_address("127.0.0.1")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("allow", "expected allow=... or deny=..."),
        ("permit=any", "expected allow=... or deny=..."),
        ("allow=lan", "'lan' is neither a network"),
        ("allow=10.0.0.0/33", "neither a network"),
        ("allow=any;allow=public", "'allow' given twice"),
    ],
)
def test_bad_policy_strings_are_refused(text: str, reason: str) -> None:
    with pytest.raises(PolicySyntaxError, match=reason.replace(".", r"\.")):
        AddressPolicy.parse(text)


def test_policy_refuses_something_that_is_not_an_address() -> None:
    assert DEFAULT_POLICY.problem("bots.example") == "'bots.example' is not an IP address"


async def test_check_host_allows_localhost() -> None:
    addresses = await DEFAULT_POLICY.check_host("localhost")
    assert addresses and all(address.is_loopback for address in addresses)


async def test_check_host_refuses_a_literal_metadata_address() -> None:
    with pytest.raises(ForbiddenAddress, match="metadata"):
        await DEFAULT_POLICY.check_host("169.254.169.254")
    with pytest.raises(ForbiddenAddress, match="metadata"):
        await DEFAULT_POLICY.check_host("[fd00:ec2::254]")


@pytest.fixture
async def fake_dns(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[dict[str, list[str]]]:
    """Names resolved by the running loop's getaddrinfo to chosen addresses, so that no
    query leaves the machine."""
    table: dict[str, list[str]] = {}
    loop = asyncio.get_running_loop()
    real = loop.getaddrinfo

    async def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in table:
            return await real(host, port, *args, **kwargs)
        return [
            (
                socket.AF_INET6 if ":" in address else socket.AF_INET,
                socket.SOCK_STREAM,
                6,
                "",
                (address, port or 0),
            )
            for address in table[host]
        ]

    monkeypatch.setattr(loop, "getaddrinfo", getaddrinfo)
    yield table


async def test_check_host_refuses_a_name_resolving_to_a_denied_address(
    fake_dns: dict[str, list[str]],
) -> None:
    fake_dns["metadata.test"] = ["169.254.169.254"]
    with pytest.raises(ForbiddenAddress) as caught:
        await DEFAULT_POLICY.check_host("metadata.test")
    assert str(caught.value) == (
        "metadata.test resolves to 169.254.169.254: denied by the bot address policy (metadata)"
    )


async def test_check_host_needs_every_address_to_pass(fake_dns: dict[str, list[str]]) -> None:
    fake_dns["mixed.test"] = ["127.0.0.1", "10.0.0.5"]
    with pytest.raises(ForbiddenAddress, match=r"mixed\.test resolves to 10\.0\.0\.5: not allowed"):
        await DEFAULT_POLICY.check_host("mixed.test")


async def test_discover_refuses_a_name_resolving_to_a_denied_address(
    fake_dns: dict[str, list[str]],
) -> None:
    fake_dns["bot.test"] = ["fe80::1"]
    async with aiohttp.ClientSession() as session:
        with pytest.raises(ForbiddenAddress) as caught:
            await discover("http://bot.test:8002/", session)
    assert str(caught.value) == (
        "http://bot.test:8002/capabilities.json: bot.test resolves to fe80::1: "
        "denied by the bot address policy (link-local)"
    )


# ======================================================================= real servers


@dataclass
class Misbehaviour:
    """What the misbehaving bots did, and the lever that lets the slow ones go."""

    release: asyncio.Event = field(default_factory=asyncio.Event)
    chunks_sent: int = 0
    redirect_followed: bool = False


HUGE_CHUNK = 64 * 1024
HUGE_CHUNKS = 1024  # 64 MiB: far more than any socket buffers between us


def misbehaving_routes(state: Misbehaviour) -> list[BaseRoute]:
    def document(body: object) -> Any:
        async def endpoint(request: Request) -> Response:
            return JSONResponse(body)

        return endpoint

    async def redirect(request: Request) -> Response:
        return RedirectResponse("/target/capabilities.json", status_code=302)

    async def target(request: Request) -> Response:
        state.redirect_followed = True
        return JSONResponse({"basic_websocket": {"versions": {"v1-alpha": {}}}})

    async def silent(request: Request) -> Response:
        await state.release.wait()
        return JSONResponse({})

    async def stalls_mid_body(request: Request) -> Response:
        async def body() -> AsyncIterator[bytes]:
            yield b'{"meta": '
            await state.release.wait()
            yield b"{}}"

        return StreamingResponse(body(), media_type="application/json")

    async def huge(request: Request) -> Response:
        async def body() -> AsyncIterator[bytes]:
            yield b'{"meta": {"description": "'
            for _ in range(HUGE_CHUNKS):
                state.chunks_sent += 1
                yield b"x" * HUGE_CHUNK
            yield b'"}}'

        return StreamingResponse(body(), media_type="application/json")

    async def declared_huge(request: Request) -> Response:
        return Response(b" " * (300 * 1024), media_type="application/json")

    async def error(request: Request) -> Response:
        return PlainTextResponse("boom", status_code=500)

    async def html(request: Request) -> Response:
        return Response("<html>hello</html>", media_type="text/html")

    return [
        Route("/redirect/capabilities.json", redirect),
        Route("/target/capabilities.json", target),
        Route("/silent/capabilities.json", silent),
        Route("/stalls/capabilities.json", stalls_mid_body),
        Route("/huge/capabilities.json", huge),
        Route("/declared-huge/capabilities.json", declared_huge),
        Route("/error/capabilities.json", error),
        Route("/html/capabilities.json", html),
        Route("/list/capabilities.json", document([])),
        Route(
            "/invalid/capabilities.json",
            document({"basic_websocket": {"versions": {"v1-alpha": {"free_setup": "yes"}}}}),
        ),
        Route(
            "/stateless-only/capabilities.json",
            document({"meta": {"name": "Lone"}, "stateless": {"versions": {"v1-alpha": {}}}}),
        ),
        Route(
            "/neither/capabilities.json",
            document({"meta": {"name": "Future"}, "basic_websocket": {"versions": {"v2": {}}}}),
        ),
        Route(
            "/foreign-root/capabilities.json",
            document(
                {
                    "basic_websocket": {
                        "versions": {"v1-alpha": {"api_root": "http://169.254.169.254/"}}
                    }
                }
            ),
        ),
        Route("/exact/capabilities.json", document(_at_limit_document())),
    ]


def _at_limit_document() -> Json:
    """A valid document of exactly DEFAULT_MAX_BYTES bytes (as Starlette encodes it)."""
    base = {"meta": {"description": ""}, "stateless": {"versions": {"v1-alpha": {}}}}
    size = len(JSONResponse(base).body)
    base["meta"]["description"] = "d" * (DEFAULT_MAX_BYTES - size)  # type: ignore[index]
    return base


class StatelessCenter(CenterBot):
    """CenterBot offering only the stateless API."""

    @classmethod
    def capabilities(cls) -> Capabilities:
        return Capabilities(
            meta=Meta(name="StatelessCenter"),
            stateless=StatelessCapability(versions=StatelessVersions(v1_alpha=StatelessV1Alpha())),
        )


@dataclass
class Arena:
    url: str
    port: int
    session: aiohttp.ClientSession
    state: Misbehaviour


@pytest.fixture
async def arena() -> AsyncIterator[Arena]:
    """One server on 127.0.0.1: CenterBot under /center, StatelessCenter under
    /stateless-center, CenterBot with its own api_root under /nested/deeper/engine, and
    the misbehaving bots."""
    state = Misbehaviour()
    pool = BotPool(2)
    routes = [
        *misbehaving_routes(state),
        mount_bot("/center", CenterBot, pool),
        mount_bot("/stateless-center", StatelessCenter, pool),
        mount_bot("/nested/deeper/engine", CenterBot, pool, api_root="api/htttx/v1"),
    ]
    app = Starlette(routes=routes)
    app.state.bot_pool = pool
    try:
        async with (
            serving(app) as server,
            aiohttp.ClientSession(
                connector=DEFAULT_POLICY.connector(), timeout=aiohttp.ClientTimeout(TIMEOUT)
            ) as session,
        ):
            try:
                yield Arena(server.url, server.port, session, state)
            finally:
                state.release.set()  # so the slow handlers end before the server stops
    finally:
        pool.shutdown()


async def play_one_move_over_the_socket(session: aiohttp.ClientSession, socket_url: str) -> Json:
    async with session.ws_connect(socket_url, timeout=aiohttp.ClientWSTimeout(ws_close=5)) as ws:
        await ws.send_str('{"type": "setup"}')
        await ws.send_str('{"type": "move_request", "side": "o", "previous": []}')
        async with asyncio.timeout(TIMEOUT):
            while True:
                packet: Json = json.loads(await ws.receive_str())
                if packet["type"] == "move_response":
                    return packet


# ---------------------------------------------------------------- working bots


async def test_discover_center_bot_served_at_the_root() -> None:
    async with (
        serving(create_app(CenterBot)) as server,
        aiohttp.ClientSession() as session,
    ):
        endpoint = await discover(server.url, session)
        assert endpoint.url == server.url
        assert endpoint.document_url == f"{server.url}/capabilities.json"
        assert endpoint.transport == "websocket"
        assert endpoint.name == "CenterBot"
        assert endpoint.socket_url == f"ws://127.0.0.1:{server.port}/bws/v1-alpha/game"
        assert endpoint.turn_url == f"{server.url}/stateless/v1-alpha/turn"
        answer = await play_one_move_over_the_socket(session, endpoint.socket_url)
        assert len(answer["move"]["pieces"]) == 2


@pytest.mark.parametrize(
    "given",
    [
        "http://127.0.0.1:{port}/center",
        "http://127.0.0.1:{port}/center/",
        "ws://127.0.0.1:{port}/center",
        "http://127.0.0.1:{port}/center/capabilities.json",
        "http://localhost:{port}/center",  # by name, through the policy's resolver
    ],
)
async def test_discover_accepts_every_form_of_the_bot_url(arena: Arena, given: str) -> None:
    bot_url = given.format(port=arena.port)
    endpoint = await discover(bot_url, arena.session)
    host = bot_url.split("//")[1].split("/")[0]
    assert endpoint.url == bot_url
    assert endpoint.document_url == f"http://{host}/center/capabilities.json"
    assert endpoint.socket_url == f"ws://{host}/center/bws/v1-alpha/game"


async def test_discovered_socket_of_a_nested_bot_with_custom_api_root_plays(arena: Arena) -> None:
    endpoint = await discover(f"{arena.url}/nested/deeper/engine", arena.session)
    assert endpoint.socket_url == (
        f"ws://127.0.0.1:{arena.port}/nested/deeper/engine/api/htttx/v1/game"
    )
    assert endpoint.turn_url == f"{arena.url}/nested/deeper/engine/api/htttx/v1/turn"
    answer = await play_one_move_over_the_socket(arena.session, endpoint.socket_url)
    assert answer["type"] == "move_response"


async def test_discovered_stateless_only_bot_answers_at_its_turn_url(arena: Arena) -> None:
    endpoint = await discover(f"{arena.url}/stateless-center", arena.session)
    assert (endpoint.transport, endpoint.socket_url) == ("stateless", None)
    assert endpoint.name == "StatelessCenter"
    assert endpoint.turn_url is not None
    body = {"board": {"to_move": "o", "cells": [{"q": 0, "r": 0, "p": "x"}]}}
    async with arena.session.post(endpoint.turn_url, json=body) as response:
        assert response.status == 200
        answer = await response.json()
    assert len(answer["move"]["pieces"]) == 2


async def test_stateless_only_document(arena: Arena) -> None:
    endpoint = await discover(f"{arena.url}/stateless-only", arena.session)
    assert endpoint.transport == "stateless"
    assert endpoint.turn_url == f"{arena.url}/stateless-only/stateless/v1-alpha/turn"
    assert endpoint.name == "Lone"


async def test_document_of_exactly_the_size_cap_is_accepted(arena: Arena) -> None:
    endpoint = await discover(f"{arena.url}/exact", arena.session)
    assert endpoint.transport == "stateless"


# ---------------------------------------------------------------- failures

Refusal = TypeVar("Refusal", bound=DiscoveryError)


async def refusal(arena: Arena, path: str, error: type[Refusal], **options: Any) -> Refusal:
    """What ``discover`` raises for the arena's bot at ``path`` (``options`` its
    keywords): an ``error``, or the test fails."""
    with pytest.raises(error) as caught:
        await discover(f"{arena.url}/{path}", arena.session, **options)
    return caught.value


async def test_connection_refused() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago, now closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with aiohttp.ClientSession() as session:
        with pytest.raises(BotUnreachable) as caught:
            await discover(f"http://127.0.0.1:{port}", session)
    assert str(caught.value) == f"http://127.0.0.1:{port}/capabilities.json: connection refused"


async def test_redirect_is_not_followed(arena: Arena) -> None:
    refused = await refusal(arena, "redirect", BotRedirected)
    assert str(refused) == (
        f"{arena.url}/redirect/capabilities.json: answered 302 redirect to "
        "/target/capabilities.json; redirects are not followed, so name the bot by its "
        "final address"
    )
    assert not arena.state.redirect_followed


async def test_silent_bot_times_out(arena: Arena) -> None:
    refused = await refusal(arena, "silent", BotTimedOut, timeout=SHORT)
    assert str(refused) == (
        f"{arena.url}/silent/capabilities.json: no complete answer within 0.3 s"
    )
    assert isinstance(refused, BotUnreachable)


async def test_bot_stalling_mid_document_times_out(arena: Arena) -> None:
    with pytest.raises(BotTimedOut, match=r"within 0.3 s \(got 9 bytes so far\)$"):
        await discover(f"{arena.url}/stalls", arena.session, timeout=SHORT)


async def test_http_error_status(arena: Arena) -> None:
    refused = await refusal(arena, "error", BotHttpError)
    assert str(refused) == (
        f"{arena.url}/error/capabilities.json: answered HTTP 500 Internal Server Error, "
        "expected 200 with the capabilities document"
    )


async def test_not_found_hints_at_the_base_url(arena: Arena) -> None:
    with pytest.raises(BotHttpError, match=r"404 Not Found.*is this the bot's base URL"):
        await discover(f"ws://127.0.0.1:{arena.port}/center/bws/v1-alpha/game", arena.session)


async def test_document_declared_over_the_cap_is_refused_by_its_length(arena: Arena) -> None:
    refused = await refusal(arena, "declared-huge", CapabilitiesTooLarge)
    assert str(refused) == (
        f"{arena.url}/declared-huge/capabilities.json: capabilities.json is 300 KiB, "
        "over the 256 KiB limit"
    )


async def test_streamed_document_is_cut_at_the_cap(arena: Arena) -> None:
    refused = await refusal(arena, "huge", CapabilitiesTooLarge)
    assert str(refused) == (
        f"{arena.url}/huge/capabilities.json: capabilities.json is over the 256 KiB limit "
        "(stopped reading there)"
    )
    assert isinstance(refused, BadCapabilities)
    # Not read to the end: the server never got to send most of it.
    assert arena.state.chunks_sent < HUGE_CHUNKS


async def test_smaller_cap(arena: Arena) -> None:
    with pytest.raises(CapabilitiesTooLarge, match="over the 100 bytes limit"):
        await discover(f"{arena.url}/center", arena.session, max_bytes=100)


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("html", "invalid capabilities document: not valid JSON: "),
        ("list", "invalid capabilities document: expected a JSON object, got a list"),
        (
            "invalid",
            "invalid capabilities document: "
            "basic_websocket.versions.v1-alpha.free_setup: expected true or false, got 'yes'",
        ),
    ],
)
async def test_bad_documents_are_refused_with_the_problem(
    arena: Arena, path: str, problem: str
) -> None:
    refused = await refusal(arena, path, BadCapabilities)
    assert str(refused).startswith(f"{arena.url}/{path}/capabilities.json: {problem}")


async def test_bot_declaring_no_usable_protocol(arena: Arena) -> None:
    refused = await refusal(arena, "neither", NoUsableProtocol)
    assert str(refused) == (
        f"{arena.url}/neither/capabilities.json: declares neither basic_websocket v1-alpha "
        "nor stateless v1-alpha, so the bot cannot be seated (it declares basic_websocket v2)"
    )


async def test_api_root_pointing_to_another_host_is_refused(arena: Arena) -> None:
    with pytest.raises(BadApiRoot, match=r"api_root 'http://169\.254\.169\.254/': expected a path"):
        await discover(f"{arena.url}/foreign-root", arena.session)


async def test_policy_is_checked_before_connecting(arena: Arena) -> None:
    no_loopback = AddressPolicy.parse("allow=public")
    refused = await refusal(arena, "center", ForbiddenAddress, policy=no_loopback)
    assert str(refused) == (
        f"{arena.url}/center/capabilities.json: 127.0.0.1: not allowed by the bot address "
        "policy (allowed: public); the server's operator allows bots on this machine with "
        "--allow loopback"
    )


async def test_policy_connector_refuses_names_at_connect_time(arena: Arena) -> None:
    # What closes the DNS-rebinding gap: the connector checks what it connects to.
    no_loopback = AddressPolicy.parse("allow=public")
    async with aiohttp.ClientSession(connector=no_loopback.connector()) as session:
        with pytest.raises(ForbiddenAddress, match=r"^localhost resolves to .*: not allowed"):
            async with session.get(f"http://localhost:{arena.port}/center/capabilities.json"):
                pass


async def test_bad_bot_url_is_refused_before_any_request(arena: Arena) -> None:
    with pytest.raises(BadBotUrl, match="unsupported scheme 'ftp'"):
        await discover("ftp://127.0.0.1/", arena.session)


@pytest.mark.parametrize(("timeout", "max_bytes"), [(0.0, 1), (1.0, 0)])
async def test_discover_checks_its_own_arguments(
    arena: Arena, timeout: float, max_bytes: int
) -> None:
    with pytest.raises(ValueError, match="must be"):
        await discover(arena.url, arena.session, timeout=timeout, max_bytes=max_bytes)


def test_error_classes_are_one_per_cause() -> None:
    causes = [
        BadBotUrl,
        ForbiddenAddress,
        BotUnreachable,
        BotTimedOut,
        BotRedirected,
        BotHttpError,
        BadCapabilities,
        CapabilitiesTooLarge,
        BadApiRoot,
        NoUsableProtocol,
    ]
    assert len(set(causes)) == len(causes)
    assert all(issubclass(cause, DiscoveryError) for cause in causes)
