"""Each package's `__all__` is deliberate both ways: every name in it exists (sorted, no duplicates), and
every public name the package offers is in it (httpx's `test_all_imports_are_exported`)."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

PACKAGES = [
    "protocol",
    "protocol.models",
    "host",
    "host.knowledge",
    "host.memory",
    "host.prompt",
    "host.rpc",
    "host.runs",
    "host.schedules",
    "host.store",
    "host.together",
    "kernel",
    "kernel.mcp",
    "kernel.providers",
    "kernel.tools",
    "sandbox",
    "desktop",
    "desktop.acp",
    "desktop.shell",
    "hearth",
]


def _isort_key(name: str) -> tuple[int, str]:
    """Constants, then classes, then functions (ruff's isort-style order for `__all__`)."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


@pytest.mark.parametrize("name", PACKAGES)
def test_all_names_are_exported_and_sorted(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert exported, f"{name} exports nothing"
    assert len(set(exported)) == len(exported)
    assert sorted(exported, key=_isort_key) == list(exported)
    for item in exported:
        assert hasattr(module, item), f"{name}.{item} is in __all__ but missing"


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_name_of_a_package_is_exported(name: str) -> None:
    module = importlib.import_module(name)
    public = {
        item for item in dir(module) if not item.startswith("_") and not isinstance(getattr(module, item), ModuleType)
    }
    assert public - set(module.__all__) == set(), f"{name} offers names it does not export"
