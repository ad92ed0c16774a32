"""The bounds of ``POST /game/new`` over real sockets: every number bounded, every name
printable, every echo short, the default turn limit applied (``models.NewGameRequest``).

The server runs on 127.0.0.1 (``tests.test_server.arena``); bodies are sent as raw
bytes, as a hostile client would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import wire.rest
from game import notation
from game.game_routes import MAX_ERROR_DETAIL_CHARS
from models import DEFAULT_TURN_LIMIT, EndCause, GameRecord, ResultReason
from tests.test_server import arena, capabilities_server

HUMANS = '"player_x":{"type":"human"},"player_o":{"type":"human"}'
LONG_URL = "http://127.0.0.1:9/" + "a" * 60_000


def with_match(settings: str) -> bytes:
    return f'{{{HUMANS},"match_config":{{{settings}}}}}'.encode()


def with_seat(seat: str, name: str | None = None) -> bytes:
    game_name = "" if name is None else f',"name":{json.dumps(name)}'
    return f'{{"player_x":{{"type":"human"}},"player_o":{seat}{game_name}}}'.encode()


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (
            with_match('"clock_type":"turn","clock":1e308'),
            "match_config.clock: expected at most 2147483.647, got 1e+308",
        ),
        (
            with_match('"clock_type":"incremental","clock":60,"increment":1e308'),
            "match_config.increment: expected at most 2147483.647, got 1e+308",
        ),
        (
            with_match('"clock_type":"match","clock":1e6'),
            "match_config.clock: expected at most 86400 on this server, got 1000000.0",
        ),
        (
            with_match(f'"turn_limit":1{"0" * 400}'),
            "match_config.turn_limit: expected at most 2147483647, got an integer of about 401 "
            "digits",
        ),
        (
            with_match(f'"heartbeat":{2**64}'),
            "match_config.heartbeat: expected at most 2147483647, got 18446744073709551616",
        ),
        (
            with_match('"view_distance":50,"win_distance":20'),
            "match_config.view_distance: expected at most 12 on this server, got 50",
        ),
        (
            with_seat(
                f'{{"type":"bot","bot_url":"http://127.0.0.1:9","config":{{"depth":{2**80}}}}}'
            ),
            "player_o.config: depth: expected an integer within 64 bits",
        ),
        (
            with_seat(
                f'{{"type":"bot","bot_url":"http://127.0.0.1:9","config":{{"x-n":{"7" * 2000}}}}}'
            ),
            "player_o.config: x-n: expected an integer within 64 bits",
        ),
        (
            with_seat(json.dumps({"type": "bot", "bot_url": LONG_URL})),
            "player_o.bot_url: expected at most 2048 characters, got 60019",
        ),
        (
            with_seat('{"type":"human","name":"nul\\u0000"}'),
            "player_o.name: expected a name without control characters, got U+0000",
        ),
        (
            with_seat('{"type":"human"}', name="evil\u202egnp.exe"),
            "name: expected a name without control characters, got U+202E at position 4",
        ),
        (with_seat('{"type":"human"}', name="n" * 65), "name: expected at most 64 characters"),
        (b'{"player_x":{"type":"human","name":"caf\xc3"}}', "invalid UTF-8 (byte 0xc3)"),
    ],
    ids=[
        "clock-1e308",
        "increment-1e308",
        "clock-a-million-seconds",
        "turn-limit-10^400",
        "heartbeat-2^64",
        "view-distance-50",
        "depth-2^80",
        "2000-digit-x-value",
        "60-KiB-bot-url",
        "NUL-in-a-seat-name",
        "bidi-override-in-the-game-name",
        "long-name",
        "invalid-UTF-8",
    ],
)
async def test_unbounded_values_are_422_with_a_short_reason(
    tmp_path: Path, body: bytes, detail: str
) -> None:
    async with arena(tmp_path) as a:
        status, answer = await a.post(body)
        health, _ = await a.get_json("/health")
    assert status == 422, answer
    assert detail in answer["detail"]
    assert len(answer["detail"]) <= MAX_ERROR_DETAIL_CHARS
    assert health == 200


async def test_a_game_without_a_turn_limit_is_played_to_the_default_one(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        created = await a.new_game(json.loads(f"{{{HUMANS}}}"))
        status, data = await a.get_json(f"/games/{created['game_id']}")
        async with a.http.get(f"{a.base}/games/{created['game_id']}/notation") as response:
            text = await response.text()
    assert status == 200
    assert GameRecord.model_validate(data).match.turn_limit == DEFAULT_TURN_LIMIT
    assert notation.loads(text).match.turn_limit == DEFAULT_TURN_LIMIT


async def test_a_bots_own_name_reaches_the_record_cleaned_and_clipped(tmp_path: Path) -> None:
    # The name a bot gives itself in its capabilities becomes its seat's name; the bot is
    # not refused for it, but control characters never reach the record or notation.
    document = {
        "meta": {"name": "Evil\u202eBot\u0000\u001b[31m" + "!" * 100},
        "stateless": {"versions": {"v1-alpha": {}}},  # no turn route: it will forfeit
    }
    async with capabilities_server(document) as url, arena(tmp_path) as a:
        created = await a.new_game(
            {"player_x": {"type": "bot", "bot_url": url}, "player_o": a.bot("random")}
        )
        record = await a.finished_record(created["game_id"])
        async with a.http.get(f"{a.base}/games/{created['game_id']}/notation") as response:
            text = await response.text()
    assert record.player_x.name == "EvilBot[31m" + "!" * 50 + "..."
    assert notation.loads(text).player_x.name == record.player_x.name


async def test_two_random_bots_without_a_turn_limit_draw_at_the_default_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two RandomBots hardly ever make a line: without the default they would play on and
    # on. A smaller default keeps the test short; the rule is the same.
    monkeypatch.setattr(wire.rest, "DEFAULT_TURN_LIMIT", 30)  # where NewGameRequest reads it
    async with arena(tmp_path) as a:
        created = await a.new_game({"player_x": a.bot("random"), "player_o": a.bot("random")})
        record = await a.finished_record(created["game_id"])
    assert record.match.turn_limit == 30
    assert record.result is not None
    assert (record.result.reason, record.result.cause) == (ResultReason.DRAW, EndCause.TURN_LIMIT)
    assert len(record.moves) == 30
