"""Which agent an ACP session is, and the project it was opened on.

A session's id is its agent's id: an agent is one persistent conversation, so every editor session of it shows
and continues that conversation, and `session/load` of the id in a later process finds it again. `hearth acp
AGENT` pins the agent; without one, the session's title (`_meta.title` from the editor, else the name of its
`cwd` folder) names the agent, which is created when there is none. The `cwd` becomes the run's project root,
which may neither hold Hearth's data directory nor lie inside it (the host checks the same again).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.acp.errors import refused_folder, unknown_agent
from desktop.acp.host_link import HostLink
from desktop.names import match_agent
from protocol.ids import AGENT_ID_PATTERN
from protocol.models.agents import AgentInfo, AgentListResult
from protocol.project_root import project_root_refusal

__all__ = [
    "DEFAULT_TITLE",
    "Session",
    "existing_agent",
    "find_agent",
    "open_agent",
    "project_root_for",
    "session_title",
]

DEFAULT_TITLE = "assistant"


@dataclass(slots=True)
class Session:
    """One open session of this process. `notices` are told to the person before the next reply."""

    agent: AgentInfo
    cwd: str
    project_root: str
    notices: list[str] = field(default_factory=list)
    told_project: bool = False
    runs: list[str] = field(default_factory=list)
    """The session's runs not yet ended (a second prompt to a busy agent waits behind the first)."""
    cancelled: bool = False

    @property
    def session_id(self) -> str:
        return self.agent.agent_id


def project_root_for(cwd: str, data_dir: Path) -> str:
    """The canonical project root a session's `cwd` gives (`protocol.project_root`'s rule, as the host's).

    Raises:
        RequestError: INVALID_PARAMS, with `data.fix`, for a relative or missing folder, `/`, a system tree, a
            folder such as `/home` or `/tmp` itself, the person's home, or one overlapping the data dir.
    """
    if not cwd.startswith("/") or "\x00" in cwd:
        raise refused_folder(cwd, f"cwd must be an absolute path, not {cwd!r}")
    root = os.path.realpath(cwd)
    if not os.path.isdir(root):
        raise refused_folder(cwd, f"the session's folder {cwd} is not a directory")
    home = os.path.realpath(os.path.expanduser("~"))
    refusal = project_root_refusal(root, data_dir=os.path.realpath(data_dir), home=home)
    if refusal is not None:
        raise refused_folder(cwd, refusal)
    return root


def session_title(cwd: str, meta: dict[str, Any]) -> str:
    """The title that names a session's agent when none is pinned."""
    given = meta.get("title")
    if isinstance(given, str) and given.strip():
        return given.strip()[:200]
    return os.path.basename(os.path.realpath(cwd).rstrip("/")) or DEFAULT_TITLE


async def _agents(link: HostLink) -> list[AgentInfo]:
    return (await link.call("agent.list", {}, AgentListResult)).agents


async def find_agent(link: HostLink, name: str) -> AgentInfo | None:
    """The agent `name` names, by id or by name in any case, as every `hearth` command finds it.

    Raises:
        JsonRpcError: CONFLICT when two agents carry that name.
    """
    return match_agent(await _agents(link), name)


async def open_agent(link: HostLink, *, pinned: str | None, title: str) -> AgentInfo:
    """The agent of a new session: the pinned one (which must exist), else the one `title` names, made if missing.

    Raises:
        RequestError: NOT_FOUND when the pinned agent does not exist.
        JsonRpcError: the host refused (the agent could not be created).
    """
    if pinned is not None:
        agent = await find_agent(link, pinned)
        if agent is None:
            raise unknown_agent(pinned, [a.agent_id for a in await _agents(link)])
        return agent
    agent = await find_agent(link, title)
    if agent is not None:
        return agent
    params: dict[str, Any] = {"name": title}
    if re.match(AGENT_ID_PATTERN, title):
        params["agentId"] = title
    return await link.call("agent.create", params, AgentInfo)


async def existing_agent(link: HostLink, session_id: str) -> AgentInfo:
    """The agent a loaded session names (its id, or its name in any case).

    Raises:
        RequestError: NOT_FOUND when there is no such agent.
    """
    agent = await find_agent(link, session_id)
    if agent is None:
        raise unknown_agent(session_id, [a.agent_id for a in await _agents(link)])
    return agent
