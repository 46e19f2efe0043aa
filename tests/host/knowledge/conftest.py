"""A knowledge hub served in this event loop over a temporary data dir, with an embedder the test chooses."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import numpy as np

from host.knowledge import KnowledgeHub, KnowledgeStatus, Owner
from host.memory.embedder import Embedder, Vectors

__all__ = ["WordVectors", "served_hub", "until_idle"]


class WordVectors:
    """A test embedder: one dimension per concept, each named by the words that mean it (`a|b`), so texts
    that share a concept are near whatever words they use."""

    name = "words-test"

    def __init__(self, concepts: list[str]) -> None:
        self._concepts = [concept.split("|") for concept in concepts]
        self.passages_seen: list[str] = []

    def _vector(self, text: str) -> Vectors:
        lowered = text.lower()
        row = [1.0 if any(word in lowered for word in words) else 0.0 for words in self._concepts]
        vector = np.array([*row, 0.05], dtype=np.float32)
        return (vector / np.linalg.norm(vector)).reshape(1, -1)

    def passages(self, texts: list[str]) -> Vectors:
        self.passages_seen += texts
        if not texts:
            return np.zeros((0, len(self._concepts) + 1), dtype=np.float32)
        return np.vstack([self._vector(text) for text in texts])

    def query(self, text: str) -> Vectors:
        return self._vector(text)

    def background(self) -> None:
        return None


@contextlib.asynccontextmanager
async def served_hub(
    data_dir: Path, *, on: Callable[[Owner], bool] = lambda _: True, embedder: Embedder | None = None
) -> AsyncIterator[tuple[KnowledgeHub, asyncio.Queue[KnowledgeStatus]]]:
    """A hub that serves until the block ends; its progress reports arrive in the queue."""
    reports: asyncio.Queue[KnowledgeStatus] = asyncio.Queue()

    async def report(status: KnowledgeStatus) -> None:
        await reports.put(status)

    hub = KnowledgeHub(data_dir, on, report, embedder=embedder)
    task = asyncio.create_task(hub.serve(lambda: []))
    await asyncio.sleep(0)
    try:
        yield hub, reports
    finally:
        await hub.close()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def until_idle(reports: asyncio.Queue[KnowledgeStatus]) -> KnowledgeStatus:
    """The next report that says the base has nothing left to do (within a timeout)."""
    async with asyncio.timeout(30):
        while True:
            status = await reports.get()
            if status.state == "idle":
                return status
