"""What the model is sent when an agent has MCP servers: no secret, a bounded tool list, untrusted results.

The model is a local HTTP server speaking the OpenAI API, which records every request; the host and kernel are
real processes and the MCP servers run inside real bubblewrap (issue 15).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tests.kernel.providers.fake_llm_server import Recorded
from tests.support.fake_model import ChatServer, call, model_settings, say
from tests.support.host_process import HostProcess

SUPPORT = Path(__file__).resolve().parents[1] / "support"
SECRET = "tok-mcp-canary-4d1f9a77c0"


def _agent(model: ChatServer, servers: list[dict[str, Any]]) -> dict[str, Any]:
    return model_settings(model, toolPermission="always", mcpServers=servers)


def _server(name: str, script: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "command": sys.executable, "args": [str(SUPPORT / script)], **extra}


def _tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_a_secret_reaches_the_servers_environment_and_no_request_transcript_event_or_log(tmp_path: Path) -> None:
    model = ChatServer()
    model.start()
    log = tmp_path.parent / f"{tmp_path.name}-host.log"
    model.script(call("mcp__hostile__environment", {"check": "HOSTILE_TOKEN"}), say("I have looked."))

    async def main() -> None:
        async with HostProcess(tmp_path, stderr_to=log, env={"HEARTH_TEST_MARK": "x"}) as host:
            await host.call("secrets.set", {"name": "hostile-token", "value": SECRET})
            servers = [_server("hostile", "mcp_hostile.py", secretEnv={"HOSTILE_TOKEN": "hostile-token"})]
            await host.call("agent.create", {"name": "ann", "settings": _agent(model, servers)})
            await host.idle_turn("ann", "Which environment does your tool see, and what is my token?", timeout=60)
            (result,) = _tool_results(model.requests[1].body)
            assert f"SHA256: {hashlib.sha256(SECRET.encode()).hexdigest()}" in result, "the server got the value"
            assert "VALUE: [secret HOSTILE_TOKEN withheld]" in result
            assert "HEARTH_TEST_MARK" not in result, "nothing of the kernel's own environment is inherited"
            await host.call("agent.get", {"agentId": "ann"})
            events = json.dumps(host.events)
        sent = json.dumps([request.body for request in model.received])
        transcript = (tmp_path / "agents/ann/transcript.jsonl").read_text(encoding="utf-8")
        settings = (tmp_path / "agents/ann/settings.json").read_text(encoding="utf-8")
        for where, text in (("a model request", sent), ("the transcript", transcript), ("an event", events)):
            assert SECRET not in text, f"the secret is in {where}"
        assert SECRET not in log.read_text(encoding="utf-8") and SECRET not in settings
        assert "hostile-token" in settings, "the settings name the secret, never its value"

    try:
        asyncio.run(main())
    finally:
        model.stop()


def test_sixty_tools_are_offered_as_the_finder_pair_and_a_call_through_it_works(tmp_path: Path) -> None:
    model = ChatServer()
    model.start()
    model.script(
        call("mcp_find_tools", {"query": "reverse text"}),
        call("mcp_call", {"tool": "mcp__many__reverse_text", "arguments": {"text": "stressed"}}),
        say("done"),
    )

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call(
                "agent.create", {"name": "ann", "settings": _agent(model, [_server("many", "mcp_many.py")])}
            )
            await host.idle_turn("ann", "Reverse the word stressed.", timeout=60)
            ready = await host.wait_for("mcp.status", lambda p: p["state"] == "ready")
            assert ready["toolCount"] == 60

    try:
        asyncio.run(main())
    finally:
        model.stop()
    first, second, third = (request.body for request in model.requests[:3])
    names = [tool["function"]["name"] for tool in first["tools"]]
    assert "mcp_find_tools" in names and "mcp_call" in names
    assert not [name for name in names if name.startswith("mcp__")], "no server schema is in the prompt"
    assert "mcp__many__reverse_text" in _tool_results(second)[0]
    assert _tool_results(third)[-1] == "desserts"


def test_a_fact_from_an_mcp_result_is_only_proposed_whatever_the_extractor_claims(tmp_path: Path) -> None:
    def extract(recorded: Recorded) -> str:
        prompt = "\n".join(m.get("content") or "" for m in recorded.body["messages"])
        found = re.search(r"\[seq (\d+) · tool:mcp__notes__list\]", prompt)
        assert found is not None, prompt
        op = {
            "op": "assert",
            "text": "The museum opens at nine.",
            "tier": "note",
            "seq": int(found[1]),
            "source": "user",
        }
        return json.dumps({"operations": [op]})

    model = ChatServer(extract)
    model.start()
    model.script(
        call("mcp__notes__add", {"text": "The museum opens at nine."}),
        call("mcp__notes__list", {}),
        say("Your notes say the museum opens at nine."),
    )

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call(
                "agent.create", {"name": "ann", "settings": _agent(model, [_server("notes", "mcp_notes.py")])}
            )
            await host.idle_turn("ann", "What do my notes say about when the museum opens?", timeout=60)
            await host.wait_for("memory.proposed", lambda p: p["agentId"] == "ann", timeout=60)
            queue = await host.call("memory.list", {"agentId": "ann", "view": "proposed"})
            assert [r["text"] for r in queue["records"]] == ["The museum opens at nine."]
            assert queue["records"][0]["trust"] == "proposed"
            current = await host.call("memory.list", {"agentId": "ann", "view": "current"})
            assert current["records"] == []

    try:
        asyncio.run(main())
    finally:
        model.stop()


ENCODED_SECRET = 'tok-?>?~~~é"\\ 9f3a/canary'
SHORT_SECRET = "ab1"


def _b64_core(prefix: bytes, secret: bytes, encode: Callable[[bytes], bytes]) -> str:
    """The base64 characters of `prefix + secret` that depend on the secret's bytes alone (`-(-x // 6)` rounds up)."""
    text = encode(prefix + secret).decode()
    return text[-(-len(prefix) * 8 // 6) : (len(prefix) + len(secret)) * 8 // 6]


def test_a_secret_its_server_encodes_reaches_no_model_request_and_other_text_survives(tmp_path: Path) -> None:
    """Issue 21.5: base64 (both alphabets, padded or not, inside a longer blob at each alignment), hex, URL and
    JSON forms of a server's secret are withheld; a secret under eight characters only as itself."""
    model = ChatServer()
    model.start()
    model.script(
        call("mcp__hostile__encoded", {"check": "HOSTILE_TOKEN"}, "long"),
        call("mcp__hostile__encoded", {"check": "SHORT_TOKEN"}, "short"),
        say("I have looked."),
    )

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("secrets.set", {"name": "hostile-token", "value": ENCODED_SECRET})
            await host.call("secrets.set", {"name": "short-token", "value": SHORT_SECRET})
            secret_env = {"HOSTILE_TOKEN": "hostile-token", "SHORT_TOKEN": "short-token"}
            servers = [_server("hostile", "mcp_hostile.py", secretEnv=secret_env)]
            await host.call("agent.create", {"name": "ann", "settings": _agent(model, servers)})
            await host.idle_turn("ann", "Show me my token, encoded.", timeout=60)

    try:
        asyncio.run(main())
    finally:
        model.stop()
    long_result, short_result = _tool_results(model.requests[2].body)
    lines = long_result.splitlines()
    assert len(lines) == 16 and all("[secret HOSTILE_TOKEN withheld]" in line for line in lines), long_result
    raw = ENCODED_SECRET.encode()
    assert base64.b64encode(raw) != base64.urlsafe_b64encode(raw), "the secret tells the two alphabets apart"
    for offset in range(3):
        prefix = b"Authorization: Basic "[: 10 + offset]
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            core = _b64_core(prefix, raw, encode)
            assert len(core) > 20 and core[2:-2] not in long_result, (offset, core)
        assert base64.b64encode(prefix)[:12].decode() in long_result, "the text around the secret survives"
    sent = "\n".join(result for request in model.received for result in _tool_results(request.body))
    for form in (ENCODED_SECRET, raw.hex(), raw.hex().upper(), quote(raw, safe=""), json.dumps(ENCODED_SECRET)[1:-1]):
        assert form not in sent and form not in long_result, form
    short = dict(line.split(": ", 1) for line in short_result.splitlines())
    assert short["B64"] == base64.b64encode(SHORT_SECRET.encode()).decode(), "too short to withhold when encoded"
    assert short["JSON"] == '{"token": "[secret SHORT_TOKEN withheld]"}'
