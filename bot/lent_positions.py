"""The bot's own copy of a session's position, lent to it job after job.

A bot changes its position freely (a search plays on it), so each job gets a copy of
the session's: O(stones). A bot that keeps no reference to it after answering
(``BaseBot.keeps_positions`` False) can get the same object back with the next job
instead, brought up to date with the stones placed since: O(new stones). That is
safe only when the bot's call has returned (``returned``: a call past its time may still
be running) and the copy is as the bot got it (``Position.change_mark``: stones it
tried and took back are fine); anything else gets a new copy.

>>> from game.rules import Position
>>> session = Position()
>>> lender = PositionLender()
>>> first = lender.lend(1, session, [])
>>> first is session
False
>>> lender.returned(1)
>>> session.place(1, 0); session.place(2, 0); session.rebase()  # as the session does
>>> second = lender.lend(2, session, [(1, 0), (2, 0)])
>>> second is first, second.stones == session.stones
(True, True)
>>> second.place(5, 5)  # the bot leaves a stone on it...
>>> lender.returned(2)
>>> import warnings
>>> with warnings.catch_warnings(action="ignore"):  # (it warns: LentPositionChanged)
...     lender.lend(3, session, []) is second  # ...so the next job gets a new copy
False
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from game.hexgrid import Hex
from game.rules import IllegalMoveError, Position

__all__ = ["LentPositionChanged", "PositionLender"]


class LentPositionChanged(RuntimeWarning):
    """A bot that declares ``keeps_positions`` False left its position changed (a stone
    on it not taken back): it still plays, but gets a new copy each such time, so the
    declaration saves nothing. Shown once per process (Python's default for warnings)."""


_CHANGED = (
    "the bot declares keeps_positions = False but left the position it was lent changed "
    "(a stone not taken back?): it gets a new copy of the board instead, as if it kept "
    "positions. Take back the stones you try (Position.undo) to be lent the same one again."
)


@dataclass(frozen=True, slots=True)
class _Loan:
    """``copy``, lent for job ``job_id``: a copy of ``source`` when it had
    ``source_stones`` stones; ``mark`` is the copy's ``change_mark`` then."""

    job_id: int
    source: Position
    source_stones: int
    copy: Position
    mark: tuple[object, ...]

    def brought_up_to_date(self, position: Position, new: Sequence[Hex]) -> Position | None:
        """The copy, as the bot left it (``mark`` unchanged: the caller checks it), moved
        on to ``position`` (this loan's source, with the stones ``new`` placed since, then
        rebased); None if it cannot be."""
        copy = self.copy
        if position is not self.source:
            return None
        if len(position) == self.source_stones:
            return copy
        if len(position) != self.source_stones + len(new):
            return None
        try:
            for q, r in new:
                copy.place(q, r)
            copy.rebase()
        except (IllegalMoveError, ValueError):  # not the session's stones after all
            return None
        return copy if copy.to_move == position.to_move else None


class PositionLender:
    """One session's copy for its bot (see the module docstring)."""

    __slots__ = ("_back", "_out")

    def __init__(self) -> None:
        self._out: _Loan | None = None  # with the bot
        self._back: _Loan | None = None  # its call has returned

    def lend(self, job_id: int, position: Position, new: Sequence[Hex]) -> Position:
        """The bot's position for job ``job_id``: a copy of ``position`` (the session's
        own), or the last one lent, moved on by ``new`` (the stones placed on
        ``position`` since that one was lent)."""
        back, self._back = self._back, None
        copy = None
        if back is not None:
            if back.copy.change_mark() == back.mark:
                copy = back.brought_up_to_date(position, new)
            else:  # silent, this would only cost time: the bot's author wants to know
                warnings.warn(_CHANGED, LentPositionChanged, stacklevel=2)
        if copy is None:
            copy = position.copy()
        self._out = _Loan(job_id, position, len(position), copy, copy.change_mark())
        return copy

    def returned(self, job_id: int) -> None:
        """The bot's call for job ``job_id`` has returned: its position is free again."""
        if self._out is not None and self._out.job_id == job_id:
            self._back, self._out = self._out, None
