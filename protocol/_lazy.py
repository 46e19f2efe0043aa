"""Package attributes loaded on first use (PEP 562), so importing a package costs only what is used."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, homes: dict[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's `__getattr__` and `__dir__` for the names `homes` maps from their modules.

    Args:
        package: the package's name, for the error of a missing attribute.
        homes: module name -> the names it defines that the package offers.
    """
    home_of = {name: module for module, names in homes.items() for name in names}

    def getattr_(name: str) -> Any:
        home = home_of.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(home), name)

    def dir_() -> list[str]:
        return sorted(home_of)

    return getattr_, dir_
