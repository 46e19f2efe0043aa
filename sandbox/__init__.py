"""sandbox: the policy (pure functions) and its enforcement: safe file access, the OS sandbox of shells and MCP servers.
A new rule goes in `policy.py` (files) or `commands.py` (shell commands), a pure function with its negative test.

`decide` answers every file action on a canonical path; `decide_command` every shell command; the safe
openers make sure what is opened is what was checked; `detect_shell_sandbox` finds an OS sandbox or says why
there is none. Module docstrings of `sandbox.policy` and `sandbox.os_sandbox` list the defaults.
"""

from sandbox.approval import ApprovalOutcome, Rule, decide_approval, rules_from_wire, rules_to_wire
from sandbox.commands import hard_denied_reason
from sandbox.errors import AccessDeniedError, PathEscapeError, SandboxError, UnsafeFileError
from sandbox.os_sandbox import Launch, SandboxMode, ShellSandbox, Unavailable, bwrap_argv, detect_shell_sandbox
from sandbox.paths import canonical_path, display_path, is_within, parts_under
from sandbox.policy import (
    Action,
    Allow,
    Ask,
    Deny,
    InvalidPolicyError,
    Policy,
    Verdict,
    build_policy,
    decide,
    decide_command,
    policy_from_wire,
    read_uniform,
)
from sandbox.programs import TrustedProgram, program_refusal, trusted_program
from sandbox.protected import ProtectedFiles, protected_files
from sandbox.reach import TooBroadError, search_roots
from sandbox.safe_open import Beneath, Entry, fd_path, list_entries, open_dir, open_read, opened, pin_path, write_atomic

__all__ = [
    "AccessDeniedError",
    "Action",
    "Allow",
    "ApprovalOutcome",
    "Ask",
    "Beneath",
    "Deny",
    "Entry",
    "InvalidPolicyError",
    "Launch",
    "PathEscapeError",
    "Policy",
    "ProtectedFiles",
    "Rule",
    "SandboxError",
    "SandboxMode",
    "ShellSandbox",
    "TooBroadError",
    "TrustedProgram",
    "Unavailable",
    "UnsafeFileError",
    "Verdict",
    "build_policy",
    "bwrap_argv",
    "canonical_path",
    "decide",
    "decide_approval",
    "decide_command",
    "detect_shell_sandbox",
    "display_path",
    "fd_path",
    "hard_denied_reason",
    "is_within",
    "list_entries",
    "open_dir",
    "open_read",
    "opened",
    "parts_under",
    "pin_path",
    "policy_from_wire",
    "program_refusal",
    "protected_files",
    "read_uniform",
    "rules_from_wire",
    "rules_to_wire",
    "search_roots",
    "trusted_program",
    "write_atomic",
]
