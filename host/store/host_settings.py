"""The host's own settings (`<data>/settings.json`): default model, concurrency, shell sandbox mode.

A file that is not valid settings is an error that names it, never a silent reset. Changes are merged
over what stands, validated as a whole, and written atomically before they take effect.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from host.errors import CorruptFileError
from host.store.atomic import read_json, write_json_atomic
from protocol.errors import describe_validation_error
from protocol.models.host import HostSettings

__all__ = ["HostSettingsStore", "load_host_settings"]


def load_host_settings(path: Path) -> HostSettings:
    """The host's settings at `path` (defaults when the file is missing).

    Raises:
        CorruptFileError: the file exists but does not hold valid settings.
    """
    try:
        return HostSettings.model_validate(read_json(path, {}))
    except ValidationError as exc:
        problem = describe_validation_error(exc).removeprefix("Invalid params ")
        raise CorruptFileError(f"{path} does not hold valid host settings: {problem}") from exc


class HostSettingsStore:
    """The settings file and the settings in force."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / "settings.json"
        self.current = load_host_settings(self.path)
        self._lock = threading.Lock()  # updates run in worker threads; each merges over the one before

    def update(self, changes: dict[str, Any]) -> HostSettings:
        """Merge `changes` (snake_case fields) over the current settings, write them, and return them.

        Raises:
            StorageError: the disk refused the write; the settings in force are unchanged.
        """
        with self._lock:
            merged = HostSettings.model_validate({**self.current.model_dump(), **changes})
            write_json_atomic(self.path, merged.model_dump(mode="json"))
            self.current = merged
        return merged
