"""Start-up recovery: what a host that died (SIGKILL, power cut, OOM) left behind is put right first.

Runs under the host lock before anything else reads or writes the data directory. Each transcript is
opened (which moves a torn last line aside); a run left open, one with a message (a person's or a
peer's) or run events after the last `ended`, is closed with `error` ("the host stopped"), so the next
turn never sees the unanswered message as still in flight. Temporaries of interrupted atomic writes in
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

__all__ = ["HOST_STOPPED", "Recovered", "close_open_run", "recover_data_dir"]

logger = logging.getLogger(__name__)

HOST_STOPPED = "the host stopped"
"""The error of a run that the host's death left open."""


@dataclass(slots=True)
class Recovered:
    closed_runs: dict[str, str] = field(default_factory=dict)
    """transcript path (relative to the data dir) → the id of the run closed in it."""
    temps_removed: int = 0


def close_open_run(transcript: Transcript) -> str | None:
    """Close the run the transcript leaves open, if any.

    Returns:
        The id of the closed run (a new one when only the person's message was written), or None.

    Raises:
        StorageError: the `ended` line could not be written.
    """
    ended_run: str | None = None
    open_run: str | None = None
    unanswered = False
    for event in transcript.read_backwards():
        kind = event.get("type")
        if kind == "ended":
            ended_run = event.get("runId")
            break
        if kind in ("user", "wake"):  # a message is written when its run starts: this one's never ended
            unanswered = True
        run_id = event.get("runId")
        if isinstance(run_id, str) and open_run is None:
            open_run = run_id
    if open_run == ended_run:
        open_run = None  # a line of the run that just ended, written after its end (a cancel mid-preparation)
    if open_run is None and not unanswered:
        return None
    run_id = open_run or f"run-{uuid.uuid4().hex[:12]}"
    transcript.append(RunEndedEvent(run_id=run_id, reason="error", error=HOST_STOPPED).model_dump(mode="json"))
    return run_id


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
            run_id = close_open_run(Transcript(path))
        except (JsonRpcError, OSError) as exc:  # a full disk: the host still starts; the run is closed next time
            logger.error("could not close the open run of %s: %s", who, exc)
            continue
        if run_id is not None:
            recovered.closed_runs[str(path.relative_to(data_dir))] = run_id
            logger.warning("%s: run %s was left open when the host stopped; closed it", who, run_id)
    return recovered
