"""The kernel's MCP pool with real servers (written with the `mcp` package) inside real bubblewrap and Landlock."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from kernel.mcp import McpCallError, McpPool, ServerSpec, result_text
from protocol.models.mcp import McpStatusEvent
from sandbox import Policy, ShellSandbox, Unavailable, build_policy, detect_shell_sandbox
from sandbox.mcp_sandbox import server_dir, server_home

SUPPORT = Path(__file__).resolve().parents[2] / "support"
NOTES = ServerSpec("notes", sys.executable, (str(SUPPORT / "mcp_notes.py"),))
HOSTILE = ServerSpec(
    "hostile", sys.executable, (str(SUPPORT / "mcp_hostile.py"),), secrets=(("TOKEN", "tok-5ecret-77"),)
)


class Statuses:
    def __init__(self) -> None:
        self.events: list[McpStatusEvent] = []
        self.changed = asyncio.Condition()

    async def __call__(self, event: McpStatusEvent) -> None:
        async with self.changed:
            self.events.append(event)
            self.changed.notify_all()

    async def wait_for(self, where: Callable[[McpStatusEvent], bool], timeout: float = 30) -> McpStatusEvent:
        async with asyncio.timeout(timeout), self.changed:
            while True:
                for event in self.events:
                    if where(event):
                        return event
                await self.changed.wait()

    def states(self, server: str, session: str = "ann") -> list[str]:
        return [e.state for e in self.events if e.server == server and e.session == session]


def _policy(tmp_path: Path, agent: str = "ann") -> Policy:
    for sub in ("scratch", "memory"):
        (tmp_path / "agents" / agent / sub).mkdir(parents=True, exist_ok=True)
    return build_policy(str(tmp_path), agent)


@asynccontextmanager
async def _pool(
    sandbox: ShellSandbox | Unavailable | None = None, **options: float
) -> AsyncIterator[tuple[McpPool, Statuses]]:
    statuses = Statuses()
    pool = McpPool(sandbox or detect_shell_sandbox("bubblewrap"), statuses, **options)
    serving = asyncio.create_task(pool.serve())
    await asyncio.sleep(0)  # let the pool take its task group
    try:
        yield pool, statuses
    finally:
        await pool.close_all()
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)


def _text(result: object) -> str:
    return "\n".join(getattr(block, "text", "") for block in getattr(result, "content", []))


def test_a_server_starts_once_and_keeps_its_session_between_turns(tmp_path: Path) -> None:
    async def main() -> None:
        policy = _policy(tmp_path)
        async with _pool() as (pool, statuses):
            (notes,) = await pool.ready_servers("ann", policy, [NOTES])
            assert {tool.name for tool in notes.tools} == {"add", "list", "wait", "crash"}
            await notes.call("add", {"text": "buy milk"})
            (again,) = await pool.ready_servers("ann", policy, [NOTES])
            assert again is notes and "buy milk" in _text(await again.call("list", {}))
            assert statuses.states("notes") == ["starting", "ready"]
            ready = next(e for e in statuses.events if e.state == "ready")
            assert ready.tool_count == 4

    asyncio.run(main())


def test_an_allowlist_offers_only_its_tools(tmp_path: Path) -> None:
    async def main() -> None:
        async with _pool() as (pool, _):
            spec = ServerSpec("notes", NOTES.command, NOTES.args, tools=("list",))
            (notes,) = await pool.ready_servers("ann", _policy(tmp_path), [spec])
            assert [tool.name for tool in notes.tools] == ["list"]

    asyncio.run(main())


def test_a_server_that_dies_mid_call_ends_the_call_with_an_error_and_is_restarted_next_turn(tmp_path: Path) -> None:
    async def main() -> None:
        policy = _policy(tmp_path)
        async with _pool() as (pool, statuses):
            (notes,) = await pool.ready_servers("ann", policy, [NOTES])
            try:
                await notes.call("crash", {})
                raise AssertionError("the call should have failed")
            except Exception as exc:
                assert "stopped during the call" in str(exc) and "crashing on purpose" in str(exc)
            failed = await statuses.wait_for(lambda e: e.state == "failed")
            assert failed.stderr_tail is not None and "crashing on purpose" in failed.stderr_tail
            (fresh,) = await pool.ready_servers("ann", policy, [NOTES])
            assert fresh is not notes and fresh.state == "ready"

    asyncio.run(main())


def test_an_idle_server_is_stopped(tmp_path: Path) -> None:
    async def main() -> None:
        async with _pool(idle_seconds=0.3) as (pool, statuses):
            await pool.ready_servers("ann", _policy(tmp_path), [NOTES])
            await statuses.wait_for(lambda e: e.state == "stopped")
            assert statuses.states("notes") == ["starting", "ready", "stopped"]

    asyncio.run(main())


def test_a_changed_server_is_restarted_and_closing_a_session_stops_its_servers_and_no_other(tmp_path: Path) -> None:
    async def main() -> None:
        ann, bob = _policy(tmp_path), _policy(tmp_path, "bob")
        async with _pool() as (pool, statuses):
            await pool.ready_servers("ann", ann, [NOTES])
            (bobs,) = await pool.ready_servers("bob", bob, [NOTES])
            changed = ServerSpec("notes", NOTES.command, NOTES.args, env=(("MODE", "two"),))
            (restarted,) = await pool.ready_servers("ann", ann, [changed])
            assert statuses.states("notes", "ann") == ["starting", "ready", "stopped", "starting", "ready"]
            assert await pool.ready_servers("ann", ann, []) == [] and restarted.state == "ready", (
                "a Work run offers none"
            )
            await pool.close("ann")
            assert statuses.states("notes", "ann")[-1] == "stopped" and restarted.state == "stopped"
            assert bobs.state == "ready" and statuses.states("notes", "bob") == ["starting", "ready"]

    asyncio.run(main())


def test_without_an_os_sandbox_no_server_starts_and_the_reason_is_reported_once(tmp_path: Path) -> None:
    async def main() -> None:
        policy = _policy(tmp_path)
        async with _pool(Unavailable("bubblewrap (bwrap) is not installed")) as (pool, statuses):
            assert await pool.ready_servers("ann", policy, [NOTES]) == []
            assert await pool.ready_servers("ann", policy, [NOTES]) == []
            (failed,) = statuses.events
            assert failed.state == "failed" and failed.error is not None and "bwrap" in failed.error

    asyncio.run(main())


def test_a_missing_secret_or_program_keeps_the_server_from_starting(tmp_path: Path) -> None:
    async def main() -> None:
        policy = _policy(tmp_path)
        lacking = ServerSpec("notes", NOTES.command, NOTES.args, missing_secrets=("notes-token",))
        absent = ServerSpec("gone", "/no/such/program")
        async with _pool() as (pool, statuses):
            assert await pool.ready_servers("ann", policy, [lacking, absent]) == []
            errors = {e.server: e.error or "" for e in statuses.events}
            assert "notes-token" in errors["notes"] and "not found" in errors["gone"]
            assert [e.state for e in statuses.events] == ["failed", "failed"]

    asyncio.run(main())


def test_a_server_that_exits_at_start_is_failed_with_its_stderr_tail_and_its_secret_withheld(tmp_path: Path) -> None:
    async def main() -> None:
        broken = ServerSpec("broken", HOSTILE.command, (*HOSTILE.args, "--exit-at-start"), secrets=HOSTILE.secrets)
        async with _pool() as (pool, statuses):
            assert await pool.ready_servers("ann", _policy(tmp_path), [broken]) == []
            failed = await statuses.wait_for(lambda e: e.state == "failed")
            assert failed.stderr_tail is not None and "giving up at start" in failed.stderr_tail
            assert "[secret TOKEN withheld]" in failed.stderr_tail
            assert all("tok-5ecret-77" not in repr(event) for event in statuses.events)

    asyncio.run(main())


def _confinement(tmp_path: Path, sandbox: ShellSandbox) -> None:
    async def main() -> None:
        policy = _policy(tmp_path)
        bob = tmp_path / "agents/bob"
        (bob / "memory").mkdir(parents=True)
        (bob / "memory/ledger.jsonl").write_text("BOB-LEDGER-CANARY\n", encoding="utf-8")
        (tmp_path / "agents/ann/memory/ledger.jsonl").write_text("ANN-LEDGER-CANARY\n", encoding="utf-8")
        (tmp_path / "secrets.bin").write_text("HOST-SECRETS-CANARY", encoding="utf-8")
        listener = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        async with listener, _pool(sandbox) as (pool, _):
            (hostile,) = await pool.ready_servers("ann", policy, [HOSTILE])
            for path in ("agents/bob/memory/ledger.jsonl", "agents/ann/memory/ledger.jsonl", "secrets.bin"):
                said = _text(await hostile.call("read_path", {"path": str(tmp_path / path)}))
                assert said.startswith("READ FAILED") and "CANARY" not in said
            outside = tmp_path / "agents/bob/scratch-planted.txt"
            said = _text(await hostile.call("write_path", {"path": str(outside), "text": "x"}))
            assert not outside.exists()
            said = _text(await hostile.call("write_path", {"path": "mine.txt", "text": "mine"}))
            assert said.startswith("WRITE FAILED"), "its working directory is read-only"
            mine = tmp_path / "agents/ann/scratch/mine.txt"
            said = _text(await hostile.call("write_path", {"path": str(mine), "text": "mine"}))
            assert said == "WRITE OK" and mine.read_text() == "mine"
            assert _text(await hostile.call("connect", {"port": port})).startswith("CONNECT FAILED")
            said = result_text(await hostile.call("environment", {"check": "TOKEN"}), hostile.spec).content
            assert "[secret TOKEN withheld]" in said and "tok-5ecret-77" not in said

    asyncio.run(main())


def test_under_bubblewrap_a_server_reaches_no_memory_no_host_file_no_other_agent_and_no_network(tmp_path: Path) -> None:
    sandbox = detect_shell_sandbox("bubblewrap")
    assert isinstance(sandbox, ShellSandbox), sandbox
    _confinement(tmp_path, sandbox)


def test_under_landlock_a_server_reaches_no_memory_no_host_file_no_other_agent_and_no_network(tmp_path: Path) -> None:
    sandbox = detect_shell_sandbox("landlock")
    assert isinstance(sandbox, ShellSandbox), sandbox
    _confinement(tmp_path, sandbox)


PLAIN = ServerSpec("plain", sys.executable, (str(SUPPORT / "mcp_plain.py"),))


def test_a_line_that_is_not_json_rpc_ends_the_call_at_once_and_names_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 22.10: the call does not wait out its timeout; the error and the status show what was written,
    and the line (which may hold a secret) is not logged."""

    async def main() -> None:
        async with _pool(call_timeout=600) as (pool, statuses):
            (plain,) = await pool.ready_servers("ann", _policy(tmp_path), [PLAIN])
            async with asyncio.timeout(30):
                try:
                    await plain.call("garble", {})
                    raise AssertionError("the call should have failed")
                except McpCallError as exc:
                    assert "not a JSON-RPC message" in exc.message and "no answer follows" in exc.message
            failed = await statuses.wait_for(lambda e: e.state == "failed")
            assert failed.error is not None and "no answer follows" in failed.error

    asyncio.run(main())
    assert not [record for record in caplog.records if "no answer follows" in record.getMessage()]
    assert not [record for record in caplog.records if "Failed to parse" in record.getMessage()]


