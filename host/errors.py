"""The host's error root and the typed errors a shell sees, each with its own wire code."""

from __future__ import annotations

from protocol.errors import (
    BUSY,
    CONFLICT,
    INVALID_PARAMS,
    KERNEL_UNAVAILABLE,
    NOT_AUTHORIZED,
    NOT_FOUND,
    NOT_INITIALIZED,
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
