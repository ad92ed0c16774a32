"""How a game session ends, as methods: a seat's forfeit, the end of the game, the
no-show of seats that never came (and why: the limit, or how a bot's dial failed), and
the guard that turns a seat's failure (or a bug) into an end instead of an exception.

``SessionEnding`` sits between ``game.session_view.SessionView`` (the state) and the
inputs of ``game.session.GameSession``; ``game.session_end`` holds the pure shapes of an
end (result, ``end`` packet, actions) that these methods put together. Every input of
the session runs inside ``_guarded``, so no method of the session raises.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from game.seat_errors import SeatError, SeatNoShowError, SeatStallError, SeatTimeoutError
from game.session_actions import Action, GameOver, RecordMove, SendTo
from game.session_end import aborted, end_actions, end_packet, explained
from game.session_view import SessionView
from models import (
    CLOSE_GOING_AWAY,
    CLOSE_INTERNAL_ERROR,
    CLOSE_NORMAL,
    Coord,
    EndCause,
    GameRecord,
    GameResult,
    NopePacket,
    Player,
    RecordedMove,
    ResultReason,
)

__all__ = ["SessionEnding"]


class SessionEnding(SessionView):
    """A game's state (``SessionView``) and the ways it ends."""

    def _forfeit(self, error: SeatError, now: float) -> list[Action]:
        """``error.side`` loses by forfeit with ``error.cause``; ``nope`` first to a
        connected seat that the error tells (``SeatError.tells_seat``). A flag of a
        stateless seat whose turn's tries failed says that its bot was not reached."""
        loser = error.side
        seat = self._seats[loser]
        tries = seat.failed_tries
        if tries is not None and isinstance(error, SeatTimeoutError | SeatStallError):
            error = tries.explain(error)
        actions: list[Action] = []
        if error.tells_seat and seat.connected and seat.info.speaks_websocket:
            actions.append(SendTo(loser, NopePacket(reason=str(error))))
        result = GameResult(winner=loser.other, reason=ResultReason.FORFEIT, cause=error.cause)
        return actions + self._finish(result, f"{loser.value} forfeits: {error}", now)

    def _finish(
        self, result: GameResult, detail: str, now: float, code: int = CLOSE_NORMAL
    ) -> list[Action]:
        """End the game with ``result`` (``detail``: its reason in words).

        A person's first stone of a move that never got its second (they resigned, ran
        out of time, sent an illegal second stone, or the game ended otherwise) stays
        where everyone saw it: on the `end` board and in the record, as the record's
        last move, of that stone alone (notation ``[/]``, which HTTTX notation v2 allows
        on a final turn that does not win)."""
        request, thinking_ms = self._request, None
        if self._timer.running is not None:
            thinking_ms = self._timer.stop(now)  # the time used until the end counts
        self._request = None
        actions: list[Action] = []
        if request is not None and request.placed:
            actions.append(self._record_lone_stone(request.side, request.placed, thinking_ms))
        for seat in self._seats.values():
            seat.reconnect_by = None
        return actions + self._end_with(explained(result, detail), detail, code)

    def _end_with(self, result: GameResult, detail: str, code: int) -> list[Action]:
        """Make ``result`` the game's, and the actions of its end: the `end` packet (on
        the board as the record shows it), the closes, ``GameOver``."""
        self._result = result
        self._end = end = end_packet(result, self.board)
        return end_actions(result, detail, end, self._listening(), code, self.record())

    def _guarded_over(self, now: float, result: GameResult, moves: int | None) -> list[Action]:
        """``GameSession.recorded_over``: end the game with ``result``, the store's, or
        end it again so if it ended otherwise here (its `end` not sent yet)."""
        detail = result.detail or result.end_detail or "the game is recorded over already"
        if moves is not None and self._result != result:
            self._keep_recorded(moves)
        if self._result is None:
            return self._guarded(
                now, lambda now: self._finish(result, detail, now, CLOSE_GOING_AWAY)
            )
        self._advance(now)
        if self._result == result:
            return []
        return self._end_with(result, detail, CLOSE_GOING_AWAY)

    def _keep_recorded(self, moves: int) -> None:
        """The stored record holds the first ``moves`` moves alone (the store refused
        the rest, a person's first stone of the next included): so do this session's
        record and the board its `end` shows."""
        if self._request is not None:
            self._request.placed = []
        del self._moves[moves:]
        self._board_shown = 1 + sum(len(move.pieces) for move in self._moves)

    def _record_lone_stone(
        self, side: Player, stones: list[Coord], thinking_ms: int | None
    ) -> RecordMove:
        seat = self._seats[side]
        recorded = RecordedMove(
            side=side,
            pieces=list(stones),
            clock_ms=self._timer.remaining_ms(side),
            thinking_ms=thinking_ms,
            latency_ms=round(seat.rtt * 1000) if seat.rtt_known else None,
        )
        self._moves.append(recorded)
        return RecordMove(len(self._moves) - 1, recorded)

    def _guarded(self, now: float, handle: Callable[[float], list[Action]]) -> list[Action]:
        """Run one input: a ``SeatError`` is that seat's forfeit, any other exception
        ends the game as aborted; a finished game takes no input."""
        now = self._advance(now)
        if self._result is not None:
            return []  # nothing changes a finished game
        try:
            return handle(now)
        except SeatError as error:
            return self._safely(partial(self._forfeit, error, now))
        except Exception as exc:  # a bug here must cost one game, never the server
            return self._safely(partial(self._internal_error, exc, now))

    def _internal_error(self, exc: Exception, now: float) -> list[Action]:
        detail = f"internal error in the game session: {exc!r}"
        return self._finish(aborted(), detail, now, CLOSE_INTERNAL_ERROR)

    def _safely(self, finish: Callable[[], list[Action]]) -> list[Action]:
        try:
            return finish()
        except Exception as exc:  # the end itself failed: still end, with the bare facts
            detail = f"internal error while ending the game: {exc!r}"
            result = explained(self._result or aborted(), detail)
            self._result = result
            self._request = None
            return [GameOver(result, GameRecord(game_id=self.game_id, result=result), detail)]

    # ------------------------------------------------------------ no-shows

    def _absent(self) -> list[Player]:
        return [side for side, seat in self._seats.items() if not seat.ever_connected]

    def _nobody_missing_can_come(self) -> bool:
        """Whether some seat never connected and none that did not ever will: each one's
        bot refused its dial for good (``DialFailure.final``)."""
        absent = self._absent()
        return bool(absent) and all(
            (failure := self._seats[side].dial_failure) is not None and failure.final
            for side in absent
        )

    def _no_show(self, now: float) -> list[Action]:
        """The seats that never connected forfeit (both: a draw), each with why: the
        no-show limit, and how its bot's last dial failed if it was dialled."""
        absent = self._absent()
        if len(absent) == 1:
            raise SeatNoShowError(absent[0], self._why_absent(absent[0]))
        result = GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.NO_SHOW)
        if all(self._seats[side].dial_failure is None for side in absent):
            detail = f"neither seat connected within {self.limits.no_show_s:g} s"
        else:
            detail = "neither seat connected: " + "; ".join(map(self._why_absent, absent))
        return self._finish(result, detail, now)

    def _why_absent(self, side: Player) -> str:
        failure = self._seats[side].dial_failure
        if failure is not None and failure.final:
            return f"{side.value} could not connect: {failure.reason}"
        within = f"{side.value} did not connect within {self.limits.no_show_s:g} s"
        return within if failure is None else f"{within} (the last try: {failure.reason})"
