"""An agent's MCP servers on the host side: checked when a person writes them, resolved for each turn.

On write (agent create and update) every server's command must resolve as the person's shell would run it (a
path, or a name on the host's PATH; a version manager's shim to the program it runs, see
`host.runs.mcp_program`), no part of the program's install tree may lie in the data dir (the kernel never
runs a program an agent can write), no loader variable may be in its `env` or `secretEnv`
(`sandbox.loader_vars`), and every secret its `secretEnv` names must be stored. For a turn, the command is
resolved again and each named secret is resolved from the host's store into the spec the kernel gets; a
secret deleted since the write is named in `missingSecrets` and that server is not started. Secret values go
into the spec only, never into a log line or an error.
"""

from __future__ import annotations

import os
from pathlib import Path

from host.errors import InvalidRequestError
from host.runs.mcp_program import Resolved, resolve_command
from host.store.secrets import SecretStore
from protocol.models.agents import AgentSettings
from protocol.models.mcp import McpServerSettings, McpServerSpec
from sandbox.loader_vars import refused_variables
from sandbox.mcp_sandbox import server_program_refusal

__all__ = ["check_mcp_servers", "mcp_server_specs"]


def _refusal(server: McpServerSettings, stored: set[str], data_dir: str) -> str | None:
    refused = refused_variables([*server.env.items(), *((var, None) for var in server.secret_env)])
    if refused:
        return f"these variables may not be given to a server: {'; '.join(refused)}"
    program = resolve_command(server.command)
    if not isinstance(program, Resolved):
        return program.reason
    refusal = server_program_refusal(data_dir, program.path)
    if refusal is not None:
        return f"its program is refused: {refusal}"
    missing = sorted(set(server.secret_env.values()) - stored)
    if missing:
        return f"secret(s) {', '.join(missing)} are not stored (store them first with `hearth secrets set NAME`)"
    return None


def check_mcp_servers(settings: AgentSettings, secrets: SecretStore, data_dir: Path) -> None:
    """Refuse settings whose MCP servers could never start, or could run what an agent wrote.

    Raises:
        InvalidRequestError: a program is missing or in the data dir, a loader variable is named, or a named
            secret is not stored.
    """
    if not settings.mcp_servers:
        return
    stored = set(secrets.list())
    data = os.path.realpath(data_dir)
    for server in settings.mcp_servers:
        refusal = _refusal(server, stored, data)
        if refusal is not None:
            raise InvalidRequestError(f"MCP server {server.name!r}: {refusal}")


def _spec(server: McpServerSettings, secrets: SecretStore) -> McpServerSpec:
    values: dict[str, str] = {}
    missing: list[str] = []
    for var, name in sorted(server.secret_env.items()):
        value = secrets.get(name)
        if value is None:
            missing.append(name)
        else:
            values[var] = value
    program = resolve_command(server.command)
    return McpServerSpec.model_validate(
        {
            "name": server.name,
            "command": program.path if isinstance(program, Resolved) else server.command,
            "args": server.args,
            "env": server.env,
            "secretEnv": values,
            "tools": server.tools,
            "network": server.network,
            "missingSecrets": sorted(set(missing)),
        }
    )


def mcp_server_specs(settings: AgentSettings, secrets: SecretStore) -> list[McpServerSpec]:
    """The agent's MCP servers for one turn, with their commands and secrets resolved on the host."""
    return [_spec(server, secrets) for server in settings.mcp_servers]
