"""Reading games: what ``GET /games``, ``/games/<id>``, ``/games/<id>/notation`` and a
spectator of a finished game get, consistent with what was broadcast, cheap when big.

Where a record comes from:

* A game this server is running is read from memory (``GameManager.live_record``):
  every move broadcast so far and the result as soon as it is decided, whatever the
  store has committed yet (group commit keeps the last moves back for up to an
  interval). ``GET /games`` shows live games the same way, over the store's page.
* Any other game is read from the store. The manager forgets a game only once its
  record is committed, and commits the end before sending ``end``, so a reader never
  sees less than a client was sent.

What a read costs: a record of thousands of moves is megabytes of JSON. Nothing of it
is encoded on the event loop. A stored record's JSON is assembled on a store thread
from each move's stored JSON (``GameStore.get_game_json``): rebuilding thousands of
models, then encoding them again, was most of a read's work and fed the garbage
collector, whose passes hold the GIL. Other encodings (a live record, notation,
snapshots) run on a worker thread, moves ``ENCODE_CHUNK`` at a time, so the loop gets
the GIL back between chunks; at most ``CONCURRENT_BUILDS`` reads fetch and encode at
once, the rest wait their turn, so many readers cannot starve the loop either. A
finished game never changes, so its encodings (record, notation, spectator snapshot)
are kept in an LRU cache bounded by bytes; concurrent readers of one uncached game
share a single build.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar, cast

import orjson
from pydantic import TypeAdapter

from game import notation
from game.store import GamePage, GameStore, GameSummary, RecordStatus
from models import (
    Board,
    Cell,
    EndPacket,
    GameRecord,
    GameResult,
    GameStatus,
    Player,
    RecordedMove,
    SetupPacket,
    dump_packet,
)

if TYPE_CHECKING:
    from game.manager import GameManager

__all__ = [
    "CONCURRENT_BUILDS",
    "DEFAULT_CACHE_BYTES",
    "ENCODE_CHUNK",
    "Built",
    "EncodedCache",
    "RecordReader",
    "Snapshot",
    "encode_record",
    "encode_setup",
    "snapshot_of",
]

#: The encoded records of finished games kept in memory, at most (bytes).
DEFAULT_CACHE_BYTES: Final = 64 * 1024 * 1024
#: Moves encoded per call: a call holds the GIL, so this bounds one stall of the loop.
ENCODE_CHUNK: Final = 256
#: Records fetched and encoded at once (the others wait their turn), see RecordReader.
CONCURRENT_BUILDS: Final = 2
#: Records and setups with fewer moves are encoded on the loop: a thread hop costs more.
INLINE_ENCODE_MOVES: Final = 64

_MOVES = TypeAdapter(list[RecordedMove])
_RECORD_FIELDS: Final = tuple(GameRecord.model_fields)
_MOVES_AT: Final = _RECORD_FIELDS.index("moves")

_T = TypeVar("_T")
_Value = TypeVar("_Value", covariant=True)

#: A finished game as a spectator gets it: its ``setup``, then its ``end`` if it has one.
Snapshot = tuple[bytes, bytes | None]


# ------------------------------------------------------------------ encoding


def encode_record(record: GameRecord) -> bytes:
    """``record.model_dump_json()``, the moves encoded ``ENCODE_CHUNK`` at a time (call
    it on a worker thread: the event loop runs between the chunks)."""
    before = record.model_dump_json(include=set(_RECORD_FIELDS[:_MOVES_AT]))
    after = record.model_dump_json(include=set(_RECORD_FIELDS[_MOVES_AT + 1 :]))
    chunks = [
        _MOVES.dump_json(record.moves[i : i + ENCODE_CHUNK])[1:-1]
        for i in range(0, len(record.moves), ENCODE_CHUNK)
    ]
    moves = b"[" + b",".join(chunks) + b"]"
    return before.encode()[:-1] + b',"moves":' + moves + b"," + after.encode()[1:]


def encode_setup(setup: SetupPacket) -> bytes:
    """``dump_packet(setup)``, the moves encoded ``ENCODE_CHUNK`` at a time."""
    moves = setup.moves or []
    if len(moves) <= ENCODE_CHUNK:
        return dump_packet(setup)
    head = dump_packet(setup.model_copy(update={"moves": []}))
    # Only type, board and game_id come before the moves (see SetupPacket), and none of
    # them can hold this text: its first occurrence is the moves' own (tags, which
    # could, come after).
    marker = b'"moves":[]'
    at = head.index(marker) + len(marker) - 1
    chunks = [_dump_moves(moves[i : i + ENCODE_CHUNK]) for i in range(0, len(moves), ENCODE_CHUNK)]
    return head[:at] + b",".join(chunks) + head[at:]


def _dump_moves(moves: Sequence[RecordedMove]) -> bytes:
    # As dump_packet does: absent optional fields are left out.
    data = [move.model_dump(mode="json", by_alias=True, exclude_none=True) for move in moves]
    try:
        return orjson.dumps(data)[1:-1]
    except orjson.JSONEncodeError:
        return json.dumps(data, separators=(",", ":"), allow_nan=False).encode()[1:-1]


def snapshot_of(record: GameRecord) -> tuple[SetupPacket, EndPacket | None]:
    """A stored game as a spectator sees it: ``setup`` with everything, and ``end``."""
    cells = list(record.setup)
    for move in record.moves:
        cells.extend(Cell(q=c.q, r=c.r, p=move.side) for c in move.pieces)
    board = Board(cells=cells)
    result = record.result
    setup = SetupPacket(
        board=board,
        game_id=record.game_id,
        moves=list(record.moves),
        player_x=record.player_x,
        player_o=record.player_o,
        match=record.match,
        to_move=None,
        status=_status(result),
        tags=dict(record.tags) or None,
        name=record.name,
        started_at=record.started_at,
    )
    if result is None:
        return setup, None
    end = EndPacket(
        winner=result.winner, reason=result.reason, detail=result.end_detail, board=board
    )
    return setup, end


def _encode_snapshot(record: GameRecord) -> Snapshot:
    setup, end = snapshot_of(record)
    return encode_setup(setup), None if end is None else dump_packet(end)


def _encode_notation(record: GameRecord) -> bytes:
    # Names come from users and from bots' capabilities: clean what a tag cannot hold.
    return notation.dumps(record, clean_tags=True).encode()


def _status(result: GameResult | None) -> GameStatus | None:
    if result is None:
        return None
    if result.winner is None:
        return GameStatus.DRAW
    return GameStatus.X_WINS if result.winner is Player.X else GameStatus.O_WINS


# --------------------------------------------------------------------- cache


class EncodedCache:
    """Encodings by key, least recently used dropped first once over ``max_bytes``.

    ``get_or_build`` runs one build per key at a time: readers arriving while it runs
    wait for it instead of encoding the same game again. An entry bigger than the
    whole cache is handed out but not kept.
    """

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be 0 or more, got {max_bytes}")
        self.max_bytes = max_bytes
        self.size = 0  # bytes held now
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._building: dict[Hashable, asyncio.Future[Built[Any] | None]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> Any | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry[0]

    def put(self, key: Hashable, value: Any, size: int) -> None:
        if key in self._entries:
            self.size -= self._entries.pop(key)[1]
        if size <= self.max_bytes:
            self._entries[key] = (value, size)
            self.size += size
        self.trim()

    def trim(self) -> None:
        """Drop the least recently used entries until within ``max_bytes``."""
        while self.size > self.max_bytes:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.size -= dropped

    async def get_or_build(
        self, key: Hashable, build: Callable[[], Awaitable[Built[_T] | None]]
    ) -> _T | None:
        """The cached value of ``key``, else the value ``build()`` makes (kept if it says
        so); None if ``build()`` found nothing."""
        cached = self.get(key)
        if cached is not None:
            return cast(_T, cached)
        building = self._building.get(key)
        if building is None:
            building = asyncio.ensure_future(build())
            self._building[key] = building

            def settle(done: asyncio.Future[Built[Any] | None]) -> None:
                self._building.pop(key, None)
                if done.cancelled() or done.exception() is not None:
                    return
                built = done.result()
                if built is not None and built.final:
                    self.put(key, built.value, built.size)

            building.add_done_callback(settle)
        # One reader leaving must not cancel the build the others wait for.
        built = await asyncio.shield(building)
        return None if built is None else cast(_T, built.value)


@dataclass(frozen=True)
class Built(Generic[_Value]):
    """What a build of ``EncodedCache.get_or_build`` made: ``final`` values are kept."""

    value: _Value
    size: int
    final: bool


def _snapshot_size(snapshot: Snapshot) -> int:
    setup, end = snapshot
    return len(setup) + (0 if end is None else len(end))


# -------------------------------------------------------------------- reader


class RecordReader:
    """The read side of one server: records, notation, snapshots and pages of games,
    from memory for live games and from the store (through the cache) otherwise."""

    def __init__(
        self, store: GameStore, manager: GameManager, *, cache_bytes: int = DEFAULT_CACHE_BYTES
    ) -> None:
        self.store = store
        self.manager = manager
        self.cache = EncodedCache(cache_bytes)
        # Reads that fetch and encode a record: CPU work on threads, which competes with
        # the event loop for the GIL; a few at a time keep the loop answering.
        self._builds = asyncio.Semaphore(CONCURRENT_BUILDS)

    async def record_json(self, game_id: str) -> bytes | None:
        """The ``GameRecord`` of a game as JSON; None if there is no such game."""
        live = self.manager.live_record(game_id)
        if live is not None:
            return await self._encode_live(encode_record, live)

        async def build() -> Built[bytes] | None:
            async with self._builds:
                stored = await self.store.get_game_json(game_id)
            if stored is None:
                return None
            final = stored.status is not RecordStatus.RUNNING
            return Built(stored.json, len(stored.json), final)

        return await self.cache.get_or_build(("record", game_id), build)

    async def notation(self, game_id: str) -> bytes | None:
        """The game in HTTTX notation v2 (UTF-8); None if there is no such game."""
        return await self._encoded(game_id, "notation", _encode_notation, len)

    async def snapshot(self, game_id: str) -> Snapshot | None:
        """A game that this server is not running, as a spectator gets it."""
        return await self._encoded(game_id, "snapshot", _encode_snapshot, _snapshot_size)

    async def page(
        self,
        *,
        status: RecordStatus | None = None,
        player: str | None = None,
        bot_url: str | None = None,
        limit: int = 50,
        before: str | None = None,
    ) -> GamePage:
        """``GameStore.list_games``, with live games as they stand in memory. A live game
        is in the store from its start (``GameManager.create_game`` writes it before it
        is played), so the store's filters find it; only its progress comes from memory.
        A game whose end is decided but not yet committed is filtered by the status it
        is about to have, as ``record_json`` already shows its result."""
        decided = None
        if status is not None:
            results = self.manager.decided_results()
            decided = {game_id: RecordStatus.of_result(r) for game_id, r in results.items()}
        page = await self.store.list_games(
            status=status,
            player=player,
            bot_url=bot_url,
            limit=limit,
            before=before,
            decided=decided,
        )
        page.items = [self._live_summary(item) for item in page.items]
        return page

    def _live_summary(self, summary: GameSummary) -> GameSummary:
        progress = self.manager.live_progress(summary.game_id)
        if progress is None:
            return summary
        result = progress.result
        status = summary.status if result is None else RecordStatus.of_result(result)
        update = {
            "moves": max(summary.moves, progress.moves),
            "result": result,
            "status": status,
            "to_move": progress.to_move,
            "clock_x_ms": progress.clock_x_ms,
            "clock_o_ms": progress.clock_o_ms,
        }
        return summary.model_copy(update=update)

    async def _encoded(
        self,
        game_id: str,
        kind: str,
        encode: Callable[[GameRecord], _T],
        size_of: Callable[[_T], int],
    ) -> _T | None:
        live = self.manager.live_record(game_id)
        if live is not None:
            return await self._encode_live(encode, live)

        async def build() -> Built[_T] | None:
            async with self._builds:
                record = await self.store.get_game(game_id)
                if record is None:
                    return None
                value = await _off_loop(encode, record)
            # A record with a result is final; one without is a game still running
            # elsewhere (another server on this database) or left by a crash.
            return Built(value, size_of(value), record.result is not None)

        return await self.cache.get_or_build((kind, game_id), build)

    async def _encode_live(self, encode: Callable[[GameRecord], _T], record: GameRecord) -> _T:
        # A live record changes with every move, so it is not cached; a long one waits
        # its turn like any other big encode.
        if len(record.moves) <= INLINE_ENCODE_MOVES:
            return encode(record)
        async with self._builds:
            return await _off_loop(encode, record)


async def _off_loop(encode: Callable[[GameRecord], _T], record: GameRecord) -> _T:
    if len(record.moves) <= INLINE_ENCODE_MOVES:
        return encode(record)
    return await asyncio.to_thread(encode, record)
