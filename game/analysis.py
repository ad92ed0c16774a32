"""The analyst: an analysis bot's evaluation of each position of a watched game.

``htttx-server --analysis-bot URL`` names a bot that declares basic_websocket
``evaluation`` and ``free_setup``. While a running game has at least one spectator, the
server asks that bot (``eval_request``) about each position of the game, and sends the
answer to the game's spectators as an ``analysis`` packet (``models.AnalysisPacket``, our
extension to protocol.md's Spectators section)::

    {"type": "analysis", "ply": 3, "evaluation": {"heuristic": 0.2}, "bot": "ThreatBot"}

``ply`` is the number of recorded moves played when the position arose (0: the start
position). Seats never get it and the game record never holds it: the record is what the
players said. The answers are kept with the live game (the latest per ply, the last
``max_results`` plies) so a spectator who joins late gets them right after its ``setup``.

The pure core, tested without a socket:

* ``AnalysisPlan`` decides what to evaluate next for one game: the newest position only
  (moves that come faster than the bot answers are skipped, never queued), one request in
  flight at most, and after a failure a retry of the newest position with a backoff.
* ``AnalysisLog`` keeps the encoded answers, bounded.
* ``EvalConversation`` is one socket to the bot as the spec has it: what to send for a
  position (``setup`` with the board, then ``eval_request``), whether the socket may take
  another position (``resettable_state``; the same side unless ``dual_sided``) and what
  the answer says.

The asyncio edge is ``game.analyst``: ``Analyst`` (one per server, made by the
composition root) and its ``GameAnalysis`` (one per watched game, owned by
``game.running.RunningGame``), which dial the bot with ``game.seats.BotSocketSeat``, the
seats' own client. A failing, slow or
rude analysis bot never touches a game: every failure ends that socket, is logged
(rate-limited) and retried later; nothing is raised into the game or its spectators.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

from game.discovery import BotEndpoint, DiscoveryError
from models import (
    CLIENT_PACKETS,
    MATCH_CONFIG_KEY,
    Board,
    BwsV1Alpha,
    Capabilities,
    ConfigPacket,
    EvalRequestPacket,
    EvalResponsePacket,
    Match,
    Player,
    PositionEvaluation,
    ProtocolError,
    SetupPacket,
    parse_packet,
)
from wire.frames import RefusedFrame

__all__ = [
    "DEFAULT_ANALYSIS_TIME",
    "DEFAULT_MAX_RESULTS",
    "MAX_ANALYSIS_TIME",
    "AnalysisBadAnswer",
    "AnalysisBotClosed",
    "AnalysisBotUnfit",
    "AnalysisConnectFailed",
    "AnalysisFailed",
    "AnalysisLog",
    "AnalysisPlan",
    "AnalysisTarget",
    "AnalysisTimedOut",
    "EvalConversation",
    "NoEvaluation",
    "NoFreeSetup",
    "NoWebSocket",
    "check_analysis_bot",
    "check_analysis_time",
    "check_hosted_analysis_bot",
]

#: Seconds the bot is given per position (``evaluation_time_limit`` when it declares it).
DEFAULT_ANALYSIS_TIME = 1.0
MAX_ANALYSIS_TIME = 60.0
#: Answers kept per game for late joiners (the latest per ply, the last this many plies).
DEFAULT_MAX_RESULTS = 2000
#: An evaluation is a few numbers: a bigger answer is refused, so that the answers kept
#: per game stay small (``DEFAULT_MAX_RESULTS`` of them at most this big).
MAX_ANSWER_BYTES = 4096
#: Time over the limit for the answer to cross the network and the bot's own overhead.
ANSWER_MARGIN = 1.0
#: How long a bot that does not declare ``evaluation_time_limit`` may take per position.
UNDECLARED_ANSWER_WAIT = 10.0
#: First and longest wait before asking again after a failure (doubling in between).
FIRST_RETRY = 0.5
MAX_RETRY = 30.0
#: An idle socket gets ``heartbeat`` (``waiting: false``) this often.
IDLE_HEARTBEAT = 5.0
#: Failures logged as warnings: a burst of 3, then one per minute (the rest at debug).
LOG_BURST = 3
LOG_RATE = 1 / 60


# ------------------------------------------------------------------------- errors


class AnalysisBotUnfit(DiscoveryError):
    """The bot named by ``--analysis-bot`` cannot evaluate arbitrary positions."""


class NoWebSocket(AnalysisBotUnfit):
    """It does not declare basic_websocket v1-alpha (evaluation needs the socket)."""


class NoEvaluation(AnalysisBotUnfit):
    """It does not declare ``evaluation``: it may not be sent ``eval_request``."""


class NoFreeSetup(AnalysisBotUnfit):
    """It does not declare ``free_setup``: it cannot be told a game's position."""


class AnalysisFailed(Exception):
    """One evaluation failed; the socket is closed and the position retried later."""


class AnalysisConnectFailed(AnalysisFailed):
    """The bot's socket could not be opened."""


class AnalysisBotClosed(AnalysisFailed):
    """The socket ended, or a packet could not be sent on it."""


