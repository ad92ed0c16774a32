"""The bot address policy's ``self`` (this server's own listening address and port) and
the game server's default policy by where it listens.

A server listening on a public address must not be made to fetch ``capabilities.json``
from any port of its own loopback (a database there): that is a port scan of its
machine by anyone who may create a game or register a bot. Its own hosted bots
(``/bots/...`` on its own port) still play.

Nothing here binds an address other than 127.0.0.1: a server "on 0.0.0.0" is one on
127.0.0.1 given the policy ``htttx-server --host 0.0.0.0`` makes, as a server bound to
0.0.0.0 takes connections at 127.0.0.1 on its port.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from game.address_policy import AddressPolicy, own_endpoints
from game.discovery_errors import ForbiddenAddress, PolicySyntaxError
from game.ladder_host import ladder_bots_refusal
from game.serve import effective_policy, log_policy
from game.server import create_app, serving
from game.startup_checks import listen
from models import GameRecord
from tests.loopback_app import serving_app

TIMEOUT = 60.0  # only against hangs
ON_ANY = AddressPolicy.parse("allow=self;deny=").serving_at("0.0.0.0", 8001)

# --------------------------------------------------------------------- self


@pytest.mark.parametrize(
    ("address", "port", "allowed"),
    [
        ("127.0.0.1", 8001, True),
        ("127.0.0.2", 8001, True),  # 0.0.0.0 takes connections at every 127.x address
        ("::ffff:127.0.0.1", 8001, True),  # reaches 127.0.0.1:8001
        ("127.0.0.1", 6379, False),
        ("::ffff:127.0.0.1", 6379, False),
        ("127.0.0.1", None, False),  # no port, no self
        ("::1", 8001, False),  # 0.0.0.0 is IPv4 only
        ("10.0.0.1", 8001, False),  # not guessed as one of the machine's own
    ],
)
def test_self_is_the_servers_own_address_and_port(
    address: str, port: int | None, allowed: bool
) -> None:
    assert (ON_ANY.problem(address, port) is None) is allowed


def test_a_server_on_one_address_is_itself_at_that_address_and_port_only() -> None:
    policy = AddressPolicy.parse("allow=self;deny=").serving_at("203.0.113.5", 443)
    assert policy.problem("203.0.113.5", 443) is None
    assert policy.problem("203.0.113.5", 80) is not None
    assert policy.problem("203.0.113.6", 443) is not None
    assert policy.problem("127.0.0.1", 443) is not None
    ipv6 = AddressPolicy.parse("allow=self;deny=").serving_at("::", 8001)
    assert ipv6.problem("::1", 8001) is None
    assert ipv6.problem("127.0.0.1", 8001) is not None  # bound IPv6 only


def test_self_parses_and_prints_back() -> None:
    policy = AddressPolicy.parse("allow=self,public;deny=metadata")
    assert str(policy) == "allow=self,public;deny=metadata"
    assert AddressPolicy.parse(str(policy)) == policy
    assert policy.describe() == "allow=self,public;deny=metadata (self: nothing yet)"
    own = policy.serving_at("0.0.0.0", 8001).serving_at("127.0.0.1", 9000)
    assert own.describe() == (
        "allow=self,public;deny=metadata (self: port 8001 of 127.0.0.0/8, port 9000 of 127.0.0.1)"
    )
    assert str(own) == str(policy)  # where it listens is not configuration
    assert AddressPolicy.parse("allow=SELF").allow == ("self",)
    with pytest.raises(PolicySyntaxError, match=r"public, self$"):
        AddressPolicy.parse("allow=myself")


def test_deny_self_wins_over_an_allowed_loopback() -> None:
    policy = AddressPolicy.parse("allow=loopback;deny=self").serving_at("127.0.0.1", 8001)
    assert policy.problem("127.0.0.1", 8002) is None
    assert policy.problem("127.0.0.1", 8001) == "denied by the bot address policy (self)"


def test_a_refused_loopback_bot_is_told_what_is_allowed_and_how_to_allow_it() -> None:
    with pytest.raises(ForbiddenAddress) as caught:
        ON_ANY.check_address("127.0.0.1", 6379)
    assert str(caught.value) == (
        "127.0.0.1: not allowed by the bot address policy (allowed: self; self is this "
        "server's own port 8001 of 127.0.0.0/8); the server's operator allows bots on this "
        "machine with --allow loopback"
    )
    # Another address is not the operator's machine: no word of loopback.
    assert ON_ANY.problem("10.0.0.1", 80) == (
        "not allowed by the bot address policy (allowed: self; self is this server's own "
        "port 8001 of 127.0.0.0/8)"
    )


@pytest.mark.parametrize(("address", "port"), [("localhost", 80), ("127.0.0.1", 70000)])
def test_own_endpoints_need_a_literal_ip_and_a_port(address: str, port: int) -> None:
    with pytest.raises(ValueError):
        own_endpoints(address, port)


# -------------------------------------------------- the command line's default

LOOPBACK_DEFAULT = "allow=loopback,public;deny=metadata,link-local"
EXPOSED_DEFAULT = "allow=self,public;deny=metadata,link-local"


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", LOOPBACK_DEFAULT),
        ("127.0.0.2", LOOPBACK_DEFAULT),
        ("::1", LOOPBACK_DEFAULT),
        ("0.0.0.0", EXPOSED_DEFAULT),
        ("::", EXPOSED_DEFAULT),
        ("192.168.1.5", EXPOSED_DEFAULT),
        ("203.0.113.5", EXPOSED_DEFAULT),
    ],
)
def test_the_command_lines_default_policy_follows_where_it_listens(
    host: str, expected: str
) -> None:
    policy = effective_policy("", host, 8001)
    assert str(policy) == expected
    assert policy.own == own_endpoints(host, 8001)
    # The ladder's hosted bots (a loopback port of the server's own) are let in either way.
    assert ladder_bots_refusal(policy) is None


def test_a_list_left_out_keeps_the_default_for_where_it_listens() -> None:
    assert str(effective_policy("deny=", "0.0.0.0", 8001)) == "allow=self,public;deny="
    assert str(effective_policy("deny=", "127.0.0.1", 8001)) == "allow=loopback,public;deny="
    opened = effective_policy("allow=loopback,public", "0.0.0.0", 8001)
    assert opened.problem("127.0.0.1", 6379) is None  # what --allow loopback is for
    assert ladder_bots_refusal(effective_policy("allow=public", "0.0.0.0", 8001)) is not None


def test_the_effective_policy_is_logged_in_one_line(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="game.serve"):
        log_policy("", "0.0.0.0", 8001)
        log_policy("", "127.0.0.1", 8001)
        log_policy("allow=any", "0.0.0.0", 8001)
    exposed, local, given = (record.getMessage() for record in caplog.records)
    assert exposed == (
        f"bot address policy: {EXPOSED_DEFAULT} (self: port 8001 of 127.0.0.0/8); the "
        "default for a server listening on 0.0.0.0, not loopback only: bots on other "
        "ports of this machine are refused; --allow loopback allows them"
    )
    assert local == (
        f"bot address policy: {LOOPBACK_DEFAULT}; the default for a server listening on "
        "loopback (127.0.0.1)"
    )
    assert given == "bot address policy: allow=any;deny=metadata,link-local; given: 'allow=any'"


# ----------------------------------------------------- a server, real sockets


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def exposed_listener() -> Iterator[tuple[socket.socket, AddressPolicy]]:
    """A listening socket, and the policy ``htttx-server --host 0.0.0.0`` would give a
    server on its port (see the module docstring)."""
    listener = listen("127.0.0.1", 0)
    try:
        port = int(listener.getsockname()[1])
        policy = effective_policy("", "0.0.0.0", port)
        assert policy.problem("127.0.0.1", port) is None
        yield listener, policy
    finally:
        listener.close()


async def test_an_exposed_server_refuses_loopback_bots_but_plays_its_own(
    tmp_path: Path,
) -> None:
    hits: list[str] = []

    async def capabilities(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.json_response({"basic_websocket": {"versions": {"v1-alpha": {}}}})

    neighbour = web.Application()  # a service on another port of the machine
    neighbour.router.add_get("/capabilities.json", capabilities)
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    with exposed_listener() as (listener, policy):
        async with (
            serving_app(neighbour) as open_url,
            serving(create_app(db_url=db_url, policy=policy), sock=listener) as server,
            aiohttp.ClientSession(timeout=timeout) as http,
        ):
            base = server.url

            async def post(path: str, body: dict[str, Any]) -> tuple[int, Any]:
                async with http.post(base + path, json=body) as response:
                    return response.status, await response.json()

            def game(bot_url: str) -> dict[str, Any]:
                hosted = {"type": "bot", "bot_url": f"{base}/bots/random"}
                return {"player_x": {"type": "bot", "bot_url": bot_url}, "player_o": hosted}

            closed_url = f"http://127.0.0.1:{closed_port()}"
            details = []
            for url in (open_url, closed_url):
                status, answer = await post("/game/new", game(url))
                assert status == 422, answer
                assert answer["detail"].startswith("player_x: ")
                details.append(answer["detail"].removeprefix("player_x: "))
                status, answer = await post("/bots", {"name": "probe", "url": url})
                assert status == 422, answer
                assert answer["detail"] == details[-1]
            # The same answer for an open port and a closed one: nothing was dialled.
            ports = re.compile(r"127\.0\.0\.1:\d+/")
            assert ports.sub("PORT/", details[0]) == ports.sub("PORT/", details[1])
            assert details[0] == (
                f"{open_url}/capabilities.json: 127.0.0.1: not allowed by the bot address "
                f"policy (allowed: self,public; self is this server's own port {server.port} "
                "of 127.0.0.0/8); the server's operator allows bots on this machine with "
                "--allow loopback"
            )
            assert hits == []

            status, created = await post("/game/new", game(f"{base}/bots/threat"))
            assert status == 200, created
            async with http.get(f"{base}/games/{created['game_id']}?wait={TIMEOUT}") as response:
                record = GameRecord.model_validate(await response.json())
            assert record.result is not None and record.moves


def test_the_listening_address_is_a_literal_ip() -> None:
    # getsockname gives the address the server's `self` is made of.
    with exposed_listener() as (listener, _policy):
        address = listener.getsockname()[0]
    assert ipaddress.ip_address(address).is_loopback
