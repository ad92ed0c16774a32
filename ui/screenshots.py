"""Screenshots of the desktop client, made from the real program: ``make screenshots``.

    python -m ui.screenshots OUT_DIR

Starts a game server on a free loopback port (its own thread, a throw-away database),
opens the real main window offscreen at 1280 x 800 and drives it as a person would:

* ``new_game.png`` — the New game tab, connected, seats and match settings filled in;
* ``game_in_progress.png`` — a person (O) against the hosted threat bot with a match
  clock, a few moves in, the first stone of the next move pending;
* ``game_finished.png`` — the same game played to its end, the winning line shown;
* ``games_browser.png`` — the games browser listing the games played meanwhile;
* ``play_online.png`` — Play online, waiting in the queue (the server's hosted bots
  are registered as ladder bots first, so a person who waits can be paired with one);
* ``leaderboard.png`` — the leaderboard after the person played a few rated queue
  games against those bots.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from PyQt5.QtCore import QPoint, QSettings, Qt
from PyQt5.QtGui import QMouseEvent
from PyQt5.QtWidgets import QApplication, QWidget

from game.hexgrid import AXES, Hex, distance
from game.server import create_app, serving
from models import Match, NewGameRequest, PlayerConfig, PlayerType
from ui.main_window import MainWindow
from ui.offscreen import prepare_offscreen
from ui.settings import Settings
from ui.setup_panel import FormValues, SeatChoice

WINDOW_SIZE = (1280, 800)
TIMEOUT_S = 120.0


@contextmanager
def local_server(directory: Path) -> Iterator[str]:
    """A game server with its bots on 127.0.0.1 (free port) while the block runs."""
    ready = threading.Event()
    state: dict[str, object] = {}

    async def serve() -> None:
        app = create_app(db_url=f"sqlite+aiosqlite:///{directory / 'games.sqlite'}")
        stop = asyncio.Event()
        state["loop"], state["stop"] = asyncio.get_running_loop(), stop
        async with serving(app) as server:
            state["url"] = server.url
            ready.set()
            await stop.wait()

    def run() -> None:
        try:
            asyncio.run(serve())
        except BaseException as error:  # reported below
            state["error"] = error
        finally:
            ready.set()

    thread = threading.Thread(target=run, name="screenshot server", daemon=True)
    thread.start()
    ready.wait(TIMEOUT_S)
    if "url" not in state:
        raise RuntimeError(f"the game server did not start: {state.get('error')!r}")
    try:
        yield str(state["url"])
    finally:
        loop, stop = state["loop"], state["stop"]
        assert isinstance(loop, asyncio.AbstractEventLoop) and isinstance(stop, asyncio.Event)
        loop.call_soon_threadsafe(stop.set)
        thread.join(TIMEOUT_S)


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = TIMEOUT_S) -> None:
    """Run the Qt event loop until ``predicate`` holds; RuntimeError naming ``what``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        QApplication.processEvents()
        time.sleep(0.01)


