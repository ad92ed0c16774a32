"""A deliberately naive HTTTX rules reference, for checking ``game.rules`` against.

It keeps nothing but the list of stones and rescans the whole board for every answer:
slow, but simple enough to be obviously right. Property tests replay the same games on
both and demand the same answers; ``bench/rules.py`` uses it as the baseline.
"""

from __future__ import annotations

from collections.abc import Iterable

AXES = ((1, 0), (0, 1), (1, -1))


def naive_distance(q1: int, r1: int, q2: int, r2: int) -> int:
    return max(abs(q1 - q2), abs(r1 - r2), abs((q1 + r1) - (q2 + r2)))


class NaivePosition:
    """Same rules and the same public surface as ``game.rules.Position``, no cleverness."""

    def __init__(
        self,
        view_distance: int = 8,
        win_distance: int = 6,
        *,
        setup: Iterable[tuple[int, int, str]] | None = None,
        to_move: str = "o",
        turn_limit: int | None = None,
    ) -> None:
        self.view_distance = view_distance
        self.win_distance = win_distance
        self.turn_limit = turn_limit
        self.stones: list[tuple[int, int, str]] = [(0, 0, "x")] if setup is None else list(setup)
        self.to_move = to_move
        self.stones_left = 2
        self.moves_played = 0
        self.winner: str | None = None
        self.line: tuple[tuple[int, int], ...] = ()
        self.drawn = False

    def copy(self) -> NaivePosition:
        clone = NaivePosition.__new__(NaivePosition)
        clone.__dict__.update(self.__dict__)
        clone.stones = list(self.stones)
        return clone

    def is_over(self) -> bool:
        return self.winner is not None or self.drawn

    def why_illegal(self, q: int, r: int) -> str | None:
        if self.is_over():
            return "game over"
        for sq, sr, _ in self.stones:
            if (sq, sr) == (q, r):
                return "occupied"
        if not self.stones:
            return None if (q, r) == (0, 0) else "out of view"
        for sq, sr, _ in self.stones:
            if naive_distance(q, r, sq, sr) <= self.view_distance:
                return None
        return "out of view"

    def is_legal(self, q: int, r: int) -> bool:
        return self.why_illegal(q, r) is None

    def winning_line(self, side: str) -> tuple[tuple[int, int], ...]:
        """Scan every stone of ``side`` for the start of a long enough run."""
        owned = {(q, r) for q, r, s in self.stones if s == side}
        for q, r in sorted(owned):
            for dq, dr in AXES:
                if (q - dq, r - dr) in owned:
                    continue  # not the start of its run
                run = [(q, r)]
                while (run[-1][0] + dq, run[-1][1] + dr) in owned:
                    run.append((run[-1][0] + dq, run[-1][1] + dr))
                if len(run) >= self.win_distance:
                    return tuple(run)
        return ()

    def place(self, q: int, r: int) -> None:
        reason = self.why_illegal(q, r)
        if reason is not None:
            raise ValueError(reason)
        side = self.to_move
        self.stones.append((q, r, side))
        line = self.winning_line(side)
        if line:
            self.winner, self.line = side, line
            self.moves_played += 1
            return
        if self.stones_left == 2:
            self.stones_left = 1
            return
        self.stones_left = 2
        self.to_move = "x" if side == "o" else "o"
        self.moves_played += 1
        if self.turn_limit is not None and self.moves_played >= self.turn_limit:
            self.drawn = True

    def legal_cells(self) -> set[tuple[int, int]]:
        if self.is_over():
            return set()
        if not self.stones:
            return {(0, 0)}
        occupied = {(q, r) for q, r, _ in self.stones}
        radius = self.view_distance
        cells = set()
        for sq, sr, _ in self.stones:
            for dq in range(-radius, radius + 1):
                for dr in range(-radius, radius + 1):
                    if (
                        naive_distance(0, 0, dq, dr) <= radius
                        and (sq + dq, sr + dr) not in occupied
                    ):
                        cells.add((sq + dq, sr + dr))
        return cells
