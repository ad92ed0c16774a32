"""The game page /g/<id> in headless Chromium against a real server with real bots.

A human seat played by the test (``PacedHuman``, a WebSocket client in a thread) keeps
a live game going for a few seconds against a hosted bot, so the page is seen following
it; finished games come from two hosted bots. Stones are read from the DOM (each stone
has ``data-q``, ``data-r``, ``data-p``) and compared with the server's record.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, WebSocket, WebSocketRoute, expect
from websockets.sync.client import connect

from game.rules import Position
from tests.browser import PHONE, WebPage, chromium, web_page
from tests.http_json import finished_record, get_ok, get_text, post_ok
from tests.tcp_proxy import TcpProxy
from tests.ui_server import game_server, restartable_game_server

__all__ = ["chromium", "web_page"]  # fixtures, imported to be found by pytest

Json = dict[str, Any]

#: Only against hangs: every game here ends in a few seconds.
TIMEOUT = 60.0
RECONNECT_ERRORS = [re.compile(r"WebSocket connection to .* failed")]


# ------------------------------------------------------------------ helpers


def bot(url: str, name: str) -> Json:
    return {"type": "bot", "bot_url": f"{url}/bots/{name}"}


def finished_game(url: str, x: str = "random", o: str = "random", turn_limit: int = 20) -> Json:
    created = post_ok(
        f"{url}/game/new",
        {
            "player_x": bot(url, x),
            "player_o": bot(url, o),
            "match_config": {"turn_limit": turn_limit},
        },
    )
    return finished_record(url, created["game_id"])


def record_stones(record: Json, ply: int | None = None) -> set[tuple[int, int, str]]:
    stones = {(c["q"], c["r"], c["p"]) for c in record["setup"]}
    for move in record["moves"][:ply]:
        stones |= {(p["q"], p["r"], move["side"]) for p in move["pieces"]}
    return stones


def page_stones(page: Page) -> set[tuple[int, int, str]]:
    cells = page.eval_on_selector_all(
        "svg.board .stone", "nodes => nodes.map(n => [n.dataset.q, n.dataset.r, n.dataset.p])"
    )
    return {(int(q), int(r), str(p)) for q, r, p in cells}


def stone_count(page: Page) -> int:
    return int(page.eval_on_selector_all("svg.board .stone", "nodes => nodes.length"))


class PacedHuman(threading.Thread):
    """A human seat the test plays: random legal stones, each move after ``pause``
    seconds, so the game lasts long enough to be watched."""

    def __init__(self, ws_url: str, pause: float, match: Json) -> None:
        super().__init__(name="paced human", daemon=True)
        self.ws_url = ws_url
        self.pause = pause
        self.match = match
        self.moves = 0
        self.error: BaseException | None = None
        self.random = random.Random(13)

    def run(self) -> None:
        try:
            with connect(self.ws_url, open_timeout=TIMEOUT) as ws:
                for message in ws:
                    packet = json.loads(message)
                    if packet["type"] == "end":
                        return
                    if packet["type"] == "move_request":
                        time.sleep(self.pause)
                        ws.send(json.dumps(self.answer(packet)))
                        self.moves += 1
        except BaseException as exc:  # reported by the test
            self.error = exc

    def answer(self, request: Json) -> Json:
        stones = [(c["q"], c["r"], c["p"]) for c in request["board"]["cells"]]
        position = Position(
            self.match.get("view_distance", 8),
            self.match.get("win_distance", 6),
            setup=stones,
            to_move=request["side"],
        )
        pieces: list[Json] = []
        for _ in range(2):
            if position.outcome is not None:
                pieces.append(pieces[-1])  # the first stone won: the second is ignored
                continue
            q, r = self.random.choice(sorted(position.legal_cells()))
            position.place(q, r)
            pieces.append({"q": q, "r": r})
        # Like a searching bot: an evaluation and the alternatives weighed, best first.
        others = sorted(position.legal_cells())[:3] if position.outcome is None else []
        considerations = [{"pieces": pieces, "evaluation": {"heuristic": 0.25}}]
        if len(others) == 3:  # two alternatives sharing their first stone, as a search's do
            for second in others[1:]:
                considerations.append(
                    {"pieces": [{"q": q, "r": r} for q, r in (others[0], second)]}
                )
        return {
            "type": "move_response",
            "move": {"pieces": pieces, "evaluation": {"heuristic": 0.25}},
            "considerations": considerations,
        }


LIVE_MATCH: Json = {"turn_limit": 16, "clock_type": "match", "clock": 120}


def live_game(url: str, pause: float = 0.25) -> tuple[str, PacedHuman]:
    """A game between the test's paced human (X) and the random bot, started now."""
    created = post_ok(
        f"{url}/game/new",
        {
            "player_x": {"type": "human", "name": "tester"},
            "player_o": bot(url, "random"),
            "match_config": LIVE_MATCH,
        },
    )
    ws_url = "ws" + url[4:] + f"/ws?token={created['token_x']}"
    human = PacedHuman(ws_url, pause, LIVE_MATCH)
    human.start()
    return created["game_id"], human