def test_a_loader_variable_or_a_program_where_agents_write_keeps_the_server_from_starting(tmp_path: Path) -> None:
    """Issue 21.4, in the kernel too: settings the host would refuse never start a server."""

    async def main() -> None:
        policy = _policy(tmp_path)
        planted = tmp_path / "agents/ann/scratch/server"
        planted.write_text("#!/bin/sh\n", encoding="utf-8")
        planted.chmod(0o755)
        specs = [
            ServerSpec("preload", NOTES.command, NOTES.args, env=(("LD_PRELOAD", f"{planted}.so"),)),
            ServerSpec("path", NOTES.command, NOTES.args, secrets=(("PYTHONPATH", str(planted.parent)),)),
            ServerSpec("planted", str(planted)),
            ServerSpec("bare", "python3"),
            NOTES,
        ]
        async with _pool() as (pool, statuses):
            ready = await pool.ready_servers("ann", policy, specs)
            assert [c.spec.name for c in ready] == ["notes"]
            errors = {e.server: e.error or "" for e in statuses.events if e.state == "failed"}
            assert "LD_PRELOAD" in errors["preload"] and "PYTHONPATH" in errors["path"]
            assert "data dir" in errors["planted"] and "not found" in errors["bare"]
            assert str(planted.parent) not in errors["path"], "a secret's value is not shown"

    asyncio.run(main())


