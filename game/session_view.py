"""The state of a game session and what can be read from it without changing it.

``SessionView`` is the base of ``game.session.GameSession``: it holds the game's state
(the seats, the board, the moves, the clocks, the pending request, the result) and
answers the read-only questions (status, record, next deadline, a spectator's setup).
Everything that changes the state is ``GameSession``'s: its inputs and the flow of the
game. See ``game.session`` for the interface as a whole.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from game.adjudication import Adjudicator
from game.session_board import SessionBoard
from game.session_config import OpeningSeatError, SeatInfo, SessionLimits
from game.session_end import status_of
from game.session_state import PendingRequest, SeatState
from game.session_timing import AnswerTimer, HeartbeatGrid
from models import (
    OPENING_MOVES_TAG,
    Adjudication,
    Board,
    EndPacket,
    GameRecord,
    GameResult,
    GameStatus,
    Match,
    Move,
    Player,
    PlayerType,
    RecordedMove,
    RecordPlayer,
    SetupPacket,
)

__all__ = ["SessionView"]


class SessionView:
    """A game's state and its reads; ``GameSession`` adds the inputs."""

    def __init__(
        self,
        game_id: str,
        match: Match,
        seats: Mapping[Player, SeatInfo],
        *,
        limits: SessionLimits | None = None,
        started_at: float,
        started_wall: datetime | None = None,
        name: str | None = None,
        opening: Sequence[Move] = (),
        tags: Mapping[str, str] | None = None,
        adjudication: Adjudication | None = None,
    ) -> None:
        # Refused here, not mid-game: the seat would see a position it cannot be told.
        for side in Player:
            if opening and seats[side].learns_opening_by is None:
                raise OpeningSeatError(
                    f"{side.value}: the bot declares neither free_setup nor move_skips, so "
                    "it cannot start from an opening"
                )
        self.game_id = game_id
        #: The game's name (``NewGameRequest.name``), for its record and spectators.
        self.name = name
        self.match = match
        self.limits = limits if limits is not None else SessionLimits()
        self._seats = {
            side: SeatState(
                seats[side],
                connected=not seats[side].speaks_websocket,
                ever_connected=not seats[side].speaks_websocket,
            )
            for side in Player
        }
        self._started_at = started_at if math.isfinite(started_at) else 0.0
        self._started_wall = started_wall
        self._now = self._started_at
        self._timer = AnswerTimer(
            match,
            stall_s=self.limits.stall_s,
            seat_clocks={side: seats[side].time_control for side in Player},
        )
        self._board = SessionBoard(match, opening)
        # The opening's moves were played by nobody: no clock, no thinking time.
        self._moves = [RecordedMove(side=move.side, pieces=list(move.pieces)) for move in opening]
        #: The board's mark the game shows at its end when the store had it over with
        #: fewer moves than were played here (``GameSession.recorded_over``); else None.
        self._board_shown: int | None = None
        # Only the players' moves are watched: the opening's carry no evaluation.
        self._adjudicator = Adjudicator(adjudication)
        self._tags = dict(tags or {})
        if opening:
            self._tags[OPENING_MOVES_TAG] = str(len(opening))
        self._started = False
        self._request: PendingRequest | None = None
        self._result: GameResult | None = None
        self._end: EndPacket | None = None
        self._heartbeat = HeartbeatGrid(start=self._started_at, interval=match.heartbeat / 1000)

    # ------------------------------------------------------------------ reads

    @property
    def over(self) -> bool:
        return self._result is not None

    @property
    def result(self) -> GameResult | None:
        return self._result

    @property
    def awaiting(self) -> Player | None:
        """The side whose answer the session is waiting for."""
        return self._request.side if self._request is not None else None

    @property
    def status(self) -> GameStatus:
        if self._result is not None:
            return status_of(self._result)
        return GameStatus.IN_PROGRESS if self._started else GameStatus.WAITING

    @property
    def board(self) -> Board:
        """Every stone on the board, in the order placed (of a game the store had over
        already, those of its recorded moves: ``GameSession.recorded_over``)."""
        if self._board_shown is not None:
            return self._board.board_at(self._board_shown)
        return self._board.board()

    def _board_mark(self) -> int:
        """Where ``board`` stands: for a board taken now and built later."""
        return self._board.mark() if self._board_shown is None else self._board_shown

    @property
    def ply(self) -> int:
        """How many moves are recorded so far, the opening's included (O(1))."""
        return len(self._moves)

    @property
    def to_move(self) -> Player | None:
        """The side to move; None once the game is over."""
        return self._to_move()

    @property
    def moves(self) -> list[RecordedMove]:
        """The complete moves so far, as recorded."""
        return list(self._moves)

    def record(self) -> GameRecord:
        """The game so far (with its result once over)."""
        return GameRecord(
            game_id=self.game_id,
            name=self.name,
            player_x=self._record_player(Player.X),
            player_o=self._record_player(Player.O),
            match=self.match,
            started_at=self._started_wall,
            moves=list(self._moves),
            result=self._result,
            tags=dict(self._tags),
        )

    @property
    def next_deadline(self) -> float | None:
        """When ``timer`` must be called next; None once the game is over."""
        if self._result is not None:
            return None
        if not self._started and self._everyone_present():
            return self._started_at  # no websocket seat: start at the first timer call
        candidates: list[float] = []
        if not self._started and self._someone_never_came():
            candidates.append(self._started_at + self.limits.no_show_s)
        candidates.extend(
            seat.reconnect_by for seat in self._seats.values() if seat.reconnect_by is not None
        )
        deadline = self._timer.deadline()
        if deadline is not None:
            candidates.append(deadline)
        if any(seat.connected and seat.info.speaks_websocket for seat in self._seats.values()):
            candidates.append(self._heartbeat.next_at)
        return min(candidates, default=None)

    def spectator_setup(self, now: float) -> SetupPacket:
        """What a spectator joining now gets first: the board, the whole history,
        players, match settings, clocks and status."""
        return self._spectator_setup_later(now)()

    def _spectator_setup_later(self, now: float) -> Callable[[], SetupPacket]:
        """``spectator_setup`` as it is now, built when called (the game may have moved
        on by then): what it shows is taken now, the board as a mark."""
        now = self._advance(now)
        clocks = self._clocks(now)
        board, mark, moves = self._board, self._board_mark(), list(self._moves)
        to_move, status = self._to_move(), self.status

        def build() -> SetupPacket:
            return SetupPacket(
                board=board.board_at(mark),
                game_id=self.game_id,
                moves=moves,
                player_x=self._record_player(Player.X),
                player_o=self._record_player(Player.O),
                match=self.match,
                to_move=to_move,
                status=status,
                clock_x_ms=clocks[Player.X],
                clock_o_ms=clocks[Player.O],
                tags=dict(self._tags) or None,
                name=self.name,
                started_at=self._started_wall,
            )

        return build

    def standing(self, now: float) -> tuple[Player | None, int | None, int | None]:
        """Who is to move and both clocks in milliseconds now (a live games list)."""
        clocks = self._clocks(self._advance(now))
        return self._to_move(), clocks[Player.X], clocks[Player.O]

    # ---------------------------------------------------------------- helpers

    def _listening(self) -> list[Player]:
        """The seats that get packets now: connected websocket and human seats."""
        return [
            side
            for side, seat in self._seats.items()
            if seat.connected and seat.info.speaks_websocket
        ]

    def _advance(self, now: float) -> float:
        if math.isfinite(now) and now > self._now:
            self._now = now
        return self._now

    def _someone_never_came(self) -> bool:
        return not all(seat.ever_connected for seat in self._seats.values())

    def _everyone_present(self) -> bool:
        return all(seat.connected for seat in self._seats.values())

    def _to_move(self) -> Player | None:
        if self._result is not None:
            return None
        return self._board.to_move

    def _clocks(self, now: float) -> dict[Player, int | None]:
        return self._timer.snapshot(now)

    def _record_player(self, side: Player) -> RecordPlayer:
        info = self._seats[side].info
        kind = PlayerType.HUMAN if info.kind == "human" else PlayerType.BOT
        return RecordPlayer(
            name=info.name,
            type=kind,
            bot_url=info.url,
            meta=info.meta,
            time_control=info.time_control,
        )
