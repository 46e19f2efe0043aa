"""`hearth acp` driven by the `acp` package's own client side: a real editor protocol session over real pipes,
with a real host and kernel behind it and a scripted model (or a local fake OpenAI server) at the model boundary."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, embedded_text_resource, resource_block, resource_link_block, text_block
from acp.schema import EnvVariable, HttpMcpServer, McpServerStdio
from textual.widgets import Input

from desktop.shell import HearthApp
from desktop.shell.entries import ReplyEntry, UserEntry
from protocol.errors import CONNECTION_CLOSED, NOT_FOUND, PROVIDER_ERROR
from tests.desktop.pilot import type_text, until
from tests.kernel.providers.fake_llm_server import openai_chunk, openai_stream
from tests.support.acp_editor import EditorClient, open_editor, prompt
from tests.support.fake_model import ChatServer, call, model_settings, say, system_text
from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model

REPLY = "Hello from Hearth, streamed in pieces."
SLOW = "This reply is long and slow, so it can be cancelled " * 8


def _tool(match: str, name: str, **arguments: str) -> dict[str, Any]:
    return {"match": match, "on": "user", "toolCalls": [{"name": name, "arguments": arguments}]}


RULES = [
    {"match": r"(?m)^hi$", "on": "user", "reply": REPLY, "chunkChars": 6},
    {"match": r"(?m)^slow$", "on": "user", "reply": SLOW, "chunkChars": 2, "delayMs": 50},
    {"match": r"(?m)^medium$", "on": "user", "reply": "first things first", "chunkChars": 3, "delayMs": 30},
    {"match": r"(?s)summarize", "on": "user", "reply": "summarized"},
    _tool(r"(?m)^save (\S+) (.+)$", "write_file", path=r"\1", content=r"\2"),
    _tool(r"(?m)^read (\S+)$", "read_file", path=r"\1"),
    _tool(r"(?m)^grep (\S+) (\S+)$", "grep", pattern=r"\1", path=r"\2", output_mode="content"),
    {"match": r"(?s)^(.*)$", "on": "tool", "reply": r"tool said: \1"},
]


async def _make_agents(data_dir: Path, *agents: tuple[str, dict[str, Any]]) -> None:
    async with HostProcess(data_dir) as host:
        for name, settings in agents:
            await host.call("agent.create", {"name": name, "agentId": name, "settings": settings})


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("def find_the_needle():\n    return 42\n", encoding="utf-8")
    return project


def test_a_session_streams_asks_cancels_and_a_new_process_loads_its_history(tmp_path: Path) -> None:
    data, project = tmp_path / "data", _project(tmp_path)
    log = tmp_path / "acp.log"
    asyncio.run(_make_agents(data, ("ada", scripted_model(*RULES))))

    async def first() -> None:
        editor = EditorClient(answers=["allow_once"])
        async with open_editor(editor, data, "ada", log=log) as (conn, init):
            assert init.protocol_version == 1
            capabilities = init.agent_capabilities
            assert capabilities is not None and capabilities.load_session
            assert capabilities.prompt_capabilities is not None and capabilities.prompt_capabilities.embedded_context
            assert init.agent_info is not None and init.agent_info.name == "hearth"
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            assert session.session_id == "ada"
            await editor.wait_for(lambda u: u["sessionUpdate"] == "available_commands_update")
            names = [c["name"] for c in editor.of_kind("available_commands_update")[0]["availableCommands"]]
            assert names == ["remember", "forget", "memory", "review", "why"]

            mark = len(editor.updates)
            done = await prompt(conn, "ada", "hi")
            assert done.stop_reason == "end_turn"
            assert len(editor.of_kind("agent_message_chunk", mark)) > 1, "the reply arrives in pieces"
            assert editor.text(after=mark) == REPLY
            assert editor.of_kind("usage_update", mark)[-1]["size"] == 8192
            assert done.usage is not None and done.usage.output_tokens > 0

            mark = len(editor.updates)
            done = await prompt(conn, "ada", f"save {project}/notes.md first-draft")
            assert done.stop_reason == "end_turn"
            assert len(editor.asked) == 1 and editor.asked[0]["kind"] == "edit"
            assert editor.options[0] == ["allow_once", "allow_always", "reject_once", "reject_always"]
            assert (project / "notes.md").read_text(encoding="utf-8") == "first-draft"
            started = editor.of_kind("tool_call", mark)[0]
            assert started["kind"] == "edit" and started["locations"] == [{"path": f"{project}/notes.md"}]
            finished = editor.of_kind("tool_call_update", mark)[-1]
            assert finished["status"] == "completed" and finished["content"][0]["type"] == "diff"

            mark = len(editor.updates)
            slow = asyncio.create_task(prompt(conn, "ada", "slow"))
            await editor.wait_for(lambda u: u["sessionUpdate"] == "agent_message_chunk", after=mark)
            await conn.cancel(session_id="ada")
            done = await slow
            assert done.stop_reason == "cancelled"
            assert len(editor.text(after=mark)) < len(SLOW), "the turn stopped before its end"

    async def second() -> None:
        editor = EditorClient()
        async with open_editor(editor, data, "ada", log=log) as (conn, _):
            await conn.load_session(cwd=str(project), session_id="ada", mcp_servers=[])
            said = [u["content"]["text"] for u in editor.of_kind("user_message_chunk")]
            assert said == ["hi", f"save {project}/notes.md first-draft", "slow"]
            assert REPLY in editor.text()
            assert "[cancelled]" in editor.text()
            replayed = editor.of_kind("tool_call_update")
            assert [u["status"] for u in replayed] == ["completed"]
            mark = len(editor.updates)
            assert (await prompt(conn, "ada", "hi")).stop_reason == "end_turn"
            assert editor.text(after=mark) == REPLY

    asyncio.run(first())
    asyncio.run(second())
    transcript = (data / "agents/ada/transcript.jsonl").read_text(encoding="utf-8")
    assert transcript.count('"type":"user"') == 4


def test_a_fact_noted_in_a_session_is_in_a_later_sessions_prompt_and_in_memory_list(tmp_path: Path) -> None:
    data, project = tmp_path / "data", _project(tmp_path)
    log = tmp_path / "acp.log"
    server = ChatServer()
    server.script(call("memory_note", {"text": "The user's dog is called Rex."}), say("Noted."), say("Hi again."))
    server.start()
    try:
        settings = model_settings(server)
        asyncio.run(_make_agents(data, ("mia", settings)))

        async def first() -> None:
            editor = EditorClient()
            async with open_editor(editor, data, "mia", log=log) as (conn, _):
                await conn.new_session(cwd=str(project), mcp_servers=[])
                done = await prompt(conn, "mia", "/remember The user's cat is called Miso.")
                assert done.stop_reason == "end_turn" and "Miso" in editor.text()
                record_id = re.findall(r"m-[0-9a-f]{12}", editor.text())[0]
                mark = len(editor.updates)
                await prompt(conn, "mia", f"/why {record_id}")
                assert editor.text(after=mark).startswith(record_id) and "history:" in editor.text(after=mark)
                assert server.requests == [], "a slash command is answered without a model turn"
                assert (await prompt(conn, "mia", "my dog is Rex")).stop_reason == "end_turn"

        async def later() -> None:
            editor = EditorClient()
            async with open_editor(editor, data, "mia", log=log) as (conn, _):
                await conn.new_session(cwd=str(project), mcp_servers=[])
                assert (await prompt(conn, "mia", "hello")).stop_reason == "end_turn"
                mark = len(editor.updates)
                await prompt(conn, "mia", "/memory")
                assert "Miso" in editor.text(after=mark) and "Rex" in editor.text(after=mark)

        asyncio.run(first())
        asyncio.run(later())
    finally:
        server.stop()
    chats = [r.body for r in server.requests if r not in server.extractions]
    assert "Miso" in system_text(chats[-1]) and "Rex" in system_text(chats[-1])
    listed = subprocess.run(
        [sys.executable, "-m", "hearth", "memory", "list", "mia", "--data-dir", str(data)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    assert "Miso" in listed.stdout and "Rex" in listed.stdout


def test_a_project_is_read_and_grepped_a_write_asks_and_another_agents_memory_stays_out(tmp_path: Path) -> None:
    data, project = tmp_path / "data", _project(tmp_path)
    log = tmp_path / "acp.log"
    asyncio.run(_make_agents(data, ("ada", scripted_model(*RULES)), ("bob", scripted_model(*RULES))))
    (data / "agents/bob/memory/private.txt").write_text("bob-secret-fact\n", encoding="utf-8")
    (project / "peek").symlink_to(data / "agents/bob/memory")
    (project / "linked.txt").symlink_to(data / "agents/bob/memory/private.txt")

    async def main() -> None:
        editor = EditorClient(answers=["reject_once", "allow_once"])
        async with open_editor(editor, data, "ada", log=log) as (conn, _):
            await conn.new_session(cwd=str(project), mcp_servers=[])
            mark = len(editor.updates)
            await prompt(conn, "ada", f"grep find_the_needle {project}")
            assert "src/app.py" in editor.text(after=mark) and "find_the_needle" in editor.text(after=mark)
            mark = len(editor.updates)
            await prompt(conn, "ada", f"read {project}/src/app.py")
            assert "return 42" in editor.text(after=mark)
            assert editor.asked == [], "reading and searching the project need no yes"

            mark = len(editor.updates)
            for sneaky in (f"read {project}/linked.txt", f"read {project}/peek/private.txt", f"grep secret {project}"):
                await prompt(conn, "ada", sneaky)
            assert "bob-secret-fact" not in json.dumps(editor.updates[mark:])
            statuses = [u["status"] for u in editor.of_kind("tool_call_update", mark)]
            assert statuses == ["failed", "failed", "completed"], "both reads are refused; grep skips the links"

            mark = len(editor.updates)
            await prompt(conn, "ada", f"save {project}/refused.txt no")
            await prompt(conn, "ada", f"save {project}/kept.txt yes")
            assert len(editor.asked) == 2, "every write in the project asks first"
            statuses = [u["status"] for u in editor.of_kind("tool_call_update", mark)]
            assert statuses == ["failed", "completed"]

    asyncio.run(main())
    assert not (project / "refused.txt").exists()
    assert (project / "kept.txt").read_text(encoding="utf-8") == "yes"
    assert (data / "agents/bob/memory/private.txt").read_text(encoding="utf-8") == "bob-secret-fact\n"


def test_the_stop_reason_says_how_the_model_stopped(tmp_path: Path) -> None:
    data, project = tmp_path / "data", _project(tmp_path)
    server = ChatServer()
    server.script(
        openai_stream(openai_chunk({"content": "cut off mid"}), openai_chunk({}, "length")),
        openai_stream(openai_chunk({"content": "I cannot help with that."}), openai_chunk({}, "content_filter")),
        say("Fine."),
    )
    server.start()
    try:
        settings = model_settings(server, memory=False)
        asyncio.run(_make_agents(data, ("max", settings)))

        async def main() -> None:
            async with open_editor(EditorClient(), data, "max", log=tmp_path / "acp.log") as (conn, _):
                await conn.new_session(cwd=str(project), mcp_servers=[])
                reasons = [(await prompt(conn, "max", text)).stop_reason for text in ("one", "two", "three")]
                assert reasons == ["max_tokens", "refusal", "end_turn"]

        asyncio.run(main())
    finally:
        server.stop()


def test_errors_an_editor_shows_unknown_agent_no_usable_model_and_no_host(tmp_path: Path) -> None:
    data, project = tmp_path / "data", _project(tmp_path)
    log = tmp_path / "acp.log"
    asyncio.run(_make_agents(data, ("keyless", {"model": {"provider": "openai", "name": "gpt-4o-mini"}})))
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory", encoding="utf-8")

    async def main() -> None:
        async with open_editor(EditorClient(), data, "nobody", log=log) as (conn, _):
            with pytest.raises(RequestError) as caught:
                await conn.new_session(cwd=str(project), mcp_servers=[])
            assert caught.value.code == NOT_FOUND and caught.value.data["agent"] == "nobody"
            assert "keyless" in caught.value.data["agents"]
            with pytest.raises(RequestError) as caught:
                await conn.load_session(cwd=str(project), session_id="nobody", mcp_servers=[])
            assert caught.value.code == NOT_FOUND
        async with open_editor(EditorClient(), data, "keyless", log=log) as (conn, _):
            await conn.new_session(cwd=str(project), mcp_servers=[])
            with pytest.raises(RequestError) as caught:
                await prompt(conn, "keyless", "hello")
            assert caught.value.code == PROVIDER_ERROR and caught.value.data["agent"] == "keyless"
            assert caught.value.data["fix"].startswith("hearth chat keyless --provider")
        async with open_editor(EditorClient(), blocked / "data", log=log) as (conn, _):
            with pytest.raises(RequestError) as caught:
                await conn.new_session(cwd=str(project), mcp_servers=[])
            assert caught.value.code == CONNECTION_CLOSED and caught.value.data["fix"] == "hearth host"

    asyncio.run(main())
    assert not (data / "agents/nobody").exists(), "a pinned agent that does not exist is never made"


def test_a_prompt_to_a_busy_agent_waits_its_turn_and_sessions_are_listed_resumed_and_told_what_was_ignored(
    tmp_path: Path,
) -> None:
    data, project = tmp_path / "data", _project(tmp_path)
    asyncio.run(_make_agents(data, ("ada", scripted_model(*RULES)), ("bob", scripted_model(*RULES))))

    async def main() -> None:
        editor = EditorClient()
        async with open_editor(editor, data, log=tmp_path / "acp.log") as (conn, _):
            listed = await conn.list_sessions()
            assert [(s.session_id, s.title) for s in listed.sessions] == [("ada", "ada"), ("bob", "bob")]
            remote = HttpMcpServer(type="http", name="remote", url="http://127.0.0.1:9/mcp", headers=[])
            await conn.resume_session(session_id="ada", cwd=str(project), mcp_servers=[remote])
            assert editor.of_kind("user_message_chunk") == [], "resume does not replay"

            mark = len(editor.updates)
            first = asyncio.create_task(prompt(conn, "ada", "medium"))
            await editor.wait_for(lambda u: u["sessionUpdate"] == "agent_message_chunk", after=mark)
            second = asyncio.create_task(prompt(conn, "ada", "hi"))
            await editor.wait_for(lambda u: u["sessionUpdate"] == "agent_thought_chunk", after=mark)
            assert [(await first).stop_reason, (await second).stop_reason] == ["end_turn", "end_turn"]
            text = editor.text(after=mark)
            assert text.startswith("[Hearth runs only local (stdio) MCP servers; remote was not added.]")
            assert text.index("first things first") < text.index(REPLY), "the second waited for the first"

            attached = [
                text_block("summarize this"),
                resource_link_block(name="app.py", uri=f"file://{project}/src/app.py"),
                resource_block(embedded_text_resource(f"file://{project}/README", "Read me, please.")),
            ]
            async with asyncio.timeout(60):
                done = await conn.prompt(session_id="ada", prompt=attached)
            assert done.stop_reason == "end_turn"

    asyncio.run(main())
    events = [
        json.loads(line) for line in (data / "agents/ada/transcript.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    said = [e for e in events if e["type"] == "user"]
    assert said[-1]["text"].endswith(f"summarize this\n\n[app.py](file://{project}/src/app.py)")
    assert said[-1]["attachments"] == [{"uri": f"file://{project}/README", "text": "Read me, please."}]
    assert not (data / "agents/bob/transcript.jsonl").exists() or "summarize" not in (
        data / "agents/bob/transcript.jsonl"
    ).read_text(encoding="utf-8")


def test_the_editors_mcp_server_becomes_the_agents_own_with_its_env_kept_as_a_secret(tmp_path: Path) -> None:
    data, project = tmp_path / "data", _project(tmp_path)
    rules = [_tool(r"(?m)^note (.+)$", "mcp__notes__add", text=r"\1"), *RULES]
    asyncio.run(_make_agents(data, ("ada", scripted_model(*rules))))
    notes = McpServerStdio(
        name="Notes",
        command=sys.executable,
        args=[str(REPO_ROOT / "tests/support/mcp_notes.py")],
        env=[EnvVariable(name="NOTES_TOKEN", value="tok-not-for-files")],
    )
    broken = McpServerStdio(name="gone", command="/nonexistent/server", args=[], env=[])

    async def main() -> None:
        editor = EditorClient(answers=["allow_once"])
        async with open_editor(editor, data, "ada", log=tmp_path / "acp.log") as (conn, _):
            await conn.new_session(cwd=str(project), mcp_servers=[notes])
            done = await prompt(conn, "ada", "note buy milk")
            assert done.stop_reason == "end_turn"
            assert editor.text().startswith("[Added the editor's MCP servers (notes) to ada")
            assert "tool said: added note 1: buy milk" in editor.text()
            assert [asked["title"] for asked in editor.asked] == ["notes: add"]
            mark = len(editor.updates)
            await conn.new_session(cwd=str(project), mcp_servers=[broken])
            await prompt(conn, "ada", "hi")
            assert editor.text(after=mark).startswith("[The editor's MCP servers were not added to ada:")

    asyncio.run(main())
    settings = json.loads((data / "agents/ada/settings.json").read_text(encoding="utf-8"))
    assert [(s["name"], s["secretEnv"]) for s in settings["mcpServers"]] == [
        ("notes", {"NOTES_TOKEN": "acp.ada.notes.notes_token"})
    ]
    assert "tok-not-for-files" not in (data / "agents/ada/settings.json").read_text(encoding="utf-8")


def test_without_an_agent_named_the_sessions_title_picks_the_agent_or_makes_it(tmp_path: Path) -> None:
    data, project = tmp_path / "data", _project(tmp_path)
    asyncio.run(_make_agents(data, ("ada", scripted_model(*RULES))))

    async def main() -> None:
        async with open_editor(EditorClient(), data, log=tmp_path / "acp.log") as (conn, _):
            found = await conn.new_session(cwd=str(project), mcp_servers=[], title="ADA")
            made = await conn.new_session(cwd=str(project), mcp_servers=[], title="Code Reviewer")
            by_folder = await conn.new_session(cwd=str(project), mcp_servers=[])
            assert [found.session_id, made.session_id, by_folder.session_id] == ["ada", "code-reviewer", "project"]
            assert (await prompt(conn, "ada", "hi")).stop_reason == "end_turn"

    asyncio.run(main())
    profile = json.loads((data / "agents/code-reviewer/profile.json").read_text(encoding="utf-8"))
    assert profile["name"] == "Code Reviewer"
    assert sorted(path.name for path in (data / "agents").iterdir()) == ["ada", "code-reviewer", "project"]


def test_while_an_editor_session_runs_hearth_chat_on_the_same_agent_continues_the_same_conversation(
    tmp_path: Path,
) -> None:
    """Both attach to the one running host: each turn's model request carries the other client's turn."""
    data, project = tmp_path / "data", _project(tmp_path)
    server = ChatServer()
    server.script(say("Reply to the editor."), say("Reply to the terminal."), say("Reply to the editor again."))
    server.start()
    try:
        settings = model_settings(server, memory=False)
        asyncio.run(_make_agents(data, ("ada", settings)))

        async def main() -> None:
            editor = EditorClient()
            async with open_editor(editor, data, "ada", log=tmp_path / "acp.log") as (conn, _):
                await conn.new_session(cwd=str(project), mcp_servers=[])
                assert (await prompt(conn, "ada", "first from the editor")).stop_reason == "end_turn"
                chat = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "hearth", "chat", "ada", "--data-dir", str(data),
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=REPO_ROOT,
                )  # fmt: skip
                async with asyncio.timeout(120):
                    out, _ = await chat.communicate(b"then from the terminal\n")
                assert chat.returncode == 0 and b"Reply to the terminal." in out
                mark = len(editor.updates)
                assert (await prompt(conn, "ada", "and the editor again")).stop_reason == "end_turn"
                assert editor.text(after=mark) == "Reply to the editor again."
                await conn.load_session(cwd=str(project), session_id="ada", mcp_servers=[])
                said = [u["content"]["text"] for u in editor.of_kind("user_message_chunk")]
                assert said == ["first from the editor", "then from the terminal", "and the editor again"]

        asyncio.run(main())
    finally:
        server.stop()
    sent = [json.dumps(request.body["messages"]) for request in server.requests]
    assert "first from the editor" in sent[1] and "Reply to the editor." in sent[1], "the terminal saw the editor"
    assert "then from the terminal" in sent[2] and "Reply to the terminal." in sent[2], "the editor saw the terminal"


def test_while_an_editor_session_runs_the_desktop_shell_shows_and_continues_the_same_conversation(
    tmp_path: Path,
) -> None:
    """The shell attaches to the host the editor's `hearth acp` started: it shows the editor's turn, and the
    editor's next model request carries the turn typed in the shell."""
    data, project = tmp_path / "data", _project(tmp_path)
    server = ChatServer()
    server.script(say("Reply to the editor."), say("Reply to the shell."), say("Reply to the editor again."))
    server.start()
    try:
        asyncio.run(_make_agents(data, ("ada", model_settings(server, memory=False))))

        async def main() -> None:
            editor = EditorClient()
            async with open_editor(editor, data, "ada", log=tmp_path / "acp.log") as (conn, _):
                await conn.new_session(cwd=str(project), mcp_servers=[])
                assert (await prompt(conn, "ada", "first from the editor")).stop_reason == "end_turn"
                app = HearthApp(data)
                async with app.run_test(size=(120, 40)) as pilot:
                    await until(pilot, lambda: app.current == "ada" and "Reply to the editor." in _replies(app))
                    assert [str(entry.render()) for entry in app.query(UserEntry)] == ["you: first from the editor"]
                    app.query_one("#prompt", Input).focus()
                    await type_text(pilot, "then from the shell")
                    await pilot.press("enter")
                    await until(pilot, lambda: "Reply to the shell." in _replies(app))
                mark = len(editor.updates)
                assert (await prompt(conn, "ada", "and the editor again")).stop_reason == "end_turn"
                assert editor.text(after=mark) == "Reply to the editor again."
                await conn.load_session(cwd=str(project), session_id="ada", mcp_servers=[])
                said = [u["content"]["text"] for u in editor.of_kind("user_message_chunk")]
                assert said == ["first from the editor", "then from the shell", "and the editor again"]

        asyncio.run(main())
    finally:
        server.stop()
    sent = [json.dumps(request.body["messages"]) for request in server.requests]
    assert "first from the editor" in sent[1] and "Reply to the editor." in sent[1], "the shell saw the editor"
    assert "then from the shell" in sent[2] and "Reply to the shell." in sent[2], "the editor saw the shell"


def _replies(app: HearthApp) -> list[str]:
    return [entry.text for entry in app.query(ReplyEntry)]
