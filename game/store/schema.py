"""The tables of the store, the values it hands out, and how rows become them.

The schema itself is described in ``game.store``'s docstring.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from datetime import datetime
from enum import Enum
from functools import cache
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeVar

from pydantic import BaseModel, Field
from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
)
from sqlalchemy.engine import Dialect

from game.store.errors import InvalidCursorError
from models import (
    Coord,
    EndCause,
    GameResult,
    Meta,
    MoveOption,
    Player,
    PositionEvaluation,
    RecordedMove,
    RecordPlayer,
    ResultReason,
)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

MAX_PAGE_SIZE: Final = 200
"""The largest ``limit`` that ``list_games`` accepts."""

MAX_GAME_ID_LENGTH: Final = 200

ABORTED_RESULT: Final = GameResult(
    winner=None,
    reason=ResultReason.DRAW,
    cause=EndCause.ABORTED,
    detail="the game was stopped before it ended",
)
"""The ``result`` of a game the server stopped without an outcome (no winner; ``cause``
says aborted)."""

LEFT_RUNNING_RESULT: Final = ABORTED_RESULT.model_copy(
    update={"detail": "the server stopped before the game ended (found running at startup)"}
)
"""The ``result`` given at startup to games a previous run left running (a crash)."""


def worker_lost_result(worker_id: str) -> GameResult:
    """The ``result`` recorded for a live game of a cluster's worker that died (by the
    worker that sweeps up after it, or that takes over its queued game).

    >>> worker_lost_result("w3").end_detail
    'aborted: the worker w3 running it stopped (its lease expired)'
    """
    detail = f"the worker {worker_id} running it stopped (its lease expired)"
    return ABORTED_RESULT.model_copy(update={"detail": detail})


def lease_lapsed_result(worker_id: str) -> GameResult:
    """The ``result`` recorded for the game of a work queue's item whose lease expired,
    by the worker that takes the item over: its holder stopped, or was cut off from the
    store for longer than a lease (it may be alive; it writes its own end if it can, and
    the first end written stays).

    >>> lease_lapsed_result("w3").end_detail
    'aborted: the worker w3 running it stopped or lost the store (its lease expired)'
    """
    detail = f"the worker {worker_id} running it stopped or lost the store (its lease expired)"
    return ABORTED_RESULT.model_copy(update={"detail": detail})


def unsettled_result(worker_id: str) -> GameResult:
    """The ``result`` recorded for a live game of a cluster's worker that is alive but
    could not write the game's end or hand it back (the store was out of reach for
    longer than it kept trying), when that worker takes the game back to play it again.

    >>> unsettled_result("w3").end_detail
    'aborted: the worker w3 running it could not write its end (its lease expired)'
    """
    detail = f"the worker {worker_id} running it could not write its end (its lease expired)"
    return ABORTED_RESULT.model_copy(update={"detail": detail})


# --------------------------------------------------------------------------- values


class RecordStatus(str, Enum):
    """Where a stored game stands. ``aborted``: the server stopped while it ran."""

    RUNNING = "running"
    FINISHED = "finished"
    ABORTED = "aborted"

    @classmethod
    def of_result(cls, result: GameResult) -> RecordStatus:
        """The status of a game that ended with ``result``: aborted for ``cause=aborted``,
        finished for any other.

        >>> RecordStatus.of_result(ABORTED_RESULT)
        <RecordStatus.ABORTED: 'aborted'>
        """
        return cls.ABORTED if result.cause is EndCause.ABORTED else cls.FINISHED


#: Characters of each text of a ``GameSummary`` (names, URLs) at most; longer ones are
#: clipped with an ellipsis (the full text is in the game's record).
SUMMARY_TEXT_MAX: Final = 100


class GameSummary(BaseModel):
    """One line of the game list: enough to show it without loading its moves. Its
    size is bounded: texts are clipped to ``SUMMARY_TEXT_MAX`` characters and a bot's
    ``meta`` is cut down to its name and version."""

    game_id: str
    name: str | None
    player_x: RecordPlayer
    player_o: RecordPlayer
    status: RecordStatus
    result: GameResult | None
    started_at: datetime | None
    ended_at: datetime | None
    moves: int
    #: A game this server is running: who is to move and both clocks now (None for the
    #: others, and for a game without clocks), for a live games list.
    to_move: Player | None = None
    clock_x_ms: int | None = None
    clock_o_ms: int | None = None


class RecordJson(NamedTuple):
    """A game's record as ``GameRecord`` JSON, and where the game stands (a record
    that is no longer ``running`` never changes)."""

    json: bytes
    status: RecordStatus


class GamePage(BaseModel):
    """A page of games, newest first. For the next page, pass ``next_cursor`` as
    ``cursor`` (``GET /games?cursor=...``, with the same filters); it is None on the
    last page."""

    items: list[GameSummary] = Field(default_factory=list)
    next_cursor: str | None = None


# --------------------------------------------------------------------------- schema


class _IsoDateTime(TypeDecorator[datetime]):
    """A datetime as ISO 8601 text.

    SQLite has no datetime type and SQLAlchemy's emulation drops the UTC offset, so
    this keeps naive and aware values exactly as given on both backends. Games are
    ordered by ``seq``, never by this text.
    """

    impl = String(40)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> str | None:
        return None if value is None else value.isoformat()

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return None if value is None else datetime.fromisoformat(value)


_metadata = MetaData()

_games = Table(
    "games",
    _metadata,
    # BIGINT on PostgreSQL; SQLite only auto-increments a column declared INTEGER.
    Column("seq", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("game_id", String(MAX_GAME_ID_LENGTH), nullable=False, unique=True),
    Column("status", String(16), nullable=False),
    Column("started_at", _IsoDateTime(), nullable=True),
    Column("ended_at", _IsoDateTime(), nullable=True),
    Column("header", Text(), nullable=False),
    Column("result", Text(), nullable=True),
    Column("move_count", Integer(), nullable=False, default=0),
    # The list filtered by status, newest first.
    Index("ix_games_status_seq", "status", "seq"),
)

_moves = Table(
    "moves",
    _metadata,
    Column(
        "game_id",
        String(MAX_GAME_ID_LENGTH),
        ForeignKey("games.game_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("idx", Integer(), primary_key=True),
    Column("data", Text(), nullable=False),
    Column("latency_ms", Integer(), nullable=True),
)

#: Characters of a player filter at most (``list_games(player=...)``), and of a name's
#: case-folded key in ``game_players``: a longer name is not indexed, and no filter of
#: this length or less could match it.
MAX_PLAYER_FILTER: Final = 200

# Each seat's name, case-folded, beside the header blob that holds it: the list of games
# filtered by player reads this index instead of parsing every header. Two rows per
# game (seats "x" and "o"), ``name_key`` null for a seat without a name, so a game
# without rows is one stored before the table existed (``_index_players`` fills it).
_game_players = Table(
    "game_players",
    _metadata,
    Column(
        "seq",
        BigInteger().with_variant(Integer, "sqlite"),
        ForeignKey("games.seq", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("seat", String(1), primary_key=True),
    Column("name_key", String(MAX_PLAYER_FILTER), nullable=True),
    # A player's games, newest first.
    Index("ix_game_players_name_seq", "name_key", "seq"),
)


def player_key(name: str | None) -> str | None:
    """The key a name is indexed and filtered by: case-folded (``"Ada"``, ``"ADA"`` and
    ``"ada"`` share one), None for no name or one that cannot be indexed: too long, or
    holding what a database's text cannot (NUL for PostgreSQL, lone surrogates for
    UTF-8). A record's names are not validated (a record may come from anywhere), so
    such names are possible; such a name is simply not found by a filter.

    >>> player_key("ThreatBot"), player_key("Straße"), player_key("a\\x00b")
    ('threatbot', 'strasse', None)
    """
    if name is None:
        return None
    key = name.casefold()
    if len(key) > MAX_PLAYER_FILTER or "\x00" in key:
        return None
    try:
        key.encode()
    except UnicodeEncodeError:
        return None
    return key


def _player_rows(seq: int, names: tuple[str | None, str | None]) -> list[dict[str, Any]]:
    """The ``game_players`` rows of a game whose seats X and O are called ``names``."""
    return [
        {"seq": seq, "seat": seat, "name_key": player_key(name)}
        for seat, name in zip(("x", "o"), names, strict=True)
    ]


def _header_names(header: dict[str, Any]) -> tuple[str | None, str | None]:
    """The seats' names in a stored header's fields (``_to_json`` of a ``GameRecord``)."""
    return _seat_text(header, "player_x", "name"), _seat_text(header, "player_o", "name")


def _header_bot_urls(header: dict[str, Any]) -> tuple[str | None, str | None]:
    """The seats' bot URLs in a stored header's fields."""
    return _seat_text(header, "player_x", "bot_url"), _seat_text(header, "player_o", "bot_url")


def _seat_text(header: dict[str, Any], field: str, key: str) -> str | None:
    seat = header.get(field)
    text = seat.get(key) if isinstance(seat, dict) else None
    return text if isinstance(text, str) else None


#: Characters of a bot URL filter at most (``list_games(bot_url=...)``): a seat's
#: ``bot_url`` is no longer (``wire.rest.MAX_URL_LENGTH``).
MAX_BOT_URL_FILTER: Final = 2048

# Each seat's bot URL, as the players' names are in ``game_players``: the games of one
# bot (a name is not one bot: hosted bots go by their capabilities' names, which any
# other bot may give too). Two rows per game, ``url_key`` null for a seat without a URL
# (a person), so a game without rows is one stored before the table existed.
_game_bots = Table(
    "game_bots",
    _metadata,
    Column(
        "seq",
        BigInteger().with_variant(Integer, "sqlite"),
        ForeignKey("games.seq", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("seat", String(1), primary_key=True),
    Column("url_key", String(64), nullable=True),
    # A bot's games, newest first.
    Index("ix_game_bots_url_seq", "url_key", "seq"),
)


def bot_url_key(url: str | None) -> str | None:
    """The key a bot URL is indexed and filtered by: the SHA-256 of the URL exactly as
    the seat gave it (no trimming, no case folding: ``/bots/threat`` and
    ``/bots/threat/`` are two keys), None for no URL. A digest rather than the URL: a
    key of 64 characters whatever the URL, where an index of URLs of up to 2048
    characters (8 KB in UTF-8) would overflow a PostgreSQL b-tree's row, and text
    that a database cannot hold (NUL, lone surrogates) still gets a key.

    >>> bot_url_key("http://127.0.0.1:8001/bots/threat")[:12], bot_url_key(None)
    ('3d786f9c228c', None)
    """
    if url is None:
        return None
    return hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest()


def _bot_rows(seq: int, urls: tuple[str | None, str | None]) -> list[dict[str, Any]]:
    """The ``game_bots`` rows of a game whose seats X and O have the bot URLs ``urls``."""
    return [
        {"seq": seq, "seat": seat, "url_key": bot_url_key(url)}
        for seat, url in zip(("x", "o"), urls, strict=True)
    ]


# Fields of GameRecord kept outside the header blob: in columns or in other rows.
_NOT_IN_HEADER: Final = frozenset({"game_id", "started_at", "moves", "result"})


def _to_json(model: BaseModel, *, exclude: frozenset[str] | None = None) -> str:
    # mode="json" keeps float('inf') a float, where model_dump_json would write null;
    # json.dumps then writes it as Infinity, which json.loads reads back.
    data = model.model_dump(mode="json", exclude=None if exclude is None else set(exclude))
    return json.dumps(data, separators=(",", ":"))


class _NotPlain(Exception):
    """A move that ``_move_json`` leaves to ``_to_json``."""


def _json_number(value: object) -> str:
    """``value`` as ``json.dumps`` writes it, for the types a move's fields hold."""
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        number: float = value  # type: ignore[assignment]
        if math.isfinite(number):
            return float.__repr__(number)
        return "NaN" if math.isnan(number) else "Infinity" if number > 0 else "-Infinity"
    if value is None:
        return "null"
    raise _NotPlain


