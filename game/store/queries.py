"""The store's operations as synchronous functions of a SQLAlchemy ``Connection``.

Each runs inside one transaction that its runner (``game.store.runners``) began and
commits: on SQLite whole on a thread of the store's, on PostgreSQL through
``AsyncConnection.run_sync``. One code path, two ways to run it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final, TypeVar, cast

from sqlalchemy import (
    ColumnElement,
    and_,
    bindparam,
    exists,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql import Select

from game.store.errors import (
    GameNotRunningError,
    MoveConflictError,
    MoveIndexError,
    UnknownGameError,
)
from game.store.schema import (
    LEFT_RUNNING_RESULT,
    GamePage,
    RecordJson,
    RecordStatus,
    _bot_rows,
    _from_json,
    _game_bots,
    _game_players,
    _games,
    _header_bot_urls,
    _header_names,
    _IsoDateTime,
    _moves,
    _player_rows,
    _summary,
    _to_json,
)
from models import GameRecord, RecordedMove

_NO_DIALECT: Final = cast(Dialect, None)  # _IsoDateTime does not look at it

# The statements of the usual write, built once: SQLAlchemy then finds their compiled
# form in its cache without building and hashing a new statement each time.
_CLAIM_NEXT_MOVES: Final = (
    update(_games)
    .where(
        _games.c.game_id == bindparam("claim_game_id"),
        _games.c.status == RecordStatus.RUNNING.value,
        _games.c.move_count == bindparam("claim_first"),
    )
    .values(move_count=bindparam("claim_count"))
)
_INSERT_MOVES: Final = _moves.insert()
# The same two as SQL text for SQLite's driver (``_SqliteThreads.write_moves``), with
# their parameters in order: (claim_count, claim_game_id, claim_first) and
# (game_id, idx, data, latency_ms).
_CLAIM_NEXT_MOVES_SQL: Final = (
    f"UPDATE {_games.name} SET move_count = ? WHERE game_id = ? "
    f"AND status = '{RecordStatus.RUNNING.value}' AND move_count = ?"
)
_INSERT_MOVE_SQL: Final = (
    f"INSERT INTO {_moves.name} (game_id, idx, data, latency_ms) VALUES (?, ?, ?, ?)"
)
# A new game's row, ``create_game``'s usual case: (game_id, status, started_at, header,
# move_count); its seq is the row id. Then its players: (seq, seat, name_key), and its
# bots: (seq, seat, url_key).
_INSERT_GAME_SQL: Final = (
    f"INSERT INTO {_games.name} (game_id, status, started_at, header, move_count) "
    "VALUES (?, ?, ?, ?, ?)"
)
_INSERT_PLAYER_SQL: Final = (
    f"INSERT INTO {_game_players.name} (seq, seat, name_key) VALUES (?, ?, ?)"
)
_INSERT_BOT_SQL: Final = f"INSERT INTO {_game_bots.name} (seq, seat, url_key) VALUES (?, ?, ?)"
# And the result of a running game: (status, result, ended_at, game_id).
_FINISH_RUNNING_SQL: Final = (
    f"UPDATE {_games.name} SET status = ?, result = ?, ended_at = ? "
    f"WHERE game_id = ? AND status = '{RecordStatus.RUNNING.value}'"
)


def _iso_datetime(value: datetime) -> str | None:
    """``value`` as its column stores it (``schema._IsoDateTime``)."""
    return _IsoDateTime().process_bind_param(value, _NO_DIALECT)


def _lock_game(conn: Connection, game_id: str, *columns: Any, missing: str) -> Any:
    """The game's row (``columns``), locked for this transaction: concurrent writers of
    one game queue up on PostgreSQL (SQLite ignores FOR UPDATE; its write lock already
    serialises everything). Raises UnknownGameError naming what was being done."""
    row = conn.execute(
        select(*columns).where(_games.c.game_id == game_id).with_for_update()
    ).one_or_none()
    if row is None:
        raise UnknownGameError(f"no game {game_id!r} {missing}")
    return row


def _create_game(
    conn: Connection,
    game: dict[str, Any],
    moves: list[dict[str, Any]],
    names: tuple[str | None, str | None],
    bot_urls: tuple[str | None, str | None],
) -> None:
    inserted = conn.execute(_games.insert(), game).inserted_primary_key
    assert inserted is not None  # an INSERT of one row
    seq = int(inserted[0])
    conn.execute(_game_players.insert(), _player_rows(seq, names))
    conn.execute(_game_bots.insert(), _bot_rows(seq, bot_urls))
    if moves:
        conn.execute(_INSERT_MOVES, moves)


def _index_players(conn: Connection) -> int:
    """Index the players of games stored before ``game_players`` existed (they have no
    rows in it), and the bots of those stored before ``game_bots`` did; returns how many
    games it indexed. Run once per ``open``: after the first, it only finds there is
    nothing to do."""
    indexed = 0
    for table, rows_of, seats_of in (
        (_game_players, _player_rows, _header_names),
        (_game_bots, _bot_rows, _header_bot_urls),
    ):
        unindexed = conn.execute(
            select(_games.c.seq, _games.c.header).where(
                ~exists().where(table.c.seq == _games.c.seq)
            )
        ).all()
        rows = [
            row
            for game in unindexed
            for row in rows_of(int(game.seq), seats_of(_from_json(game.header)))
        ]
        if rows:
            conn.execute(table.insert(), rows)
        indexed += len(unindexed)
    return indexed


def _add_usual_moves(
    conn: Connection, game_id: str, first_index: int, rows: list[dict[str, Any]]
) -> bool:
    """The usual case of ``_add_moves`` in one statement and the insert: a running game
    whose next index is ``first_index`` takes the moves (the UPDATE also locks the row
    on PostgreSQL). False, having changed nothing, for anything else."""
    claimed = conn.execute(
        _CLAIM_NEXT_MOVES,
        {
            "claim_game_id": game_id,
            "claim_first": first_index,
            "claim_count": first_index + len(rows),
        },
    )
    if claimed.rowcount != 1:
        return False
    conn.execute(_INSERT_MOVES, rows)
    return True


def _add_moves(
    conn: Connection, game_id: str, first_index: int, rows: list[dict[str, Any]]
) -> None:
    # The usual case first; anything else is sorted out by the checks below.
    if _add_usual_moves(conn, game_id, first_index, rows):
        return
    row = _lock_game(
        conn, game_id, _games.c.status, _games.c.move_count, missing=f"to add move {first_index} to"
    )
    status, count = RecordStatus(row.status), row.move_count
    stored_already = [r for r in rows if 0 <= r["idx"] < count]
    for wanted in stored_already:
        stored = conn.execute(
            select(_moves.c.data, _moves.c.latency_ms).where(
                _moves.c.game_id == game_id, _moves.c.idx == wanted["idx"]
            )
        ).one()
        if (stored.data, stored.latency_ms) != (wanted["data"], wanted["latency_ms"]):
            raise MoveConflictError(
                f"game {game_id!r} already has a different move {wanted['idx']}: {stored.data}"
            )
    new_rows = rows[len(stored_already) :]
    if not new_rows:
        return
    if status is not RecordStatus.RUNNING:
        raise GameNotRunningError(f"game {game_id!r} is {status.value}; it takes no more moves")
    index = new_rows[0]["idx"]
    if index != count:
        raise MoveIndexError(
            f"game {game_id!r} has {count} moves, so the next index is {count}, got {index}"
        )
    conn.execute(_INSERT_MOVES, new_rows)
    conn.execute(
        update(_games)
        .where(_games.c.game_id == game_id)
        .values(move_count=_games.c.move_count + len(new_rows))
    )


def _finish_game(
    conn: Connection, game_id: str, status: RecordStatus, result: str, ended_at: datetime
) -> None:
    row = _lock_game(conn, game_id, _games.c.status, _games.c.result, missing="to finish")
    if row.status != RecordStatus.RUNNING.value:
        if row.result == result:
            return
        raise GameNotRunningError(
            f"game {game_id!r} is already {row.status} with result {row.result}"
        )
    conn.execute(
        update(_games)
        .where(_games.c.game_id == game_id)
        .values(status=status.value, result=result, ended_at=ended_at)
    )


def _finish_with_moves(
    conn: Connection,
    game_id: str,
    status: RecordStatus,
    result: str,
    ended_at: datetime,
    first_index: int,
    rows: list[dict[str, Any]],
) -> None:
    """A game's last moves (``rows`` from ``first_index`` on, perhaps none) and how it
    ended, in one transaction: the end of a game is one commit."""
    if rows:
        _add_moves(conn, game_id, first_index, rows)
    _finish_game(conn, game_id, status, result, ended_at)


def _abort_running(conn: Connection, ended_at: datetime) -> int:
    return len(_abort_games(conn, None, _to_json(LEFT_RUNNING_RESULT), ended_at))


#: Game ids per ``IN (...)`` of ``_abort_games``.
_ABORT_CHUNK: Final = 500


def _abort_games(
    conn: Connection, game_ids: list[str] | None, result: str, ended_at: datetime
) -> list[str]:
    """Mark the running games among ``game_ids`` (None: every running game) aborted
    with ``result``; the ids of those it changed (a game over already is left as it is)."""
    running = _games.c.status == RecordStatus.RUNNING.value
    values = {"status": RecordStatus.ABORTED.value, "result": result, "ended_at": ended_at}
    chunks = (
        [None]
        if game_ids is None
        else [game_ids[i : i + _ABORT_CHUNK] for i in range(0, len(game_ids), _ABORT_CHUNK)]
    )
    aborted: list[str] = []
    for chunk in chunks:
        where = running if chunk is None else running & _games.c.game_id.in_(chunk)
        statement = update(_games).where(where).values(**values).returning(_games.c.game_id)
        aborted += conn.execute(statement).scalars()
    return aborted


_T = TypeVar("_T")


@dataclass(frozen=True)
class _StoredGame:
    """A game's rows as read, before they are rebuilt into a ``GameRecord``."""

    game_id: str
    status: str
    started_at: datetime | None
    header: str
    result: str | None
    moves: list[str]


