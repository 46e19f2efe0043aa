"""The sandbox's error root and its refusals.

Every refusal is a `SandboxError` with the SANDBOX_DENIED code, so a denial that reaches the wire is typed;
`PathEscapeError` is also a `ValueError`, because a path that cannot be made safe is a bad value.
"""

from __future__ import annotations

from protocol.errors import SANDBOX_DENIED, JsonRpcError

__all__ = ["SandboxError", "PathEscapeError", "AccessDeniedError", "UnsafeFileError"]


class SandboxError(JsonRpcError):
    """Root of every error the sandbox raises on purpose. `message` is fit to show the model."""

    CODE = SANDBOX_DENIED


class PathEscapeError(SandboxError, ValueError):
    """The raw path cannot be made canonical safely (a NUL byte, an empty part of a required name)."""


class AccessDeniedError(SandboxError):
    """The policy refused the action on this canonical path."""


class UnsafeFileError(SandboxError):
    """The file changed under the check (a symlink appeared, a hard link, not a regular file)."""
