"""The grep tool: ripgrep as an argv list, output shaped for a model, bounded, and never obeying the pattern."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from kernel.tools import find_rg, grep_files, make_grep_tool, resolve_rg
from kernel.tools.grep import RG_FLAGS, SEARCH_FLAGS
from sandbox import TrustedProgram, Unavailable

GREP = make_grep_tool()


def grep(env: Any, arun: Any, **arguments: Any) -> Any:
    return arun(GREP.run(arguments, env.context()))


def tree(env: Any) -> None:
    (env.scratch / "src").mkdir()
    (env.scratch / "src" / "app.py").write_text("import os\n\ndef main():\n    return 'Hello'\n", encoding="utf-8")
    (env.scratch / "src" / "util.py").write_text("def helper():\n    return 'hello'\n", encoding="utf-8")
    (env.scratch / "README.md").write_text("Say hello\nand goodbye\n", encoding="utf-8")


def test_grep_lists_matching_files_by_default(env: Any, arun: Any) -> None:
    tree(env)
    result = grep(env, arun, pattern="hello")
    assert not result.is_error
    assert result.content.splitlines() == ["README.md", "src/util.py"]


def test_grep_content_mode_shows_paths_and_line_numbers(env: Any, arun: Any) -> None:
    tree(env)
    result = grep(env, arun, pattern="return", output_mode="content")
    assert result.content.splitlines() == ["src/app.py:4:    return 'Hello'", "src/util.py:2:    return 'hello'"]


def test_grep_count_mode_counts_matching_lines_per_file(env: Any, arun: Any) -> None:
    tree(env)
    result = grep(env, arun, pattern="e", output_mode="count", path="src")
    assert result.content.splitlines() == ["src/app.py:2", "src/util.py:2"]


def test_grep_case_insensitive_finds_both_spellings(env: Any, arun: Any) -> None:
    tree(env)
    assert grep(env, arun, pattern="HELLO", case_insensitive=True).content.splitlines() == [
        "README.md",
        "src/app.py",
        "src/util.py",
    ]
    assert grep(env, arun, pattern="HELLO").content == "no matches"


def test_grep_glob_and_type_filters_narrow_the_files(env: Any, arun: Any) -> None:
    tree(env)
    assert grep(env, arun, pattern="hello", glob="*.md").content == "README.md"
    assert grep(env, arun, pattern="(?i)hello", type="py").content.splitlines() == ["src/app.py", "src/util.py"]


def test_grep_context_lines_are_marked_and_groups_separated(env: Any, arun: Any) -> None:
    tree(env)
    result = grep(env, arun, pattern="def", output_mode="content", path="src", after=1)
    assert result.content.splitlines() == [
        "src/app.py:3:def main():",
        "src/app.py-4-    return 'Hello'",
        "--",
        "src/util.py:1:def helper():",
        "src/util.py-2-    return 'hello'",
    ]


def test_grep_pages_with_head_limit_and_offset(env: Any, arun: Any) -> None:
    (env.scratch / "many.txt").write_text("".join(f"item {n}\n" for n in range(1, 8)), encoding="utf-8")
    first = grep(env, arun, pattern="item", output_mode="content", head_limit=3)
    assert first.content.splitlines() == [
        "many.txt:1:item 1",
        "many.txt:2:item 2",
        "many.txt:3:item 3",
        "[more results: call again with offset=3]",
    ]
    last = grep(env, arun, pattern="item", output_mode="content", head_limit=3, offset=6)
    assert last.content.splitlines() == ["many.txt:7:item 7"]


def test_a_pattern_that_looks_like_an_option_is_searched_not_obeyed(env: Any, arun: Any, tmp_path: Path) -> None:
    marker = tmp_path / "pre-ran"
    script = env.scratch / "pre.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n", encoding="utf-8")
    script.chmod(0o755)
    (env.scratch / "doc.txt").write_text("run rg --pre=/bin/sh to preprocess\n", encoding="utf-8")
    result = grep(env, arun, pattern="--pre=/bin/sh", output_mode="content")
    assert result.content == "doc.txt:1:run rg --pre=/bin/sh to preprocess"
    option_like = grep(env, arun, pattern=f"--pre={script}", output_mode="content")
    assert option_like.content == "no matches"
    assert not marker.exists()


def test_a_pattern_that_is_not_an_option_does_match_its_literal(env: Any, arun: Any) -> None:
    (env.scratch / "flags.txt").write_text("use -v to invert\n", encoding="utf-8")
    assert grep(env, arun, pattern="-v", output_mode="content").content == "flags.txt:1:use -v to invert"


def test_grep_does_not_follow_symlinks_in_the_tree(env: Any, arun: Any, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.txt").write_text("needle outside\n", encoding="utf-8")
    os.symlink(outside, env.scratch / "outlink")
    (env.scratch / "near.txt").write_text("needle inside\n", encoding="utf-8")
    assert grep(env, arun, pattern="needle").content == "near.txt"
    assert env.asked == []


def test_grep_outside_the_data_dir_asks_and_respects_a_refusal(env: Any, arun: Any, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.txt").write_text("needle outside\n", encoding="utf-8")
    env.answer = False
    refused = grep(env, arun, pattern="needle", path=str(outside))
    assert refused.is_error and refused.content.startswith("denied:")
    assert env.asked == [("read", str(outside))]
    env.answer = True
    assert grep(env, arun, pattern="needle", path=str(outside)).content == f"{outside}/far.txt"


def test_a_bad_regex_is_a_clear_error(env: Any, arun: Any) -> None:
    tree(env)
    result = grep(env, arun, pattern="(unclosed")
    assert result.is_error and "regex" in result.content and "unclosed" not in result.content


IGNORE_FILES = [".ignore", ".rgignore", ".gitignore", ".git/info/exclude"]


@pytest.mark.parametrize("name", IGNORE_FILES)
def test_an_ignore_file_linked_to_another_agents_memory_is_never_read(env: Any, arun: Any, name: str) -> None:
    """Issue 9: rg opened ignore files by name through symlinks and printed their unparseable line."""
    ledger = env.data / "agents" / "bob" / "memory" / "ledger.jsonl"
    ledger.write_text('{"text": "BOB-PRIVATE-FACT [unclosed"}\n', encoding="utf-8")
    link = env.scratch / name
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(ledger, link)
    (env.scratch / "notes.txt").write_text("a needle here\n", encoding="utf-8")
    for arguments in ({"pattern": "needle"}, {"pattern": "(bad"}, {"pattern": "needle", "path": str(link.parent)}):
        result = grep(env, arun, **arguments, output_mode="content")
        assert "BOB-PRIVATE-FACT" not in result.content, result.content
        assert "unclosed" not in result.content
    assert grep(env, arun, pattern="needle").content == "notes.txt"


def test_ignore_rules_in_the_workspace_do_not_hide_files(env: Any, arun: Any) -> None:
    (env.scratch / ".gitignore").write_text("hidden.txt\n", encoding="utf-8")
    (env.scratch / ".ignore").write_text("*.log\n", encoding="utf-8")
    (env.scratch / "hidden.txt").write_text("needle\n", encoding="utf-8")
    (env.scratch / "run.log").write_text("needle\n", encoding="utf-8")
    assert grep(env, arun, pattern="needle").content.splitlines() == ["hidden.txt", "run.log"]


def test_rg_is_told_to_read_no_config_and_no_ignore_file_of_any_kind() -> None:
    for flag in (
        "--no-config",
        "--no-ignore",
        "--no-ignore-dot",
        "--no-ignore-exclude",
        "--no-ignore-global",
        "--no-ignore-parent",
        "--no-ignore-vcs",
        "--no-ignore-files",
        "--no-messages",
    ):
        assert flag in RG_FLAGS
    assert {"--no-config", "--no-messages", "--no-pre", "--json"} <= set(SEARCH_FLAGS)
    assert not [flag for flag in (*RG_FLAGS, *SEARCH_FLAGS) if flag.startswith(("--ignore-file", "--pre="))]


def test_a_grep_without_a_safe_rg_says_why_and_runs_nothing(env: Any, arun: Any) -> None:
    result = arun(make_grep_tool(rg=Unavailable("ripgrep (rg) is not installed")).run({"pattern": "x"}, env.context()))
    assert result.is_error and "not installed" in result.content


def test_an_rg_an_agent_could_write_is_refused_and_never_run(env: Any, arun: Any) -> None:
    """Issue 9: the kernel never executes a program an agent can write."""
    marker = env.data / "ran"
    fake = env.data / "agents" / "bob" / "scratch" / "rg"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    fake.chmod(0o755)
    program = resolve_rg(str(fake))
    assert isinstance(program, TrustedProgram)
    (env.scratch / "a.txt").write_text("needle\n", encoding="utf-8")
    result = arun(make_grep_tool(rg=program).run({"pattern": "needle"}, env.context()))
    assert result.is_error and "refused" in result.content and not marker.exists()
    assert grep(env, arun, pattern="needle").content == "a.txt"


def test_bad_arguments_are_error_results(env: Any, arun: Any) -> None:
    for arguments in (
        {},
        {"pattern": ""},
        {"pattern": "x", "output_mode": "lines"},
        {"pattern": "x", "type": "p y"},
        {"pattern": "x", "head_limit": 0},
        {"pattern": "a\x00b"},
    ):
        result = arun(GREP.run(arguments, env.context()))
        assert result.is_error and result.content.startswith("error:"), arguments


def test_grep_times_out_with_a_clear_message(env: Any, arun: Any) -> None:
    tree(env)
    result = arun(make_grep_tool(timeout=0).run({"pattern": "hello"}, env.context()))
    assert result.is_error and "timed out" in result.content


def test_grep_output_is_capped(env: Any, arun: Any) -> None:
    (env.scratch / "long.txt").write_text("".join(f"match line {n:04}\n" for n in range(500)), encoding="utf-8")
    result = arun(
        make_grep_tool(output_cap=300).run(
            {"pattern": "match", "output_mode": "content", "head_limit": 500}, env.context()
        )
    )
    assert len(result.content) < 500 and "characters omitted" in result.content


def test_the_rg_binary_is_taken_from_beside_the_running_python_first() -> None:
    beside = os.path.join(os.path.dirname(sys.executable), "rg")
    assert os.path.exists(beside)
    assert find_rg() == beside


def _linked_project(env: Any, tmp_path: Path) -> Path:
    """A project holding a hard link to bob's memory, and two of its own files linked to each other (as pnpm does)."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    os.link(env.data / "agents" / "bob" / "memory" / "MEMORY.md", project / "src" / "bob.md")
    (project / "src" / "a.py").write_text("tea = 'mine'\n", encoding="utf-8")
    os.link(project / "src" / "a.py", project / "src" / "b.py")
    return project


