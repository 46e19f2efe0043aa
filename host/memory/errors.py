"""The memory's typed errors: each reaches the wire with its own code, and the tools turn them into plain words.

All of them are `HostError`s. The sensitive-content refusal names the kind of secret it saw, never the secret.
"""

from __future__ import annotations

from host.errors import HostError
from protocol.errors import BUSY, CONFLICT, INVALID_PARAMS, NOT_FOUND, SENSITIVE_CONTENT, STORAGE_FAILED

__all__ = [
    "MemoryStoreError",
    "UnknownAgentError",
    "RecordNotFoundError",
    "SensitiveContentError",
    "InvalidMemoryRequestError",
    "MemoryStateError",
    "MemoryLockedError",
    "LedgerWriteError",
]


class MemoryStoreError(HostError):
    """Root of the errors the memory raises on purpose."""


class UnknownAgentError(MemoryStoreError):
    """No agent directory for that id."""

    CODE = NOT_FOUND


class RecordNotFoundError(MemoryStoreError):
    """No record with that id in this agent's memory (or it was erased)."""

    CODE = NOT_FOUND


class SensitiveContentError(MemoryStoreError):
    """The sensitive-content gate refused the write; `data.reason` says what kind of secret it saw."""

    CODE = SENSITIVE_CONTENT


class InvalidMemoryRequestError(MemoryStoreError):
    """A value is malformed: an unknown tier, a date that is not ISO 8601, empty text."""

    CODE = INVALID_PARAMS


class MemoryStateError(MemoryStoreError):
    """The record is not in a state that allows the act (reviewing a fact that is not proposed)."""

    CODE = CONFLICT


class MemoryLockedError(MemoryStoreError):
    """Another process holds this agent's memory: there is one writer per agent's memory."""

    CODE = BUSY


class LedgerWriteError(MemoryStoreError):
    """The ledger could not be written (disk full, quota, I/O error): the write was undone, nothing was stored."""

    CODE = STORAGE_FAILED
