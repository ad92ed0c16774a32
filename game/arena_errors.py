"""The arena's errors (names, owners, the bot registry): one class per cause.

The routes answer them as: ``InvalidPlayerName`` 422, ``NameTaken`` 409, ``BotRetired``
409, ``WrongToken`` 403, ``ServerOwnedBot`` 403, ``UnknownBot`` 404. A bot whose URL is
refused raises the ``DiscoveryError`` of ``game.discovery`` (422).
"""

from __future__ import annotations

__all__ = [
    "ArenaError",
    "BotRetired",
    "InvalidPlayerName",
    "NameTaken",
    "ServerOwnedBot",
    "UnknownBot",
    "WrongToken",
]


class ArenaError(Exception):
    """Base class of the arena's errors; the message is fit to show the client."""


class InvalidPlayerName(ArenaError, ValueError):
    """A name that cannot be a player's: empty, too long, spaces around it, controls."""


class NameTaken(ArenaError):
    """The name (compared case-insensitively) is already a bot's or a person's."""


class WrongToken(ArenaError):
    """The token given is not the name's owner token (or none was given)."""


class ServerOwnedBot(ArenaError):
    """A bot the server registered itself (``--ladder-hosted-bots``): no owner token can
    change it."""


class UnknownBot(ArenaError, LookupError):
    """No bot is registered under that name."""


class BotRetired(ArenaError):
    """The bot was retired (``DELETE /bots/{name}``); it can no longer be changed."""
