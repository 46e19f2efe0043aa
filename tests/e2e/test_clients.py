"""One host, many clients (issue 13): clients attach to the running host over its Unix socket, real processes.

A `hearth` command attaches to the host that runs (never failing because one does), starts one when
none runs, and that host stops by itself once no client and no run is left. The socket is 0600, a client
must show the host's token, a stale socket is replaced, another user's socket is refused.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from desktop.client import attach_or_start
from protocol.dispatch import Router
from protocol.endpoint import ENDPOINT_FILE, MAX_SOCKET_PATH, read_endpoint
from protocol.errors import CONNECTION_CLOSED, NOT_AUTHORIZED, NOT_INITIALIZED, JsonRpcError
from protocol.framing import READ_LIMIT
from protocol.models.host import PROTOCOL_VERSION
from protocol.peer import JsonRpcPeer
from protocol.transport import stream_transport
from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model
from tests.support.shell import TestShell

SLOW = {"match": "^slow$", "reply": "z" * 60, "chunkChars": 2, "delayMs": 25}
ECHO = {"match": "^say (.*)$", "reply": r"\1"}


@asynccontextmanager
async def _raw_socket(data_dir: Path) -> AsyncIterator[JsonRpcPeer]:
    """A connection to the host's socket that knows nothing of its token."""
    endpoint = read_endpoint(data_dir)
    assert endpoint is not None
    reader, writer = await asyncio.open_unix_connection(endpoint.socket, limit=READ_LIMIT)
    transport = stream_transport(reader, writer)
    peer = JsonRpcPeer(transport, Router(), name="raw", default_timeout=20)
    serving = asyncio.create_task(peer.serve())
    try:
        yield peer
    finally:
        await transport.close()
        writer.close()
        await writer.wait_closed()
        serving.cancel()


def _pid(host: HostProcess) -> int:
    assert host.process is not None
    return host.process.pid


