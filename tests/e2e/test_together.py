"""End to end through a real host: agents message each other, ask and get answers, and chains are cut."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.support.host_process import HostProcess, scripted_model

DONE = {"match": ".", "on": "tool", "reply": "done"}
SLOW = {"match": r"^slow$", "on": "user", "reply": "z" * 300, "chunkChars": 3, "delayMs": 20}


def run(coro: Any) -> None:
    asyncio.run(coro)


def events(data: Path, agent_id: str) -> list[dict[str, Any]]:
    path = data / "agents" / agent_id / "transcript.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


async def ended(host: HostProcess, agent_id: str, where: Any = lambda p: True, *, after: int = 0) -> dict[str, Any]:
    return await host.wait_for("agent.ended", lambda p: p["agentId"] == agent_id and where(p), after=after)


def test_two_agents_converse_and_each_transcript_holds_only_its_own_side(tmp_path: Path) -> None:
    ann = scripted_model(
        {
            "match": r"^tell bob (.*)$",
            "on": "user",
            "toolCalls": [tool("send_to_agent", agentId="bob", message=r"hello \1")],
        },
        {"match": r"(?m)^thanks for (.*)$", "on": "wake", "reply": r"bob thanked me for \1"},
        DONE,
    )
    bob = scripted_model(
        {
            "match": r"(?m)^hello (.*)$",
            "on": "wake",
            "toolCalls": [tool("send_to_agent", agentId="ann", message=r"thanks for \1")],
        },
        DONE,
    )

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": ann})
            await host.call("agent.create", {"name": "bob", "settings": bob})
            await host.send_and_wait("ann", "tell bob the plan")
            await ended(host, "bob")
            reply = await ended(host, "ann", lambda p: p["reason"] == "idle", after=0)
            last = await host.wait_for("agent.message", lambda p: "thanked" in p["message"]["text"])
            assert last["message"]["text"] == "bob thanked me for the plan" and reply

    run(main())
    ann_text = json.dumps(events(tmp_path, "ann"))
    bob_text = json.dumps(events(tmp_path, "bob"))
    assert "tell bob the plan" in ann_text and "tell bob the plan" not in bob_text
    assert "bob thanked me" in ann_text and "bob thanked me" not in bob_text
    wakes = [e for e in events(tmp_path, "bob") if e["type"] == "wake"]
    assert [(w["fromAgent"], w["text"], w["hops"]) for w in wakes] == [("ann", "hello the plan", 1)]
    back = [e for e in events(tmp_path, "ann") if e["type"] == "wake"]
    assert [(w["fromAgent"], w["text"], w["hops"]) for w in back] == [("bob", "thanks for the plan", 2)]


def _asker() -> dict[str, Any]:
    return scripted_model(
        {
            "match": r"^ask (\w+) (.*)$",
            "on": "user",
            "toolCalls": [tool("ask_agent", agentId=r"\1", question=r"\2", timeoutSeconds="TIMEOUT")],
        },
        {"match": r"(?s)^\[answer from agent (\w+).*?\]\n(.*)$", "on": "wake", "reply": r"\1 answered: \2"},
        {"match": r"(?s)ended without an answer: (\w+)", "on": "wake", "reply": r"no answer: \1"},
        DONE,
    )


def _with_timeout(settings: dict[str, Any], seconds: int) -> dict[str, Any]:
    rules = json.loads(json.dumps(settings["model"]["rules"]).replace('"TIMEOUT"', str(seconds)))
    return {"model": {"provider": "scripted", "rules": rules}}


def test_ask_agent_brings_the_answer_back_as_a_turn_of_the_asker(tmp_path: Path) -> None:
    bob = scripted_model({"match": r"(?m)^what is (.*)\?$", "on": "wake", "reply": r"\1 is 42"})

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": _with_timeout(_asker(), 30)})
            await host.call("agent.create", {"name": "bob", "settings": bob})
            await host.send_and_wait("ann", "ask bob what is the answer?")
            answer = await host.wait_for("agent.message", lambda p: "answered" in p["message"]["text"])
            assert answer["agentId"] == "ann" and answer["message"]["text"] == "bob answered: the answer is 42"

    run(main())
    outcome = [e for e in events(tmp_path, "ann") if e["type"] == "wake"]
    assert len(outcome) == 1 and outcome[0]["status"] == "answered" and outcome[0]["requestId"].startswith("q-")
    question = [e for e in events(tmp_path, "bob") if e["type"] == "wake"]
    assert question[0]["requestId"] == outcome[0]["requestId"] and "status" not in question[0]


def test_a_request_to_a_failing_stopped_deleted_or_silent_receiver_wakes_the_asker_with_that_status(
    tmp_path: Path,
) -> None:
    silent = scripted_model({"match": ".", "on": "wake", "reply": "s" * 400, "chunkChars": 2, "delayMs": 25})
    failing = scripted_model({"match": r"^never matches$", "reply": "x"})
    stopper = scripted_model(
        {"match": r"^stop (\w+)$", "on": "user", "toolCalls": [tool("stop_agent", agentId=r"\1")]}, DONE
    )

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": _with_timeout(_asker(), 1)})
            await host.call("agent.create", {"name": "amy", "settings": _with_timeout(_asker(), 60)})
            await host.call("agent.create", {"name": "slow", "settings": silent})
            await host.call("agent.create", {"name": "broken", "settings": failing})
            await host.call("agent.create", {"name": "held", "settings": silent})
            await host.call("agent.create", {"name": "doomed", "settings": silent})
            await host.call("agent.create", {"name": "boss", "settings": stopper})

            async def outcome(asker: str, question: str) -> str:
                mark = len(host.events)
                await host.send_and_wait(asker, question)
                said = await host.wait_for(
                    "agent.message", lambda p: p["agentId"] == asker and "no answer" in p["message"]["text"], after=mark
                )
                return str(said["message"]["text"])

            assert await outcome("ann", "ask slow are you there") == "no answer: timeout"
            assert await outcome("amy", "ask broken are you there") == "no answer: failed"
            mark = len(host.events)
            await host.send_and_wait("amy", "ask held are you there")
            await host.wait_for("agent.delta", lambda p: p["agentId"] == "held", after=mark)
            await host.send_and_wait("boss", "stop held")
            said = await host.wait_for("agent.message", lambda p: "no answer" in p["message"]["text"], after=mark)
            assert said["message"]["text"] == "no answer: refused"
            mark = len(host.events)
            await host.send_and_wait("amy", "ask doomed are you there")
            await host.call("agent.delete", {"agentId": "doomed"})
            said = await host.wait_for("agent.message", lambda p: "no answer" in p["message"]["text"], after=mark)
            assert said["message"]["text"] == "no answer: refused"

    run(main())
    book = [json.loads(line) for line in (tmp_path / "together/requests.jsonl").read_text().splitlines()]
    opened = {e["id"] for e in book if e["op"] == "open"}
    closed = {e["id"]: e["status"] for e in book if e["op"] == "close"}
    assert len(opened) == 4 and set(closed) == opened
    assert sorted(closed.values()) == ["failed", "refused", "refused", "timeout"]


def test_a_chain_of_four_agents_is_allowed_and_the_fifth_hop_is_refused_leaving_nothing_on_it(tmp_path: Path) -> None:
    def relay(to: str) -> dict[str, Any]:
        send = {"toolCalls": [tool("send_to_agent", agentId=to, message="chain")]}
        return scripted_model({"match": r"(?m)^chain$", **send}, DONE)

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            for name, to in (("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")):
                await host.call("agent.create", {"name": name, "settings": relay(to)})
            await host.call("agent.create", {"name": "e", "settings": scripted_model({"match": ".", "reply": "end"})})
            await host.send_and_wait("a", "chain")
            refused = await host.wait_for(
                "agent.tool", lambda p: p["agentId"] == "d" and p["status"] == "completed" and p["isError"]
            )
            assert "Not sent" in refused["content"]
            await ended(host, "d")
            assert events(tmp_path, "e") == []
            mark = len(host.events)
            await host.send_and_wait("d", "chain")  # a person's message starts the count again
            await ended(host, "e", after=mark)

    run(main())
    hops = [[w["hops"] for w in events(tmp_path, x) if w["type"] == "wake"] for x in "bcde"]
    assert hops == [[1], [2], [3], [1]]


def test_a_busy_agents_wake_waits_for_its_turn_and_a_priority_wake_takes_over(tmp_path: Path) -> None:
    ann = scripted_model(
        {"match": r"^note (.*)$", "on": "user", "toolCalls": [tool("send_to_agent", agentId="bob", message=r"\1")]},
        {
            "match": r"^urgent (.*)$",
            "on": "user",
            "toolCalls": [tool("send_to_agent", agentId="bob", message=r"\1", priority=True)],
        },
        DONE,
    )
    bob = scripted_model(SLOW, {"match": r"(?m)^(\w+)$", "on": "wake", "reply": r"read \1"})

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": ann})
            await host.call("agent.create", {"name": "bob", "settings": bob})
            busy = await host.call("agent.send", {"agentId": "bob", "text": "slow"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == busy["runId"])
            await host.send_and_wait("ann", "note first")
            said = [
                p for m, p in host.events if m == "agent.tool" and p["agentId"] == "ann" and p["status"] == "completed"
            ]
            assert "number 1 in its queue" in said[-1]["content"]
            info = await host.call("agent.get", {"agentId": "bob"})
            assert [q["kind"] for q in info["queue"]] == ["wake"]
            first = await ended(host, "bob", lambda p: p["runId"] == busy["runId"])
            assert first["reason"] == "idle"
            await host.wait_for("agent.message", lambda p: p["message"]["text"] == "read first")

            mark = len(host.events)
            busy = await host.call("agent.send", {"agentId": "bob", "text": "slow"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == busy["runId"], after=mark)
            await host.send_and_wait("ann", "urgent second")
            taken = await ended(host, "bob", lambda p: p["runId"] == busy["runId"], after=mark)
            assert taken["reason"] == "cancelled"
            await host.wait_for("agent.message", lambda p: p["message"]["text"] == "read second", after=mark)

    run(main())
    kinds = [(e["type"], e.get("text")) for e in events(tmp_path, "bob") if e["type"] in ("user", "wake")]
    assert kinds == [("user", "slow"), ("wake", "first"), ("user", "slow"), ("wake", "second")]


HELD = {"match": r"^hold$", "on": "user", "reply": "h" * 3000, "chunkChars": 3, "delayMs": 20}
"""A person's message that keeps its agent busy (about 20 s) until the test cancels it."""


