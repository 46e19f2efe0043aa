"""jsonrpcserver is confined to protocol/dispatch.py, and the layers import only downwards."""

from __future__ import annotations

import ast

from tests.support.host_process import REPO_ROOT


def _imports(package: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (REPO_ROOT / package).rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
        found[str(path.relative_to(REPO_ROOT))] = names
    return found


def test_only_the_dispatch_module_imports_jsonrpcserver() -> None:
    users = {
        path
        for package in ("protocol", "host", "kernel", "sandbox")
        for path, names in _imports(package).items()
        if "jsonrpcserver" in names
    }
    assert users == {"protocol/dispatch.py"}


def test_dependencies_flow_one_way() -> None:
    forbidden = {
        "protocol": {"host", "kernel", "sandbox"},
        "sandbox": {"host", "kernel"},
        "kernel": {"host"},
        "host": {"kernel"},
    }
    for package, banned in forbidden.items():
        for path, names in _imports(package).items():
            assert not names & banned, f"{path} imports {names & banned}"
