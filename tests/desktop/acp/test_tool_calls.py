"""Hearth's tool calls as ACP tool calls: kinds, titles, locations only for absolute paths, results and diffs."""

from __future__ import annotations

from desktop.acp.tool_calls import RESULT_CHARS, describe_tool, tool_finished, tool_started


def test_each_local_tool_has_its_kind_and_a_title_a_person_reads() -> None:
    looks = {
        name: describe_tool(name, args)
        for name, args in [
            ("read_file", {"path": "/p/a.py", "offset": 10}),
            ("grep", {"pattern": "needle", "path": "/p"}),
            ("glob", {"pattern": "**/*.py"}),
            ("write_file", {"path": "/p/b.py", "content": "x"}),
            ("edit_file", {"path": "notes.md", "old_string": "a", "new_string": "b"}),
            ("shell", {"command": "ls -la"}),
            ("memory_note", {"text": "The user likes tea."}),
            ("mcp__notes__add", {"text": "milk"}),
        ]
    }
    assert {name: look.kind for name, look in looks.items()} == {
        "read_file": "read",
        "grep": "search",
        "glob": "search",
        "write_file": "edit",
        "edit_file": "edit",
        "shell": "execute",
        "memory_note": "other",
        "mcp__notes__add": "other",
    }
    assert looks["grep"].title == "Search for `needle` in /p"
    assert looks["shell"].title == "Run `ls -la`"
    assert looks["mcp__notes__add"].title == "notes: add"
    assert [(loc.path, loc.line) for loc in looks["read_file"].locations] == [("/p/a.py", 10)]
    assert looks["edit_file"].locations == [], "a workspace-relative path is no place the editor can open"


def test_a_started_call_is_in_progress_with_its_input() -> None:
    started = tool_started("c1", "shell", {"command": "make"})
    assert (started.status, started.kind, started.raw_input) == ("in_progress", "execute", {"command": "make"})


def test_a_finished_edit_shows_its_diff_and_a_failed_one_does_not() -> None:
    args = {"path": "/p/a.py", "old_string": "old", "new_string": "new"}
    done = tool_finished("c1", "edit_file", args, "edited /p/a.py", is_error=False)
    assert done.status == "completed" and done.content is not None
    diff = done.content[0].model_dump(by_alias=True, exclude_none=True)
    assert diff == {"type": "diff", "path": "/p/a.py", "oldText": "old", "newText": "new"}
    failed = tool_finished("c1", "edit_file", args, "denied: not approved", is_error=True)
    assert failed.status == "failed" and failed.content is not None
    assert [part.type for part in failed.content] == ["content"]


def test_a_long_result_is_cut_and_says_how_much_was_left_out() -> None:
    done = tool_finished("c1", "read_file", {"path": "/p/big"}, "x" * (RESULT_CHARS + 500), is_error=False)
    assert done.content is not None
    text = done.content[0].model_dump()["content"]["text"]
    assert text.startswith("x" * RESULT_CHARS) and text.endswith("(500 more characters)")
