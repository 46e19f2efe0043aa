"""End to end: `ask_agent` on a full disk, through the real host. Whether the request book's disk or the
receiver's inbox's disk is full, the model is told the disk is full (never "Internal error"), and a request
it was told failed never comes back: after space is freed and the host restarted, the receiver never gets
the question and the asker never gets an outcome. A request made once space is back is answered."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from host.together.requests import REQUESTS_FILE
from tests.support.host_process import HostProcess, scripted_model
from tests.support.small_disk import fill, small_tmpfs

ASKER = [
    {
        "match": r"^ask (.*)$",
        "on": "user",
        "toolCalls": [{"name": "ask_agent", "arguments": {"agentId": "bob", "question": r"\1", "timeoutSeconds": 600}}],
    },
    {"match": r"(?s)^\[answer from agent bob.*?\]\n(.*)$", "on": "wake", "reply": r"heard \1"},
    {"match": r"(?s)^(.*)$", "on": "tool", "reply": r"the tool said: \1"},
]
RECEIVER = [{"match": r"(?m)^(\w+)\?$", "on": "wake", "reply": r"\1!"}]


def quiet(rules: list[dict[str, Any]]) -> dict[str, Any]:
    settings = scripted_model(*rules)
    settings["memory"] = False
    return settings


def events(data: Path, agent_id: str) -> list[dict[str, Any]]:
    lines = (data / "agents" / agent_id / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@contextlib.contextmanager
def full_place(data: Path, where: str) -> Iterator[Path]:
    """A small tmpfs at `together/` (the request book's directory) or at the receiver's directory, which is made
    an agent by hand there before the host starts."""
    with small_tmpfs(data / where, "size=256k") as mount:
        if where == "agents/bob":
            (mount / "memory").mkdir()
            (mount / "scratch").mkdir()
            (mount / "settings.json").write_text(json.dumps(quiet(RECEIVER)), encoding="utf-8")
            profile = {"agentId": "bob", "name": "bob", "createdAt": "2026-01-01T00:00:00.000Z"}
            (mount / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
        yield mount


@pytest.mark.parametrize("where", ["together", "agents/bob"])
def test_a_request_refused_by_a_full_disk_is_named_to_the_model_and_never_comes_back(
    tmp_path: Path, where: str
) -> None:
    data = tmp_path / "data"
    (data / "agents").mkdir(parents=True)

    async def first_life(mount: Path) -> None:
        async with HostProcess(data) as host:
            await host.call("agent.create", {"name": "ann", "settings": quiet(ASKER)})
            if where == "together":
                await host.call("agent.create", {"name": "bob", "settings": quiet(RECEIVER)})
            fill(mount / "filler")
            ended = await host.idle_turn("ann", "ask ready?")
            said = host.texts("ann", ended["runId"])
            assert "the disk is full" in said and "Internal error" not in said, said
            assert await host.call("ping") == {}
            (mount / "filler").unlink()

    async def second_life() -> None:
        async with HostProcess(data) as host:
            mark = len(host.events)
            ended = await host.idle_turn("ann", "ask later?")
            assert host.texts("ann", ended["runId"]).startswith("the tool said: Asked bob")
            await host.wait_for("agent.message", lambda p: p["message"]["text"] == "heard later!", after=mark)

    with full_place(data, where) as mount:
        asyncio.run(first_life(mount))
        asyncio.run(second_life())
        questions = [e["text"] for e in events(data, "bob") if e["type"] == "wake"]
        outcomes = [e["text"] for e in events(data, "ann") if e["type"] == "wake"]
        book = [json.loads(line) for line in (data / REQUESTS_FILE).read_text(encoding="utf-8").splitlines()]
    assert questions == ["later?"], "the refused question never reached the receiver"
    assert outcomes == ["later!"], "the refused request never produced an outcome"
    assert [entry["question"] for entry in book if entry["op"] == "open"] == ["later?"]
