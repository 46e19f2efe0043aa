"""Carrying an agent: export its profile, settings, transcript and ledger as one signed archive; import one.

Export carries what is committed and nothing derived, secret or erased, signed with the installation's key;
the agent's knowledge (its documents' chunks, no vectors) only when the person asks for it.
Import runs in a worker thread (the host answers its other clients meanwhile), builds the agent in a hidden
staging directory and renames it into place. An archive this installation did not sign brings its facts as
proposals; whatever its settings would grant waits in `requested-settings.json` until a person adopts it
through `agent.update`'s checks.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import re
import secrets
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from host.agent_service import AgentService
from host.archive_grants import adopt_patch, split_settings
from host.errors import ConflictError, CorruptFileError, NotFoundError
from host.foreign_memory import propose_facts
from host.knowledge import KnowledgeHub, Owner
from host.knowledge.carry import CarriedKnowledgeError, dump_knowledge, load_knowledge
from host.knowledge.store import INDEX_FILE
from host.memory.hub import MemoryHub
from host.memory.ledger import Ledger
from host.memory.records import format_instant
from host.store.agents import AgentStore
from host.store.archive import (
    KNOWLEDGE,
    LEDGER,
    TRANSCRIPT,
    AgentArchive,
    ArchiveError,
    pack_archive,
    read_archive,
    signature_problem,
)
from host.store.atomic import create_bytes_atomic, read_json, write_json_atomic
from host.store.durable import fsync_dir
from host.store.signing import SigningKey
from host.store.transcript import utc_now
from protocol.ids import AGENT_ID_PATTERN
from protocol.models.agents import AgentInfo, AgentSettings
from protocol.models.archive import AgentExportResult, SettingsGrant

__all__ = ["REQUESTED_SETTINGS", "ArchiveService", "ImportDone"]

logger = logging.getLogger(__name__)

REQUESTED_SETTINGS = "requested-settings.json"
"""In an imported agent's directory: the grants its archive asked for that no person has adopted yet."""


