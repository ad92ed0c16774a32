"""Games from an opening over real sockets on 127.0.0.1: ``POST /game/new`` with
``opening`` and ``tags``, as a tournament runner sends them (each opening twice, the
colours swapped), played by hosted bots, a stateless bot, a bot that declares only
``move_skips``, and a human; a bot that cannot be told the opening is refused.

The server is the whole app under uvicorn (``tests.test_server.arena``); extra bots are
served on their own loopback ports. Timeouts only stop a broken test from hanging.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bot.bots import RandomBot, ThreatBot
from bot.bots._features import position_bot_capabilities
from bot.serve import create_app, serving
from game import notation
from game.openings import Opening, default_book
from models import (
    OPENING_MOVES_TAG,
    Capabilities,
    EndCause,
    GameRecord,
    Meta,
    ResultReason,
    StatelessCapability,
    StatelessV1Alpha,
    StatelessVersions,
)
from tests.test_server import Arena, arena, capabilities_server, receive_type

Json = dict[str, Any]

# Short games: the default turn limit would let two weak bots play on for long.
MATCH: Json = {"turn_limit": 40}


class StatelessOnlyBot(RandomBot):
    """RandomBot that declares only the stateless API."""

    @classmethod
    def capabilities(cls) -> Capabilities:
        return Capabilities(
            meta=Meta(name="StatelessOnly"),
            stateless=StatelessCapability(versions=StatelessVersions(v1_alpha=StatelessV1Alpha())),
        )


class SkipsOnlyBot(ThreatBot):
    """ThreatBot that declares ``move_skips`` but not ``free_setup`` (nor a free move
    order): its session then holds the server to the standard setup and to alternating
    moves, so any slip in how the opening is told would close its socket."""

    @classmethod
    def capabilities(cls) -> Capabilities:
        return position_bot_capabilities(
            Meta(name="SkipsOnly"), free_setup=False, free_move_order=False
        )


@asynccontextmanager
async def extra_bots() -> AsyncIterator[str]:
    """``<url>/stateless`` and ``<url>/skips`` on a loopback port of their own."""
    app = create_app({"/stateless": StatelessOnlyBot, "/skips": SkipsOnlyBot})
    async with serving(app) as server:
        yield server.url


def opening_body(opening: Opening) -> list[Json]:
    return [move.model_dump(mode="json") for move in opening.wire_moves()]


def pieces(record: GameRecord) -> list[tuple[str, list[tuple[int, int]]]]:
    return [(m.side.value, [p.as_tuple() for p in m.pieces]) for m in record.moves]


def book_moves(opening: Opening) -> list[tuple[str, list[tuple[int, int]]]]:
    return [(m.side.value, [p.as_tuple() for p in m.pieces]) for m in opening.wire_moves()]


async def play_from(a: Arena, x: Json, o: Json, opening: Opening, tags: Json) -> GameRecord:
    created = await a.new_game(
        {
            "player_x": x,
            "player_o": o,
            "match_config": MATCH,
            "opening": opening_body(opening),
            "tags": tags,
        }
    )
    return await a.finished_record(created["game_id"])


def assert_played_from(record: GameRecord, opening: Opening) -> None:
    n = len(opening.moves)
    assert pieces(record)[:n] == book_moves(opening)
    assert len(record.moves) > n  # the players took over
    assert record.tags[OPENING_MOVES_TAG] == str(n)
    assert record.result is not None
    # A bot that saw a spec violation closes its socket: the game would be a forfeit.
    assert record.result.reason is not ResultReason.FORFEIT, record.result


async def test_hosted_bots_play_an_opening_twice_colours_swapped_tags_in_every_record(
    tmp_path: Path,
) -> None:
    opening = default_book()[0]
    async with arena(tmp_path) as a:
        records = []
        for round_number, (x, o) in enumerate((("threat", "random"), ("random", "threat"))):
            tags = {"tournament": "t-1", "round": str(round_number + 1), "opening": opening.name}
            record = await play_from(a, a.bot(x), a.bot(o), opening, tags)
            assert_played_from(record, opening)
            assert record.tags == {**tags, OPENING_MOVES_TAG: str(len(opening.moves))}
            assert record.moves[0].thinking_ms is None and record.moves[-1].thinking_ms is not None
            async with a.http.get(f"{a.base}/games/{record.game_id}/notation") as response:
                assert response.status == 200
                exported = notation.loads(await response.text())
            assert exported.tags == record.tags
            assert pieces(exported) == pieces(record)
            records.append(record)
    assert [r.player_x.name for r in records] == ["ThreatBot", "RandomBot"]


async def test_a_stateless_bot_plays_from_an_opening(tmp_path: Path) -> None:
    opening = default_book()[1]  # three moves: X moves first after it
    async with extra_bots() as bots, arena(tmp_path) as a:
        stateless = {"type": "bot", "bot_url": f"{bots}/stateless"}
        record = await play_from(a, stateless, a.bot("threat"), opening, {"round": "1"})
    assert_played_from(record, opening)
    assert record.player_x.name == "StatelessOnly"
    assert record.moves[len(opening.moves)].side.value == "x"


async def test_a_bot_declaring_only_move_skips_plays_from_an_opening(tmp_path: Path) -> None:
    opening = default_book()[0]
    async with extra_bots() as bots, arena(tmp_path) as a:
        skips = {"type": "bot", "bot_url": f"{bots}/skips"}
        first = await play_from(a, skips, a.bot("random"), opening, {"round": "1"})
        second = await play_from(a, a.bot("random"), skips, opening, {"round": "2"})
    for record in (first, second):
        assert_played_from(record, opening)
        assert record.result is not None and record.result.cause is not EndCause.PROTOCOL_ERROR
    assert first.player_x.name == second.player_o.name == "SkipsOnly"


async def test_a_bot_declaring_neither_free_setup_nor_move_skips_is_refused_with_422(
    tmp_path: Path,
) -> None:
    document: Json = {"basic_websocket": {"versions": {"v1-alpha": {}}}}
    async with capabilities_server(document) as url, arena(tmp_path) as a:
        status, answer = await a.post(
            {
                "player_x": a.bot("threat"),
                "player_o": {"type": "bot", "bot_url": url},
                "opening": opening_body(default_book()[0]),
            }
        )
    assert status == 422
    assert answer["detail"] == (
        "player_o: the bot declares neither free_setup nor move_skips, so it cannot start "
        "from an opening"
    )


async def test_an_illegal_opening_is_422_naming_the_move_and_stone(tmp_path: Path) -> None:
    opening = [{"side": "o", "pieces": [{"q": 1, "r": 0}, {"q": 30, "r": 0}]}]
    async with arena(tmp_path) as a:
        status, answer = await a.post(
            {"player_x": {"type": "human"}, "player_o": {"type": "human"}, "opening": opening}
        )
    assert status == 422
    assert "opening[0].pieces[1]: (30, 0) is farther than view_distance 8" in answer["detail"]


async def test_a_human_seat_gets_the_opening_in_its_setup(tmp_path: Path) -> None:
    opening = default_book()[0]
    async with arena(tmp_path) as a:
        created = await a.new_game(
            {
                "player_x": a.bot("random"),
                "player_o": {"type": "human"},
                "match_config": MATCH,
                "opening": opening_body(opening),
            }
        )
        async with a.http.ws_connect(f"{a.ws_base}/ws?token={created['token_o']}") as ws:
            setup = await receive_type(ws, "setup")
            request = await receive_type(ws, "move_request")
    stones = {(q, r, side) for q, r, side in opening.stones()}
    assert {(c["q"], c["r"], c["p"]) for c in setup["board"]["cells"]} == stones
    assert (request["side"], request["previous"]) == ("o", [])
    assert len(request["board"]["cells"]) == len(stones)
