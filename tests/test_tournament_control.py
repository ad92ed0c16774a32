"""Who may stop and resume a tournament or a series: its creator, with the control token
that creating it answered, and the operator, with the server's API token; not a
stranger, even on an open arena (a server without an API token, as one that lets anyone
register bots must be). Over real sockets, with the server's hosted bots."""

from __future__ import annotations

import logging
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp

from game.secret_tokens import hash_token
from game.server import create_app, serving
from game.store import GameStore
from tests.test_tournaments import TIMEOUT, Arena, arena, free_port
from wire.tournaments import TournamentRequest

Json = dict[str, Any]
API_TOKEN = "operator-s3cret"


def endless(a: Arena) -> Json:
    """A tournament of two hosted bots that runs until it is stopped."""
    return {"bots": [a.bot("threat"), a.bot("random")], "rounds": 100_000, "openings": "none"}


def endless_series(a: Arena) -> Json:
    seat = {"type": "bot", "bot_url": f"{a.base}/bots/threat"}
    return {
        "player_a": {"name": "a", **seat},
        "player_b": {"name": "b", **seat},
        "best_of": 1001,
        "openings": "none",
    }


async def create_series(a: Arena, body: Json) -> str:
    status, created = await a.post("/series", body)
    assert status == 201, created
    a.tokens[created["series_id"]] = created["control_token"]
    return str(created["series_id"])


async def test_a_strangers_stop_is_refused_and_the_tournament_goes_on(tmp_path: Path) -> None:
    async with arena(tmp_path / "t.sqlite") as a:  # an open arena: no API token
        tournament_id = await a.create(endless(a))
        other = await a.create(endless(a))  # someone else's tournament, and its token
        stop, resume = (f"/tournaments/{tournament_id}/{action}" for action in ("stop", "resume"))
        for token in (None, "a guess", a.tokens[other]):
            status, answer = await a.post(stop, token=token)
            assert status == 403, answer
            assert answer["detail"] == (
                f"only the creator of tournament {tournament_id!r} may stop it: send "
                "'Authorization: Bearer <control_token>' (the control_token POST /tournaments "
                "answered with) or the server's API token"
            )
        _, seen = await a.get(f"/tournaments/{tournament_id}")
        view = await a.until(tournament_id, lambda view: view["games_done"] > seen["games_done"])
        assert view["status"] == "running"

        status, view = await a.post_as_creator(stop)
        assert status == 200 and view["status"] == "stopped", view
        status, answer = await a.post(resume)  # nor does a stranger resume it
        assert status == 403 and "may resume it" in answer["detail"], answer
        assert (await a.get(f"/tournaments/{tournament_id}"))[1]["status"] == "stopped"
        status, view = await a.post_as_creator(resume)
        assert status == 200 and view["status"] == "running", view
        for tournament in (tournament_id, other):
            assert (await a.post_as_creator(f"/tournaments/{tournament}/stop"))[0] == 200


async def test_a_series_is_stopped_and_resumed_by_its_creator_only(tmp_path: Path) -> None:
    async with arena(tmp_path / "s.sqlite") as a:
        series_id = await create_series(a, endless_series(a))
        # A series is a tournament too: the same rule on both routes.
        for path, kind in (
            (f"/series/{series_id}/stop", "series"),
            (f"/tournaments/{series_id}/stop", "tournament"),
        ):
            status, answer = await a.post(path)
            assert status == 403, answer
            assert f"only the creator of {kind} " in answer["detail"]
        assert (await a.get(f"/series/{series_id}"))[1]["status"] == "running"
        status, view = await a.post_as_creator(f"/series/{series_id}/stop")
        assert status == 200 and view["status"] == "stopped", view
        assert (await a.post(f"/series/{series_id}/resume"))[0] == 403
        status, view = await a.post_as_creator(f"/tournaments/{series_id}/resume")
        assert status == 200 and view["status"] == "running", view
        assert (await a.post_as_creator(f"/series/{series_id}/stop"))[0] == 200


async def test_the_api_token_still_stops_and_resumes_any_tournament(tmp_path: Path) -> None:
    async with arena(tmp_path / "t.sqlite", api_token=API_TOKEN) as a:
        status, created = await a.post("/tournaments", endless(a), token=API_TOKEN)
        assert status == 201, created
        tournament_id, control_token = created["tournament_id"], created["control_token"]
        stop, resume = (f"/tournaments/{tournament_id}/{action}" for action in ("stop", "resume"))
        for token in (None, "wrong"):
            status, answer = await a.post(stop, token=token)
            assert status == 403, answer
        status, view = await a.post(stop, token=API_TOKEN)  # the operator
        assert status == 200 and view["status"] == "stopped", view
        status, view = await a.post(resume, token=control_token)  # the creator, no API token
        assert status == 200 and view["status"] == "running", view
        assert (await a.post(stop, token=control_token))[0] == 200


