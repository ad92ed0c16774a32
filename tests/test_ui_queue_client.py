"""``ui.queue_client.QueueClient``: the person's side of ``/queue``, fed frames directly
(no sockets, no Qt)."""

from __future__ import annotations

import json

import pytest

from models import ChallengeView
from ui.queue_client import (
    RECONNECT_GIVE_UP_S,
    RECONNECT_MAX_S,
    ChallengeCreated,
    Matched,
    Opponent,
    QueueClient,
    QueueInputError,
    QueueLost,
    QueueRefused,
    QueueStateError,
    QueueViolation,
    QueueWaiting,
    Reconnect,
    TokenIssued,
    backoff_delay,
)

MATCHED = {
    "type": "matched",
    "game_id": "g7",
    "side": "x",
    "token": "seat-token",
    "ws_url": "/ws?token=seat-token",
    "opponent": {"name": "ThreatBot", "kind": "bot", "rating": 1612},
    "time_control": "300",
    "rated": True,
}


def state(client: QueueClient) -> str:
    return client.state


def frame(**fields: object) -> str:
    return json.dumps(fields)


def waiting_frame(players: int) -> str:
    return frame(type="queue_waiting", players_waiting=players, rating=1500, since_ms=0)


def test_a_new_person_joins_gets_a_token_waits_and_is_matched() -> None:
    client = QueueClient()
    sent = json.loads(client.join(" Alice ", None, "5+2", 30))
    assert sent == {
        "type": "queue_join",
        "name": "Alice",
        "time_control": "5+2",
        "bot_after_s": 30.0,
    }
    assert state(client) == "joining"
    assert client.receive(frame(type="player_token", name="Alice", token="tok")) == [
        TokenIssued("Alice", "tok")
    ]
    assert client.token == "tok"
    waiting = client.receive(
        frame(type="queue_waiting", players_waiting=1, rating=1500, since_ms=0)
    )
    assert waiting == [QueueWaiting(1, 1500, 0)]
    assert state(client) == "waiting"
    assert client.receive(json.dumps(MATCHED)) == [
        Matched(
            game_id="g7",
            side="x",
            token="seat-token",
            ws_url="/ws?token=seat-token",
            opponent=Opponent("ThreatBot", "bot", 1612),
            time_control="300",
            rated=True,
        )
    ]
    assert state(client) == "matched"
    # The socket's work is done: later frames are not news.
    assert client.receive(waiting_frame(3)) == []


def test_a_known_person_sends_the_token_and_people_only_sends_null() -> None:
    client = QueueClient()
    sent = json.loads(client.join("Bob", "secret", "turn=10", None))
    assert sent["player_token"] == "secret"
    assert sent.get("bot_after_s") is None  # null or absent: people only
    assert sent["time_control"] == "turn=10"


def test_bad_input_is_refused_before_anything_is_sent() -> None:
    client = QueueClient()
    with pytest.raises(QueueInputError, match="Enter a name"):
        client.join("  ", None, "60", None)
    with pytest.raises(QueueInputError, match="expected 'BASE\\+INC'"):
        client.join("Ann", None, "40 moves in 2 hours", None)
    with pytest.raises(QueueInputError, match="from 0 to 3600 s"):
        client.join("Ann", None, "60", -1)
    with pytest.raises(QueueInputError, match="at most 64"):
        client.join("A" * 65, None, "60", None)
    assert state(client) == "idle"
    client.join("Ann", None, "60", None)
    with pytest.raises(QueueStateError):
        client.join("Ann", None, "60", None)


def test_a_nope_is_the_servers_reason_and_ends_the_client() -> None:
    client = QueueClient()
    client.join("Ann", "wrong", "60", None)
    assert client.receive(frame(type="nope", reason="wrong token for Ann")) == [
        QueueRefused("wrong token for Ann")
    ]
    assert state(client) == "refused"
    assert client.receive(waiting_frame(1)) == []


def test_leaving_the_queue() -> None:
    client = QueueClient()
    with pytest.raises(QueueStateError):
        client.leave()
    client.join("Ann", None, "60", 10)
    client.receive(waiting_frame(1))
    assert json.loads(client.leave()) == {"type": "queue_leave"}
    assert state(client) == "closed"
    assert client.receive(json.dumps(MATCHED)) == []


