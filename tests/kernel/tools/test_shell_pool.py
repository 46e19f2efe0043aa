"""The persistent shell: state between calls, timeouts, caps, session end, and a sandbox that mirrors the policy."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path
from typing import Any

from kernel.tools import SHELL, ShellPool
from kernel.tools.shell_pool import quote_for_bash
from sandbox import ShellSandbox, Unavailable, detect_shell_sandbox

BWRAP = detect_shell_sandbox("bubblewrap")


async def session(
    env: Any,
    *commands: str,
    timeout: float = 30,
    network: bool = False,
    pool: ShellPool | None = None,
    close: bool = True,
) -> list[Any]:
    pool = pool or ShellPool(BWRAP)
    policy = env.policy(network=network)
    try:
        return [await pool.run("ada", policy, command, timeout) for command in commands]
    finally:
        if close:
            await pool.close_all()


def test_the_bubblewrap_sandbox_is_available_here() -> None:
    assert isinstance(BWRAP, ShellSandbox) and BWRAP.kind == "bubblewrap"


def test_the_working_directory_and_exported_variables_persist(env: Any, arun: Any) -> None:
    results = arun(session(env, "mkdir -p sub && cd sub && export GREETING=hi", "pwd; echo $GREETING"))
    assert results[1].content == f"{env.scratch}/sub\nhi\n[exit code 0]"


def test_the_exit_code_is_reported_and_a_failure_is_an_error(env: Any, arun: Any) -> None:
    ok, failed = arun(session(env, "true", "echo oops >&2; exit_code() { return 3; }; exit_code"))
    assert ok.content == "[exit code 0]" and not ok.is_error
    assert failed.content == "oops\n[exit code 3]" and failed.is_error


def test_a_syntax_error_does_not_hang_the_shell(env: Any, arun: Any) -> None:
    broken, after = arun(session(env, 'echo "unterminated', "echo fine"))
    assert broken.is_error and after.content == "fine\n[exit code 0]"


def test_exit_ends_the_shell_and_the_next_call_starts_a_new_one(env: Any, arun: Any) -> None:
    gone, fresh = arun(session(env, "cd /tmp; exit 4", "pwd"))
    assert gone.is_error and "exited with code 4" in gone.content
    assert fresh.content == f"{env.scratch}\n[exit code 0]"


def test_a_timeout_kills_the_command_and_resets_the_shell(env: Any, arun: Any) -> None:
    pool = ShellPool(BWRAP)

    async def main() -> list[Any]:
        first = await session(env, "cd /tmp && echo started && sleep 30", timeout=0.5, pool=pool, close=False)
        second = await session(env, "pwd", pool=pool)
        return first + second

    slow, after = arun(main())
    assert slow.is_error and slow.content.startswith("started\n") and "timed out after 0.5s" in slow.content
    assert after.content == f"{env.scratch}\n[exit code 0]"


def test_output_is_capped_keeping_head_and_tail(env: Any, arun: Any) -> None:
    pool = ShellPool(BWRAP, output_cap=1000)
    (result,) = arun(session(env, "seq 1 100000", pool=pool))
    assert result.content.startswith("1\n2\n") and "characters omitted" in result.content
    assert result.content.endswith("100000\n[exit code 0]") and len(result.content) < 1200


def test_closing_the_session_ends_its_shell(env: Any, arun: Any) -> None:
    pool = ShellPool(BWRAP)

    async def main() -> list[Any]:
        await pool.run("ada", env.policy(), "trap 'echo bye > \"$HOME/ended.txt\"' EXIT; cd /tmp", 10)
        await pool.close("ada")
        return [await pool.run("ada", env.policy(), "pwd", 10), await pool.close_all()]

    fresh, _ = arun(main())
    assert (env.scratch / "ended.txt").read_text(encoding="utf-8") == "bye\n"
    assert fresh.content == f"{env.scratch}\n[exit code 0]"


def test_a_cancelled_call_kills_the_shell(env: Any, arun: Any) -> None:
    """The command blocks on a FIFO until the test reads it, so the cancel lands while it is surely running."""
    fifo = env.scratch / "started"
    os.mkfifo(fifo)
    pool = ShellPool(BWRAP)

    async def main() -> list[Any]:
        task = asyncio.ensure_future(pool.run("ada", env.policy(), "cd /tmp; echo go > ~/started; sleep 30", 60))
        assert await asyncio.to_thread(fifo.read_text, encoding="utf-8") == "go\n"
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        # A shell that survived the cancel would answer `/tmp`, and only after its sleep.
        async with asyncio.timeout(10):
            return await session(env, "pwd", pool=pool)

    (after,) = arun(main())
    assert after.content == f"{env.scratch}\n[exit code 0]"


def test_the_shell_environment_holds_no_host_variables(env: Any, arun: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("HEARTH_TEST_API_KEY", "sk-should-not-leak")
    (result,) = arun(session(env, "env"))
    assert "sk-should-not-leak" not in result.content
    assert f"HOME={env.scratch}" in result.content


def test_commands_with_quotes_and_unicode_arrive_intact(env: Any, arun: Any) -> None:
    command = "printf '%s\\n' \"it's\" 'a \"b\" $HOME `x` \\\\' 'héllo ☃'"
    (result,) = arun(session(env, command))
    assert result.content == 'it\'s\na "b" $HOME `x` \\\\\nhéllo ☃\n[exit code 0]'
    assert quote_for_bash("a'b").startswith("$'")


def test_the_shell_sees_its_memory_read_only_and_its_workspace_writable(env: Any, arun: Any) -> None:
    read, write_memory, write_scratch = arun(
        session(env, "cat ../memory/MEMORY.md", "echo x >> ../memory/MEMORY.md", "echo x > made.txt")
    )
    assert read.content == "ada likes tea\n[exit code 0]"
    assert write_memory.is_error and "Read-only" in write_memory.content
    assert not write_scratch.is_error and (env.scratch / "made.txt").exists()
    assert (env.data / "agents/ada/memory/MEMORY.md").read_text(encoding="utf-8") == "ada likes tea\n"


def _listener() -> socket.socket:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    return server


def test_the_network_is_off_unless_the_policy_allows_it(env: Any, arun: Any) -> None:
    with _listener() as server:
        port = server.getsockname()[1]
        probe = f"echo > /dev/tcp/127.0.0.1/{port} && echo connected"
        (off,) = arun(session(env, probe))
    assert off.is_error and "connected" not in off.content


def test_the_network_is_on_when_the_policy_allows_it(env: Any, arun: Any) -> None:
    with _listener() as server:
        port = server.getsockname()[1]
        (on,) = arun(session(env, f"echo > /dev/tcp/127.0.0.1/{port} && echo connected", network=True))
    assert on.content == "connected\n[exit code 0]"


def test_a_changed_policy_restarts_the_shell(env: Any, arun: Any) -> None:
    pool = ShellPool(BWRAP)

    async def main() -> list[Any]:
        await pool.run("ada", env.policy(), "cd /tmp", 10)
        same = await pool.run("ada", env.policy(), "pwd", 10)
        changed = await pool.run("ada", env.policy(network=True), "pwd", 10)
        await pool.close_all()
        return [same, changed]

    same, changed = arun(main())
    assert same.content == "/tmp\n[exit code 0]"
    assert changed.content == f"{env.scratch}\n[exit code 0]"


def test_a_symlinked_workspace_is_refused_before_anything_is_mounted(env: Any, arun: Any, tmp_path: Path) -> None:
    os.rmdir(env.scratch)
    os.symlink(env.data / "agents/bob/memory", env.scratch)
    pool = ShellPool(BWRAP)
    result = arun(SHELL.run({"command": "cat MEMORY.md"}, env.context(pool)))
    assert result.content.startswith("denied:") and "bob likes tea" not in result.content


def test_without_an_os_sandbox_the_pool_runs_nothing(env: Any, arun: Any) -> None:
    (result,) = arun(session(env, "touch ran.txt", pool=ShellPool(Unavailable("no sandbox here"))))
    assert result.is_error and "no sandbox here" in result.content
    assert not (env.scratch / "ran.txt").exists()
