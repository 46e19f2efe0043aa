"""Suite-wide settings: a host that a client starts stops as soon as its last client leaves.

`hearth` commands start a background host when none runs; in the tests it should not outlive the test
that started it by the person-facing grace period.
"""

from __future__ import annotations

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("HEARTH_IDLE_EXIT", "0")
