"""The escape table: attempts by mallory to reach alice's protected files through every tool.

Each attempt must be refused (or its target withheld) and must neither return nor change the protected bytes.
Each has a twin run by alice, the owner, that must succeed, so a sandbox that refused everything would fail.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from kernel.tools import ShellPool, ToolResult, local_tools
from sandbox import ShellSandbox, detect_shell_sandbox

SANDBOX = detect_shell_sandbox("bubblewrap")
TOOLS = local_tools(SANDBOX)

Outcome = Literal["denied", "withheld", "failed"]


@dataclass(frozen=True)
class Escape:
    """One attempt. Templates: {D} data dir, {victim} alice's agent dir, {M} memory canary, {S} secrets canary,
    {O} a directory of the person's outside the data dir (holding a program named rg)."""

    name: str
    tool: str
    args: dict[str, Any]
    outcome: Outcome = "denied"
    links: dict[str, str] = field(default_factory=dict)  # made in the acting agent's scratch: name -> target
    leak: str = "{M}"  # text that must not appear in the attacker's result
    protected: str = "agents/alice/memory/secret.md"
    must_not_exist: str | None = None
    owner_args: dict[str, Any] | None = None  # alice's legitimate twin; by default the very same call
    owner_sees: str | None = "{M}"  # text the owner's result must hold
    owner_writes: tuple[str, str] | None = None  # (file under D, text it must hold) after the owner's call
    deep: bool = False  # a tree deeper than PATH_MAX in the acting agent's scratch, so rg exits 2


MEM = "{victim}/memory/secret.md"
NOTES = "{victim}/scratch/notes.txt"
LEAF = {"leaf": MEM}
MEMLINK = {"memlink": "{victim}/memory"}
NOTES_LINK = {"notes_link": NOTES}
OWN_NOTES = ("agents/alice/scratch/notes.txt", "PWNED")
PROTECT_NOTES: dict[str, Any] = {"protected": "agents/alice/scratch/notes.txt", "leak": "PWNED", "owner_sees": None}


def write(name: str, path: str, **extra: Any) -> Escape:
    kwargs: dict[str, Any] = {**PROTECT_NOTES, "owner_writes": OWN_NOTES, **extra}
    return Escape(name, "write_file", {"path": path, "content": "PWNED"}, **kwargs)


def edit(name: str, path: str, **extra: Any) -> Escape:
    args = {"path": path, "old_string": "ORIGINAL", "new_string": "PWNED"}
    kwargs: dict[str, Any] = {**PROTECT_NOTES, "owner_writes": ("agents/alice/scratch/notes.txt", "ALICE-NOTES-PWNED")}
    return Escape(name, "edit_file", args, **{**kwargs, **extra})


def shell(name: str, command: str, **extra: Any) -> Escape:
    return Escape(name, "shell", {"command": command}, **{"outcome": "failed", **extra})


OWNER_READS = {"owner_args": {"path": MEM}}
OWNER_WRITES_NOTES = {"owner_args": {"path": NOTES, "content": "PWNED"}}
LEDGER = "{victim}/memory/ledger.jsonl"
OWNER_GREPS_LEDGER = {"owner_args": {"pattern": "CANARY", "path": LEDGER, "output_mode": "content"}}
PROTECT_PROGRAM: dict[str, Any] = {"protected": "../outside/rg", "leak": "PWNED", "owner_sees": None}


def ignore_link(name: str, target: str = LEDGER, pattern: str = "nothing-matches", **extra: Any) -> Escape:
    """grep in the attacker's scratch, which holds an ignore file linked to the victim's ledger or transcript and
    a tree too deep to open (so rg fails, and used to hand its first stderr line, the linked line, to the model)."""
    kwargs: dict[str, Any] = {"outcome": "failed", "deep": True, **OWNER_GREPS_LEDGER, **extra}
    args = {"pattern": pattern, "output_mode": "content"}
    title = f"grep reads no {name} linked to {target.rsplit('/', 1)[-1]} (pattern {pattern})"
    return Escape(title, "grep", args, links={name: target}, **kwargs)


