"""A real kernel server holds each session's conversation: a turn sends what follows, the model gets it all.

Issue 22.12. Driven over in-memory streams as the host drives it, against the local fake model server.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kernel.server import KernelServer
from protocol.dispatch import Router
from protocol.errors import UNKNOWN_PREFIX, JsonRpcError
from protocol.models.kernel import ChatMessage, SummarizeResult, chain_hashes
from protocol.peer import JsonRpcPeer
from protocol.transport import memory_transport_pair
from tests.kernel.providers.fake_llm_server import FakeModelServer
from tests.support.fake_model import say


class _Host(Router):
    def __init__(self) -> None:
        super().__init__()
        self.ended: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def dispatch(self, message: Any = None, *, raw: str | None = None) -> Any:
        if isinstance(message, dict) and "id" not in message and message.get("method") == "turn.ended":
            self.ended.put_nowait(message["params"])
            return None
        if isinstance(message, dict) and "id" not in message:
            return None
        return await super().dispatch(message, raw=raw)


def _wire(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"role": role, "content": content} for role, content in pairs]


def _prefix(messages: list[dict[str, str]]) -> dict[str, Any]:
    chain = chain_hashes([ChatMessage.model_validate(m) for m in messages])
    return {"count": len(messages), "hash": chain[-1]}


def test_a_turn_that_continues_the_held_list_reaches_the_model_whole_and_an_unheld_one_is_refused(
    model_server: FakeModelServer,
) -> None:
    model = {"provider": "openai", "name": "m", "baseUrl": model_server.url + "/v1"}
    first = _wire(("system", "You are A."), ("user", "one"))
    follow = _wire(("assistant", "reply one"), ("user", "two"))
    model_server.script(say("reply one"), say("summary"), say("reply two"))

    async def main() -> None:
        kernel = KernelServer()
        host_end, kernel_end = memory_transport_pair()
        host = _Host()
        peer = JsonRpcPeer(host_end, host, name="kernel", default_timeout=30)
        async with asyncio.timeout(60), asyncio.TaskGroup() as tasks:
            tasks.create_task(kernel.serve(kernel_end))
            serving = tasks.create_task(peer.serve())
            turn = {"runId": "r1", "session": "ann", "messages": first, "model": model}
            await peer.request("turn.start", turn)
            assert (await host.ended.get())["reason"] == "idle"
            # a summary continues the turn's list with its instruction, and is not kept
            summary = {
                "session": "ann",
                "prefix": _prefix(first),
                "messages": _wire(("user", "sum up")),
                "model": model,
            }
            assert (await peer.request("summarize", summary, SummarizeResult)).text == "summary"
            turn = {"runId": "r2", "session": "ann", "prefix": _prefix(first), "messages": follow, "model": model}
            await peer.request("turn.start", turn)
            assert (await host.ended.get())["reason"] == "idle"
            other = [*first, *_wire(("assistant", "another reply"))]
            for session, prefix in (("bob", _prefix(first)), ("ann", _prefix(other))):
                stray = {"runId": "r3", "session": session, "prefix": prefix, "messages": [], "model": model}
                with pytest.raises(JsonRpcError) as refused:
                    await peer.request("turn.start", stray)
                assert refused.value.code == UNKNOWN_PREFIX
            await peer.request("session.close", {"session": "ann"})
            closed = {
                "runId": "r4",
                "session": "ann",
                "prefix": _prefix([*first, *follow]),
                "messages": [],
                "model": model,
            }
            with pytest.raises(JsonRpcError) as refused:
                await peer.request("turn.start", closed)
            assert refused.value.code == UNKNOWN_PREFIX
            await peer.request("shutdown", {})
            serving.cancel()

    asyncio.run(main())
    bodies = [r.body["messages"] for r in model_server.requests]
    assert bodies == [first, [*first, {"role": "user", "content": "sum up"}], [*first, *follow]]
