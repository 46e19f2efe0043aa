"""The agent store: one directory per agent under `<data>/agents/<agentId>/`.

`profile.json` (name, creation time) and `settings.json` (model, memory switch, tool permission) are
written atomically. A deleted agent's directory moves to `<data>/trash/`, so deleting loses nothing a
person could want back. Each agent's `Transcript` is opened once and kept.
"""

from __future__ import annotations

import logging
import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from host.errors import ConflictError, CorruptFileError, NotFoundError
from host.store.atomic import read_json, write_json_atomic
from host.store.transcript import Transcript, utc_now
from protocol.ids import AGENT_ID_PATTERN
from protocol.models.agents import AgentSettings, AgentSettingsPatch

__all__ = ["Agent", "AgentStore", "slugify", "apply_settings_patch"]

logger = logging.getLogger(__name__)

_ID_RE = re.compile(AGENT_ID_PATTERN)


@dataclass(frozen=True, slots=True)
class Agent:
    agent_id: str
    name: str
    created_at: str
    settings: AgentSettings
    directory: Path


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

    def directory(self, agent_id: str) -> Path:
        if not _ID_RE.match(agent_id):
            raise NotFoundError(f"no agent {agent_id!r}")
        return self.agents_dir / agent_id

    def exists(self, agent_id: str) -> bool:
        return _ID_RE.match(agent_id) is not None and (self.agents_dir / agent_id / "profile.json").is_file()

    def create(self, name: str, agent_id: str | None, settings: AgentSettings) -> Agent:
        """Create an agent's directory and files.

        Raises:
            ConflictError: `agent_id` was given and is taken.
        """
        if agent_id is None:
            base = slugify(name)
            agent_id, n = base, 1
            while (self.agents_dir / agent_id).exists():
                n += 1
                agent_id = f"{base}-{n}"
        elif (self.agents_dir / agent_id).exists():
            raise ConflictError(f"an agent with id {agent_id!r} already exists")
        directory = self.agents_dir / agent_id
        for sub in ("", "memory", "scratch"):
            (directory / sub).mkdir(parents=True, exist_ok=True)
        created_at = utc_now()
        write_json_atomic(directory / "settings.json", settings.model_dump(mode="json"))
        write_json_atomic(directory / "profile.json", {"agentId": agent_id, "name": name, "createdAt": created_at})
        return Agent(agent_id, name, created_at, settings, directory)

    def get(self, agent_id: str) -> Agent:
        """Raises: NotFoundError when there is no such agent; CorruptFileError for an unreadable file."""
        directory = self.directory(agent_id)
        profile = read_json(directory / "profile.json")
        if not isinstance(profile, dict):
            raise NotFoundError(f"no agent {agent_id!r}")
        raw_settings = read_json(directory / "settings.json", {})
        try:
            settings = AgentSettings.model_validate(raw_settings)
        except ValidationError as exc:
            raise CorruptFileError(f"{directory / 'settings.json'} does not hold valid agent settings") from exc
        return Agent(
            agent_id, str(profile.get("name", agent_id)), str(profile.get("createdAt", "")), settings, directory
        )

    def list(self) -> list[Agent]:
        """Every agent that can be read; one with a corrupt file is logged and left out (`get` names the file)."""
        agents = []
        for child in sorted(self.agents_dir.iterdir()):
            if not self.exists(child.name):
                continue
            try:
                agents.append(self.get(child.name))
            except CorruptFileError as exc:
                logger.error("agent %s is left out of the list: %s", child.name, exc.message)
        return agents

    def update(self, agent_id: str, name: str | None, patch: AgentSettingsPatch | None) -> Agent:
        agent = self.get(agent_id)
        settings = apply_settings_patch(agent.settings, patch)
        if patch is not None:
            write_json_atomic(agent.directory / "settings.json", settings.model_dump(mode="json"))
        if name is not None and name != agent.name:
            write_json_atomic(
                agent.directory / "profile.json", {"agentId": agent_id, "name": name, "createdAt": agent.created_at}
            )
        return Agent(agent_id, name or agent.name, agent.created_at, settings, agent.directory)

    def delete(self, agent_id: str) -> None:
        """Move the agent's directory to the trash.

        Raises:
            NotFoundError: no such agent.
        """
        agent = self.get(agent_id)
        self._transcripts.pop(agent_id, None)
        self.trash_dir.mkdir(exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        shutil.move(agent.directory, self.trash_dir / f"{agent_id}-{stamp}")

    def transcript(self, agent_id: str) -> Transcript:
        transcript = self._transcripts.get(agent_id)
        if transcript is None:
            transcript = Transcript(self.get(agent_id).directory / "transcript.jsonl")
            self._transcripts[agent_id] = transcript
        return transcript