def _game_status(conn: Connection, game_id: str) -> str | None:
    status: str | None = conn.execute(
        select(_games.c.status).where(_games.c.game_id == game_id)
    ).scalar_one_or_none()
    return status


def _fetch_game(conn: Connection, game_id: str) -> _StoredGame | None:
    game = conn.execute(
        select(_games.c.status, _games.c.started_at, _games.c.header, _games.c.result).where(
            _games.c.game_id == game_id
        )
    ).one_or_none()
    if game is None:
        return None
    moves: list[str] = list(
        conn.execute(
            select(_moves.c.data).where(_moves.c.game_id == game_id).order_by(_moves.c.idx)
        ).scalars()
    )
    return _StoredGame(game_id, game.status, game.started_at, game.header, game.result, moves)


def _build_record(stored: _StoredGame | None) -> GameRecord | None:
    """The record of ``stored``: the JSON and validation work of a read, kept apart from
    the query so that it can run off the event loop whatever the backend."""
    if stored is None:
        return None
    return GameRecord.model_validate(
        {
            **_from_json(stored.header),
            "game_id": stored.game_id,
            "started_at": stored.started_at,
            "moves": [RecordedMove.model_validate(_from_json(m)) for m in stored.moves],
            "result": None if stored.result is None else _from_json(stored.result),
        }
    )