async def _busy(host: HostProcess, *agent_ids: str) -> None:
    for agent_id in agent_ids:
        mark = len(host.events)
        run_id = (await host.call("agent.send", {"agentId": agent_id, "text": "hold"}))["runId"]
        await host.wait_for("agent.delta", lambda p, run_id=run_id: p["runId"] == run_id, after=mark)


def _results(host: HostProcess, agent_id: str, after: int = 0) -> list[dict[str, Any]]:
    """The completed tool results of `agent_id` recorded after event `after`, in order."""
    return [
        p
        for m, p in host.events[after:]
        if m == "agent.tool" and p["agentId"] == agent_id and p["status"] == "completed"
    ]


def _from(queue: list[dict[str, Any]], sender: str) -> int:
    """How many of the waiting runs in `queue` (an `agent.get` result's) come from `sender`."""
    return sum(1 for q in queue if q.get("fromAgent") == sender)


def test_a_turn_that_sends_200_messages_gets_8_into_the_inbox_and_a_refusal_it_reads_for_the_rest(
    tmp_path: Path,
) -> None:
    """Issue 21.12: all 200 were accepted (199 queued). A person's message to the receiver still goes in."""
    flood = [tool("send_to_agent", agentId="bob", message=f"note {n}") for n in range(200)]
    ann = scripted_model(
        {"match": r"^flood bob$", "on": "user", "toolCalls": flood},
        {"match": r"(?s)^(Not sent: .*)$", "on": "tool", "reply": r"the host said: \1"},
        DONE,
    )
    bob = scripted_model(HELD, {"match": r"(?m)^note \d+$", "on": "wake", "reply": "read"}, DONE)

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": ann})
            await host.call("agent.create", {"name": "bob", "settings": bob})
            await host.call("agent.create", {"name": "cat", "settings": bob})
            await _busy(host, "bob")
            mark = len(host.events)
            assert (await host.send_and_wait("ann", "flood bob", timeout=120))["reason"] == "idle"
            results = [p for p in _results(host, "ann", mark) if p["name"] == "send_to_agent"]
            assert len(results) == 200
            assert [p["isError"] for p in results[:8]] == [False] * 8
            assert all(p["isError"] and p["content"].startswith("Not sent: 8 of your") for p in results[8:])
            said = await host.wait_for(
                "agent.message", lambda p: p["agentId"] == "ann" and p["message"]["text"], after=mark
            )
            assert said["message"]["text"].startswith("the host said: Not sent: 8 of your messages")
            info = await host.call("agent.get", {"agentId": "bob"})
            assert _from(info["queue"], "ann") == 8 and len(info["queue"]) == 8
            # A person is never refused by the bound, and another sender has its own.
            for n in range(3):
                sent = await host.call("agent.send", {"agentId": "bob", "text": f"from the person {n}"})
                assert sent["position"] == 9 + n
            info = await host.call("agent.get", {"agentId": "bob"})
            assert [q["kind"] for q in info["queue"]] == ["wake"] * 8 + ["user"] * 3
            assert (await host.call("agent.get", {"agentId": "cat"}))["queue"] == []

    run(main())


