"""Tournaments on a cluster: coordinated by one worker, played by all of them through
the work queue in PostgreSQL (``game.store.work``, ``game.cluster_work``).

The first tests run three workers in this test process (each a game server on a
loopback port of its own, sharing a real PostgreSQL and a real Redis); the last runs
them as processes of their own and kills one with SIGKILL in the middle of a
500-game tournament."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, ClassVar

from bot.bot import Deadline, MoveDecision
from bot.bots import RandomBot
from bot.serve import create_app, serving
from game.cluster import Leases
from game.rules import Position
from game.server_state import _Runtime
from game.store import GameStore, RecordStatus
from models import Match, Player
from tests.test_cluster import Cluster, Worker, _free_port, workers

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 240.0  # only against hangs
#: Short leases: a stopped coordinator is replaced within a second.
LEASES = Leases(0.9)
#: The worker processes' lease: long enough for a loaded machine not to stall past it.
PROCESS_LEASE = "3"

Json = dict[str, Any]


def runtime(worker: Worker) -> _Runtime:
    arena: _Runtime = worker.server.app.state.arena
    return arena


def adopted(worker: Worker) -> list[str]:
    remote = runtime(worker).tournaments.remote
    assert remote is not None
    return remote.adopted


async def post(
    cluster: Cluster, url: str, body: Json, headers: dict[str, str] | None = None
) -> tuple[int, Json]:
    async with cluster.http.post(url, json=body, headers=headers) as response:
        return response.status, await response.json()


async def until_view(
    cluster: Cluster, base: str, tournament_id: str, ready: Callable[[Json], bool]
) -> Json:
    """The tournament as ``base`` shows it, once ``ready`` says it is."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            status, view = await cluster.get(f"{base}/tournaments/{tournament_id}")
            assert status == 200, view
            if ready(view):
                return dict(view)
            await asyncio.sleep(0.05)


async def until_over(cluster: Cluster, base: str, tournament_id: str) -> Json:
    return await until_view(cluster, base, tournament_id, lambda view: view["status"] != "running")


async def create(cluster: Cluster, base: str, body: Json) -> str:
    """The id of the tournament ``body`` creates through ``base``."""
    status, created = await post(cluster, f"{base}/tournaments", body)
    assert status == 201, created
    return str(created["tournament_id"])


def tournament(bots: str, *, rounds: int, concurrency: int) -> Json:
    """A round robin of the center and random bots served under ``bots``: 2 games a
    round, short ones."""
    return {
        "name": "spread",
        "bots": [
            {"name": "center", "url": f"{bots}/center"},
            {"name": "random", "url": f"{bots}/random"},
        ],
        "rounds": rounds,
        "concurrency": concurrency,
        "openings": "none",
        "match": {"turn_limit": 24},
    }


async def exactly_once(db_url: str, tournament_id: str, games: int) -> list[str]:
    """Every game of the tournament counted once, each from a finished record; the
    ids of the counted games."""
    async with await GameStore.open(db_url) as store:
        rows = await store.tournaments.games(tournament_id)
        assert sorted(row.idx for row in rows) == list(range(games))
        assert all(row.status == "done" and row.outcome is not None for row in rows)
        assert all(row.game_status == RecordStatus.FINISHED.value for row in rows)
        assert len({row.game_id for row in rows}) == games
        assert await store.work.counts() == {}  # nothing left in the queue
        return [row.game_id for row in rows]


class GatedBot(RandomBot):
    """RandomBot that answers only once the test opens ``gate`` (or after a while): its
    games stay in flight for as long as a test looks at them."""

    gate: ClassVar[threading.Event] = threading.Event()

    def play(
        self, position: Position, player: Player, match: Match, deadline: Deadline
    ) -> MoveDecision:
        self.gate.wait(TIMEOUT / 4)  # on the bot server's thread, not its loop
        return super().play(position, player, match, deadline)


@asynccontextmanager
async def gated_bots() -> AsyncIterator[str]:
    """Two gated bots served on a loopback port (``<base>/a``, ``<base>/b``), the gate
    closed until the block ends."""
    GatedBot.gate = threading.Event()
    app = create_app({"/a": GatedBot, "/b": GatedBot}, workers=8)
    try:
        async with serving(app) as server:
            yield server.url
    finally:
        GatedBot.gate.set()


async def games_running_on(cluster: Cluster, base: str, game_ids: list[str]) -> bool:
    """Whether every game of ``game_ids`` is running, as ``base`` shows its record."""
    for game_id in game_ids:
        status, record = await cluster.get(f"{base}/games/{game_id}")
        if status != 200 or record["result"] is not None:
            return False
    return True


