"""protocol: Hearth's wire contract: pydantic models (`models/`), NDJSON framing, the JSON-RPC peer, errors, ids.
A new wire method: its models in `protocol/models/<family>.py`, listed in `protocol/registry.py`.

The names below are loaded when first used, so a command that needs only a few modules (a `hearth`
client, say) does not pay for every wire model and the dispatcher.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol._lazy import lazy_exports

if TYPE_CHECKING:
    from protocol.codec import FrameDecodeError, FrameEncodeError, decode_frame, encode_frame
    from protocol.dispatch import Router
    from protocol.errors import (
        ConnectionClosedError,
        InternalError,
        InvalidParamsError,
        JsonRpcError,
        RequestTimeoutError,
        error_object_from_exception,
    )
    from protocol.framing import MAX_FRAME_BYTES, FrameTooLargeError, read_frame
    from protocol.models.host import PROTOCOL_VERSION
    from protocol.peer import JsonRpcPeer
    from protocol.schema import build_schema, schema_json
    from protocol.transport import Transport, memory_transport_pair, process_transport, stdio_transport

_HOMES = {
    "protocol.codec": ("FrameDecodeError", "FrameEncodeError", "decode_frame", "encode_frame"),
    "protocol.dispatch": ("Router",),
    "protocol.errors": (
        "ConnectionClosedError",
        "InternalError",
        "InvalidParamsError",
        "JsonRpcError",
        "RequestTimeoutError",
        "error_object_from_exception",
    ),
    "protocol.framing": ("MAX_FRAME_BYTES", "FrameTooLargeError", "read_frame"),
    "protocol.models.host": ("PROTOCOL_VERSION",),
    "protocol.peer": ("JsonRpcPeer",),
    "protocol.schema": ("build_schema", "schema_json"),
    "protocol.transport": ("Transport", "memory_transport_pair", "process_transport", "stdio_transport"),
}

__all__ = [
    "MAX_FRAME_BYTES",
    "PROTOCOL_VERSION",
    "ConnectionClosedError",
    "FrameDecodeError",
    "FrameEncodeError",
    "FrameTooLargeError",
    "InternalError",
    "InvalidParamsError",
    "JsonRpcError",
    "JsonRpcPeer",
    "RequestTimeoutError",
    "Router",
    "Transport",
    "build_schema",
    "decode_frame",
    "encode_frame",
    "error_object_from_exception",
    "memory_transport_pair",
    "process_transport",
    "read_frame",
    "schema_json",
    "stdio_transport",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
