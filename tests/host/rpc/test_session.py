"""The session methods through the host's RPC layer, in memory: the handshake guard, status, settings."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, NOT_INITIALIZED, JsonRpcError
from protocol.models.host import PROTOCOL_VERSION
from tests.support.memory_host import MemoryHost


def test_only_ping_shutdown_and_initialize_answer_before_the_handshake(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path, initialize=False) as host:
            assert await host.call("ping") == {}
            for method in ("host.status", "agent.list", "settings.get", "memory.list", "secrets.list"):
                with pytest.raises(JsonRpcError) as refused:
                    await host.call(method, {"agentId": "ann"} if method == "memory.list" else {})
                assert refused.value.code == NOT_INITIALIZED, method
            result = await host.call("initialize", {"client": {"name": "t"}, "protocolVersion": PROTOCOL_VERSION})
            assert result["server"]["name"] == "hearth" and result["protocolVersion"] == PROTOCOL_VERSION
            assert (await host.call("agent.list")) == {"agents": []}

    asyncio.run(main())


def test_host_status_reports_the_data_dir_agents_and_concurrency(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann"})
            status = await host.call("host.status")
            assert status["dataDir"] == str(tmp_path) and status["agents"] == 1
            assert status["maxConcurrentRuns"] == 4 and status["runs"] == []

    asyncio.run(main())


def test_settings_set_is_written_applied_and_survives_a_restart_and_a_bad_value_changes_nothing(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            assert (await host.call("settings.set", {"maxConcurrentRuns": 2}))["maxConcurrentRuns"] == 2
            assert (await host.call("host.status"))["maxConcurrentRuns"] == 2
            with pytest.raises(JsonRpcError) as bad:
                await host.call("settings.set", {"maxConcurrentRuns": 0})
            assert bad.value.code == INVALID_PARAMS
        async with MemoryHost(tmp_path) as host:
            settings = await host.call("settings.get")
            assert settings == {
                "maxConcurrentRuns": 2,
                "shellSandbox": "auto",
                "maxHops": 4,
                "timeZone": None,
                "chainBudget": 200,
            }

    asyncio.run(main())
    assert json.loads((tmp_path / "settings.json").read_text(encoding="utf-8"))["maxConcurrentRuns"] == 2


def test_an_unknown_method_is_method_not_found_and_the_session_goes_on(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            with pytest.raises(JsonRpcError) as unknown:
                await host.call("agent.fly")
            assert unknown.value.code == METHOD_NOT_FOUND
            assert await host.call("ping") == {}

    asyncio.run(main())
