"""Wire models of the handshake, `initialize`: kept apart so a client can connect without every model."""

from __future__ import annotations

from protocol.models.base import Params, WireModel

__all__ = ["PROTOCOL_VERSION", "ClientInfo", "ServerInfo", "InitializeParams", "InitializeResult"]

PROTOCOL_VERSION = "2026-11-01"


class ClientInfo(WireModel):
    name: str
    version: str = ""


class ServerInfo(WireModel):
    name: str
    version: str


class InitializeParams(Params):
    """`token` is required on the host's Unix socket (it is in `<data>/host.endpoint`); stdio needs none."""

    client: ClientInfo
    protocol_version: str
    token: str | None = None


class InitializeResult(WireModel):
    server: ServerInfo
    protocol_version: str
    capabilities: dict[str, bool]
