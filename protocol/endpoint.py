"""Where a running host listens: its Unix socket, and the token a client presents in `initialize`.

While a host runs it records `{socket, token, pid}` in `<data>/host.endpoint` (mode 0600); a client reads
that record and nothing else, so host and client never have to agree on how the path was chosen. The
socket is `<data>/host.sock` unless that path is too long for a socket address; then it lives in a 0700
directory of the user's own (`$XDG_RUNTIME_DIR/hearth`, else `/tmp/hearth-<uid>`), named from a hash of the
data dir. A socket, or a directory of sockets, that is not this user's own is refused, never used.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ENDPOINT_FILE",
    "SOCKET_NAME",
    "MAX_SOCKET_PATH",
    "Endpoint",
    "EndpointError",
    "choose_socket_path",
    "check_socket",
    "read_endpoint",
    "live_endpoint",
    "endpoint_json",
]

ENDPOINT_FILE = "host.endpoint"
SOCKET_NAME = "host.sock"
MAX_SOCKET_PATH = 107
"""Bytes of a socket path Linux accepts (`sun_path` is 108 bytes with its terminating NUL)."""


class EndpointError(Exception):
    """A socket or its directory is unsafe to use (another user's, the wrong kind, too open)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    socket: str
    token: str
    pid: int


def _private_dir(path: Path) -> Path:
    """`path` as a 0700 directory owned by this user, created if missing.

    Raises:
        EndpointError: it exists but is a symlink, not a directory, someone else's, or open to others.
    """
    try:
        path.mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        raise EndpointError(f"cannot create {path}: {exc.strerror}") from exc
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise EndpointError(f"{path} is not a directory; refusing to put the host's socket there")
    if info.st_uid != os.getuid():
        raise EndpointError(f"{path} belongs to uid {info.st_uid}, not to you; refusing to use it")
    if info.st_mode & 0o077:
        raise EndpointError(f"{path} is open to other users (mode {info.st_mode & 0o777:o}); refusing to use it")
    return path


def choose_socket_path(data_dir: Path) -> Path:
    """Where a host on `data_dir` puts its socket (creating the private directory when one is needed).

    Raises:
        EndpointError: the fallback directory is unsafe.
    """
    inside = data_dir / SOCKET_NAME
    if len(os.fsencode(inside)) <= MAX_SOCKET_PATH:
        return inside
    digest = hashlib.sha256(os.fsencode(data_dir)).hexdigest()[:20]
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    base = Path(runtime) / "hearth" if runtime.startswith("/") and os.path.isdir(runtime) else None
    if base is None or len(os.fsencode(base / f"{digest}.sock")) > MAX_SOCKET_PATH:
        base = Path("/tmp") / f"hearth-{os.getuid()}"
    return _private_dir(base) / f"{digest}.sock"


def check_socket(path: Path) -> bool:
    """Whether `path` is a socket of this user's: False when nothing is there.

    Raises:
        EndpointError: something else is there (not a socket, or another user's socket).
    """
    try:
        info = path.lstat()
    except FileNotFoundError:
        return False
    if not stat.S_ISSOCK(info.st_mode):
        raise EndpointError(f"{path} is not a socket; refusing to use it")
    if info.st_uid != os.getuid():
        raise EndpointError(f"the socket {path} belongs to uid {info.st_uid}, not to you; refusing to use it")
    return True


def endpoint_json(endpoint: Endpoint) -> str:
    return json.dumps({"socket": endpoint.socket, "token": endpoint.token, "pid": endpoint.pid})


def read_endpoint(data_dir: Path) -> Endpoint | None:
    """The running host's record, or None when there is none (or it cannot be read: a host is starting,
    or one died and left it; either way the caller goes on as if no host ran).
    """
    try:
        raw = json.loads((data_dir / ENDPOINT_FILE).read_text(encoding="utf-8"))
        return Endpoint(socket=str(raw["socket"]), token=str(raw["token"]), pid=int(raw["pid"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def live_endpoint(data_dir: Path) -> Endpoint | None:
    """The record of a host whose socket is there to connect to, or None when no host runs on `data_dir`.

    Raises:
        EndpointError: the recorded socket is not this user's (it is refused, not used).
    """
    endpoint = read_endpoint(data_dir)
    if endpoint is None or not check_socket(Path(endpoint.socket)):
        return None
    return endpoint
