"""``ui.net``, ``ui.socket_link`` and ``ui.arena_client``: the client's network worker,
its sockets and the REST API against a real game server on loopback.

The server runs in a background thread (``tests.ui_server``); Qt runs on the main
thread with the offscreen platform, and every answer arrives as a Qt signal. Timeouts
only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import gc
import logging
import socket
import threading
import time
import warnings
from collections.abc import Iterator

import pytest
from PyQt5.QtCore import QCoreApplication, QThread
from pytestqt.qtbot import QtBot

from game.hexgrid import Hex
from game.store import GamePage
from models import (
    CLOSE_PROTOCOL_ERROR,
    SPECTATOR_PACKETS,
    EndCause,
    GameRecord,
    HostedBot,
    Match,
    NewGameRequest,
    NewGameResponse,
    NopePacket,
    PlayerConfig,
    PlayerType,
    ResultReason,
    parse_packet,
)
from ui.arena_client import ArenaClient
from ui.game_model import GameModel
from ui.net import Call, Network
from ui.seat import GameEnded, HumanSeat, MoveRequested, SeatEvent, Violation
from ui.server_address import ServerAddressError, normalize_server_url
from ui.socket_link import SocketLink

WAIT_MS = 60_000  # only against hangs


# ------------------------------------------------------------------ fixtures


@pytest.fixture
def network() -> Iterator[Network]:
    net = Network()
    yield net
    net.close()
    assert not net.running


@pytest.fixture
def client(network: Network, server_url: str) -> ArenaClient:
    return ArenaClient(network, server_url)


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def result_of(qtbot: QtBot, call: Call) -> object:
    """Wait for the call to finish; its value (a failure fails the test)."""
    failures: list[str] = []
    call.failed.connect(failures.append)
    with qtbot.waitSignals([call.finished], timeout=WAIT_MS, raising=False) as blocker:
        pass
    assert not failures, failures
    assert blocker.signal_triggered, "the call neither finished nor failed"
    return blocker.all_signals_and_args[0].args[0]


def failure_of(qtbot: QtBot, call: Call) -> str:
    with qtbot.waitSignal(call.failed, timeout=WAIT_MS) as blocker:
        pass
    message = blocker.args[0]
    assert isinstance(message, str)
    return message


def bot(client: ArenaClient, name: str) -> PlayerConfig:
    return PlayerConfig(type=PlayerType.BOT, bot_url=f"{client.base_url}/bots/{name}")


def finished_record(qtbot: QtBot, client: ArenaClient, game_id: str) -> GameRecord:
    """The game's record once the server has stored its result."""
    record: object = None

    def stored() -> bool:
        nonlocal record
        record = result_of(qtbot, client.game(game_id))
        return isinstance(record, GameRecord) and record.result is not None

    qtbot.waitUntil(stored, timeout=WAIT_MS)
    assert isinstance(record, GameRecord)
    return record


def start_game(qtbot: QtBot, client: ArenaClient, request: NewGameRequest) -> NewGameResponse:
    created = result_of(qtbot, client.new_game(request))
    assert isinstance(created, NewGameResponse)
    return created


# ---------------------------------------------------------------------- REST


def test_health(qtbot: QtBot, client: ArenaClient) -> None:
    health = result_of(qtbot, client.health())
    assert isinstance(health, dict) and health["status"] == "ok"


def test_answers_reach_their_slots_in_the_gui_thread(qtbot: QtBot, client: ArenaClient) -> None:
    seen: list[tuple[int, bool]] = []
    app = QCoreApplication.instance()
    assert app is not None

    def record(_: object) -> None:
        seen.append((threading.get_ident(), QThread.currentThread() is app.thread()))

    call = client.health()
    call.finished.connect(record)
    with qtbot.waitSignal(call.finished, timeout=WAIT_MS):
        pass
    assert seen == [(threading.main_thread().ident, True)]


def test_the_hosted_bots(qtbot: QtBot, client: ArenaClient) -> None:
    bots = result_of(qtbot, client.bots())
    assert isinstance(bots, list) and all(isinstance(b, HostedBot) for b in bots)
    assert {b.name for b in bots} == {"random", "center", "threat", "search"}
    assert all(b.url == f"{client.base_url}/bots/{b.name}" for b in bots)
    assert all(b.meta is not None and b.meta.name for b in bots)


