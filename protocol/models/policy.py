"""The sandbox policy of one run, as the host sends it in `turn.start`, and remembered approvals.

`SandboxPolicy` is deliberately small: the data dir, whose run it is and what the person allowed. The sandbox
derives every root (workspace, memory, the Work's files) from these fields, so the host and the kernel cannot
disagree about a path. `ApprovalRule` is one remembered answer for an exact action and canonical target.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from protocol.ids import AGENT_ID_PATTERN
from protocol.models.base import WireModel

__all__ = ["RunKind", "Permission", "SandboxPolicy", "ApprovalRule"]

"""Agent and Work ids: lowercase, digits, `_` and `-`, at most 63 characters, so an id is one safe path part."""

RunKind = Literal["direct", "work"]
Permission = Literal["ask", "always", "never"]


class SandboxPolicy(WireModel):
    """Everything the kernel needs to decide what one run may touch."""

    data_dir: str = Field(min_length=1, description="Absolute path of the host's data dir.")
    agent_id: str = Field(pattern=AGENT_ID_PATTERN)
    run_kind: RunKind = "direct"
    work_id: str | None = Field(default=None, pattern=AGENT_ID_PATTERN)
    network: bool = Field(default=False, description="Whether the shell may use the network.")
    permission: Permission = Field(default="ask", description="What happens to actions that need a person's yes.")
    project_root: str | None = Field(
        default=None,
        description="An absolute directory outside the data dir the run may read, and write with a person's yes.",
    )

    @model_validator(mode="after")
    def _check_run(self) -> SandboxPolicy:
        if not self.data_dir.startswith("/") or "\x00" in self.data_dir:
            raise ValueError("data_dir must be an absolute path")
        if (self.run_kind == "work") != (self.work_id is not None):
            raise ValueError("work_id is required for a work run and only for a work run")
        if self.project_root is not None and (not self.project_root.startswith("/") or "\x00" in self.project_root):
            raise ValueError("project_root must be an absolute path")
        return self


class ApprovalRule(WireModel):
    """A remembered answer: `action` on exactly `target` (a canonical path or a shell command)."""

    action: str = Field(min_length=1)
    target: str
    decision: Literal["allow", "deny"]
