"""MCP server settings on the wire: what a person may write, and what is refused (issue 15)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from protocol.models.agents import AgentSettings, AgentSettingsPatch


def _servers(*servers: dict[str, object]) -> dict[str, object]:
    return {"mcpServers": list(servers)}


def test_a_server_gets_its_defaults_no_allowlist_and_no_network() -> None:
    (server,) = AgentSettings.model_validate(_servers({"name": "git-2", "command": "mcp-server-git"})).mcp_servers
    assert (server.args, server.env, server.secret_env, server.tools, server.network) == ([], {}, {}, None, False)


@pytest.mark.parametrize(
    "server",
    [
        {"name": "Notes", "command": "x"},
        {"name": "my_notes", "command": "x"},
        {"name": "", "command": "x"},
        {"name": "notes", "command": ""},
        {"name": "notes", "command": "x", "env": {"1BAD": "v"}},
        {"name": "notes", "command": "x", "secretEnv": {"TOKEN": "Not A Secret Name"}},
        {"name": "notes", "command": "x", "env": {"TOKEN": "a"}, "secretEnv": {"TOKEN": "tok"}},
        {"name": "notes", "command": "x\x00y"},
    ],
)
def test_a_malformed_server_is_refused(server: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        AgentSettings.model_validate(_servers(server))
    with pytest.raises(ValidationError):
        AgentSettingsPatch.model_validate(_servers(server))


def test_two_servers_of_one_agent_may_not_share_a_name() -> None:
    twice = _servers({"name": "notes", "command": "a"}, {"name": "notes", "command": "b"})
    with pytest.raises(ValidationError):
        AgentSettingsPatch.model_validate(twice)
    assert (
        len(
            AgentSettings.model_validate(
                _servers({"name": "a", "command": "a"}, {"name": "b", "command": "b"})
            ).mcp_servers
        )
        == 2
    )
