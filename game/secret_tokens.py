"""The secret tokens the server hands out once and keeps only the hash of: a bot's
``owner_token`` (``game.registry``), a person's token, and a tournament's or series'
``control_token`` (``game.tournament_routes``).

A token is 32 random bytes, URL-safe (43 characters); the store keeps its sha256, so a
copy of the database (a backup, a leaked dump) lets nobody act as the token's holder.

>>> token = new_token()
>>> len(token), token_matches(token, hash_token(token)), token_matches("guess", hash_token(token))
(43, True, False)
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

__all__ = ["hash_token", "new_token", "token_matches"]


def new_token() -> str:
    """A fresh secret token (43 URL-safe characters)."""
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """What is stored of a token: its sha256, hex.

    >>> hash_token("abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token: str | None, token_hash: str | None) -> bool:
    """Whether ``token`` is the one whose hash is ``token_hash``; never for a missing
    token or hash."""
    if token is None or token_hash is None:
        return False
    # compare_digest: the time taken must not tell how much of a guess was right.
    return hmac.compare_digest(hash_token(token), token_hash)
