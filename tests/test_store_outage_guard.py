"""The store out of reach: a route that meets it answers 503 with ``Retry-After``
(``game.store_outage_guard``), and the same route answers again once the store is back.

The outage is real: the game server reaches the suite's PostgreSQL (tests/postgres.py)
through a TCP relay of the test's own, on loopback, which the test cuts (every
connection closed, the port refusing new ones) and then opens again on the same port.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator

import aiohttp
import pytest

from game.server import create_app, serving
from game.store_outage_guard import RETRY_AFTER_SECONDS
from tests.postgres import PostgresCluster
from tests.test_openapi_contract import Client, Contract

TIMEOUT = aiohttp.ClientTimeout(total=60)


class PostgresRelay:
    """A TCP port on loopback that carries each connection to PostgreSQL's unix
    socket, until ``cut``; ``restore`` listens on the same port again."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def restore(self) -> None:
        self._server = await asyncio.start_server(self._carry, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        await self._server.wait_closed()
        self._server = None

    async def _carry(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        try:
            server_in, server_out = await asyncio.open_unix_connection(self.socket_path)
        except OSError:
            client_out.close()
            return
        self._writers |= {client_out, server_out}

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.close()

        try:
            await asyncio.gather(pipe(client_in, server_out), pipe(server_in, client_out))
        finally:
            self._writers -= {client_out, server_out}


@pytest.fixture
async def relay(postgres_cluster: PostgresCluster) -> AsyncIterator[tuple[PostgresRelay, str]]:
    """A relay to a new database of the suite's PostgreSQL, and the store URL through it."""
    url = postgres_cluster.new_database()
    name = url.split("@/", 1)[1].split("?", 1)[0]
    socket_path = f"{postgres_cluster.socket_dir}/.s.PGSQL.{PostgresCluster.PORT}"
    relay = PostgresRelay(socket_path)
    await relay.restore()
    try:
        yield relay, f"postgresql+asyncpg://postgres@127.0.0.1:{relay.port}/{name}"
    finally:
        with contextlib.suppress(AssertionError):
            await relay.cut()


async def test_a_route_meeting_the_store_out_of_reach_answers_503_then_200_once_it_is_back(
    relay: tuple[PostgresRelay, str], caplog: pytest.LogCaptureFixture
) -> None:
    proxy, db_url = relay
    app = create_app(db_url=db_url, host_example_bots=False)
    async with serving(app) as server, aiohttp.ClientSession(timeout=TIMEOUT) as http:

        async def get(path: str) -> tuple[int, dict[str, object], str | None]:
            async with http.get(f"{server.url}{path}") as response:
                return response.status, await response.json(), response.headers.get("Retry-After")

        status, page, _ = await get("/games")
        assert status == 200 and page["items"] == []
        await proxy.cut()
        with caplog.at_level(logging.WARNING, logger="game.store_outage_guard"):
            for _ in range(3):  # logged once, not once a request
                status, answer, retry_after = await get("/games")
                assert status == 503, answer
                assert "store is out of reach" in str(answer["detail"])
                assert retry_after == str(RETRY_AFTER_SECONDS)
        lines = [r.getMessage() for r in caplog.records if r.name == "game.store_outage_guard"]
        assert len(lines) == 1 and lines[0].startswith("GET /games answered 503"), lines
        # A route that does not need the store still answers.
        async with http.get(f"{server.url}/health") as response:
            assert response.status == 200
        await proxy.restore()
        status, page, _ = await get("/games")
        assert status == 200 and page["items"] == []


async def test_every_route_answering_503_for_the_store_out_of_reach_documents_it(
    relay: tuple[PostgresRelay, str],
) -> None:
    # The served document says which answers a generated client must expect: with the
    # store cut, every GET route (and a new game, which checks its seats' names in the
    # store) answers as documented, the 503's Retry-After included.
    proxy, db_url = relay
    app = create_app(db_url=db_url, host_example_bots=False)
    async with serving(app) as server, aiohttp.ClientSession(timeout=TIMEOUT) as http:
        async with http.get(f"{server.url}/openapi.json") as response:
            document = await response.json()
        client = Client(server.url, http, Contract(document))
        await proxy.cut()
        answered: dict[str, int] = {}
        for path, item in document["paths"].items():
            if "get" in item:
                ids = {name: "nope" for name in re.findall(r"{(\w+)}", path)}
                answered[path], _ = await client.call("get", path, ids=ids)
        humans = {"player_x": {"type": "human"}, "player_o": {"type": "human"}}
        answered["/game/new"], _ = await client.call("post", "/game/new", body=humans)
        await proxy.restore()
    assert client.problems == []
    assert answered["/games"] == answered["/game/new"] == 503, answered
    assert all(
        "Retry-After" in item[method]["responses"]["503"].get("headers", {})
        for path, item in document["paths"].items()
        for method in item
        if path != "/health"
    )
