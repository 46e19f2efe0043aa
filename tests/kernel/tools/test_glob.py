"""The glob tool: relative patterns, `**` across levels, no symlink followed, the policy pruning the walk."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kernel.tools import GLOB
from kernel.tools.glob import glob_regex


def glob(env: Any, arun: Any, **arguments: Any) -> Any:
    return arun(GLOB.run(arguments, env.context()))


def tree(env: Any) -> None:
    for name in ("a.py", "b.md", "src/c.py", "src/deep/d.py", "src/deep/e.txt"):
        path = env.scratch / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x", encoding="utf-8")


def test_a_star_stays_inside_one_directory_level(env: Any, arun: Any) -> None:
    tree(env)
    assert glob(env, arun, pattern="*.py").content == "a.py"


def test_a_double_star_spans_any_number_of_levels(env: Any, arun: Any) -> None:
    tree(env)
    assert glob(env, arun, pattern="**/*.py").content.splitlines() == ["a.py", "src/c.py", "src/deep/d.py"]
    assert glob(env, arun, pattern="src/**").content.splitlines() == ["src/c.py", "src/deep/d.py", "src/deep/e.txt"]


def test_glob_under_a_path_names_results_from_the_workspace(env: Any, arun: Any) -> None:
    tree(env)
    assert glob(env, arun, pattern="*.txt", path="src/deep").content == "src/deep/e.txt"


def test_glob_lists_a_symlink_by_name_but_never_walks_into_it(env: Any, arun: Any, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.py").write_text("x", encoding="utf-8")
    os.symlink(outside, env.scratch / "outlink")
    (env.scratch / "near.py").write_text("x", encoding="utf-8")
    assert glob(env, arun, pattern="**/*").content.splitlines() == ["near.py", "outlink"]


def test_glob_over_all_agents_skips_the_neighbours_memory(env: Any, arun: Any) -> None:
    result = glob(env, arun, pattern="*/memory/*", path=str(env.data / "agents"))
    assert result.content == str(env.data / "agents/ada/memory/MEMORY.md")


def test_glob_reports_no_match_and_a_limit(env: Any, arun: Any) -> None:
    tree(env)
    assert glob(env, arun, pattern="*.rs").content == "no files match"
    limited = glob(env, arun, pattern="**/*", head_limit=2).content.splitlines()
    assert len(limited) == 3 and limited[-1].startswith("[more files may match")


def test_a_pattern_leaving_its_directory_is_denied(env: Any, arun: Any) -> None:
    for pattern in ("../*", "/etc/*", "src/../../*"):
        result = glob(env, arun, pattern=pattern)
        assert result.is_error and result.content.startswith("denied:"), pattern


def test_glob_regex_translates_classes_and_wildcards() -> None:
    regex = glob_regex("src/[!a]?.py")
    assert regex.match("src/bc.py") and not regex.match("src/ac.py") and not regex.match("src/b/c.py")
    assert glob_regex("**").match("any/depth/file") and glob_regex("a/**/b").match("a/b")
