"""The stones of both sides as the client draws them, everywhere: their colours, one
stone painted with any ``QPainter`` and the stone as an icon.

The board paints its stones through ``paint_stone`` (as cached sprites), the panels and
the games browser show ``stone_icon`` and ``X_COLOR``/``O_COLOR``, so a stone looks the
same wherever it appears.
"""

from __future__ import annotations

from PyQt5.QtCore import QPointF, Qt
from PyQt5.QtGui import QBrush, QColor, QIcon, QPainter, QPen, QPixmap, QRadialGradient

__all__ = ["MARK_COLOR", "O_COLOR", "SIDES", "X_COLOR", "paint_stone", "side_color", "stone_icon"]

#: The two sides, in the order they are drawn.
SIDES = ("x", "o")

#: The two sides' colours, for panels that show them next to the board.
X_COLOR = QColor("#d1495b")
O_COLOR = QColor("#2e86ab")
#: The white mark on every stone: a cross for X, a ring for O.
MARK_COLOR = QColor("#fffaf2")


def side_color(side: str) -> QColor:
    """The colour of ``side``'s stones ("x" or "o")."""
    if side not in SIDES:
        raise ValueError(f"a side is 'x' or 'o', not {side!r}")
    return QColor(X_COLOR if side == "x" else O_COLOR)


def paint_stone(
    painter: QPainter, cx: float, cy: float, radius: float, side: str, *, shadow: bool = True
) -> None:
    """Paint ``side``'s stone of ``radius`` pixels centred on ``(cx, cy)``: a soft shadow,
    a shaded disc with a darker rim, and the side's white mark (a cross for X, a ring
    for O). The board, the icons and the panels all draw stones with this."""
    base = side_color(side)
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.setPen(Qt.PenStyle.NoPen)
    if shadow:
        glow = QRadialGradient(QPointF(cx, cy + radius * 0.16), radius * 1.12)
        glow.setColorAt(0.75, QColor(60, 40, 20, 70))
        glow.setColorAt(1.0, QColor(60, 40, 20, 0))
        painter.setBrush(QBrush(glow))
        painter.drawEllipse(QPointF(cx, cy + radius * 0.16), radius * 1.12, radius * 1.12)
    shade = QRadialGradient(QPointF(cx, cy), radius, QPointF(cx - radius * 0.35, cy - radius * 0.4))
    shade.setColorAt(0.0, base.lighter(135))
    shade.setColorAt(0.55, base)
    shade.setColorAt(1.0, base.darker(118))
    painter.setBrush(QBrush(shade))
    rim = QPen(base.darker(150), max(1.0, radius * 0.07))
    painter.setPen(rim)
    painter.drawEllipse(QPointF(cx, cy), radius - rim.widthF() / 2, radius - rim.widthF() / 2)
    mark = QPen(MARK_COLOR, radius * (0.2 if side == "x" else 0.17))
    mark.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(mark)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    if side == "x":
        arm = radius * 0.36
        painter.drawLine(QPointF(cx - arm, cy - arm), QPointF(cx + arm, cy + arm))
        painter.drawLine(QPointF(cx - arm, cy + arm), QPointF(cx + arm, cy - arm))
    else:
        painter.drawEllipse(QPointF(cx, cy), radius * 0.42, radius * 0.42)
    painter.restore()


def stone_icon(side: str, size: int = 16) -> QIcon:
    """``side``'s stone as an icon of ``size`` x ``size`` pixels (the same mark as on the
    board), for player panels and lists. Needs a running QApplication."""
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    paint_stone(painter, size / 2, size / 2, size / 2 - 0.5, side, shadow=False)
    painter.end()
    return QIcon(pixmap)
