"""What the client remembers between runs: server address, last game settings, window.

Everything goes through one ``QSettings``. The application uses the per-user store
(organisation ``htttx-arena``, application ``htttx-ui``); tests pass their own INI file
so they never read or change the user's settings::

    settings = Settings(QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))

Values are kept as plain text and numbers (JSON for the structured ones), so a hand-
edited or damaged file never crashes the client: anything unreadable falls back to the
default.
"""

from __future__ import annotations

import json
from typing import Any

from PyQt5.QtCore import QByteArray, QSettings

ORGANISATION = "htttx-arena"
APPLICATION = "htttx-ui"
DEFAULT_SERVER_URL = "http://127.0.0.1:8001"


class Settings:
    """Typed access to the client's persistent settings."""

    def __init__(self, store: QSettings | None = None) -> None:
        self.store = store if store is not None else QSettings(ORGANISATION, APPLICATION)

    # ------------------------------------------------------------------ plain values

    def _text(self, key: str, default: str) -> str:
        value = self.store.value(key, default)
        return value if isinstance(value, str) and value else default

    def _json(self, key: str) -> dict[str, Any]:
        text = self.store.value(key, "")
        if not isinstance(text, str) or not text:
            return {}
        try:
            value = json.loads(text)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def _put_json(self, key: str, value: dict[str, Any]) -> None:
        # Sorted keys: the same choices are stored as the same text.
        self.store.setValue(key, json.dumps(value, sort_keys=True))

    @property
    def server_url(self) -> str:
        """The game server's base URL (``http://127.0.0.1:8001`` until changed)."""
        return self._text("server/url", DEFAULT_SERVER_URL)

    @server_url.setter
    def server_url(self, url: str) -> None:
        self.store.setValue("server/url", url.strip())

    @property
    def last_directory(self) -> str:
        """Where the last ``.htttx`` file was opened or saved ("" for none yet)."""
        return self._text("files/last_directory", "")

    @last_directory.setter
    def last_directory(self, path: str) -> None:
        self.store.setValue("files/last_directory", path)

    @property
    def seats(self) -> dict[str, Any]:
        """The seat choices of the last new game, as the setup panel saved them."""
        return self._json("game/seats")

    @seats.setter
    def seats(self, value: dict[str, Any]) -> None:
        self._put_json("game/seats", value)

    @property
    def match(self) -> dict[str, Any]:
        """The match settings of the last new game, as the setup panel saved them."""
        return self._json("game/match")

    @match.setter
    def match(self, value: dict[str, Any]) -> None:
        self._put_json("game/match", value)

    # ---------------------------------------------------------------------- online

    def online_player(self, server_url: str) -> tuple[str, str | None]:
        """The name and person token last used on the server at ``server_url`` (its
        normalized base URL); ``("", None)`` before the first game there."""
        entry = self._json("online/players").get(server_url)
        if not isinstance(entry, dict):
            return "", None
        name, token = entry.get("name"), entry.get("token")
        return (
            name if isinstance(name, str) else "",
            token if isinstance(token, str) and token else None,
        )

    def set_online_player(self, server_url: str, name: str, token: str | None) -> None:
        """Remember the person's name (and token, which proves the name is theirs) for
        that server. A token is secret: it is kept only in the user's settings."""
        players = self._json("online/players")
        players[server_url] = {"name": name, "token": token}
        self._put_json("online/players", players)

    @property
    def online(self) -> dict[str, Any]:
        """The Play online form's last choices (server, time control, bot wait)."""
        return self._json("online/form")

    @online.setter
    def online(self, value: dict[str, Any]) -> None:
        self._put_json("online/form", value)

    # ---------------------------------------------------------------------- window

    @property
    def window_geometry(self) -> QByteArray | None:
        """``QWidget.saveGeometry()`` of the main window, or None before the first run."""
        value = self.store.value("window/geometry")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    @window_geometry.setter
    def window_geometry(self, value: QByteArray) -> None:
        self.store.setValue("window/geometry", value)

    @property
    def window_state(self) -> QByteArray | None:
        """``QMainWindow.saveState()`` (dock and toolbar layout), or None."""
        value = self.store.value("window/state")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    @window_state.setter
    def window_state(self, value: QByteArray) -> None:
        self.store.setValue("window/state", value)

    def sync(self) -> None:
        """Write pending changes to disk now (QSettings otherwise does it lazily)."""
        self.store.sync()
