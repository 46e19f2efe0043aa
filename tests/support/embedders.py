"""Test embedders in use: the process-wide embedder set for a block, and semantic recall off again after it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from host.memory.embedder import Embedder, use_embedder

E = TypeVar("E", bound=Embedder)


@contextmanager
def embedder_in_use(embedder: E) -> Iterator[E]:
    """`embedder` for the stores opened inside the block; semantic recall off again after it."""
    use_embedder(embedder)
    try:
        yield embedder
    finally:
        use_embedder(None)
