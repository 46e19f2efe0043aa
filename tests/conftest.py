"""Suite-wide settings.

A host that a client starts stops as soon as its last client leaves: `hearth` commands start a background
host when none runs; in the tests it should not outlive the test that started it by the person-facing grace
period. Semantic recall is off unless a test turns it on (`tests/host/memory/test_ranking.py`,
`test_vectors.py`, the recall e2e test): its vectors arrive from a background thread, so word-level
assertions elsewhere would depend on timing, and the hosts the tests start inherit the setting. `arun`
runs one coroutine to completion within a timeout, for tests that drive async code from a plain function.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from host.memory.embedder import SWITCH

os.environ.setdefault(SWITCH, "off")  # tests about semantic recall turn it on (docs/decisions.md)


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("HEARTH_IDLE_EXIT", "0")


@pytest.fixture
def arun() -> Callable[[Coroutine[Any, Any, Any]], Any]:
    """Run one coroutine to completion, bounded by a timeout."""

    def run(coro: Coroutine[Any, Any, Any]) -> Any:
        async def bounded() -> Any:
            async with asyncio.timeout(60):
                return await coro

        return asyncio.run(bounded())

    return run
