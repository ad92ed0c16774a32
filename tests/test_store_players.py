"""The list of games filtered by player and by bot (``GameStore.list_games(player=...,
bot_url=...)``), on SQLite and PostgreSQL (as in ``tests.test_store``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import delete
from sqlalchemy.engine import Connection

from game.store import (
    MAX_BOT_URL_FILTER,
    MAX_PLAYER_FILTER,
    GameStore,
    InvalidBotUrlFilterError,
    InvalidPlayerFilterError,
    RecordStatus,
)
from game.store.schema import _game_bots, _game_players
from models import GameRecord, GameResult, Player, RecordPlayer, ResultReason

T0 = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
WIN_X = GameResult(winner=Player.X, reason=ResultReason.WIN)


def game(game_id: str, x: str | None, o: str | None) -> GameRecord:
    return GameRecord(
        game_id=game_id,
        started_at=T0,
        player_x=RecordPlayer(name=x),
        player_o=RecordPlayer(name=o),
    )


THREAT = "http://127.0.0.1:8001/bots/threat"
ELSEWHERE = "http://127.0.0.1:8002/"


def bots_game(game_id: str, x: str | None, o: str | None, name: str = "ThreatBot") -> GameRecord:
    """A game of two seats called ``name`` (as capabilities name bots) at URLs x and o."""
    return GameRecord(
        game_id=game_id,
        started_at=T0,
        player_x=RecordPlayer(name=name, bot_url=x),
        player_o=RecordPlayer(name=name, bot_url=o),
    )


async def ids(store: GameStore, **filters: object) -> list[str]:
    page = await store.list_games(limit=100, **filters)  # type: ignore[arg-type]
    return [summary.game_id for summary in page.items]


async def test_a_player_filter_finds_either_seat_ignoring_case_but_nothing_else(
    store: GameStore,
) -> None:
    await store.create_game(game("g0", "Ada", "ThreatBot"))
    await store.create_game(game("g1", "threatbot", "Bob"))
    await store.create_game(game("g2", "Ada Lovelace", "ThreatBot2"))
    await store.create_game(game("g3", None, None))
    await store.create_game(game("g4", "Straße", "ada"))
    await store.create_game(game("g5", "ada\x00", "\ud800"))  # stored, never found

    assert await ids(store, player="THREATBOT") == ["g1", "g0"]
    assert await ids(store, player="ada") == ["g4", "g0"]
    assert await ids(store, player="STRASSE") == ["g4"]  # case folding, not lower()
    assert await ids(store, player="Threat") == []  # no prefix match
    assert await ids(store, player=" ada") == []  # nor trimming
    assert await ids(store, player="ada\x00") == []  # a name PostgreSQL cannot hold
    assert await ids(store) == ["g5", "g4", "g3", "g2", "g1", "g0"]


async def test_a_player_filter_combines_with_status_and_pages_by_cursor(
    store: GameStore,
) -> None:
    for n in range(12):
        await store.create_game(game(f"g{n:02}", "Ada" if n % 2 else "Bob", "Carol"))
        if n % 3 == 0:
            await store.finish_game(f"g{n:02}", WIN_X, ended_at=T0)

    assert await ids(store, player="ada", status=RecordStatus.FINISHED) == ["g09", "g03"]
    assert await ids(store, player="bob", status=RecordStatus.RUNNING) == [
        "g10",
        "g08",
        "g04",
        "g02",
    ]
    seen: list[str] = []
    cursor: str | None = None
    while True:
        page = await store.list_games(player="ADA", limit=2, before=cursor)
        seen += [summary.game_id for summary in page.items]
        assert len(page.items) <= 2
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == ["g11", "g09", "g07", "g05", "g03", "g01"]


@pytest.mark.parametrize("player", ["", "x" * (MAX_PLAYER_FILTER + 1)], ids=["empty", "long"])
async def test_an_empty_or_overlong_player_filter_is_refused(store: GameStore, player: str) -> None:
    with pytest.raises(InvalidPlayerFilterError, match=f"1 to {MAX_PLAYER_FILTER} characters"):
        await store.list_games(player=player)


async def test_games_stored_before_the_player_index_are_indexed_on_open(db_url: str) -> None:
    async with await GameStore.open(db_url) as before:
        await before.create_game(game("old", "Ada", "Bob"))
        await before.create_game(game("nameless", None, None))

        def forget_players(conn: Connection) -> None:
            conn.execute(delete(_game_players))

        # As a database made by a version without the table: games, no player rows.
        await before._runner.write(forget_players)
        assert await ids(before, player="ada") == []

    async with await GameStore.open(db_url) as after:
        await after.create_game(game("new", "ADA", None))
        assert await ids(after, player="ada") == ["new", "old"]
        assert await ids(after, player="bob") == ["old"]
    async with await GameStore.open(db_url) as again:  # nothing to do the second time
        assert await ids(again, player="ada") == ["new", "old"]


async def test_a_bot_url_filter_finds_that_bot_in_either_seat_not_its_namesakes(
    store: GameStore,
) -> None:
    await store.create_game(bots_game("g0", THREAT, None))
    await store.create_game(bots_game("g1", ELSEWHERE, THREAT))
    await store.create_game(bots_game("g2", ELSEWHERE, ELSEWHERE))  # another ThreatBot
    await store.create_game(bots_game("g3", THREAT + "/", "http://x/\x00\ud800"))
    await store.finish_game("g1", WIN_X, ended_at=T0)

    assert await ids(store, player="threatbot") == ["g3", "g2", "g1", "g0"]
    assert await ids(store, bot_url=THREAT) == ["g1", "g0"]
    assert await ids(store, bot_url=THREAT + "/") == ["g3"]  # exactly as the seat gave it
    assert await ids(store, bot_url="HTTP://127.0.0.1:8001/bots/threat") == []
    assert await ids(store, bot_url="http://x/\x00\ud800") == ["g3"]  # any text has a key
    assert await ids(store, bot_url=ELSEWHERE, status=RecordStatus.RUNNING) == ["g2"]
    assert await ids(store, bot_url=THREAT, player="nobody") == []


@pytest.mark.parametrize("url", ["", "x" * (MAX_BOT_URL_FILTER + 1)], ids=["empty", "long"])
async def test_an_empty_or_overlong_bot_url_filter_is_refused(store: GameStore, url: str) -> None:
    with pytest.raises(InvalidBotUrlFilterError, match=f"1 to {MAX_BOT_URL_FILTER} characters"):
        await store.list_games(bot_url=url)


async def test_games_stored_before_the_bot_index_are_indexed_on_open(db_url: str) -> None:
    async with await GameStore.open(db_url) as before:
        await before.create_game(bots_game("old", THREAT, ELSEWHERE))
        await before.create_game(game("people", "Ada", "Bob"))

        def forget_bots(conn: Connection) -> None:
            conn.execute(delete(_game_bots))

        # As a database made by a version without the table: games, no bot rows.
        await before._runner.write(forget_bots)
        assert await ids(before, bot_url=THREAT) == []

    async with await GameStore.open(db_url) as after:
        await after.create_game(bots_game("new", None, THREAT))
        assert await ids(after, bot_url=THREAT) == ["new", "old"]
        assert await ids(after, bot_url=ELSEWHERE) == ["old"]
        assert await ids(after, player="ada") == ["people"]
