"""The board: an infinite hex grid you can pan, zoom and click.

:class:`BoardWidget` draws a position given as plain data (stones, the last move, the
winning line, the legal cells) and reports what the mouse does in board terms
(``cellClicked``, ``cellHovered``); it knows nothing about games, seats or servers. All
the geometry lives in :mod:`ui.hexlayout`, which is tested without Qt; the board surface
(which cells, its outline and grid) is built by :mod:`ui.board_surface` and the stones
are painted by :mod:`ui.stones`.

Drawing, back to front: a warm background; the *board surface* (the cells the rules make
playable, or the cells near the stones when no legal set is given), filled a lighter
cream with thin hex outlines; the glow behind a winning line; the stones (X: a white
cross on a warm red disc, O: a white ring on a cool blue disc, so colour-blind players
tell them apart by shape); the last move's outline (a ring of at least
``LAST_MOVE_MIN_RADIUS_PX`` zoomed far out); the winning line. Over that come the
live parts: the human's pending stone (translucent, dashed outline) and the hover
preview.

Speed: the static part is drawn into a pixmap that is reused until the position or the
view changes, so hovering costs one blit. Each stone is one blit of a sprite rendered
once per zoom level; the board surface and its grid are one path and one batch of lines
in world coordinates, built once per position and drawn through the view transform.
Stones off screen are skipped.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

from PyQt5.QtCore import QEvent, QLineF, QPoint, QPointF, QSize, Qt, pyqtSignal
from PyQt5.QtGui import (
    QBrush,
    QColor,
    QCursor,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QPixmap,
    QPolygonF,
    QRadialGradient,
    QResizeEvent,
    QTransform,
    QWheelEvent,
)
from PyQt5.QtWidgets import QSizePolicy, QWidget

from game.hexgrid import Hex, hexagon
from ui.board_surface import EMPTY_BOARD_RADIUS, build_surface, surface_cells
from ui.hexlayout import Viewport, hex_corners, hex_to_world
from ui.stones import SIDES, paint_stone, side_color

BACKGROUND_COLOR = QColor("#eee5d6")
BOARD_COLOR = QColor("#fbf7f0")
GRID_COLOR = QColor("#d9cbb4")
BOARD_EDGE_COLOR = QColor("#c9b89c")
LAST_MOVE_COLOR = QColor(59, 48, 36, 215)
WIN_COLOR = QColor("#f4b942")

#: The last move's mark is never smaller than this radius (pixels): zoomed out on a
#: long game, where cells are a few pixels, it is a ring this size round each stone.
LAST_MOVE_MIN_RADIUS_PX = 10.0
#: A press that moves less than this many pixels before release is a click, not a drag.
DRAG_THRESHOLD_PX = 4
#: One wheel notch (or one +/- key press) zooms by this factor.
ZOOM_STEP = 1.15
#: Grid lines fade out below these hex radii (pixels), where they would be a grey blur.
GRID_HIDDEN_BELOW_PX = 5.0
GRID_FULL_ABOVE_PX = 12.0
#: A stone's radius as a fraction of the hex radius (the hex's inner radius is 0.866).
STONE_RADIUS = 0.74


class BoardWidget(QWidget):
    """An interactive view of one position on the infinite hex board.

    Drag with the left or middle button to pan, turn the wheel to zoom around the cursor;
    ``+``/``-`` zoom, ``F`` frames all stones, ``Esc`` emits
    ``escapePressed``. While interactive, a left click (a press released without
    dragging) emits ``cellClicked`` and the hovered legal cell previews the side's
    stone; otherwise it emits ``inactiveCellClicked`` (the owner may say why the click
    did nothing, or make the board interactive again).
    """

    cellClicked = pyqtSignal(int, int)
    inactiveCellClicked = pyqtSignal(int, int)
    cellHovered = pyqtSignal(object)  # Hex | None
    escapePressed = pyqtSignal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.viewport = Viewport()
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(200, 200)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)

        self._stones: dict[Hex, str] = {}
        self._stone_points: dict[str, list[tuple[float, float]]] = {"x": [], "o": []}
        self._last_move: tuple[Hex, ...] = ()
        self._winning_line: tuple[Hex, ...] = ()
        self._legal: Collection[Hex] | None = None
        self._pending: Hex | None = None
        self._pending_side: str | None = None
        self._interactive = False
        self._interactive_side: str | None = None
        self._hover: Hex | None = None

        # The board surface in world coordinates, rebuilt when the position changes.
        self._surface_path = QPainterPath()
        self._grid_lines: list[QLineF] = []
        self._version = 0

        # The static layer and what it was drawn for (position version and view).
        self._layer: QPixmap | None = None
        self._layer_key: tuple[object, ...] = ()
        self._sprites: dict[tuple[str, float, float], QPixmap] = {}

        # Whether the first stones were framed, and the view the last framing left
        # (None before the first): while the view is still that, resizing reframes.
        self._auto_fitted = False
        self._fitted_view: tuple[float, float, float] | None = None

        # Mouse state: the button held, where it went down, where it was last seen.
        self._press_button: Qt.MouseButton | None = None
        self._press_pos = QPointF()
        self._last_pos = QPointF()
        self._dragging = False

    # ------------------------------------------------------------------- public API

    def set_position(
        self,
        stones: Mapping[Hex, str],
        *,
        last_move: Sequence[Hex] = (),
        winning_line: Sequence[Hex] = (),
        legal: Collection[Hex] | None = None,
    ) -> None:
        """Show ``stones`` (cell -> "x"/"o"). ``last_move`` cells get an outline, the
        ``winning_line`` (in order along its axis) a highlight, and ``legal`` cells make
        up the board surface (None: the cells near the stones). The first call with
        stones frames them; later calls keep the user's view, until a call with no
        stones clears the board."""
        self._stones = dict(stones)
        self._last_move = tuple(last_move)
        self._winning_line = tuple(winning_line)
        # A copy: Position.legal_cells() is a live view that changes with the game.
        self._legal = None if legal is None else frozenset(legal)
        size = self.viewport.size
        points: dict[str, list[tuple[float, float]]] = {"x": [], "o": []}
        for (q, r), side in self._stones.items():
            if side not in points:
                raise ValueError(f"the stone at ({q}, {r}) belongs to 'x' or 'o', not {side!r}")
            points[side].append(hex_to_world(q, r, size))
        self._stone_points = points
        self._build_surface()
        self._version += 1
        if not self._stones:
            self._auto_fitted = False  # a cleared board: the next game is framed again
        elif not self._auto_fitted:
            self._auto_fitted = True
            self._fit()
        self._refresh_cursor()
        self.update()

    def set_pending(self, cell: Hex | None, side: str | None = None) -> None:
        """Show (or with None, remove) the human's first stone, chosen but not yet sent.
        ``side`` defaults to the interactive side."""
        self._pending = cell
        self._pending_side = side if side is not None else self._interactive_side
        self._refresh_cursor()
        self.update()

    def set_interactive(self, on: bool, side: str | None = None) -> None:
        """Accept clicks (``cellClicked``) and preview ``side``'s stone under the mouse
        on legal cells, or stop doing so."""
        self._interactive = on
        self._interactive_side = side if on else None
        self._refresh_cursor()
        self.update()

    def fit_to_stones(self) -> None:
        """Frame all stones (the origin when there are none)."""
        self._fit()
        self.update()

    def bring_into_view(self, cells: Sequence[Hex], margin: int = 8) -> None:
        """Pan, at the zoom chosen, so that ``cells`` (a move's) are centred, unless they
        are all in view already (within ``margin`` pixels of the edges)."""
        area = self.rect().adjusted(margin, margin, -margin, -margin)
        if not cells or all(area.contains(self.center_of(cell)) for cell in cells):
            return
        points = [self.viewport.center_of(cell) for cell in cells]
        middle_x = sum(x for x, _ in points) / len(points)
        middle_y = sum(y for _, y in points) / len(points)
        self.viewport.pan(self.width() / 2 - middle_x, self.height() / 2 - middle_y)
        self.update()

    def center_of(self, cell: Hex) -> QPoint:
        """Widget coordinates of ``cell``'s centre."""
        x, y = self.viewport.center_of(cell)
        return QPoint(round(x), round(y))

    @property
    def hovered_cell(self) -> Hex | None:
        """The cell under the mouse, None when the mouse is elsewhere."""
        return self._hover

    # ------------------------------------------------------------------ view changes

    def _fit(self) -> None:
        if self._stones:
            self.viewport.fit(self._stones.keys(), self.width(), self.height())
        else:  # the small board round the origin
            self.viewport.fit(hexagon((0, 0), EMPTY_BOARD_RADIUS), self.width(), self.height(), 1)
        self._fitted_view = self._view_state()

    def _view_state(self) -> tuple[float, float, float]:
        view = self.viewport
        return view.scale, view.offset_x, view.offset_y

    def zoom_by(self, factor: float, at: QPointF | None = None) -> None:
        """Zoom by ``factor`` around ``at`` (widget coordinates; default the centre)."""
        point = at if at is not None else QPointF(self.width() / 2, self.height() / 2)
        self.viewport.zoom_at(point.x(), point.y(), factor)
        # The board moved under a still mouse: the hovered cell may have changed.
        if at is not None:
            self._update_hover(at)
        elif self.underMouse():
            self._update_hover(QPointF(self.mapFromGlobal(QCursor.pos())))
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(720, 640)

    def resizeEvent(self, event: QResizeEvent | None) -> None:
        if event is None:
            return
        old = event.oldSize()
        if self._fitted_view is None or self._fitted_view == self._view_state():
            # Until someone moves the view, keep it framed as the layout settles.
            self._fit()
        elif old.isValid():
            # Keep the point at the centre where it was.
            dx = (event.size().width() - old.width()) / 2
            dy = (event.size().height() - old.height()) / 2
            self.viewport.pan(dx, dy)
        super().resizeEvent(event)

    # ------------------------------------------------------------------------ mouse

    def mousePressEvent(self, event: QMouseEvent | None) -> None:
        if event is None:
            return
        if (
            event.button() in (Qt.MouseButton.LeftButton, Qt.MouseButton.MiddleButton)
            and self._press_button is None
        ):
            self._press_button = event.button()
            self._press_pos = QPointF(event.localPos())
            self._last_pos = QPointF(event.localPos())
            self._dragging = False
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent | None) -> None:
        if event is None:
            return
        pos = QPointF(event.localPos())
        if self._press_button is not None:
            if not self._dragging:
                moved = pos - self._press_pos
                if math.hypot(moved.x(), moved.y()) >= DRAG_THRESHOLD_PX:
                    self._dragging = True
                    self.setCursor(Qt.CursorShape.ClosedHandCursor)
                    # The whole move counts, so the board does not jump by the threshold.
                    self._last_pos = QPointF(self._press_pos)
            if self._dragging:
                delta = pos - self._last_pos
                self.viewport.pan(delta.x(), delta.y())
                self.update()
        self._last_pos = pos
        self._update_hover(pos)

    def mouseReleaseEvent(self, event: QMouseEvent | None) -> None:
        if event is None:
            return
        if self._press_button is None or event.button() != self._press_button:
            super().mouseReleaseEvent(event)
            return
        clicked = self._press_button == Qt.MouseButton.LeftButton and not self._dragging
        self._press_button = None
        self._dragging = False
        self._refresh_cursor()
        if clicked:
            q, r = self.viewport.cell_at(self._press_pos.x(), self._press_pos.y())
            if self._interactive:
                self.cellClicked.emit(q, r)
            else:
                self.inactiveCellClicked.emit(q, r)
        event.accept()

    def mouseDoubleClickEvent(self, event: QMouseEvent | None) -> None:
        if event is None:
            return
        # A double click is two clicks: Qt sends press, release, double-click, release;
        # treat the double-click as the second press so both clicks count the same way.
        self.mousePressEvent(event)

    def wheelEvent(self, event: QWheelEvent | None) -> None:
        if event is None:
            return
        notches = event.angleDelta().y() / 120
        if notches:
            self.zoom_by(ZOOM_STEP**notches, event.position())
        event.accept()

    def leaveEvent(self, event: QEvent | None) -> None:
        self._set_hover(None)

    # --------------------------------------------------------------------- keyboard

    def keyPressEvent(self, event: QKeyEvent | None) -> None:
        if event is None:
            return
        key = event.key()
        chord = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
        chord |= Qt.KeyboardModifier.MetaModifier
        if event.modifiers() & chord:
            # Ctrl+F and the like are the window's shortcuts, not the board's keys.
            super().keyPressEvent(event)
            return
        if key == Qt.Key.Key_Escape:
            self.escapePressed.emit()
        elif key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_by(ZOOM_STEP)
        elif key in (Qt.Key.Key_Minus, Qt.Key.Key_Underscore):
            self.zoom_by(1 / ZOOM_STEP)
        elif key == Qt.Key.Key_F:
            self.fit_to_stones()
        else:
            # Arrows, Home, End and the rest belong to the window: the replay bar steps
            # with them (Home is the first position, as its button says).
            super().keyPressEvent(event)
            return
        event.accept()

    # ------------------------------------------------------------------------ hover

    def _update_hover(self, pos: QPointF) -> None:
        if not self.rect().contains(pos.toPoint()):
            self._set_hover(None)
            return
        self._set_hover(self.viewport.cell_at(pos.x(), pos.y()))

    def _set_hover(self, cell: Hex | None) -> None:
        if cell == self._hover:
            return
        self._hover = cell
        self.cellHovered.emit(cell)
        self._refresh_cursor()
        if self._interactive:
            self.update()

    def _is_playable(self, cell: Hex) -> bool:
        if cell in self._stones or cell == self._pending:
            return False
        return self._legal is None or cell in self._legal

    def _refresh_cursor(self) -> None:
        if self._dragging:
            return
        cell = self._hover
        if not self._interactive or cell is None:
            self.unsetCursor()
        elif cell == self._pending or self._is_playable(cell):
            self.setCursor(Qt.CursorShape.PointingHandCursor)
        else:
            self.setCursor(Qt.CursorShape.ForbiddenCursor)

    # -------------------------------------------------------------------- the board

    def _build_surface(self) -> None:
        """Rebuild the board surface for the position just set (see ``ui.board_surface``)."""
        cells = surface_cells(self._stones, self._legal)
        self._surface_path, self._grid_lines = build_surface(cells, self.viewport.size)

    def _sprite(self, side: str, radius: float, ratio: float) -> tuple[QPixmap, float]:
        """``side``'s stone of ``radius`` pixels as a pixmap, cached per zoom level, and
        the pixmap's logical half size (its centre is the stone's centre)."""
        radius = round(radius * 4) / 4  # quarter pixels: zooming reuses sprites
        key = (side, radius, ratio)
        half = math.ceil(radius * 1.35) + 2
        sprite = self._sprites.get(key)
        if sprite is None:
            if len(self._sprites) > 48:
                self._sprites.clear()
            sprite = QPixmap(round(2 * half * ratio), round(2 * half * ratio))
            sprite.setDevicePixelRatio(ratio)
            sprite.fill(Qt.GlobalColor.transparent)
            painter = QPainter(sprite)
            paint_stone(painter, half, half, radius, side)
            painter.end()
            self._sprites[key] = sprite
        return sprite, half

    def _draw_stone(self, painter: QPainter, cell: Hex, side: str, opacity: float = 1.0) -> None:
        radius = self.viewport.hex_radius_px * STONE_RADIUS
        sprite, half = self._sprite(side, radius, self.devicePixelRatioF())
        x, y = self.viewport.center_of(cell)
        painter.setOpacity(opacity)
        painter.drawPixmap(QPoint(round(x - half), round(y - half)), sprite)
        painter.setOpacity(1.0)

    def _hex_polygon(self, cell: Hex, shrink: float = 1.0) -> QPolygonF:
        x, y = self.viewport.center_of(cell)
        radius = self.viewport.hex_radius_px * shrink
        return QPolygonF([QPointF(cx, cy) for cx, cy in hex_corners(x, y, radius)])

    def _paint_layer(self, painter: QPainter) -> None:
        """Everything that depends only on the position and the view."""
        view = self.viewport
        width, height = self.width(), self.height()
        radius_px = view.hex_radius_px
        painter.fillRect(self.rect(), BACKGROUND_COLOR)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)

        # The board surface and its grid, drawn through the view transform.
        painter.setTransform(QTransform(view.scale, 0, 0, view.scale, view.offset_x, view.offset_y))
        painter.fillPath(self._surface_path, BOARD_COLOR)
        if radius_px > GRID_HIDDEN_BELOW_PX and self._grid_lines:
            fade = min(
                1.0,
                (radius_px - GRID_HIDDEN_BELOW_PX) / (GRID_FULL_ABOVE_PX - GRID_HIDDEN_BELOW_PX),
            )
            grid = QColor(GRID_COLOR)
            grid.setAlphaF(fade)
            pen = QPen(grid, 1.0)
            pen.setCosmetic(True)
            painter.setPen(pen)
            # PyQt5 takes a list here; its stub only names sip's array type.
            painter.drawLines(self._grid_lines)  # type: ignore[call-overload]
        # The surface's edge, a shade darker, so the board reads as one piece.
        edge = QPen(BOARD_EDGE_COLOR, 1.25)
        edge.setCosmetic(True)
        edge.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        painter.strokePath(self._surface_path, edge)
        painter.resetTransform()

        # The glow behind the winning line's stones.
        if self._winning_line:
            painter.setPen(Qt.PenStyle.NoPen)
            for cell in self._winning_line:
                x, y = view.center_of(cell)
                glow = QRadialGradient(QPointF(x, y), radius_px * 1.15)
                for stop, alpha in ((0.0, 230), (0.72, 170), (1.0, 0)):
                    color = QColor(WIN_COLOR)
                    color.setAlpha(alpha)
                    glow.setColorAt(stop, color)
                painter.setBrush(QBrush(glow))
                painter.drawEllipse(QPointF(x, y), radius_px * 1.15, radius_px * 1.15)

        # The stones: one blit each, skipping those off screen.
        ratio = self.devicePixelRatioF()
        scale, ox, oy = view.scale, view.offset_x, view.offset_y
        for side in SIDES:
            points = self._stone_points[side]
            if not points:
                continue
            sprite, half = self._sprite(side, radius_px * STONE_RADIUS, ratio)
            for wx, wy in points:
                x = wx * scale + ox
                y = wy * scale + oy
                if -half < x < width + half and -half < y < height + half:
                    painter.drawPixmap(QPoint(round(x - half), round(y - half)), sprite)

        # The last move: an outline just inside its cells; zoomed out so far that the
        # outline would be a dot the size of a stone, a ring round the stone instead.
        if self._last_move:
            ring = radius_px * 0.9 < LAST_MOVE_MIN_RADIUS_PX
            pen = QPen(LAST_MOVE_COLOR, 2.0 if ring else max(1.5, radius_px * 0.075))
            pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            for cell in self._last_move:
                if cell in self._winning_line:  # its gold ring says enough
                    continue
                if ring:
                    center = QPointF(*view.center_of(cell))
                    painter.drawEllipse(center, LAST_MOVE_MIN_RADIUS_PX, LAST_MOVE_MIN_RADIUS_PX)
                else:
                    painter.drawPolygon(self._hex_polygon(cell, 0.9))

        # The winning line: a gold ring round each of its stones and a thick
        # translucent band through their centres.
        if self._winning_line:
            ring = QPen(WIN_COLOR.darker(112), max(1.5, radius_px * 0.1))
            painter.setPen(ring)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            ring_radius = radius_px * (STONE_RADIUS + 0.08)
            for cell in self._winning_line:
                painter.drawEllipse(QPointF(*view.center_of(cell)), ring_radius, ring_radius)
        if len(self._winning_line) >= 2:
            start = QPointF(*view.center_of(self._winning_line[0]))
            end = QPointF(*view.center_of(self._winning_line[-1]))
            band = QColor(WIN_COLOR)
            band.setAlpha(140)
            pen = QPen(band, max(3.0, radius_px * 0.3))
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            painter.setPen(pen)
            painter.drawLine(start, end)
            core = QPen(QColor(255, 255, 255, 200), max(1.0, radius_px * 0.06))
            core.setCapStyle(Qt.PenCapStyle.RoundCap)
            painter.setPen(core)
            painter.drawLine(start, end)

    def paintEvent(self, event: QPaintEvent | None) -> None:
        if self.width() <= 0 or self.height() <= 0:
            return
        view = self.viewport
        ratio = self.devicePixelRatioF()
        width, height = self.width(), self.height()
        key: tuple[object, ...] = (self._version, view.size, view.scale, view.offset_x)
        key += (view.offset_y, width, height, ratio)
        if self._layer is None or key != self._layer_key:
            layer = self._layer
            if (
                layer is None
                or layer.size() != self.size() * ratio
                or layer.devicePixelRatioF() != ratio
            ):
                layer = QPixmap(self.size() * ratio)
                layer.setDevicePixelRatio(ratio)
            layer_painter = QPainter(layer)
            self._paint_layer(layer_painter)
            layer_painter.end()
            self._layer, self._layer_key = layer, key

        painter = QPainter(self)
        painter.drawPixmap(0, 0, self._layer)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        radius_px = view.hex_radius_px

        # The pending stone: translucent, with a dashed outline round its cell.
        if self._pending is not None and self._pending_side is not None:
            self._draw_stone(painter, self._pending, self._pending_side, 0.6)
            pen = QPen(side_color(self._pending_side).darker(130), max(1.5, radius_px * 0.07))
            pen.setStyle(Qt.PenStyle.DashLine)
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            x, y = view.center_of(self._pending)
            outline = radius_px * (STONE_RADIUS + 0.1)
            painter.drawEllipse(QPointF(x, y), outline, outline)

        # The hover preview: the side's stone, faint, on a cell it may take.
        hover = self._hover
        side = self._interactive_side
        if (
            self._interactive
            and side is not None
            and hover is not None
            and not self._dragging
            and self._is_playable(hover)
        ):
            self._draw_stone(painter, hover, side, 0.38)
        painter.end()