def wait_until_moves(url: str, game_id: str, count: int) -> Json:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        record = get_ok(f"{url}/games/{game_id}")
        if len(record["moves"]) >= count:
            return record
        time.sleep(0.05)
    raise AssertionError(f"game {game_id} never reached {count} moves")


def open_game(page: Page, url: str, game_id: str) -> None:
    page.goto(f"{url}/g/{game_id}")
    page.wait_for_selector("body[data-rendered='1']")


def wait_for_end(page: Page) -> None:
    expect(page.locator(".result")).to_be_visible(timeout=TIMEOUT * 1000)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with game_server(tmp_path_factory.mktemp("web-game-page")) as url:
        yield url


@pytest.fixture(scope="module")
def finished(server: str) -> Json:
    """A finished game of some length, shared by the replay tests (read-only)."""
    return finished_game(server, turn_limit=20)


# ------------------------------------------------------------------ live


def test_a_live_game_is_followed_to_its_end_stone_by_stone(web_page: WebPage, server: str) -> None:
    game_id, human = live_game(server)
    page = web_page.page
    open_game(page, server, game_id)
    # While it runs: the clocks are shown and one seat is marked to move.
    expect(page.locator(".game-title .badge")).to_have_text("live")
    expect(page.locator("nav a[aria-current=page]")).to_have_text("Live")
    expect(page.locator(".seat.to-move")).to_have_count(1)
    assert re.fullmatch(r"\d+:\d\d", page.locator(".seat-x .clock").inner_text())
    wait_for_end(page)
    human.join(TIMEOUT)
    assert human.error is None, human.error
    record = finished_record(server, game_id)
    assert page_stones(page) == record_stones(record)
    assert page.locator(".move-list .turn").count() == len(record["moves"])
    expect(page.locator(".seat.to-move")).to_have_count(0)
    expect(page.locator(".game-title .badge")).to_have_text("finished")
    # Over, the game belongs with the games' list in the top bar, no longer with Live.
    expect(page.locator("nav a[aria-current=page]")).to_have_text("Games")
    # Nobody panned: the view grew with the game, every stone stayed in sight.
    assert all_stones_in_view(page)


HUMANS: Json = {
    "player_x": {"type": "human", "name": "early"},
    "player_o": {"type": "human", "name": "late"},
}


def open_waiting_game(page: Page, server: str) -> Json:
    """A game of two people on a minute each, neither connected yet, open on ``page``
    (its clock under the test's control): what ``POST /game/new`` answered."""
    match_config = {"clock_type": "match", "clock": 60}
    created = post_ok(f"{server}/game/new", dict(HUMANS, match_config=match_config))
    page.clock.install()
    open_game(page, server, created["game_id"])
    expect(page.locator(".game-title .badge")).to_have_text("waiting")
    return created


def test_a_game_waiting_for_its_players_runs_no_clock(web_page: WebPage, server: str) -> None:
    # Two people who have not connected yet: the server runs no clock until both came.
    page = web_page.page
    open_waiting_game(page, server)
    expect(page.locator(".seat-o .clock")).to_have_text("1:00")
    page.clock.run_for(10_000)
    expect(page.locator(".seat-o .clock")).to_have_text("1:00")
    expect(page.locator(".game-title .badge")).to_have_text("waiting")
    expect(page.locator(".seat.to-move")).to_have_count(0)
    page.goto("about:blank")


