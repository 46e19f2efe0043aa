"""Memory through the real host and kernel: what the model is actually sent, turn by turn."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.kernel.providers.fake_llm_server import FakeModelServer, Recorded, Reply, openai_stream
from tests.support.host_process import HostProcess, scripted_model


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _say(text: str) -> Any:
    return openai_stream(_chunk({"content": text}), _chunk({}, "stop"))


def _call(name: str, arguments: dict[str, Any]) -> Any:
    call = {
        "index": 0,
        "id": f"call-{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return openai_stream(_chunk({"tool_calls": [call]}), _chunk({}, "tool_calls"))


class ChatServer(FakeModelServer):
    """Plays the chat replies in order and answers every memory-extraction call with no operations."""

    def __init__(self) -> None:
        super().__init__()
        self.extractions: list[Recorded] = []

    def _next(self, recorded: Recorded) -> Reply:
        if "You keep the long-term memory" in json.dumps(recorded.body):
            self.extractions.append(recorded)
            return _say('{"operations": []}')
        return super()._next(recorded)


def _system(request_body: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request_body["messages"] if m["role"] == "system")


def test_a_note_is_in_the_next_prompt_and_a_retracted_fact_is_gone_while_another_stays(tmp_path: Path) -> None:
    server = ChatServer()
    server.script(
        _call("memory_note", {"text": "The user's cat is called Miso."}),
        _say("Noted."),
        _call("memory_note", {"text": "The user prefers tea to coffee."}),
        _say("Noted too."),
        _say("Hello again."),
        _say("Still here."),
    )
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            settings = {"model": {"provider": "openai", "name": "m", "baseUrl": server.url}}
            await host.call("agent.create", {"name": "ann", "settings": settings})
            for text in ("my cat is Miso", "I like tea", "hi"):
                sent = await host.call("agent.send", {"agentId": "ann", "text": text})
                ended = await host.wait_for("agent.ended", lambda p, r=sent["runId"]: p["runId"] == r)
                assert ended["reason"] == "idle", ended
            current = await host.call("memory.list", {"agentId": "ann", "view": "current"})
            miso = next(r for r in current["records"] if "Miso" in r["text"])
            await host.call("memory.retract", {"agentId": "ann", "recordId": miso["id"], "reason": "wrong cat"})
            sent = await host.call("agent.send", {"agentId": "ann", "text": "anything new?"})
            await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])

    try:
        asyncio.run(main())
    finally:
        server.stop()
    bodies = [r.body for r in server.requests]
    assert server.extractions, "with memory on, completed turns are offered to the extractor"
    assert [t["function"]["name"] for t in bodies[0]["tools"] if t["function"]["name"].startswith("memory_")] == [
        "memory_note",
        "memory_recall",
        "memory_correct",
        "memory_forget",
    ]
    assert "Miso" not in _system(bodies[0])
    assert "Miso" in _system(bodies[2]), "an explicit note is in the very next turn's prompt"
    assert "Miso" in _system(bodies[4]) and "tea" in _system(bodies[4])
    assert "Miso" not in json.dumps(bodies[5]["messages"][0]), "a retracted fact leaves the prompt at once"
    assert "tea" in _system(bodies[5]), "the other fact stays"
    view = (tmp_path / "agents/ann/memory/MEMORY.md").read_text(encoding="utf-8")
    assert "Miso" not in view and "tea" in view


def test_with_memory_off_there_are_no_memory_tools_no_section_and_no_extraction(tmp_path: Path) -> None:
    server = ChatServer()
    server.script(_say("Hi."))
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            on = {"model": {"provider": "scripted", "rules": [{"match": ".*", "reply": "ok"}]}}
            await host.call("agent.create", {"name": "on", "settings": on})
            await host.call("memory.note", {"agentId": "on", "text": "A fact only the other agent has."})
            settings = {"model": {"provider": "openai", "name": "m", "baseUrl": server.url}, "memory": False}
            await host.call("agent.create", {"name": "ann", "settings": settings})
            await host.call("memory.note", {"agentId": "ann", "text": "The user's name is Ada."})
            sent = await host.call("agent.send", {"agentId": "ann", "text": "I live in Lisbon and my name is Ada."})
            await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])

    try:
        asyncio.run(main())
    finally:
        server.stop()
    (body,) = [r.body for r in server.requests]
    names = [t["function"]["name"] for t in body.get("tools", [])]
    assert not [n for n in names if n.startswith("memory_")] and "read_file" in names
    assert "Ada" not in _system(body) and "memory" not in _system(body).lower()
    assert server.extractions == [], "no extraction call for an agent whose memory is off"


def test_extraction_after_a_turn_records_what_the_user_said(tmp_path: Path) -> None:
    plan = {
        "operations": [
            {"op": "assert", "text": "The user lives in Lisbon.", "key": "user.home_city", "seq": 1, "source": "user"}
        ]
    }
    rules = [
        {"match": "You keep the long-term memory", "reply": json.dumps(plan)},
        {"match": "Lisbon", "on": "user", "reply": "Lisbon is lovely in spring."},
    ]

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*rules)})
            sent = await host.call("agent.send", {"agentId": "ann", "text": "I moved to Lisbon last year for work."})
            await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            await host.wait_for("memory.changed", lambda p: p["agentId"] == "ann")
            current = await host.call("memory.list", {"agentId": "ann", "view": "current"})
            (fact,) = current["records"]
            assert fact["text"] == "The user lives in Lisbon." and fact["trust"] == "confirmed"
            assert fact["source"] == "extractor"
            history = await host.call("memory.history", {"agentId": "ann"})
            assert any(r["op"] == "assert" for r in history["records"])

    asyncio.run(main())


def test_a_fact_from_a_tool_result_waits_for_review_and_enters_the_prompt_only_once_confirmed(tmp_path: Path) -> None:
    rules = [
        {
            "match": r"^from the web: (.*)$",
            "on": "user",
            "toolCalls": [{"name": "memory_note", "arguments": {"text": r"\1", "basis": "tool"}}],
        },
        {
            "match": r"^from me: (.*)$",
            "on": "user",
            "toolCalls": [{"name": "memory_note", "arguments": {"text": r"\1"}}],
        },
        {"match": ".*", "reply": "ok"},
    ]
    cache = tmp_path / "agents/ann/prompt-cache.json"

    async def turn(host: HostProcess, text: str) -> None:
        sent = await host.call("agent.send", {"agentId": "ann", "text": text})
        await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*rules)})
            await turn(host, "from the web: The museum opens at nine.")
            await turn(host, "from me: The user's sister is called Ines.")
            proposed = await host.wait_for("memory.proposed", lambda p: p["agentId"] == "ann")
            await turn(host, "hello")
            prompt = cache.read_text(encoding="utf-8")
            assert "Ines" in prompt and "museum" not in prompt
            queue = await host.call("memory.list", {"agentId": "ann", "view": "proposed"})
            (pending,) = queue["records"]
            assert pending["trust"] == "proposed" and pending["id"] in [r["id"] for r in proposed["records"]]
            await host.call("memory.review", {"agentId": "ann", "recordId": pending["id"], "decision": "confirm"})
            await turn(host, "hello again")
            assert "museum opens at nine" in cache.read_text(encoding="utf-8")

    asyncio.run(main())


def test_the_system_prompt_is_byte_identical_between_turns_and_names_the_teammates(tmp_path: Path) -> None:
    server = ChatServer()
    server.script(_say("One."), _say("Two."), _say("Three."))
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Bob the Builder", "agentId": "bob"})
            settings = {"model": {"provider": "openai", "name": "m", "baseUrl": server.url}}
            await host.call("agent.create", {"name": "ann", "settings": settings})
            for text in ("first question about the garden", "second question about the garden"):
                sent = await host.call("agent.send", {"agentId": "ann", "text": text})
                await host.wait_for("agent.ended", lambda p, r=sent["runId"]: p["runId"] == r)
            await host.call("agent.create", {"name": "Cleo", "agentId": "cleo"})
            sent = await host.call("agent.send", {"agentId": "ann", "text": "third question"})
            await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])

    try:
        asyncio.run(main())
    finally:
        server.stop()
    first, second, third = (_system(r.body) for r in server.requests)
    assert first == second, "within an epoch the cached prefix is byte-identical"
    assert "Bob the Builder (id bob)" in first and "cleo" not in first
    assert "Cleo (id cleo)" in third, "a new teammate reaches the prompt in a new epoch"
