"""``BaseBot``: subclass it, implement one method, serve it.

The prototype's API, unchanged::

    class MyBot(BaseBot):
        def choose_move(self, cells: list[Cell], player: Player, match: Match):
            candidates = valid_placement_cells(cells, match.view_distance)
            return candidates[0], candidates[1]

Beyond it, without breaking it:

* ``play(position, player, match, deadline)`` works on the fast ``game.rules.Position``
  (a copy the bot may change) instead of ``list[Cell]``; override it instead of
  ``choose_move`` for speed.
* Either method may return a ``MoveDecision`` (the move plus its evaluation and the
  other moves considered, best first), which the server records and shows.
* ``self.deadline`` (also passed to ``play``) says how long the bot has; a search can
  poll ``deadline.expired`` and report its best move so far with ``deadline.report``,
  which the framework sends if time runs out.
* ``match`` carries the game's real settings when the server sends them (the ``x-match``
  config key); otherwise the defaults.

One bot instance serves one game session, so instance attributes are per game.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from bot.capabilities import Capabilities, default_capabilities
from game.rules import Position
from models import Cell, Coord, Match, MoveOption, Player, PositionEvaluation

__all__ = ["BaseBot", "Deadline", "MoveDecision", "PositionEvaluation", "cells_of"]


@dataclass
class MoveDecision:
    """A bot's answer: two stones, and optionally what it thinks of the result.

    ``considerations`` are other moves the bot weighed, best first.
    """

    pieces: tuple[Coord, Coord]
    evaluation: PositionEvaluation | None = None
    considerations: list[MoveOption] = field(default_factory=list)

    @classmethod
    def of(cls, answer: MoveDecision | Sequence[Any]) -> MoveDecision:
        """Normalise what a bot returned: a ``MoveDecision``, or two stones as ``Coord``,
        ``(q, r)`` tuples or ``{"q": .., "r": ..}`` dicts.

        >>> MoveDecision.of([(1, 0), Coord(q=2, r=0)]).pieces
        (Coord(q=1, r=0), Coord(q=2, r=0))
        """
        if isinstance(answer, MoveDecision):
            return answer
        if type(answer) is tuple and len(answer) == 2:  # the usual answer: no list
            return cls((_coord(answer[0]), _coord(answer[1])))  # (positional: quicker)
        stones = list(answer)
        if len(stones) != 2:
            raise ValueError(f"a move is 2 stones, the bot returned {len(stones)}: {answer!r}")
        first, second = (_coord(stone) for stone in stones)
        return cls(pieces=(first, second))

    def to_option(self) -> MoveOption:
        return MoveOption(pieces=list(self.pieces), evaluation=self.evaluation)


#: Coords of ``(q, r)`` answers, shared (they are frozen): a bot answers near the same
#: cells move after move, and building a pydantic model costs more than a lookup.
_COORDS: dict[tuple[int, int], Coord] = {}
_COORDS_MAX = 1 << 14


def _coord(stone: Any) -> Coord:
    if type(stone) is tuple and len(stone) == 2:
        q, r = stone
        # Exactly int: True and 1.0 equal 1, and would find its Coord.
        if type(q) is int and type(r) is int:
            coord = _COORDS.get(stone)
            if coord is None:
                coord = Coord(q=q, r=r)
                if len(_COORDS) >= _COORDS_MAX:
                    _COORDS.clear()
                _COORDS[stone] = coord
            return coord
    if isinstance(stone, Coord):
        return stone
    if isinstance(stone, dict):
        return Coord.model_validate(stone)
    if isinstance(stone, tuple | list) and len(stone) == 2:
        return Coord(q=stone[0], r=stone[1])
    raise ValueError(f"a stone is a Coord, a (q, r) pair or a {{q, r}} dict, got {stone!r}")


class Deadline:
    """How long a bot may think, polled by the bot; thread-safe.

    ``expired`` turns true when the time is up or the framework cancels the request
    (an ``interrupt``, a closed connection). A bot that searches should check it now and
    then and ``report`` its best move so far: if the time runs out first, that move is
    sent (else a legal fallback).

    >>> deadline = Deadline(None)
    >>> deadline.expired, deadline.remaining()
    (False, inf)
    >>> deadline.cancel(); deadline.expired
    True
    """

    def __init__(self, seconds: float | None, *, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._ends_at = math.inf if seconds is None else clock() + seconds
        # A plain flag, not a threading.Event: one attribute written by the event loop
        # and read by the bot's thread needs no lock, and a Deadline is made per move.
        self._cancelled = False
        self._best: MoveDecision | None = None

    @property
    def ends_at(self) -> float:
        """The ``clock()`` time at which the answer is due (``inf``: no limit)."""
        return self._ends_at

    def remaining(self) -> float:
        """Seconds left (``inf`` without a limit, 0 once expired)."""
        if self._cancelled:
            return 0.0
        return max(0.0, self._ends_at - self._clock())

    @property
    def expired(self) -> bool:
        return self._cancelled or self._clock() >= self._ends_at

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        self._cancelled = True

    def report(self, move: MoveDecision | Sequence[Any]) -> None:
        """Record the best move found so far."""
        self._best = MoveDecision.of(move)

    @property
    def best(self) -> MoveDecision | None:
        return self._best


def cells_of(position: Position) -> list[Cell]:
    """The board of ``position`` as the prototype's ``list[Cell]``."""
    return [Cell(q=q, r=r, p=Player(side)) for q, r, side in position.stones]


