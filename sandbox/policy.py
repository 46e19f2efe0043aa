"""The policy: a pure function of (run, action, canonical path) to Allow, Deny(reason) or Ask(reason).

Defaults, for a direct run of agent A in data dir D (no I/O here; paths must already be canonical):
* D/agents/A/scratch/**: read, list and write. D/agents/A/memory/**: read and list, never write (memory changes
  go through the audited memory tools). A's profile, settings, transcript and prompt cache: read only.
* Another agent B: nothing of D/agents/B/memory/**; read only B's scratch/, profile.json and settings.json (its
  transcript and prompt cache embed its memory); no writes anywhere under D/agents/B.
* D itself and D/agents may be listed; every other host file (secrets.bin, secrets.key, host.lock,
  settings.json, works/ of a direct run) is denied, for every action.
* A Work run (data under D/works/<workId>/) reaches only that Work: its scratch/ read-write, the rest read-only.
* /proc, /sys and /dev are denied. Reading or listing any other path outside D is Ask: a person (or the permission
  mode) decides. Writing outside D is denied whatever the permission (`always` never widens where an agent may
  write), except inside an extra writable root of the run (an ACP session's project root), which always asks a
  person (`Ask.always_ask`): the permission mode never turns it into a yes. That root may be read and listed
  without asking. Paths in D keep D's rules whatever the root holds.
Shell commands are Ask with the exact command as the target, except the hard-denied ones (sandbox.commands).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Literal

from protocol.errors import INVALID_PARAMS
from protocol.ids import AGENT_ID_PATTERN
from protocol.models.policy import Permission, RunKind, SandboxPolicy
from sandbox.commands import hard_denied_reason
from sandbox.errors import SandboxError
from sandbox.paths import is_within, parts_under

__all__ = [
    "Action",
    "Policy",
    "Allow",
    "Deny",
    "Ask",
    "Verdict",
    "InvalidPolicyError",
    "build_policy",
    "policy_from_wire",
    "decide",
    "decide_command",
    "read_uniform",
]

Action = Literal["read", "list", "write"]

_ID = re.compile(AGENT_ID_PATTERN)
_PSEUDO_ROOTS = ("/proc", "/sys", "/dev")
_OTHER_READABLE = frozenset({"scratch", "profile.json", "settings.json"})


class InvalidPolicyError(SandboxError):
    """The policy itself is malformed (a bad id, a relative data dir)."""

    CODE = INVALID_PARAMS


@dataclass(frozen=True, slots=True)
class Policy:
    """One run's policy. `data_dir` is canonical; every root below is derived from it."""

    data_dir: str
    agent_id: str
    run_kind: RunKind = "direct"
    work_id: str | None = None
    network: bool = False
    permission: Permission = "ask"
    extra_writable: tuple[str, ...] = ()
    """Canonical roots outside the data dir where writes may be asked for (an ACP session's project root)."""

    @property
    def agent_dir(self) -> str:
        return f"{self.data_dir}/agents/{self.agent_id}"

    @property
    def memory_dir(self) -> str:
        """The memory the run may read: the agent's own, or the Work's for a Work run."""
        return f"{self.work_dir}/memory" if self.work_dir else f"{self.agent_dir}/memory"

    @property
    def work_dir(self) -> str | None:
        return f"{self.data_dir}/works/{self.work_id}" if self.work_id else None

    @property
    def workspace(self) -> str:
        """The run's writable directory; relative paths from the model start here."""
        return f"{self.work_dir}/scratch" if self.work_dir else f"{self.agent_dir}/scratch"

    @property
    def writable_roots(self) -> tuple[str, ...]:
        """Every directory a write of this run could ever reach (with a person's yes for the extra roots)."""
        return (self.workspace, *self.extra_writable)


@dataclass(frozen=True, slots=True)
class Allow:
    pass


@dataclass(frozen=True, slots=True)
class Deny:
    reason: str


@dataclass(frozen=True, slots=True)
class Ask:
    """A person (or the permission mode) decides; with `always_ask` only a person or an exact remembered rule."""

    reason: str
    always_ask: bool = False


Verdict = Allow | Deny | Ask


def build_policy(
    data_dir: str,
    agent_id: str,
    *,
    run_kind: RunKind = "direct",
    work_id: str | None = None,
    network: bool = False,
    permission: Permission = "ask",
    extra_writable: tuple[str, ...] = (),
) -> Policy:
    """Validate the run's identity and make the data dir (and any extra writable root) canonical.

    Raises:
        InvalidPolicyError: a relative data dir, a malformed id, a work id that does not match the run kind, or
            an extra writable root that is relative, `/`, or overlaps the data dir.
    """
    if not data_dir.startswith("/") or "\x00" in data_dir:
        raise InvalidPolicyError("data dir must be an absolute path")
    if not _ID.match(agent_id) or (work_id is not None and not _ID.match(work_id)):
        raise InvalidPolicyError("agent and work ids must match " + AGENT_ID_PATTERN)
    if (run_kind == "work") != (work_id is not None):
        raise InvalidPolicyError("a work id is required for a work run and only for a work run")
    canonical = os.path.realpath(data_dir)
    roots = tuple(_extra_root(root, canonical) for root in extra_writable)
    return Policy(canonical, agent_id, run_kind, work_id, network, permission, roots)