class AnalysisTimedOut(AnalysisFailed):
    """No answer within the time the bot was given (and the margin)."""


class AnalysisBadAnswer(AnalysisFailed):
    """The bot sent something other than one ``eval_response`` to one ``eval_request``."""


# --------------------------------------------------------------------- the core


@dataclass(frozen=True)
class AnalysisTarget:
    """One position of a game: after ``ply`` recorded moves, ``side`` to move."""

    ply: int
    board: Board
    side: Player


class AnalysisPlan:
    """What to evaluate next for one game (pure: time comes in as ``now``).

    >>> plan = AnalysisPlan()
    >>> for ply in (1, 2, 3):
    ...     plan.position(AnalysisTarget(ply, Board.standard(), Player.X))
    >>> plan.next_target(now=0.0).ply  # the newest: 1 and 2 are skipped
    3
    >>> plan.position(AnalysisTarget(4, Board.standard(), Player.O))
    >>> plan.next_target(now=0.0) is None  # 3 is still in flight
    True
    >>> plan.failed(now=0.0)  # seconds until the next try
    0.5
    >>> plan.next_target(now=0.1) is None, plan.next_target(now=0.5).ply
    (True, 4)
    """

    def __init__(self, *, first_retry: float = FIRST_RETRY, max_retry: float = MAX_RETRY) -> None:
        self._first_retry = first_retry
        self._max_retry = max_retry
        self._wanted: AnalysisTarget | None = None
        self._in_flight: AnalysisTarget | None = None
        self._done = -1  # the ply of the last position answered
        self._failures = 0
        self._retry_at = -math.inf

    @property
    def in_flight(self) -> AnalysisTarget | None:
        return self._in_flight

    @property
    def retry_at(self) -> float | None:
        """When a position waits out a backoff: the time it may be asked; else None."""
        if self._wanted is None or self._in_flight is not None:
            return None
        return self._retry_at if self._retry_at > -math.inf else None

    def position(self, target: AnalysisTarget) -> None:
        """The game reached ``target`` (its newest position): it replaces any position
        still waiting. One already answered or in flight is not asked again."""
        if target.ply == self._done or (
            self._in_flight is not None and target.ply == self._in_flight.ply
        ):
            self._wanted = None
            return
        self._wanted = target

    def next_target(self, now: float) -> AnalysisTarget | None:
        """The position to ask about now (it is in flight from here), or None: nothing
        new, a request in flight, or a backoff running."""
        if self._wanted is None or self._in_flight is not None or now < self._retry_at:
            return None
        self._in_flight, self._wanted = self._wanted, None
        return self._in_flight

    def answered(self) -> AnalysisTarget:
        """The position in flight was evaluated; it is returned."""
        target = self._in_flight
        assert target is not None, "nothing in flight"
        self._in_flight = None
        self._done = target.ply
        self._failures = 0
        self._retry_at = -math.inf
        return target

    def failed(self, now: float) -> float:
        """The position in flight was not evaluated: it is wanted again unless a newer
        one is, after a backoff that doubles with each failure in a row (returned)."""
        if self._wanted is None:
            self._wanted = self._in_flight
        self._in_flight = None
        delay: float = min(self._first_retry * 2.0**self._failures, self._max_retry)
        self._failures += 1
        self._retry_at = now + delay
        return delay


class AnalysisLog:
    """The encoded ``analysis`` packets of one game: the latest per ply, the last
    ``limit`` plies.

    >>> log = AnalysisLog(limit=2)
    >>> for ply, text in ((0, "a"), (1, "b"), (1, "b2"), (2, "c")):
    ...     log.add(ply, text)
    >>> log.texts()
    ['b2', 'c']
    """

    def __init__(self, limit: int = DEFAULT_MAX_RESULTS) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self._limit = limit
        self._texts: OrderedDict[int, str] = OrderedDict()

    def add(self, ply: int, text: str) -> None:
        self._texts[ply] = text
        self._texts.move_to_end(ply)
        while len(self._texts) > self._limit:
            self._texts.popitem(last=False)

    def texts(self) -> list[str]:
        """Every packet kept, in ply order."""
        return [self._texts[ply] for ply in sorted(self._texts)]

    def __len__(self) -> int:
        return len(self._texts)


def check_analysis_time(seconds: float) -> None:
    """``ValueError`` unless ``seconds`` per position is more than 0 and at most
    ``MAX_ANALYSIS_TIME``.

    >>> check_analysis_time(0.0)
    Traceback (most recent call last):
    ...
    ValueError: the analysis time must be more than 0 and at most 60 seconds, got 0.0
    """
    if not 0 < seconds <= MAX_ANALYSIS_TIME:
        raise ValueError(
            f"the analysis time must be more than 0 and at most {MAX_ANALYSIS_TIME:g} seconds, "
            f"got {seconds!r}"
        )


def check_analysis_bot(endpoint: BotEndpoint) -> BwsV1Alpha:
    """The bot's basic_websocket features, if it can analyse; else ``AnalysisBotUnfit``."""
    has_socket = endpoint.socket_url is not None
    return _check_declares(endpoint.capabilities, endpoint.document_url, has_socket=has_socket)


