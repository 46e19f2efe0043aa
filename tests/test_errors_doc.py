"""docs/errors.md is the one place the error tree is written down: every error class is in it."""

from __future__ import annotations

import ast

from tests.support.host_process import REPO_ROOT


def _error_classes() -> set[str]:
    names = set()
    for package in ("protocol", "host", "kernel", "sandbox", "desktop"):
        for path in (REPO_ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef) and node.name.endswith("Error"):
                    names.add(node.name)
    return names


def test_every_error_class_is_in_the_documented_tree() -> None:
    doc = (REPO_ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    missing = sorted(name for name in _error_classes() if name not in doc)
    assert missing == [], f"add these to docs/errors.md: {missing}"