def test_the_page_shows_the_game_begun_as_soon_as_both_players_came(
    web_page: WebPage, server: str
) -> None:
    # O's clock runs from the moment both came, long before O's first move shows it.
    page = web_page.page
    created = open_waiting_game(page, server)
    ws = "ws" + server[4:] + "/ws?token="
    with (
        connect(ws + created["token_x"], open_timeout=TIMEOUT),
        connect(ws + created["token_o"], open_timeout=TIMEOUT),
    ):
        expect(page.locator(".game-title .badge")).to_have_text("live")
        expect(page.locator(".seat-o.to-move")).to_have_count(1)
        page.clock.run_for(10_000)
        expect(page.locator(".seat-o .clock")).to_have_text(re.compile(r"0:(49|50)"))
        expect(page.locator(".seat-x .clock")).to_have_text("1:00")
    page.goto("about:blank")


def test_an_aborted_game_is_badged_aborted_as_the_games_list_says(
    web_page: WebPage, tmp_path: Path
) -> None:
    with restartable_game_server(tmp_path) as server:
        created = post_ok(f"{server.url}/game/new", dict(HUMANS, match_config={}))
        server.restart()  # the game was running: the stop aborted it
        record = finished_record(server.url, created["game_id"])
        assert record["result"]["cause"] == "aborted"
        page = web_page.page
        open_game(page, server.url, created["game_id"])
        expect(page.locator(".game-title .badge")).to_have_text("aborted")
        page.goto("about:blank")


def test_a_finished_games_setup_shows_it_finished_before_its_end_comes(
    web_page: WebPage, server: str, finished: Json
) -> None:
    # A finished game's spectator socket sends its setup (status x_wins, o_wins or draw),
    # then its end: held back here, as on a slow link, the page must not say "live" nor
    # show the raw status meanwhile.
    def route(ws: WebSocketRoute) -> None:
        upstream = ws.connect_to_server()

        def relay(message: str | bytes) -> None:
            if not (isinstance(message, str) and json.loads(message)["type"] == "end"):
                ws.send(message)

        upstream.on_message(relay)

    page = web_page.page
    page.route_web_socket(re.compile(r"/spectate/"), route)
    open_game(page, server, finished["game_id"])
    game_id = finished["game_id"]
    expect(page.locator(".game-title .badge")).to_have_text("finished")
    expect(page.locator("nav a[aria-current=page]")).to_have_text("Games")
    expect(page.locator(".open-in .command")).to_have_text(f"htttx-ui --open {server}/g/{game_id}")
    expect(page.locator(".result")).to_be_hidden()  # its text comes with the end
    assert page_stones(page) == record_stones(finished)


def test_a_late_joiner_sees_the_whole_history(web_page: WebPage, server: str) -> None:
    game_id, human = live_game(server, pause=0.3)
    before = wait_until_moves(server, game_id, 5)
    page = web_page.page
    open_game(page, server, game_id)
    played = page.locator(".move-list .turn").count()
    assert played >= len(before["moves"])
    # The history is the game's own, from move 1: the page's first stones are the record's.
    assert record_stones(before) <= page_stones(page)
    wait_for_end(page)
    human.join(TIMEOUT)
    assert page_stones(page) == record_stones(finished_record(server, game_id))


def test_considerations_are_drawn_for_the_move_viewed(web_page: WebPage, server: str) -> None:
    game_id, human = live_game(server, pause=0.05)
    human.join(TIMEOUT)
    record = finished_record(server, game_id)
    page = web_page.page
    open_game(page, server, game_id)
    first = record["moves"][1]  # X's first (O moves first), the test's human's
    assert first["side"] == "x" and first["considerations"]
    page.locator(".move-list .turn[data-ply='2']").click()
    expected = {(p["q"], p["r"]) for c in first["considerations"] for p in c["pieces"]}
    drawn = page.eval_on_selector_all(
        "svg.board .consideration",
        "ns => ns.map(n => [+n.dataset.q, +n.dataset.r, +n.dataset.rank])",
    )
    assert {(q, r) for q, r, _ in drawn} == expected
    # Each cell once, with the best option's number: the shared first stone shows 2.
    ranks = {(q, r): rank for q, r, rank in drawn}
    assert len(drawn) == len(ranks)
    shared = first["considerations"][1]["pieces"][0]
    assert ranks[(shared["q"], shared["r"])] == 2
    listed = page.locator(".consider-list li")
    expect(listed).to_have_count(len(first["considerations"]))
    expect(listed.first).to_have_class(re.compile("played"))
    expect(page.locator(".eval-label")).to_have_text("tester: +0.25")
    page.locator("button.next").click()  # O's move: the random bot weighed nothing
    expect(page.locator("svg.board .consideration")).to_have_count(0)
    expect(page.locator(".considerations-panel")).to_be_hidden()


