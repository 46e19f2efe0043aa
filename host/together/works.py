"""Works on disk: one directory per Work under `<data>/works/<workId>/`.

`work.json` (name, description, members, task board) is rewritten atomically; `timeline.jsonl` is
append-only and fsynced (the transcript format: dense `seq`, torn tail set aside). `scratch/` holds the
Work's shared files, `memory/` its own memory (scope `work:<id>`), `members/<agentId>/` each member's
Work-run transcript and prompt cache. Nothing of a member's private directory is ever copied here. A
deleted Work moves to `<data>/trash/`.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from host.errors import ConflictError, CorruptFileError, NotFoundError
from host.store.agents import slugify
from host.store.atomic import read_json, write_json_atomic
from host.store.transcript import Transcript, utc_now
from host.together.board import Board, Handoff, Task
from protocol.ids import AGENT_ID_PATTERN

__all__ = ["Work", "WorkStore"]

_ID = re.compile(AGENT_ID_PATTERN)


@dataclass(frozen=True, slots=True)
class Work:
    work_id: str
    name: str
    description: str
    created_at: str
    members: tuple[str, ...]
    board: Board
    directory: Path


def _board_json(board: Board) -> dict[str, Any]:
    return {
        "revision": board.revision,
        "nextNumber": board.next_number,
        "tasks": [
            {
                "taskId": t.task_id,
                "title": t.title,
                "status": t.status,
                "assignee": t.assignee,
                "handoffs": [
                    {
                        "by": h.by,
                        "summary": h.summary,
                        "status": h.status,
                        "deliverables": list(h.deliverables),
                        "at": h.at,
                    }
                    for h in t.handoffs
                ],
            }
            for t in board.tasks
        ],
    }


def _board(raw: dict[str, Any]) -> Board:
    tasks = tuple(
        Task(
            str(t["taskId"]),
            str(t["title"]),
            str(t["status"]),
            t.get("assignee"),
            tuple(
                Handoff(str(h["by"]), str(h["summary"]), str(h["status"]), tuple(h["deliverables"]), str(h["at"]))
                for h in t.get("handoffs", [])
            ),
        )
        for t in raw.get("tasks", [])
    )
    return Board(int(raw.get("revision", 0)), tasks, int(raw.get("nextNumber", len(tasks) + 1)))


class WorkStore:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.works_dir = data_dir / "works"
        self.trash_dir = data_dir / "trash"
        self.works_dir.mkdir(parents=True, exist_ok=True)
        self._timelines: dict[str, Transcript] = {}
        self._transcripts: dict[tuple[str, str], Transcript] = {}

    def directory(self, work_id: str) -> Path:
        if not _ID.match(work_id):
            raise NotFoundError(f"no Work {work_id!r}")
        return self.works_dir / work_id

    def exists(self, work_id: str) -> bool:
        return _ID.match(work_id) is not None and (self.works_dir / work_id / "work.json").is_file()

    def create(self, name: str, work_id: str | None, description: str, members: tuple[str, ...]) -> Work:
        """Raises: ConflictError when `work_id` is taken."""
        if work_id is None:
            base = slugify(name)
            work_id, n = base, 1
            while (self.works_dir / work_id).exists():
                n += 1
                work_id = f"{base}-{n}"
        elif (self.works_dir / work_id).exists():
            raise ConflictError(f"a Work with id {work_id!r} already exists")
        directory = self.works_dir / work_id
        for sub in ("", "scratch", "memory", "members"):
            (directory / sub).mkdir(parents=True, exist_ok=True)
        work = Work(work_id, name, description, utc_now(), members, Board(), directory)
        self.save(work)
        return work

    def save(self, work: Work) -> None:
        value = {
            "workId": work.work_id,
            "name": work.name,
            "description": work.description,
            "createdAt": work.created_at,
            "members": list(work.members),
            "board": _board_json(work.board),
        }
        write_json_atomic(work.directory / "work.json", value)

    def get(self, work_id: str) -> Work:
        """Raises: NotFoundError; CorruptFileError for a `work.json` that does not hold a Work."""
        directory = self.directory(work_id)
        raw = read_json(directory / "work.json")
        if raw is None:
            raise NotFoundError(f"no Work {work_id!r}")
        try:
            return Work(
                work_id,
                str(raw["name"]),
                str(raw.get("description", "")),
                str(raw.get("createdAt", "")),
                tuple(str(m) for m in raw.get("members", [])),
                _board(raw.get("board", {})),
                directory,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptFileError(f"{directory / 'work.json'} does not hold a valid Work ({exc})") from exc

    def list(self) -> list[Work]:
        return [self.get(child.name) for child in sorted(self.works_dir.iterdir()) if self.exists(child.name)]

    def update(self, work: Work, **changes: Any) -> Work:
        changed = replace(work, **changes)
        self.save(changed)
        return changed

    def delete(self, work_id: str) -> None:
        work = self.get(work_id)
        self._timelines.pop(work_id, None)
        for key in [k for k in self._transcripts if k[0] == work_id]:
            del self._transcripts[key]
        self.trash_dir.mkdir(exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        shutil.move(work.directory, self.trash_dir / f"work-{work_id}-{stamp}")

    def timeline(self, work_id: str) -> Transcript:
        timeline = self._timelines.get(work_id)
        if timeline is None:
            timeline = Transcript(self.directory(work_id) / "timeline.jsonl")
            self._timelines[work_id] = timeline
        return timeline

    def member_dir(self, work_id: str, agent_id: str) -> Path:
        directory = self.directory(work_id) / "members" / agent_id
        directory.mkdir(parents=True, exist_ok=True)
        return directory

    def member_transcript(self, work_id: str, agent_id: str) -> Transcript:
        """The transcript of `agent_id`'s runs in this Work (never its private one)."""
        key = (work_id, agent_id)
        transcript = self._transcripts.get(key)
        if transcript is None:
            transcript = Transcript(self.member_dir(work_id, agent_id) / "transcript.jsonl")
            self._transcripts[key] = transcript
        return transcript
