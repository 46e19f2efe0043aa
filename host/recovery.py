"""Start-up recovery: what a host that died (SIGKILL, power cut, OOM) left behind is put right first.

Runs under the host lock before anything else reads or writes the data directory. Each transcript is
opened (which moves a torn last line aside); a run left open, one with lines (its message included)
after the last `ended`, is closed with `error` ("the host stopped") under its own id, so the next turn
never sees the unanswered message as still in flight and no run ends twice. Temporaries of interrupted atomic writes in
the host's own directories are removed; a `scratch/` belongs to its agent or Work and is never touched.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from host.store.atomic import remove_stale_temps
from host.store.transcript import Transcript
from protocol.errors import JsonRpcError
from protocol.models.transcript import RunEndedEvent

__all__ = ["HOST_STOPPED", "Recovered", "close_open_runs", "recover_data_dir"]

logger = logging.getLogger(__name__)

HOST_STOPPED = "the host stopped"
"""The error of a run that the host's death left open."""


@dataclass(slots=True)
class Recovered:
    closed_runs: dict[str, list[str]] = field(default_factory=dict)
    """transcript path (relative to the data dir) → the ids of the runs closed in it."""
    temps_removed: int = 0


def close_open_runs(transcript: Transcript) -> list[str]:
    """Close each run the transcript leaves open, under its own id, oldest first (by construction one at most).

    A run is open when lines carrying its id follow the last `ended`, and that `ended` is not its own (a line
    of a run written after its end, such as a preparation that finished after a cancel). Every message names
    the run that answers it, so a run killed before any other line is closed under its own id too; only a
    message written before messages carried an id is closed under a new one, as nothing else names it.

    Returns:
        The ids of the runs closed (empty when none was open).

    Raises:
        StorageError: an `ended` line could not be written.
    """
    ended_run: str | None = None
    open_runs: list[str] = []  # newest first
    unnamed = False
    for event in transcript.read_backwards():
        run_id = event.get("runId")
        if event.get("type") == "ended":
            ended_run = run_id
            break
        if isinstance(run_id, str):
            if run_id not in open_runs:
                open_runs.append(run_id)
        elif event.get("type") in ("user", "wake"):
            unnamed = True
    closing = [run_id for run_id in reversed(open_runs) if run_id != ended_run]
    if not closing and unnamed:
        closing = [f"run-{uuid.uuid4().hex[:12]}"]
    for run_id in closing:
        transcript.append(RunEndedEvent(run_id=run_id, reason="error", error=HOST_STOPPED).model_dump(mode="json"))
    return closing


def _subdirs(directory: Path) -> list[Path]:
    return sorted(path for path in directory.iterdir() if path.is_dir()) if directory.is_dir() else []


def recover_data_dir(data_dir: Path) -> Recovered:
    """Put right what a dead host left in `data_dir`; a failure for one transcript never stops the others.

    It covers each agent's transcript and each member's transcript in a Work (`works/<id>/members/<agent>/`).
    """
    recovered = Recovered()
    places: list[tuple[str, Path]] = []  # (who, directory holding a transcript)
    temp_dirs = [data_dir]
    for directory in _subdirs(data_dir / "agents"):
        places.append((directory.name, directory))
        temp_dirs += [directory, directory / "memory"]
    for work in _subdirs(data_dir / "works"):
        temp_dirs += [work, work / "memory"]
        for member in _subdirs(work / "members"):
            places.append((f"{member.name} in Work {work.name}", member))
            temp_dirs.append(member)
    recovered.temps_removed = sum(remove_stale_temps(directory) for directory in temp_dirs)
    for who, directory in places:
        path = directory / "transcript.jsonl"
        if not path.is_file():
            continue
        try:
            closed = close_open_runs(Transcript(path))
        except (JsonRpcError, OSError) as exc:  # a full disk: the host still starts; the run is closed next time
            logger.error("could not close the open run of %s: %s", who, exc)
            continue
        if closed:
            recovered.closed_runs[str(path.relative_to(data_dir))] = closed
            logger.warning("%s: run %s was left open when the host stopped; closed it", who, ", ".join(closed))
    return recovered
