"""Carrying an agent: export its profile, settings, transcript and ledger as one archive; import one.

Export reads what is committed (the ledger up to its last acknowledged record, every complete transcript
line) and drops what is derived or not the agent's to carry: secrets, the index, MEMORY.md, the prompt
cache, the approvals, and the recall text that versions before this one kept in `context` events. An erase
has already removed its text from the ledger, so no part of the archive holds it. Import checks every
member and the ledger's hash chain first, builds the agent in a hidden staging directory, renames it into
place, and opens its memory at once, which rebuilds the index and renders MEMORY.md.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import shutil
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from host.errors import ConflictError
from host.memory.hub import MemoryHub
from host.store.agents import AgentStore
from host.store.archive import ArchiveError, pack_archive, unpack_archive
from host.store.atomic import create_bytes_atomic, fsync_dir
from protocol.ids import AGENT_ID_PATTERN
from protocol.models.agents import AgentSettings
from protocol.models.archive import AgentExportResult

__all__ = ["ArchiveService"]


def _transcript_lines(events: list[dict[str, object]]) -> bytes:
    lines = []
    for event in events:
        if event.get("type") == "context":
            event = {k: v for k, v in event.items() if k != "recall"}  # recall text is derived, never carried
        lines.append(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
    return "".join(lines).encode("utf-8")


class ArchiveService:
    """Export and import of whole agents.

    Args:
        store: the agents.
        hub: their memories.
    """

    def __init__(self, store: AgentStore, hub: MemoryHub) -> None:
        self._store = store
        self._hub = hub

    def export(self, agent_id: str, path: Path) -> AgentExportResult:
        """Write the agent's archive to `path` (mode 0600), which must not exist yet.

        Raises:
            NotFoundError: no such agent.
            ConflictError: `path` exists.
        """
        agent = self._store.get(agent_id)
        memory = self._hub.get(agent_id)
        ledger = memory.committed_ledger()
        events = self._store.transcript(agent_id).read_all()
        files = {
            "profile.json": (agent.directory / "profile.json").read_bytes(),
            "settings.json": (agent.directory / "settings.json").read_bytes(),
            "transcript.jsonl": _transcript_lines(events),
            "memory/ledger.jsonl": ledger,
        }
        manifest = {
            "agentId": agent_id,
            "name": agent.name,
            "exportedAt": datetime.now(UTC).isoformat(),
            "records": memory.last_seq,
            "events": len(events),
        }
        data = pack_archive(manifest, files)
        path = path.expanduser().resolve()
        if not create_bytes_atomic(path, data, mode=0o600):
            raise ConflictError(f"{path} exists; the archive is never written over a file")
        return AgentExportResult(path=str(path), bytes=len(data), records=memory.last_seq, events=len(events))

    def import_archive(self, path: Path, agent_id: str | None) -> tuple[str, int, int]:
        """Make an agent of the archive at `path`; returns (agent id, records, events).

        Raises:
            ArchiveError: unreadable, unsafe or incomplete archive; TamperedArchiveError names the bad record.
            ConflictError: an agent with that id exists.
        """
        try:
            data = path.expanduser().read_bytes()
        except OSError as exc:
            raise ArchiveError(f"{path} cannot be read: {exc.strerror or exc}") from exc
        archive = unpack_archive(data)
        try:
            AgentSettings.model_validate(json.loads(archive.files["settings.json"]))
        except ValidationError as exc:
            raise ArchiveError("the archive's settings are not valid agent settings") from exc
        target_id = agent_id or str(archive.manifest.get("agentId") or "")
        if not _valid_id(target_id):
            raise ArchiveError(f"the archive names no usable agent id ({target_id!r}); give one")
        target = self._store.agents_dir / target_id
        if target.exists():
            raise ConflictError(f"an agent with id {target_id!r} already exists; import it under another id")
        staging = self._store.agents_dir / f".import-{secrets.token_hex(6)}"
        try:
            for sub in ("memory", "scratch"):
                (staging / sub).mkdir(parents=True)
            profile = json.loads(archive.files["profile.json"])
            profile["agentId"] = target_id
            files = {
                "profile.json": (json.dumps(profile, ensure_ascii=False, indent=2) + "\n").encode("utf-8"),
                "settings.json": archive.files["settings.json"],
                "transcript.jsonl": archive.files["transcript.jsonl"],
                "memory/ledger.jsonl": archive.files["memory/ledger.jsonl"],
            }
            for name, content in files.items():
                create_bytes_atomic(staging / name, content, mode=0o600)
            os.rename(staging, target)  # fails when the id was taken meanwhile
            fsync_dir(self._store.agents_dir)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                raise ConflictError(f"an agent with id {target_id!r} already exists") from exc
            raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        self._store.get(target_id)  # the settings must read as agent settings
        self._hub.get(target_id)  # opening rebuilds the index and renders MEMORY.md: it answers at once
        return target_id, archive.records, archive.events


def _valid_id(agent_id: str) -> bool:
    return re.match(AGENT_ID_PATTERN, agent_id) is not None
