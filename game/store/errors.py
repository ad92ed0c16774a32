"""The store's errors: one class per cause, all ``StoreError`` s."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of the store's errors."""


class UnsupportedDatabaseError(StoreError, ValueError):
    """The database URL names neither SQLite nor PostgreSQL, or cannot be parsed."""


class InvalidGameIdError(StoreError, ValueError):
    """A record to create has no usable ``game_id``."""


class RecordAlreadyFinishedError(StoreError, ValueError):
    """``create_game`` was given a record that already has a result."""


class DuplicateGameError(StoreError):
    """``create_game`` with a ``game_id`` that is already stored."""


class UnknownGameError(StoreError, LookupError):
    """No game with this ``game_id`` is stored."""


class GameNotRunningError(StoreError):
    """A move or a result for a game that has already finished or was aborted."""


class MoveIndexError(StoreError, ValueError):
    """``add_move`` with an index that is not the next one (moves are written in order)."""


class MoveConflictError(StoreError):
    """``add_move`` with the index of a move already stored, but a different move."""


class InvalidCursorError(StoreError, ValueError):
    """A ``before`` cursor that ``list_games`` did not hand out."""


class InvalidPageSizeError(StoreError, ValueError):
    """A ``limit`` outside 1..MAX_PAGE_SIZE."""


class InvalidPlayerFilterError(StoreError, ValueError):
    """A ``player`` filter that is empty or longer than MAX_PLAYER_FILTER characters."""


class InvalidBotUrlFilterError(StoreError, ValueError):
    """A ``bot_url`` filter that is empty or longer than MAX_BOT_URL_FILTER characters."""
