"""Programs the kernel runs: resolved once to a canonical path, refused where anyone but the person could write."""

from __future__ import annotations

import os
from pathlib import Path

from sandbox import Policy, TrustedProgram, Unavailable, build_policy, program_refusal, trusted_program


def _script(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_a_program_is_resolved_to_its_canonical_path(tmp_path: Path) -> None:
    real = _script(tmp_path / "bin" / "tool")
    os.symlink(real, tmp_path / "link")
    found = trusted_program("tool", str(tmp_path / "link"))
    assert found == TrustedProgram("tool", str(real))


def test_a_missing_or_unexecutable_program_is_unavailable(tmp_path: Path) -> None:
    assert isinstance(trusted_program("tool", None), Unavailable)
    assert isinstance(trusted_program("tool", str(tmp_path / "nothere")), Unavailable)
    plain = tmp_path / "plain"
    plain.write_text("x", encoding="utf-8")
    assert isinstance(trusted_program("tool", str(plain)), Unavailable)
    assert isinstance(trusted_program("tool", str(tmp_path)), Unavailable)


def test_a_program_others_can_replace_is_refused(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    program = _script(loose / "tool")
    assert isinstance(trusted_program("tool", str(program)), TrustedProgram)
    loose.chmod(0o777)
    refused = trusted_program("tool", str(program))
    assert isinstance(refused, Unavailable) and str(loose) in refused.reason
    loose.chmod(0o1777)  # a sticky shared dir (like /tmp) protects what others own
    assert isinstance(trusted_program("tool", str(program)), TrustedProgram)


def test_a_program_in_a_forbidden_root_is_refused(tmp_path: Path) -> None:
    program = _script(tmp_path / "data" / "agents" / "a1" / "scratch" / "rg")
    refused = trusted_program("rg", str(program), forbidden=(str(tmp_path / "data"),))
    assert isinstance(refused, Unavailable) and "data dir" in refused.reason


def test_a_run_may_not_execute_a_program_it_or_any_agent_could_write(tmp_path: Path) -> None:
    data = tmp_path / "data"
    policy = build_policy(str(data), "a1", permission="always")
    assert program_refusal(policy, f"{policy.workspace}/rg") is not None
    assert program_refusal(policy, f"{data}/agents/a2/scratch/rg") is not None
    assert program_refusal(policy, f"{data}/bin/rg") is not None
    project = Policy(policy.data_dir, "a1", extra_writable=(str(tmp_path / "proj"),))
    assert program_refusal(project, f"{tmp_path}/proj/.venv/bin/rg") is not None
    assert program_refusal(policy, f"{tmp_path}/proj/.venv/bin/rg") is None
    assert program_refusal(policy, "/usr/bin/rg") is None