def _fetch_and_build(
    conn: Connection, game_id: str, build: Callable[[_StoredGame | None], _T]
) -> _T:
    return build(_fetch_game(conn, game_id))


_RECORD_FIELDS: Final = tuple(GameRecord.model_fields)
_MOVES_AT: Final = _RECORD_FIELDS.index("moves")
# Tokens of json.dumps that are not JSON (a float('inf') heuristic): a move whose text
# may hold one is encoded again, through its model.
_NOT_JSON: Final = ("Infinity", "NaN")


def _record_json(stored: _StoredGame | None) -> RecordJson | None:
    """``GameRecord.model_dump_json()`` of ``stored`` (equal as JSON, not byte for byte:
    the stored moves escape non-ASCII characters), each move's stored text as it is."""
    if stored is None:
        return None
    record = _build_record(replace(stored, moves=[]))
    assert record is not None
    before = record.model_dump_json(include=set(_RECORD_FIELDS[:_MOVES_AT]))
    after = record.model_dump_json(include=set(_RECORD_FIELDS[_MOVES_AT + 1 :]))
    moves = ",".join(
        RecordedMove.model_validate(_from_json(text)).model_dump_json()
        if any(token in text for token in _NOT_JSON)
        else text
        for text in stored.moves
    )
    text = f'{before[:-1]},"moves":[{moves}],{after[1:]}'.encode()
    return RecordJson(text, RecordStatus(stored.status))


def _move_latencies(conn: Connection, game_id: str) -> list[int | None]:
    exists = conn.execute(select(_games.c.seq).where(_games.c.game_id == game_id)).one_or_none()
    if exists is None:
        raise UnknownGameError(f"no game {game_id!r}")
    rows = conn.execute(
        select(_moves.c.latency_ms).where(_moves.c.game_id == game_id).order_by(_moves.c.idx)
    )
    return list(rows.scalars())


def _status_is(status: RecordStatus, decided: Mapping[str, RecordStatus]) -> ColumnElement[bool]:
    """The games whose status is ``status``, where a game in ``decided`` counts with the
    status given there (its end is known, its stored row not updated yet)."""
    stored = _games.c.status == status.value
    elsewhere = [game_id for game_id, now in decided.items() if now is not status]
    here = [game_id for game_id, now in decided.items() if now is status]
    if elsewhere:
        stored = and_(stored, _games.c.game_id.not_in(elsewhere))
    if here:
        stored = or_(stored, _games.c.game_id.in_(here))
    return stored


def _list_games(conn: Connection, query: Select[Any], limit: int) -> GamePage:
    rows = conn.execute(query).all()
    items = [
        _summary(
            game_id=row.game_id,
            status=row.status,
            started_at=row.started_at,
            ended_at=row.ended_at,
            header=row.header,
            result=row.result,
            moves=row.move_count,
        )
        for row in rows[:limit]
    ]
    next_cursor = str(rows[limit - 1].seq) if len(rows) > limit else None
    return GamePage(items=items, next_cursor=next_cursor)


def _count_games(conn: Connection, query: Select[Any]) -> int:
    return int(conn.execute(query).scalar_one())
