"""jsonrpcserver is confined to protocol/dispatch.py, the layers import only downwards, and the clients
in desktop/ speak only the wire."""

from __future__ import annotations

import ast
import sys

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
        for package in ("protocol", "host", "kernel", "sandbox", "desktop", "hearth")
        for path, names in _imports(package).items()
        if "jsonrpcserver" in names
    }
    assert users == {"protocol/dispatch.py"}


def test_only_the_kernels_mcp_package_and_hearth_mcp_serve_use_the_mcp_sdk() -> None:
    """The kernel is the SDK's client (agents' servers); `hearth mcp-serve` is its server side, a desktop client."""
    users = {
        path
        for package in ("protocol", "host", "kernel", "sandbox", "desktop", "hearth")
        for path, names in _imports(package).items()
        if names & {"mcp", "mcp_types"}
    }
    assert users and all(path.startswith("kernel/mcp/") or path == "desktop/mcp_serve.py" for path in users), users


def test_desktop_speaks_only_the_wire() -> None:
    """The clients import `protocol`, the standard library, and the shell's own toolkit; never a process's insides."""
    allowed_third_party = {"protocol", "desktop", "textual", "textual_serve", "aiohttp", "rich"}
    for path, names in _imports("desktop").items():
        assert not names & {"host", "kernel", "sandbox"}, f"{path} imports {names & {'host', 'kernel', 'sandbox'}}"
        # `hearth acp` speaks the editor's side with the Agent Client Protocol's own package.
        allowed = allowed_third_party | ({"acp"} if path.startswith("desktop/acp/") else set())
        allowed |= {"mcp"} if path == "desktop/mcp_serve.py" else set()
        outside = {name for name in names - allowed if name not in sys.stdlib_module_names}
        assert not outside, f"{path} imports {outside}"


def test_dependencies_flow_one_way() -> None:
    forbidden = {
        "protocol": {"host", "kernel", "sandbox", "desktop", "hearth"},
        "sandbox": {"host", "kernel", "desktop", "hearth"},
        "kernel": {"host", "desktop", "hearth"},
        "host": {"kernel", "desktop", "hearth"},
        "desktop": {"host", "kernel", "sandbox", "hearth"},
    }
    for package, banned in forbidden.items():
        for path, names in _imports(package).items():
            assert not names & banned, f"{path} imports {names & banned}"


def test_the_hearth_command_imports_nothing_heavy_at_module_level() -> None:
    """`hearth --help` stays instant: host, desktop and the wire models are imported only inside functions."""
    path = REPO_ROOT / "hearth" / "cli.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top_level = {
        alias.name.split(".")[0] if isinstance(node, ast.Import) else (node.module or "").split(".")[0]
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert top_level <= {"__future__", "argparse", "logging", "sys"}