def _pieces_json(pieces: list[Coord]) -> str:
    parts = []
    for coord in pieces:
        if type(coord) is not Coord:
            raise _NotPlain
        parts.append(f'{{"q":{_json_number(coord.q)},"r":{_json_number(coord.r)}}}')
    return ",".join(parts)


def _evaluation_json(evaluation: PositionEvaluation | None) -> str:
    if evaluation is None:
        return "null"
    if type(evaluation) is not PositionEvaluation or evaluation.__pydantic_extra__:
        raise _NotPlain  # extra fields: any JSON at all, left to pydantic and json
    return (
        f'{{"heuristic":{_json_number(evaluation.heuristic)},'
        f'"win_in":{_json_number(evaluation.win_in)}}}'
    )


def _plain_move_json(move: RecordedMove) -> str:
    if type(move) is not RecordedMove or type(move.side) is not Player:
        raise _NotPlain
    considerations = []
    for option in move.considerations:
        if type(option) is not MoveOption:
            raise _NotPlain
        considerations.append(
            f'{{"pieces":[{_pieces_json(option.pieces)}],'
            f'"evaluation":{_evaluation_json(option.evaluation)}}}'
        )
    return (
        f'{{"side":"{move.side.value}","pieces":[{_pieces_json(move.pieces)}],'
        f'"evaluation":{_evaluation_json(move.evaluation)},'
        f'"considerations":[{",".join(considerations)}],'
        f'"clock_ms":{_json_number(move.clock_ms)},'
        f'"thinking_ms":{_json_number(move.thinking_ms)},'
        f'"latency_ms":{_json_number(move.latency_ms)}}}'
    )