def test_a_refused_game_shows_the_servers_reason(qtbot: QtBot, client: ArenaClient) -> None:
    request = NewGameRequest(
        player_x=PlayerConfig(type=PlayerType.BOT, bot_url="ftp://example.org/bot"),
        player_o=PlayerConfig(type=PlayerType.HUMAN),
    )
    message = failure_of(qtbot, client.new_game(request))
    assert message.startswith("The server refused the game (422): ")
    assert "ftp://example.org/bot" in message


def test_a_missing_game_is_said_not_to_exist(qtbot: QtBot, client: ArenaClient) -> None:
    # A 404 is no refusal: the game is not there.
    message = failure_of(qtbot, client.game("no-such-game"))
    assert message == f"Game no-such-game does not exist on {client.base_url}"
    message = failure_of(qtbot, client.notation("no-such-game"))
    assert message == f"Game no-such-game does not exist on {client.base_url}"


def test_the_games_list_and_a_record_and_its_notation(qtbot: QtBot, client: ArenaClient) -> None:
    request = NewGameRequest(
        player_x=bot(client, "center"),
        player_o=bot(client, "random"),
        match_config=Match(turn_limit=4),
        name="Short",
    )
    created = start_game(qtbot, client, request)
    record = finished_record(qtbot, client, created.game_id)
    assert len(record.moves) == 4
    page = result_of(qtbot, client.games(limit=5))
    assert isinstance(page, GamePage)
    assert any(item.game_id == created.game_id for item in page.items)
    text = result_of(qtbot, client.notation(created.game_id))
    assert isinstance(text, str) and "name[Short]" in text


def test_an_unreachable_server_fails_with_a_sentence(qtbot: QtBot, network: Network) -> None:
    port = closed_port()
    client = ArenaClient(network, f"127.0.0.1:{port}")
    assert client.base_url == f"http://127.0.0.1:{port}"
    message = failure_of(qtbot, client.health())
    assert message == f"Cannot reach the server at http://127.0.0.1:{port}: connection refused"


def test_https_to_a_plain_http_server_says_so_and_offers_http(
    qtbot: QtBot, network: Network, server_url: str
) -> None:
    # "https://" typed for an "http://" server: OpenSSL's "[SSL: WRONG_VERSION_NUMBER]"
    # told a person nothing they could act on.
    host = server_url.removeprefix("http://")
    client = ArenaClient(network, f"https://{host}")
    message = failure_of(qtbot, client.health())
    assert message == (
        f"Cannot reach the server at https://{host}: it does not speak HTTPS (try http://{host})"
    )
    link = network.open_socket(client.spectate_url("any"))
    failures: list[str] = []
    link.failed.connect(failures.append)
    with qtbot.waitSignal(link.closed, timeout=WAIT_MS):
        pass
    assert failures == [
        f"Cannot connect to the server at wss://{host}: it does not speak HTTPS (try http://{host})"
    ]


def test_a_server_that_never_answers_times_out(qtbot: QtBot, network: Network) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()  # connections queue up; nobody ever answers
        port = silent.getsockname()[1]
        client = ArenaClient(network, f"http://127.0.0.1:{port}")
        message = failure_of(qtbot, client.health(timeout=0.5))
    assert message == (
        f"Timed out after 0.5 s waiting for the server's health from http://127.0.0.1:{port}"
    )


