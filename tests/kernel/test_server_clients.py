"""The kernel keeps one SDK client per provider configuration across model calls, and closes it when it stops."""

from __future__ import annotations

import asyncio

from kernel.server import KernelServer
from protocol.dispatch import Router
from protocol.models.kernel import SummarizeResult
from protocol.peer import JsonRpcPeer
from protocol.transport import memory_transport_pair
from tests.kernel.providers.fake_llm_server import FakeModelServer
from tests.support.fake_model import say


def test_model_calls_of_one_configuration_share_a_client_that_is_closed_at_shutdown(
    model_server: FakeModelServer,
) -> None:
    async def main() -> None:
        kernel = KernelServer()
        host_end, kernel_end = memory_transport_pair()
        serving = asyncio.create_task(kernel.serve(kernel_end))
        host = JsonRpcPeer(host_end, Router(), name="kernel", default_timeout=30)
        reading = asyncio.create_task(host.serve())
        model = {"provider": "openai", "name": "m", "baseUrl": model_server.url + "/v1", "apiKey": "sk-test-one"}
        params = {"messages": [{"role": "user", "content": "sum up"}], "model": model}
        model_server.script(say("first"), say("second"), say("third"))
        texts = [(await host.request("summarize", params, SummarizeResult)).text for _ in range(2)]
        assert texts == ["first", "second"]
        assert len(kernel.clients) == 1
        other = {**params, "model": {**model, "apiKey": "sk-test-two"}}
        assert (await host.request("summarize", other, SummarizeResult)).text == "third"
        assert len(kernel.clients) == 2
        await host.request("shutdown", {})
        async with asyncio.timeout(10):
            await serving
        assert len(kernel.clients) == 0
        await host_end.close()
        reading.cancel()

    asyncio.run(main())
    ports = [r.port for r in model_server.requests]
    assert ports[0] == ports[1] and ports[2] != ports[0]
    assert [r.headers["authorization"] for r in model_server.requests][2] == "Bearer sk-test-two"
