"""Memory's errors form one branch of the host's error tree, each with its own wire code."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import host.memory
from host.errors import BusyError, ConflictError, HostError, InvalidRequestError, NotFoundError
from host.memory.errors import (
    InvalidMemoryRequestError,
    LedgerWriteError,
    MemoryLockedError,
    MemoryStateError,
    MemoryStoreError,
    RecordNotFoundError,
    SensitiveContentError,
    UnknownAgentError,
)
from protocol.errors import (
    BUSY,
    CONFLICT,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    NOT_FOUND,
    SENSITIVE_CONTENT,
    STORAGE_FAILED,
)


def _memory_exception_classes() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for info in pkgutil.iter_modules(host.memory.__path__):
        module = importlib.import_module(f"host.memory.{info.name}")
        found += [
            value
            for value in vars(module).values()
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__
        ]
    return found


def test_every_error_class_of_the_memory_domain_is_a_host_error_under_memory_store_error() -> None:
    classes = _memory_exception_classes()
    assert MemoryStoreError in classes and len(classes) > 1
    for cls in classes:
        assert issubclass(cls, MemoryStoreError) and issubclass(cls, HostError), cls


def test_every_memory_error_is_exported_and_carries_a_code_of_its_own() -> None:
    for cls in _memory_exception_classes():
        assert cls.__name__ in host.memory.__all__, cls
        if cls is not MemoryStoreError:
            assert cls.CODE != INTERNAL_ERROR, cls


def test_a_memory_error_of_a_kind_the_host_has_is_that_host_error_with_its_code() -> None:
    kinds = {
        UnknownAgentError: (NotFoundError, NOT_FOUND),
        RecordNotFoundError: (NotFoundError, NOT_FOUND),
        InvalidMemoryRequestError: (InvalidRequestError, INVALID_PARAMS),
        MemoryStateError: (ConflictError, CONFLICT),
        MemoryLockedError: (BusyError, BUSY),
    }
    for cls, (kind, code) in kinds.items():
        assert issubclass(cls, kind) and cls("x").code == code, cls
    for cls, code in {SensitiveContentError: SENSITIVE_CONTENT, LedgerWriteError: STORAGE_FAILED}.items():
        assert cls("x").code == code and not issubclass(cls, tuple(kind for kind, _ in kinds.values())), cls
