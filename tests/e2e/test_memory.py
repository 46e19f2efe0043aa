"""Memory through the real host and kernel: what the model is actually sent, turn by turn."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.support.fake_model import ChatServer, call, model_settings, say, system_text
from tests.support.host_process import HostProcess, scripted_model


def test_a_note_is_in_the_next_prompt_and_a_retracted_fact_is_gone_while_another_stays(tmp_path: Path) -> None:
    server = ChatServer()
    server.script(
        call("memory_note", {"text": "The user's cat is called Miso."}),
        say("Noted."),
        call("memory_note", {"text": "The user prefers tea to coffee."}),
        say("Noted too."),
        say("Hello again."),
        say("Still here."),
    )
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": model_settings(server)})
            for text in ("my cat is Miso", "I like tea", "hi"):
                await host.idle_turn("ann", text)
            current = await host.call("memory.list", {"agentId": "ann", "view": "current"})
            miso = next(r for r in current["records"] if "Miso" in r["text"])
            await host.call("memory.retract", {"agentId": "ann", "recordId": miso["id"], "reason": "wrong cat"})
            await host.send_and_wait("ann", "anything new?")

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
    assert "Miso" not in system_text(bodies[0])
    assert "Miso" in system_text(bodies[2]), "an explicit note is in the very next turn's prompt"
    assert "Miso" in system_text(bodies[4]) and "tea" in system_text(bodies[4])
    assert "Miso" not in json.dumps(bodies[5]["messages"][0]), "a retracted fact leaves the prompt at once"
    assert "tea" in system_text(bodies[5]), "the other fact stays"
    view = (tmp_path / "agents/ann/memory/MEMORY.md").read_text(encoding="utf-8")
    assert "Miso" not in view and "tea" in view


def test_with_memory_off_there_are_no_memory_tools_no_section_and_no_extraction(tmp_path: Path) -> None:
    server = ChatServer()
    server.script(say("Hi."))
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            on = {"model": {"provider": "scripted", "rules": [{"match": ".*", "reply": "ok"}]}}
            await host.call("agent.create", {"name": "on", "settings": on})
            await host.call("memory.note", {"agentId": "on", "text": "A fact only the other agent has."})
            await host.call("agent.create", {"name": "ann", "settings": model_settings(server, memory=False)})
            await host.call("memory.note", {"agentId": "ann", "text": "The user's name is Ada."})
            await host.send_and_wait("ann", "I live in Lisbon and my name is Ada.")

    try:
        asyncio.run(main())
    finally:
        server.stop()
    (body,) = [r.body for r in server.requests]
    names = [t["function"]["name"] for t in body.get("tools", [])]
    assert not [n for n in names if n.startswith("memory_")] and "read_file" in names
    assert "Ada" not in system_text(body) and "memory" not in system_text(body).lower()
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
            await host.send_and_wait("ann", "I moved to Lisbon last year for work.")
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

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*rules)})
            await host.send_and_wait("ann", "from the web: The museum opens at nine.")
            await host.send_and_wait("ann", "from me: The user's sister is called Ines.")
            proposed = await host.wait_for("memory.proposed", lambda p: p["agentId"] == "ann")
            await host.send_and_wait("ann", "hello")
            prompt = cache.read_text(encoding="utf-8")
            assert "Ines" in prompt and "museum" not in prompt
            queue = await host.call("memory.list", {"agentId": "ann", "view": "proposed"})
            (pending,) = queue["records"]
            assert pending["trust"] == "proposed" and pending["id"] in [r["id"] for r in proposed["records"]]
            await host.call("memory.review", {"agentId": "ann", "recordId": pending["id"], "decision": "confirm"})
            await host.send_and_wait("ann", "hello again")
            assert "museum opens at nine" in cache.read_text(encoding="utf-8")

    asyncio.run(main())


def test_the_system_prompt_is_byte_identical_between_turns_and_names_the_teammates(tmp_path: Path) -> None:
    server = ChatServer()
    server.script(say("One."), say("Two."), say("Three."))
    server.start()

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "Bob the Builder", "agentId": "bob"})
            await host.call("agent.create", {"name": "ann", "settings": model_settings(server)})
            for text in ("first question about the garden", "second question about the garden"):
                await host.send_and_wait("ann", text)
            await host.call("agent.create", {"name": "Cleo", "agentId": "cleo"})
            await host.send_and_wait("ann", "third question")

    try:
        asyncio.run(main())
    finally:
        server.stop()
    first, second, third = (system_text(r.body) for r in server.requests)
    assert first == second, "within an epoch the cached prefix is byte-identical"
    assert "Bob the Builder (id bob)" in first and "cleo" not in first
    assert "Cleo (id cleo)" in third, "a new teammate reaches the prompt in a new epoch"