def outside(name: str, path: str, **extra: Any) -> Escape:
    """A write outside the data dir, where the kernel's own programs live: denied under `always` too."""
    return write(name, path, **{**PROTECT_PROGRAM, **OWNER_WRITES_NOTES, **extra})


CASES = [
    # read_file
    Escape("read absolute path", "read_file", {"path": MEM}),
    Escape("read relative dot-dot", "read_file", {"path": "../../alice/memory/secret.md"}),
    Escape("read dot-dot through a missing dir", "read_file", {"path": "nothere/../../../alice/memory/secret.md"}),
    Escape("read with dot and double slash", "read_file", {"path": "{victim}/./memory//secret.md"}),
    Escape(
        "read dot-dot inside an absolute path", "read_file", {"path": "{D}/agents/mallory/../alice/memory/secret.md"}
    ),
    Escape("read path with NUL", "read_file", {"path": MEM + "\x00.txt"}, **OWNER_READS),
    Escape("read through a leaf symlink", "read_file", {"path": "leaf"}, links=LEAF),
    Escape(
        "read through a relative symlink", "read_file", {"path": "rel"}, links={"rel": "../../alice/memory/secret.md"}
    ),
    Escape("read through a symlink chain", "read_file", {"path": "l1"}, links={"l2": MEM, "l1": "l2"}),
    Escape("read through an ancestor symlink", "read_file", {"path": "memlink/secret.md"}, links=MEMLINK),
    Escape(
        "read through a link to the agent dir", "read_file", {"path": "al/memory/secret.md"}, links={"al": "{victim}"}
    ),
    Escape("read dot-dot after a symlink", "read_file", {"path": "memlink/../memory/secret.md"}, links=MEMLINK),
    Escape(
        "read the prompt cache",
        "read_file",
        {"path": "{victim}/prompt-cache.json"},
        leak="{P}",
        protected="agents/alice/prompt-cache.json",
        owner_sees="{P}",
    ),
    Escape(
        "read the transcript",
        "read_file",
        {"path": "{victim}/transcript.jsonl"},
        leak="{T}",
        protected="agents/alice/transcript.jsonl",
        owner_sees="{T}",
    ),
    Escape(
        "read host secrets",
        "read_file",
        {"path": "{D}/secrets.bin"},
        leak="{S}",
        protected="secrets.bin",
        **OWNER_READS,
    ),
    Escape(
        "read the secrets key",
        "read_file",
        {"path": "{D}/secrets.key"},
        leak="{S}",
        protected="secrets.key",
        **OWNER_READS,
    ),
    # list_dir
    Escape(
        "list memory by absolute path",
        "list_dir",
        {"path": "{victim}/memory"},
        leak="secret.md",
        owner_sees="secret.md",
    ),
    Escape(
        "list memory through a symlink",
        "list_dir",
        {"path": "memlink"},
        links=MEMLINK,
        leak="secret.md",
        owner_sees="secret.md",
    ),
    Escape(
        "list memory by dot-dot", "list_dir", {"path": "../../alice/memory"}, leak="secret.md", owner_sees="secret.md"
    ),
    # glob
    Escape(
        "glob inside memory",
        "glob",
        {"pattern": "**/*", "path": "{victim}/memory"},
        leak="secret.md",
        owner_sees="secret.md",
    ),
    Escape(
        "glob across agents",
        "glob",
        {"pattern": "*/memory/*", "path": "{D}/agents"},
        outcome="withheld",
        leak="secret.md",
        owner_sees="secret.md",
    ),
    Escape(
        "glob the whole data dir",
        "glob",
        {"pattern": "**/secret*", "path": "{D}"},
        outcome="withheld",
        leak="secret",
        owner_sees="secret.md",
    ),
    Escape(
        "glob pattern with dot-dot",
        "glob",
        {"pattern": "../../alice/memory/*"},
        leak="secret.md",
        owner_args={"pattern": "*", "path": "{victim}/memory"},
        owner_sees="secret.md",
    ),
    Escape(
        "glob does not follow a dir symlink",
        "glob",
        {"pattern": "**/*"},
        links=MEMLINK,
        outcome="withheld",
        leak="secret.md",
        owner_args={"pattern": "**/*", "path": "{victim}/memory"},
        owner_sees="secret.md",
    ),
    Escape(
        "glob rooted at a symlink",
        "glob",
        {"pattern": "*", "path": "memlink"},
        links=MEMLINK,
        leak="secret.md",
        owner_sees="secret.md",
    ),
    # grep
    Escape("grep inside memory", "grep", {"pattern": "CANARY", "path": "{victim}/memory", "output_mode": "content"}),
    Escape(
        "grep the whole data dir",
        "grep",
        {"pattern": "CANARY", "path": "{D}", "output_mode": "content"},
        outcome="withheld",
    ),
    Escape(
        "grep all agents",
        "grep",
        {"pattern": "CANARY", "path": "{D}/agents", "output_mode": "content"},
        outcome="withheld",
    ),
    Escape(
        "grep the other agent's dir",
        "grep",
        {"pattern": "CANARY", "path": "{victim}", "output_mode": "content"},
        outcome="withheld",
    ),
    Escape(
        "grep does not follow a leaf symlink",
        "grep",
        {"pattern": "CANARY", "output_mode": "content"},
        links=LEAF,
        outcome="withheld",
        owner_args={"pattern": "CANARY", "path": MEM, "output_mode": "content"},
    ),
    Escape(
        "grep does not follow a dir symlink",
        "grep",
        {"pattern": "CANARY", "output_mode": "content"},
        links=MEMLINK,
        outcome="withheld",
        owner_args={"pattern": "CANARY", "path": "{victim}/memory", "output_mode": "content"},
    ),
    Escape(
        "grep rooted at a leaf symlink",
        "grep",
        {"pattern": "CANARY", "path": "leaf", "output_mode": "content"},
        links=LEAF,
    ),
    Escape(
        "grep rooted at a dir symlink",
        "grep",
        {"pattern": "CANARY", "path": "memlink", "output_mode": "content"},
        links=MEMLINK,
    ),
    Escape("grep by dot-dot", "grep", {"pattern": "CANARY", "path": "../../alice/memory", "output_mode": "content"}),
    Escape(
        "grep path with NUL",
        "grep",
        {"pattern": "CANARY", "path": MEM + "\x00", "output_mode": "content"},
        owner_args={"pattern": "CANARY", "path": MEM, "output_mode": "content"},
    ),
    Escape(
        "grep with a glob aimed at memory",
        "grep",
        {"pattern": "CANARY", "path": "{D}", "glob": "**/memory/**", "output_mode": "content"},
        outcome="withheld",
    ),
    Escape(
        "grep counts across the data dir",
        "grep",
        {"pattern": "CANARY", "path": "{D}", "output_mode": "count"},
        outcome="withheld",
        leak="secret.md",
        owner_sees="secret.md",
    ),
    Escape(
        "grep the prompt cache",
        "grep",
        {"pattern": "CANARY", "path": "{victim}/prompt-cache.json", "output_mode": "content"},
        leak="{P}",
        protected="agents/alice/prompt-cache.json",
        owner_sees="{P}",
    ),
    Escape(
        "grep for host secrets",
        "grep",
        {"pattern": "CANARY-HOST", "path": "{D}", "output_mode": "content"},
        outcome="withheld",
        leak="{S}",
        protected="secrets.bin",
        owner_args={"pattern": "CANARY", "path": "{D}", "output_mode": "content"},
    ),
    # grep must read no ignore or config file (issue 9): rg opened them by name, through symlinks
    ignore_link(".ignore"),
    ignore_link(".rgignore"),
    ignore_link(".gitignore"),
    ignore_link(".git/info/exclude"),
    ignore_link(".ignore", "{victim}/transcript.jsonl", leak="{T}", protected="agents/alice/transcript.jsonl"),
    ignore_link(".ignore", pattern="(unclosed"),
    ignore_link(".gitignore", pattern="["),
    ignore_link(".ignore", pattern="notes", outcome="withheld", owner_args={"pattern": "ORIGINAL"}, owner_sees=None),
    # write_file
    write("write by absolute path", NOTES),
    write("write by dot-dot", "../../alice/scratch/notes.txt"),
    write("write through a leaf symlink", "notes_link", links=NOTES_LINK, **OWNER_WRITES_NOTES),
    write(
        "write through a dangling symlink",
        "dangling",
        links={"dangling": "{victim}/memory/new.md"},
        must_not_exist="agents/alice/memory/new.md",
        owner_args={"path": "new.md", "content": "PWNED"},
        owner_writes=("agents/alice/scratch/new.md", "PWNED"),
    ),
    write(
        "write through an ancestor symlink to a new path",
        "memlink/sub/new.md",
        links=MEMLINK,
        must_not_exist="agents/alice/memory/sub",
        owner_args={"path": "sub/new.md", "content": "PWNED"},
        owner_writes=("agents/alice/scratch/sub/new.md", "PWNED"),
    ),
    write("write through a link to the agent dir", "al/scratch/notes.txt", links={"al": "{victim}"}),
    write(
        "write into memory", "{victim}/memory/new.md", must_not_exist="agents/alice/memory/new.md", **OWNER_WRITES_NOTES
    ),
    write("overwrite memory", MEM, protected="agents/alice/memory/secret.md", **OWNER_WRITES_NOTES),
    write("write the profile", "{victim}/profile.json", protected="agents/alice/profile.json", **OWNER_WRITES_NOTES),
    write("write path with NUL", NOTES + "\x00", **OWNER_WRITES_NOTES),
    write(
        "write dot-dot from scratch to memory",
        "{victim}/scratch/../memory/x.md",
        must_not_exist="agents/alice/memory/x.md",
        **OWNER_WRITES_NOTES,
    ),
    write("write host secrets key", "{D}/secrets.key", protected="secrets.key", **OWNER_WRITES_NOTES),
    # writes outside the data dir are denied whatever the permission (issue 9: the agent replaced the kernel's rg)
    outside("overwrite a program outside the data dir", "{O}/rg"),
    outside("write a new file outside the data dir", "{O}/new.sh", must_not_exist="../outside/new.sh"),
    outside("write outside through an ancestor symlink", "out/rg", links={"out": "{O}"}),
    outside("write outside by dot-dot from scratch", "../../../../outside/rg"),
    outside("write outside through a leaf symlink", "rglink", links={"rglink": "{O}/rg"}),
    # edit_file
    edit("edit by absolute path", NOTES),
    edit("edit by dot-dot", "../../alice/scratch/notes.txt"),
    edit(
        "edit through a leaf symlink",
        "notes_link",
        links=NOTES_LINK,
        owner_args={"path": NOTES, "old_string": "ORIGINAL", "new_string": "PWNED"},
    ),
    edit(
        "edit a program outside the data dir",
        "{O}/rg",
        **PROTECT_PROGRAM,
        owner_args={"path": NOTES, "old_string": "ORIGINAL", "new_string": "PWNED"},
    ),
    edit(
        "edit memory",
        MEM,
        protected="agents/alice/memory/secret.md",
        owner_args={"path": NOTES, "old_string": "ORIGINAL", "new_string": "PWNED"},
    ),
    # shell: the sandbox must refuse what the file tools refuse
    shell("shell cat", "cat " + MEM),
    shell("shell cp", f"cp {MEM} stolen.md && cat stolen.md"),
    shell(
        "shell sed -i",
        "sed -i s/ORIGINAL/PWNED/ " + NOTES,
        **PROTECT_NOTES,
        owner_writes=("agents/alice/scratch/notes.txt", "ALICE-NOTES-PWNED"),
    ),
    shell(
        "shell sed -i on memory",
        "sed -i s/CANARY/FORGED/ " + MEM,
        leak="FORGED",
        owner_args={"command": "sed -i s/ORIGINAL/PWNED/ " + NOTES},
        owner_sees=None,
        owner_writes=("agents/alice/scratch/notes.txt", "ALICE-NOTES-PWNED"),
    ),
    shell("shell ln -s", f"ln -sf {MEM} shell_link && cat shell_link"),
    shell("shell python open", f"python3 -c \"print(open('{MEM}').read())\""),
    shell("shell follows a link the file tools refused", "cat leaf", links=LEAF),
    shell("shell redirect write", "echo PWNED > " + NOTES, **PROTECT_NOTES, owner_writes=OWN_NOTES),
    shell(
        "shell reads host secrets",
        "cat {D}/secrets.bin",
        leak="{S}",
        protected="secrets.bin",
        owner_args={"command": "cat " + MEM},
    ),
    shell("shell lists other agents", "ls {D}/agents", outcome="withheld", leak="alice", owner_sees="alice"),
    shell("shell grep -r the data dir", "grep -r CANARY {D}"),
    shell("shell via /proc/1/root", "cat /proc/1/root" + MEM, owner_args={"command": "cat " + MEM}),
    shell("shell python symlink", f"python3 -c \"import os; os.symlink('{MEM}', 'pl'); print(open('pl').read())\""),
]