def settle(seconds: float = 0.3) -> None:
    """Let queued packets, repaints and timers run for a moment."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.01)


def click(widget: QWidget, point: QPoint) -> None:
    for kind in (QMouseEvent.Type.MouseButtonPress, QMouseEvent.Type.MouseButtonRelease):
        event = QMouseEvent(
            kind,
            point,
            Qt.MouseButton.LeftButton,
            Qt.MouseButtons(Qt.MouseButton.LeftButton)
            if kind == QMouseEvent.Type.MouseButtonPress
            else Qt.MouseButtons(Qt.MouseButton.NoButton),
            Qt.KeyboardModifiers(Qt.KeyboardModifier.NoModifier),
        )
        QApplication.sendEvent(widget, event)
    QApplication.processEvents()


def hover(widget: QWidget, point: QPoint) -> None:
    event = QMouseEvent(
        QMouseEvent.Type.MouseMove,
        point,
        Qt.MouseButton.NoButton,
        Qt.MouseButtons(Qt.MouseButton.NoButton),
        Qt.KeyboardModifiers(Qt.KeyboardModifier.NoModifier),
    )
    QApplication.sendEvent(widget, event)
    QApplication.processEvents()


def threat(stones: dict[Hex, str], cell: Hex, side: str) -> int:
    """The longest line of ``side`` a stone on ``cell`` would join (or cut)."""
    best = 0
    for dq, dr in AXES:
        run = 0
        for sign in (1, -1):
            q, r = cell[0] + sign * dq, cell[1] + sign * dr
            while stones.get((q, r)) == side:
                run += 1
                q, r = q + sign * dq, r + sign * dr
        best = max(best, run)
    return best


class Player:
    """Clicks for the person at the window: blocks the bot's longest lines while
    ``defend`` is on, else builds the person's own lines away from the bot's (so the
    bot can finish)."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.defend = True

    def visible(self, cell: Hex) -> bool:
        board = self.window.board
        return board.rect().adjusted(30, 30, -30, -30).contains(board.center_of(cell))

    def choose(self, legal: frozenset[Hex], me: str = "o") -> tuple[Hex, Hex]:
        shown = self.window.controller.shown
        stones = shown.stones
        them = "x" if me == "o" else "o"
        cells = [cell for cell in legal if self.visible(cell)]
        if self.defend:
            # Block where the bot's lines are longest, as a careful person would.
            cells.sort(key=lambda c: (-threat(stones, c, them), -threat(stones, c, me), c))
            first = cells[0]
            trial = {**stones, first: me}
            rest = sorted(cells[1:], key=lambda c: (-threat(trial, c, them), c))
            return first, rest[0]
        # Stop defending but keep playing like a person: grow one's own lines near the
        # stones, away from the bot's, so it finishes its line on a natural-looking board.
        cells.sort(
            key=lambda c: (
                threat(stones, c, them) > 0,
                -threat(stones, c, me),
                min(distance(c, s) for s in stones),
                c,
            )
        )
        first = cells[0]
        trial = {**stones, first: me}
        rest = sorted(
            cells[1:], key=lambda c: (threat(trial, c, them) > 0, -threat(trial, c, me), c)
        )
        return first, rest[0]

    def wait_turn(self) -> bool:
        """Wait for the person's turn; False if the game ended instead."""
        controller = self.window.controller
        wait_until(
            lambda: (
                controller.active_seat() is not None
                or (controller.model is not None and controller.model.result is not None)
            ),
            "the person's turn",
        )
        model = controller.model
        return model is not None and model.result is None

    def play(self, *, send: bool = True) -> Hex | None:
        """One move (or only its first stone, pending, with ``send=False``)."""
        controller = self.window.controller
        entry = controller.active_seat()
        assert entry is not None and entry.request is not None
        first, second = self.choose(entry.request.legal, entry.side)
        board = self.window.board
        click(board, board.center_of(first))
        if not send:
            return second
        click(board, board.center_of(second))
        return None


