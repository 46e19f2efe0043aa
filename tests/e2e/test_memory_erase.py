"""Issue 22.1: an erased fact leaves every copy the memory tools made, and with the person's yes the
conversation's own messages too, in every file under the data dir and in the export.

Through the real host and kernel: the model recalls a fact and quotes it, asks a teammate about it, a crash
leaves a torn tail holding it and a broken MEMORY.md holding it is kept aside; then the fact is erased.
Without the conversation scrub only the conversation keeps it (and the result counts those messages); with
it, no file holds a byte of it, while the fact beside it is still wherever it was.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import tarfile
from pathlib import Path
from typing import Any

from tests.support.fake_model import ChatServer, call, model_settings, say
from tests.support.host_process import HostProcess, scripted_model

CAT = "The user's cat is called Miso."
TEA = "The user drinks oolong tea every morning."
FORMS = (b"called Miso", b"Miso")
QUESTION_ALONE = {"HEARTH_RECALL_REWRITE": "off"}
"""The scripts below answer each turn's requests in order; a rewrite of the recall question would take one."""


def holders(root: Path, needle: bytes) -> list[str]:
    """Every file under `root` whose bytes hold `needle` (a gzipped archive is read unpacked)."""
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        if needle in data:
            found.append(str(path.relative_to(root)))
    return found


def archive_members(path: Path) -> dict[str, bytes]:
    members = {}
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            handle = tar.extractfile(member)
            assert handle is not None
            members[member.name] = handle.read()
    return members


def transcript(data: Path, agent: str) -> list[dict[str, Any]]:
    lines = (data / "agents" / agent / "transcript.jsonl").read_bytes().splitlines()
    return [json.loads(line) for line in lines]


async def note_both(host: HostProcess, agent: str) -> dict[str, str]:
    ids = {}
    for text in (CAT, TEA):
        ids[text] = (await host.call("memory.note", {"agentId": agent, "text": text}))["record"]["id"]
    return ids


def test_without_the_persons_yes_only_the_conversation_keeps_the_text_and_the_result_counts_it(
    tmp_path: Path,
) -> None:
    server = ChatServer(otherwise=say("ok"))
    server.script(
        call("memory_recall", {"query": "cat"}),
        say(f"You told me: {CAT}"),
        call("memory_recall", {"query": "oolong tea"}),
        say("Noted."),
    )
    server.start()
    archive = tmp_path / "out" / "ann.tar.gz"
    archive.parent.mkdir()

    async def main() -> None:
        async with HostProcess(tmp_path / "data", env=QUESTION_ALONE) as host:
            await host.call("agent.create", {"name": "ann", "settings": model_settings(server)})
            ids = await note_both(host, "ann")
            await host.idle_turn("ann", "What is my cat called?")
            await host.idle_turn("ann", "And what do I drink?")
            erased = await host.call("memory.erase", {"agentId": "ann", "recordId": ids[CAT]})
            assert erased["outcome"] == "erased"
            assert (erased["heldInConversation"], erased["scrubbedMessages"]) == (1, 0), erased
            before = len(server.requests)
            await host.idle_turn("ann", "Anything else?")
            (replayed,) = server.requests[before:]
            tools = [m["content"] for m in replayed.body["messages"] if m["role"] == "tool"]
            assert "called Miso" not in tools[0] and "[erased]" in tools[0], "the replay says it was erased"
            assert TEA in tools[1], "the other fact's reply is as it was"
            said = [m["content"] for m in replayed.body["messages"] if m["role"] == "assistant"]
            assert f"You told me: {CAT}" in said, "without the person's yes the agent's own words stay"
            await host.call("agent.export", {"agentId": "ann", "path": str(archive)})

    try:
        asyncio.run(main())
    finally:
        server.stop()
    data = tmp_path / "data"
    holding = [e for e in transcript(data, "ann") if "called Miso" in json.dumps(e)]
    assert [(e["type"], e["text"]) for e in holding] == [("assistant", f"You told me: {CAT}")]
    assert holders(data, b"called Miso") == ["agents/ann/transcript.jsonl"]
    members = archive_members(archive)
    exported = [json.loads(line) for line in members["transcript.jsonl"].splitlines()]
    assert [e["type"] for e in exported if "called Miso" in json.dumps(e)] == ["assistant"]
    assert b"called Miso" not in members["memory/ledger.jsonl"] and TEA.encode() in members["memory/ledger.jsonl"]
    recalls = [e["content"] for e in exported if e["type"] == "tool"]
    assert "[erased]" in recalls[0] and TEA in recalls[1]