def check_hosted_analysis_bot(name: str, capabilities: Capabilities) -> BwsV1Alpha:
    """``check_analysis_bot`` for a hosted example bot named by ``--analysis-bot NAME``,
    from the ``capabilities`` its class declares: refused before the server starts, as
    a bot named by URL is, rather than by a failed startup.

    >>> from bot.bots import CenterBot
    >>> check_hosted_analysis_bot("center", CenterBot.capabilities())
    Traceback (most recent call last):
    ...
    game.analysis.NoEvaluation: the hosted bot 'center': the analysis bot must declare \
'evaluation' (basic_websocket v1-alpha), so that it may be sent eval_request; it does not
    """
    return _check_declares(capabilities, f"the hosted bot {name!r}", has_socket=True)


def _check_declares(capabilities: Capabilities, where: str, *, has_socket: bool) -> BwsV1Alpha:
    declares = capabilities.bws_v1_alpha
    if declares is None or not has_socket:
        raise NoWebSocket(
            f"{where}: the analysis bot must declare basic_websocket v1-alpha (evaluation "
            "is asked over its socket); it declares only the stateless API"
        )
    if not declares.evaluation:
        raise NoEvaluation(
            f"{where}: the analysis bot must declare 'evaluation' (basic_websocket "
            "v1-alpha), so that it may be sent eval_request; it does not"
        )
    if not declares.free_setup:
        raise NoFreeSetup(
            f"{where}: the analysis bot must declare 'free_setup' (basic_websocket "
            "v1-alpha), so that it can be told any position of a game; it does not"
        )
    return declares


class EvalConversation:
    """One socket to the analysis bot, as the spec allows it to be used (pure).

    A fresh socket takes any position. Another position on the same socket needs
    ``resettable_state`` (a second ``setup``), and the same side to move unless the bot
    declares ``dual_sided``; otherwise the caller opens a new socket.

    >>> talk = EvalConversation(BwsV1Alpha(evaluation=True, free_setup=True), Match(), 1.0)
    >>> [p.type for p in talk.ask(AnalysisTarget(0, Board.standard(), Player.O))]
    ['setup', 'eval_request']
    >>> talk.receive('{"type": "eval_response", "evaluation": {"heuristic": 0.5}}').heuristic
    0.5
    >>> talk.can_take(Player.O)  # no resettable_state: one position per socket
    False
    """

    def __init__(self, declares: BwsV1Alpha, match: Match, time_limit: float) -> None:
        self._declares = declares
        self._match = match
        self._time_limit = time_limit
        self._side: Player | None = None  # the side of the positions asked so far
        self._used = False
        self.awaiting = False

    @property
    def answer_wait(self) -> float:
        """Seconds to wait for an answer before giving up on it (and the socket)."""
        if self._declares.evaluation_time_limit:
            return self._time_limit + ANSWER_MARGIN
        return max(UNDECLARED_ANSWER_WAIT, self._time_limit + ANSWER_MARGIN)

    def can_take(self, side: Player) -> bool:
        """Whether this socket may be asked about a position with ``side`` to move."""
        if not self._used:
            return True
        if self.awaiting or not self._declares.resettable_state:
            return False
        return self._declares.dual_sided or side is self._side

    def ask(self, target: AnalysisTarget) -> list[ConfigPacket | SetupPacket | EvalRequestPacket]:
        """The packets that ask about ``target``, in order."""
        if not self.can_take(target.side):
            raise ValueError("this socket cannot take that position; open another")
        packets: list[ConfigPacket | SetupPacket | EvalRequestPacket] = []
        config = self._declares.config
        if not self._used and config is not None and config.accepts_match_settings:
            # The game's settings (win distance, view distance), for a bot that reads them.
            settings = {MATCH_CONFIG_KEY: self._match.model_dump(mode="json")}
            packets.append(ConfigPacket.model_validate(settings))
        limit = self._time_limit if self._declares.evaluation_time_limit else None
        packets += [
            SetupPacket(board=target.board),
            EvalRequestPacket(side=target.side, evaluation_time_limit=limit),
        ]
        self._used, self._side, self.awaiting = True, target.side, True
        return packets

    def receive(self, data: str | bytes) -> PositionEvaluation:
        """The evaluation in the bot's frame ``data``; ``AnalysisBadAnswer`` if the frame
        is anything but the ``eval_response`` awaited."""
        if not self.awaiting:
            raise AnalysisBadAnswer("the bot sent a packet nobody asked for")
        self.awaiting = False
        if isinstance(data, RefusedFrame):
            raise AnalysisBadAnswer(f"refused frame: {data.reason}")
        if len(data) > MAX_ANSWER_BYTES:
            raise AnalysisBadAnswer(
                f"an answer of {len(data)} bytes; an evaluation may take {MAX_ANSWER_BYTES}"
            )
        try:
            packet = parse_packet(data, allowed=CLIENT_PACKETS)
        except ProtocolError as exc:
            raise AnalysisBadAnswer(f"bad packet: {exc}") from None
        if not isinstance(packet, EvalResponsePacket):
            raise AnalysisBadAnswer(f"expected eval_response, got {packet.type}")
        return packet.evaluation
