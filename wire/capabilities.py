"""A bot's ``capabilities.json``."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool

from wire.names import _display_name

#
# Unknown fields, versions and capabilities are kept (extra="allow"): the spec lets
# bots add fields, and a document read and written back should not lose them.
# Flags default to False, so "declared as {}" reads as "base features only".


class _Capability(BaseModel):
    model_config = ConfigDict(extra="allow", validate_by_name=True, serialize_by_alias=True)


class Meta(_Capability):
    """Who the bot is; not a capability. Tags are short lower-case words with dashes;
    ``name`` becomes a seat's name in records, so it is cleaned (``_display_name``)."""

    name: Annotated[str, BeforeValidator(_display_name)] | None = None
    description: str | None = None
    authors: list[str] | None = None
    version: str | None = None
    tags: list[Annotated[str, Field(pattern=r"^[a-z0-9-]+$")]] | None = None


class StatelessV1Alpha(_Capability):
    """``stateless.versions["v1-alpha"]``: where the routes are, which limits it honours."""

    DEFAULT_API_ROOT: ClassVar[str] = "stateless/v1-alpha"

    api_root: str = DEFAULT_API_ROOT
    move_time_limit: StrictBool = False


class StatelessVersions(_Capability):
    v1_alpha: StatelessV1Alpha | None = Field(default=None, alias="v1-alpha")


class StatelessCapability(_Capability):
    """The stateless HTTP API. A missing ``versions`` (required by the spec) is read
    as no versions, so one sloppy entry does not hide the bot's other capabilities."""

    versions: StatelessVersions = Field(default_factory=StatelessVersions)


#: Extension: the ``config`` key under which a game's ``Match`` is sent to a bot, and the
#: flag of a declared ``config`` capability saying the bot understands that key (the spec
#: lets a client send an ``x-`` key only to a bot it knows supports it). Bots served by
#: ``bot.serve`` set the flag whenever they declare ``config``.
MATCH_CONFIG_KEY = "x-match"


class BwsConfigCapability(_Capability):
    """The bot accepts ``config`` packets; ``dynamic``: also after any turn.

    >>> BwsConfigCapability.model_validate({"x-match": True}).accepts_match_settings
    True
    """

    dynamic: StrictBool = False

    @property
    def accepts_match_settings(self) -> bool:
        """Whether the bot reads the game's settings from ``MATCH_CONFIG_KEY``."""
        return (self.model_extra or {}).get(MATCH_CONFIG_KEY) is True


class BwsV1Alpha(_Capability):
    """``basic_websocket.versions["v1-alpha"]``: the optional features the bot supports."""

    DEFAULT_API_ROOT: ClassVar[str] = "bws/v1-alpha"

    api_root: str = DEFAULT_API_ROOT
    move_time_limit: StrictBool = False
    evaluation_time_limit: StrictBool = False
    config: BwsConfigCapability | None = None
    free_setup: StrictBool = False
    move_skips: StrictBool = False
    dual_sided: StrictBool = False
    free_move_order: StrictBool = False
    evaluation: StrictBool = False
    resettable_state: StrictBool = False
    interruptible: StrictBool = False


class BasicWebsocketVersions(_Capability):
    v1_alpha: BwsV1Alpha | None = Field(default=None, alias="v1-alpha")


class BasicWebsocketCapability(_Capability):
    """The basic WebSocket API; see ``StatelessCapability`` about missing ``versions``."""

    versions: BasicWebsocketVersions = Field(default_factory=BasicWebsocketVersions)


class Capabilities(_Capability):
    """A bot's ``capabilities.json``. Version keys are ``"v1-alpha"`` in JSON and
    ``v1_alpha`` in Python; both are accepted when building one.

    >>> from models import dump_packet, parse_body
    >>> caps = parse_body(Capabilities, '{"basic_websocket": {"versions": {"v1-alpha": {}}}}')
    >>> caps.bws_v1_alpha.api_root
    'bws/v1-alpha'
    >>> dump_packet(caps)  # doctest: +ELLIPSIS
    b'{"basic_websocket":{"versions":{"v1-alpha":{"api_root":"bws/v1-alpha",...}}}}'
    """

    meta: Meta | None = None
    stateless: StatelessCapability | None = None
    basic_websocket: BasicWebsocketCapability | None = None

    @property
    def bws_v1_alpha(self) -> BwsV1Alpha | None:
        """The basic WebSocket v1-alpha features, or ``None`` if not declared."""
        return self.basic_websocket.versions.v1_alpha if self.basic_websocket else None

    @property
    def stateless_v1_alpha(self) -> StatelessV1Alpha | None:
        """The stateless v1-alpha features, or ``None`` if not declared."""
        return self.stateless.versions.v1_alpha if self.stateless else None
