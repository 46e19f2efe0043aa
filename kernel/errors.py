"""The kernel's error root and the errors a turn can end with.

`ProviderError` carries whether a retry could help; the retry decision itself lives in one table in
the providers package, not here.
"""

from __future__ import annotations

from protocol.errors import INVALID_PARAMS, NOT_FOUND, PROVIDER_ERROR, UNKNOWN_PREFIX, JsonRpcError

__all__ = ["KernelError", "ProviderError", "UnknownRunError", "BadModelConfigError", "UnknownPrefixError"]


class KernelError(JsonRpcError):
    """Root of every error the kernel raises on purpose."""


class ProviderError(KernelError):
    """The model provider failed; `message` is fit to show a person, with no secret in it."""

    CODE = PROVIDER_ERROR

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None) -> None:
        super().__init__(message, data={"status": status} if status is not None else None)
        self.retryable = retryable
        self.status = status


class UnknownRunError(KernelError):
    CODE = NOT_FOUND


class BadModelConfigError(KernelError):
    CODE = INVALID_PARAMS


class UnknownPrefixError(KernelError):
    """A request continued messages this kernel does not hold for its session; the sender sends them all."""

    CODE = UNKNOWN_PREFIX
