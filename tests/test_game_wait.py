"""``GET /games/{game_id}?wait=S`` (``game.game_wait``): a long poll for a game's end,
over real sockets on 127.0.0.1, as ``tests/test_server.py`` runs the server.

Games that must stay running are held by a person who connects and never moves (the
stall limit is minutes), or are a record written straight into the server's store,
as another worker of a cluster (or a server that died) leaves one. Nothing is timed:
timeouts only stop a broken test from hanging, and a wait that should not happen is
shown by a game that is still running when the answer comes.
"""

from __future__ import annotations

import asyncio
import gc
import json
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from game.game_wait import MAX_WAIT_S
from game.server_state import _Runtime
from game.store import RecordStatus
from models import GameRecord, GameResult, Player, ResultReason
from tests.test_cluster import Cluster, workers
from tests.test_server import HUMAN_MATCH, Arena, arena, receive_type, stored

TIMEOUT = 60.0  # only against hangs

Json = dict[str, Any]


# ------------------------------------------------------------------- helpers


def _runtime(a: Arena) -> _Runtime:
    runtime: _Runtime = a.server.app.state.arena
    return runtime


async def _wait_json(a: Arena, game_id: str, query: str = "") -> tuple[int, Json]:
    async with a.http.get(f"{a.base}/games/{game_id}{query}") as response:
        return response.status, await response.json()


@asynccontextmanager
async def _person_game(a: Arena) -> AsyncIterator[tuple[str, aiohttp.ClientWebSocketResponse]]:
    """A game of a person (X) and RandomBot: its id and the person's socket, once the
    person is asked to move (the stall limit is minutes: the game waits for X)."""
    created = await a.new_game(
        {"player_x": {"type": "human"}, "player_o": a.bot("random"), "match_config": HUMAN_MATCH}
    )
    async with a.http.ws_connect(f"{a.ws_base}/ws?token={created['token_x']}") as person:
        await receive_type(person, "setup")
        await receive_type(person, "move_request")
        yield created["game_id"], person


@asynccontextmanager
async def _held_game(a: Arena) -> AsyncIterator[str]:
    """A game that stays running while the block runs: the person never moves."""
    async with _person_game(a) as (game_id, _person):
        yield game_id


async def _elsewhere(a: Arena, game_id: str) -> None:
    """A running game in the server's store that the server does not run itself, as a
    cluster's other worker, or a server that died, leaves it."""
    await _runtime(a).store.create_game(GameRecord(game_id=game_id))


async def _until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(TIMEOUT):
        while not condition():
            await asyncio.sleep(0.01)


