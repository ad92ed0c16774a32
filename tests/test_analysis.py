"""The pure core of the analysis of watched games (``game.analysis``): what to evaluate
next, what is kept for late joiners, and how one socket to the analysis bot is used."""

from __future__ import annotations

import json

import pytest

from game.analysis import (
    MAX_ANSWER_BYTES,
    AnalysisBadAnswer,
    AnalysisLog,
    AnalysisPlan,
    AnalysisTarget,
    EvalConversation,
    NoEvaluation,
    NoFreeSetup,
    NoWebSocket,
    check_analysis_bot,
)
from game.bot_urls import BotEndpoint, endpoint_for
from models import (
    Board,
    BwsV1Alpha,
    Capabilities,
    Cell,
    ConfigPacket,
    EvalRequestPacket,
    Match,
    Player,
    SetupPacket,
    parse_body,
)
from wire.frames import RefusedFrame


def target(ply: int, side: Player | None = None) -> AnalysisTarget:
    side = side if side is not None else (Player.O if ply % 2 == 0 else Player.X)
    return AnalysisTarget(ply, Board.standard(), side)


# ------------------------------------------------------------------- the plan


def test_nothing_is_asked_before_a_position_arrives() -> None:
    assert AnalysisPlan().next_target(now=0.0) is None


def test_moves_faster_than_the_bot_answers_are_coalesced_to_the_newest() -> None:
    plan = AnalysisPlan()
    plan.position(target(0))
    first = plan.next_target(now=0.0)
    assert first is not None and first.ply == 0
    for ply in (1, 2, 3, 4):  # all arrive while 0 is being evaluated
        plan.position(target(ply))
    assert plan.next_target(now=0.0) is None  # one request in flight at most
    assert plan.answered().ply == 0
    newest = plan.next_target(now=0.0)
    assert newest is not None and newest.ply == 4  # 1, 2 and 3 are skipped
    plan.answered()
    assert plan.next_target(now=0.0) is None  # nothing is queued behind


def test_a_position_already_answered_or_in_flight_is_not_asked_again() -> None:
    plan = AnalysisPlan()
    plan.position(target(5))
    assert plan.next_target(now=0.0) is not None
    plan.position(target(5))  # the game is watched again at the same position
    plan.answered()
    assert plan.next_target(now=0.0) is None
    plan.position(target(5))
    assert plan.next_target(now=0.0) is None


def test_a_failure_retries_the_position_after_a_doubling_backoff() -> None:
    plan = AnalysisPlan(first_retry=0.5, max_retry=2.0)
    plan.position(target(1))
    delays = []
    now = 0.0
    for _ in range(4):
        asked = plan.next_target(now)
        assert asked is not None and asked.ply == 1
        delays.append(plan.failed(now))
        assert plan.next_target(now) is None  # backing off
        assert plan.retry_at == now + delays[-1]
        now += delays[-1]
    assert delays == [0.5, 1.0, 2.0, 2.0]  # capped


def test_a_failure_gives_way_to_a_newer_position() -> None:
    plan = AnalysisPlan(first_retry=1.0)
    plan.position(target(1))
    plan.next_target(now=0.0)
    plan.position(target(2))
    plan.failed(now=0.0)
    retried = plan.next_target(now=1.0)
    assert retried is not None and retried.ply == 2


def test_a_success_resets_the_backoff() -> None:
    plan = AnalysisPlan(first_retry=1.0)
    plan.position(target(1))
    plan.next_target(now=0.0)
    plan.failed(now=0.0)
    plan.next_target(now=1.0)
    plan.answered()
    plan.position(target(2))
    plan.next_target(now=1.0)
    assert plan.failed(now=1.0) == 1.0  # the first delay again


# -------------------------------------------------------------------- the log


def test_the_log_keeps_the_latest_answer_per_ply_in_ply_order() -> None:
    log = AnalysisLog(limit=10)
    for ply, text in ((2, "two"), (0, "zero"), (2, "two again"), (1, "one")):
        log.add(ply, text)
    assert log.texts() == ["zero", "one", "two again"]


def test_the_log_is_bounded_dropping_the_oldest_answers() -> None:
    log = AnalysisLog(limit=3)
    for ply in range(10):
        log.add(ply, str(ply))
    assert log.texts() == ["7", "8", "9"]
    assert len(log) == 3


# ------------------------------------------------------ what the bot must declare


def endpoint(v1_alpha: dict[str, object] | None, stateless: bool = False) -> BotEndpoint:
    document: dict[str, object] = {"meta": {"name": "Judge"}}
    if v1_alpha is not None:
        document["basic_websocket"] = {"versions": {"v1-alpha": v1_alpha}}
    if stateless:
        document["stateless"] = {"versions": {"v1-alpha": {}}}
    capabilities = parse_body(Capabilities, json.dumps(document))
    return endpoint_for("http://127.0.0.1:9", "http://127.0.0.1:9/capabilities.json", capabilities)


def test_a_bot_with_evaluation_and_free_setup_can_analyse() -> None:
    declares = check_analysis_bot(endpoint({"evaluation": True, "free_setup": True}))
    assert declares.evaluation and declares.free_setup