# The fields ``_plain_move_json`` writes, in pydantic's order: a model that has others
# (a field added since) is written by ``_to_json`` until it learns them.
_PLAIN_FIELDS: Final = (
    tuple(RecordedMove.model_fields)
    == ("side", "pieces", "evaluation", "considerations", "clock_ms", "thinking_ms", "latency_ms")
    and tuple(PositionEvaluation.model_fields) == ("heuristic", "win_in")
    and tuple(MoveOption.model_fields) == ("pieces", "evaluation")
    and tuple(Coord.model_fields) == ("q", "r")
    and {side.value for side in Player} == {"x", "o"}
)


def _move_json(move: RecordedMove) -> str:
    """``_to_json(move)``, the same text, written directly in the usual case.

    A move is recorded as it is played, on the event loop: pydantic's dump and
    ``json.dumps`` take a few times longer than writing the handful of numbers of a
    move straight into the text. What it does not know (a bot's extra evaluation
    fields, a subclass, a value of an unexpected type) goes through ``_to_json``.
    Non-finite heuristics are written as ``json.dumps`` writes them (``Infinity``).
    """
    if _PLAIN_FIELDS:
        try:
            return _plain_move_json(move)
        except _NotPlain:
            pass
    return _to_json(move)


def _from_json(text: str) -> Any:
    return json.loads(text)


