"""Why a bot cannot be seated: one exception class per cause.

Every one is a ``DiscoveryError`` (a ``ValueError``) whose message is fit for a 422
answer: it names the URL and what was wrong. ``game.discovery`` re-exports them all.
"""

from __future__ import annotations

__all__ = [
    "BadApiRoot",
    "BadBotUrl",
    "BadCapabilities",
    "BotHttpError",
    "BotRedirected",
    "BotTimedOut",
    "BotUnreachable",
    "CannotLearnRules",
    "CannotStartFromOpening",
    "CapabilitiesTooLarge",
    "DiscoveryError",
    "ForbiddenAddress",
    "NoUsableProtocol",
    "PolicySyntaxError",
]


class DiscoveryError(ValueError):
    """A bot that cannot be seated; the message says why, for a 422 answer."""


class BadBotUrl(DiscoveryError):
    """The bot URL is malformed or uses a scheme other than http, https, ws, wss."""


class ForbiddenAddress(DiscoveryError):
    """The bot's host is, or resolves to, an address the policy does not allow."""


class BotUnreachable(DiscoveryError):
    """The capabilities document could not be fetched: connection refused, name not
    resolved, TLS failed, connection broken. Subclasses name the other causes."""


class BotTimedOut(BotUnreachable):
    """No complete answer within the timeout."""


class BotRedirected(BotUnreachable):
    """The bot answered with a redirect; they are not followed."""


class BotHttpError(BotUnreachable):
    """The bot answered with a status other than 200."""


class BadCapabilities(DiscoveryError):
    """The document is not valid JSON or not a valid capabilities document."""


class CapabilitiesTooLarge(BadCapabilities):
    """The document is over the size cap."""


class BadApiRoot(BadCapabilities):
    """An ``api_root`` that is not a relative path (a URL, a query, a fragment...)."""


class NoUsableProtocol(DiscoveryError):
    """The bot declares neither basic_websocket v1-alpha nor stateless v1-alpha."""


class CannotStartFromOpening(DiscoveryError):
    """A websocket bot that declares neither ``free_setup`` nor ``move_skips``, seated in
    a game that starts from an opening: neither its ``setup`` nor its ``previous`` may
    tell it the opening's stones, so it cannot play from that position."""


class CannotLearnRules(DiscoveryError):
    """A bot seated in a game whose rules are not the standard ones (its view or win
    distance), which no packet it reads can tell it: a stateless bot, or a websocket bot
    whose ``config`` does not accept ``x-match``. It would play by the standard rules,
    and its moves would be judged by others."""


class PolicySyntaxError(ValueError):
    """A policy string that cannot be read; the message names the bad part."""
