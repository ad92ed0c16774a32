"""What the game server adds for its web page: ``GET /games?player=``, ``?bot_url=`` and
``GET /games/<id>/notation?download=1``, over real sockets (``tests.test_server``'s
``arena``)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from game import notation
from game.store import GameStore
from models import GameRecord
from tests.test_server import HUMAN_MATCH, arena, until


async def test_games_are_filtered_by_player_live_and_stored_with_status_and_pages(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a:
        finished = []
        for name in ("Ada", "Bob", "ADA"):
            created = await a.new_game(
                {"player_x": {**a.bot("center"), "name": name}, "player_o": a.bot("random")}
            )
            await a.finished_record(created["game_id"])
            finished.append(created["game_id"])
        live = await a.new_game(
            {
                "player_x": {"type": "human", "name": "Carol"},
                "player_o": {**a.bot("random"), "name": "ada"},
                "match_config": HUMAN_MATCH,
            }
        )
        # O plays first; once X is asked to move, the live game has a move in memory.
        async with a.http.ws_connect(f"{a.ws_base}/ws?token={live['token_x']}") as ws:
            await until(ws, "move_request")
            _, everyone = await a.get_json("/games?player=aDa")
            _, running = await a.get_json("/games?player=ada&status=running")
            _, over = await a.get_json("/games?player=ada&status=finished")
            _, first = await a.get_json("/games?player=ada&limit=2")
            _, second = await a.get_json(f"/games?player=ada&limit=2&cursor={first['next_cursor']}")
            _, carol = await a.get_json("/games?player=carol")
            _, nobody = await a.get_json("/games?player=ad")

    ada_games = [live["game_id"], finished[2], finished[0]]
    assert [g["game_id"] for g in everyone["items"]] == ada_games
    assert [g["game_id"] for g in running["items"]] == [live["game_id"]]
    assert running["items"][0]["moves"] >= 1  # as it stands in memory
    assert [g["game_id"] for g in over["items"]] == [finished[2], finished[0]]
    assert [g["game_id"] for g in first["items"] + second["items"]] == ada_games
    assert second["next_cursor"] is None
    assert [g["game_id"] for g in carol["items"]] == [live["game_id"]]
    assert nobody["items"] == []


async def test_a_bad_player_filter_is_422_with_the_reason(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        empty = await a.get_json("/games?player=")
        long = await a.get_json("/games?player=" + "x" * 201)
    assert empty == (
        422,
        {"detail": "player: expected a name of 1 to 200 characters, got 0 characters"},
    )
    assert long[0] == 422 and "got 201 characters" in long[1]["detail"]


async def test_games_are_filtered_by_bot_url_not_by_the_name_it_plays_under(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a:
        threat, center = a.bot("threat")["bot_url"], a.bot("center")["bot_url"]
        # A seat named ThreatBot that is CenterBot: the same name, another bot.
        namesake = await a.new_game(
            {"player_x": {**a.bot("center"), "name": "ThreatBot"}, "player_o": a.bot("random")}
        )
        own = await a.new_game({"player_x": a.bot("random"), "player_o": a.bot("threat")})
        for created in (namesake, own):
            await a.finished_record(created["game_id"])
        _, by_name = await a.get_json("/games?player=ThreatBot")
        _, by_url = await a.get_json(f"/games?bot_url={quote(threat, safe='')}")
        _, by_center = await a.get_json(f"/games?bot_url={quote(center, safe='')}&limit=1")
        empty = await a.get_json("/games?bot_url=")
        long = await a.get_json("/games?bot_url=" + "x" * 2049)

    assert [g["game_id"] for g in by_name["items"]] == [own["game_id"], namesake["game_id"]]
    assert [g["game_id"] for g in by_url["items"]] == [own["game_id"]]
    assert [g["game_id"] for g in by_center["items"]] == [namesake["game_id"]]
    assert empty == (
        422,
        {"detail": "bot_url: expected a URL of 1 to 2048 characters, got 0 characters"},
    )
    assert long[0] == 422 and "got 2049 characters" in long[1]["detail"]


async def test_notation_with_download_1_is_an_attachment_named_for_the_game(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a:
        created = await a.new_game({"player_x": a.bot("center"), "player_o": a.bot("random")})
        game_id = created["game_id"]
        await a.finished_record(game_id)
        async with a.http.get(f"{a.base}/games/{game_id}/notation?download=1") as response:
            saved = (response.status, response.headers.get("content-disposition"))
            text = await response.text()
        async with a.http.get(f"{a.base}/games/{game_id}/notation") as response:
            shown = (response.status, response.headers.get("content-disposition"))
            assert await response.text() == text
        bad = await a.get_json(f"/games/{game_id}/notation?download=yes")
        missing = await a.get_json("/games/nope/notation?download=1")
    assert saved == (200, f'attachment; filename="{game_id}.htttx"')
    assert notation.loads(text).moves
    assert shown == (200, None)
    assert bad == (422, {"detail": "download: expected 0 or 1, got 'yes'"})
    assert missing[0] == 404


async def test_a_downloaded_notation_file_name_is_sanitised(tmp_path: Path) -> None:
    # An imported record keeps whatever id it had; quotes and spaces must not reach the
    # header, nor path separators the file name.
    game_id = '..my game"1\\x'
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
    async with await GameStore.open(db_url) as store:
        await store.create_game(GameRecord(game_id=game_id))
    async with arena(tmp_path) as a:
        url = f"{a.base}/games/{quote(game_id, safe='')}/notation?download=1"
        async with a.http.get(url) as response:
            assert response.status == 200
            disposition = response.headers["content-disposition"]
    assert disposition == 'attachment; filename="my_game_1_x.htttx"'
