"""One MCP server of one turn, as a plain value: what to run, what to offer, and the secrets it gets.

Two specs are equal only when everything the server would be started with is equal (secret values
included), so a running server whose spec changed is restarted. The secret values never show in `repr`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kernel.mcp.redact import redact
from protocol.models.mcp import McpServerSpec

__all__ = ["ServerSpec", "mcp_tool_name"]


@dataclass(frozen=True, slots=True)
class ServerSpec:
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    secrets: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    tools: tuple[str, ...] | None = None
    network: bool = False
    missing_secrets: tuple[str, ...] = ()

    @classmethod
    def from_wire(cls, spec: McpServerSpec) -> ServerSpec:
        return cls(
            name=spec.name,
            command=spec.command,
            args=tuple(spec.args),
            env=tuple(sorted(spec.env.items())),
            secrets=tuple(sorted((var, value.get_secret_value()) for var, value in spec.secret_env.items())),
            tools=tuple(spec.tools) if spec.tools is not None else None,
            network=spec.network,
            missing_secrets=tuple(spec.missing_secrets),
        )

    def offers(self, tool: str) -> bool:
        """Whether the allowlist lets `tool` through (no allowlist offers every tool)."""
        return self.tools is None or tool in self.tools

    def redact(self, text: str) -> str:
        """`text` with every secret value of this server, and its encodings, replaced by a marker naming its
        variable (see `kernel.mcp.redact`)."""
        return redact(text, self.secrets)


def mcp_tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, with characters providers refuse in a tool name turned into `_`, at most 64."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in tool)
    return f"mcp__{server}__{safe}"[:64]
