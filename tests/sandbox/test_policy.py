"""The policy table: every default of `sandbox.policy`, each allowed action with its refused twin."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from protocol.errors import INVALID_PARAMS
from protocol.models.policy import RunKind, SandboxPolicy
from sandbox import (
    Action,
    Allow,
    Ask,
    Deny,
    InvalidPolicyError,
    Policy,
    build_policy,
    decide,
    decide_command,
    read_uniform,
)
from sandbox.policy import policy_from_wire

D = "/srv/hearth"
DIRECT = Policy(D, "a1")
ALWAYS = Policy(D, "a1", permission="always")
WORK = Policy(D, "a1", run_kind="work", work_id="w1")
PROJECT = Policy(D, "a1", extra_writable=("/home/person/project",))

ALLOW, DENY, ASK = "allow", "deny", "ask"

TABLE = [
    # (policy, action, path, expected)
    (DIRECT, "read", f"{D}/agents/a1/scratch/x.txt", ALLOW),
    (DIRECT, "write", f"{D}/agents/a1/scratch/new/x.txt", ALLOW),
    (DIRECT, "list", f"{D}/agents/a1/scratch", ALLOW),
    (DIRECT, "read", f"{D}/agents/a1/memory/MEMORY.md", ALLOW),
    (DIRECT, "write", f"{D}/agents/a1/memory/MEMORY.md", DENY),
    (DIRECT, "write", f"{D}/agents/a1/memory/new.md", DENY),
    (DIRECT, "read", f"{D}/agents/a1/profile.json", ALLOW),
    (DIRECT, "write", f"{D}/agents/a1/profile.json", DENY),
    (DIRECT, "write", f"{D}/agents/a1/settings.json", DENY),
    (DIRECT, "write", f"{D}/agents/a1/transcript.jsonl", DENY),
    (DIRECT, "write", f"{D}/agents/a1/prompt-cache.json", DENY),
    (DIRECT, "write", f"{D}/agents/a1", DENY),
    (DIRECT, "read", f"{D}/agents/a10/memory/MEMORY.md", DENY),
    (DIRECT, "list", f"{D}/agents/a10/memory", DENY),
    (DIRECT, "read", f"{D}/agents/a10/scratch/x.txt", ALLOW),
    (DIRECT, "write", f"{D}/agents/a10/scratch/x.txt", DENY),
    (DIRECT, "read", f"{D}/agents/a10/profile.json", ALLOW),
    (DIRECT, "read", f"{D}/agents/a10/transcript.jsonl", DENY),
    (DIRECT, "read", f"{D}/agents/a10/prompt-cache.json", DENY),
    (DIRECT, "list", f"{D}/agents/a10", ALLOW),
    (DIRECT, "list", f"{D}/agents", ALLOW),
    (DIRECT, "write", f"{D}/agents/new", DENY),
    (DIRECT, "list", D, ALLOW),
    (DIRECT, "write", f"{D}/x", DENY),
    (DIRECT, "read", f"{D}/secrets.bin", DENY),
    (DIRECT, "read", f"{D}/secrets.key", DENY),
    (DIRECT, "read", f"{D}/host.lock", DENY),
    (DIRECT, "read", f"{D}/settings.json", DENY),
    (DIRECT, "read", f"{D}/works/w1/scratch/x", DENY),
    (DIRECT, "read", "/etc/hosts", ASK),
    (DIRECT, "write", "/home/person/notes.txt", DENY),
    (ALWAYS, "write", "/home/person/notes.txt", DENY),
    (ALWAYS, "write", "/usr/local/bin/rg", DENY),
    (ALWAYS, "read", "/home/person/notes.txt", ASK),
    (ALWAYS, "list", "/home/person", ASK),
    (PROJECT, "write", "/home/person/project/src/x.py", ASK),
    (PROJECT, "write", "/home/person/project2/x.py", DENY),
    (PROJECT, "write", "/home/person/notes.txt", DENY),
    (DIRECT, "read", "/proc/self/environ", DENY),
    (DIRECT, "write", "/dev/sda", DENY),
    (DIRECT, "read", "relative/path", DENY),
    (WORK, "write", f"{D}/works/w1/scratch/x", ALLOW),
    (WORK, "read", f"{D}/works/w1/memory/ledger.jsonl", ALLOW),
    (WORK, "write", f"{D}/works/w1/memory/ledger.jsonl", DENY),
    (WORK, "read", f"{D}/works/w2/scratch/x", DENY),
    (WORK, "read", f"{D}/agents/a1/memory/MEMORY.md", DENY),
    (WORK, "read", f"{D}/agents/a1/scratch/x", DENY),
    (WORK, "list", f"{D}/works", ALLOW),
    (WORK, "read", "/etc/hosts", ASK),
]

KINDS = {ALLOW: Allow, DENY: Deny, ASK: Ask}


@pytest.mark.parametrize(("policy", "action", "path", "expected"), TABLE, ids=[f"{r[1]} {r[2]}" for r in TABLE])
def test_the_policy_table(policy: Policy, action: Action, path: str, expected: str) -> None:
    assert isinstance(decide(policy, action, path), KINDS[expected])


def test_a_denial_carries_a_reason_fit_for_the_model() -> None:
    verdict = decide(DIRECT, "read", f"{D}/agents/a2/memory/x")
    assert isinstance(verdict, Deny) and "memory" in verdict.reason


def test_roots_are_derived_from_the_run() -> None:
    assert DIRECT.workspace == f"{D}/agents/a1/scratch" and DIRECT.memory_dir == f"{D}/agents/a1/memory"
    assert WORK.workspace == f"{D}/works/w1/scratch" and WORK.memory_dir == f"{D}/works/w1/memory"


def test_build_policy_makes_the_data_dir_canonical() -> None:
    assert build_policy("/srv/../srv/hearth", "a1").data_dir == "/srv/hearth"


@pytest.mark.parametrize(
    ("data_dir", "agent_id", "run_kind", "work_id"),
    [
        ("relative", "a1", "direct", None),
        ("/d", "A1", "direct", None),
        ("/d", "../a1", "direct", None),
        ("/d", "a1", "work", None),
        ("/d", "a1", "direct", "w1"),
        ("/d", "a1", "work", "W/1"),
    ],
)
def test_a_malformed_policy_is_invalid_params(
    data_dir: str, agent_id: str, run_kind: RunKind, work_id: str | None
) -> None:
    with pytest.raises(InvalidPolicyError) as caught:
        build_policy(data_dir, agent_id, run_kind=run_kind, work_id=work_id)
    assert caught.value.code == INVALID_PARAMS


def test_the_wire_policy_converts_to_the_internal_value() -> None:
    wire = SandboxPolicy.model_validate({"dataDir": "/srv/hearth", "agentId": "a1", "network": True})
    assert policy_from_wire(wire) == Policy("/srv/hearth", "a1", network=True)
    assert wire.model_dump(by_alias=True)["permission"] == "ask"


def test_the_wire_policy_rejects_a_work_run_without_a_work_id() -> None:
    with pytest.raises(ValidationError):
        SandboxPolicy.model_validate({"dataDir": "/d", "agentId": "a1", "runKind": "work"})
    with pytest.raises(ValidationError):
        SandboxPolicy.model_validate({"dataDir": "relative", "agentId": "a1"})


def test_shell_commands_ask_unless_hard_denied() -> None:
    assert isinstance(decide_command(DIRECT, "ls -la"), Ask)
    assert isinstance(decide_command(DIRECT, "rm -rf /"), Deny)
    assert isinstance(decide_command(DIRECT, "echo \x00"), Deny)


def test_uniform_directories_are_those_without_a_boundary_beneath() -> None:
    assert read_uniform(DIRECT, f"{D}/agents/a1")
    assert read_uniform(DIRECT, f"{D}/agents/a2/scratch")
    assert read_uniform(DIRECT, "/usr")
    assert not read_uniform(DIRECT, f"{D}/agents/a2")
    assert not read_uniform(DIRECT, f"{D}/agents")
    assert not read_uniform(DIRECT, D)
    assert not read_uniform(DIRECT, "/srv")
    assert not read_uniform(DIRECT, "/")
    assert read_uniform(WORK, f"{D}/works/w1") and not read_uniform(WORK, f"{D}/works")


def test_a_write_in_an_extra_writable_root_always_asks_a_person() -> None:
    """Issue 9: the seam for an ACP project root: a write there asks even under `always`, and nowhere else is open."""
    verdict = decide(PROJECT, "write", "/home/person/project/x.py")
    assert isinstance(verdict, Ask) and verdict.always_ask
    outside = decide(Policy(D, "a1", extra_writable=("/home/person/project",)), "write", "/home/person/x")
    assert isinstance(outside, Deny)
    assert PROJECT.writable_roots == (f"{D}/agents/a1/scratch", "/home/person/project")


@pytest.mark.parametrize("root", ["relative", "/", D, f"{D}/agents/a1/scratch", "/srv"])
def test_an_extra_writable_root_may_not_overlap_the_data_dir(root: str) -> None:
    with pytest.raises(InvalidPolicyError) as caught:
        build_policy(D, "a1", extra_writable=(root,))
    assert caught.value.code == INVALID_PARAMS
    assert build_policy(D, "a1", extra_writable=("/home/p/proj",)).extra_writable == ("/home/p/proj",)


ROOT = "/home/p/proj"
WITH_ROOT = Policy(D, "a1", extra_writable=(ROOT,))


@pytest.mark.parametrize("action", ["read", "list"])
def test_a_project_root_is_readable_without_asking_and_nothing_beside_it_is(action: Action) -> None:
    assert decide(WITH_ROOT, action, f"{ROOT}/src/app.py") == Allow()
    assert decide(WITH_ROOT, action, ROOT) == Allow()
    assert isinstance(decide(WITH_ROOT, action, "/home/p/proj2/app.py"), Ask), "a sibling is no part of it"
    assert isinstance(decide(DIRECT, action, f"{ROOT}/src/app.py"), Ask), "without a project root it asks"


def test_the_data_dir_keeps_its_rules_whatever_the_project_root() -> None:
    assert isinstance(decide(WITH_ROOT, "read", f"{D}/agents/a2/memory/ledger.jsonl"), Deny)
    assert isinstance(decide(WITH_ROOT, "read", f"{D}/secrets.bin"), Deny)
    assert decide(WITH_ROOT, "read", f"{D}/agents/a1/memory/MEMORY.md") == Allow()


def test_the_wire_project_root_becomes_the_runs_extra_root() -> None:
    wire = SandboxPolicy(data_dir=D, agent_id="a1", project_root=ROOT)
    assert policy_from_wire(wire).extra_writable == (ROOT,)
    assert policy_from_wire(SandboxPolicy(data_dir=D, agent_id="a1")).extra_writable == ()
    with pytest.raises(ValidationError):
        SandboxPolicy(data_dir=D, agent_id="a1", project_root="relative")
