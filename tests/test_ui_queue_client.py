"""``ui.queue_client.QueueClient``: the person's side of ``/queue``, fed frames directly
(no sockets, no Qt)."""

from __future__ import annotations

import json

import pytest

from ui.queue_client import (
    ChallengeCreated,
    Matched,
    Opponent,
    QueueClient,
    QueueInputError,
    QueueRefused,
    QueueStateError,
    QueueViolation,
    QueueWaiting,
    TokenIssued,
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