def test_one_turn_sends_at_most_20_messages_and_questions_and_the_next_turn_may_send_again(tmp_path: Path) -> None:
    """Questions count with messages, per receiver (8 waiting from one agent) and per run (20 in all)."""
    calls = (
        [tool("ask_agent", agentId="bob", question=f"q{n}?", timeoutSeconds=600) for n in range(5)]
        + [tool("send_to_agent", agentId="bob", message=f"m{n}") for n in range(5)]
        + [tool("send_to_agent", agentId="cat", message=f"m{n}") for n in range(10)]
        + [tool("ask_agent", agentId="dan", question=f"q{n}?", timeoutSeconds=600) for n in range(10)]
    )
    ann = scripted_model(
        {"match": r"^spread$", "on": "user", "toolCalls": calls},
        {"match": r"^again (\w+)$", "on": "user", "toolCalls": [tool("send_to_agent", agentId=r"\1", message="more")]},
        DONE,
    )
    held = scripted_model(HELD, DONE)

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": ann})
            for name in ("bob", "cat", "dan"):
                await host.call("agent.create", {"name": name, "settings": held})
            await _busy(host, "bob", "cat", "dan")
            mark = len(host.events)
            assert (await host.send_and_wait("ann", "spread", timeout=60))["reason"] == "idle"
            outcomes = [(p["arguments"]["agentId"], p["isError"]) for p in _results(host, "ann", mark)]
            assert outcomes == (
                [("bob", False)] * 8
                + [("bob", True)] * 2
                + [("cat", False)] * 8
                + [("cat", True)] * 2
                + [("dan", False)] * 4
                + [("dan", True)] * 6
            )
            refusals = [p["content"] for p in _results(host, "ann", mark) if p["isError"]]
            assert all(text.startswith("Not sent: 8 of your") for text in refusals[:4])
            assert all(text.startswith("Not sent: this turn has already sent 20") for text in refusals[4:])
            queues = {n: (await host.call("agent.get", {"agentId": n}))["queue"] for n in ("bob", "cat", "dan")}
            assert {n: _from(q, "ann") for n, q in queues.items()} == {"bob": 8, "cat": 8, "dan": 4}
            # A refused question left no request behind: 5 to bob and 4 to dan are open.
            book = (tmp_path / "together/requests.jsonl").read_text(encoding="utf-8").splitlines()
            assert sum(json.loads(line)["op"] == "open" for line in book) == 9

            mark = len(host.events)
            await host.send_and_wait("ann", "again dan")
            await host.send_and_wait("ann", "again bob")
            sent = [(p["arguments"]["agentId"], p["isError"]) for p in _results(host, "ann", mark)]
            assert sent == [("dan", False), ("bob", True)]

    run(main())
