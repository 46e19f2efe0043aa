"""The agent store: one directory per agent under `<data>/agents/<agentId>/`.

`profile.json` (name, creation time) and `settings.json` (model, memory switch, tool permission) are
written atomically. A deleted agent's directory moves to `<data>/trash/`, so deleting loses nothing a
person could want back. Each agent's `Transcript` is opened once and kept. A read agent is cached until
either file changes on disk (checked by `stat`, so a person's hand edit is seen at once). One agent's
unreadable file is an error for that agent alone: `scan` lists it as broken, beside the others.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from host.errors import ConflictError, CorruptFileError, NotFoundError
from host.store.atomic import read_json, write_json_atomic
from host.store.durable import fsync_dir, storage_errors
from host.store.transcript import Transcript, utc_now
from protocol.ids import AGENT_ID_PATTERN
from protocol.models.agents import AgentSettings, AgentSettingsPatch

__all__ = ["LISTING_FRESH_SECONDS", "Agent", "AgentStore", "BrokenAgent", "slugify", "apply_settings_patch"]

logger = logging.getLogger(__name__)

_ID_RE = re.compile(AGENT_ID_PATTERN)

LISTING_FRESH_SECONDS = 1.0
"""How long `AgentStore.list` may serve its last listing while nothing changed through the store."""


@dataclass(frozen=True, slots=True)
class Agent:
    agent_id: str
    name: str
    created_at: str
    settings: AgentSettings
    directory: Path


@dataclass(frozen=True, slots=True)
class BrokenAgent:
    """An agent whose profile or settings cannot be read: what could be read, and what is wrong."""

    agent_id: str
    name: str
    created_at: str
    settings: AgentSettings | None
    error: CorruptFileError


_Entries = list[Agent | BrokenAgent]

# (inode, size, mtime, ctime) of profile.json and settings.json; None for a missing file.
_FileStamp = tuple[int, int, int, int] | None
_Stamp = tuple[_FileStamp, _FileStamp]


def _file_stamp(path: str) -> _FileStamp:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read_profile(path: Path) -> dict[str, object]:
    profile = read_json(path)
    if not isinstance(profile, dict):
        raise CorruptFileError(
            f"{path} does not hold an agent profile (a JSON object with its name)", data={"path": str(path)}
        )
    return profile


def _read_settings(path: Path) -> AgentSettings:
    try:
        return AgentSettings.model_validate(read_json(path, {}))
    except ValidationError as exc:
        raise CorruptFileError(f"{path} does not hold valid agent settings", data={"path": str(path)}) from exc


def slugify(name: str) -> str:
    """A readable agent id from a display name: `Research Bot` → `research-bot`."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40].strip("-")
    return slug or "agent"


def apply_settings_patch(settings: AgentSettings, patch: AgentSettingsPatch | None) -> AgentSettings:
    if patch is None:
        return settings
    changes = patch.model_dump(exclude_none=True, by_alias=False)
    merged = settings.model_dump(by_alias=False)
    merged.update(changes)
    return AgentSettings.model_validate(merged)


