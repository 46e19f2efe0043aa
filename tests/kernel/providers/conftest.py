"""Fixtures for the provider tests: a clock that never sleeps (the model server is `tests/kernel/conftest.py`'s)."""

from __future__ import annotations

import pytest

from tests.kernel.providers.fake_llm_server import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
