"""Hex <-> pixel maths of the board (ui.hexlayout): pure, no Qt."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from game.hexgrid import NEIGHBOURS, Hex
from ui.hexlayout import (
    FIT_MAX_SCALE,
    MAX_SCALE,
    MIN_SCALE,
    SQRT3,
    Viewport,
    hex_corners,
    hex_to_world,
    world_to_hex,
)

coords = st.tuples(st.integers(-2000, 2000), st.integers(-2000, 2000))
sizes = st.floats(1.0, 100.0)
# A point strictly inside a hex: polar offset from its centre, shorter than the inner
# radius (√3/2 of the size) so it cannot reach a neighbour.
offsets = st.tuples(st.floats(0.0, 0.999 * SQRT3 / 2), st.floats(0.0, 2 * math.pi))


@given(coords, sizes)
def test_world_to_hex_inverts_hex_to_world(cell: Hex, size: float) -> None:
    assert world_to_hex(*hex_to_world(*cell, size), size) == cell


@given(coords, sizes, offsets)
def test_every_point_inside_a_hex_hits_that_hex(
    cell: Hex, size: float, offset: tuple[float, float]
) -> None:
    length, angle = offset
    cx, cy = hex_to_world(*cell, size)
    x = cx + length * size * math.cos(angle)
    y = cy + length * size * math.sin(angle)
    assert world_to_hex(x, y, size) == cell


@given(coords, st.floats(-30.0, 30.0), st.floats(-30.0, 30.0))
def test_the_hit_is_the_nearest_centre(cell: Hex, dx: float, dy: float) -> None:
    """Anywhere, also right next to an edge or a corner: the cell whose centre is
    nearest wins (up to rounding at exact ties)."""
    size = 10.0
    cx, cy = hex_to_world(*cell, size)
    x, y = cx + dx, cy + dy
    hit = world_to_hex(x, y, size)
    hx, hy = hex_to_world(*hit, size)
    hit_distance = math.hypot(x - hx, y - hy)
    for dq, dr in NEIGHBOURS:
        nx, ny = hex_to_world(hit[0] + dq, hit[1] + dr, size)
        assert hit_distance <= math.hypot(x - nx, y - ny) + 1e-9


@pytest.mark.parametrize("corner", range(6))
def test_points_just_inside_each_corner_belong_to_the_hex(corner: int) -> None:
    size = 24.0
    cx, cy = hex_to_world(3, -5, size)
    x, y = hex_corners(cx, cy, size)[corner]
    inside = (cx + (x - cx) * 0.98, cy + (y - cy) * 0.98)
    outside = (cx + (x - cx) * 1.02, cy + (y - cy) * 1.02)
    assert world_to_hex(*inside, size) == (3, -5)
    assert world_to_hex(*outside, size) != (3, -5)


def test_orientation_plus_q_is_right_and_plus_r_is_top_right() -> None:
    size = 10.0
    x0, y0 = hex_to_world(0, 0, size)
    xq, yq = hex_to_world(1, 0, size)
    xr, yr = hex_to_world(0, 1, size)
    assert xq > x0 and yq == pytest.approx(y0)
    assert xr > x0 and yr < y0  # up on screen: y decreases
    # Neighbours are one hex width (√3 · size) apart, in every direction.
    for dq, dr in NEIGHBOURS:
        x, y = hex_to_world(dq, dr, size)
        assert math.hypot(x, y) == pytest.approx(SQRT3 * size)
    # (0, 1) lies 60° above the +x axis.
    assert math.degrees(math.atan2(-yr, xr)) == pytest.approx(60.0)


def test_hex_corners_are_pointy_top_and_shared_with_neighbours() -> None:
    size = 10.0
    corners = hex_corners(0.0, 0.0, size)
    assert len(corners) == 6
    assert all(math.hypot(x, y) == pytest.approx(size) for x, y in corners)
    # Pointy top: one corner straight up and one straight down.
    assert any(x == pytest.approx(0.0) and y == pytest.approx(-size) for x, y in corners)
    assert any(x == pytest.approx(0.0) and y == pytest.approx(size) for x, y in corners)
    # Every neighbour shares exactly two corners with the origin's hex.
    for dq, dr in NEIGHBOURS:
        other = hex_corners(*hex_to_world(dq, dr, size), size)
        shared = [c for c in corners if any(math.dist(c, o) < 1e-9 for o in other)]
        assert len(shared) == 2


# --------------------------------------------------------------------- Viewport

views = st.builds(
    Viewport,
    size=st.floats(4.0, 64.0),
    scale=st.floats(MIN_SCALE, MAX_SCALE),
    offset_x=st.floats(-5000.0, 5000.0),
    offset_y=st.floats(-5000.0, 5000.0),
)
screen_points = st.tuples(st.floats(-2000.0, 2000.0), st.floats(-2000.0, 2000.0))


@given(views, screen_points)
def test_to_world_inverts_to_screen(view: Viewport, point: tuple[float, float]) -> None:
    sx, sy = view.to_screen(*view.to_world(*point))
    assert sx == pytest.approx(point[0], abs=1e-6)
    assert sy == pytest.approx(point[1], abs=1e-6)


@given(views, coords)
def test_cell_at_the_centre_of_a_cell_is_that_cell(view: Viewport, cell: Hex) -> None:
    assert view.cell_at(*view.center_of(cell)) == cell


@given(views, screen_points, st.floats(0.2, 5.0))
def test_zoom_at_keeps_the_point_under_the_cursor(
    view: Viewport, cursor: tuple[float, float], factor: float
) -> None:
    before = view.to_world(*cursor)
    view.zoom_at(*cursor, factor)
    after = view.to_world(*cursor)
    assert after[0] == pytest.approx(before[0], rel=1e-9, abs=1e-6)
    assert after[1] == pytest.approx(before[1], rel=1e-9, abs=1e-6)
    assert MIN_SCALE <= view.scale <= MAX_SCALE


def test_zoom_is_clamped_and_the_cursor_point_still_holds() -> None:
    view = Viewport(offset_x=300.0, offset_y=200.0)
    cell_under = view.cell_at(120.0, 80.0)
    for _ in range(100):
        view.zoom_at(120.0, 80.0, 1.5)
    assert view.scale == MAX_SCALE
    assert view.cell_at(120.0, 80.0) == cell_under
    for _ in range(200):
        view.zoom_at(120.0, 80.0, 0.5)
    assert view.scale == MIN_SCALE
    assert view.cell_at(120.0, 80.0) == cell_under
    assert Viewport(scale=1000.0).scale == MAX_SCALE


def test_pan_moves_everything_by_the_same_pixels() -> None:
    view = Viewport(offset_x=10.0, offset_y=20.0, scale=2.0)
    before = view.center_of((4, -7))
    view.pan(15.0, -5.0)
    after = view.center_of((4, -7))
    assert after == pytest.approx((before[0] + 15.0, before[1] - 5.0))


cell_sets = st.lists(coords.map(lambda c: (c[0] // 40, c[1] // 40)), min_size=1, max_size=60)


@given(cell_sets, st.integers(200, 2000), st.integers(200, 2000))
def test_fit_frames_every_cell_inside_the_rectangle(
    cells: list[Hex], width: int, height: int
) -> None:
    view = Viewport()
    view.fit(cells, width, height)
    radius = view.hex_radius_px
    for cell in cells:
        x, y = view.center_of(cell)
        # The whole hex, not just its centre, is inside (unless the zoom limit stops it).
        if view.scale > MIN_SCALE:
            assert radius <= x <= width - radius
            assert radius <= y <= height - radius
    assert view.scale <= FIT_MAX_SCALE


def test_fit_centres_the_cells_and_an_empty_set_frames_the_origin() -> None:
    view = Viewport()
    view.fit([(-3, 0), (3, 0)], 800, 600)
    assert view.center_of((0, 0)) == pytest.approx((400.0, 300.0))
    view.fit([], 800, 600)
    assert view.center_of((0, 0)) == pytest.approx((400.0, 300.0))
    assert view.scale == FIT_MAX_SCALE  # one lone cell is not blown up to fill the screen


def test_fit_of_a_huge_spread_stops_at_the_zoom_limit() -> None:
    view = Viewport()
    view.fit([(-5000, 0), (5000, 0)], 800, 600)
    assert view.scale == MIN_SCALE


# Views with hexes of at least 4.8 px radius, so enumerating the screen's cells stays quick.
close_views = st.builds(
    Viewport,
    size=st.floats(8.0, 64.0),
    scale=st.floats(0.6, MAX_SCALE),
    offset_x=st.floats(-3000.0, 3000.0),
    offset_y=st.floats(-3000.0, 3000.0),
)


@settings(max_examples=40)
@given(close_views, st.integers(50, 900), st.integers(50, 900))
def test_visible_range_covers_every_cell_with_its_centre_on_screen(
    view: Viewport, width: int, height: int
) -> None:
    q_min, q_max, r_min, r_max = view.visible_range(width, height)
    rows = {r: (lo, hi) for r, lo, hi in view.visible_rows(width, height)}
    # Every cell of a generously bigger box whose centre is on screen must be covered.
    spare = 4
    seen = 0
    for r in range(r_min - spare, r_max + spare + 1):
        for q in range(q_min - spare, q_max + spare + 1):
            x, y = view.center_of((q, r))
            if 0 <= x <= width and 0 <= y <= height:
                seen += 1
                assert q_min <= q <= q_max and r_min <= r <= r_max
                assert rows[r][0] <= q <= rows[r][1]
    # And the screen's corners are inside it too (also when no centre is on screen).
    for x, y in ((0, 0), (width, 0), (0, height), (width, height)):
        q, r = view.cell_at(x, y)
        assert q_min <= q <= q_max and r_min <= r <= r_max
    assert seen > 0 or view.hex_radius_px * 2 > min(width, height)


def test_visible_range_is_not_much_bigger_than_the_screen() -> None:
    view = Viewport(offset_x=400.0, offset_y=300.0)
    _, _, r_min, r_max = view.visible_range(800, 600)
    rows = list(view.visible_rows(800, 600))
    cells_on_screen = 800 * 600 / (1.5 * SQRT3 * 24.0**2)  # screen area / hex area
    assert sum(hi - lo + 1 for _, lo, hi in rows) < 2 * cells_on_screen
    assert (r_max - r_min + 1) == len(rows)
    assert r_max - r_min + 1 <= 600 / (1.5 * 24.0) + 5  # two spare rows each side
