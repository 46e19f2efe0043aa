"""A package's exported names loaded from their modules when first asked for (its module `__getattr__`).

Every module of a package imports the package first, so an `__init__` that imports all its modules makes a
process that needs one of them load them all (knowledge's reading process needs three). A name, once
loaded, is kept in the package, so it is looked up once; its module is the one named in the package's map.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping

__all__ = ["load_export"]


def load_export(package: str, homes: Mapping[str, str], name: str) -> object:
    """The package's exported `name`, imported from its home module (`homes`: name -> module).

    Raises:
        AttributeError: `name` is not one the package exports.
    """
    home = homes.get(name)
    if home is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    setattr(sys.modules[package], name, value)
    return value