def test_stepping_back_in_a_live_game_stops_following_until_back_to_live(
    web_page: WebPage, server: str
) -> None:
    game_id, human = live_game(server, pause=0.5)
    wait_until_moves(server, game_id, 3)
    page = web_page.page
    open_game(page, server, game_id)
    page.locator("button.first").click()
    assert stone_count(page) == 1
    expect(page.locator("button.back-to-live")).to_be_visible()
    wait_until_moves(server, game_id, 6)
    page.wait_for_timeout(300)
    assert stone_count(page) == 1  # new moves do not drag the view forward
    page.locator("button.back-to-live").click()
    expect(page.locator("button.back-to-live")).to_be_hidden()
    ply = int(page.locator("svg.board").get_attribute("data-ply") or "-1")
    assert ply == page.locator(".move-list .turn").count()
    wait_for_end(page)
    human.join(TIMEOUT)


def test_a_dropped_socket_reconnects_and_the_game_ends_right(
    web_page: WebPage, server: str
) -> None:
    web_page.allowed_errors.extend(RECONNECT_ERRORS)
    port = urlsplit(server).port
    assert port is not None
    with TcpProxy(port) as proxy:
        proxied = f"http://127.0.0.1:{proxy.port}"
        game_id, human = live_game(server, pause=0.4)
        page = web_page.page
        open_game(page, proxied, game_id)
        wait_until_moves(server, game_id, 3)
        assert proxy.cut() > 0
        expect(page.locator(".connection")).to_have_text(re.compile("reconnecting"))
        expect(page.locator(".connection")).to_have_text("Reconnected", timeout=TIMEOUT * 1000)
        wait_for_end(page)
        human.join(TIMEOUT)
        record = finished_record(server, game_id)
        assert page_stones(page) == record_stones(record)
        # The reconnect's setup replaced the history: no move listed twice.
        assert page.locator(".move-list .turn").count() == len(record["moves"])


# ------------------------------------------------------------------ replay


def test_a_finished_game_replays_by_buttons_keys_and_slider(
    web_page: WebPage, server: str, finished: Json
) -> None:
    page = web_page.page
    open_game(page, server, finished["game_id"])
    total = len(finished["moves"])
    assert total >= 4
    assert page_stones(page) == record_stones(finished)

    def shows(ply: int) -> None:
        expect(page.locator("svg.board")).to_have_attribute("data-ply", str(ply))
        assert page_stones(page) == record_stones(finished, ply)

    page.locator("button.first").click()
    shows(0)
    page.locator("button.next").click()
    page.locator("button.next").click()
    shows(2)
    page.locator("button.prev").click()
    shows(1)
    page.locator("button.last").click()
    shows(total)
    page.locator("svg.board").focus()
    page.keyboard.press("Home")
    shows(0)
    page.keyboard.press("ArrowRight")
    shows(1)
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    shows(total - 1)
    page.locator(".ply-slider").fill("3")
    shows(3)
    page.locator(".move-list .turn[data-ply='2']").click()
    shows(2)
    expect(page.locator(".move-list .turn.current")).to_have_attribute("data-ply", "2")
    expect(page.locator("button.back-to-live")).to_be_hidden()  # not live


def test_the_move_list_is_the_notation_of_the_server(
    web_page: WebPage, server: str, finished: Json
) -> None:
    game_id = finished["game_id"]
    page = web_page.page
    open_game(page, server, game_id)
    notation = get_text(f"{server}/games/{game_id}/notation")
    turns = [line for line in notation.splitlines() if re.match(r"\d+\. ", line)]
    listed = page.eval_on_selector_all(".move-list .turn", "nodes => nodes.map(n => n.textContent)")
    assert listed == turns
    link = page.locator("a.download")
    assert link.get_attribute("href") == f"/games/{game_id}/notation?download=1"
    assert link.get_attribute("download") == f"{game_id}.htttx"
    expect(page.locator(".open-in .command")).to_have_text(f"htttx-ui --open {server}/g/{game_id}")


