"""Environment variables an MCP server may not be given: the ones that say where a program finds its code.

A loader variable (the dynamic linker's, an interpreter's module path or start-up hook, a shell's start-up
file, git's exec path and config, a package manager's cache, index or config) can point a server at a file
the agent wrote, so none is accepted in a server's `env` or `secretEnv`, whatever its value; nor is a
variable the sandbox sets itself. Names compare without regard to case (npm reads its variables either way).
A few harmless members of a refused family (`PYTHONUNBUFFERED`, `NODE_ENV`, `GIT_AUTHOR_NAME`, a package
index given as an http(s) URL) are let through. `refused_variable` is pure; the host asks it when settings are
written and the kernel again before a server starts.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["SANDBOX_SET", "refused_variable", "refused_variables"]

SANDBOX_SET = frozenset({"PATH", "HOME", "PWD", "TMPDIR", "XDG_CACHE_HOME"})
"""Set by the sandbox for every server (see `sandbox.mcp_sandbox.server_env`), with the `HEARTH_` ones."""

_LOADER = "it tells a program where to load code from, which could be a file the agent wrote"

_EXACT = {
    # glibc loads modules and locale data by these
    "GCONV_PATH": _LOADER,
    "GETCONF_DIR": _LOADER,
    "LOCPATH": _LOADER,
    "NLSPATH": _LOADER,
    "HOSTALIASES": _LOADER,
    "NODE_OPTIONS": _LOADER,
    "NODE_PATH": _LOADER,
    "NODE_REPL_EXTERNAL_MODULE": _LOADER,
    "NODE_ICU_DATA": _LOADER,
    "BASH_ENV": "a shell runs the file it names at start",
    "ENV": "a shell runs the file it names at start",
    "ZDOTDIR": "zsh runs the start-up files of the directory it names",
    "SHELLOPTS": "it changes how every shell of the server starts",
    "BASHOPTS": "it changes how every shell of the server starts",
    "PERL5LIB": _LOADER,
    "PERLLIB": _LOADER,
    "PERL5OPT": _LOADER,
    "PERL5DB": _LOADER,
    "RUBYLIB": _LOADER,
    "RUBYOPT": _LOADER,
    "GEM_HOME": _LOADER,
    "GEM_PATH": _LOADER,
    "BUNDLE_GEMFILE": _LOADER,
    "CLASSPATH": _LOADER,
    "JAVA_TOOL_OPTIONS": _LOADER,
    "_JAVA_OPTIONS": _LOADER,
    "JDK_JAVA_OPTIONS": _LOADER,
    "OPENSSL_CONF": _LOADER,
    "OPENSSL_MODULES": _LOADER,
    "OPENSSL_ENGINES": _LOADER,
    "COREPACK_HOME": _LOADER,
}

_PREFIXES = (
    ("LD_", "the dynamic linker loads libraries by it"),
    ("DYLD_", "the dynamic linker loads libraries by it"),
    ("PYTHON", _LOADER),
    ("GIT_", "git runs programs, hooks and config by it"),
    ("NPM_CONFIG_", "npm reads its cache, config and scripts by it"),
    ("YARN_", "a package manager reads its cache, config and scripts by it"),
    ("PNPM_", "a package manager reads its cache, config and scripts by it"),
    ("PIP_", "pip installs from the indexes, links and config it names"),
    ("UV_", "uv installs from the indexes, links and config it names"),
    ("PIPX_", "pipx installs from the indexes, links and config it names"),
    ("LUA_", _LOADER),
    ("XDG_", "programs read their configuration and data from the directories it names"),
    ("HEARTH_", "the sandbox sets it"),
)

_HARMLESS = frozenset(
    {
        "PYTHONUNBUFFERED",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "PYTHONFAULTHANDLER",
        "PYTHONOPTIMIZE",
        "PYTHONDEVMODE",
        "PYTHONTRACEMALLOC",
        "PYTHONNODEBUGRANGES",
        "PYTHONWARNDEFAULTENCODING",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
        "GIT_TERMINAL_PROMPT",
        "NPM_CONFIG_LOGLEVEL",
        "NPM_CONFIG_FUND",
        "NPM_CONFIG_AUDIT",
        "NPM_CONFIG_UPDATE_NOTIFIER",
        "NPM_CONFIG_YES",
        "NPM_CONFIG_PROGRESS",
        "NPM_CONFIG_COLOR",
    }
)

_INDEXES = frozenset(
    {
        "NPM_CONFIG_REGISTRY",
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "UV_INDEX_URL",
        "UV_EXTRA_INDEX_URL",
        "UV_DEFAULT_INDEX",
        "UV_INDEX",
    }
)


def refused_variable(name: str, value: str | None = None) -> str | None:
    """Why a server may not be given the variable `name` (set to `value` when known), or None when it may.

    Args:
        name: the variable's name, as configured.
        value: its value; only a package index URL's is looked at (a secret's value is not known here).

    Returns:
        A short reason, fit to show the person with the variable's name.
    """
    upper = name.upper()
    if upper in SANDBOX_SET:
        return "the sandbox sets it"
    if upper in _INDEXES:
        if value is None or value.startswith(("https://", "http://")):
            return None
        return "a package index must be an http(s) URL (a local path could be one the agent wrote)"
    if upper in _HARMLESS:
        return None
    if upper in _EXACT:
        return _EXACT[upper]
    for prefix, reason in _PREFIXES:
        if upper.startswith(prefix):
            return reason
    return None


def refused_variables(env: Iterable[tuple[str, str | None]]) -> list[str]:
    """One line per refused variable of `env` (name, value), naming it: `LD_PRELOAD (the dynamic linker ...)`."""
    found = []
    for name, value in env:
        reason = refused_variable(name, value)
        if reason is not None:
            found.append(f"{name} ({reason})")
    return found
