"""The host's Unix socket: how `hearth` commands, a second shell and editors attach to the running host.

The socket is created with mode 0600 (the umask is narrowed around `bind`, so it is never open wider),
and a connecting process must run as the same user (checked with SO_PEERCRED). Each connection speaks
the same NDJSON JSON-RPC as stdio and must present the host's per-run token in `initialize`: the token
lives in `<data>/host.endpoint`, a host file no agent's tools or shell can read, so an agent's own
commands cannot drive the host even though they run as the same user.

The caller holds the data dir's lock, so a socket left at the path is a dead host's: it is replaced. A
socket that belongs to another user, or anything that is not a socket, is refused and left alone.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path

from host.errors import HostError
from host.store.atomic import write_bytes_atomic
from protocol.endpoint import ENDPOINT_FILE, Endpoint, EndpointError, check_socket, choose_socket_path, endpoint_json
from protocol.framing import CHUNK_BYTES
from protocol.transport import Transport, stream_transport

__all__ = ["SocketListener", "ListenerError"]

logger = logging.getLogger(__name__)

OnConnection = Callable[[Transport], Awaitable[None]]


class ListenerError(HostError):
    """The socket cannot be set up safely; the message says why and where."""


def _peer_uid(sock: socket.socket) -> int | None:
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    uid: int = struct.unpack("3i", creds)[1]
    return uid


class SocketListener:
    """Listens on the data dir's socket while the host runs. `start()`, then `close()`."""

    def __init__(self, data_dir: Path, on_connection: OnConnection) -> None:
        self._data_dir = data_dir
        self._on_connection = on_connection
        self.token = secrets.token_urlsafe(32)
        self.path: Path | None = None
        self._server: asyncio.Server | None = None

    async def start(self) -> Path:
        """Bind the socket, then record it (and the token) in `host.endpoint`.

        Raises:
            ListenerError: the path is held by something that is not this user's socket, or cannot be bound.
        """
        try:
            path = choose_socket_path(self._data_dir)
            if check_socket(path):
                logger.info("replacing the stale socket %s", path)
                path.unlink()
        except EndpointError as exc:
            raise ListenerError(str(exc)) from exc
        old_umask = os.umask(0o177)
        try:
            # A small read buffer: frames are read in pieces, and a client the host stops reading is held back.
            self._server = await asyncio.start_unix_server(self._accept, path=str(path), limit=CHUNK_BYTES)
        except OSError as exc:
            raise ListenerError(f"cannot listen on {path}: {exc.strerror}") from exc
        finally:
            os.umask(old_umask)
        os.chmod(path, 0o600)
        self.path = path
        record = Endpoint(socket=str(path), token=self.token, pid=os.getpid())
        write_bytes_atomic(self._data_dir / ENDPOINT_FILE, endpoint_json(record).encode("utf-8"), mode=0o600)
        logger.info("listening on %s", path)
        return path

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        uid = _peer_uid(sock) if sock is not None else None
        if uid != os.getuid():
            logger.warning("refused a socket connection from uid %s", uid)
            writer.close()
            return
        await self._on_connection(stream_transport(reader, writer))

    def stop_accepting(self) -> None:
        """Stop taking new connections and remove the socket and its record (live connections go on)."""
        if self._server is not None:
            self._server.close()
            self._server = None
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            self.path = None
            (self._data_dir / ENDPOINT_FILE).unlink(missing_ok=True)
