"""Open challenges in the store (``game.store.challenges``), on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from game.store import GameStore
from game.store.challenges import StoredChallenge

T0 = datetime(2026, 11, 24, 20, 0, tzinfo=UTC)


def challenge(challenge_id: str = "c1", creator: str = "Ann") -> StoredChallenge:
    return StoredChallenge(
        challenge_id=challenge_id,
        creator=creator,
        creator_key=creator.casefold(),
        time_control="300+5",
        side="random",
        status="open",
        created_at=T0,
        expires_at=T0 + timedelta(hours=1),
        accepted_by=None,
        game_id=None,
    )


async def test_a_challenge_reads_back_as_written(store: GameStore) -> None:
    await store.challenges.create(challenge())
    assert await store.challenges.get("c1") == challenge()
    assert await store.challenges.get("nope") is None


async def test_a_challenge_is_taken_once(store: GameStore) -> None:
    await store.challenges.create(challenge())
    assert await store.challenges.take("c1", "Bo", T0) is True
    assert await store.challenges.take("c1", "Cy", T0) is False
    await store.challenges.set_game("c1", "g1")
    stored = await store.challenges.get("c1")
    assert stored is not None
    assert (stored.status, stored.accepted_by, stored.game_id) == ("accepted", "Bo", "g1")


async def test_an_expired_challenge_cannot_be_taken_and_is_marked(store: GameStore) -> None:
    await store.challenges.create(challenge())
    late = T0 + timedelta(hours=2)
    assert await store.challenges.take("c1", "Bo", late) is False
    assert await store.challenges.expire(late) == 1
    stored = await store.challenges.get("c1")
    assert stored is not None and stored.status == "expired"


async def test_an_open_challenge_is_cancelled_once_and_then_cannot_be_taken(
    store: GameStore,
) -> None:
    await store.challenges.create(challenge())
    assert await store.challenges.cancel("c1") is True
    assert await store.challenges.cancel("c1") is False
    assert await store.challenges.take("c1", "Bo", T0) is False
    stored = await store.challenges.get("c1")
    assert stored is not None and stored.status == "cancelled"
    assert await store.challenges.open_count("ann", T0) == 0


async def test_a_taken_challenge_cannot_be_cancelled(store: GameStore) -> None:
    await store.challenges.create(challenge())
    await store.challenges.take("c1", "Bo", T0)
    assert await store.challenges.cancel("c1") is False


async def test_a_taken_challenge_can_be_reopened(store: GameStore) -> None:
    await store.challenges.create(challenge())
    await store.challenges.take("c1", "Bo", T0)
    await store.challenges.reopen("c1")
    assert await store.challenges.take("c1", "Cy", T0) is True


async def test_open_challenges_are_counted_per_person(store: GameStore) -> None:
    await store.challenges.create(challenge("c1", "Ann"))
    await store.challenges.create(challenge("c2", "ANN"))
    await store.challenges.create(challenge("c3", "Bo"))
    await store.challenges.take("c2", "Bo", T0)
    assert await store.challenges.open_count("ann", T0) == 1


async def test_challenges_survive_reopening_the_store(db_url: str) -> None:
    first = await GameStore.open(db_url)
    await first.challenges.create(challenge())
    await first.close()
    second = await GameStore.open(db_url)
    try:
        assert await second.challenges.get("c1") == challenge()
    finally:
        await second.close()