class RawRequest:
    """One ``GET`` on a connection of its own, written now and read later, so a test can
    do things (stop the server, close the connection) while the server holds it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def send(cls, a: Arena, path: str) -> RawRequest:
        reader, writer = await asyncio.open_connection("127.0.0.1", a.server.port)
        writer.write(f"GET {path} HTTP/1.1\r\nhost: test\r\nconnection: close\r\n\r\n".encode())
        await writer.drain()
        return cls(reader, writer)

    @classmethod
    async def held(cls, a: Arena, path: str) -> tuple[RawRequest, set[asyncio.Task[Any]]]:
        """``send``, once the server holds the request (it has a task for it); with
        the tasks there were before."""
        before = asyncio.all_tasks()
        request = await cls.send(a, path)
        await _until(lambda: bool(asyncio.all_tasks() - before))
        return request, before

    async def answer(self) -> tuple[int, Json]:
        async with asyncio.timeout(TIMEOUT):
            raw = await self.reader.read()  # connection: close, so up to the end
        self.close()
        head, _, body = raw.partition(b"\r\n\r\n")
        return int(head.split()[1]), json.loads(body)

    def close(self) -> None:
        self.writer.close()


# ---------------------------------------------------------------- waiting


async def test_a_wait_answers_with_the_final_record_once_a_bot_game_ends(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        created = await a.new_game(
            {"player_x": a.bot("center"), "player_o": a.bot("random"), "name": "waited"}
        )
        game_id = created["game_id"]
        status, waited = await _wait_json(a, game_id, "?wait=60")
        _, page = await a.get_json("/games")
    assert status == 200 and waited["game_id"] == game_id and waited["result"] is not None
    # What the wait answered is what was committed: every move and the result.
    record, stored_status = await stored(a.db_url, game_id)
    assert stored_status is not RecordStatus.RUNNING
    assert GameRecord.model_validate(waited) == record and record.moves
    assert [item["status"] for item in page["items"]] == [stored_status.value]


@pytest.mark.parametrize("query", ["", "?wait=0", "?wait=0.0"])
async def test_no_wait_or_wait_0_answers_at_once_with_the_running_record(
    tmp_path: Path, query: str
) -> None:
    async with arena(tmp_path) as a, _held_game(a) as game_id:
        status, record = await _wait_json(a, game_id, query)
    # The game waits on a person who never moves: an answer while it runs came at once.
    assert status == 200 and record["game_id"] == game_id
    assert record["result"] is None and len(record["moves"]) == 1  # O's first move


async def test_a_wait_shorter_than_the_game_answers_with_the_running_record(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a, _held_game(a) as game_id:
        status, record = await _wait_json(a, game_id, "?wait=0.3")
        still = _runtime(a).manager.runs(game_id)
    assert status == 200 and record["game_id"] == game_id and still
    assert record["result"] is None and len(record["moves"]) == 1


async def test_a_wait_on_a_game_another_process_runs_answers_once_the_store_has_its_end(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a:
        await _elsewhere(a, "elsewhere")
        request, _ = await RawRequest.held(a, "/games/elsewhere?wait=60")
        result = GameResult(winner=Player.O, reason=ResultReason.WIN)
        await _runtime(a).store.finish_game("elsewhere", result, ended_at=datetime.now(UTC))
        status, record = await request.answer()
    assert status == 200 and record["game_id"] == "elsewhere"
    assert GameResult.model_validate(record["result"]) == result


async def test_a_wait_on_a_game_the_store_has_as_over_answers_after_one_status_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with arena(tmp_path) as a:
        store = _runtime(a).store
        await _elsewhere(a, "over")
        result = GameResult(winner=Player.X, reason=ResultReason.WIN)
        await store.finish_game("over", result, ended_at=datetime.now(UTC))
        reads: list[str] = []
        read_status = store.game_status

        async def counted(game_id: str) -> RecordStatus | None:
            reads.append(game_id)
            return await read_status(game_id)

        monkeypatch.setattr(store, "game_status", counted)
        status, record = await _wait_json(a, "over", "?wait=300")
    assert status == 200 and GameResult.model_validate(record["result"]) == result
    # Found and over in one read: nothing was left to wait for, or to read again.
    assert reads == ["over"]


async def test_a_wait_ends_when_the_record_is_committed_not_once_the_connections_close(
    tmp_path: Path,
) -> None:
    """What a wait waits on (``recorded_end_of``) returns as `end` goes out, with the
    record committed, while the game is still closing its connections: ``end_of``, and
    the game's leaving the manager, come after that."""
    async with arena(tmp_path) as a, _person_game(a) as (game_id, person):
        manager = _runtime(a).manager
        ended = asyncio.ensure_future(manager.end_of(game_id))
        recorded = manager.recorded_end_of(game_id)
        await person.send_json({"type": "resign"})
        async with asyncio.timeout(TIMEOUT):
            await recorded
        closing = manager.runs(game_id) and not ended.done()
        record, stored_status = await stored(a.db_url, game_id)
        result = await ended
    assert closing
    assert stored_status is not RecordStatus.RUNNING and record.result == result
    assert result is not None and result.cause == "resign"


async def test_an_end_of_left_unawaited_leaves_no_coroutine_behind(tmp_path: Path) -> None:
    """A caller (the tournament runner, the cluster's worker) may fail between asking
    for a game's end and awaiting it: what it dropped must not be a coroutine that is
    never awaited (a ``RuntimeWarning`` in the server's log)."""
    async with arena(tmp_path) as a, _person_game(a) as (game_id, person):
        manager = _runtime(a).manager
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            manager.end_of(game_id)
            manager.end_of("no-such-game")
            gc.collect()
        ended = manager.end_of(game_id)
        await person.send_json({"type": "resign"})
        async with asyncio.timeout(TIMEOUT):
            result = await ended
    assert not [w for w in caught if "never awaited" in str(w.message)], caught
    assert result is not None and result.cause == "resign"