async def test_every_worker_shows_a_tournaments_and_a_series_games_in_flight(
    cluster: Cluster,
) -> None:
    async with (
        gated_bots() as bots,
        workers(cluster, "worker-a", leases=LEASES, work_slots=0) as (a,),  # coordinates
        workers(cluster, "worker-b", leases=LEASES) as (b,),  # plays
    ):
        body = {
            "bots": [{"name": "one", "url": f"{bots}/a"}, {"name": "two", "url": f"{bots}/b"}],
            "rounds": 2,
            "concurrency": 2,
            "openings": "none",
            "match": {"turn_limit": 8},
        }
        tournament_id = await create(cluster, a.base, body)
        coordinated = await until_view(
            cluster, a.base, tournament_id, lambda view: view["games_running"] == 2
        )
        # Any worker says the same of the games in flight: those b plays.
        _, elsewhere = await cluster.get(f"{b.base}/tournaments/{tournament_id}")
        assert elsewhere["games_running"] == 2, elsewhere
        assert elsewhere["live_games"] == coordinated["live_games"]
        assert await games_running_on(cluster, b.base, elsewhere["live_games"])
        # A series: one game in flight, which every worker lists as running.
        series = {
            "player_a": {"name": "one", "bot_url": f"{bots}/a"},
            "player_b": {"name": "two", "bot_url": f"{bots}/b"},
            "best_of": 1,
            "openings": "none",
            "match": {"turn_limit": 8},
        }
        status, created = await post(cluster, f"{a.base}/series", series)
        assert status == 201, created
        series_url = f"/series/{created['series_id']}"
        async with asyncio.timeout(TIMEOUT):
            while True:
                _, on_a = await cluster.get(a.base + series_url)
                if on_a["games_running"] == 1:
                    break
                await asyncio.sleep(0.05)
        for worker in (a, b):
            _, view = await cluster.get(worker.base + series_url)
            running = [game for game in view["games"] if game["status"] == "running"]
            assert view["games_running"] == len(running) == 1, (worker.id, view)
        GatedBot.gate.set()
        over = await until_over(cluster, b.base, tournament_id)
        assert over["status"] == "finished", over["reason"]
        assert over["games_running"] == 0 and over["live_games"] == []


async def test_a_tournament_is_played_by_every_worker_and_counted_once(cluster: Cluster) -> None:
    async with workers(cluster, "worker-a", "worker-b", "worker-c", leases=LEASES) as started:
        a, _, worker_c = started
        body = tournament(f"{a.base}/bots", rounds=15, concurrency=6)
        tournament_id = await create(cluster, a.base, body)
        # Any worker shows it, the one coordinating it live.
        view = await until_over(cluster, worker_c.base, tournament_id)
        assert view["status"] == "finished", view["reason"]
        assert view["games_done"] == view["games_counted"] == 30
        assert sum(line["games"] for line in view["standings"]) == 60
        await exactly_once(cluster.db_url, tournament_id, 30)
        played = {w.id: runtime(w).work.played for w in started}  # type: ignore[union-attr]
        assert sum(played.values()) == 30
        assert sum(1 for count in played.values() if count > 0) >= 2, played
        # Done: nothing queued, nobody coordinates it any more.
        _, listed = await cluster.get(f"{a.base}/cluster")
        assert listed["work_queue"] == {} and listed["coordinating"] == []
        assert listed["playing"] == 0


async def test_a_coordinator_that_shuts_down_hands_its_tournament_over(cluster: Cluster) -> None:
    async with (
        workers(cluster, "worker-a", leases=LEASES, work_slots=0) as (
            a,
        ),  # coordinates, plays nothing
        workers(cluster, "worker-b", "worker-c", leases=LEASES) as (b, worker_c),
    ):
        body = tournament(f"{b.base}/bots", rounds=20, concurrency=4)
        tournament_id = await create(cluster, a.base, body)
        await until_view(cluster, b.base, tournament_id, lambda view: view["games_done"] >= 5)
        await a.stop()  # its run is handed over, not interrupted
        view = await until_over(cluster, b.base, tournament_id)
        assert view["status"] == "finished", view["reason"]
        assert view["games_done"] == 40
        await exactly_once(cluster.db_url, tournament_id, 40)
        coordinators = [w.id for w in (b, worker_c) if tournament_id in adopted(w)]
        assert coordinators, "nobody adopted the tournament"


# ------------------------------------------------------------- worker processes


