"""Capability models and builders for bot authors.

The models live in ``models`` (they are wire types); this module gives them the names
the prototype's bots import, and builds the usual documents.

>>> caps = default_capabilities(BwsV1AlphaCapability(move_time_limit=True, evaluation=True))
>>> caps.meta = Meta(name="MyBot", tags=["minimax"])
>>> caps.bws_v1_alpha.evaluation, caps.stateless_v1_alpha.move_time_limit
(True, True)
"""

from __future__ import annotations

from models import (
    BasicWebsocketCapability,
    BasicWebsocketVersions,
    BwsConfigCapability,
    BwsV1Alpha,
    Capabilities,
    Meta,
    StatelessCapability,
    StatelessV1Alpha,
    StatelessVersions,
)

#: The prototype's names for the per-version capability models.
BwsV1AlphaCapability = BwsV1Alpha
StatelessV1AlphaCapability = StatelessV1Alpha

__all__ = [
    "BwsConfigCapability",
    "BwsV1Alpha",
    "BwsV1AlphaCapability",
    "Capabilities",
    "Meta",
    "StatelessV1Alpha",
    "StatelessV1AlphaCapability",
    "default_capabilities",
]


def default_capabilities(
    bws: BwsV1Alpha | None = None,
    stateless: StatelessV1Alpha | bool | None = True,
    *,
    meta: Meta | None = None,
) -> Capabilities:
    """A capabilities document: the basic WebSocket API with the features in ``bws``
    (base features only when None) and, unless ``stateless`` is False, the stateless
    HTTP API (honouring time limits whenever the WebSocket side does).

    The framework implements every feature the document declares, so declaring one is
    all a bot needs to do to have it.
    """
    websocket = bws if bws is not None else BwsV1Alpha()
    if stateless is True:
        stateless = StatelessV1Alpha(move_time_limit=websocket.move_time_limit)
    return Capabilities(
        meta=meta,
        basic_websocket=BasicWebsocketCapability(
            versions=BasicWebsocketVersions(v1_alpha=websocket)
        ),
        stateless=(
            StatelessCapability(versions=StatelessVersions(v1_alpha=stateless))
            if isinstance(stateless, StatelessV1Alpha)
            else None
        ),
    )
