"""The host's error root and the typed errors a shell sees, each with its own wire code."""

from __future__ import annotations

import errno

from protocol.errors import (
    BUSY,
    CONFLICT,
    CORRUPT_FILE,
    INVALID_PARAMS,
    KERNEL_UNAVAILABLE,
    NOT_AUTHORIZED,
    NOT_FOUND,
    NOT_INITIALIZED,
    STORAGE_ERROR,
    STORAGE_FULL,
    JsonRpcError,
)

__all__ = [
    "HostError",
    "NotFoundError",
    "ConflictError",
    "BusyError",
    "NotInitializedError",
    "NotAuthorizedError",
    "KernelUnavailableError",
    "InvalidRequestError",
    "HostLockedError",
    "CorruptFileError",
    "StorageError",
]


class HostError(JsonRpcError):
    """Root of every error the host raises on purpose."""


class NotFoundError(HostError):
    CODE = NOT_FOUND


class ConflictError(HostError):
    CODE = CONFLICT


class BusyError(HostError):
    CODE = BUSY


class NotInitializedError(HostError):
    CODE = NOT_INITIALIZED


class NotAuthorizedError(HostError):
    CODE = NOT_AUTHORIZED


class KernelUnavailableError(HostError):
    CODE = KERNEL_UNAVAILABLE


class InvalidRequestError(HostError):
    """Params were well-formed but make no sense for the current state."""

    CODE = INVALID_PARAMS


class HostLockedError(HostError):
    """Another live host owns the data directory."""


class CorruptFileError(HostError):
    """A state file could not be read; the message names the file."""

    CODE = CORRUPT_FILE


class StorageError(HostError, OSError):
    """A write the disk refused; nothing of it was kept. Still an `OSError`, for callers that catch those.

    `data` holds the file's `path` and the `errno` name; the code is STORAGE_FULL for a full disk or
    quota, STORAGE_ERROR for anything else.
    """

    CODE = STORAGE_ERROR

    def __init__(self, message: str, *, path: str, cause: OSError) -> None:
        full = cause.errno in (errno.ENOSPC, errno.EDQUOT)
        name = errno.errorcode.get(cause.errno or 0, "EIO")
        super().__init__(message, data={"path": path, "errno": name}, code=STORAGE_FULL if full else STORAGE_ERROR)
