"""The editor's MCP servers (`mcpServers` of session/new, load and resume), made the agent's own so that Hearth's
MCP policy governs them: started by the kernel in the agent's OS sandbox, every tool call approved like any tool.

A stdio server becomes one of the agent's `mcpServers` through `agent.update`, which checks it as it checks any
(a program not found, or one in the data dir, is refused and nothing is written). Its environment values are
stored as Hearth secrets scoped to the agent (`acp.<agent>.<server>.<var>`) and named in `secretEnv`, so no value
lands in the settings file and no session touches another agent's secrets. A server of that name already there is
kept as it is, with whatever secrets it names (an unscoped `acp-<server>-<var>` of an earlier version included:
that one is never written or deleted here again). HTTP and SSE servers are not run. Every outcome is a
notice the person reads before the next reply.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from typing import Any

from acp.schema import AcpMcpServer, HttpMcpServer, McpServerStdio, SseMcpServer

from desktop.acp.host_link import HostLink
from protocol.errors import ConnectionClosedError, JsonRpcError
from protocol.models.agents import AgentInfo
from protocol.models.mcp import ENV_NAME_PATTERN

__all__ = ["McpServer", "adopt_mcp_servers", "server_name", "secret_name"]

logger = logging.getLogger(__name__)

_SECRET_NAME_CHARS = 64

McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio


def server_name(name: str) -> str:
    """The editor's server name as a Hearth server name: one slug of at most 40 characters."""
    slug = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:40].strip("-")
    return slug or "server"


def secret_name(agent_id: str, server: str, variable: str) -> str:
    """Where the value of `variable` for `agent_id`'s `server` is stored: `acp.<agent>.<server>.<var>`.

    Scoped to the agent, so one agent's editor session can neither rewrite nor delete another's. No part holds a
    `.`, so no two (agent, server, variable) share a name; one past the 64 characters a secret name may have is
    `acp-<hash>.<its start>` (a `-` after `acp`, as no full name has, and unlike the unscoped `acp-<server>-<var>`
    of earlier versions, a `.`).
    """
    full = f"acp.{agent_id}.{server}.{variable.lower()}"
    if len(full) <= _SECRET_NAME_CHARS:
        return full
    digest = hashlib.sha256(full.encode("utf-8")).hexdigest()[:16]
    return f"acp-{digest}.{full[4:]}"[:_SECRET_NAME_CHARS]


def _settings(agent_id: str, name: str, server: McpServerStdio) -> tuple[dict[str, Any], dict[str, str]]:
    """The server's settings and the secrets (name → value) they name."""
    secrets = {secret_name(agent_id, name, var.name): var.value for var in server.env}
    secret_env = {var.name: secret_name(agent_id, name, var.name) for var in server.env}
    return {"name": name, "command": server.command, "args": list(server.args), "secretEnv": secret_env}, secrets


async def adopt_mcp_servers(link: HostLink, agent: AgentInfo, servers: Sequence[McpServer]) -> list[str]:
    """Make the editor's stdio servers the agent's own; returns what the person should be told.

    Raises:
        ConnectionClosedError: the host cannot be reached (every refusal is a notice instead).
    """
    notices: list[str] = []
    have = {server.name for server in agent.settings.mcp_servers}
    added: list[dict[str, Any]] = []
    secrets: dict[str, str] = {}
    for server in servers:
        if not isinstance(server, McpServerStdio):
            notices.append(f"[Hearth runs only local (stdio) MCP servers; {server.name} was not added.]")
            continue
        name = server_name(server.name)
        if name in have:
            continue
        bad = [var.name for var in server.env if not re.match(ENV_NAME_PATTERN, var.name)]
        if bad:
            notices.append(f"[The MCP server {server.name} was not added: bad variable names {', '.join(bad)}.]")
            continue
        settings, needed = _settings(agent.agent_id, name, server)
        added.append(settings)
        secrets.update(needed)
        have.add(name)
    if not added:
        return notices
    try:
        for secret, value in secrets.items():
            await link.call("secrets.set", {"name": secret, "value": value})
        current = [server.model_dump(mode="json", by_alias=True) for server in agent.settings.mcp_servers]
        patch = {"mcpServers": [*current, *added]}
        await link.call("agent.update", {"agentId": agent.agent_id, "settings": patch})
    except ConnectionClosedError:
        raise
    except JsonRpcError as exc:
        notices.append(f"[The editor's MCP servers were not added to {agent.name}: {exc.message}]")
        for secret in secrets:  # nothing of a refused server stays behind
            try:
                await link.call("secrets.delete", {"name": secret})
            except JsonRpcError as gone:
                logger.warning("could not delete the secret %s: %s", secret, gone.message)
        return notices
    names = ", ".join(settings["name"] for settings in added)
    notices.append(
        f"[Added the editor's MCP servers ({names}) to {agent.name}: they run in its sandbox, each tool call asks "
        f"first, and `hearth mcp remove {agent.agent_id} NAME` removes one.]"
    )
    return notices