def peers() -> tuple[dict[str, Any], dict[str, Any]]:
    """Settings for ann (recalls and quotes, asks bob about it) and bob (answers without quoting)."""
    ann = scripted_model(
        {
            "match": r"^recall (.*)$",
            "on": "user",
            "toolCalls": [{"name": "memory_recall", "arguments": {"query": r"\1"}}],
        },
        {"match": r"(?m)^1\. \[m-[0-9a-f]{12}\] (.*?) \(from", "on": "tool", "reply": r"You told me: \1"},
        {
            "match": r"^ask bob (.*)$",
            "on": "user",
            "toolCalls": [{"name": "ask_agent", "arguments": {"agentId": "bob", "question": r"Did you know? \1"}}],
        },
        {"match": r".", "on": "tool", "reply": "asked"},
        {"match": r".", "on": "wake", "reply": "bob answered"},
        {"match": r".", "reply": "ok"},
    )
    bob = scripted_model({"match": r".", "on": "wake", "reply": "Noted, thanks."}, {"match": ".", "reply": "ok"})
    return ann, bob


def test_with_the_persons_yes_no_file_under_the_data_dir_nor_the_export_holds_a_byte_of_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    archive = tmp_path / "out" / "ann.tar.gz"
    archive.parent.mkdir()
    ann, bob = peers()

    async def converse() -> dict[str, str]:
        async with HostProcess(data, env=QUESTION_ALONE) as host:
            await host.call("agent.create", {"name": "ann", "settings": ann})
            await host.call("agent.create", {"name": "bob", "settings": bob})
            ids = await note_both(host, "ann")
            await host.idle_turn("ann", "recall cat")
            await host.idle_turn("ann", "recall oolong tea")
            mark = len(host.events)
            await host.idle_turn("ann", f"ask bob {CAT}")
            await host.wait_for("agent.message", lambda p: p["message"]["text"] == "bob answered", after=mark)
            work = await host.call("work.create", {"name": "Garden", "members": ["ann", "bob"]})
            sent = await host.call("work.dispatch", {"workId": work["workId"], "agentId": "ann", "instruction": "hi"})
            await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            # A broken MEMORY.md holding the text is kept aside at the next write.
            (data / "agents/ann/memory/MEMORY.md").write_text(f"my notes: {CAT}\n", encoding="utf-8")
            await host.call("memory.note", {"agentId": "ann", "text": "The user bikes to work."})
            await host.wait_for("memory.viewSetAside")
            return ids

    ids = asyncio.run(converse())
    # A crash in the middle of an append leaves a torn tail, set aside when the host starts again.
    with (data / "agents/ann/transcript.jsonl").open("ab") as f:
        f.write(json.dumps({"seq": 999, "type": "user", "text": f"cut short: {CAT}"}).encode()[:-3])
    before = holders(data, b"called Miso")
    assert {
        "agents/ann/memory/index.sqlite",
        "agents/ann/memory/ledger.jsonl",
        "agents/ann/prompt-cache.json",
        "agents/ann/transcript.jsonl",
        "agents/bob/transcript.jsonl",
        "together/requests.jsonl",
    } <= set(before)
    assert any(".kept-" in name for name in before), "the view kept aside holds it too"

    async def erase() -> None:
        async with HostProcess(data, env=QUESTION_ALONE) as host:
            assert (data / "agents/ann/transcript.jsonl.torn").exists()
            erased = await host.call(
                "memory.erase", {"agentId": "ann", "recordId": ids[CAT], "scrubConversation": True}
            )
            # ann: the person's "ask bob ..." message, the ask_agent call and the reply quoting it; bob's wake;
            # the request's question in the book.
            assert (erased["heldInConversation"], erased["scrubbedMessages"]) == (0, 5), erased
            events = transcript(data, "ann")
            quoted = next(e for e in events if e["type"] == "assistant" and e.get("text", "").startswith("You told"))
            assert quoted["text"] == "You told me: [erased]"
            question = next(e for e in transcript(data, "bob") if e["type"] == "wake")
            assert question["text"] == "Did you know? [erased]" and question["fromAgent"] == "ann"
            cache = json.loads((data / "agents/bob/prompt-cache.json").read_text(encoding="utf-8"))
            assert cache["reason"] == "erase", "bob's next turn reads its changed transcript afresh"
            await host.idle_turn("ann", "recall cat")
            await host.call("agent.export", {"agentId": "ann", "path": str(archive)})
            assert (await host.call("memory.verify", {"agentId": "ann"}))["ok"]

    asyncio.run(erase())
    for form in FORMS:
        assert holders(data, form) == [], f"{form!r} is left"
        assert all(form not in member for member in archive_members(archive).values())
    assert holders(tmp_path / "out", b"called Miso") == []
    kept = holders(data, TEA.encode())
    for place in ("memory/ledger.jsonl", "memory/index.sqlite", "memory/MEMORY.md", "transcript.jsonl"):
        assert f"agents/ann/{place}" in kept, f"the fact beside it is still in {place}"
    assert TEA.encode() in archive_members(archive)["memory/ledger.jsonl"]
    assert (data / "works").is_dir() and any((data / "works").rglob("transcript.jsonl"))


