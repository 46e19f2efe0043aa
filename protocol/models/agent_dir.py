"""Wire models for the read-only views of an agent's directory: its files, one file, and an inspection.

A shell never reads an agent's directory itself; it asks the host, which confines every path to that
agent's own directory and never follows a symlink. Nothing here writes.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from protocol.ids import AGENT_ID_PATTERN
from protocol.models.agents import AgentRef
from protocol.models.base import Params, WireModel
from protocol.models.kernel import ShellAvailability

__all__ = [
    "AGENT_DIR_METHODS",
    "AgentFileEntry",
    "AgentFilesParams",
    "AgentFilesResult",
    "AgentInspectResult",
    "AgentReadFileParams",
    "AgentReadFileResult",
    "SandboxRoots",
]

AgentId = Annotated[str, Field(pattern=AGENT_ID_PATTERN)]
RelativePath = Annotated[str, Field(max_length=1000, description="A path relative to the agent's directory.")]


class AgentFilesParams(Params):
    agent_id: AgentId
    path: RelativePath = ""


class AgentFileEntry(WireModel):
    """One entry, described without following it: a symlink is shown as one, never entered."""

    name: str
    path: str
    kind: Literal["file", "dir", "symlink", "other"]
    size: int = 0


class AgentFilesResult(WireModel):
    path: str
    entries: list[AgentFileEntry]


class AgentReadFileParams(Params):
    agent_id: AgentId
    path: Annotated[str, Field(min_length=1, max_length=1000)]
    max_bytes: Annotated[int, Field(ge=1, le=4 * 1024 * 1024)] = 256 * 1024


class AgentReadFileResult(WireModel):
    """`text` is the file's first `maxBytes` as UTF-8; a file that is not text has `binary` and no `text`."""

    path: str
    size: int
    text: str | None = None
    truncated: bool = False
    binary: bool = False


class SandboxRoots(WireModel):
    """What the agent's direct runs may reach: `workspace` read-write, `readOnly` read only, nothing else of
    the data dir; `permission` says what happens to actions that need a person's yes."""

    workspace: str
    read_only: list[str]
    permission: Literal["ask", "always", "never"]
    network: bool
    shell: ShellAvailability | None = None


class AgentInspectResult(WireModel):
    agent_id: str
    dir: str
    prompt_epoch: int | None = None
    prompt_epoch_reason: str | None = None
    transcript_events: int
    sandbox: SandboxRoots


AGENT_DIR_METHODS: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "agent.files": (AgentFilesParams, AgentFilesResult),
    "agent.readFile": (AgentReadFileParams, AgentReadFileResult),
    "agent.inspect": (AgentRef, AgentInspectResult),
}