@contextmanager
def every_log_line() -> Iterator[list[str]]:
    """Every line logged meanwhile, uvicorn's own (which do not reach the root) too."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Keep(logging.DEBUG)
    loggers = [logging.getLogger(name) for name in ("", "uvicorn", "uvicorn.access")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(level)


async def test_the_control_token_is_shown_once_and_only_its_hash_is_stored(
    tmp_path: Path,
) -> None:
    db = tmp_path / "t.sqlite"
    app = create_app(db_url=f"sqlite+aiosqlite:///{db}")
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with (
        serving(app, log_level="debug") as server,
        aiohttp.ClientSession(timeout=timeout) as http,
    ):
        # Caught from here: uvicorn sets its loggers up as the server starts.
        with every_log_line() as lines:
            a = Arena(server, http, f"sqlite+aiosqlite:///{db}")
            tournament_id = await a.create(endless(a))
            series_id = await create_series(a, endless_series(a))
            for path in (f"/tournaments/{tournament_id}", f"/series/{series_id}"):
                assert (await a.post_as_creator(path + "/stop"))[0] == 200
                assert (await a.post_as_creator(path + "/resume"))[0] == 200
            answers = []
            for path in (
                "/tournaments",
                f"/tournaments/{tournament_id}",
                f"/tournaments/{tournament_id}/games",
                f"/tournaments/{series_id}",
                "/series",
                f"/series/{series_id}",
                "/games",
            ):
                async with http.get(a.base + path) as response:
                    assert response.status == 200, path
                    answers.append(await response.text())
            for path in (f"/tournaments/{tournament_id}", f"/series/{series_id}"):
                assert (await a.post_as_creator(path + "/stop"))[0] == 200
    assert any("POST /tournaments" in line for line in lines)  # the log was caught
    for token in (a.tokens[tournament_id], a.tokens[series_id]):
        assert not any(token in answer for answer in answers)
        assert not any(token in line for line in lines)
        # The store has its hash, never the token (nor does any of its files).
        stored = b"".join(path.read_bytes() for path in tmp_path.glob("t.sqlite*"))
        assert token.encode() not in stored
    async with await GameStore.open(a.db_url) as store:
        for stored_id in (tournament_id, series_id):
            assert await store.tournaments.control_hash(stored_id) == hash_token(
                a.tokens[stored_id]
            )


async def test_a_tournament_from_before_control_tokens_is_controlled_as_before(
    tmp_path: Path,
) -> None:
    """A database of a server from before control tokens: its tournaments have none.
    They stay controlled as they were: by anyone on a server without an API token,
    with the API token on one that has it. (So is a tournament of htttx-tournament,
    created without one through its own server's director.)"""
    db, port = tmp_path / "old.sqlite", free_port()
    base = f"http://127.0.0.1:{port}"
    bots = [{"name": name, "url": f"{base}/bots/{name}"} for name in ("threat", "random")]
    request = TournamentRequest.model_validate(
        {"bots": bots, "rounds": 100_000, "openings": "none"}
    )
    tournament_id = uuid.uuid4().hex
    async with await GameStore.open(f"sqlite+aiosqlite:///{db}") as store:
        await store.tournaments.create(
            tournament_id,
            name="old",
            request_json=request.model_dump_json(),
            games_total=request.games,
            created_at=datetime.now(UTC),
        )
    connection = sqlite3.connect(db)
    try:
        with connection:  # as the old schema was: no table of control tokens
            connection.execute("DROP TABLE tournament_controls")
    finally:
        connection.close()

    stop, resume = (f"/tournaments/{tournament_id}/{action}" for action in ("stop", "resume"))
    async with arena(db, port) as a:  # opening the database adds the table
        _, view = await a.get(f"/tournaments/{tournament_id}")
        assert view["status"] == "interrupted", view  # it was running: the old server stopped
        status, view = await a.post(resume)
        assert status == 200 and view["status"] == "running", view
        assert (await a.post(stop))[0] == 200
    async with arena(db, port, api_token=API_TOKEN) as a:
        assert (await a.post(resume))[0] == 401
        assert (await a.post(resume, token=API_TOKEN))[0] == 200
        assert (await a.post(stop, token=API_TOKEN))[0] == 200