def test_a_cancelled_call_says_nothing(qtbot: QtBot, network: Network) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        call = ArenaClient(network, f"http://127.0.0.1:{silent.getsockname()[1]}").health()
        answers: list[object] = []
        call.finished.connect(answers.append)
        call.failed.connect(answers.append)
        qtbot.waitUntil(lambda: call._future is not None, timeout=WAIT_MS)
        call.cancel()
        # The network lets go of it once the worker has wound it up.
        qtbot.waitUntil(lambda: call not in network._calls, timeout=WAIT_MS)
    assert answers == []


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ("", "Enter the server's address"),
        ("ftp://example.org", "must start with http:// or https://"),
        ("http://", "has no host name"),
        ("http://localhost:port", "its port must be a number from 0 to 65535"),
        ("http://[::1:8001", "its IPv6 host has no closing ]"),
        ("http://localhost:8001/?x=1", "query"),
        ("htp:/nonsense host", "must start with http:// or https://"),
        ("http:/localhost:8001", "must start with http:// or https://"),
        ("http://nonsense host:8001", "must not contain spaces"),
        ("localhost:8001/a b", "must not contain spaces"),
    ],
)
def test_bad_server_addresses_are_refused(network: Network, given: str, problem: str) -> None:
    with pytest.raises(ServerAddressError, match=problem):
        ArenaClient(network, given)
    assert not network.running  # nothing was started for them


def test_socket_addresses_follow_the_base_url(network: Network) -> None:
    assert normalize_server_url("wss://arena.example/htttx/") == "https://arena.example/htttx"
    client = ArenaClient(network, "https://arena.example/htttx")
    assert client.seat_url("a+b/c") == "wss://arena.example/htttx/ws?token=a%2Bb%2Fc"
    assert client.spectate_url("g 1") == "wss://arena.example/htttx/spectate/g%201"
    plain = ArenaClient(network, "http://127.0.0.1:8001")
    assert plain.spectate_url("abc") == "ws://127.0.0.1:8001/spectate/abc"


# ------------------------------------------------------------------- sockets


class SeatDriver:
    """Plays a human seat over a ``SocketLink``: each request is answered with the
    first legal cells in (q, r) order (a winning first stone alone)."""

    def __init__(self, link: SocketLink, seat: HumanSeat) -> None:
        self.link = link
        self.seat = seat
        self.events: list[SeatEvent] = []
        self.sent: list[list[Hex]] = []
        self.closed: list[tuple[int, str]] = []
        link.message.connect(self.on_message)
        link.closed.connect(lambda code, reason: self.closed.append((code, reason)))

    def on_message(self, text: str) -> None:
        for event in self.seat.receive(text):
            self.events.append(event)
            if isinstance(event, Violation):
                self.link.close(CLOSE_PROTOCOL_ERROR, event.reason)
            elif isinstance(event, MoveRequested):
                first = min(event.legal)
                if self.seat.winning_first_stone(first):
                    self.link.send(self.seat.answer(first, None))
                    self.sent.append([first])
                    continue
                assert self.seat.position is not None
                trial = self.seat.position.copy()
                trial.place(*first)
                second = min(trial.legal_cells())
                self.link.send(self.seat.answer(first, second))
                self.sent.append([first, second])


def test_a_human_plays_a_hosted_bot_to_the_end(qtbot: QtBot, client: ArenaClient) -> None:
    request = NewGameRequest(
        player_x=PlayerConfig(type=PlayerType.HUMAN, name="Ada"),
        player_o=bot(client, "random"),
        match_config=Match(turn_limit=12, heartbeat=200),
    )
    created = start_game(qtbot, client, request)
    assert created.token_x is not None and created.token_o is None
    link = client.network.open_socket(client.seat_url(created.token_x))
    driver = SeatDriver(link, HumanSeat("x", match=request.match_config))
    with qtbot.waitSignal(link.closed, timeout=WAIT_MS):
        pass
    assert not any(isinstance(event, Violation) for event in driver.events), driver.events
    ended = [event for event in driver.events if isinstance(event, GameEnded)]
    assert len(ended) == 1
    assert ended[0].packet.reason is ResultReason.DRAW
    assert ended[0].packet.cause is EndCause.TURN_LIMIT
    assert driver.closed == [(1000, "turn limit of 12 moves reached")]
    assert link.is_finished and driver.seat.over
    record = finished_record(qtbot, client, created.game_id)
    played = [
        [p.as_tuple() for p in move.pieces] for move in record.moves if move.side.value == "x"
    ]
    assert played == driver.sent and len(played) == 6