def test_grep_leaves_out_hard_links_to_protected_files_and_searches_linked_project_files(
    env: Any, arun: Any, tmp_path: Path
) -> None:
    """Issue 21.6: rg opened the link by name and printed another agent's memory."""
    project = _linked_project(env, tmp_path)
    for mode in ("content", "files", "count"):
        result = grep(env, arun, pattern="tea", path=str(project), output_mode=mode)
        assert "bob likes tea" not in result.content and "bob.md" not in result.content, result.content
        assert f"{project}/src/a.py" in result.content and f"{project}/src/b.py" in result.content
        assert result.content.endswith(
            "[1 file(s) left out: hard links to a file this agent may not read "
            "(another agent's memory or private files, or a host file)]"
        )
    only = grep(env, arun, pattern="tea", path=str(project / "src" / "bob.md"), output_mode="content")
    assert "bob likes tea" not in only.content and only.content.startswith("no matches")


def test_a_hard_link_made_after_the_listing_is_still_left_out(
    env: Any, arun: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """The check is of the opened descriptor, after the listing named the file: a swap in between is caught."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "x.md").write_text("plain tea\n", encoding="utf-8")
    vet = grep_files.Vetter.vet

    def swap_then_vet(self: Any, listed: list[str]) -> Any:
        (project / "x.md").unlink()
        os.link(env.data / "agents" / "bob" / "memory" / "MEMORY.md", project / "x.md")
        return vet(self, listed)

    monkeypatch.setattr(grep_files.Vetter, "vet", swap_then_vet)
    result = grep(env, arun, pattern="tea", path=str(project), output_mode="content")
    assert "bob likes tea" not in result.content and "1 file(s) left out" in result.content


def test_a_file_flipping_between_a_plain_file_and_a_hard_link_never_shows_the_linked_bytes(
    env: Any, arun: Any, tmp_path: Path
) -> None:
    project, spare = tmp_path / "project", tmp_path / "spare"
    project.mkdir()
    spare.mkdir()
    memory = env.data / "agents" / "bob" / "memory" / "MEMORY.md"
    (project / "x.md").write_text("plain tea\n", encoding="utf-8")
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            os.link(memory, spare / "link")
            os.replace(spare / "link", project / "x.md")
            (spare / "plain").write_text("plain tea\n", encoding="utf-8")
            os.replace(spare / "plain", project / "x.md")

    flipper = threading.Thread(target=flip)
    flipper.start()
    try:
        seen = [grep(env, arun, pattern="tea", path=str(project), output_mode="content").content for _ in range(40)]
    finally:
        stop.set()
        flipper.join()
    assert not [text for text in seen if "bob likes tea" in text]
    assert any("plain tea" in text for text in seen), "the plain file is searched between the flips"


def test_a_binary_file_is_left_out_whole_as_a_directory_search_skips_it(env: Any, arun: Any) -> None:
    (env.scratch / "blob.dat").write_bytes(b"needle\x00\x01needle\n")
    (env.scratch / "text.txt").write_text("needle\n", encoding="utf-8")
    for mode in ("content", "files", "count"):
        result = grep(env, arun, pattern="needle", output_mode=mode)
        assert "blob.dat" not in result.content and "text.txt" in result.content