def test_an_open_challenge_is_created_then_accepted() -> None:
    client = QueueClient()
    sent = json.loads(client.create_challenge("Ann", "tok", "10+0.1", "o"))
    assert sent == {
        "type": "challenge_create",
        "name": "Ann",
        "player_token": "tok",
        "time_control": "10+0.1",
        "side": "o",
    }
    url = "http://127.0.0.1:8001/c/ab12"
    assert client.receive(frame(type="challenge_created", challenge_id="ab12", url=url)) == [
        ChallengeCreated("ab12", url)
    ]
    assert state(client) == "waiting"
    [matched] = client.receive(json.dumps({**MATCHED, "side": "o"}))
    assert isinstance(matched, Matched) and matched.side == "o"
    with pytest.raises(QueueInputError, match="side"):
        QueueClient().create_challenge("Ann", None, "60", "white")


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"type": "setup"}',
        '{"type": "matched", "game_id": "g"}',
        '{"type": "queue_waiting", "players_waiting": "many"}',
        json.dumps({**MATCHED, "side": "z"}),
    ],
)
def test_a_frame_that_breaks_the_protocol_is_a_violation(text: str) -> None:
    client = QueueClient()
    client.join("Ann", None, "60", None)
    [event] = client.receive(text)
    assert isinstance(event, QueueViolation)
    assert state(client) == "closed"


def test_news_before_joining_is_a_violation_but_unknown_fields_are_not() -> None:
    assert isinstance(QueueClient().receive(json.dumps(MATCHED))[0], QueueViolation)
    client = QueueClient()
    client.join("Ann", None, "60", None)
    [event] = client.receive(json.dumps({**MATCHED, "series": {"game": 1}}))
    assert isinstance(event, Matched)


# ------------------------------------------------------------------ reconnecting


def queued(name: str = "Alice", token: str | None = None) -> QueueClient:
    """A client in the queue (the server answered its join)."""
    client = QueueClient()
    client.join(name, token, "5+2", 30)
    if token is None:
        client.receive(frame(type="player_token", name=name, token="tok"))
    client.receive(waiting_frame(1))
    assert state(client) == "waiting"
    return client


def test_the_backoff_doubles_to_its_cap_with_jitter_below_the_plain_delay() -> None:
    plain = [backoff_delay(attempt, 1.0) for attempt in range(1, 10)]
    assert plain == [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0, 10.0]
    for attempt in range(1, 40):
        for jitter in (0.0, 0.3, 0.999, 1.0):
            delay = backoff_delay(attempt, jitter)
            top = min(0.5 * 2 ** (attempt - 1), RECONNECT_MAX_S)
            assert top / 2 <= delay <= top
    with pytest.raises(ValueError, match="from 1"):
        backoff_delay(0, 0.5)


def test_a_dropped_wait_rejoins_with_the_same_request_and_the_issued_token() -> None:
    client = queued()  # a new name: the server handed out "tok"
    decision = client.dropped(10.0, 1.0, "lost")
    assert decision == Reconnect(1, 0.5) and state(client) == "reconnecting"
    assert client.receive(waiting_frame(3)) == []  # no socket: nothing can come
    assert json.loads(client.rejoin()) == {
        "type": "queue_join",
        "name": "Alice",
        "player_token": "tok",
        "time_control": "5+2",
        "bot_after_s": 30.0,
    }
    assert state(client) == "joining"
    with pytest.raises(QueueStateError):
        client.rejoin()  # once per Reconnect
    # The server is still down: each failed attempt waits longer.
    assert client.dropped(11.0, 1.0, "refused") == Reconnect(2, 1.0)
    client.rejoin()
    assert client.dropped(12.0, 1.0, "refused") == Reconnect(3, 2.0)
    client.rejoin()
    # Back in: the count starts over for the next drop.
    assert client.receive(waiting_frame(1)) == [QueueWaiting(1, 1500, 0)]
    assert client.attempt == 0
    assert client.dropped(500.0, 1.0, "lost") == Reconnect(1, 0.5)


