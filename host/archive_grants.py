"""What an archive's settings may ask for: the settings an imported agent starts with, and the grants that wait.

Nothing that grants a power is adopted as it stands: a model other than the embedded one (it gets the
conversation, the memory, a stored secret), `toolPermission: always`, network, each MCP server. The agent
starts from an allowlist of fields that grant nothing (a field added later is never adopted by accident);
`adopt_patch` makes the grants a person says yes to into a patch for `agent.update`'s checks.
"""

from __future__ import annotations

from collections.abc import Sequence

from protocol.models.agents import AgentSettings, AgentSettingsPatch, ModelSettings
from protocol.models.archive import SettingsGrant
from protocol.models.mcp import McpServerSettings
from protocol.models.secrets import KEYED_PROVIDERS

__all__ = ["split_settings", "adopt_patch"]


def split_settings(requested: AgentSettings) -> tuple[AgentSettings, list[SettingsGrant]]:
    """The settings an imported agent starts with, and what `requested` asked for beyond them.

    Args:
        requested: the archive's settings, validated.

    Returns:
        (safe settings, grants in the order model, toolPermission, network, MCP servers).
    """
    grants: list[SettingsGrant] = []
    model = requested.model
    if _model_grants_nothing(model):
        safe_model = model
    else:
        safe_model = ModelSettings()
        grants.append(_model_grant(model))
    permission = requested.tool_permission
    if permission == "always":
        permission = "ask"
        grants.append(
            SettingsGrant(
                id="toolPermission",
                kind="toolPermission",
                summary="run every tool without asking you first (toolPermission: always)",
                tool_permission="always",
            )
        )
    if requested.network:
        grants.append(SettingsGrant(id="network", kind="network", summary="let the agent's shell reach the network"))
    grants += [_server_grant(server) for server in requested.mcp_servers]
    safe = AgentSettings(
        model=safe_model,
        instructions=requested.instructions,
        memory=requested.memory,
        tool_permission=permission,
        extraction=requested.extraction,
    )
    return safe, grants


def adopt_patch(current: AgentSettings, grants: Sequence[SettingsGrant]) -> AgentSettingsPatch:
    """The settings change that puts `grants` in effect on top of `current` (an MCP server replaces its namesake)."""
    model, permission, network = None, None, None
    servers = list(current.mcp_servers)
    adds_servers = False
    for grant in grants:
        if grant.kind == "model":
            model = grant.model
        elif grant.kind == "toolPermission":
            permission = grant.tool_permission
        elif grant.kind == "network":
            network = True
        elif grant.mcp_server is not None:
            servers = [s for s in servers if s.name != grant.mcp_server.name] + [grant.mcp_server]
            adds_servers = True
    return AgentSettingsPatch(
        model=model, tool_permission=permission, network=network, mcp_servers=servers if adds_servers else None
    )


def _model_grants_nothing(model: ModelSettings) -> bool:
    """The embedded model reaches no server and uses no secret; every other model is the archive's choice."""
    return model.provider == "local" and model.base_url is None and model.api_key_secret is None


def _model_grant(model: ModelSettings) -> SettingsGrant:
    if model.provider == "scripted":
        summary = f"answer with a scripted model ({len(model.rules)} rules) that replies, and calls tools, as written"
        secrets: list[str] = []
    else:
        where = model.base_url or f"the {model.provider} API"
        secret = model.api_key_secret or model.provider
        summary = (
            f"use the {model.provider} model {model.name!r} at {where}: your conversations and memory go there, "
            f"with the API key stored in your secret {secret!r} if you have one"
        )
        secrets = [secret] if model.provider in KEYED_PROVIDERS else []
    return SettingsGrant(id="model", kind="model", summary=summary, secrets=secrets, model=model)


def _server_grant(server: McpServerSettings) -> SettingsGrant:
    parts = [f"start the MCP server {server.name!r}: {' '.join([server.command, *server.args])}"]
    if server.network:
        parts.append("with network")
    if server.env:
        parts.append(f"environment {', '.join(sorted(server.env))}")
    if server.secret_env:
        pairs = ", ".join(f"{var}={name}" for var, name in sorted(server.secret_env.items()))
        parts.append(f"given your secrets {pairs}")
    return SettingsGrant(
        id=f"mcp:{server.name}",
        kind="mcpServer",
        summary="; ".join(parts),
        secrets=sorted(set(server.secret_env.values())),
        mcp_server=server,
    )
