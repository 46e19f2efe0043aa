"""`hearth acp` speaks only the wire: it imports the standard library, `protocol`, the `acp` package and the
desktop's own host client, never `host`, `kernel`, `sandbox` or pydantic directly."""

from __future__ import annotations

import ast
import sys

from tests.support.host_process import REPO_ROOT

ALLOWED_DESKTOP = {"desktop.acp", "desktop.client", "desktop.memory_cmd", "desktop.names"}


def test_the_acp_agent_imports_only_the_wire_the_acp_package_and_the_host_client() -> None:
    for path in (REPO_ROOT / "desktop" / "acp").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top in sys.stdlib_module_names or top in ("acp", "protocol", "__future__"):
                    continue
                assert top == "desktop" and any(module.startswith(ok) for ok in ALLOWED_DESKTOP), (path.name, module)