def start_background_games(window: MainWindow, url: str) -> None:
    """A few bot games so the browser has something to list."""
    client = window.client(url)
    pairs = [("threat", "random"), ("center", "random"), ("random", "center"), ("threat", "center")]
    for x, o in pairs:
        client.new_game(
            NewGameRequest(
                player_x=PlayerConfig(type=PlayerType.BOT, bot_url=f"{url}/bots/{x}"),
                player_o=PlayerConfig(type=PlayerType.BOT, bot_url=f"{url}/bots/{o}"),
                match_config=Match(clock_type="match", clock=60.0),
            )
        )
    # A small tournament: its games are listed under its name.
    body = {
        "name": "Club night",
        "bots": [
            {"name": "threat", "url": f"{url}/bots/threat"},
            {"name": "center", "url": f"{url}/bots/center"},
        ],
    }
    request = urllib.request.Request(
        f"{url}/tournaments",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
        response.read()
    # And one waiting for a person who has not sat down yet: a live game in the list.
    client.new_game(
        NewGameRequest(
            player_x=PlayerConfig(type=PlayerType.BOT, bot_url=f"{url}/bots/center"),
            player_o=PlayerConfig(type=PlayerType.HUMAN, name="Sam"),
        )
    )


def make_screenshots(out_dir: Path) -> list[Path]:
    """Drive the window and save the four PNGs; their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(["htttx-ui"])
    assert isinstance(app, QApplication)
    app.setApplicationDisplayName("HTTTX Arena")
    saved: list[Path] = []
    with tempfile.TemporaryDirectory() as temp, local_server(Path(temp)) as url:
        settings = Settings(QSettings(str(Path(temp) / "ui.ini"), QSettings.Format.IniFormat))
        settings.server_url = url
        window = MainWindow(settings)
        window.resize(*WINDOW_SIZE)
        window.show()
        window.connect_server(url)
        wait_until(lambda: window.setup.seat_o.kind.count() > 2, "the hosted bots")
        start_background_games(window, url)

        # A person (O) against the threat bot, five minutes each.
        window.setup.set_values(
            FormValues(
                x=SeatChoice("hosted", f"{url}/bots/threat"),
                o=SeatChoice("human", name="Alex"),
                clock_type="match",
                clock_seconds=300.0,
            )
        )
        window.tabs.setCurrentIndex(1)
        settle()
        saved.append(grab(window, out_dir / "new_game.png"))
        window.setup.submit()
        wait_until(lambda: window.controller.model is not None, "the new game")
        person = Player(window)
        for _ in range(4):
            if not person.wait_turn():
                break
            person.play()
        if person.wait_turn():
            second = person.play(send=False)
            if second is not None:
                hover(window.board, window.board.center_of(second))
        settle(1.2)
        saved.append(grab(window, out_dir / "game_in_progress.png"))

        # Play on without defending until the bot completes its line.
        window.controller.take_back()
        person.defend = False
        while person.wait_turn():
            person.play()
        wait_until(
            lambda: (
                window.controller.model is not None and window.controller.model.result is not None
            ),
            "the end of the game",
        )
        window.board.fit_to_stones()
        line = window.controller.shown.winning_line
        if line:
            hover(window.board, window.board.center_of(line[len(line) // 2]))
        settle(1.0)
        saved.append(grab(window, out_dir / "game_finished.png"))

        window.show_browser()
        browser = window.browser
        assert browser is not None
        browser.resize(1040, 560)

        def all_listed_and_over() -> bool:
            summaries = browser.summaries
            if sum(s.status.value == "finished" for s in summaries) >= 7:
                return True
            browser.refresh()
            settle(0.5)
            return False

        wait_until(all_listed_and_over, "the background games to finish")
        browser.table.selectRow(0)
        settle(0.5)
        saved.append(grab(browser, out_dir / "games_browser.png"))
        browser.close()
        saved.extend(online_screenshots(window, url, out_dir))
        window.close()
    return saved


def register_bot(url: str, name: str, bot_url: str) -> None:
    """``POST /bots``: a ladder bot the queue may pair a person with."""
    body = {"name": name, "url": bot_url, "ladder": True}
    request = urllib.request.Request(
        f"{url}/bots", data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
        response.read()


def online_screenshots(window: MainWindow, url: str, out_dir: Path) -> list[Path]:
    """``play_online.png`` and ``leaderboard.png`` (see the module's doc)."""
    for name, bot in (("Threat", "threat"), ("Centre", "center"), ("Randy", "random")):
        register_bot(url, name, f"{url}/bots/{bot}")
    dialog = window.online.show_play_online()
    dialog.set_server(url)
    dialog.name.setText("Alex")
    dialog.time_control.setCurrentText("180+2")
    dialog.bot_after.setChecked(True)
    dialog.bot_wait.setValue(30)
    dialog.find_game()
    wait_until(lambda: dialog.last_waiting is not None, "the queue")
    settle(2.2)  # a couple of seconds waited
    saved = [grab(dialog, out_dir / "play_online.png")]
    dialog.cancel()

    # A few rated games: Alex waits 0 s, so the queue pairs them with a bot at once.
    person = Player(window)
    for game in range(3):
        dialog.bot_wait.setValue(0)
        dialog.time_control.setCurrentText("none")
        dialog.find_game()
        wait_until(lambda: not dialog.waiting_page, "a bot from the queue")
        person.defend = game != 1
        while person.wait_turn():
            person.play()
    board = window.online.show_leaderboard()
    assert board is not None
    board.resize(1000, 300)
    wait_until(lambda: not board.loading, "the leaderboard")
    settle(0.5)
    saved.append(grab(board, out_dir / "leaderboard.png"))
    board.close()
    return saved


def grab(widget: QWidget, path: Path) -> Path:
    if not widget.grab().save(str(path), "PNG"):
        raise RuntimeError(f"could not write {path}")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m ui.screenshots OUT_DIR", file=sys.stderr)
        return 2
    prepare_offscreen()
    for path in make_screenshots(Path(args[0])):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
