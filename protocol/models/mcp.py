"""Wire models for an agent's MCP servers: their settings, what the kernel is told, and their live state.

`McpServerSettings` is what a person configures (stored in the agent's settings): a server's name is one slug
(`[a-z0-9-]+`), so tool names `mcp__<server>__<tool>` stay unambiguous; `secretEnv` names stored secrets,
never their values. `McpServerSpec` is what the host sends the kernel for one turn, with those secrets
resolved: their values are hidden from `repr` and travel on the host-kernel pipe only.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, SecretStr, field_serializer, model_validator

from protocol.ids import SECRET_NAME_PATTERN
from protocol.models.base import Params, WireModel

__all__ = [
    "ENV_NAME_PATTERN",
    "MCP_SERVER_NAME_PATTERN",
    "McpState",
    "McpServerSettings",
    "McpServerSpec",
    "McpServerState",
    "McpCloseParams",
    "McpStatusEvent",
    "McpServerStatusEvent",
    "check_unique_names",
]

MCP_SERVER_NAME_PATTERN = r"^[a-z0-9-]{1,40}$"
"""An MCP server's name within one agent: one slug, part of every tool name it gives."""

ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
"""An environment variable's name."""

McpState = Literal["starting", "ready", "failed", "stopped"]

EnvName = Annotated[str, Field(pattern=ENV_NAME_PATTERN)]
SecretRef = Annotated[str, Field(pattern=SECRET_NAME_PATTERN)]


class McpServerSettings(WireModel):
    """One MCP server of an agent, started by the kernel inside the agent's OS sandbox."""

    name: str = Field(pattern=MCP_SERVER_NAME_PATTERN)
    command: str = Field(min_length=1, max_length=4096, description="The program: a path, or a name found on PATH.")
    args: list[str] = Field(default_factory=list)
    env: dict[EnvName, str] = Field(default_factory=dict, description="Extra environment (not for secrets).")
    secret_env: dict[EnvName, SecretRef] = Field(
        default_factory=dict, description="Environment variable → name of a stored secret, resolved by the host."
    )
    tools: list[str] | None = Field(default=None, description="The tools to offer; null offers every tool.")
    network: bool = Field(default=False, description="Whether the server may use the network.")

    @model_validator(mode="after")
    def _check(self) -> McpServerSettings:
        if "\x00" in self.command or any("\x00" in arg for arg in self.args):
            raise ValueError("the command and its arguments must not contain NUL bytes")
        if any("\x00" in value for value in self.env.values()):
            raise ValueError("environment values must not contain NUL bytes")
        both = set(self.env) & set(self.secret_env)
        if both:
            raise ValueError(f"{', '.join(sorted(both))} is set both in env and in secretEnv")
        return self


def check_unique_names(servers: list[McpServerSettings] | None) -> list[McpServerSettings] | None:
    """Two servers of one agent may not share a name (their tool names would collide)."""
    if servers is None:
        return None
    names = [server.name for server in servers]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"MCP server names must be unique; repeated: {', '.join(repeated)}")
    return servers


class McpServerSpec(WireModel):
    """One server as the kernel gets it for a turn: the settings with the named secrets resolved."""

    model_config = ConfigDict(hide_input_in_errors=True)

    name: str = Field(pattern=MCP_SERVER_NAME_PATTERN)
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    secret_env: dict[str, SecretStr] = Field(default_factory=dict, json_schema_extra={"writeOnly": True})
    tools: list[str] | None = None
    network: bool = False
    missing_secrets: list[str] = Field(
        default_factory=list, description="Secrets named in secretEnv that are not stored: the server is not started."
    )

    @field_serializer("secret_env")
    def _reveal_for_the_kernel(self, values: dict[str, SecretStr]) -> dict[str, str]:
        # Only the host serialises a spec, to send it to the kernel; neither side logs it.
        return {name: value.get_secret_value() for name, value in values.items()}


class McpServerState(WireModel):
    """What a shell sees of one configured server in `agent.get`."""

    name: str
    state: McpState = "stopped"
    tool_count: int | None = None
    error: str | None = None
    stderr_tail: str | None = Field(default=None, description="The end of a failed server's stderr, secrets withheld.")
    cause: str | None = Field(default=None, description="What most likely made it fail, and what to change.")


class McpCloseParams(Params):
    """Stop every MCP server of one session (the agent's settings changed)."""

    session: str


class McpStatusEvent(WireModel):
    """Kernel → host: a server of a session started, became ready, failed or stopped."""

    session: str
    server: str
    state: McpState
    tool_count: int | None = None
    error: str | None = None
    stderr_tail: str | None = Field(default=None, description="The end of the server's stderr, secrets withheld.")
    cause: str | None = Field(default=None, description="What most likely made it fail, and what to change.")


class McpServerStatusEvent(WireModel):
    """Host → shell: `mcp.status` of one agent's server."""

    agent_id: str
    server: str
    state: McpState
    tool_count: int | None = None
    error: str | None = None
    stderr_tail: str | None = Field(default=None, description="The end of the server's stderr, secrets withheld.")
    cause: str | None = Field(default=None, description="What most likely made it fail, and what to change.")
