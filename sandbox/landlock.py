"""Landlock, the kernel's unprivileged path-based access control: the shell's sandbox where bubblewrap is missing.

`restrict_self` confines the calling process and every child for good: read-only and read-write trees, a few
devices, TCP off unless the network is allowed (ABI 4+), no signals or abstract sockets outside the sandbox
(ABI 6+). Run as a script it is the shell launcher: no-new-privileges, no capabilities, the ruleset, then exec.
Stdlib only, so it can run as `python -I -S landlock.py SPEC` before any package is importable. Weaker than
bubblewrap: UDP, connecting to an existing UNIX socket and processes that leave the session are not confined.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import stat
import sys
from dataclasses import dataclass

__all__ = ["LandlockRules", "LaunchSpec", "abi_version", "restrict_self", "launch"]

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same numbers on every architecture
_VERSION_FLAG = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS, _PR_SET_PDEATHSIG, _PR_CAPBSET_DROP, _PR_CAP_AMBIENT = 38, 1, 24, 47

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV = (1 << n for n in range(9, 16))
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@dataclass(frozen=True, slots=True)
class LandlockRules:
    """What the confined process may reach; everything else on the filesystem is refused."""

    read_only: tuple[str, ...]
    read_write: tuple[str, ...]
    devices: tuple[str, ...] = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
    network: bool = False


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The Landlock ABI version of the running kernel, 0 when Landlock is missing or disabled."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(ctypes.c_long(_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION_FLAG))
    return max(int(version), 0)


def _handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def restrict_self(rules: LandlockRules, abi: int) -> None:
    """Confine this process and its future children to `rules`, irreversibly.

    Raises:
        OSError: Landlock refused the ruleset (missing paths are skipped, not errors).
    """
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    handled = _handled_fs(abi)
    attr = _RulesetAttr(handled, 0, 0)
    size = 8
    if abi < 4 and not rules.network:
        raise OSError(errno.EOPNOTSUPP, f"Landlock ABI {abi} cannot turn the network off (ABI 4 is needed)")
    if abi >= 4 and not rules.network:
        attr.net, size = _NET_BIND_TCP | _NET_CONNECT_TCP, 16
    if abi >= 6:
        attr.scoped, size = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL, 24
    ruleset = libc.syscall(
        ctypes.c_long(_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    read_only = EXECUTE | READ_FILE | READ_DIR
    read_write = handled & ~(MAKE_CHAR | MAKE_BLOCK)
    device = (READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV) & handled
    try:
        grants = [(p, read_only) for p in rules.read_only] + [(p, read_write) for p in rules.read_write]
        for path, rights in grants + [(p, device) for p in rules.devices]:
            _add_path_rule(libc, ruleset, path, rights)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
        if libc.syscall(ctypes.c_long(_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)


def _add_path_rule(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= _FILE_RIGHTS  # a file rule may only carry file rights
        rule = _PathBeneath(rights, fd)
        args = (ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0))
        if libc.syscall(ctypes.c_long(_ADD_RULE), *args) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)


def _drop_capabilities(libc: ctypes.CDLL) -> None:
    # Emptying the bounding set means even uid 0 gains no capability at the exec that follows.
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="utf-8") as handle:
            last = int(handle.read().strip())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.prctl(_PR_CAP_AMBIENT, 4, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """What the launcher script is told on its command line: the rules, the ABI, the cwd and the program."""

    rules: LandlockRules
    abi: int
    cwd: str
    argv: tuple[str, ...]

    def to_json(self) -> str:
        return json.dumps(
            {
                "read_only": list(self.rules.read_only),
                "read_write": list(self.rules.read_write),
                "network": self.rules.network,
                "abi": self.abi,
                "cwd": self.cwd,
                "argv": list(self.argv),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> LaunchSpec:
        raw = json.loads(text)
        rules = LandlockRules(
            read_only=tuple(str(p) for p in raw["read_only"]),
            read_write=tuple(str(p) for p in raw["read_write"]),
            network=bool(raw["network"]),
        )
        return cls(rules, int(raw["abi"]), str(raw["cwd"]), tuple(str(a) for a in raw["argv"]))


def launch(spec: LaunchSpec) -> None:
    """Confine this process as `spec` says and exec its program; returns only by raising."""
    libc = _libc()
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _drop_capabilities(libc)
    restrict_self(spec.rules, spec.abi)
    os.chdir(spec.cwd)
    os.execv(spec.argv[0], list(spec.argv))


if __name__ == "__main__":
    try:
        launch(LaunchSpec.from_json(sys.argv[1]))
    except (OSError, KeyError, TypeError, ValueError, IndexError) as exc:
        print(f"hearth landlock launcher: {exc}", file=sys.stderr)
        sys.exit(126)
