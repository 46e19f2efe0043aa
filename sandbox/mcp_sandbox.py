"""The OS sandbox of an MCP server: the shell's sandbox, with less in it, and nothing the agent wrote on its paths.

A server sees the system read-only, the program it runs (its install prefix, a Python venv and its base
interpreter) and the absolute paths named in its arguments read-only, its agent's workspace writable at its
own path (`$HEARTH_WORKSPACE`), and its own directory `<agent>/mcp/<server>/`: that directory, read-only and
empty but for `home/`, is its working directory, so nothing resolved from the working directory (Python's
`-m`, npx's `node_modules` and `package.json`) is a file the agent can write; `home/` is its `HOME` and
caches (npm's, pip's, uv's), writable by it alone. No memory, no other file of the data dir; the network is
the server's own setting. Its environment is built here, nothing inherited: a short allowlist, then its `env`
and its secrets, less any loader variable (`sandbox.loader_vars`). A program whose install tree lies in the
data dir is refused.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass

from sandbox import landlock
from sandbox.confinement import SEARCH_PATH, base_env, bwrap_prefix, landlock_argv, system_trees
from sandbox.loader_vars import refused_variable
from sandbox.os_sandbox import Launch, ShellSandbox
from sandbox.paths import is_within
from sandbox.policy import Policy

__all__ = [
    "ServerProgram",
    "server_dir",
    "server_env",
    "server_home",
    "server_launch",
    "server_program_refusal",
    "server_read_paths",
]

_PSEUDO_ROOTS = ("/proc", "/sys", "/dev")
_SYSTEM_ROOTS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_PREFIX_PARTS = ("bin", "lib", "lib64", "pyvenv.cfg")


@dataclass(frozen=True, slots=True)
class ServerProgram:
    """What to run: the server's name, the resolved program, its arguments, its `env` and its network setting."""

    name: str
    program: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    network: bool = False


def server_dir(policy: Policy, name: str) -> str:
    """The server's own directory, its working directory: `<agent>/mcp/<name>` (a name is one slug)."""
    return f"{policy.agent_dir}/mcp/{name}"


def server_home(policy: Policy, name: str) -> str:
    """The server's `HOME` and caches, the one place beside the workspace it may write."""
    return f"{server_dir(policy, name)}/home"


def server_program_refusal(data_dir: str, program: str) -> str | None:
    """Why `program` may not run as an MCP server, or None: no part of its install tree may lie in the data dir.

    The path as named counts as well as the resolved one, so a venv in the workspace whose `python` links out
    is refused (its `pyvenv.cfg` and site-packages are the agent's to write), and so are a venv made from an
    interpreter in the data dir and a script whose `#!` interpreter lies there.

    Args:
        data_dir: the canonical data dir.
        program: the absolute path of the program, as named.
    """
    interpreter = _shebang(program)
    for root in [*_install_roots(program), *([interpreter] if interpreter else [])]:
        for path in dict.fromkeys((os.path.abspath(root), os.path.realpath(root))):
            if is_within(path, data_dir):
                return f"{path} lies in Hearth's data dir, where agents can write"
    return None


def _shebang(program: str) -> str | None:
    """The interpreter a script's `#!` line names, if it names an absolute one."""
    try:
        with open(program, "rb") as handle:
            first = handle.readline(512)
    except OSError:
        return None
    words = first[2:].decode("utf-8", "replace").split() if first.startswith(b"#!") else []
    return words[0] if words and words[0].startswith("/") else None


def _install_roots(program: str) -> list[str]:
    """The program, and the parts of the tree it is installed in that running it needs.

    For `<prefix>/bin/<name>` (as named, and resolved) that is `<prefix>`'s bin, lib and lib64 and a venv's
    `pyvenv.cfg` with its base interpreter's tree: never the whole prefix, which may be a home directory.
    """
    roots = [program]
    for path in dict.fromkeys((program, os.path.realpath(program))):
        roots.append(path)
        parent = os.path.dirname(path)
        if os.path.basename(parent) != "bin":
            continue
        prefix = os.path.dirname(parent)
        roots += [os.path.join(prefix, part) for part in _PREFIX_PARTS]
        config = os.path.join(prefix, "pyvenv.cfg")
        if os.path.isfile(config):
            home = _venv_home(config)
            if home is not None:
                roots += [os.path.join(home, part) for part in _PREFIX_PARTS]
    return roots


