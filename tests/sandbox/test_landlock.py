"""The Landlock fallback, run for real: the same refusals as bubblewrap where bubblewrap is missing."""

from __future__ import annotations

import socket
from typing import Any

from kernel.tools import ShellPool
from sandbox import ShellSandbox, detect_shell_sandbox
from sandbox.landlock import LandlockRules, LaunchSpec, abi_version

LANDLOCK = detect_shell_sandbox("landlock")


async def in_landlock(world: Any, agent_id: str, *commands: str, network: bool = False) -> list[Any]:
    pool = ShellPool(LANDLOCK)
    try:
        return [await pool.run(agent_id, world.policy(agent_id, network=network), c, 30) for c in commands]
    finally:
        await pool.close_all()


def test_landlock_is_available_on_this_kernel() -> None:
    assert abi_version() >= 4
    assert isinstance(LANDLOCK, ShellSandbox) and LANDLOCK.kind == "landlock"


def test_landlock_refuses_another_agents_memory_and_allows_the_owners(world: Any, arun: Any) -> None:
    command = f"cat {world.agent('alice')}/memory/secret.md"
    (stolen,) = arun(in_landlock(world, "mallory", command))
    (own,) = arun(in_landlock(world, "alice", command))
    assert stolen.is_error and world.memory_canary not in stolen.content
    assert own.content == f"{world.memory_canary}\n[exit code 0]"


def test_landlock_keeps_memory_read_only_and_the_workspace_writable(world: Any, arun: Any) -> None:
    memory_write, scratch_write, other_write = arun(
        in_landlock(
            world,
            "alice",
            "echo x >> ../memory/secret.md",
            "echo made > made.txt && cat made.txt",
            f"echo x > {world.agent('mallory')}/scratch/notes.txt",
        )
    )
    assert memory_write.is_error and scratch_write.content == "made\n[exit code 0]" and other_write.is_error
    assert (world.agent("alice") / "memory" / "secret.md").read_text(encoding="utf-8") == world.memory_canary
    assert (world.agent("mallory") / "scratch" / "notes.txt").read_text(encoding="utf-8") == "mallory's notes\n"


def test_landlock_refuses_host_secrets_and_python_reads(world: Any, arun: Any) -> None:
    secrets, python = arun(
        in_landlock(
            world,
            "mallory",
            f"cat {world.data}/secrets.bin",
            f"python3 -c \"print(open('{world.agent('alice')}/memory/secret.md').read())\"",
        )
    )
    assert secrets.is_error and world.secrets_canary not in secrets.content
    assert python.is_error and world.memory_canary not in python.content


def test_landlock_turns_tcp_off_unless_the_policy_allows_it(world: Any, arun: Any) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(2)
        probe = f"echo > /dev/tcp/127.0.0.1/{server.getsockname()[1]} && echo connected"
        (off,) = arun(in_landlock(world, "alice", probe))
        (on,) = arun(in_landlock(world, "alice", probe, network=True))
    assert off.is_error and "connected" not in off.content
    assert on.content == "connected\n[exit code 0]"


def test_the_launch_spec_round_trips_through_json() -> None:
    spec = LaunchSpec(LandlockRules(("/usr",), ("/w",), network=True), 5, "/w", ("/bin/bash", "-c", "true"))
    assert LaunchSpec.from_json(spec.to_json()) == spec