class BaseBot:
    """Base class of every bot. Override ``choose_move`` (or ``play``).

    Optional hooks: ``evaluate`` (declare ``evaluation`` in the capabilities),
    ``on_config`` (declare ``config``), ``on_setup`` (a new start position).
    """

    #: The bot's name in its served ``meta`` when ``capabilities`` gives none (else
    #: the class's name): what records and notation call its seat.
    name: ClassVar[str | None] = None

    #: True for a bot that answers in microseconds (a table lookup, a first legal cell):
    #: a bot server with a thread pool (the default) then calls it directly on the event
    #: loop, without the hop to a worker thread and back, which costs more than such a
    #: bot's own work. The trade-off: while it runs, nothing else on that server runs —
    #: a slow answer stalls every connection (heartbeats, other games), and its
    #: ``Deadline`` cannot be enforced (the time-limit answer is due on the same loop the
    #: bot blocks; it is sent late, if at all). Leave it False for anything that searches.
    #: Ignored with worker processes (``--process-pool``): the call goes to the worker.
    answers_on_loop: ClassVar[bool] = False

    #: False for a bot that keeps no reference to a request's ``position`` once it has
    #: answered: the bot server may then hand it the same object with the next
    #: request, brought up to date in O(new stones), instead of a new copy of the whole
    #: board (O(stones): 18 µs at 2000 stones). Only when its call has returned and it
    #: left the position as it got it (stones it tried and took back are fine);
    #: otherwise it gets a new copy as usual. Keep it True if you store positions.
    keeps_positions: ClassVar[bool] = True

    def __init__(self) -> None:
        self.deadline: Deadline = Deadline(None)

    @classmethod
    def warm_up(cls) -> None:
        """Work done once per process before the bot is ready to play: compiling a
        search, loading tables. A bot server runs it before it answers on
        ``capabilities.json`` (``htttx-bot``: before it listens), so that no game starts
        on a bot not yet able to keep its clock; in a worker thread (or in each worker
        process), never on the event loop. The default does nothing."""

    @classmethod
    def capabilities(cls) -> Capabilities:
        """What this bot supports; the framework implements all of it. Default: the
        basic WebSocket and stateless APIs with their base features."""
        return default_capabilities()

    # ----------------------------------------------------------------- moves

    def choose_move(self, cells: list[Cell], player: Player, match: Match) -> Any:
        """Pick 2 stones for ``player`` on the board ``cells``.

        Return ``(Coord, Coord)`` (or ``(q, r)`` pairs), or a ``MoveDecision``.
        """
        raise NotImplementedError(f"{type(self).__name__} must override choose_move or play")

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        """Pick 2 stones on the engine's ``position`` (a copy: change it freely).

        The default calls ``choose_move`` with the board as ``list[Cell]``.
        """
        self.deadline = deadline
        return self.choose_move(cells_of(position), player, match)

    # ------------------------------------------------------------ evaluation

    def evaluate(self, cells: list[Cell], player: Player, match: Match) -> PositionEvaluation:
        """Judge the position with ``player`` to move (positive favours X)."""
        raise NotImplementedError(f"{type(self).__name__} declares evaluation but has no evaluate")

    def evaluate_position(
        self, position: Position, player: Player, match: Match, deadline: Deadline
    ) -> PositionEvaluation:
        """``evaluate`` on the engine's position; the default calls ``evaluate``."""
        self.deadline = deadline
        return self.evaluate(cells_of(position), player, match)

    # ----------------------------------------------------------------- hooks

    def on_config(self, depth: int | None, extras: dict[str, Any]) -> None:
        """A ``config`` packet: ``depth`` and every ``x-`` key (``extras``)."""

    def on_setup(self, position: Position) -> None:
        """A new start position (``setup``); the default does nothing."""
