"""An agent's MCP servers on the host side: checked when a person writes them, resolved for each turn.

On write (agent create and update) every server's program must exist (a path, or a name on the host's PATH)
and must not live in the data dir (the kernel never runs a program an agent can write), and every secret its
`secretEnv` names must be stored. For a turn, each named secret is resolved from the host's store into the
spec the kernel gets; a secret deleted since the write is named in `missingSecrets` and that server is not
started. Secret values go into the spec only, never into a log line or an error.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from host.errors import InvalidRequestError
from host.store.secrets import SecretStore
from protocol.models.agents import AgentSettings
from protocol.models.mcp import McpServerSettings, McpServerSpec

__all__ = ["check_mcp_servers", "mcp_server_specs"]


def _program(command: str) -> str | None:
    if "/" in command:
        path = os.path.abspath(os.path.expanduser(command))
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return shutil.which(command)


def check_mcp_servers(settings: AgentSettings, secrets: SecretStore, data_dir: Path) -> None:
    """Refuse settings whose MCP servers could never start.

    Raises:
        InvalidRequestError: a program is missing or inside the data dir, or a named secret is not stored.
    """
    if not settings.mcp_servers:
        return
    stored = set(secrets.list())
    data = os.path.realpath(data_dir)
    for server in settings.mcp_servers:
        program = _program(server.command)
        if program is None:
            raise InvalidRequestError(
                f"MCP server {server.name!r}: the program {server.command!r} was not found (give a path, or a name "
                "on the host's PATH)"
            )
        real = os.path.realpath(program)
        if real == data or real.startswith(data + os.sep):
            raise InvalidRequestError(
                f"MCP server {server.name!r}: its program is inside Hearth's data dir, where agents can write"
            )
        missing = sorted(set(server.secret_env.values()) - stored)
        if missing:
            raise InvalidRequestError(
                f"MCP server {server.name!r}: secret(s) {', '.join(missing)} are not stored "
                "(store them first with `hearth secrets set NAME`)"
            )


def _spec(server: McpServerSettings, secrets: SecretStore) -> McpServerSpec:
    values: dict[str, str] = {}
    missing: list[str] = []
    for var, name in sorted(server.secret_env.items()):
        value = secrets.get(name)
        if value is None:
            missing.append(name)
        else:
            values[var] = value
    return McpServerSpec.model_validate(
        {
            "name": server.name,
            "command": _program(server.command) or server.command,
            "args": server.args,
            "env": server.env,
            "secretEnv": values,
            "tools": server.tools,
            "network": server.network,
            "missingSecrets": sorted(set(missing)),
        }
    )


def mcp_server_specs(settings: AgentSettings, secrets: SecretStore) -> list[McpServerSpec]:
    """The agent's MCP servers for one turn, with their secrets resolved from the host's store."""
    return [_spec(server, secrets) for server in settings.mcp_servers]
