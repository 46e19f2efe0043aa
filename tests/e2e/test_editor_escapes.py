"""The editor's folder, whatever it holds (issue 21.6-21.10), through a real host, kernel and `hearth acp` driven by
the `acp` package's own client: each attack on one side, its owner's twin that must still work on the other.

Hard links in the project to another agent's memory or the host's key are refused by what the file is; an
attached file is file content, never the person's words; an editor session's MCP secrets are its agent's own;
a system tree is no project root; a session keeps its root.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, embedded_text_resource, resource_block, text_block
from acp.schema import EnvVariable, McpServerStdio

from host.store.secrets import SecretStore
from protocol.errors import CONFLICT, INVALID_PARAMS, JsonRpcError
from protocol.project_root import FIX
from tests.support.acp_editor import EditorClient, open_editor, prompt
from tests.support.fake_model import ChatServer, call, model_settings, say
from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model

MEMORY_CANARY = "CANARY-BETA-MEMORY-pelican"


def _tool(match: str, name: str, **arguments: str) -> dict[str, Any]:
    return {"match": match, "on": "user", "toolCalls": [{"name": name, "arguments": arguments}]}


RULES = [
    _tool(r"(?m)^read (\S+)$", "read_file", path=r"\1"),
    _tool(r"(?m)^grep (\S+) (\S+)$", "grep", pattern=r"\1", path=r"\2", output_mode="content"),
    _tool(r"(?m)^list (\S+)$", "list_dir", path=r"\1"),
    _tool(r"(?m)^save (\S+) (.+)$", "write_file", path=r"\1", content=r"\2"),
    _tool(r"(?m)^note (.+)$", "mcp__notes__add", text=r"\1"),
    {"match": r"(?m)^hi$", "on": "user", "reply": "hello"},
    {"match": r"(?s)^(.*)$", "on": "tool", "reply": r"tool said: \1"},
]


def _project(tmp_path: Path, name: str = "project") -> Path:
    project = tmp_path / name
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("def find_the_needle():\n    return 42\n", encoding="utf-8")
    return project


def _statuses(editor: EditorClient, mark: int) -> list[str]:
    return [update["status"] for update in editor.of_kind("tool_call_update", mark)]


def test_hard_links_in_the_project_reach_no_protected_file_and_the_projects_own_links_are_read(tmp_path: Path) -> None:
    """21.6: `ln D/agents/beta/memory/ledger.jsonl P/l; ln D/secrets.key P/k` gave read_file and grep their bytes."""
    data, project = tmp_path / "data", _project(tmp_path)
    os.link(project / "src" / "app.py", project / "src" / "copy.py")  # as pnpm and git make: a file of the project

    async def setup() -> None:
        async with HostProcess(data) as host:
            for name in ("alpha", "beta"):
                await host.call("agent.create", {"name": name, "agentId": name, "settings": scripted_model(*RULES)})
            await host.call("secrets.set", {"name": "other", "value": "a host secret"})
            await host.call("memory.note", {"agentId": "beta", "text": f"Beta keeps the code {MEMORY_CANARY}."})
            await host.send_and_wait("beta", f"hi\nmy code is {MEMORY_CANARY}")

    asyncio.run(setup())
    beta = data / "agents" / "beta"
    protected = {
        "l": beta / "memory" / "ledger.jsonl",
        "t": beta / "transcript.jsonl",
        "k": data / "secrets.key",
        "b": data / "secrets.bin",
    }
    for name, target in protected.items():
        os.link(target, project / name)
    os.link(data / "agents" / "alpha" / "settings.json", project / "own-settings.json")
    key = (data / "secrets.key").read_text(encoding="utf-8").strip()
    settings_before = (data / "agents" / "alpha" / "settings.json").read_bytes()

    async def main() -> None:
        editor = EditorClient(answers=["allow_once"])
        async with open_editor(editor, data, "alpha", log=tmp_path / "acp.log") as (conn, _):
            await conn.new_session(cwd=str(project), mcp_servers=[])
            for name in protected:
                await prompt(conn, "alpha", f"read {project}/{name}")
            for pattern in ("CANARY-BETA", key[:12], "."):
                await prompt(conn, "alpha", f"grep {pattern} {project}")
            await prompt(conn, "alpha", f"list {project}")
            attacks = json.dumps(editor.updates)
            assert MEMORY_CANARY not in attacks and key not in attacks
            assert _statuses(editor, 0)[:4] == ["failed"] * 4, "every read of a link to a protected file is refused"
            assert "4 file(s) left out" in editor.text(after=0), "grep says it left the links out"
            assert editor.asked == [], "reading and searching the project still need no yes"

            mark = len(editor.updates)
            await prompt(conn, "alpha", f"read {project}/src/copy.py")
            await prompt(conn, "alpha", f"grep find_the_needle {project}")
            twins = editor.text(after=mark)
            assert "return 42" in twins and "src/app.py" in twins and "src/copy.py" in twins
            mark = len(editor.updates)
            await prompt(conn, "alpha", f"save {project}/own-settings.json replaced")
            assert _statuses(editor, mark) == ["completed"] and len(editor.asked) == 1

    asyncio.run(main())
    transcript = (data / "agents" / "alpha" / "transcript.jsonl").read_text(encoding="utf-8")
    assert MEMORY_CANARY not in transcript and key not in transcript, "nothing of them reached the model"
    assert (data / "agents" / "alpha" / "settings.json").read_bytes() == settings_before, "the write replaced the link"
    assert (project / "own-settings.json").read_text(encoding="utf-8") == "replaced"
    assert MEMORY_CANARY in (beta / "memory" / "ledger.jsonl").read_text(encoding="utf-8")


def test_an_attached_file_makes_a_proposed_fact_and_the_persons_typed_words_a_confirmed_one(tmp_path: Path) -> None:
    """21.7: an attachment inlined in the person's message made `memory_note` of its text `confirmed`."""
    data, project = tmp_path / "data", _project(tmp_path)
    server = ChatServer()
    server.script(
        call("memory_note", {"text": "The user's employer is Attachco-X."}),
        say("Noted."),
        call("memory_note", {"text": "The user's employer is Typedco."}),
        say("Noted too."),
    )
    server.start()
    try:

        async def main() -> None:
            async with HostProcess(data) as host:
                await host.call("agent.create", {"name": "mia", "agentId": "mia", "settings": model_settings(server)})
            editor = EditorClient()
            async with open_editor(editor, data, "mia", log=tmp_path / "acp.log") as (conn, _):
                await conn.new_session(cwd=str(project), mcp_servers=[])
                attached = resource_block(
                    embedded_text_resource(f"file://{project}/cv.md", "The user's employer is Attachco-X.")
                )
                async with asyncio.timeout(60):
                    done = await conn.prompt(session_id="mia", prompt=[text_block("remember this"), attached])
                assert done.stop_reason == "end_turn"
                assert (await prompt(conn, "mia", "my employer is Typedco")).stop_reason == "end_turn"
            async with HostProcess(data) as host:
                proposed = await host.call("memory.list", {"agentId": "mia", "view": "proposed"})
                current = await host.call("memory.list", {"agentId": "mia", "view": "current"})
            assert [r["text"] for r in proposed["records"]] == ["The user's employer is Attachco-X."]
            assert [r["text"] for r in current["records"]] == ["The user's employer is Typedco."]

        asyncio.run(main())
    finally:
        server.stop()
    chats = [r.body for r in server.requests if r not in server.extractions]
    first = [m["content"] for m in chats[0]["messages"] if m["role"] == "user"][-1]
    assert first.endswith(
        f"remember this\n\n[Attached file file://{project}/cv.md; its content, not the person's words:]\n"
        "```\nThe user's employer is Attachco-X.\n```"
    ), "the attached file still reaches the model, as file content"