async def test_a_wait_on_a_running_game_of_another_process_answers_its_record_as_it_stands(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a:
        await _elsewhere(a, "elsewhere")
        status, record = await _wait_json(a, "elsewhere", "?wait=0.3")
    assert status == 200 and record["game_id"] == "elsewhere" and record["result"] is None


# ------------------------------------------------------------------ refused


BAD_WAITS = [
    "",
    "-1",
    "-0",
    "+5",
    " 5",
    "5 ",
    "5s",
    "1e2",
    "0x10",
    "1.2.3",
    ".",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    str(MAX_WAIT_S + 1),
    f"{MAX_WAIT_S}.001",
    "1" * 400,
    "0" * 17 + "1",  # 1 s, but longer than any number of seconds needs
    "٣",  # an Arabic-Indic digit: a decimal to str.isdecimal, not to us
]


async def test_every_invalid_wait_is_422_naming_the_parameter_the_range_and_the_value(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a, _held_game(a) as game_id:
        answers = []
        for value in BAD_WAITS:
            async with a.http.get(f"{a.base}/games/{game_id}", params={"wait": value}) as response:
                answers.append((response.status, (await response.json())["detail"]))
    for value, (status, detail) in zip(BAD_WAITS, answers, strict=True):
        assert status == 422, (value, status, detail)
        expected = f"wait: expected a number of seconds from 0 to {MAX_WAIT_S}, got "
        assert detail.startswith(expected), detail
        echoed = detail.removeprefix(expected)
        # Quoted, and clipped however long the value.
        assert echoed.startswith(repr(value)[:10]) and len(echoed) < 100, (value, detail)


async def test_an_unknown_game_is_404_at_once_whatever_the_wait(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        # A client guard far shorter than the wait: a 404 only after it would fail here.
        guard = aiohttp.ClientTimeout(total=MAX_WAIT_S / 10)
        async with a.http.get(f"{a.base}/games/nope?wait={MAX_WAIT_S}", timeout=guard) as response:
            status, answer = response.status, await response.json()
    assert status == 404 and answer == {"detail": "no game 'nope'"}


# -------------------------------------------------------- ending the wait early


async def test_stopping_the_server_answers_every_waiting_request_with_its_record(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a, _held_game(a) as here:
        await _elsewhere(a, "elsewhere")
        before = asyncio.all_tasks()
        remote = await RawRequest.send(a, f"/games/elsewhere?wait={MAX_WAIT_S}")
        local = await RawRequest.send(a, f"/games/{here}?wait={MAX_WAIT_S}")
        await _until(lambda: len(asyncio.all_tasks() - before) >= 2)  # the server holds both
        a.server.should_exit = True  # what SIGTERM does
        # Before uvicorn's graceful shutdown gave up on them (10 s), cancelling their
        # tasks and closing their connections unanswered.
        (remote_status, remote_record), (local_status, local_record) = await asyncio.gather(
            remote.answer(), local.answer()
        )
    # The other process's game still runs as far as this server knows; its own game was
    # aborted by the stop, and the answer is its record as it stood then.
    assert remote_status == 200 and remote_record["game_id"] == "elsewhere"
    assert remote_record["result"] is None
    assert local_status == 200 and local_record["game_id"] == here


async def test_a_client_that_goes_away_while_waiting_leaves_nothing_behind(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a:
        await _elsewhere(a, "elsewhere")
        request, before = await RawRequest.held(a, f"/games/elsewhere?wait={MAX_WAIT_S}")
        request.close()
        # The request's task and every watcher of its wait end with the connection, long
        # before the wait would have.
        await _until(lambda: not asyncio.all_tasks() - before)
        status, record = await _wait_json(a, "elsewhere")  # and the server serves on
    assert status == 200 and record["result"] is None


# ------------------------------------------------------------------ cluster


async def test_a_wait_on_worker_b_answers_the_final_record_of_a_game_worker_a_runs(
    cluster: Cluster,
) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):
        body = {
            "player_x": {"type": "bot", "bot_url": f"{a.base}/bots/center"},
            "player_o": {"type": "bot", "bot_url": f"{a.base}/bots/random"},
        }
        async with cluster.http.post(f"{a.base}/game/new", json=body) as response:
            assert response.status == 200
            game_id = (await response.json())["game_id"]
        guard = aiohttp.ClientTimeout(total=TIMEOUT)
        url = f"{b.base}/games/{game_id}?wait={TIMEOUT:g}"
        async with cluster.http.get(url, timeout=guard) as response:
            status, waited = response.status, await response.json()
        on_a = await _read(cluster, f"{a.base}/games/{game_id}")
    assert status == 200 and waited["result"] is not None and waited["moves"]
    assert waited == on_a  # the final record, as its own worker has it


async def _read(cluster: Cluster, url: str) -> Json:
    status, answer = await cluster.get(url)
    assert status == 200, answer
    return dict(answer)
