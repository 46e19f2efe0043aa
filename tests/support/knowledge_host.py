"""Helpers for driving an agent's knowledge through a real host: an agent on the scripted model, admit and wait
until it is read and watched, and the error a refused call got."""

from __future__ import annotations

import asyncio
from typing import Any

from protocol.errors import JsonRpcError
from tests.support.fake_model import ChatServer, model_settings
from tests.support.host_process import HostProcess
from tests.support.shell import TestShell

__all__ = ["knowledge_agent", "run_with", "refusal", "admit", "wait_idle", "tool_names", "tool_results"]


async def knowledge_agent(host: HostProcess, server: ChatServer, agent_id: str = "ada", **settings: Any) -> None:
    """An agent on `server`'s model whose tools run without asking."""
    params = model_settings(server, toolPermission="always", **settings)
    await host.call("agent.create", {"name": agent_id, "agentId": agent_id, "settings": params})


def run_with(main: Any, server: ChatServer) -> None:
    """Run `main()` with the model server up, and stop it after."""
    server.start()
    try:
        asyncio.run(main())
    finally:
        server.stop()


async def refusal(host: HostProcess, method: str, params: dict[str, Any]) -> JsonRpcError:
    """The error the host answered `method` with (it must not succeed)."""
    try:
        await host.call(method, params)
    except JsonRpcError as exc:
        return exc
    raise AssertionError(f"{method} {params} was accepted")


def _mine(params: dict[str, Any], owner: dict[str, str]) -> bool:
    return all(params.get(key) == value for key, value in owner.items())


async def wait_idle(host: TestShell, owner: dict[str, str], *, after: int, watching: bool = True) -> dict[str, Any]:
    """The first `knowledge.progress` of `owner` after event `after` that says it is idle (and watching)."""
    return await host.wait_for(
        "knowledge.progress",
        lambda p: _mine(p, owner) and p["state"] == "idle" and (p["watching"] or not watching),
        after=after,
        timeout=60,
    )


async def admit(
    host: TestShell, owner: dict[str, str], *paths: str, pattern: str | None = None
) -> list[dict[str, Any]]:
    """`knowledge.add`, then wait until the base has read everything and watches its folders."""
    mark = len(host.events)
    params: dict[str, Any] = {**owner, "paths": list(paths), **({"pattern": pattern} if pattern else {})}
    result = await host.call("knowledge.add", params)
    await wait_idle(host, owner, after=mark)
    listing = await host.call("knowledge.list", owner)
    while listing["queued"] or not listing["watching"]:
        await wait_idle(host, owner, after=len(host.events) - 1)
        listing = await host.call("knowledge.list", owner)
    sources: list[dict[str, Any]] = result["sources"]
    return sources


def tool_names(body: dict[str, Any]) -> set[str]:
    """The names of the tools one model request offered."""
    return {tool["function"]["name"] for tool in body.get("tools") or []}


def tool_results(body: dict[str, Any]) -> list[str]:
    """The tool results one model request carried."""
    return [str(m.get("content") or "") for m in body["messages"] if m["role"] == "tool"]