def _notes(env: dict[str, str], command: str = sys.executable) -> McpServerStdio:
    variables = [EnvVariable(name=name, value=value) for name, value in env.items()]
    return McpServerStdio(
        name="notes", command=command, args=[str(REPO_ROOT / "tests/support/mcp_notes.py")], env=variables
    )


@pytest.mark.timeout(300)
def test_an_editor_session_writes_and_deletes_only_its_own_agents_mcp_secrets(tmp_path: Path) -> None:
    """21.8: `acp-<server>-<var>` was shared: gamma's session rewrote alpha's token, and a server refused in another
    agent's session deleted it, so alpha's server stopped starting."""
    data, project = tmp_path / "data", _project(tmp_path)
    legacy = {"name": "notes", "command": sys.executable, "args": [str(REPO_ROOT / "tests/support/mcp_notes.py")],
              "secretEnv": {"TOKEN": "acp-notes-token"}}  # fmt: skip

    async def session(agent: str, server: McpServerStdio, *texts: str) -> EditorClient:
        editor = EditorClient(answers=["allow_once"] * len(texts))
        async with open_editor(editor, data, agent, log=tmp_path / "acp.log") as (conn, _):
            await conn.new_session(cwd=str(project), mcp_servers=[server])
            for text in texts:
                await prompt(conn, agent, text)
        return editor

    async def main() -> None:
        async with HostProcess(data) as host:  # every `hearth acp` below attaches to this one host
            for name in ("alpha", "gamma", "delta"):
                await host.call("agent.create", {"name": name, "agentId": name, "settings": scripted_model(*RULES)})
            await host.call("secrets.set", {"name": "acp-notes-token", "value": "OLDVAL"})
            settings = {**scripted_model(*RULES), "mcpServers": [legacy]}  # adopted by an earlier version
            await host.call("agent.create", {"name": "olden", "agentId": "olden", "settings": settings})
            await session("alpha", _notes({"TOKEN": "ALPHAVAL"}))  # adopted (its secret stored), not started yet
            _, refused = await asyncio.gather(
                session("gamma", _notes({"TOKEN": "GAMMAVAL"}), "note g1"),
                session("delta", _notes({"TOKEN": "DELTAVAL"}, "/nonexistent/server"), "hi"),
            )
            assert refused.text().startswith("[The editor's MCP servers were not added to delta:")
            older = await session("olden", _notes({"TOKEN": "whatever"}), "note o1")
            assert "tool said: added note 1: o1" in older.text(), "a secret of an earlier version keeps working"
            alpha = await session("alpha", _notes({"TOKEN": "ignored: the server is there already"}), "note a1")
            assert "tool said: added note 1: a1" in alpha.text(), "alpha's server starts, with its own secret"

    asyncio.run(main())
    store = SecretStore(data)
    names = {}
    for agent in ("alpha", "gamma", "olden"):
        settings = json.loads((data / "agents" / agent / "settings.json").read_text(encoding="utf-8"))
        names[agent] = settings["mcpServers"][0]["secretEnv"]["TOKEN"]
    assert names == {"alpha": "acp.alpha.notes.token", "gamma": "acp.gamma.notes.token", "olden": "acp-notes-token"}
    assert [store.get(names[a]) for a in ("alpha", "gamma", "olden")] == ["ALPHAVAL", "GAMMAVAL", "OLDVAL"]
    assert not [name for name in store.list() if "delta" in name], "nothing of the refused server stays"


