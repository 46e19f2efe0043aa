"""`hearth knowledge AGENT ...`: a person admits, lists, pauses, removes and searches an agent's documents,
and accepts or declines the documents the agent suggested.

It speaks only the wire (`knowledge.*` through the running host). `add` (and `accept`) waits until what it
admitted is read, printing progress to stderr (`--no-wait` returns at once); `search` prints each hit's
citation, its headings and why it matched. `--work` names a Work instead of an agent (a Work has no
suggestions). `--json` prints what the host said.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.client import connect_host, run_command
from desktop.names import require_agent
from desktop.tables import one_line, plain_line, print_json, print_table
from protocol.dispatch import Router
from protocol.models.knowledge import MAX_SUGGESTED_PATH, MAX_SUGGESTION_REASON, KnowledgeProgressEvent
from protocol.peer import JsonRpcPeer

__all__ = ["KNOWLEDGE_ACTIONS", "KnowledgeCommand", "run_knowledge_command", "describe_match", "already_admitted"]

KNOWLEDGE_ACTIONS = ("add", "list", "remove", "pause", "resume", "search", "suggestions", "accept", "decline")
SOURCE_HEADERS = ["id", "state", "path", "files", "chunks", "by meaning", "failed"]


@dataclass(frozen=True, slots=True)
class KnowledgeCommand:
    action: str
    owner: str
    data_dir: Path
    work: bool = False
    paths: list[str] = field(default_factory=list)
    pattern: str | None = None
    source_id: str | None = None
    suggestion_id: str | None = None
    query: str = ""
    limit: int = 8
    wait: bool = True
    as_json: bool = False


def describe_match(why: dict[str, Any]) -> str:
    """Why a hit matched, for a person: `words #1 (install, make) · meaning #3 (0.86)`."""
    parts = []
    if why.get("wordsRank") is not None:
        terms = ", ".join(why.get("terms") or [])
        parts.append(f"words #{why['wordsRank']}" + (f" ({terms})" if terms else ""))
    if why.get("meaningRank") is not None:
        parts.append(f"meaning #{why['meaningRank']} ({why.get('cosine') or 0:.2f})")
    return " · ".join(parts) or "—"


def _source_row(source: dict[str, Any]) -> tuple[object, ...]:
    failed = len(source["failed"])
    return (
        source["sourceId"],
        source["state"],
        source["path"] + (f" ({source['pattern']})" if source.get("pattern") else ""),
        source["files"],
        source["chunks"],
        source["embedded"],
        failed or "",
    )


def _print_sources(listing: dict[str, Any]) -> None:
    print_table(SOURCE_HEADERS, [_source_row(s) for s in listing["sources"]], empty="(nothing admitted)")
    for source in listing["sources"]:
        for failure in source["failed"]:
            print(f"not read: {failure['path']}: {failure['reason']}")
    if not listing.get("on", True):
        print("knowledge is off for this agent: nothing is watched, read or offered to its model")


def already_admitted(result: dict[str, Any]) -> list[str]:
    """A line for each source of a `knowledge.add` result that was admitted before (it was kept as it was)."""
    paths = {s["sourceId"]: s["path"] for s in result["sources"]}
    already = result.get("alreadyAdmitted", [])
    return [f"{i} ({paths.get(i, '?')}) was admitted already; it keeps its source" for i in already]


class _Progress:
    """Prints each progress report of one base to stderr and wakes the waiter when the base is idle."""

    def __init__(self, owner: dict[str, str]) -> None:
        self.owner = owner
        self.idle = asyncio.Event()

    async def on_progress(self, event: KnowledgeProgressEvent) -> None:
        if event.agent_id != self.owner.get("agentId") or event.work_id != self.owner.get("workId"):
            return
        total = event.indexed + event.queued
        print(
            f"read {event.indexed}/{total} files, {event.chunks} chunks, {event.embedded} by meaning", file=sys.stderr
        )
        if event.state == "idle":
            self.idle.set()


async def _owner(peer: JsonRpcPeer, command: KnowledgeCommand) -> dict[str, str]:
    if command.work:
        return {"workId": command.owner}
    return {"agentId": (await require_agent(peer, command.owner)).agent_id}


async def _add(peer: JsonRpcPeer, command: KnowledgeCommand, owner: dict[str, str], progress: _Progress) -> int:
    paths = [os.path.abspath(os.path.expanduser(p)) for p in command.paths]
    params: dict[str, Any] = {**owner, "paths": paths, **({"pattern": command.pattern} if command.pattern else {})}
    return await _admitted(peer, command, owner, progress, "knowledge.add", params)


async def _admitted(
    peer: JsonRpcPeer,
    command: KnowledgeCommand,
    owner: dict[str, str],
    progress: _Progress,
    method: str,
    params: dict[str, Any],
) -> int:
    """Send an admitting `method` (`knowledge.add` or `knowledge.accept`), wait until it is read, print it."""
    result = await peer.request(method, params)
    if command.wait:
        while True:
            progress.idle.clear()  # before the listing: an idle report after it is not missed
            listing = await peer.request("knowledge.list", owner)
            if not listing["queued"]:
                break
            await progress.idle.wait()
        wanted = {s["sourceId"] for s in result["sources"]}
        result = {**result, "sources": [s for s in listing["sources"] if s["sourceId"] in wanted]}
    if command.as_json:
        print_json(result)
        return 0
    _print_sources({"sources": result["sources"]})
    for line in already_admitted(result):
        print(line)
    return 0


async def _search(peer: JsonRpcPeer, command: KnowledgeCommand, owner: dict[str, str]) -> int:
    result = await peer.request("knowledge.search", {**owner, "query": command.query, "limit": command.limit})
    if command.as_json:
        print_json(result)
        return 0
    if not result["hits"]:
        print(f"(nothing matched {command.query!r})")
    for number, hit in enumerate(result["hits"], start=1):
        heading = " > ".join(hit["heading"])
        print(f"{number}. {hit['citation']}" + (f"  [{heading}]" if heading else ""))
        print(f"   {one_line(hit['text'], 160)}")
        print(f"   why: {describe_match(hit['why'])}" + ("  (a secret in it is masked)" if hit["masked"] else ""))
    return 0


def _print_suggestions(result: dict[str, Any]) -> None:
    # Not a table: a person needs the whole path and reason to decide, however long.
    if not result["suggestions"]:
        print("(no suggestion waiting)")
    for s in result["suggestions"]:
        print(f"{s['suggestionId']}  {s['suggestedAt']}  {plain_line(s['path'], MAX_SUGGESTED_PATH)}")
        print(f"   why: {plain_line(s['reason'], MAX_SUGGESTION_REASON)}")
    if result["suggestions"]:
        print("accept ID admits it (with add's checks); decline ID drops it")


async def _suggestions(peer: JsonRpcPeer, command: KnowledgeCommand, owner: dict[str, str], progress: _Progress) -> int:
    if command.work:
        print("hearth: a Work has no suggestions; name the agent that made them", file=sys.stderr)
        return 2
    if command.action == "suggestions":
        result = await peer.request("knowledge.suggestions", owner)
        if command.as_json:
            print_json(result)
        else:
            _print_suggestions(result)
        return 0
    ref = {**owner, "suggestionId": command.suggestion_id}
    if command.action == "accept":
        return await _admitted(peer, command, owner, progress, "knowledge.accept", ref)
    declined = await peer.request("knowledge.decline", ref)
    if command.as_json:
        print_json(declined)
    else:
        print(f"declined {command.suggestion_id}: nothing was admitted")
    return 0


async def _run(command: KnowledgeCommand) -> int:
    router = Router()
    progress = _Progress({})
    router.add("knowledge.progress", KnowledgeProgressEvent, progress.on_progress)
    async with connect_host(command.data_dir, router, client="hearth-knowledge") as peer:
        owner = await _owner(peer, command)
        progress.owner = owner
        if command.action == "add":
            return await _add(peer, command, owner, progress)
        if command.action == "search":
            return await _search(peer, command, owner)
        if command.action in ("suggestions", "accept", "decline"):
            return await _suggestions(peer, command, owner, progress)
        if command.action == "list":
            listing = await peer.request("knowledge.list", owner)
            if command.as_json:
                print_json(listing)
            else:
                _print_sources(listing)
            return 0
        source = {**owner, "sourceId": command.source_id}
        if command.action == "remove":
            result = await peer.request("knowledge.remove", source)
            if command.as_json:
                print_json(result)
            else:
                print(f"removed: {result['chunks']} chunks gone from disk")
            return 0
        result = await peer.request("knowledge.pause", {**source, "paused": command.action == "pause"})
        if command.as_json:
            print_json(result)
        else:
            _print_sources({"sources": [result]})
        return 0


def run_knowledge_command(command: KnowledgeCommand) -> int:
    """Run one `hearth knowledge` command. Returns the exit code (1 when the host refused it)."""
    return run_command(_run(command))
