"""`hearth schema`: one JSON Schema document naming every method and event, with resolvable refs."""

from __future__ import annotations

import json
import subprocess
import sys

from protocol.registry import HOST_EVENTS, HOST_METHODS, HOST_TOOLS, KERNEL_CALLS, KERNEL_EVENTS, KERNEL_METHODS
from tests.support.host_process import REPO_ROOT


def _refs(value: object) -> list[str]:
    if isinstance(value, dict):
        found = [value["$ref"]] if isinstance(value.get("$ref"), str) else []
        return found + [ref for item in value.values() for ref in _refs(item)]
    if isinstance(value, list):
        return [ref for item in value for ref in _refs(item)]
    return []


def test_hearth_schema_prints_every_method_and_event_with_resolvable_refs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "hearth", "schema"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    schema = json.loads(out)
    assert set(schema["host"]["methods"]) == set(HOST_METHODS)
    assert set(schema["host"]["events"]) == set(HOST_EVENTS)
    assert set(schema["kernel"]["methods"]) == set(KERNEL_METHODS)
    assert set(schema["kernel"]["events"]) == set(KERNEL_EVENTS)
    assert set(schema["kernel"]["calls"]) == set(KERNEL_CALLS)
    assert set(schema["tools"]) == set(HOST_TOOLS)
    for ref in _refs(schema):
        assert ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in schema["$defs"], ref
    send = schema["$defs"]["AgentSendParams"]
    assert set(send["properties"]) == {"agentId", "text", "attachments", "interrupt", "projectRoot"}
    ask = schema["$defs"]["AskAgentArgs"]
    assert set(ask["properties"]) == {"agentId", "question", "timeoutSeconds"} and ask["additionalProperties"] is False
