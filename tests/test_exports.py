"""Each package's `__all__` is deliberate: every name in it exists, sorted, with no duplicates."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = ["protocol", "host", "host.memory", "kernel", "kernel.providers", "kernel.tools", "sandbox"]


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
