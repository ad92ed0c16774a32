"""Benchmark: the board widget stays smooth with 1000 stones.

A legal 1000-stone game is played by a random walk (each stone within two cells of a
recent one, stones that would end the game skipped, ``game.rules.Position`` checking
every one), and shown on a ``BoardWidget`` of 1280 x 800 pixels with its legal cells
and last move, rendered offscreen into a QImage the way a paint event draws the
screen. Frames timed, in the same run and alternating every round:

* the empty board (no stones, the origin framed): the baseline;
* 1000 stones, the whole game framed (every stone on screen);
* 1000 stones while panning a closer view (about 20 px per hex radius, grid lines
  drawn): every frame moves the board by a pixel, so every frame redraws everything;
* 1000 stones while zooming around the cursor, in and out by one wheel notch;
* 1000 stones while only the hover preview moves (the cached board is reused).

It also times ``set_position`` with the 1000-stone game and its legal cells: what each
new move or each step of a replay costs before the next frame.

Every frame except the hover ones changes the view first, so nothing drawn before can be
reused. It prints the median milliseconds per frame, frames per second, the ratio to
the empty board, and whether the frame fits in 16.7 ms (60 frames per second). Rounds
alternate between the cases and the median over rounds is printed, because machines are
shared and noisy. Nothing is asserted.

Run: ``.venv/bin/python bench/ui_board.py`` (``--rounds N``, ``--frames N``; a few
seconds). ``QT_QPA_PLATFORM`` defaults to ``offscreen``, so no display is needed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PyQt5.QtGui import QImage
from PyQt5.QtWidgets import QApplication

from game.rules import Position
from tests.random_games import unfinished_game
from ui.board_widget import BoardWidget
from ui.offscreen import prepare_offscreen

prepare_offscreen()

WIDTH, HEIGHT = 1280, 800
STONES = 1000
FRAME_BUDGET_MS = 1000 / 60


def game_like(stones: int, seed: int) -> Position:
    """A legal, unfinished game of ``stones`` stones that clusters like real play: each
    stone lands within two cells of one of the last dozen stones (now and then of any)."""
    return unfinished_game(stones, seed, reach=2, recent=12)


class Scene:
    """One benchmark case: a widget showing a position, and what changes per frame."""

    def __init__(self, position: Position | None, step: Callable[[BoardWidget, int], None]):
        self.widget = BoardWidget()
        self.widget.resize(WIDTH, HEIGHT)
        self.widget.show()
        self.image = QImage(WIDTH, HEIGHT, QImage.Format.Format_ARGB32_Premultiplied)
        if position is None:
            self.widget.set_position({})
        else:
            stones = {(q, r): side for q, r, side in position.stones}
            last = tuple((q, r) for q, r, _ in position.stones[-2:])
            self.widget.set_position(stones, last_move=last, legal=position.legal_cells())
            self.widget.set_interactive(True, position.to_move)
        self.step = step
        self.frame = 0

    def ms_per_frame(self, frames: int) -> float:
        """Mean milliseconds to change the view and render it, over ``frames`` frames."""
        started = time.perf_counter()
        for _ in range(frames):
            self.step(self.widget, self.frame)
            self.widget.render(self.image)
            self.frame += 1
        return (time.perf_counter() - started) / frames * 1000


def nudge(widget: BoardWidget, frame: int) -> None:
    """Pan by one pixel, back and forth: the whole board must be redrawn."""
    widget.viewport.pan(1.0 if frame % 2 else -1.0, 0.0)


def zoom(widget: BoardWidget, frame: int) -> None:
    """One wheel notch in, then out again, around a point off the centre."""
    factor = 1.15 if frame % 2 == 0 else 1 / 1.15
    widget.viewport.zoom_at(WIDTH * 0.4, HEIGHT * 0.6, factor)


def closer(widget: BoardWidget) -> None:
    """Zoom to about 20 px per hex radius around the centre, where play happens."""
    view = widget.viewport
    view.zoom_at(WIDTH / 2, HEIGHT / 2, 20.0 / view.hex_radius_px)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds per case (median)")
    parser.add_argument("--frames", type=int, default=30, help="frames per round")
    parser.add_argument(
        "--seed", type=int, default=1, help="of the random 1000-stone game (default 1)"
    )
    args = parser.parse_args()

    app = QApplication.instance() or QApplication(sys.argv)
    print(__doc__.split("\n\n")[0])
    print()
    position = game_like(STONES, args.seed)
    legal = len(position.legal_cells())
    print(f"{len(position)} stones, {legal} legal cells, a {WIDTH} x {HEIGHT} widget")

    panning = Scene(position, nudge)
    closer(panning.widget)
    zooming = Scene(position, zoom)
    closer(zooming.widget)
    hover_cells = sorted(position.legal_cells())[:64]

    def hover(widget: BoardWidget, frame: int) -> None:
        widget._set_hover(hover_cells[frame % len(hover_cells)])  # what a mouse move does

    hovering = Scene(position, hover)
    closer(hovering.widget)
    scenes = {
        "empty board (baseline)": Scene(None, nudge),
        "1000 stones, all framed": Scene(position, nudge),
        "1000 stones, panning": panning,
        "1000 stones, zooming": zooming,
        "1000 stones, hover only": hovering,
    }
    for scene in scenes.values():  # warm up: sprites, caches, the first allocation
        scene.ms_per_frame(3)
    samples: dict[str, list[float]] = {name: [] for name in scenes}
    for _ in range(args.rounds):
        for name, scene in scenes.items():
            samples[name].append(scene.ms_per_frame(args.frames))

    baseline = statistics.median(samples["empty board (baseline)"])
    print()
    print(f"{'frame':<26} {'ms/frame':>9} {'fps':>7} {'vs empty':>9}  under 16.7 ms (60 fps)")
    for name, values in samples.items():
        ms = statistics.median(values)
        fits = "yes" if ms < FRAME_BUDGET_MS else "NO"
        print(f"{name:<26} {ms:>9.2f} {1000 / ms:>7.0f} {ms / baseline:>8.1f}x  {fits}")
    updates = []
    widget = scenes["1000 stones, all framed"].widget
    stones = {(q, r): side for q, r, side in position.stones}
    for _ in range(args.rounds):
        started = time.perf_counter()
        widget.set_position(stones, legal=position.legal_cells())
        updates.append((time.perf_counter() - started) * 1000)
    print()
    print(f"set_position, 1000 stones and {legal} legal cells: {statistics.median(updates):.1f} ms")
    app.quit()


if __name__ == "__main__":
    main()
