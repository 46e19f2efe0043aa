"""What every OS-confined program shares (the shell, an MCP server): its view of the system and how it is entered.

The system is `/usr` and `/etc` read-only with the top-level links into them, as bubblewrap binds or as
Landlock trees. Under bubblewrap every namespace is unshared (the network only when asked), capabilities are
dropped, the program gets a new session, private /proc, /dev and /tmp, and dies with its parent. Under
Landlock the launcher script applies the rules and execs. The environment is never inherited: `base_env` is
the allowlist each confined program starts from.
"""

from __future__ import annotations

import os

from sandbox import landlock

__all__ = ["SEARCH_PATH", "base_env", "bwrap_prefix", "landlock_argv", "system_trees"]

SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
"""The `PATH` a confined program gets, and the only one its own programs are looked up on."""

_SYSTEM_DIRS = ("/usr", "/etc")
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def _system_binds() -> list[str]:
    args: list[str] = []
    for path in _SYSTEM_DIRS:
        args += ["--ro-bind-try", path, path]
    for path in _SYSTEM_LINKS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def bwrap_prefix(bwrap: str, *, network: bool) -> list[str]:
    """The start of every bubblewrap command line: the sandbox's flags, the system view, /proc, /dev and /tmp.

    Args:
        bwrap: the bubblewrap executable.
        network: share the host's network (and bind its resolver configuration when it lives elsewhere).

    Returns:
        The argv so far; the caller adds its own binds, `--`, and the program.
    """
    args = [bwrap, "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"]
    if network:
        args.append("--share-net")
    args += _system_binds()
    if network:
        resolv = os.path.realpath("/etc/resolv.conf")
        if not resolv.startswith(("/etc/", "/usr/")):
            args += ["--ro-bind-try", resolv, resolv]
    return [*args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]


def system_trees() -> tuple[str, ...]:
    """The system view as canonical trees Landlock can grant read-only (links resolved, missing ones left out)."""
    return tuple(dict.fromkeys(os.path.realpath(p) for p in (*_SYSTEM_DIRS, *_SYSTEM_LINKS) if os.path.exists(p)))


def landlock_argv(
    python: str, abi: int, rules: landlock.LandlockRules, cwd: str, command: tuple[str, ...]
) -> tuple[str, ...]:
    """The command that runs `command` in `cwd` under `rules`: the Landlock launcher script, isolated from site."""
    spec = landlock.LaunchSpec(rules, abi, cwd, command)
    return (python, "-I", "-S", landlock.__file__, spec.to_json())


def base_env(home: str, tmp_dir: str, kind: str, *, path: str = SEARCH_PATH) -> dict[str, str]:
    """The variables every confined program gets, and nothing else of the caller's environment."""
    return {
        "PATH": path,
        "HOME": home,
        "TMPDIR": tmp_dir,
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "HEARTH_SANDBOX": kind,
    }