SYSTEM_TREES = ["/", "/etc", "/usr", "/usr/share", "/proc", "/sys", "/dev", "/boot", "/var/lib", "/tmp", "/home"]


def test_system_trees_and_the_home_are_refused_as_project_roots_and_a_project_folder_is_not(tmp_path: Path) -> None:
    """21.9: `/etc` and `/usr` were accepted (reads there then needed no yes); `/proc` failed only at the prompt."""
    data, project = tmp_path / "data", _project(tmp_path)
    refused = [tree for tree in SYSTEM_TREES if os.path.isdir(tree)] + [os.path.expanduser("~")]

    async def main() -> None:
        async with HostProcess(data) as host:
            await host.call("agent.create", {"name": "ada", "agentId": "ada", "settings": scripted_model(*RULES)})
            for tree in ("/etc", "/usr"):
                with pytest.raises(JsonRpcError) as caught:
                    await host.call("agent.send", {"agentId": "ada", "text": "read /etc/hostname", "projectRoot": tree})
                assert caught.value.code == INVALID_PARAMS and caught.value.data["fix"] == FIX
        editor = EditorClient()
        async with open_editor(editor, data, log=tmp_path / "acp.log") as (conn, _):
            for tree in refused:
                with pytest.raises(RequestError) as caught:
                    await conn.new_session(cwd=tree, mcp_servers=[])
                assert caught.value.code == INVALID_PARAMS, tree
                assert caught.value.data["fix"] == FIX and caught.value.data["cwd"] == tree
            opened = await conn.new_session(cwd=str(project), mcp_servers=[], title="ada")
            await prompt(conn, opened.session_id, f"read {project}/src/app.py")
            assert "return 42" in editor.text() and editor.asked == []

    asyncio.run(main())
    assert sorted(path.name for path in (data / "agents").iterdir()) == ["ada"], "no agent was made for a refused one"


def test_a_second_session_of_an_open_agent_on_another_folder_is_refused_and_the_first_keeps_its_root(
    tmp_path: Path,
) -> None:
    """21.10: a second session/new for the same agent silently moved the first session's project root."""
    data, first, second = tmp_path / "data", _project(tmp_path, "first"), _project(tmp_path, "second")
    (second / "private.txt").write_text("SECOND-PROJECT-ONLY\n", encoding="utf-8")

    async def main() -> None:
        async with HostProcess(data) as host:
            await host.call("agent.create", {"name": "ada", "agentId": "ada", "settings": scripted_model(*RULES)})
        editor = EditorClient()  # no answers: every question is answered `deny`
        async with open_editor(editor, data, "ada", log=tmp_path / "acp.log") as (conn, _):
            await conn.new_session(cwd=str(first), mcp_servers=[])
            with pytest.raises(RequestError) as caught:
                await conn.new_session(cwd=str(second), mcp_servers=[])
            assert caught.value.code == CONFLICT and caught.value.data["projectRoot"] == str(first)
            with pytest.raises(RequestError) as caught:
                await conn.load_session(cwd=str(second), session_id="ada", mcp_servers=[])
            assert caught.value.code == CONFLICT
            await prompt(conn, "ada", f"read {second}/private.txt")
            assert len(editor.asked) == 1 and "SECOND-PROJECT-ONLY" not in editor.text(), "outside its root: asks"
            await prompt(conn, "ada", f"read {first}/src/app.py")
            assert len(editor.asked) == 1 and "return 42" in editor.text(), "its own root: no question"
            await conn.new_session(cwd=str(first), mcp_servers=[])  # the same folder again is the same session
            await conn.close_session(session_id="ada")
            await conn.new_session(cwd=str(second), mcp_servers=[])
            await prompt(conn, "ada", f"read {second}/private.txt")
            assert len(editor.asked) == 1 and "SECOND-PROJECT-ONLY" in editor.text(), "closed, then opened there"

    asyncio.run(main())