def _transcript_lines(events: list[dict[str, object]]) -> bytes:
    lines = []
    for event in events:
        if event.get("type") == "context":
            event = {k: v for k, v in event.items() if k != "recall"}  # recall text is derived, never carried
        lines.append(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
    return "".join(lines).encode("utf-8")


@dataclass(frozen=True, slots=True)
class ImportDone:
    """What an import made: the agent's id, its counts, whether its memory kept its trust, what waits."""

    agent_id: str
    records: int
    events: int
    signed: bool
    reason: str | None
    proposed: int
    left_out: int
    requested: tuple[SettingsGrant, ...]


class ArchiveService:
    """Export and import of whole agents, and adopting what an imported archive's settings asked for.

    Args:
        store: the agents.
        hub: their memories.
        key: this installation's signing key.
        agents: changes and announces an agent's settings (with the checks of `agent.update`).
        knowledge: the knowledge bases (None: an archive's knowledge is neither written nor taken).
    """

    def __init__(
        self,
        store: AgentStore,
        hub: MemoryHub,
        key: SigningKey,
        agents: AgentService,
        knowledge: KnowledgeHub | None = None,
    ) -> None:
        self._store = store
        self._hub = hub
        self._key = key
        self._agents = agents
        self._knowledge = knowledge
        self._adopting = asyncio.Lock()

    async def export(self, agent_id: str, path: Path, with_knowledge: bool = False) -> AgentExportResult:
        """Write the agent's signed archive to `path` (mode 0600), which must not exist yet; with its knowledge
        only when `with_knowledge`.

        Raises:
            NotFoundError: no such agent.
            ConflictError: `path` exists.
            ArchiveError: the agent is larger than an archive carries.
        """
        agent = self._store.get(agent_id)
        memory = self._hub.get(agent_id)
        ledger = memory.committed_ledger()
        events = self._store.transcript(agent_id).read_all()
        files = {
            "profile.json": (agent.directory / "profile.json").read_bytes(),
            "settings.json": (agent.directory / "settings.json").read_bytes(),
            TRANSCRIPT: _transcript_lines(events),
            LEDGER: ledger,
        }
        manifest = {
            "agentId": agent_id,
            "name": agent.name,
            "exportedAt": datetime.now(UTC).isoformat(),
            "records": memory.last_seq,
            "events": len(events),
        }
        target = path.expanduser().resolve()

        index = Owner("agent", agent_id).directory(self._store.agents_dir.parent) / INDEX_FILE

        def write() -> int:
            if with_knowledge and index.exists():
                files[KNOWLEDGE] = dump_knowledge(index)
            data = pack_archive(manifest, files, self._key.sign)
            if not create_bytes_atomic(target, data, mode=0o600):
                raise ConflictError(f"{target} exists; the archive is never written over a file")
            return len(data)

        size = await asyncio.to_thread(write)  # compressing and signing a large agent never stalls the host
        return AgentExportResult(path=str(target), bytes=size, records=memory.last_seq, events=len(events))

    async def import_archive(self, path: Path, agent_id: str | None) -> ImportDone:
        """Make an agent of the archive at `path`, in a worker thread; then open its memory.

        Raises:
            ArchiveError: unreadable, unsafe, oversized or incomplete archive; TamperedArchiveError names the bad
                record.
            ConflictError: an agent with that id exists.
            StorageError: the disk refused the new agent's files.
        """
        staging = self._store.agents_dir / f".import-{secrets.token_hex(6)}"
        staging.mkdir(parents=True, mode=0o700)
        try:
            done = await asyncio.to_thread(self._build, path, agent_id, staging)
        finally:
            await asyncio.to_thread(shutil.rmtree, staging, True)
        self._store.get(done.agent_id)  # the settings must read as agent settings
        self._hub.get(done.agent_id)  # opening rebuilds the index and renders MEMORY.md: it answers at once
        if self._knowledge is not None:
            await self._knowledge.activate(Owner("agent", done.agent_id))  # its vectors are computed here
        return done

    def _build(self, path: Path, agent_id: str | None, staging: Path) -> ImportDone:
        archive = read_archive(path, staging)
        try:
            requested = AgentSettings.model_validate(archive.settings)
        except ValidationError as exc:
            raise ArchiveError("the archive's settings are not valid agent settings") from exc
        target_id = agent_id or str(archive.manifest.get("agentId") or "")
        if not re.match(AGENT_ID_PATTERN, target_id):
            raise ArchiveError(f"the archive names no usable agent id ({target_id!r}); give one")
        target = self._store.agents_dir / target_id
        if target.exists():
            raise ConflictError(f"an agent with id {target_id!r} already exists; import it under another id")
        reason = signature_problem(archive, self._key.check)
        safe, grants = split_settings(requested)
        for sub in ("memory", "scratch"):
            (staging / sub).mkdir()
        if archive.knowledge_file is not None:
            if self._knowledge is not None:
                try:
                    load_knowledge(archive.knowledge_file, staging / "knowledge", self._knowledge.refusal)
                except CarriedKnowledgeError as exc:
                    raise ArchiveError(f"the archive's knowledge is not valid ({exc}); nothing was imported") from exc
            archive.knowledge_file.unlink()
        proposed = left_out = 0
        if reason is None:
            os.rename(archive.ledger_file, _ledger_path(staging))
            _fsync(_ledger_path(staging))
        else:
            proposed, left_out = self._propose(archive, reason, staging)
            logger.info("import of %s: not signed by this installation (%s); facts proposed", target_id, reason)
        profile = {"agentId": target_id, "name": _name(archive, target_id), "createdAt": _created_at(archive)}
        create_bytes_atomic(staging / "profile.json", _json_bytes(profile), mode=0o600)
        create_bytes_atomic(staging / "settings.json", _json_bytes(safe.model_dump(mode="json")), mode=0o600)
        if grants:
            create_bytes_atomic(staging / REQUESTED_SETTINGS, _json_bytes(_grants_json(grants)), mode=0o600)
        try:
            os.rename(staging, target)  # fails when the id was taken meanwhile
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                raise ConflictError(f"an agent with id {target_id!r} already exists") from exc
            raise
        fsync_dir(self._store.agents_dir)
        records = len(archive.records) if reason is None else proposed
        return ImportDone(target_id, records, archive.events, reason is None, reason, proposed, left_out, tuple(grants))

    def _propose(self, archive: AgentArchive, reason: str, staging: Path) -> tuple[int, int]:
        """Write the proposals for an archive this installation did not sign as the new agent's ledger."""
        proposals = propose_facts(archive.records, reason, format_instant(datetime.now(UTC)))
        for problem in proposals.problems:
            logger.info("import: a fact of the archive was not carried: %s", problem)
        archive.ledger_file.unlink()
        ledger = Ledger(_ledger_path(staging))
        try:
            ledger.advance(ledger.write(proposals.drafts))
        finally:
            ledger.close()
        return len(proposals.drafts), proposals.left_out

    async def adopt(
        self, agent_id: str, grant_ids: list[str]
    ) -> tuple[AgentInfo, list[SettingsGrant], list[SettingsGrant]]:
        """Put in effect the grants `grant_ids` that the agent's archive asked for; returns (agent, adopted, pending).

        With no ids nothing changes and what waits is returned. The change goes through `agent.update`'s checks;
        when they refuse it, nothing is adopted.

        Raises:
            NotFoundError: no such agent, or no grant of that id waits.
            InvalidRequestError: the settings the grants make cannot work (an MCP server's program or secret is
                missing).
        """
        async with self._adopting:
            agent = self._store.get(agent_id)
            pending = _read_grants(agent.directory / REQUESTED_SETTINGS)
            waiting = {grant.id for grant in pending}
            unknown = sorted(set(grant_ids) - waiting)
            if unknown:
                raise NotFoundError(
                    f"no grant {', '.join(unknown)} waits for {agent_id}"
                    + (f" (waiting: {', '.join(sorted(waiting))})" if waiting else " (none waits)")
                )
            chosen = [grant for grant in pending if grant.id in grant_ids]
            if not chosen:
                return self._agents.get(agent_id), [], pending
            info = await self._agents.update(agent_id, None, adopt_patch(agent.settings, chosen))
            rest = [grant for grant in pending if grant.id not in grant_ids]
            if rest:
                write_json_atomic(agent.directory / REQUESTED_SETTINGS, _grants_json(rest))
            else:
                (agent.directory / REQUESTED_SETTINGS).unlink(missing_ok=True)
            logger.info("%s: adopted %s from its archive's settings", agent_id, ", ".join(g.id for g in chosen))
            return info, chosen, rest


def _ledger_path(staging: Path) -> Path:
    return staging / "memory" / "ledger.jsonl"


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _grants_json(grants: list[SettingsGrant]) -> dict[str, Any]:
    return {"version": 1, "grants": [grant.model_dump(mode="json", exclude_none=True) for grant in grants]}


def _read_grants(path: Path) -> list[SettingsGrant]:
    value = read_json(path, default={})
    try:
        return [SettingsGrant.model_validate(grant) for grant in value.get("grants") or []]
    except (AttributeError, TypeError, ValidationError):
        raise CorruptFileError(f"{path} does not hold requested settings", data={"path": str(path)}) from None


def _name(archive: AgentArchive, fallback: str) -> str:
    for name in (archive.profile.get("name"), archive.manifest.get("name")):
        if isinstance(name, str) and 0 < len(name.strip()) <= 200:
            return name.strip()
    return fallback


def _created_at(archive: AgentArchive) -> str:
    value = archive.profile.get("createdAt")
    return value if isinstance(value, str) and 0 < len(value) <= 64 else utc_now()