class AgentStore:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.agents_dir = data_dir / "agents"
        self.trash_dir = data_dir / "trash"
        self.agents_dir.mkdir(parents=True, exist_ok=True)
        self._transcripts: dict[str, Transcript] = {}
        self._cache: dict[str, tuple[_Stamp, Agent]] = {}
        self._agents_path = str(self.agents_dir)
        self._generation = 0  # moves on with every create, update and delete made through this store
        self._listed: tuple[tuple[int, int], float, list[Agent]] | None = None

    def directory(self, agent_id: str) -> Path:
        if not _ID_RE.match(agent_id):
            raise NotFoundError(f"no agent {agent_id!r}")
        return self.agents_dir / agent_id

    def exists(self, agent_id: str) -> bool:
        return _ID_RE.match(agent_id) is not None and (self.agents_dir / agent_id / "profile.json").is_file()

    def create(self, name: str, agent_id: str | None, settings: AgentSettings) -> Agent:
        """Create an agent's directory and files (safe to call from several threads at once).

        Raises:
            ConflictError: `agent_id` was given and is taken.
            StorageError: the disk refused the new files.
        """
        base, n = agent_id or slugify(name), 1
        directory = self.agents_dir / base
        with storage_errors(self.agents_dir, "the new agent"):
            while True:
                try:
                    directory.mkdir()  # claims the id: of two creates racing for it, one gets the next
                    break
                except FileExistsError:
                    if agent_id is not None:
                        raise ConflictError(f"an agent with id {agent_id!r} already exists") from None
                    n += 1
                    directory = self.agents_dir / f"{base}-{n}"
            agent_id = directory.name
            for sub in ("memory", "scratch"):
                (directory / sub).mkdir(exist_ok=True)
            fsync_dir(self.agents_dir)
        created_at = utc_now()
        write_json_atomic(directory / "settings.json", settings.model_dump(mode="json"))
        write_json_atomic(directory / "profile.json", {"agentId": agent_id, "name": name, "createdAt": created_at})
        # Only now: a listing taken while the files were half there is keyed to the generation before.
        self._generation += 1
        return Agent(agent_id, name, created_at, settings, directory)

    def get(self, agent_id: str) -> Agent:
        """The agent as its files say now (cached while neither file changes).

        Raises:
            NotFoundError: there is no such agent.
            CorruptFileError: its profile or settings cannot be read; the message and `data.path` name the file.
        """
        directory = self.directory(agent_id)
        # Plain string paths: this runs for every agent of every roster, so pathlib's cost shows.
        base = os.path.join(self._agents_path, agent_id)
        stamp = (_file_stamp(os.path.join(base, "profile.json")), _file_stamp(os.path.join(base, "settings.json")))
        cached = self._cache.get(agent_id)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        if stamp[0] is None:
            raise NotFoundError(f"no agent {agent_id!r}")
        profile = _read_profile(directory / "profile.json")
        settings = _read_settings(directory / "settings.json")
        agent = Agent(
            agent_id, str(profile.get("name", agent_id)), str(profile.get("createdAt", "")), settings, directory
        )
        self._cache[agent_id] = (stamp, agent)
        return agent

    def scan(self) -> list[Agent | BrokenAgent]:
        """Every agent by id, each either readable or broken; one agent's bad file never hides another."""
        entries: _Entries = []
        with os.scandir(self.agents_dir) as children:
            names = sorted(child.name for child in children if child.is_dir() and _ID_RE.match(child.name))
        for name in names:
            try:
                entries.append(self.entry(name))
            except NotFoundError:
                continue  # not an agent (no profile), or deleted while we looked
        return entries

    def entry(self, agent_id: str) -> Agent | BrokenAgent:
        """The agent, or what could be read of it when one of its files is broken.

        Raises:
            NotFoundError: there is no such agent.
        """
        try:
            return self.get(agent_id)
        except CorruptFileError as exc:
            return self._broken(agent_id, exc)

    def list(self) -> list[Agent]:
        """Every agent that can be read; a broken one is logged and left out (`scan` lists it, `get` names it).

        Every turn lists the agents (for its teammate roster), so the listing is kept for up to
        `LISTING_FRESH_SECONDS` while no agent is created, changed or removed through this store and the
        agents directory itself is unchanged; a hand edit of a profile shows within that time.
        """
        key = (self._generation, os.stat(self._agents_path).st_mtime_ns)
        now = time.monotonic()
        if self._listed is not None and self._listed[0] == key and now - self._listed[1] < LISTING_FRESH_SECONDS:
            return list(self._listed[2])
        agents = []
        for entry in self.scan():
            if isinstance(entry, BrokenAgent):
                logger.error("agent %s is left out: %s", entry.agent_id, entry.error.message)
            else:
                agents.append(entry)
        self._listed = (key, now, agents)
        return list(agents)

    def _broken(self, agent_id: str, error: CorruptFileError) -> BrokenAgent:
        directory = self.agents_dir / agent_id
        name, created_at, settings = agent_id, "", None
        try:
            profile = _read_profile(directory / "profile.json")
            name, created_at = str(profile.get("name", agent_id)), str(profile.get("createdAt", ""))
        except CorruptFileError:
            pass
        try:
            settings = _read_settings(directory / "settings.json")
        except CorruptFileError:
            pass
        return BrokenAgent(agent_id, name, created_at, settings, error)

    def update(self, agent_id: str, name: str | None, patch: AgentSettingsPatch | None) -> Agent:
        agent = self.get(agent_id)
        settings = apply_settings_patch(agent.settings, patch)
        self._cache.pop(agent_id, None)
        if patch is not None:
            write_json_atomic(agent.directory / "settings.json", settings.model_dump(mode="json"))
        if name is not None and name != agent.name:
            write_json_atomic(
                agent.directory / "profile.json", {"agentId": agent_id, "name": name, "createdAt": agent.created_at}
            )
        self._generation += 1  # after the writes, as in `create`
        return Agent(agent_id, name or agent.name, agent.created_at, settings, agent.directory)

    def delete(self, agent_id: str) -> None:
        """Move the agent's directory to the trash.

        Raises:
            NotFoundError: no such agent.
        """
        agent = self.get(agent_id)
        self._transcripts.pop(agent_id, None)
        self._cache.pop(agent_id, None)
        self.trash_dir.mkdir(exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        shutil.move(agent.directory, self.trash_dir / f"{agent_id}-{stamp}")
        self._generation += 1  # after the move, as in `create`

    def transcript(self, agent_id: str) -> Transcript:
        """The agent's transcript, readable even when its profile or settings are not.

        Raises:
            NotFoundError: there is no such agent.
            StorageError: the transcript file could not be created.
        """
        transcript = self._transcripts.get(agent_id)
        if transcript is None:
            if not self.exists(agent_id):
                raise NotFoundError(f"no agent {agent_id!r}")
            transcript = Transcript(self.agents_dir / agent_id / "transcript.jsonl")
            self._transcripts[agent_id] = transcript
        return transcript
