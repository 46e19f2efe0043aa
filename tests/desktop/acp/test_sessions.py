"""A session's folder and title: which folder may be a project root, and which agent a title names."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from acp import RequestError

from desktop.acp.mcp_servers import secret_name, server_name
from desktop.acp.sessions import DEFAULT_TITLE, project_root_for, session_title
from protocol.errors import INVALID_PARAMS
from protocol.ids import SECRET_NAME_PATTERN
from protocol.project_root import FIX


def test_a_project_folder_is_kept_canonical(tmp_path: Path) -> None:
    project = tmp_path / "work" / "proj"
    project.mkdir(parents=True)
    (tmp_path / "link").symlink_to(project)
    assert project_root_for(str(tmp_path / "link"), tmp_path / "data") == str(project)


@pytest.mark.parametrize(
    "where",
    ["relative", "nul", "missing", "file", "root", "data", "inside", "holding", "etc", "usr", "proc", "home", "tmp"],
)
def test_a_folder_that_cannot_be_a_project_root_is_refused(tmp_path: Path, where: str) -> None:
    data = tmp_path / "home" / "data"
    (data / "agents" / "ann").mkdir(parents=True)
    (tmp_path / "file").write_text("x", encoding="utf-8")
    cwd = {
        "relative": "proj",
        "missing": str(tmp_path / "missing"),
        "file": str(tmp_path / "file"),
        "root": "/",
        "data": str(data),
        "inside": str(data / "agents" / "ann"),
        "holding": str(tmp_path / "home"),
        "nul": "/tmp/a\x00b",
        "etc": "/etc",
        "usr": "/usr/share",
        "proc": "/proc/self",
        "home": os.path.expanduser("~"),
        "tmp": "/tmp",
    }[where]
    with pytest.raises(RequestError) as caught:
        project_root_for(cwd, data)
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.data["fix"] == FIX and caught.value.data["cwd"] == cwd


def test_the_title_comes_from_the_editor_else_from_the_folder_name() -> None:
    assert session_title("/home/p/my-app", {"title": "  Reviewer  "}) == "Reviewer"
    assert session_title("/home/p/my-app", {}) == "my-app"
    assert session_title("/home/p/my-app", {"title": ""}) == "my-app"
    assert session_title("/", {}) == DEFAULT_TITLE


def test_an_editors_server_and_variable_names_become_hearth_names() -> None:
    assert server_name("GitHub Tools") == "github-tools"
    assert server_name("___") == "server"
    assert len(server_name("x" * 90)) == 40


def test_a_secret_name_is_scoped_to_its_agent_and_never_shared_by_two_triples() -> None:
    assert secret_name("ada", "notes", "NOTES_TOKEN") == "acp.ada.notes.notes_token"
    assert secret_name("gamma", "notes", "NOTES_TOKEN") != secret_name("ada", "notes", "NOTES_TOKEN")
    assert secret_name("a", "b-c", "D") != secret_name("a-b", "c", "D"), "the separator is no part of a name"
    long = secret_name("a" * 63, "s" * 40, "V" * 128)
    assert len(long) == 64 and re.match(SECRET_NAME_PATTERN, long) and long.startswith("acp-")
    assert long != secret_name("a" * 63, "s" * 40, "W" * 128)
    assert not secret_name("ada", "notes", "TOKEN").startswith("acp-notes-"), "never an earlier, unscoped name"
