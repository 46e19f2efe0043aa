"""Read-only views of one agent's directory for a shell: list a folder, read a file, inspect the agent.

Every path is relative to `<data>/agents/<id>/` and stays inside it: absolute paths, `..` and NUL are
refused, and the sandbox's safe openers walk the path without following any symlink, so a link an agent
planted in its scratch cannot show a person (or a shell) a file from elsewhere. Nothing here writes.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from pathlib import Path

from host.errors import InvalidRequestError, NotFoundError
from host.prompt.cache import load_frozen
from host.store.agents import AgentStore
from protocol.models.agent_dir import (
    AgentFileEntry,
    AgentFilesResult,
    AgentInspectResult,
    AgentReadFileResult,
    SandboxRoots,
)
from protocol.models.kernel import ShellAvailability
from sandbox import UnsafeFileError, build_policy, list_entries, open_read, opened

__all__ = ["AgentDirectory"]


class AgentDirectory:
    """Args:
    store: the agent store (which agents exist, and where).
    shell: the kernel's shell availability, when the kernel has told it.
    """

    def __init__(self, store: AgentStore, shell: Callable[[], ShellAvailability | None]) -> None:
        self._store = store
        self._shell = shell

    def _root(self, agent_id: str) -> str:
        self._store.get(agent_id)
        return os.path.realpath(self._store.agents_dir / agent_id)

    def _resolve(self, agent_id: str, relative: str) -> tuple[str, str]:
        """(canonical path, normalised relative path) of `relative` inside the agent's directory.

        Raises:
            NotFoundError: no such agent.
            InvalidRequestError: the path is absolute, climbs out, or holds NUL.
        """
        root = self._root(agent_id)
        if "\x00" in relative or relative.startswith("/") or ".." in relative.split("/"):
            raise InvalidRequestError(f"{relative!r} is not a path inside the agent's directory")
        clean = posixpath.normpath(relative) if relative else "."
        return (root if clean == "." else f"{root}/{clean}"), ("" if clean == "." else clean)

    def files(self, agent_id: str, relative: str) -> AgentFilesResult:
        """The entries of one folder of the agent's directory.

        Raises:
            NotFoundError: no such agent or folder.
            InvalidRequestError: a bad path, or a symlink on the way.
        """
        path, clean = self._resolve(agent_id, relative)
        try:
            entries = list_entries(path)
        except UnsafeFileError as exc:
            raise InvalidRequestError(str(exc)) from exc
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise NotFoundError(f"no folder {clean or '.'!r} in agent {agent_id!r}") from exc
        return AgentFilesResult(
            path=clean,
            entries=[
                AgentFileEntry(name=e.name, path=posixpath.join(clean, e.name), kind=e.kind, size=e.size)
                for e in entries
            ],
        )

    def read(self, agent_id: str, relative: str, max_bytes: int) -> AgentReadFileResult:
        """The first `max_bytes` of one file, as text when it is UTF-8.

        Raises:
            NotFoundError: no such agent or file.
            InvalidRequestError: a bad path, a folder, or a symlink or special file on the way.
        """
        path, clean = self._resolve(agent_id, relative)
        try:
            fd = open_read(path)
        except UnsafeFileError as exc:
            raise InvalidRequestError(str(exc)) from exc
        except IsADirectoryError as exc:
            raise InvalidRequestError(f"{clean!r} is a folder; list it with agent.files") from exc
        except FileNotFoundError as exc:
            raise NotFoundError(f"no file {clean!r} in agent {agent_id!r}") from exc
        with opened(fd):
            size = os.fstat(fd).st_size
            data = os.read(fd, max_bytes)
        truncated = size > len(data)
        try:
            # A cut may split a character; drop at most its first bytes rather than call the file binary.
            text = data.decode("utf-8") if not truncated else data.decode("utf-8", errors="ignore")
        except UnicodeDecodeError:
            return AgentReadFileResult(path=clean, size=size, binary=True, truncated=truncated)
        if "\x00" in text:
            return AgentReadFileResult(path=clean, size=size, binary=True, truncated=truncated)
        return AgentReadFileResult(path=clean, size=size, text=text, truncated=truncated)

    def inspect(self, agent_id: str) -> AgentInspectResult:
        """Where the agent lives, its prompt epoch, and what its runs may reach."""
        agent = self._store.get(agent_id)
        root = Path(self._root(agent_id))
        policy = build_policy(
            str(self._store.data_dir),
            agent_id,
            network=agent.settings.network,
            permission=agent.settings.tool_permission,
        )
        frozen = load_frozen(root)
        return AgentInspectResult(
            agent_id=agent_id,
            dir=str(root),
            prompt_epoch=frozen.epoch if frozen is not None else None,
            prompt_epoch_reason=(frozen.reason or None) if frozen is not None else None,
            transcript_events=self._store.transcript(agent_id).last_seq,
            sandbox=SandboxRoots(
                workspace=policy.workspace,
                read_only=[policy.memory_dir],
                permission=policy.permission,
                network=policy.network,
                shell=self._shell(),
            ),
        )
