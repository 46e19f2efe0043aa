"""Secrets never enter memory, on any of its four write paths, through the real host and kernel (issue 9).

Every shape of `tests.support.secret_shapes.SECRETS` goes through the model's `memory_note`, the background
extractor, the `memory.note` RPC and a person's edit of MEMORY.md. Afterwards no file under the data dir holds
any of them (ledger, index, MEMORY.md, prompt cache, transcript), and neither the system prompt nor the recall
block of the next model request does. The ordinary facts sent alongside are stored on every path. The secrets
come from outside the data dir (the fake model server and the test), so finding one on disk means it was kept.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from protocol.errors import SENSITIVE_CONTENT, JsonRpcError
from tests.kernel.providers.fake_llm_server import Recorded
from tests.support.fake_model import ChatServer, calls, model_settings, recall_blocks, say, system_text
from tests.support.host_process import HostProcess
from tests.support.secret_shapes import ORDINARY, SECRETS, ZWSP

_VALUES = [value for _, _, value in SECRETS]


def _forms(value: str) -> list[bytes]:
    """How a value could sit in a file: as written, without invisible characters, JSON-escaped."""
    plain = value.replace(ZWSP, "")
    forms = {value, plain, json.dumps(plain)[1:-1], json.dumps(value)[1:-1]}
    return [form.encode("utf-8") for form in forms if len(form) >= 6]


def _files_holding_secrets(data: Path) -> list[str]:
    found = []
    for directory, _, names in os.walk(data):
        for name in names:
            path = Path(directory) / name
            content = path.read_bytes()
            found += [
                f"{path.relative_to(data)}: {value!r}" for value in _VALUES if any(f in content for f in _forms(value))
            ]
    return found


def _extraction_reply(recorded: Recorded) -> str:
    prompt = recorded.body["messages"][-1]["content"]
    if "(secrets via extraction)" not in prompt:
        return '{"operations": []}'
    seq = int(prompt.split("[seq ", 2)[1].split(" ", 1)[0])
    texts = [text for _, text, _ in SECRETS] + ORDINARY
    return json.dumps({"operations": [{"op": "assert", "text": t, "seq": seq, "source": "user"} for t in texts]})


def _memory_md_edit(view: str) -> str:
    lines = [f"- {text}".replace("\n", " ") for _, text, _ in SECRETS] + [f"- {text}" for text in ORDINARY]
    return view.replace("## Notes\n", "## Notes\n\n" + "\n".join(lines) + "\n", 1)


def test_no_secret_is_stored_or_sent_to_a_model_on_any_write_path(tmp_path: Path) -> None:
    server = ChatServer(_extraction_reply)
    notes = [("memory_note", {"text": text}) for _, text, _ in SECRETS] + [
        ("memory_note", {"text": t}) for t in ORDINARY
    ]
    server.script(calls(*notes, prefix="note"), say("I kept what I may."))
    server.start()
    refusals: list[JsonRpcError] = []
    tool_results: list[dict[str, Any]] = []
    stored: dict[str, set[str]] = {}

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            for agent in ("viatool", "viaextractor", "viarpc", "viaview"):
                await host.call("agent.create", {"name": agent, "agentId": agent, "settings": model_settings(server)})
            await host.idle_turn("viatool", "Please remember everything from our setup session.")
            tool_results.extend(p for m, p in host.events if m == "agent.tool" and p["status"] == "completed")
            server.script(say("Sounds good."))
            mark = len(host.events)
            await host.idle_turn("viaextractor", "We finished the setup session today (secrets via extraction).")
            await host.wait_for("memory.extracted", lambda p: p["agentId"] == "viaextractor", after=mark)
            for _, text, _ in SECRETS:
                try:
                    await host.call("memory.note", {"agentId": "viarpc", "text": text})
                except JsonRpcError as exc:
                    refusals.append(exc)
            for text in ORDINARY:
                await host.call("memory.note", {"agentId": "viarpc", "text": text})
            await host.call("memory.note", {"agentId": "viaview", "text": "The user likes green tea."})
            view_path = tmp_path / "agents/viaview/memory/MEMORY.md"
            mark = len(host.events)
            view_path.write_text(_memory_md_edit(view_path.read_text(encoding="utf-8")), encoding="utf-8")
            await host.wait_for("memory.changed", lambda p: p["agentId"] == "viaview", after=mark)
            for agent in ("viatool", "viaextractor", "viarpc", "viaview"):
                listing = await host.call("memory.list", {"agentId": agent, "view": "all"})
                stored[agent] = {r["text"] for r in listing["records"] if r["status"] == "live"}
                server.script(say("Here is what I know."))
                await host.idle_turn(agent, "What do you remember about the setup session, the keys and the passwords?")

    try:
        asyncio.run(main())
    finally:
        server.stop()
    assert _files_holding_secrets(tmp_path) == []
    for body in server.chats():
        sent = system_text(body) + "\n".join(recall_blocks(body))
        assert [v for v in _VALUES if any(f.decode() in sent for f in _forms(v))] == []
    assert len(refusals) == len(SECRETS)
    assert all(exc.code == SENSITIVE_CONTENT and exc.data and exc.data["rule"] for exc in refusals)
    assert not [exc for exc in refusals for value in _VALUES if value in exc.message]
    memory_notes = [p for p in tool_results if p["name"] == "memory_note"]
    refused = [p for p in memory_notes if p["isError"]]
    assert len(refused) == len(SECRETS) and all(
        "Not stored" in p["content"] and "rule" in p["content"] for p in refused
    )
    for agent, texts in stored.items():
        assert set(ORDINARY) <= texts, (agent, set(ORDINARY) - texts)