def test_reconnecting_gives_up_after_its_bounded_time() -> None:
    client = queued(token="mine")
    now = 0.0
    attempts = 0
    while True:
        decision = client.dropped(now, 0.5, "Cannot connect to the server")
        if isinstance(decision, QueueLost):
            break
        attempts += 1
        assert decision.attempt == attempts
        client.rejoin()
        now += decision.delay_s
    assert now >= RECONNECT_GIVE_UP_S and state(client) == "closed"
    assert "within 2 minutes" in decision.reason
    assert "Cannot connect to the server" in decision.reason
    with pytest.raises(QueueStateError):
        client.rejoin()


def test_what_is_not_a_dropped_wait_is_not_retried() -> None:
    # The first connection never got into the queue: the server is unreachable.
    client = QueueClient()
    client.join("Alice", None, "300", None)
    assert client.dropped(0.0, 1.0, "Cannot connect") == QueueLost("Cannot connect")
    assert state(client) == "closed"
    # A nope is an answer.
    client = queued(token="mine")
    client.receive(frame(type="nope", reason="name taken"))
    assert client.dropped(0.0, 1.0, "closed (1008)") == QueueLost("closed (1008)")
    assert state(client) == "refused"
    # A nope on the rejoin is an answer too (say, the name was taken meanwhile).
    client = queued(token="mine")
    client.dropped(0.0, 1.0, "lost")
    client.rejoin()
    assert client.receive(frame(type="nope", reason="wrong token")) == [QueueRefused("wrong token")]
    assert isinstance(client.dropped(1.0, 1.0, "closed"), QueueLost)
    # Left, matched: over.
    client = queued(token="mine")
    client.leave()
    assert isinstance(client.dropped(0.0, 1.0, "closed"), QueueLost)
    client = queued(token="mine")
    client.receive(json.dumps(MATCHED))
    assert isinstance(client.dropped(0.0, 1.0, "closed"), QueueLost)


def challenge_view(status: str, matched: dict[str, object] | None = None) -> ChallengeView:
    return ChallengeView.model_validate(
        {
            "challenge_id": "c1",
            "url": "http://h/c/c1",
            "creator": "Alice",
            "creator_rating": 1500,
            "time_control": "300",
            "side": "random",
            "status": status,
            "created_at": "2026-11-24T21:00:00Z",
            "expires_at": "2026-11-24T22:00:00Z",
            "accepted_by": "Bob" if status == "accepted" else None,
            "matched": matched,
        }
    )


def test_a_dropped_challenge_is_polled_until_accepted_or_over() -> None:
    def open_challenge() -> QueueClient:
        client = QueueClient()
        client.create_challenge("Alice", "mine", "300")
        client.receive(frame(type="challenge_created", challenge_id="c1", url="http://h/c/c1"))
        assert client.dropped(0.0, 1.0, "lost") == Reconnect(1, 0.5)
        return client

    client = open_challenge()
    with pytest.raises(QueueStateError):
        client.rejoin()  # no socket watches a challenge again: its view is polled
    assert client.polled(challenge_view("open"), 1.0) == Reconnect(2, RECONNECT_MAX_S)
    assert client.dropped(500.0, 1.0, "refused") == Reconnect(3, 2.0)  # the clock restarted
    seat = client.polled(challenge_view("accepted", MATCHED), 0.0)
    assert isinstance(seat, Matched) and seat.opponent.name == "ThreatBot"
    assert state(client) == "matched" and client.match == seat
    client = open_challenge()
    assert client.polled(challenge_view("expired"), 0.0) == QueueLost(
        "Nobody accepted the challenge before it expired."
    )
    assert state(client) == "closed"
    client = open_challenge()
    assert client.polled(challenge_view("cancelled"), 0.0) == QueueLost(
        "The challenge was cancelled when the connection dropped."
    )
    client = open_challenge()
    lost = client.polled(challenge_view("accepted"), 0.0)  # its game is over
    assert isinstance(lost, QueueLost) and "accepted by Bob" in lost.reason
    with pytest.raises(QueueStateError):
        queued(token="mine").polled(challenge_view("open"), 0.0)


def test_leaving_while_reconnecting_stops_it() -> None:
    client = queued(token="mine")
    client.dropped(0.0, 1.0, "lost")
    client.leave()
    assert state(client) == "closed"
    with pytest.raises(QueueStateError):
        client.rejoin()
