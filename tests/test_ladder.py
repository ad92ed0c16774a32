"""The ladder through the game server: registered bots on loopback (real bot servers),
``POST /bots``, ``GET /ladder``, ``GET /leaderboard``; backoff, pause, restart."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.bots import CenterBot, RandomBot, ThreatBot
from bot.serve import create_app as create_bot_app
from bot.serve import serving as serving_bots
from game import serve
from game.ladder import EVENT_TAG, LadderSettings, _Bucket
from game.server import create_app, serving
from game.store import GameStore
from tests.test_server import server_process

Json = dict[str, Any]
TIMEOUT = 120.0
#: Quick games: no clock to wait on, the bots answer at once.
FAST = LadderSettings(concurrency=2, rate=6000, time_control="none", seed=1)


@dataclass
class Server:
    base: str
    http: aiohttp.ClientSession

    async def get(self, path: str) -> tuple[int, Any]:
        async with self.http.get(self.base + path) as response:
            return response.status, await response.json()

    async def post(self, path: str, body: Any = None) -> tuple[int, Any]:
        async with self.http.post(
            self.base + path,
            data=json.dumps(body or {}),
            headers={"content-type": "application/json"},
        ) as response:
            return response.status, await response.json()

    async def register(self, name: str, url: str) -> Json:
        status, answer = await self.post("/bots", {"name": name, "url": url, "ladder": True})
        assert status == 201, answer
        return dict(answer)

    async def ladder(self) -> Json:
        status, answer = await self.get("/ladder")
        assert status == 200, answer
        return dict(answer)

    async def until(self, path: str, done: Callable[[Any], bool]) -> Any:
        """Poll ``path`` until ``done(body)`` (bounded only against hangs)."""
        async with asyncio.timeout(TIMEOUT):
            while True:
                status, body = await self.get(path)
                assert status == 200, body
                if done(body):
                    return body
                await asyncio.sleep(0.05)


@asynccontextmanager
async def game_server(db: Path, **options: Any) -> AsyncIterator[Server]:
    app = create_app(db_url=f"sqlite+aiosqlite:///{db}", host_example_bots=False, **options)
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with serving(app) as server, aiohttp.ClientSession(timeout=timeout) as http:
        yield Server(server.url, http)


@asynccontextmanager
async def three_bots() -> AsyncIterator[dict[str, str]]:
    """ThreatBot, CenterBot and RandomBot on one bot server; their URLs by name."""
    table = {"/threat": ThreatBot, "/center": CenterBot, "/random": RandomBot}
    async with serving_bots(create_bot_app(table)) as bots:
        yield {name: f"{bots.url}/{name}" for name in ("threat", "center", "random")}


def board_of(body: Json) -> dict[str, Json]:
    return {entry["name"]: entry for entry in body["entries"]}


def registered_of(body: Json) -> dict[str, Json]:
    return {bot["name"]: bot for bot in body["registered"]}


async def test_the_ladder_keeps_registered_bots_playing_rated_games(tmp_path: Path) -> None:
    async with three_bots() as urls, game_server(tmp_path / "l.sqlite", ladder=FAST) as s:
        for name, url in urls.items():
            await s.register(name, url)
        status = await s.until("/ladder", lambda body: body["games_finished"] >= 9)
        assert status["enabled"] and status["running"]
        assert status["concurrency"] == 2 and status["time_control"] == "none"
        assert status["entrants"] == 3 and status["backoffs"] == []
        # Every bot played, and the leaderboard has each one's games.
        board = board_of((await s.get("/leaderboard?kind=bot"))[1])
        assert set(board) == {"threat", "center", "random"}
        assert all(entry["games"] > 0 for entry in board.values())
        assert board["threat"]["rank"] < board["random"]["rank"] or board["threat"]["provisional"]
        # The games are ordinary records, tagged as the ladder's.
        _, page = await s.get("/games?status=finished&limit=5")
        game = page["items"][0]
        _, record = await s.get(f"/games/{game['game_id']}")
        assert record["tags"][EVENT_TAG[0]] == EVENT_TAG[1]
        assert record["player_x"]["name"] in urls and record["player_o"]["name"] in urls
        # The registry's view of each bot counts its games too.
        bots = registered_of((await s.get("/bots"))[1])
        assert all(bots[name]["games"] > 0 for name in urls)


async def test_a_bot_that_stops_answering_is_backed_off_and_the_reason_shown(
    tmp_path: Path,
) -> None:
    async with three_bots() as urls, game_server(tmp_path / "b.sqlite", ladder=FAST) as s:
        for name, url in urls.items():
            await s.register(name, url)
        async with serving_bots(create_bot_app(RandomBot)) as doomed:
            await s.register("doomed", doomed.url)
        # It has gone: a game cannot seat it (or it dropped the one it was in).

        def backed_off(body: Json) -> bool:
            return any(b["name"] == "doomed" for b in body["backoffs"])

        status = await s.until("/ladder", backed_off)
        backoff = next(b for b in status["backoffs"] if b["name"] == "doomed")
        assert backoff["reason"].startswith(("no_show", "disconnect"))
        bots = registered_of((await s.get("/bots"))[1])
        assert bots["doomed"]["backoff_reason"] == backoff["reason"]
        assert bots["doomed"]["failures_in_row"] >= 1
        # The others play on meanwhile.
        before = status["games_finished"]
        await s.until("/ladder", lambda body: body["games_finished"] >= before + 3)


async def test_a_bot_that_leaves_the_ladder_leaves_nothing_of_it_behind(tmp_path: Path) -> None:
    # The ladder remembers each bot's colour balance, last opponent and last game; a
    # server running for months sees bots come and go, and must not keep them all.
    app = create_app(db_url=f"sqlite+aiosqlite:///{tmp_path / 'g.sqlite'}", ladder=FAST)
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with (
        three_bots() as urls,
        serving(app) as server,
        aiohttp.ClientSession(timeout=timeout) as http,
    ):
        s = Server(server.url, http)
        ladder = app.state.arena.ladder
        owners = {name: (await s.register(name, url))["owner_token"] for name, url in urls.items()}
        async with asyncio.timeout(TIMEOUT):
            while "random" not in ladder._sides:  # it has played
                await asyncio.sleep(0.01)
            async with http.delete(
                f"{s.base}/bots/random", headers={"authorization": f"Bearer {owners['random']}"}
            ) as response:
                assert response.status == 200, await response.text()
            # Its last game over and the entrants read again since...
            while "random" in ladder._entrants or "random" in ladder.bots_in_play.playing():
                await asyncio.sleep(0.01)
            read_at = ladder._read_at
            while ladder._read_at == read_at:
                await asyncio.sleep(0.01)
            # ... and once more, to the end of that read: a game paired after it.
            started = ladder.games_started
            while ladder.games_started == started:
                await asyncio.sleep(0.01)
        assert "random" not in ladder._entrants  # retired for good
        for table in (ladder._sides, ladder._last_opponent, ladder._last_played):
            assert set(table) <= {"threat", "center"}, table


async def test_pause_and_resume(tmp_path: Path) -> None:
    async with three_bots() as urls, game_server(tmp_path / "p.sqlite", ladder=FAST) as s:
        status, paused = await s.post("/ladder/pause")
        assert status == 200 and paused["running"] is False and paused["enabled"]
        for name, url in urls.items():
            await s.register(name, url)
        await asyncio.sleep(0.5)
        assert (await s.ladder())["games_started"] == 0
        status, resumed = await s.post("/ladder/resume")
        assert status == 200 and resumed["running"]
        await s.until("/ladder", lambda body: body["games_finished"] >= 2)


async def test_a_server_without_a_ladder_says_so(tmp_path: Path) -> None:
    async with game_server(tmp_path / "n.sqlite") as s:
        status, body = await s.get("/ladder")
        assert status == 200 and body["enabled"] is False and body["running"] is False
        status, body = await s.post("/ladder/pause")
        assert status == 404 and "--ladder" in body["detail"]
        _, document = await s.get("/openapi.json")
        assert {"/ladder", "/ladder/pause", "/ladder/resume"} <= set(document["paths"])
        assert "LadderStatus" in document["components"]["schemas"]


async def test_a_restarted_server_goes_on_with_its_ladder(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    async with three_bots() as urls:
        async with game_server(db, ladder=FAST) as s:
            tokens = {
                name: (await s.register(name, url))["owner_token"] for name, url in urls.items()
            }
            await s.until("/ladder", lambda body: body["games_finished"] >= 6)
        # Stopped mid-game: what was in flight is void, nothing is pending.
        async with await GameStore.open(f"sqlite+aiosqlite:///{db}") as store:
            before = {row.key: row for row in await store.ratings.all()}
            assert await store.ratings.pending() == []
        games_before = sum(row.games for row in before.values()) // 2
        assert games_before >= 6
        async with game_server(db, ladder=FAST) as s:
            bots = registered_of((await s.get("/bots"))[1])
            assert {name: bot["url"] for name, bot in bots.items()} == urls
            # The ladder picks up: more games on top of the stored ones.
            board = await s.until(
                "/leaderboard?kind=bot",
                lambda body: sum(e["games"] for e in body["entries"]) // 2 >= games_before + 6,
            )
            assert all(
                entry["games"] >= before[name].games for name, entry in board_of(board).items()
            )
            # The owners' tokens still work.
            async with s.http.patch(
                f"{s.base}/bots/random",
                json={"description": "still mine"},
                headers={"authorization": f"Bearer {tokens['random']}"},
            ) as response:
                assert response.status == 200, await response.text()


async def test_the_hosted_bots_can_join_the_ladder(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite"
    async with three_bots() as urls:
        async with game_server(db) as s:  # someone took one of their names first
            await s.register("ThreatBot", urls["threat"])
        settings = LadderSettings(concurrency=1, rate=6000, time_control="turn=0.05", seed=2)
        async with game_server(db, ladder=settings, ladder_hosted_bots=True) as s:
            bots = registered_of((await s.get("/bots"))[1])
            assert {"RandomBot", "CenterBot", "ThreatBot", "SearchBot"} == set(bots)
            owners = {name: bot["owner"] for name, bot in bots.items()}
            assert owners == {
                "RandomBot": "server",
                "CenterBot": "server",
                "SearchBot": "server",
                "ThreatBot": "token",  # theirs: left alone, and it plays on the ladder too
            }
            await s.until("/ladder", lambda body: body["games_finished"] >= 1)


def test_the_token_bucket_spaces_the_starts() -> None:
    bucket = _Bucket(rate=60.0, burst=3, now=0.0)  # one a second, three at most at once
    assert bucket.available(0.0) == 1
    bucket.take(1)
    assert bucket.available(0.5) == 0 and bucket.wait_for_one() == pytest.approx(0.5)
    assert bucket.available(10.0) == 3  # no more than the burst is saved up


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--ladder-concurrency", "4"], "--ladder-concurrency is a ladder setting: add --ladder"),
        (["--ladder", "--ladder-concurrency", "0"], "--ladder-concurrency: concurrency must be"),
        (["--ladder", "--ladder-rate", "0"], "--ladder-rate: rate must be more than 0"),
        (["--ladder", "--ladder-rate", "nan"], "--ladder-rate: rate must be more than 0"),
        (["--ladder", "--ladder-time-control", "40/10"], "--ladder-time-control: time control"),
        (["--ladder", "--ladder-time-control", "100000+0"], "expected at most 86400"),
        (  # every problem of the one clock, each once and named as the flag's text is
            ["--ladder", "--ladder-time-control", "100000+5000"],
            "--ladder-time-control: time control '100000+5000': clock: expected at most 86400 "
            "on this server, got 100000.0; increment: expected at most 3600 on this server, "
            "got 5000.0\n",
        ),
        (["--ladder", "--ladder-concurrency", "9", "--max-games", "8"], "more than --max-games"),
        (
            ["--ladder", "--ladder-hosted-bots", "--deny", "loopback"],
            "--ladder-hosted-bots serves the bots on loopback",
        ),
    ],
)
def test_bad_ladder_flags_are_one_clear_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'x.sqlite'}"
    assert serve.main(["--port", "0", "--db", db, *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


async def test_the_command_line_runs_a_ladder_of_the_hosted_bots_and_stops_cleanly(
    tmp_path: Path,
) -> None:
    flags = ["--ladder", "--ladder-hosted-bots", "--ladder-time-control", "turn=0.05"]
    with server_process(tmp_path, *flags, "--ladder-concurrency", "2") as (process, base):
        assert process.stdout is not None
        banner = [process.stdout.readline() for _ in range(12)]
        assert any(
            line.startswith("  ladder      GET") and "2 at once" in line and "turn=0.05" in line
            for line in banner
        ), banner
        timeout = aiohttp.ClientTimeout(total=TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout) as http:
            s = Server(base, http)
            status = await s.until("/ladder", lambda body: body["games_finished"] >= 2)
            assert status["entrants"] == 4
        process.send_signal(signal.SIGINT)
        assert process.wait(TIMEOUT) == 0


@pytest.mark.parametrize(
    ("time_control", "tag"), [("10+0.1", "timecontrol[10+0.1]"), ("60", "timecontrol[60]")]
)
def test_a_ladder_games_clock_is_the_games_as_other_tools_read_it(
    time_control: str, tag: str
) -> None:
    from game import notation
    from game.ladder_games import game_request
    from game.ladder_pairing import Pairing
    from models import GameRecord, RecordPlayer

    clock = LadderSettings(time_control=time_control).clock
    game = game_request(Pairing("a", "b"), ("http://127.0.0.1:1", "http://127.0.0.1:2"), clock)
    record = GameRecord(
        match=game.match_config,
        player_x=RecordPlayer(name="a", time_control=game.player_x.time_control),
        player_o=RecordPlayer(name="b", time_control=game.player_o.time_control),
    )
    tags = notation.dumps(record).splitlines()
    # Once, as the game's clock: per-side tags alone read elsewhere as an untimed game.
    assert tag in tags
    assert not [line for line in tags if line.startswith(("timecontrolcross", "timecontrolcircle"))]


def test_a_ladder_stall_limit_stays_each_seats_own() -> None:
    from game.ladder_games import game_request
    from game.ladder_pairing import Pairing

    clock = LadderSettings(time_control="stall=30").clock
    game = game_request(Pairing("a", "b"), ("http://127.0.0.1:1", "http://127.0.0.1:2"), clock)
    assert game.match_config.clock_type == "none"
    assert game.player_x.time_control == game.player_o.time_control == clock