async def _wait_exit(pid: int) -> int:
    """Wait for a host this test process started (it is our child) to exit; its exit status."""
    async with asyncio.timeout(60):
        _, status = await asyncio.to_thread(os.waitpid, pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_second_client_attaches_to_the_running_host_and_both_get_events(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            record = read_endpoint(tmp_path)
            assert record is not None and record.pid == _pid(host)
            assert stat.S_IMODE(os.stat(record.socket).st_mode) == 0o600
            assert stat.S_IMODE(os.stat(tmp_path / ENDPOINT_FILE).st_mode) == 0o600
            second = TestShell()
            link = await attach_or_start(tmp_path, second.router, client="second")
            second.peer = link.peer
            try:
                assert not link.started_host
                await link.peer.request("agent.create", {"name": "ann", "settings": scripted_model(ECHO)})
                await host.wait_for("agent.updated", lambda p: p["agentId"] == "ann")
                sent = await host.call("agent.send", {"agentId": "ann", "text": "say both of you"})
                ended = await second.wait_for("agent.ended", lambda p: p["agentId"] == "ann")
                assert ended["runId"] == sent["runId"] and ended["reason"] == "idle"
                status = await link.peer.request("host.status", {})
                assert status["pid"] == _pid(host)
            finally:
                await link.close()
            # The second client leaving does not stop the host its shell owns.
            assert (await host.call("agent.get", {"agentId": "ann"}))["name"] == "ann"

    asyncio.run(main())


def test_a_socket_client_without_the_token_can_do_nothing_and_cannot_stop_the_host(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "kept"})
            async with _raw_socket(tmp_path) as raw:
                for method in ("agent.list", "agent.delete", "shutdown"):
                    with pytest.raises(JsonRpcError) as early:
                        await raw.request(method, {"agentId": "kept"} if method == "agent.delete" else {})
                    assert early.value.code == NOT_INITIALIZED
                init = {"client": {"name": "intruder"}, "protocolVersion": PROTOCOL_VERSION}
                for token in (None, "guessed"):
                    with pytest.raises(JsonRpcError) as refused:
                        await raw.request("initialize", {**init, "token": token})
                    assert refused.value.code == NOT_AUTHORIZED
                with pytest.raises(JsonRpcError) as still:
                    await raw.request("agent.list", {})
                assert still.value.code == NOT_INITIALIZED
            assert (await host.call("ping")) == {}
            assert [a["agentId"] for a in (await host.call("agent.list"))["agents"]] == ["kept"]

    asyncio.run(main())


def test_a_stale_socket_and_record_left_by_a_dead_host_are_replaced(tmp_path: Path) -> None:
    leftover = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    leftover.bind(str(tmp_path / "host.sock"))
    leftover.close()  # the file stays, and nobody listens on it: a dead host's socket
    stale = {"socket": str(tmp_path / "host.sock"), "token": "old", "pid": 999_999}
    (tmp_path / ENDPOINT_FILE).write_text(json.dumps(stale), encoding="utf-8")

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            link = await attach_or_start(tmp_path, Router(), client="after-a-crash")
            try:
                assert not link.started_host
                assert (await link.peer.request("host.status", {}))["pid"] == _pid(host)
            finally:
                await link.close()

    asyncio.run(main())


def test_a_socket_of_another_user_is_refused_by_the_host_and_by_clients(tmp_path: Path) -> None:
    theirs = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    theirs.bind(str(tmp_path / "host.sock"))
    theirs.close()
    os.chown(tmp_path / "host.sock", 4242, 4242)
    host = subprocess.run(
        [sys.executable, "-m", "host", "--data-dir", str(tmp_path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=60,
    )
    assert host.returncode == 2 and "uid 4242" in host.stderr
    assert (tmp_path / "host.sock").lstat().st_uid == 4242  # left alone, not replaced
    (tmp_path / ENDPOINT_FILE).write_text(
        json.dumps({"socket": str(tmp_path / "host.sock"), "token": "t", "pid": os.getpid()}), encoding="utf-8"
    )

    async def main() -> None:
        with pytest.raises(JsonRpcError) as refused:
            await attach_or_start(tmp_path, Router(), client="careful", timeout=10)
        assert refused.value.code == CONNECTION_CLOSED and "uid 4242" in refused.value.message

    asyncio.run(main())


def test_a_data_dir_too_long_for_a_socket_address_gets_a_private_short_socket(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    assert len(os.fsencode(deep / "host.sock")) > MAX_SOCKET_PATH

    async def main() -> None:
        async with HostProcess(deep) as host:
            record = read_endpoint(deep)
            assert record is not None and len(os.fsencode(record.socket)) <= MAX_SOCKET_PATH
            folder = Path(record.socket).parent
            assert folder.stat().st_uid == os.getuid() and stat.S_IMODE(folder.stat().st_mode) == 0o700
            link = await attach_or_start(deep, Router(), client="deep")
            try:
                assert (await link.peer.request("host.status", {}))["pid"] == _pid(host)
            finally:
                await link.close()
        assert not Path(record.socket).exists() and read_endpoint(deep) is None

    asyncio.run(main())


def test_a_host_a_client_started_finishes_the_run_then_stops_once_nobody_is_left(tmp_path: Path) -> None:
    async def main() -> None:
        link = await attach_or_start(tmp_path, Router(), client="starter")
        assert link.started_host
        pid = (await link.peer.request("host.status", {}))["pid"]
        await link.peer.request("agent.create", {"name": "ann", "settings": scripted_model(SLOW)})
        await link.peer.request("agent.send", {"agentId": "ann", "text": "slow"})
        await link.close()  # the run goes on with nobody connected
        assert await _wait_exit(pid) == 0
        lines = (tmp_path / "agents/ann/transcript.jsonl").read_text(encoding="utf-8").splitlines()
        last = json.loads(lines[-1])
        assert last["type"] == "ended" and last["reason"] == "idle"
        assert not (tmp_path / "host.sock").exists() and read_endpoint(tmp_path) is None

    asyncio.run(main())


def test_two_clients_starting_at_once_share_one_host(tmp_path: Path) -> None:
    async def main() -> None:
        links = await asyncio.gather(*(attach_or_start(tmp_path, Router(), client=f"c{i}") for i in range(3)))
        try:
            pids = {(await link.peer.request("host.status", {}))["pid"] for link in links}
            assert len(pids) == 1
        finally:
            for link in links:
                await link.close()
        assert await _wait_exit(pids.pop()) == 0

    asyncio.run(main())


def test_hearth_memory_list_works_while_a_shell_owns_the_host(tmp_path: Path) -> None:
    """The bug in issue 13: it failed with "another Hearth host is already using ..."."""

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann"})
            await host.call("memory.note", {"agentId": "ann", "text": "The user likes tea."})
            listed = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "hearth", "memory", "list", "ann", "--data-dir", str(tmp_path)],
                capture_output=True,
                text=True,
                cwd=REPO_ROOT,
                timeout=60,
            )
            assert listed.returncode == 0, listed.stderr
            assert "likes tea" in listed.stdout

    asyncio.run(main())