def test_a_won_game_marks_its_line_and_evaluations_are_graphed(
    web_page: WebPage, server: str
) -> None:
    record = finished_game(server, x="threat", o="random", turn_limit=40)
    assert record["result"]["reason"] == "win" and record["result"]["cause"] is None
    page = web_page.page
    open_game(page, server, record["game_id"])
    line = page.locator("svg.board .win-line").get_attribute("data-cells") or ""
    cells = [tuple(map(int, cell.split(","))) for cell in line.split()]
    winner = record["result"]["winner"]
    assert len(cells) >= record["match"]["win_distance"]
    assert {(q, r, winner) for q, r in cells} <= record_stones(record)
    # ThreatBot reports evaluations: the graph has a point per evaluated move.
    evaluated = sum(1 for move in record["moves"] if move["evaluation"])
    assert evaluated > 0
    expect(page.locator(".eval-graph .point.mover")).to_have_count(evaluated)
    page.locator(".eval-graph").click(position={"x": 2, "y": 40})
    expect(page.locator("svg.board")).to_have_attribute("data-ply", "0")


def test_analysis_packets_are_graphed_and_unknown_packets_ignored(
    web_page: WebPage, server: str, finished: Json
) -> None:
    # Packets the test chooses, slipped into the real socket after its setup as an
    # analysing server would send them, plus a type nobody knows.
    def route(ws: WebSocketRoute) -> None:
        upstream = ws.connect_to_server()

        def relay(message: str | bytes) -> None:
            ws.send(message)
            if isinstance(message, str) and json.loads(message)["type"] == "setup":
                ws.send(json.dumps({"type": "from_the_future", "ply": "x"}))
                analysis = {"heuristic": 0.35}
                ws.send(
                    json.dumps(
                        {"type": "analysis", "ply": 2, "evaluation": analysis, "bot": "deep"}
                    )
                )
                ws.send(json.dumps({"type": "analysis", "ply": 3, "evaluation": {"win_in": -4}}))

        upstream.on_message(relay)

    page = web_page.page
    page.route_web_socket(re.compile(r"/spectate/"), route)
    open_game(page, server, finished["game_id"])
    assert not any(m["evaluation"] for m in finished["moves"])  # random bots evaluate nothing
    expect(page.locator(".eval-panel")).to_be_visible()
    expect(page.locator(".eval-graph .point.analysis")).to_have_count(2)
    page.locator(".move-list .turn[data-ply='2']").click()
    expect(page.locator(".eval-label")).to_have_text("deep: +0.35")
    page.keyboard.press("ArrowRight")
    expect(page.locator(".eval-label")).to_have_text("analysis: O wins in 4")
    page.keyboard.press("End")
    assert page_stones(page) == record_stones(finished)  # the game itself is untouched


def test_the_page_reads_the_compact_stream_and_graphs_the_servers_analysis(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    sockets: list[str] = []
    frames: list[str] = []

    def on_socket(socket: WebSocket) -> None:
        sockets.append(socket.url)
        socket.on("framereceived", lambda payload: frames.append(str(payload)))

    page.on("websocket", on_socket)
    with game_server(tmp_path, analysis_bot="threat", analysis_time=0.5) as url:
        game_id, human = live_game(url)
        open_game(page, url, game_id)
        wait_for_end(page)
        human.join(TIMEOUT)
        record = finished_record(url, game_id)
    assert page_stones(page) == record_stones(record)
    # The server's own analysis bot (ThreatBot) evaluated the positions the page watched.
    assert page.locator(".eval-graph .point.analysis").count() > 0
    packets = [json.loads(frame) for frame in frames]
    assert any(p["type"] == "analysis" and p["bot"] == "ThreatBot" for p in packets)
    # Updates without the board: a few hundred bytes each, however long the game.
    assert sockets and all(socket.endswith("?board=0") for socket in sockets)
    updates = [p for p in packets if p["type"] == "board_update"]
    assert updates and not any("board" in update for update in updates)


# ------------------------------------------------------------------ view


def view_box(page: Page) -> list[float]:
    return [float(v) for v in (page.locator("svg.board").get_attribute("data-view") or "").split()]


def all_stones_in_view(page: Page) -> bool:
    x, y, w, h = view_box(page)
    centres = page.eval_on_selector_all(
        "svg.board .stone", "ns => ns.map(n => [+n.getAttribute('cx'), +n.getAttribute('cy')])"
    )
    return all(x <= sx <= x + w and y <= sy <= y + h for sx, sy in centres)


def test_a_zoomed_live_board_is_not_refitted_until_asked(web_page: WebPage, server: str) -> None:
    game_id, human = live_game(server, pause=0.4)
    page = web_page.page
    open_game(page, server, game_id)
    box = page.locator("svg.board").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -600)  # close in on the first stones
    zoomed = view_box(page)
    wait_for_end(page)
    human.join(TIMEOUT)
    assert view_box(page) == zoomed  # the user's view is kept while the game grows
    page.get_by_role("button", name="Fit board").click()
    assert all_stones_in_view(page)


