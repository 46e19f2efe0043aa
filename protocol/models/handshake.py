"""Wire models of the handshake, `initialize`: kept apart so a client can connect without every model."""

from __future__ import annotations

from protocol.models.base import Params, WireModel
from protocol.version import PROTOCOL_VERSION

__all__ = [
    "PROTOCOL_VERSION",
    "ClientCapabilities",
    "ClientInfo",
    "ServerInfo",
    "InitializeParams",
    "InitializeResult",
]


class ClientInfo(WireModel):
    name: str
    version: str = ""


class ServerInfo(WireModel):
    name: str
    version: str


class ClientCapabilities(Params):
    approvals: bool = False
    """The client shows a tool call's question (`agent.tool` pending) and answers it (`agent.decideTool`): the
    host offers it the questions open when it attaches, and a question waits while such a client is there."""


class InitializeParams(Params):
    """`token` is required on the host's Unix socket (it is in `<data>/host.endpoint`); stdio needs none."""

    client: ClientInfo
    protocol_version: str
    token: str | None = None
    capabilities: ClientCapabilities = ClientCapabilities()


class InitializeResult(WireModel):
    server: ServerInfo
    protocol_version: str
    capabilities: dict[str, bool]
