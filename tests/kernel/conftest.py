"""Fixtures for the kernel tests: a scripted model server on 127.0.0.1, started and stopped around a test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kernel.providers.fake_llm_server import FakeModelServer


@pytest.fixture
def model_server() -> Iterator[FakeModelServer]:
    server = FakeModelServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
