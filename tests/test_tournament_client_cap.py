"""``--max-games-per-client`` bounds what one client runs through tournaments and series
too: while one runs, its ``concurrency`` counts among its client's live games."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.test_tournaments import Arena, arena

Json = dict[str, Any]
MOST = 4


def endless(a: Arena, concurrency: int) -> Json:
    """A tournament of two hosted bots that runs until it is stopped."""
    return {
        "bots": [a.bot("center"), a.bot("random")],
        "rounds": 100_000,
        "concurrency": concurrency,
        "openings": "none",
    }


async def test_tournaments_hold_their_concurrency_of_the_clients_games(tmp_path: Path) -> None:
    async with arena(tmp_path / "t.sqlite", max_games_per_client=MOST) as a:
        status, answer = await a.post("/tournaments", endless(a, MOST + 1))
        assert status == 429, answer
        assert "concurrency 5 does not fit" in answer["detail"]

        first = await a.create(endless(a, 3))
        status, answer = await a.post("/tournaments", endless(a, 2))
        assert status == 429, answer
        assert "already hold 3 of the 4 games" in answer["detail"]
        seat = {"type": "bot", "bot_url": f"{a.base}/bots/center"}
        series = {"player_a": {"name": "a", **seat}, "player_b": {"name": "b", **seat}}
        status, answer = await a.post("/series", {**series, "best_of": 1001})
        assert status == 201, answer  # one game at a time: 3 + 1
        series_id = answer["series_id"]
        a.tokens[series_id] = answer["control_token"]
        status, answer = await a.post("/series", {**series, "best_of": 1001})
        assert status == 429, answer

        # A stopped tournament holds nothing; resuming it asks for its games again.
        status, answer = await a.post_as_creator(f"/tournaments/{first}/stop")
        assert status == 200, answer
        second = await a.create(endless(a, 2))  # 1 + 2
        status, answer = await a.post_as_creator(f"/tournaments/{first}/resume")
        assert status == 429, answer
        status, answer = await a.post_as_creator(f"/series/{series_id}/resume")
        assert status == 409, answer  # running already
        for stop in (f"/tournaments/{second}/stop", f"/series/{series_id}/stop"):
            status, answer = await a.post_as_creator(stop)
            assert status == 200, answer
        status, answer = await a.post_as_creator(f"/tournaments/{first}/resume")
        assert status == 200, answer
        status, answer = await a.post_as_creator(f"/tournaments/{first}/stop")
        assert status == 200, answer
