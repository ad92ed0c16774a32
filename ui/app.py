"""The desktop client's entry point: ``python -m ui.app`` (or ``htttx-ui``).

    htttx-ui [--server URL] [--open FILE.htttx|URL] [--spectate GAME_ID]
    htttx-ui --open http://HOST/c/CHALLENGE_ID

``--server`` sets (and remembers) the game server's address; ``--open`` replays a saved
game, from a file or from a game server by URL (``http://HOST/g/ID``,
``http://HOST/games/ID`` or ``http://HOST/games/ID/notation``: fetched off the GUI
thread, see ``ui.record_url``), or accepts an open challenge from its link
(``http://HOST/c/ID``: the person plays it under the name saved for that server, see
``ui.online_play``); ``--spectate`` watches a live game of that server.
Without options the window opens on the "New game" form, connected to the last server
used.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from PyQt5.QtCore import QSettings, Qt, QTimer
from PyQt5.QtGui import QIcon, QPainter, QPixmap
from PyQt5.QtWidgets import QApplication

from game import notation
from ui.main_window import APP_TITLE, MainWindow
from ui.online import is_challenge_url
from ui.record_url import RecordUrlError, is_url, notation_url
from ui.server_address import ServerAddressError, normalize_server_url
from ui.settings import APPLICATION, ORGANISATION, Settings
from ui.stones import paint_stone


def app_icon() -> QIcon:
    """The window icon: an X mark and an O ring side by side, at several sizes."""
    icon = QIcon()
    for size in (16, 24, 32, 48, 64, 128, 256):
        pixmap = QPixmap(size, size)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        radius = size * 0.3
        paint_stone(painter, size * 0.33, size * 0.36, radius, "x", shadow=False)
        paint_stone(painter, size * 0.67, size * 0.64, radius, "o", shadow=False)
        painter.end()
        icon.addPixmap(pixmap)
    return icon


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="htttx-ui",
        description="Play hexagonal tic-tac-toe against bots or a friend, watch and replay games.",
    )
    parser.add_argument(
        "--server",
        metavar="URL",
        help="the game server's address, remembered for the next start (default: the last "
        "one used, else http://127.0.0.1:8001)",
    )
    parser.add_argument(
        "--open",
        metavar="FILE|URL",
        help="replay a game saved as .htttx, or one on a game server: http://HOST/g/GAME_ID "
        "(or .../games/GAME_ID/notation); or accept an open challenge: http://HOST/c/ID",
    )
    parser.add_argument("--spectate", metavar="GAME_ID", help="watch a live game of the server")
    args = parser.parse_args(argv)
    if args.server is not None:
        try:
            args.server = normalize_server_url(args.server)
        except ServerAddressError as error:
            parser.error(str(error))
    if args.open is not None and is_challenge_url(args.open):
        pass  # accepted and played once the window is up
    elif args.open is not None and is_url(args.open):
        try:
            args.open = notation_url(args.open)
        except RecordUrlError as error:
            parser.error(f"--open: {error}")
    elif args.open is not None:
        args.open = Path(args.open)
        if not args.open.is_file():
            parser.error(f"--open: no such file: {args.open}")
        if (problem := _not_a_record(args.open)) is not None:
            parser.error(f"--open: {problem}")
    if args.spectate is not None:
        args.spectate = args.spectate.strip()
        if not args.spectate:
            parser.error("--spectate: give the id of a game of the server, e.g. --spectate 4f2a9c")
    if args.open is not None and args.spectate is not None:
        parser.error("--open and --spectate cannot be used together: pick one game to show")
    return args


def _not_a_record(path: Path) -> str | None:
    """Why the file at ``path`` cannot be replayed (unreadable, not an HTTTX game), in
    the words the window would show; None if it can. Said on the command line, before
    any window opens, as for a missing file."""
    try:
        notation.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        return f"cannot read {path}: {reason}"
    except notation.NotationError as error:
        return (
            f"{path} is not a valid HTTTX game: line {error.line}, column {error.column}: "
            f"{error.reason}"
        )
    return None


def main(argv: Sequence[str] | None = None, *, settings: Settings | None = None) -> int:
    """Run the client until its window closes; the exit status."""
    args = parse_args(argv)
    app = QApplication.instance()
    if app is None:
        # Must be set before the application object exists.
        QApplication.setAttribute(Qt.ApplicationAttribute.AA_EnableHighDpiScaling, True)
        QApplication.setAttribute(Qt.ApplicationAttribute.AA_UseHighDpiPixmaps, True)
        app = QApplication([sys.argv[0] if sys.argv else "htttx-ui"])
    assert isinstance(app, QApplication)
    app.setOrganizationName(ORGANISATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName(APP_TITLE)
    app.setWindowIcon(app_icon())
    settings = settings if settings is not None else Settings(QSettings(ORGANISATION, APPLICATION))
    if args.server is not None:
        settings.server_url = args.server
    window = MainWindow(settings)
    window.show()
    window.connect_server()
    if isinstance(args.open, str):
        window.open_url(args.open)
    elif args.open is not None:
        window.open_file(args.open)
    elif args.spectate is not None:
        QTimer.singleShot(0, lambda: window.spectate(args.spectate))
    return app.exec_()


if __name__ == "__main__":
    sys.exit(main())
