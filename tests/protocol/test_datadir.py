"""Where the data directory is: --data-dir, then $HEARTH_HOME, then the platform default."""

from __future__ import annotations

from pathlib import Path

import pytest
from platformdirs import user_data_dir

from protocol.datadir import resolve_data_dir


def test_the_flag_beats_the_environment_which_beats_the_platform_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HEARTH_HOME", str(tmp_path / "env"))
    assert resolve_data_dir(str(tmp_path / "flag")) == tmp_path / "flag"
    assert resolve_data_dir(None) == tmp_path / "env"
    monkeypatch.delenv("HEARTH_HOME")
    assert resolve_data_dir(None) == Path(user_data_dir("hearth", appauthor=False)).resolve()
    assert resolve_data_dir(None).name == "hearth"
