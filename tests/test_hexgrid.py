"""Axial geometry."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from game.hexgrid import AXES, NEIGHBOURS, distance, hexagon, hexagon_size, ring, row_span

coords = st.tuples(st.integers(-1000, 1000), st.integers(-1000, 1000))


@given(coords, coords)
def test_distance_is_symmetric_and_zero_only_for_the_same_cell(
    a: tuple[int, int], b: tuple[int, int]
) -> None:
    assert distance(a, b) == distance(b, a)
    assert (distance(a, b) == 0) == (a == b)


@given(coords, coords, coords)
def test_distance_obeys_the_triangle_inequality(
    a: tuple[int, int], b: tuple[int, int], c: tuple[int, int]
) -> None:
    assert distance(a, c) <= distance(a, b) + distance(b, c)


def test_neighbours_are_the_six_cells_at_distance_one() -> None:
    assert len(set(NEIGHBOURS)) == 6
    assert all(distance((0, 0), n) == 1 for n in NEIGHBOURS)
    assert set(AXES) <= set(NEIGHBOURS)


@pytest.mark.parametrize("radius", [0, 1, 2, 8, 50])
def test_hexagon_holds_exactly_the_cells_within_the_radius(radius: int) -> None:
    cells = hexagon((3, -2), radius)
    assert len(cells) == len(set(cells)) == hexagon_size(radius)
    assert all(distance((3, -2), c) <= radius for c in cells)


def test_a_view_distance_of_fifty_means_7651_cells() -> None:
    assert hexagon_size(50) == 7651


@pytest.mark.parametrize("radius", [1, 2, 5])
def test_ring_holds_the_cells_at_exactly_the_radius(radius: int) -> None:
    cells = list(ring((1, 1), radius))
    assert len(cells) == len(set(cells)) == 6 * radius
    assert all(distance((1, 1), c) == radius for c in cells)


def test_row_span_outside_the_hexagon_is_an_error() -> None:
    with pytest.raises(ValueError, match="outside a hexagon of radius 2"):
        row_span(2, 3)
