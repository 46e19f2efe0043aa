"""`hearth mcp add|list|remove`: an agent's MCP servers, changed through the host as a shell would.

`add` appends one server to the agent's `mcpServers` and `remove` drops one, each with `agent.update`, so the
host checks the result (a name is `[a-z0-9-]+`, the program exists, named secrets are stored) before anything
is written; a refused change is one line on stderr and exit code 1. `list` shows each server and its state,
and for a failed one the error, its likely cause and the last lines of its stderr.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.client import connect_host
from protocol.dispatch import Router
from protocol.errors import JsonRpcError
from protocol.peer import JsonRpcPeer

__all__ = ["McpCommand", "run_mcp_command"]

_TAIL_LINES = 8


@dataclass(frozen=True, slots=True)
class McpCommand:
    action: str
    agent: str
    data_dir: Path
    name: str | None = None
    command: list[str] = field(default_factory=list)
    env: list[str] = field(default_factory=list)
    secret_env: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    network: bool = False


class _UsageError(Exception):
    pass


def _pairs(items: list[str], what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise _UsageError(f"{what} takes VAR=VALUE, not {item!r}")
        pairs[key] = value
    return pairs


def _server(cmd: McpCommand) -> dict[str, Any]:
    if not cmd.command:
        raise _UsageError("give the server's command after `--`, e.g. `hearth mcp add AGENT NAME -- npx server`")
    server: dict[str, Any] = {
        "name": cmd.name,
        "command": cmd.command[0],
        "args": cmd.command[1:],
        "env": _pairs(cmd.env, "--env"),
        "secretEnv": _pairs(cmd.secret_env, "--secret-env"),
        "network": cmd.network,
    }
    if cmd.tools:
        server["tools"] = cmd.tools
    return server


def _describe(server: dict[str, Any], state: dict[str, Any]) -> str:
    line = f"{server['name']}  [{state.get('state', 'stopped')}"
    if state.get("toolCount") is not None:
        line += f", {state['toolCount']} tools"
    line += "]  " + shlex.join([server["command"], *server.get("args", [])])
    details = []
    if server.get("network"):
        details.append("network on")
    if server.get("secretEnv"):
        details.append("secrets: " + ", ".join(f"{var}←{name}" for var, name in sorted(server["secretEnv"].items())))
    if server.get("tools") is not None:
        details.append("tools: " + ", ".join(server["tools"]))
    if state.get("error"):
        details.append(f"error: {state['error']}")
    if state.get("cause"):
        details.append(f"likely cause: {state['cause']}")
    if state.get("stderrTail"):
        tail = state["stderrTail"].splitlines()[-_TAIL_LINES:]
        details.append("last lines of its stderr:" + "".join(f"\n      {text}" for text in tail))
    return line + "".join(f"\n    {detail}" for detail in details)


async def _update(peer: JsonRpcPeer, agent: str, servers: list[dict[str, Any]]) -> None:
    await peer.request("agent.update", {"agentId": agent, "settings": {"mcpServers": servers}})


async def _run(cmd: McpCommand) -> int:
    new = _server(cmd) if cmd.action == "add" else None
    async with connect_host(cmd.data_dir, Router(), client="hearth-mcp") as peer:
        info = await peer.request("agent.get", {"agentId": cmd.agent})
        servers: list[dict[str, Any]] = list(info["settings"].get("mcpServers", []))
        names = [server["name"] for server in servers]
        if new is not None:
            if cmd.name in names:
                raise _UsageError(f"{cmd.agent} already has an MCP server named {cmd.name!r}; remove it first")
            await _update(peer, cmd.agent, [*servers, new])
            print(f"added MCP server {cmd.name} to {cmd.agent}; it starts on the agent's next turn")
        elif cmd.action == "remove":
            if cmd.name not in names:
                raise _UsageError(f"{cmd.agent} has no MCP server named {cmd.name!r}")
            await _update(peer, cmd.agent, [server for server in servers if server["name"] != cmd.name])
            print(f"removed MCP server {cmd.name} from {cmd.agent}")
        else:
            states = {state["name"]: state for state in info.get("mcp", [])}
            lines = [_describe(server, states.get(server["name"], {})) for server in servers]
            print("\n".join(lines) if lines else f"({cmd.agent} has no MCP servers)")
    return 0


def run_mcp_command(cmd: McpCommand) -> int:
    """Run one `hearth mcp` command. Returns the exit code."""
    try:
        return asyncio.run(_run(cmd))
    except (JsonRpcError, _UsageError) as exc:
        message = exc.message if isinstance(exc, JsonRpcError) else str(exc)
        print(f"hearth: {message}", file=sys.stderr)
        return 1
