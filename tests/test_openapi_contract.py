"""The served ``/openapi.json`` (``game.openapi``) against the app that serves it, as a
client generated from the document (openapi-generator, openapi-python-client) meets it:
the document is valid OpenAPI 3.1 (openapi-spec-validator); every route the app serves
is in it with its methods and path parameters, and nothing else is; each operation takes
exactly the query parameters documented (the server names the ones it takes when it
refuses another); and every answer of a real request, one or more to each documented
operation of a server on loopback with a real SQLite file, has a documented status and
fits the documented schema (``{"detail": ...}`` for an error).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate as validate_openapi
from starlette.routing import Route

from game.server import create_app
from tests.test_server import arena

Json = dict[str, Any]
#: The methods OpenAPI has a field for (HEAD, which Starlette adds to each GET, is left out).
_OPERATIONS = ("get", "put", "post", "delete", "options", "patch", "trace")
_PARAMETER = re.compile(r"{(\w+)}")


@dataclass
class Contract:
    """The document, and every real answer checked against it (``answered`` keeps
    which operations were asked, so a test can say none was left out)."""

    document: Json
    answered: set[tuple[str, str]] = field(default_factory=set)

    def problems(
        self, method: str, path: str, status: int, media_type: str, body: Any
    ) -> list[str]:
        """Where the answer ``status`` with ``body`` to ``method path`` (a documented
        path template) breaks the document."""
        self.answered.add((method, path))
        operation = self.document["paths"][path][method]
        response = operation["responses"].get(str(status))
        if response is None:
            return [f"{method.upper()} {path}: {status} is not documented ({body!r:.200})"]
        if "$ref" in response:
            response = self._resolve(response["$ref"])
        content = response.get("content")
        if content is None:
            return [] if body is None else [f"{method.upper()} {path} {status}: a body"]
        if media_type not in content:
            return [f"{method.upper()} {path} {status}: {media_type} is not {sorted(content)}"]
        schema = content[media_type].get("schema")
        if schema is None:
            return []
        validator = OAS31Validator({"components": self.document["components"], **schema})
        return [
            f"{method.upper()} {path} {status}: {error.json_path}: {error.message}"
            for error in validator.iter_errors(body)
        ]

    def _resolve(self, ref: str) -> Json:
        target: Any = self.document
        for part in ref.removeprefix("#/").split("/"):
            target = target[part]
        assert isinstance(target, dict)
        return target


@dataclass
class Client:
    """Requests to the server whose every answer is checked against its document."""

    base: str
    http: aiohttp.ClientSession
    contract: Contract
    problems: list[str] = field(default_factory=list)

    async def call(
        self,
        method: str,
        template: str,
        *,
        ids: dict[str, str] | None = None,
        query: str = "",
        body: Any = None,
        token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        path = template.format(**(ids or {}))
        sent = dict(headers or {})
        if token is not None:
            sent["authorization"] = f"Bearer {token}"
        data = body if isinstance(body, bytes) else None if body is None else json.dumps(body)
        if data is not None:
            sent["content-type"] = "application/json"
        async with self.http.request(
            method, f"{self.base}{path}{'?' if query else ''}{query}", data=data, headers=sent
        ) as response:
            media_type = response.content_type
            text = await response.text()
        answer = json.loads(text) if media_type == "application/json" else (text or None)
        self.problems += self.contract.problems(
            method.lower(), template, response.status, media_type, answer
        )
        return response.status, answer


def _served_operations() -> dict[str, set[str]]:
    """The app's HTTP routes in the schema (not the web page's, the sockets nor the
    hosted bots' mounts, which are the HTTTX Bot API's): path -> methods."""
    served: dict[str, set[str]] = {}
    for route in create_app(host_example_bots=True).routes:
        if isinstance(route, Route) and route.include_in_schema:
            methods = {m.lower() for m in route.methods or ()} & set(_OPERATIONS)
            served.setdefault(route.path, set()).update(methods)
    return served


async def test_the_served_document_is_valid_openapi_3_1(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        status, document = await a.get_json("/openapi.json")
    assert status == 200 and document["openapi"].startswith("3.1")
    validate_openapi(document)  # raises, naming what is wrong


async def test_every_served_route_is_documented_with_its_methods_and_path_parameters(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a:
        _, document = await a.get_json("/openapi.json")
    documented = {
        path: {method for method in item if method in _OPERATIONS}
        for path, item in document["paths"].items()
    }
    assert documented == _served_operations()
    # A generated client names each function after its operationId: one each, unique.
    operation_ids = [
        item[method]["operationId"]
        for path, item in document["paths"].items()
        for method in documented[path]
    ]
    assert len(set(operation_ids)) == len(operation_ids) == sum(map(len, documented.values()))
    for path, item in document["paths"].items():
        for method in documented[path]:
            declared = item[method].get("parameters", [])
            in_path = {p["name"] for p in declared if p["in"] == "path"}
            assert in_path == set(_PARAMETER.findall(path)), (method, path)
            assert all(p["required"] for p in declared if p["in"] == "path"), (method, path)


async def test_each_operation_takes_the_query_parameters_documented_and_no_other(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a:
        _, document = await a.get_json("/openapi.json")
        contract = Contract(document)
        client = Client(a.base, a.http, contract)
        taken: dict[tuple[str, str], set[str]] = {}
        for path, item in document["paths"].items():
            for method in set(item) & set(_OPERATIONS):
                ids = {name: "nope" for name in _PARAMETER.findall(path)}
                status, answer = await client.call(method, path, ids=ids, query="zz_unknown=1")
                assert status == 422, (method, path, answer)
                names = answer["detail"].rsplit("this route takes ", 1)[1]
                taken[method, path] = set() if names == "none" else set(names.split(", "))
    assert client.problems == []
    assert taken == {
        (method, path): {
            p["name"] for p in item[method].get("parameters", []) if p["in"] == "query"
        }
        for path, item in document["paths"].items()
        for method in set(item) & set(_OPERATIONS)
    }


async def _finished(client: Client, template: str, ids: dict[str, str]) -> Json:
    """The view at ``template`` once its status is no longer running (bounded against
    hangs only: each of the few games is between quick bots)."""
    async with asyncio.timeout(120):
        while True:
            status, view = await client.call("get", template, ids=ids)
            assert status == 200, view
            if view["status"] != "running":
                finished: Json = view
                return finished
            await asyncio.sleep(0.1)


async def test_every_documented_operation_answers_what_the_document_says(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        _, document = await a.get_json("/openapi.json")
        contract = Contract(document)
        client = Client(a.base, a.http, contract)
        call = client.call

        # A game between two hosted bots, to its end (the long poll).
        threat, random_bot = a.bot("threat"), a.bot("random")
        status, created = await call(
            "post", "/game/new", body={"player_x": threat, "player_o": random_bot}
        )
        assert status == 200, created
        game = {"game_id": created["game_id"]}
        status, record = await call("get", "/games/{game_id}", ids=game, query="wait=60")
        assert status == 200 and record["result"] is not None, record
        await call("get", "/games/{game_id}/notation", ids=game, query="download=1")
        await call("get", "/games", query="limit=5&status=finished")
        await call("get", "/games/{game_id}", ids={"game_id": "nope"})
        await call("get", "/games/{game_id}/notation", ids={"game_id": "nope"})
        await call("get", "/health")
        await call("post", "/game/new", body={"player_x": {"type": "robot"}})

        # A bot registered, changed, listed, rated (none yet) and retired.
        url = f"{a.base}/bots/threat"
        status, registered = await call("post", "/bots", body={"name": "Hexa", "url": url})
        assert status == 201, registered
        hexa, owner = {"name": "Hexa"}, registered["owner_token"]
        await call("post", "/bots", body={"name": "hexa", "url": url})  # taken: 409
        await call("get", "/bots")
        await call("get", "/bots/{name}", ids=hexa)
        await call("get", "/bots/{name}/ratings", ids=hexa, query="limit=3")
        await call("get", "/leaderboard", query="kind=bot")
        await call("patch", "/bots/{name}", ids=hexa, body={"description": "d"}, token=owner)
        await call("patch", "/bots/{name}", ids=hexa, body={"description": "d"}, token="x")
        await call("patch", "/bots/{name}", ids=hexa, body={"description": "d"})
        await call("patch", "/bots/{name}", ids=hexa, body=b" " * 20_000, token=owner)  # 413
        await call("get", "/bots/{name}", ids={"name": "nobody"})

        # A tournament stopped, shown, resumed and stopped again; one left to finish.
        entrants = [{"name": n, "url": f"{a.base}/bots/{n}"} for n in ("threat", "random")]
        long_one = {"bots": entrants, "rounds": 50, "openings": "none"}
        status, started = await call("post", "/tournaments", body=long_one)
        assert status == 201, started
        tournament, control = {"tournament_id": started["tournament_id"]}, started["control_token"]
        await call("post", "/tournaments/{tournament_id}/stop", ids=tournament, token=control)
        await call("post", "/tournaments/{tournament_id}/stop", ids=tournament, token=control)
        await call("post", "/tournaments/{tournament_id}/resume", ids=tournament, token="x")
        await call("post", "/tournaments/{tournament_id}/resume", ids=tournament, token=control)
        await call("post", "/tournaments/{tournament_id}/stop", ids=tournament, token=control)
        short = {"bots": entrants, "openings": "none", "match": {"turn_limit": 80}}
        status, started = await call("post", "/tournaments", body=short)
        assert status == 201, started
        finished = {"tournament_id": started["tournament_id"]}
        await _finished(client, "/tournaments/{tournament_id}", finished)
        await call("get", "/tournaments/{tournament_id}/games", ids=finished, query="limit=1")
        await call("get", "/tournaments", query="limit=5")
        await call("get", "/tournaments/{tournament_id}", ids={"tournament_id": "nope"})
        await call("post", "/tournaments", body={"bots": []})

        # A series to its end, then stopped (409: finished) and resumed (409).
        series_request = {
            "player_a": {"name": "a", "bot_url": threat["bot_url"]},
            "player_b": {"name": "b", "bot_url": random_bot["bot_url"]},
            "best_of": 1,
            "openings": "none",
        }
        status, started = await call("post", "/series", body=series_request)
        assert status == 201, started
        series, control = {"series_id": started["series_id"]}, started["control_token"]
        await _finished(client, "/series/{series_id}", series)
        await call("post", "/series/{series_id}/stop", ids=series, token=control)
        await call("post", "/series/{series_id}/resume", ids=series, token=control)
        await call("get", "/series", query="limit=5")
        await call("get", "/series/{series_id}", ids={"series_id": "nope"})

        # A challenge opened, seen, accepted; another opened and cancelled.
        status, opened = await call("post", "/challenges", body={"name": "ann"})
        assert status == 201, opened
        ann, challenge = opened["player_token"], {"challenge_id": opened["challenge_id"]}
        await call("get", "/challenges/{challenge_id}", ids=challenge, query=f"token={ann}")
        accept = {"name": "bob"}
        await call("post", "/challenges/{challenge_id}/accept", ids=challenge, body=accept)
        await call("post", "/challenges/{challenge_id}/accept", ids=challenge, body=accept)
        status, opened = await call(
            "post", "/challenges", body={"name": "ann", "player_token": ann}
        )
        assert status == 201, opened
        other = {"challenge_id": opened["challenge_id"]}
        await call("delete", "/challenges/{challenge_id}", ids=other, query="token=wrong")
        await call("delete", "/challenges/{challenge_id}", ids=other, query="tokn=x")  # 422
        await call("delete", "/challenges/{challenge_id}", ids=other, query=f"token={ann}")
        await call("get", "/challenges/{challenge_id}", ids={"challenge_id": "nope"})

        # The ladder and the cluster of a server that runs neither.
        await call("get", "/ladder")
        await call("post", "/ladder/pause")
        await call("post", "/ladder/resume")
        await call("get", "/cluster", query="games=true")
        await call("get", "/cluster/games/{game_id}/setup", ids=game)

        # Last: the bot retired (its games are over).
        await call("delete", "/bots/{name}", ids=hexa, token=owner)
        await call("delete", "/bots/{name}", ids=hexa, token=owner)  # retired already: 409
    assert client.problems == []
    every = {
        (method, path)
        for path, item in document["paths"].items()
        for method in item
        if method in _OPERATIONS
    }
    assert every - contract.answered == set()


async def test_every_changing_operation_documents_the_refusal_of_another_sites_page(
    tmp_path: Path,
) -> None:
    # game.cross_site answers 403 to a browser's request from another site's page, on
    # every route but GET, HEAD and OPTIONS, before the route sees it.
    async with arena(tmp_path, host_example_bots=False) as a:
        _, document = await a.get_json("/openapi.json")
        client = Client(a.base, a.http, Contract(document))
        for path, item in document["paths"].items():
            for method in set(item) & (set(_OPERATIONS) - {"get"}):
                ids = {name: "nope" for name in _PARAMETER.findall(path)}
                status, _ = await client.call(
                    method, path, ids=ids, body={}, headers={"sec-fetch-site": "cross-site"}
                )
                assert status == 403, (method, path)
    assert client.problems == []


async def test_the_per_client_cap_refusing_a_tournament_or_series_is_documented(
    tmp_path: Path,
) -> None:
    # One live game per client: a tournament of concurrency 2, a series and a stopped
    # tournament's resume while a game is live are each a 429.
    async with arena(tmp_path, max_games_per_client=1) as a:
        _, document = await a.get_json("/openapi.json")
        client = Client(a.base, a.http, Contract(document))
        call = client.call
        entrants = [{"name": n, "url": f"{a.base}/bots/{n}"} for n in ("threat", "random")]
        long_one = {"bots": entrants, "rounds": 50, "openings": "none"}
        status, started = await call("post", "/tournaments", body=long_one)
        assert status == 201, started
        tournament, control = {"tournament_id": started["tournament_id"]}, started["control_token"]
        status, _ = await call("post", "/tournaments/{tournament_id}/stop", ids=tournament)
        assert status == 403  # not without its control token
        status, view = await call(
            "post", "/tournaments/{tournament_id}/stop", ids=tournament, token=control
        )
        assert status == 200, view
        humans = {"player_x": {"type": "human"}, "player_o": {"type": "human"}}
        status, created = await call("post", "/game/new", body=humans)
        assert status == 200, created
        answers = [
            await call(
                "post", "/tournaments/{tournament_id}/resume", ids=tournament, token=control
            ),
            await call("post", "/tournaments", body={**long_one, "concurrency": 2}),
            await call(
                "post",
                "/series",
                body={
                    "player_a": {"name": "a", "bot_url": f"{a.base}/bots/threat"},
                    "player_b": {"name": "b", "bot_url": f"{a.base}/bots/random"},
                    "best_of": 1,
                },
            ),
        ]
    assert [status for status, _ in answers] == [429, 429, 429], answers
    assert client.problems == []
