"""ChunkVectors: rows added in batches, re-added and dropped are what `nearest` finds, and nothing else."""

from __future__ import annotations

import numpy as np

from host.knowledge.vectors import ChunkVectors


def _unit_rows(count: int) -> np.ndarray:
    rows = np.random.default_rng(7).normal(size=(count, 8)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_rows_added_in_batches_past_the_buffers_room_are_all_found() -> None:
    rows = _unit_rows(300)
    vectors = ChunkVectors()
    for start in range(0, 300, 16):
        vectors.add(list(range(start, min(start + 16, 300))), rows[start : start + 16])
    assert len(vectors) == 300
    assert [vectors.nearest(rows[n], 1)[0][0] for n in (0, 63, 64, 299)] == [0, 63, 64, 299]


def test_a_dropped_row_is_never_found_and_a_re_added_one_is_found_once() -> None:
    rows = _unit_rows(100)
    vectors = ChunkVectors()
    vectors.add(list(range(100)), rows)
    view = vectors.nearest(rows[5], 100)  # read before the drop: stays whole
    vectors.drop([5, 6])
    assert len(vectors) == 98 and 5 not in {chunk for chunk, _ in vectors.nearest(rows[5], 100)}
    vectors.add([9], rows[9:10])
    found = [chunk for chunk, _ in vectors.nearest(rows[9], 100)]
    assert len(vectors) == 98 and found.count(9) == 1 and found[0] == 9
    vectors.add([5], rows[5:6])
    assert vectors.nearest(rows[5], 1)[0][0] == 5 and len(vectors) == 99
    assert len(view) == 100


def test_loading_nothing_empties_it() -> None:
    vectors = ChunkVectors()
    vectors.add([1, 2], _unit_rows(2))
    vectors.load([])
    assert len(vectors) == 0 and vectors.nearest(_unit_rows(1), 3) == []
