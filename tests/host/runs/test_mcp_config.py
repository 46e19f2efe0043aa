"""An agent's MCP servers on the host: refused on write when they could never start, resolved per turn."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from host.errors import InvalidRequestError
from host.runs.mcp_config import check_mcp_servers, mcp_server_specs
from host.store.secrets import SecretStore
from protocol.errors import INVALID_PARAMS
from protocol.models.agents import AgentSettings


def _settings(**server: object) -> AgentSettings:
    return AgentSettings.model_validate({"mcpServers": [{"name": "notes", "command": sys.executable, **server}]})


def test_a_server_whose_program_exists_and_whose_secrets_are_stored_is_accepted(tmp_path: Path) -> None:
    secrets = SecretStore(tmp_path)
    secrets.set("notes-token", "tok-1")
    check_mcp_servers(_settings(secretEnv={"NOTES_TOKEN": "notes-token"}), secrets, tmp_path)
    check_mcp_servers(_settings(command="sh"), secrets, tmp_path)


@pytest.mark.parametrize(
    "server",
    [{"command": "no-such-program-hearth"}, {"command": "/nowhere/server"}, {"secretEnv": {"T": "never-stored"}}],
)
def test_a_server_that_could_never_start_is_refused(tmp_path: Path, server: dict[str, object]) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        check_mcp_servers(_settings(**server), SecretStore(tmp_path), tmp_path)
    assert caught.value.code == INVALID_PARAMS


def test_a_program_an_agent_could_write_is_refused(tmp_path: Path) -> None:
    planted = tmp_path / "agents/ann/scratch/server"
    planted.parent.mkdir(parents=True)
    planted.write_text("#!/bin/sh\n", encoding="utf-8")
    planted.chmod(0o755)
    with pytest.raises(InvalidRequestError) as caught:
        check_mcp_servers(_settings(command=str(planted)), SecretStore(tmp_path), tmp_path)
    assert caught.value.code == INVALID_PARAMS
    check_mcp_servers(_settings(command=str(planted)), SecretStore(tmp_path / "elsewhere"), tmp_path / "elsewhere")


def test_a_turn_gets_the_secret_values_and_names_a_deleted_secret_as_missing(tmp_path: Path) -> None:
    secrets = SecretStore(tmp_path)
    secrets.set("notes-token", "tok-visible-only-to-the-kernel")
    settings = _settings(command="sh", secretEnv={"NOTES_TOKEN": "notes-token", "OTHER": "gone"})
    (spec,) = mcp_server_specs(settings, secrets)
    assert spec.secret_env["NOTES_TOKEN"].get_secret_value() == "tok-visible-only-to-the-kernel"
    assert spec.missing_secrets == ["gone"] and "OTHER" not in spec.secret_env
    assert spec.command.startswith("/"), "the host resolves the program on its own PATH"
    assert "tok-visible" not in repr(spec) and "tok-visible" not in str(spec)
    assert spec.model_dump(mode="json")["secretEnv"] == {"NOTES_TOKEN": "tok-visible-only-to-the-kernel"}


@pytest.mark.parametrize(
    ("field", "variable", "value"),
    [
        ("env", "LD_PRELOAD", "/tmp/x.so"),
        ("env", "PYTHONPATH", "."),
        ("env", "NODE_OPTIONS", "--require ./x.js"),
        ("env", "PATH", "/usr/bin"),
        ("secretEnv", "LD_LIBRARY_PATH", "notes-token"),
    ],
)
def test_a_loader_variable_is_refused_by_name_whatever_its_value(
    tmp_path: Path, field: str, variable: str, value: str
) -> None:
    """Issue 21.4."""
    secrets = SecretStore(tmp_path)
    secrets.set("notes-token", "tok-1")
    with pytest.raises(InvalidRequestError) as caught:
        check_mcp_servers(_settings(**{field: {variable: value}}), secrets, tmp_path)
    assert caught.value.code == INVALID_PARAMS and variable in caught.value.message
    check_mcp_servers(_settings(**{field: {"NOTES_TOKEN": value}}), secrets, tmp_path)


def test_a_relative_command_or_a_venv_in_the_data_dir_is_refused(tmp_path: Path) -> None:
    venv = tmp_path / "agents/ann/scratch/venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    (venv / "bin/python").symlink_to(os.path.realpath(sys.executable))
    for command in ("./venv/bin/python", str(venv / "bin/python")):
        with pytest.raises(InvalidRequestError) as caught:
            check_mcp_servers(_settings(command=command), SecretStore(tmp_path), tmp_path)
        assert caught.value.code == INVALID_PARAMS, command