def test_two_fingers_pinch_zoom(web_page: WebPage, server: str, finished: Json) -> None:
    page = web_page.page
    open_game(page, server, finished["game_id"])
    before = view_box(page)
    # Two touch pointers moving apart, as a phone's browser reports a pinch.
    page.evaluate(
        """() => {
        const svg = document.querySelector("svg.board");
        const box = svg.getBoundingClientRect();
        const cx = box.left + box.width / 2, cy = box.top + box.height / 2;
        const send = (type, id, x) => svg.dispatchEvent(new PointerEvent(type, {
            pointerId: id, pointerType: "touch", clientX: x, clientY: cy, bubbles: true }));
        send("pointerdown", 11, cx - 20);
        send("pointerdown", 12, cx + 20);
        for (let step = 1; step <= 5; step++) {
            send("pointermove", 11, cx - 20 - step * 16);
            send("pointermove", 12, cx + 20 + step * 16);
        }
        send("pointerup", 11, cx - 100);
        send("pointerup", 12, cx + 100);
    }"""
    )
    after = view_box(page)
    assert after[2] < before[2] / 3  # fingers 5x further apart: a much narrower view


def test_wheel_zooms_drag_pans_and_fit_restores(
    web_page: WebPage, server: str, finished: Json
) -> None:
    page = web_page.page
    open_game(page, server, finished["game_id"])
    fitted = view_box(page)
    box = page.locator("svg.board").bounding_box()
    assert box is not None
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(cx, cy)
    page.mouse.wheel(0, -300)
    zoomed = view_box(page)
    assert zoomed[2] < fitted[2] * 0.8  # a narrower view: zoomed in
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx + 100, cy + 40, steps=5)
    page.mouse.up()
    panned = view_box(page)
    assert panned[0] < zoomed[0] and panned[1] < zoomed[1] and panned[2] == zoomed[2]
    page.keyboard.press("-")
    assert view_box(page)[2] > panned[2]
    page.get_by_role("button", name="Fit board").click()
    assert view_box(page) == fitted
    assert all_stones_in_view(page)


def test_hovering_the_board_shows_coordinates(
    web_page: WebPage, server: str, finished: Json
) -> None:
    page = web_page.page
    open_game(page, server, finished["game_id"])
    stone = page.locator("svg.board .stone[data-q='0'][data-r='0']")
    stone.hover()
    expect(page.locator(".board-wrap .coords")).to_have_text("0, 0")


def test_an_unknown_game_says_so(web_page: WebPage, server: str) -> None:
    page = web_page.page
    page.goto(f"{server}/g/no-such-game")
    expect(page.get_by_role("heading", name="Game not found")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("no-such-game")


def test_a_phone_gets_one_column_with_the_board_first(
    chromium: Browser, server: str, finished: Json, tmp_path: Path
) -> None:
    context = chromium.new_context(viewport=PHONE)  # type: ignore[arg-type]
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        open_game(page, server, finished["game_id"])
        board = page.locator("svg.board").bounding_box()
        players = page.locator(".players").bounding_box()
        assert board is not None and players is not None
        assert board["width"] > 300 and board["height"] > 250
        assert players["y"] >= board["y"] + board["height"]  # panels below the board
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"]  # nothing wider than the phone
        assert not errors
    finally:
        context.close()
