"""The memory's typed errors: each reaches the wire with its own code, and the tools turn them into plain words.

All of them are `MemoryStoreError`s, and each kind the host already has is also that host error (a missing
record is a `NotFoundError`), so its wire code is written once, in `host.errors`. The sensitive-content refusal
names the kind of secret it saw, never the secret.
"""

from __future__ import annotations

from host.errors import BusyError, ConflictError, HostError, InvalidRequestError, NotFoundError
from protocol.errors import SENSITIVE_CONTENT, STORAGE_FAILED

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


class UnknownAgentError(MemoryStoreError, NotFoundError):
    """No agent directory for that id."""


class RecordNotFoundError(MemoryStoreError, NotFoundError):
    """No record with that id in this agent's memory (or it was erased)."""


class SensitiveContentError(MemoryStoreError):
    """The sensitive-content gate refused the write; `data.reason` says what kind of secret it saw."""

    CODE = SENSITIVE_CONTENT


class InvalidMemoryRequestError(MemoryStoreError, InvalidRequestError):
    """A value is malformed: an unknown tier, a date that is not ISO 8601, empty text."""


class MemoryStateError(MemoryStoreError, ConflictError):
    """The record is not in a state that allows the act (reviewing a fact that is not proposed)."""


class MemoryLockedError(MemoryStoreError, BusyError):
    """Another process holds this agent's memory: there is one writer per agent's memory."""


class LedgerWriteError(MemoryStoreError):
    """The ledger could not be written (disk full, quota, I/O error): the write was undone, nothing was stored."""

    CODE = STORAGE_FAILED
