"""One request to a running host without an event loop, for a one-shot command that only reads (`hearth agents`).

A blocking Unix socket, the handshake with the host's token, one call and its answer; events the host sends
meanwhile are skipped. It loads neither asyncio nor the wire models, so the command answers in about the time
Python takes to start. `call_running_host` returns None when no host answers on the data dir: the caller then
attaches, or starts a host, the usual way (`desktop.client.connect_host`).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from protocol.endpoint import EndpointError, live_endpoint
from protocol.errors import NOT_AUTHORIZED, ConnectionClosedError, JsonRpcError
from protocol.framing import READ_LIMIT
from protocol.version import PROTOCOL_VERSION

__all__ = ["call_running_host"]

TIMEOUT = 30.0


def call_running_host(data_dir: Path, method: str, params: dict[str, Any], *, client: str) -> Any | None:
    """`method`'s result from the host running on `data_dir`, or None when no host answers there.

    Raises:
        JsonRpcError: the host refused the call (its code and data kept).
        ConnectionClosedError: the recorded socket is not this user's (it is refused, not used).
    """
    try:
        endpoint = live_endpoint(data_dir)
    except EndpointError as exc:
        raise ConnectionClosedError(f"refusing to attach: {exc}") from None
    if endpoint is None:
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(TIMEOUT)
            sock.connect(endpoint.socket)
            with sock.makefile("rwb") as stream:
                hello = {"client": {"name": client}, "protocolVersion": PROTOCOL_VERSION, "token": endpoint.token}
                try:
                    _call(stream, 1, "initialize", hello)
                except JsonRpcError as exc:
                    if exc.code == NOT_AUTHORIZED:
                        return None  # a host restarted with a new token: the usual path looks again
                    raise
                return _call(stream, 2, method, params)
    except (OSError, ConnectionClosedError):
        return None  # a dead host's record, or it stopped meanwhile: the usual path starts one


def _call(stream: Any, request_id: int, method: str, params: dict[str, Any]) -> Any:
    frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    stream.write(json.dumps(frame, ensure_ascii=False).encode("utf-8") + b"\n")
    stream.flush()
    while True:
        line = stream.readline(READ_LIMIT)
        if not line:
            raise ConnectionClosedError("host: connection closed")
        message = json.loads(line)
        if message.get("id") != request_id:
            continue  # an event (or another answer): not what this call waits for
        error = message.get("error")
        if error is not None:
            raise JsonRpcError(error["message"], code=error["code"], data=error.get("data"))
        return message.get("result")
