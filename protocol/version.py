"""The installed Hearth's version, as the host reports it in `initialize` and the CLI in `--version`."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["hearth_version"]


def hearth_version() -> str:
    try:
        return version("hearth")
    except PackageNotFoundError:
        return "0.0.0"