def _from_nullable_json(text: str | None) -> Any:
    """The data of a JSON column that may be null (None for null)."""
    return None if text is None else json.loads(text)


# ------------------------------------------------------------------- rows to values

_Row = TypeVar("_Row", bound="DataclassInstance")


def _columns_of(values: type[DataclassInstance], *tables: Table) -> tuple[Column[Any], ...]:
    """The columns to select for the fields of the dataclass ``values``: each field's
    column of the same name, from the first of ``tables`` that has one (a join's key is
    in both tables). A field with no such column is a mistake, named by a ``KeyError``.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Move:
    ...     game_id: str
    ...     idx: int
    >>> [str(column) for column in _columns_of(Move, _moves, _games)]
    ['moves.game_id', 'moves.idx']
    """
    columns = []
    for field in dataclasses.fields(values):
        found = [table.c[field.name] for table in tables if field.name in table.c]
        if not found:
            raise KeyError(f"no column {field.name!r} in {[table.name for table in tables]}")
        columns.append(found[0])
    return tuple(columns)


def _from_row(values: type[_Row], row: Any, **decoded: Any) -> _Row:
    """The dataclass ``values`` made of ``row``: each field is the row's column of the
    same name, but the fields in ``decoded``, which the caller made of the row (JSON
    text parsed, two columns made one value).

    Every table module maps its rows this way, so a field added to a dataclass and to
    its table needs no line of mapping.

    >>> from collections import namedtuple
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Entry:
    ...     game_id: str
    ...     outcome: dict[str, Any] | None
    >>> Row = namedtuple("Row", "game_id outcome")
    >>> _from_row(Entry, Row("4f2a", '{"winner":"x"}'), outcome={"winner": "x"})
    Entry(game_id='4f2a', outcome={'winner': 'x'})
    """
    return values(
        **{
            name: decoded[name] if name in decoded else getattr(row, name)
            for name in _field_names(values)
        }
    )


@cache
def _field_names(values: type[DataclassInstance]) -> tuple[str, ...]:
    # Read once per class, not once per row mapped.
    return tuple(field.name for field in dataclasses.fields(values))


def _parse_cursor(cursor: str) -> int:
    if not cursor.isascii() or not cursor.isdecimal() or len(cursor) > 18:
        raise InvalidCursorError(
            f"expected the next_cursor of a page of GET /games, got {cursor!r}"
        )
    return int(cursor)


def _summary(
    *,
    game_id: str,
    status: str,
    started_at: datetime | None,
    ended_at: datetime | None,
    header: str,
    result: str | None,
    moves: int,
) -> GameSummary:
    fields = _from_json(header)
    return GameSummary(
        game_id=game_id,
        name=_clip(fields.get("name")),
        player_x=_summary_player(fields.get("player_x", {})),
        player_o=_summary_player(fields.get("player_o", {})),
        status=RecordStatus(status),
        result=None if result is None else GameResult.model_validate(_from_json(result)),
        started_at=started_at,
        ended_at=ended_at,
        moves=moves,
    )


def _summary_player(fields: dict[str, Any]) -> RecordPlayer:
    """A seat as a summary shows it: its name, type and URL, and of the bot's ``meta``
    only its name and version, each clipped. What a bot declares is up to the bot, and
    a page of summaries must stay small however much it declared."""
    player = RecordPlayer.model_validate(fields)
    meta = player.meta
    return RecordPlayer(
        name=_clip(player.name),
        type=player.type,
        bot_url=_clip(player.bot_url),
        meta=None if meta is None else Meta(name=_clip(meta.name), version=_clip(meta.version)),
    )


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= SUMMARY_TEXT_MAX:
        return text
    return text[: SUMMARY_TEXT_MAX - 1] + "\u2026"