@contextmanager
def process(args: list[str], port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``python <args>`` from the repository's root, once it answers on ``port``, its
    output to ``log``; stopped (killed if need be) on exit."""
    with log.open("ab") as output:
        proc = subprocess.Popen(
            [sys.executable, *args], cwd=ROOT, stdout=output, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"{args!r} exited with {proc.returncode}"
            assert time.monotonic() < deadline, f"{args!r} did not listen"
            try:
                with socket.create_connection(("127.0.0.1", port), 0.2):
                    break
            except OSError:
                time.sleep(0.05)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


async def test_a_500_game_tournament_survives_a_worker_killed_in_the_middle(
    cluster: Cluster, tmp_path: Path
) -> None:
    bot_port = _free_port()
    bot_args = ["-m", "bot.serve", "--port", str(bot_port), "--log-level", "warning"]
    bot_args += ["--bot", "center=bot.bots:CenterBot", "--bot", "random=bot.bots:RandomBot"]
    ports = [_free_port() for _ in range(3)]
    with process(bot_args, bot_port, tmp_path / "bots.log"):
        procs: list[subprocess.Popen[bytes]] = []
        with ExitStack() as stack:
            for index, port in enumerate(ports, 1):
                args = ["-m", "game.serve", "--port", str(port), "--db", cluster.db_url]
                args += ["--redis", cluster.redis_url, "--worker-id", f"worker-{index}"]
                args += ["--lease", PROCESS_LEASE, "--log-level", "warning"]
                log = tmp_path / f"worker-{index}.log"
                procs.append(stack.enter_context(process(args, port, log)))
            bases = [f"http://127.0.0.1:{port}" for port in ports]
            body = tournament(f"http://127.0.0.1:{bot_port}", rounds=250, concurrency=12)
            tournament_id = await create(cluster, bases[0], body)
            await until_view(
                cluster, bases[1], tournament_id, lambda view: view["games_done"] >= 150
            )
            # The coordinator, in the middle of its games: no goodbye, no cleanup.
            os.kill(procs[0].pid, signal.SIGKILL)
            procs[0].wait()
            view = await until_over(cluster, bases[1], tournament_id)
            logs = {path.name: path.read_text() for path in tmp_path.glob("*.log")}
            assert view["status"] == "finished", (view["reason"], logs)
            assert view["games_done"] == view["games_counted"] == 500
            await exactly_once(cluster.db_url, tournament_id, 500)
            # What worker-1 was playing when it died is recorded so, with the cause.
            async with await GameStore.open(cluster.db_url) as store:
                running = await store.list_games(status=RecordStatus.RUNNING, limit=10)
                assert running.items == []
                aborted = await store.list_games(status=RecordStatus.ABORTED, limit=200)
                causes: Counter[str | None] = Counter()
                for summary in aborted.items:
                    record = await store.get_game(summary.game_id)
                    assert record is not None and record.result is not None
                    causes[record.result.detail] += 1
                assert causes, "worker-1 was playing no game when it died"
                assert all("worker-1" in str(detail) for detail in causes), causes


async def test_a_tournament_is_stopped_and_resumed_through_any_worker(cluster: Cluster) -> None:
    async with workers(cluster, "worker-a", "worker-b", leases=LEASES) as (a, b):
        body = tournament(f"{a.base}/bots", rounds=20, concurrency=3)
        status, created = await post(cluster, f"{a.base}/tournaments", body)
        assert status == 201, created
        tournament_id = created["tournament_id"]
        creator = {"authorization": f"Bearer {created['control_token']}"}
        await until_view(cluster, a.base, tournament_id, lambda view: view["games_done"] >= 3)
        # Any worker knows whose it is (the store has the token's hash): not a stranger's.
        stop = f"{b.base}/tournaments/{tournament_id}/stop"
        status, refused = await post(cluster, stop, {})
        assert status == 403, refused
        # Stopped through b, which does not coordinate it: a stops its run.
        status, _ = await post(cluster, stop, {}, creator)
        assert status == 200
        view = await until_view(
            cluster,
            a.base,
            tournament_id,
            lambda view: view["status"] == "stopped" and view["games_running"] == 0,
        )
        assert view["reason"] == "stopped on request"
        await asyncio.sleep(LEASES.heartbeat * 2)  # nothing is played meanwhile
        _, still = await cluster.get(f"{b.base}/tournaments/{tournament_id}")
        assert still["status"] == "stopped" and still["games_done"] == view["games_done"]
        # Resumed through b: b coordinates it now, and it finishes.
        resume = f"{b.base}/tournaments/{tournament_id}/resume"
        status, resumed = await post(cluster, resume, {}, creator)
        assert status == 200, resumed
        finished = await until_over(cluster, a.base, tournament_id)
        assert finished["status"] == "finished", finished["reason"]
        await exactly_once(cluster.db_url, tournament_id, 40)