def test_a_wake_still_waiting_in_a_busy_peers_inbox_runs_with_the_text_scrubbed(tmp_path: Path) -> None:
    """The inbox file and the item it will run are scrubbed alike; a message nobody quoted it in stays."""
    ann = scripted_model(
        {
            "match": r"^tell bob (.*)$",
            "on": "user",
            "toolCalls": [{"name": "send_to_agent", "arguments": {"agentId": "bob", "message": r"\1"}}],
        },
        {"match": r".", "on": "tool", "reply": "sent"},
        {"match": r".", "reply": "ok"},
    )
    bob = scripted_model(
        {"match": r"^slow$", "on": "user", "reply": "z" * 4000, "chunkChars": 2, "delayMs": 25},
        {"match": r"(?s)^\[message from agent ann.*?\]\n(.*)$", "on": "wake", "reply": r"got: \1"},
        {"match": r".", "reply": "ok"},
    )

    async def main() -> None:
        async with HostProcess(tmp_path, env=QUESTION_ALONE) as host:
            await host.call("agent.create", {"name": "ann", "settings": ann})
            await host.call("agent.create", {"name": "bob", "settings": bob})
            ids = await note_both(host, "ann")
            slow = await host.call("agent.send", {"agentId": "bob", "text": "slow"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == slow["runId"])
            await host.idle_turn("ann", f"tell bob {CAT}")
            await host.idle_turn("ann", f"tell bob {TEA}")
            inbox = (tmp_path / "agents/bob/inbox.json").read_bytes()
            assert b"called Miso" in inbox and TEA.encode() in inbox, "both wait while bob is busy"
            erased = await host.call(
                "memory.erase", {"agentId": "ann", "recordId": ids[CAT], "scrubConversation": True}
            )
            inbox = (tmp_path / "agents/bob/inbox.json").read_bytes()
            assert b"Miso" not in inbox and TEA.encode() in inbox
            # ann: two "tell bob" messages and two calls, of which one each quoted it; bob's waiting wake.
            assert erased["scrubbedMessages"] == 3, erased
            mark = len(host.events)
            await host.call("agent.cancel", {"agentId": "bob", "runId": slow["runId"]})
            got = await host.wait_for("agent.message", lambda p: p["message"]["text"].startswith("got:"), after=mark)
            assert got["message"]["text"] == "got: [erased]"
            await host.wait_for("agent.message", lambda p: p["message"]["text"] == f"got: {TEA}", after=mark)

    asyncio.run(main())
    assert holders(tmp_path, b"Miso") == []
