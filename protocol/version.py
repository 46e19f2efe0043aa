"""The versions: the wire's (`PROTOCOL_VERSION`, which `initialize` names) and the installed Hearth's, as the
host reports it in `initialize` and the CLI in `--version`. Nothing here loads a model, so a client can name
the wire's version cheaply."""

from __future__ import annotations

__all__ = ["PROTOCOL_VERSION", "hearth_version"]

PROTOCOL_VERSION = "2026-11-01"


def hearth_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # a tenth of a second: only when asked

    try:
        return version("hearth")
    except PackageNotFoundError:
        return "0.0.0"