def fill(world: Any, value: Any) -> Any:
    if isinstance(value, dict):
        return {key: fill(world, item) for key, item in value.items()}
    if not isinstance(value, str):
        return value
    victim = str(world.agent("alice"))
    return (
        value.replace("{victim}", victim)
        .replace("{D}", str(world.data))
        .replace("{M}", world.memory_canary)
        .replace("{P}", world.prompt_canary)
        .replace("{T}", world.transcript_canary)
        .replace("{S}", world.secrets_canary)
        .replace("{O}", str(world.outside))
    )


def attempt(world: Any, arun: Any, case: Escape, agent_id: str, args: dict[str, Any]) -> ToolResult:
    for name, target in case.links.items():
        link = world.agent(agent_id) / "scratch" / name
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(fill(world, target), link)
    if case.deep:
        world.deep_tree(agent_id)

    async def main() -> ToolResult:
        pool = ShellPool(SANDBOX)
        try:
            return await TOOLS[case.tool].run(fill(world, args), world.context(agent_id, pool))
        finally:
            await pool.close_all()

    return arun(main())


def test_the_table_covers_every_tool_with_forty_attempts() -> None:
    assert len(CASES) >= 40
    assert {case.tool for case in CASES} == {
        "read_file",
        "list_dir",
        "glob",
        "grep",
        "write_file",
        "edit_file",
        "shell",
    }
    assert isinstance(SANDBOX, ShellSandbox)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_an_escape_attempt_is_refused_and_leaves_the_protected_bytes_alone(world: Any, arun: Any, case: Escape) -> None:
    before = world.snapshot()
    assert case.protected in before
    result = attempt(world, arun, case, "mallory", case.args)
    if case.outcome == "denied":
        assert result.is_error and result.content.startswith("denied:"), result.content
    elif case.outcome == "failed":
        assert result.is_error, result.content
    else:
        assert not result.is_error, result.content
    assert fill(world, case.leak) not in result.content
    assert world.snapshot()[case.protected] == before[case.protected]
    if case.must_not_exist is not None:
        assert not os.path.lexists(world.data / case.must_not_exist)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_owner_can_do_the_legitimate_twin(world: Any, arun: Any, case: Escape) -> None:
    result = attempt(world, arun, case, "alice", case.owner_args or case.args)
    assert not result.is_error, result.content
    if case.owner_sees is not None:
        assert fill(world, case.owner_sees) in result.content
    if case.owner_writes is not None:
        relative, text = case.owner_writes
        assert (world.data / relative).read_text(encoding="utf-8").startswith(text)
