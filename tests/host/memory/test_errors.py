"""Memory's errors form one branch of the host's error tree, each with its own wire code."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import host.memory
from host.errors import HostError
from host.memory.errors import MemoryStoreError
from protocol.errors import INTERNAL_ERROR


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
