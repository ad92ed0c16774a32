"""Qt without a display, for ``make screenshots`` and the board benchmark.

The offscreen platform works, but it says so loudly: a line about ``XDG_RUNTIME_DIR``
and "This plugin does not support ..." for every window operation it ignores. Neither
means anything for a picture rendered offscreen, and they drown what the tools print.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from PyQt5.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler

_IGNORED = ("This plugin does not support",)


def _handler(kind: QtMsgType, context: QMessageLogContext, message: str | None) -> None:
    if message and not message.startswith(_IGNORED):
        print(message, file=sys.stderr)


def prepare_offscreen() -> None:
    """Before the QApplication: the offscreen platform unless another was chosen, a
    private runtime directory if there is none, and Qt's notes about what the offscreen
    platform cannot do left out (every other message still goes to stderr)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if "XDG_RUNTIME_DIR" not in os.environ:
        runtime = Path(tempfile.gettempdir()) / f"htttx-qt-runtime-{os.getuid()}"
        runtime.mkdir(mode=0o700, exist_ok=True)
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    qInstallMessageHandler(_handler)