@pytest.mark.parametrize(
    ("v1_alpha", "stateless", "error", "says"),
    [
        ({"free_setup": True}, False, NoEvaluation, "must declare 'evaluation'"),
        ({"evaluation": True}, False, NoFreeSetup, "must declare 'free_setup'"),
        (None, True, NoWebSocket, "must declare basic_websocket v1-alpha"),
    ],
)
def test_a_bot_that_cannot_analyse_is_refused_with_the_reason(
    v1_alpha: dict[str, object] | None, stateless: bool, error: type[Exception], says: str
) -> None:
    with pytest.raises(error) as caught:
        check_analysis_bot(endpoint(v1_alpha, stateless))
    assert says in str(caught.value)
    assert "http://127.0.0.1:9/capabilities.json" in str(caught.value)


# ------------------------------------------------------------- the conversation

FULL = BwsV1Alpha(
    evaluation=True,
    free_setup=True,
    resettable_state=True,
    dual_sided=True,
    evaluation_time_limit=True,
)


def test_a_position_is_asked_with_its_board_then_eval_request_with_the_time_limit() -> None:
    board = Board(cells=[Cell(q=0, r=0, p=Player.X), Cell(q=1, r=0, p=Player.O)])
    talk = EvalConversation(FULL, Match(), 0.75)
    setup, request = talk.ask(AnalysisTarget(1, board, Player.O))
    assert setup == SetupPacket(board=board)
    assert request == EvalRequestPacket(side=Player.O, evaluation_time_limit=0.75)
    assert talk.answer_wait == 1.75


def test_no_time_limit_is_sent_to_a_bot_that_does_not_declare_it() -> None:
    declares = BwsV1Alpha(evaluation=True, free_setup=True)
    talk = EvalConversation(declares, Match(), 0.5)
    _setup, request = talk.ask(target(0))
    assert isinstance(request, EvalRequestPacket) and request.evaluation_time_limit is None
    assert talk.answer_wait >= 10  # it was not told a limit: it gets longer


def test_a_bot_that_reads_match_settings_gets_them_once_before_the_first_setup() -> None:
    declares = BwsV1Alpha.model_validate(
        {
            "evaluation": True,
            "free_setup": True,
            "resettable_state": True,
            "dual_sided": True,
            "config": {"x-match": True},
        }
    )
    match = Match(win_distance=4)
    talk = EvalConversation(declares, match, 1.0)
    config, *_ = talk.ask(target(0))
    assert isinstance(config, ConfigPacket)
    assert config.extensions()["x-match"]["win_distance"] == 4
    talk.receive('{"type": "eval_response", "evaluation": {}}')
    assert [p.type for p in talk.ask(target(1))] == ["setup", "eval_request"]


@pytest.mark.parametrize(
    ("declares", "next_side", "reusable"),
    [
        (FULL, Player.X, True),
        (BwsV1Alpha(evaluation=True, free_setup=True, resettable_state=True), Player.O, True),
        # Without dual_sided a session keeps one side: the other needs a new socket.
        (BwsV1Alpha(evaluation=True, free_setup=True, resettable_state=True), Player.X, False),
        # Without resettable_state there is one setup per session.
        (BwsV1Alpha(evaluation=True, free_setup=True, dual_sided=True), Player.O, False),
    ],
)
def test_a_socket_is_reused_only_as_the_declared_features_allow(
    declares: BwsV1Alpha, next_side: Player, reusable: bool
) -> None:
    talk = EvalConversation(declares, Match(), 1.0)
    assert talk.can_take(Player.O)  # a fresh socket takes anything
    talk.ask(target(0, Player.O))
    assert not talk.can_take(next_side)  # not while an answer is owed
    talk.receive('{"type": "eval_response", "evaluation": {"win_in": 3}}')
    assert talk.can_take(next_side) is reusable


@pytest.mark.parametrize(
    ("frame", "says"),
    [
        ("not json", "bad packet"),
        (
            '{"type": "move_response", "move": {"pieces": [{"q": 1, "r": 0}]}}',
            "expected eval_response",
        ),
        ('{"type": "eval_response", "evaluation": {"heuristic": "high"}}', "bad packet"),
        (RefusedFrame("a binary frame"), "refused frame: a binary frame"),
        (
            '{"type": "eval_response", "evaluation": {"x": "' + "a" * MAX_ANSWER_BYTES + '"}}',
            "bytes",
        ),
    ],
)
def test_anything_but_an_eval_response_is_a_bad_answer(frame: str | bytes, says: str) -> None:
    talk = EvalConversation(FULL, Match(), 1.0)
    talk.ask(target(0))
    with pytest.raises(AnalysisBadAnswer) as caught:
        talk.receive(frame)
    assert says in str(caught.value)


def test_an_answer_nobody_asked_for_is_a_bad_answer() -> None:
    talk = EvalConversation(FULL, Match(), 1.0)
    talk.ask(target(0))
    talk.receive('{"type": "eval_response", "evaluation": {}}')
    with pytest.raises(AnalysisBadAnswer, match="nobody asked"):
        talk.receive('{"type": "eval_response", "evaluation": {}}')
