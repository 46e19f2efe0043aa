"""Why an MCP server most likely failed to start, told from its program, its network setting and its stderr.

The causes a person can act on, first match wins: a version manager's shim (it needs the manager's files,
which the sandbox does not show), no network for a server that fetches its package or reaches a host, a
module its interpreter does not have, a path that is not there inside the sandbox. Each names what to change.
None when nothing points anywhere: the error and the stderr tail say what there is. Pure functions.
"""

from __future__ import annotations

import os
import re

from kernel.mcp.spec import ServerSpec

__all__ = ["PACKAGE_RUNNERS", "is_package_runner", "likely_cause"]

PACKAGE_RUNNERS = frozenset({"npx", "npm", "pnpm", "pnpx", "yarn", "bunx", "bun", "uvx", "uv", "pipx", "deno"})
"""Programs that fetch the server's package from a registry when it is not in their cache."""

_NETWORK = re.compile(
    r"\b(?:ENOTCACHED|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ENETUNREACH)\b"
    r"|(?i:getaddrinfo|temporary failure in name resolution|name or service not known|network is unreachable"
    r"|could not resolve host|failed to establish a new connection|no matching distribution found)"
)
_PY_MODULE = re.compile(r"No module named '?([\w.]+)")
_NODE_MODULE = re.compile(r"Cannot find (?:module|package) '([^']+)'")
_PATH = re.compile(
    r"No such file or directory: '([^']+)'|ENOENT[^'\n]*'([^']+)'|can't open file '([^']+)'"
    r"|(/[^\s:'\"]+): No such file or directory"
)
_SEES = (
    "the system, its program's install tree, the absolute paths in its arguments, the agent's workspace "
    "($HEARTH_WORKSPACE) and its own home; a relative path starts in its own empty directory"
)


def is_package_runner(program: str) -> bool:
    """Whether `program` (a path, as named) is npx, uvx or another runner that may fetch the server first."""
    return os.path.basename(program) in PACKAGE_RUNNERS


def likely_cause(spec: ServerSpec, program: str, tail: str) -> str | None:
    """The likely cause of a failed start, and what to do about it, or None.

    Args:
        spec: the server (its command as configured, its network setting).
        program: the program the kernel ran, as named.
        tail: the end of its stderr (secrets withheld).
    """
    if os.path.basename(os.path.dirname(program)) == "shims":
        name = os.path.basename(program)
        return (
            f"{program} is a version manager's shim: it needs the manager's own files, which the sandbox does not "
            f"show; give the real program's path instead (`pyenv which {name}` or `asdf which {name}` prints it)"
        )
    silent_runner = is_package_runner(program) and not tail.strip()
    if not spec.network and (_NETWORK.search(tail) or silent_runner):
        fix = "give it the network (`hearth mcp add --network`, or `network: true`)"
        if is_package_runner(program):
            runner = os.path.basename(program)
            return f"the server has no network, and {runner} fetches its package from the registry first: {fix}"
        return f"the server has no network: {fix}"
    found = _PY_MODULE.search(tail)
    if found:
        return (
            f"{program} has no module {found[1]!r}: a server's modules are found only where its interpreter "
            "installs them, never in its working directory or the agent's workspace"
        )
    found = _NODE_MODULE.search(tail)
    if found:
        return (
            f"Node found no module {found[1]!r}: a server's packages are found beside its script or in npx's "
            "cache, never in its working directory or the agent's workspace"
        )
    found = _PATH.search(tail)
    if found:
        path = next(group for group in found.groups() if group)
        return f"{path} is not there inside the server's sandbox, which shows {_SEES}"
    return None