def test_a_server_works_in_its_own_home_and_finds_the_workspace_by_its_variable(tmp_path: Path) -> None:
    async def main() -> None:
        policy = _policy(tmp_path)
        async with _pool() as (pool, _):
            (hostile,) = await pool.ready_servers("ann", policy, [HOSTILE])
            said = _text(await hostile.call("environment", {"check": "HEARTH_WORKSPACE"}))
            assert f"VALUE: {policy.workspace}" in said and f"CWD: {server_dir(policy, 'hostile')}" in said
            said = _text(await hostile.call("environment", {"check": "HOME"}))
            home = server_home(policy, "hostile")
            assert f"VALUE: {home}" in said and (os.stat(home).st_mode & 0o777) == 0o700
            said = _text(await hostile.call("write_path", {"path": f"{home}/.cache/x", "text": "cache"}))
            assert said.startswith("WRITE FAILED"), "the cache directory is the server's to create"
            os.makedirs(f"{home}/.cache")
            said = _text(await hostile.call("write_path", {"path": f"{home}/.cache/x", "text": "cache"}))
            assert said == "WRITE OK" and not (tmp_path / "agents/ann/scratch/.cache").exists()

    asyncio.run(main())


def test_a_failed_start_is_reported_with_its_likely_cause(tmp_path: Path) -> None:
    async def main() -> None:
        missing = ServerSpec("missing", sys.executable, ("-m", "no_such_module_hearth"))
        async with _pool() as (pool, statuses):
            assert await pool.ready_servers("ann", _policy(tmp_path), [missing]) == []
            failed = await statuses.wait_for(lambda e: e.state == "failed")
            assert failed.cause is not None and "no_such_module_hearth" in failed.cause

    asyncio.run(main())