def _extra_root(root: str, data_dir: str) -> str:
    if not root.startswith("/") or "\x00" in root:
        raise InvalidPolicyError("an extra writable root must be an absolute path")
    canonical = os.path.realpath(root)
    # A root holding the data dir would open every agent's files to writes; one inside it is the host's.
    if canonical == "/" or is_within(canonical, data_dir) or is_within(data_dir, canonical):
        raise InvalidPolicyError("an extra writable root may not be / or overlap the data dir")
    return canonical


def policy_from_wire(wire: SandboxPolicy) -> Policy:
    """Convert the `turn.start` policy into the internal value (see `build_policy` for the raises)."""
    return build_policy(
        wire.data_dir,
        wire.agent_id,
        run_kind=wire.run_kind,
        work_id=wire.work_id,
        network=wire.network,
        permission=wire.permission,
        extra_writable=(wire.project_root,) if wire.project_root else (),
    )


def decide(policy: Policy, action: Action, path: str) -> Verdict:
    """Decide one file action on one canonical path.

    Args:
        policy: the run's policy.
        action: `read` (a file, or a directory as a search root), `list` (a directory's names) or `write`.
        path: a canonical absolute path (see `sandbox.paths.canonical_path`).

    Returns:
        Allow, Deny(reason) or Ask(reason); reasons are short and fit to show the model.
    """
    if not path.startswith("/") or "\x00" in path:
        return Deny("not a canonical absolute path")
    parts = parts_under(path, policy.data_dir)
    if parts is None:
        if any(is_within(path, root) for root in _PSEUDO_ROOTS):
            return Deny("system pseudo-files (/proc, /sys, /dev) are not reachable")
        inside_root = any(is_within(path, root) for root in policy.extra_writable)
        if action != "write":
            return Allow() if inside_root else Ask(f"{action} outside the agent's workspace")
        if inside_root:
            return Ask("write in the session's project root", always_ask=True)
        return Deny("writes outside the agent's workspace are not allowed, whatever the permission")
    if not parts:
        return Deny("the data dir is written only by the host") if action == "write" else Allow()
    if policy.run_kind == "work":
        return _decide_work(policy, action, parts)
    if parts[0] == "agents":
        return _decide_agents(policy, action, parts[1:])
    if "secret" in parts[0]:
        return Deny("host secrets are never reachable by agents")
    if parts[0] == "works":
        return Deny("a Work's files are reachable only from that Work's runs")
    return Deny("host files are not reachable by agents")


def _decide_agents(policy: Policy, action: Action, rest: tuple[str, ...]) -> Verdict:
    if not rest:
        return Deny("only the host creates agents") if action == "write" else Allow()
    owner, inside = rest[0], rest[1:]
    if owner == policy.agent_id:
        if inside and inside[0] == "scratch":
            return Allow()
        if action != "write":
            return Allow()
        if not inside:
            return Deny("the agent's directory is managed by the host; write inside scratch/")
        if inside[0] == "memory":
            return Deny("memory is changed only through the memory tools, so every change is audited")
        return Deny("the agent's profile, settings, transcript and prompt cache are written only by the host")
    if inside and inside[0] == "memory":
        return Deny("another agent's memory is private")
    if action == "write":
        return Deny("another agent's files are read-only")
    if not inside or inside[0] in _OTHER_READABLE:
        return Allow()
    return Deny("another agent's transcript and prompt cache embed its memory and are private")


def _decide_work(policy: Policy, action: Action, parts: tuple[str, ...]) -> Verdict:
    if parts[0] != "works":
        return Deny("a Work run reaches only its Work's files")
    if len(parts) == 1:
        return Deny("only the host creates Works") if action == "write" else Allow()
    if parts[1] != policy.work_id:
        return Deny("a Work run reaches only its own Work's files")
    if len(parts) > 2 and parts[2] == "scratch":
        return Allow()
    if action == "write":
        return Deny("a Work's timeline, board and memory are written only by the host")
    return Allow()


def decide_command(policy: Policy, command: str) -> Deny | Ask:
    """Decide a shell command: hard-denied ones are refused, every other one needs approval.

    Args:
        policy: the run's policy (the OS sandbox built from it confines what the command can reach).
        command: the exact command string; it is also the approval target.

    Returns:
        Deny(reason) for a hard-denied command, else Ask (the permission mode may turn it into a yes).
    """
    if "\x00" in command:
        return Deny("the command contains a NUL byte")
    reason = hard_denied_reason(command)
    if reason is not None:
        return Deny(reason)
    return Ask("run a shell command")


def read_uniform(policy: Policy, directory: str) -> bool:
    """Whether every path beneath canonical `directory` gets the same read verdict as `directory` itself.

    A recursive reader (grep, glob) may be handed a uniform directory whole; a non-uniform one must be split
    into its entries first (see `sandbox.reach`).
    """
    parts = parts_under(directory, policy.data_dir)
    if parts is None:
        if is_within(policy.data_dir, directory):
            return False
        return not any(is_within(root, directory) for root in _PSEUDO_ROOTS)
    if not parts:
        return False
    if policy.run_kind == "work":
        return parts != ("works",)
    if parts[0] != "agents":
        return True
    if len(parts) == 1:
        return False
    return parts[1] == policy.agent_id or len(parts) > 2
