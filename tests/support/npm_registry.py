"""For the tests that run a real MCP server from npm: skip marks for npx and the npm registry."""

from __future__ import annotations

import shutil
import socket

import pytest

__all__ = ["NEEDS_NPX", "NEEDS_REGISTRY"]


def _registry_reachable() -> bool:
    try:
        socket.getaddrinfo("registry.npmjs.org", 443)
    except OSError:
        return False
    return True


NEEDS_NPX = pytest.mark.skipif(shutil.which("npx") is None, reason="needs npx")
NEEDS_REGISTRY = pytest.mark.skipif(
    shutil.which("npx") is None or not _registry_reachable(), reason="needs npx and the npm registry"
)