def _venv_home(config: str) -> str | None:
    """The prefix of the interpreter a venv was made from (its `home`, which names that prefix's bin)."""
    try:
        with open(config, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            home = os.path.realpath(value.strip())
            return os.path.dirname(home) if os.path.basename(home) == "bin" else home
    return None


def _wanted(program: ServerProgram) -> list[str]:
    return [*_install_roots(program.program), *(a for a in program.args if a.startswith("/") and "\x00" not in a)]


def _exposable(policy: Policy, path: str, *, landlock_rules: bool) -> bool:
    if path == "/" or any(is_within(path, root) for root in (*_PSEUDO_ROOTS, *_SYSTEM_ROOTS)):
        return False
    if is_within(path, policy.data_dir):
        return False
    return not (landlock_rules and is_within(policy.data_dir, path))


def server_read_paths(policy: Policy, program: ServerProgram, *, landlock_rules: bool = False) -> tuple[str, ...]:
    """The canonical paths beyond the system that the server may read.

    Args:
        policy: the run's policy (its data dir is never exposed).
        program: the resolved server program and its arguments.
        landlock_rules: True for Landlock, which cannot hide the data dir beneath a granted tree.

    Returns:
        Existing canonical paths, outermost first, with no path inside another and none inside the data dir.
    """
    found = [os.path.realpath(raw) for raw in _wanted(program)]
    found = [path for path in found if os.path.exists(path) and _exposable(policy, path, landlock_rules=landlock_rules)]
    outermost: list[str] = []
    for path in sorted(set(found), key=lambda p: (p.count("/"), p)):
        if not any(is_within(path, kept) for kept in outermost):
            outermost.append(path)
    return tuple(outermost)


def server_env(
    policy: Policy, program: ServerProgram, tmp_dir: str, kind: str, secrets: Mapping[str, str]
) -> tuple[tuple[str, str], ...]:
    """The server's whole environment: the allowlist, then its `env`, then its secrets; nothing inherited.

    Every name the MCP client would otherwise copy from the kernel's own environment is set here. Python is
    kept from its working directory and user site (`PYTHONSAFEPATH`, `PYTHONNOUSERSITE`); without the network,
    npm, pip and uv are told so, and fail at once instead of retrying for minutes. A loader variable in `env` or
    among the secrets is dropped (the kernel refuses such a server before it gets here).
    """
    home = server_home(policy, program.name)
    env = base_env(home, tmp_dir, kind, path=f"{os.path.dirname(program.program)}:{SEARCH_PATH}")
    env.update(PWD=server_dir(policy, program.name), SHELL="/bin/sh", USER="hearth", LOGNAME="hearth")
    env.update(HEARTH_WORKSPACE=policy.workspace, XDG_CACHE_HOME=f"{home}/.cache")
    env.update(PYTHONSAFEPATH="1", PYTHONNOUSERSITE="1", npm_config_update_notifier="false")
    if not program.network:
        env.update(npm_config_offline="true", PIP_NO_INDEX="1", UV_OFFLINE="1")
    for name, value in (*program.env, *secrets.items()):
        if refused_variable(name, value) is None:
            env[name] = value
    return tuple(env.items())


def _bwrap_argv(policy: Policy, bwrap: str, program: ServerProgram) -> list[str]:
    args = bwrap_prefix(bwrap, network=program.network)
    bound = server_read_paths(policy, program)
    for path in bound:
        args += ["--ro-bind", path, path]
    for source, alias in _aliases(policy, program, bound):
        args += ["--ro-bind", source, alias]
    # After the binds: an empty tmpfs over the data dir hides it even inside a bound tree; no memory comes back.
    args += ["--tmpfs", policy.data_dir]
    home = server_home(policy, program.name)
    args += ["--bind", policy.workspace, policy.workspace, "--bind", home, home]
    # Read-only once the two writable places are in: the working directory and its parents stay empty.
    args += ["--remount-ro", policy.data_dir, "--remount-ro", "/", "--chdir", server_dir(policy, program.name)]
    return [*args, "--", program.program, *program.args]


def _aliases(policy: Policy, program: ServerProgram, bound: tuple[str, ...]) -> list[tuple[str, str]]:
    """(target, link) for each named path that is a symlink outside the bound trees, so the name resolves inside."""
    aliases: list[tuple[str, str]] = []
    for raw in dict.fromkeys(_wanted(program)):
        real = os.path.realpath(raw)
        if raw == real or not any(is_within(real, tree) for tree in bound):
            continue
        if any(is_within(raw, tree) for tree in bound) or not _exposable(policy, raw, landlock_rules=False):
            continue
        aliases.append((real, raw))
    return aliases


def server_launch(
    sandbox: ShellSandbox,
    policy: Policy,
    program: ServerProgram,
    *,
    secrets: Mapping[str, str],
    tmp_dir: str | None = None,
) -> Launch:
    """The command that starts one MCP server confined as the module docstring says.

    Args:
        sandbox: the working OS sandbox (`sandbox.detect_shell_sandbox`).
        policy: the run's policy; its workspace and the server's home (`server_home`) must exist.
        program: the resolved program (see `resolve_program`), its arguments, env and network setting.
        secrets: environment variables holding secret values; they go to the environment only, never argv.
        tmp_dir: a private temp dir, required for Landlock.

    Returns:
        The argv, environment and cwd for the subprocess.

    Raises:
        ValueError: Landlock without a `tmp_dir`.
    """
    confined = dataclasses.replace(policy, network=program.network)
    if sandbox.kind == "bubblewrap":
        env = server_env(confined, program, "/tmp", sandbox.kind, secrets)
        return Launch(tuple(_bwrap_argv(confined, sandbox.executable, program)), env, "/")
    if tmp_dir is None:
        raise ValueError("a Landlock MCP server needs its own temp dir")
    cwd = server_dir(confined, program.name)
    read_only = (*system_trees(), *server_read_paths(confined, program, landlock_rules=True), cwd)
    rules = landlock.LandlockRules(
        read_only=read_only,
        read_write=(confined.workspace, server_home(confined, program.name), tmp_dir),
        network=program.network,
    )
    command = (program.program, *program.args)
    argv = landlock_argv(sandbox.executable, sandbox.landlock_abi, rules, cwd, command)
    return Launch(argv, server_env(confined, program, tmp_dir, sandbox.kind, secrets), "/")
