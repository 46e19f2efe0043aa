"""The shell's OS sandbox: a filesystem view that says what the policy says, or no shell at all.

bubblewrap first, with the system view and flags every confined program gets (`sandbox.confinement`: the
network only when the policy allows it): the data dir hidden under an empty tmpfs with only the run's memory
(read-only) and workspace (read-write) bound back. Landlock where bubblewrap is missing (ABI 4+, so TCP can
be turned off). Where neither works, detection returns `Unavailable(reason)`: the shell is not offered (fail
closed, never open).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Literal

from sandbox import landlock
from sandbox.confinement import SEARCH_PATH, base_env, bwrap_prefix, landlock_argv, system_trees
from sandbox.policy import Policy
from sandbox.programs import Unavailable, trusted_program

__all__ = ["SandboxMode", "ShellSandbox", "Unavailable", "Launch", "detect_shell_sandbox", "bwrap_argv", "shell_env"]

SandboxMode = Literal["auto", "bubblewrap", "landlock", "off"]

_PROBE_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class Launch:
    """How to start one sandboxed shell."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    cwd: str


@dataclass(frozen=True, slots=True)
class ShellSandbox:
    """A working OS sandbox: `kind` and the program that enters it."""

    kind: Literal["bubblewrap", "landlock"]
    executable: str
    bash: str
    landlock_abi: int = 0

    def launch(self, policy: Policy, *, tmp_dir: str | None = None, command: tuple[str, ...] = ()) -> Launch:
        """The command that starts a program (by default a persistent bash) confined by `policy`.

        Args:
            policy: the run's policy; its workspace must exist.
            tmp_dir: a private temp dir, required for Landlock (bubblewrap mounts its own tmpfs at /tmp).
            command: the program and its arguments; empty for `bash --noprofile --norc` reading stdin.

        Returns:
            The argv, environment and cwd for the subprocess.

        Raises:
            ValueError: Landlock without a `tmp_dir`.
        """
        shell = command or (self.bash, "--noprofile", "--norc")
        if self.kind == "bubblewrap":
            env = shell_env(policy, "/tmp", self.kind)
            return Launch(tuple(bwrap_argv(policy, self.executable, shell)), env, "/")
        if tmp_dir is None:
            raise ValueError("a Landlock shell needs its own temp dir")
        rules = landlock.LandlockRules(
            read_only=(*system_trees(), policy.work_dir or policy.memory_dir),
            read_write=(policy.workspace, tmp_dir),
            network=policy.network,
        )
        argv = landlock_argv(self.executable, self.landlock_abi, rules, policy.workspace, shell)
        return Launch(argv, shell_env(policy, tmp_dir, self.kind), "/")


def shell_env(policy: Policy, tmp_dir: str, kind: str) -> tuple[tuple[str, str], ...]:
    """The shell's whole environment: nothing is inherited, so no secret of the host can leak in."""
    env = base_env(policy.workspace, tmp_dir, kind)
    env.update(PAGER="cat", GIT_PAGER="cat")
    return tuple(env.items())


def bwrap_argv(policy: Policy, bwrap: str, command: tuple[str, ...]) -> list[str]:
    """The bubblewrap command line that mirrors `policy`.

    Args:
        policy: the run's policy.
        bwrap: the bubblewrap executable.
        command: the program to run inside, with its arguments.

    Returns:
        The argv list (never a shell string).
    """
    args = bwrap_prefix(bwrap, network=policy.network)
    # An empty tmpfs over the data dir hides everything in it, even where a system bind would cover it.
    args += ["--tmpfs", policy.data_dir]
    if policy.work_dir is not None:
        args += ["--ro-bind", policy.work_dir, policy.work_dir]
    else:
        args += ["--ro-bind-try", policy.memory_dir, policy.memory_dir]
    args += ["--bind", policy.workspace, policy.workspace, "--chdir", policy.workspace, "--", *command]
    return args


def _probe(argv: list[str]) -> str | None:
    """None when `argv` runs and exits 0, else the first line of what went wrong."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=_PROBE_TIMEOUT, env={"PATH": SEARCH_PATH}, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    lines = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
    return lines[0] if lines else f"exit code {done.returncode}"


def _bubblewrap(bash: str) -> ShellSandbox | Unavailable:
    found = trusted_program("bubblewrap (bwrap)", shutil.which("bwrap"))
    if isinstance(found, Unavailable):
        return found
    bwrap = found.path
    failure = _probe([*bwrap_prefix(bwrap, network=False), "--", bash, "-c", "exit 0"])
    if failure is not None:
        return Unavailable(f"bubblewrap cannot create a sandbox here ({failure})")
    return ShellSandbox("bubblewrap", bwrap, bash)


def _landlock(bash: str) -> ShellSandbox | Unavailable:
    abi = landlock.abi_version()
    if abi < 4:
        why = "is not enabled in this kernel" if abi == 0 else f"ABI {abi} cannot turn the network off (4 needed)"
        return Unavailable(f"Landlock {why}")
    rules = landlock.LandlockRules(read_only=system_trees(), read_write=())
    failure = _probe(list(landlock_argv(sys.executable, abi, rules, "/", (bash, "-c", "exit 0"))))
    if failure is not None:
        return Unavailable(f"Landlock cannot confine the shell here ({failure})")
    return ShellSandbox("landlock", sys.executable, bash, abi)


@functools.lru_cache(maxsize=8)
def detect_shell_sandbox(mode: SandboxMode = "auto") -> ShellSandbox | Unavailable:
    """Find an OS sandbox that works on this machine, by really starting one (cached per mode).

    Args:
        mode: `auto` (bubblewrap, then Landlock), one of them only, or `off` (the person turned the shell off).

    Returns:
        A `ShellSandbox`, or `Unavailable(reason)` telling why no shell can be offered.
    """
    if mode == "off":
        return Unavailable("the shell is turned off in Hearth's settings")
    program = trusted_program("bash", shutil.which("bash", path=SEARCH_PATH))
    if isinstance(program, Unavailable):
        return program
    bash = program.path
    if mode == "bubblewrap":
        return _bubblewrap(bash)
    if mode == "landlock":
        return _landlock(bash)
    found = _bubblewrap(bash)
    if isinstance(found, ShellSandbox):
        return found
    fallback = _landlock(bash)
    if isinstance(fallback, ShellSandbox):
        return fallback
    return Unavailable(f"{found.reason}; {fallback.reason}")