def test_spectating_a_bot_game_to_the_end(qtbot: QtBot, client: ArenaClient) -> None:
    request = NewGameRequest(
        player_x=bot(client, "random"),
        player_o=bot(client, "random"),
        match_config=Match(turn_limit=40),
    )
    created = start_game(qtbot, client, request)
    link = client.network.open_socket(client.spectate_url(created.game_id))
    model = GameModel()
    kinds: list[str] = []
    threads: set[int] = set()

    def on_message(text: str) -> None:
        threads.add(threading.get_ident())
        packet = parse_packet(text, allowed=SPECTATOR_PACKETS)
        kinds.append(packet.type)
        if isinstance(packet, NopePacket):
            raise AssertionError(f"the server refused the spectator: {packet.reason}")
        model.apply(packet, time.monotonic())

    link.message.connect(on_message)
    with qtbot.waitSignal(link.closed, timeout=WAIT_MS) as closed:
        pass
    assert closed.args == [1000, "the game is over"]
    assert kinds[0] == "setup" and kinds[-1] == "end"
    assert threads == {threading.main_thread().ident}
    record = finished_record(qtbot, client, created.game_id)
    assert model.result == record.result and model.game_id == created.game_id
    assert [m.pieces for m in model.moves] == [m.pieces for m in record.moves]
    assert model.to_record().match == request.match_config
    assert not model.live


def test_a_socket_to_an_unreachable_server_fails_then_closes(
    qtbot: QtBot, network: Network
) -> None:
    port = closed_port()
    link = network.open_socket(f"ws://127.0.0.1:{port}/spectate/x")
    failures: list[str] = []
    link.failed.connect(failures.append)
    with qtbot.waitSignal(link.closed, timeout=WAIT_MS) as closed:
        pass
    expected = f"Cannot connect to the server at ws://127.0.0.1:{port}: connection refused"
    assert failures == [expected]
    assert closed.args == [1006, expected]


def test_closing_a_socket_reports_the_close_once(qtbot: QtBot, client: ArenaClient) -> None:
    request = NewGameRequest(
        player_x=PlayerConfig(type=PlayerType.HUMAN), player_o=PlayerConfig(type=PlayerType.HUMAN)
    )
    created = start_game(qtbot, client, request)
    assert created.token_o is not None
    link = client.network.open_socket(client.seat_url(created.token_o))
    closes: list[tuple[int, str]] = []
    link.closed.connect(lambda code, reason: closes.append((code, reason)))
    with qtbot.waitSignal(link.opened, timeout=WAIT_MS):
        pass
    link.close(1000, "Ada left")
    link.close(1000, "twice")  # ignored
    qtbot.waitUntil(lambda: link.is_finished, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: bool(closes), timeout=WAIT_MS)
    assert closes == [(1000, "Ada left")]


# ------------------------------------------------------------------- closing


def test_closing_the_network_stops_its_thread_cleanly(
    qtbot: QtBot, caplog: pytest.LogCaptureFixture
) -> None:
    before = set(threading.enumerate())
    network = Network()
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()  # accepts connections, never answers
        port = silent.getsockname()[1]
        # Work in every state: a call that failed after resolving a host name (in the
        # loop's executor), a call waiting for an answer, a socket waiting to open.
        failure_of(qtbot, ArenaClient(network, f"http://localhost:{closed_port()}").health())
        pending = ArenaClient(network, f"http://127.0.0.1:{port}").games()
        link = network.open_socket(f"ws://127.0.0.1:{port}/spectate/x")
        answers: list[object] = []
        pending.finished.connect(answers.append)
        pending.failed.connect(answers.append)
        closes: list[tuple[int, str]] = []
        link.closed.connect(lambda code, reason: closes.append((code, reason)))
        qtbot.wait(50)  # let both reach the worker
        with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.WARNING):
            warnings.simplefilter("always")
            network.close()
            network.close()  # idempotent
            gc.collect()
    assert not network.running
    assert set(threading.enumerate()) <= before
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []
    assert not [r for r in caplog.records if r.name in ("asyncio", "ui.net")], caplog.records
    qtbot.waitUntil(lambda: bool(closes), timeout=WAIT_MS)
    assert closes == [(1001, "the client is closing")]
    assert answers == []  # a cancelled call says nothing
    with pytest.raises(RuntimeError, match="closed"):
        network.start()
