"""A cheap screen for positions that no game from the standard opening can reach.

A bot server is handed whole boards by its clients (a ``move_request``'s ``board``, a
stateless ``/turn``). Before it builds a ``Position`` from one, ``check_reachable`` looks
at what legal play guarantees, in O(stones):

* X's opening stone stands at (0, 0);
* the stone counts fit the side to move: X opened with one stone, then each move adds
  two, O first, so with O to move X has one stone more than O, and with X to move O has
  one more than X (``alternating=False`` skips this, for clients allowed to send moves
  in any order);
* every stone is within ``(stones - 1) * view_distance`` of the origin: each stone was
  placed within view of an earlier one, so no chain of n stones reaches farther;
* the stones form one cluster: bucketed on a grid of ``view_distance`` cells, every
  non-empty bucket is linked to the opening's through non-empty neighbouring buckets
  (two stones within view of each other lie in the same or adjacent buckets).

It is a necessary condition, not a proof of reachability: a position it lets through
may still not come from any game, but its stones span at most ``stones *
view_distance`` cells, so a ``Position`` of it costs what a real game of that many stones
costs. Stones far apart (one per row at q = 500000, say) are refused here, before any
big work.

>>> check_reachable([(0, 0, "x"), (1, 0, "o"), (2, 0, "o")], "x", view_distance=8)
>>> check_reachable([(0, 0, "x"), (1, 0, "o"), (90, 0, "o")], "x", view_distance=8)
Traceback (most recent call last):
...
game.reachable.UnreachablePositionError: (90, 0) is 90 from the origin, but 3 stones ...
"""

from __future__ import annotations

import operator
from collections.abc import Collection
from itertools import repeat

from game.rules import InvalidSetupError

__all__ = ["UnreachablePositionError", "check_reachable"]


class UnreachablePositionError(InvalidSetupError):
    """Stones that no game from the standard opening can have put on the board."""


def check_reachable(
    stones: Collection[tuple[int, int, str]],
    to_move: str,
    view_distance: int,
    *,
    alternating: bool = True,
) -> None:
    """Raise ``UnreachablePositionError`` (saying what is wrong and what legal play
    would give) unless ``stones``, ``(q, r, side)`` on distinct cells with ``to_move``
    to move, pass the screen described in the module docstring."""
    if not stones:
        raise UnreachablePositionError(
            "the board is empty; every game starts with X's stone at (0, 0)"
        )
    # Columns of the stones, then builtins over them (loops in C): this runs once per
    # request of a bot server, before the position is built, and should cost a fraction
    # of building it.
    qs, rs, sides = (list(column) for column in zip(*stones, strict=True))
    crosses = sides.count("x")
    if not any(q == 0 and r == 0 and side == "x" for q, r, side in stones):
        raise UnreachablePositionError(
            "no X stone on (0, 0); every game starts with X's stone there"
        )
    if alternating:
        _check_counts(crosses, len(stones) - crosses, to_move)
    _check_range(stones, qs, rs, view_distance)
    _check_cluster(stones, qs, rs, view_distance)


def _check_counts(crosses: int, circles: int, to_move: str) -> None:
    expected = (circles + 1, circles) if to_move == "o" else (circles - 1, circles)
    if crosses != expected[0]:
        more = "X has one stone more than O" if to_move == "o" else "O has one stone more than X"
        raise UnreachablePositionError(
            f"{crosses} X and {circles} O stones with {to_move.upper()} to move; after X's "
            f"opening stone each move adds 2, so with {to_move.upper()} to move {more}"
        )


def _check_range(
    stones: Collection[tuple[int, int, str]], qs: list[int], rs: list[int], view_distance: int
) -> None:
    reach = (len(stones) - 1) * view_distance
    # The distance from the origin is max(|q|, |r|, |q + r|).
    sums = map(operator.add, qs, rs)
    if max(map(abs, qs)) <= reach and max(map(abs, rs)) <= reach and max(map(abs, sums)) <= reach:
        return
    for q, r, _ in stones:  # say which stone
        away = max(abs(q), abs(r), abs(q + r))
        if away > reach:
            raise UnreachablePositionError(
                f"({q}, {r}) is {away} from the origin, but {len(stones)} stones reach at "
                f"most {reach} with view_distance {view_distance}"
            )


def _check_cluster(
    stones: Collection[tuple[int, int, str]], qs: list[int], rs: list[int], view_distance: int
) -> None:
    # Two cells within view_distance of each other differ by at most view_distance in q
    # and in r, so their buckets are the same or neighbours: a cluster of stones linked
    # by "within view" lies in one cluster of neighbouring buckets.
    size = repeat(view_distance)
    buckets = set(
        zip(map(operator.floordiv, qs, size), map(operator.floordiv, rs, size), strict=True)
    )
    reached = {(0, 0)}
    frontier = [(0, 0)]
    while frontier:
        bq, br = frontier.pop()
        for dq in (-1, 0, 1):
            for dr in (-1, 0, 1):
                near = (bq + dq, br + dr)
                if near in buckets and near not in reached:
                    reached.add(near)
                    frontier.append(near)
    if len(reached) < len(buckets):
        q, r = next(
            (q, r) for q, r, _ in stones if (q // view_distance, r // view_distance) not in reached
        )
        raise UnreachablePositionError(
            f"({q}, {r}) is cut off from X's opening stone: no chain of stones, each within "
            f"view_distance {view_distance} of the next, joins them"
        )
