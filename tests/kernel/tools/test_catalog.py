"""The tool set: the shell only where an OS sandbox works, its approval flow, and errors instead of exceptions."""

from __future__ import annotations

from typing import Any

from kernel.tools import SHELL, ShellPool, local_tools, unavailable_tools_note
from sandbox import Unavailable, detect_shell_sandbox

BWRAP = detect_shell_sandbox("bubblewrap")
FILE_TOOLS = ["grep", "glob", "read_file", "list_dir", "write_file", "edit_file"]


def test_every_tool_is_offered_where_an_os_sandbox_works() -> None:
    tools = local_tools(BWRAP)
    assert list(tools) == [*FILE_TOOLS, "shell"]
    assert unavailable_tools_note(BWRAP) == ""
    for name, tool in tools.items():
        assert tool.definition.name == name and tool.definition.input_schema["type"] == "object"


def test_without_an_os_sandbox_there_is_no_shell_and_the_agent_is_told_why() -> None:
    missing = Unavailable("bubblewrap is not installed; Landlock is not enabled in this kernel")
    assert list(local_tools(missing)) == FILE_TOOLS
    note = unavailable_tools_note(missing)
    assert "no shell tool" in note and missing.reason in note


def test_the_shell_asks_with_the_exact_command_and_runs_it_when_approved(env: Any, arun: Any) -> None:
    pool = ShellPool(BWRAP)

    async def main() -> Any:
        try:
            return await SHELL.run({"command": "echo approved > ran.txt"}, env.context(pool))
        finally:
            await pool.close_all()

    result = arun(main())
    assert env.asked == [("shell", "echo approved > ran.txt")]
    assert result.content == "[exit code 0]" and (env.scratch / "ran.txt").exists()


def test_the_shell_runs_nothing_when_the_approval_is_refused(env: Any, arun: Any) -> None:
    env.answer = False
    pool = ShellPool(BWRAP)

    async def main() -> Any:
        try:
            return await SHELL.run({"command": "echo refused > ran.txt"}, env.context(pool))
        finally:
            await pool.close_all()

    result = arun(main())
    assert result.content.startswith("denied:") and not (env.scratch / "ran.txt").exists()


def test_a_hard_denied_command_is_refused_without_asking_even_if_everything_is_approved(env: Any, arun: Any) -> None:
    result = arun(SHELL.run({"command": "rm -rf ~"}, env.context(ShellPool(BWRAP))))
    assert result.content.startswith("denied:") and env.asked == []


def test_bad_arguments_are_error_results_never_exceptions(env: Any, arun: Any) -> None:
    tools = local_tools(BWRAP)
    ctx = env.context(ShellPool(BWRAP))
    cases = [
        ("shell", {}),
        ("shell", {"command": "   "}),
        ("shell", {"command": "ls", "timeout_seconds": 10_000}),
        ("shell", {"command": "ls", "timeout_seconds": True}),
        ("read_file", {"path": None}),
        ("write_file", {"path": "a.txt"}),
        ("glob", {"pattern": ""}),
        ("list_dir", {"path": ["a"]}),
    ]
    for name, arguments in cases:
        result = arun(tools[name].run(arguments, ctx))
        assert result.is_error and result.content.startswith("error:"), (name, arguments)
    assert arun(tools["grep"].run(["not", "an", "object"], ctx)).content.startswith("error:")
    assert env.asked == []
