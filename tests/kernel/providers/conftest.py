"""Fixtures for the provider tests: a scripted model server on 127.0.0.1 and a clock that never sleeps."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kernel.providers.fake_llm_server import FakeClock, FakeModelServer


@pytest.fixture
def model_server() -> Iterator[FakeModelServer]:
    server = FakeModelServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
