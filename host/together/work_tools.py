"""The tools of a Work run: post_to_work, handoff_task, read_work_timeline, and the Work's own memory.

Offered only in a Work run, and only for that run's Work. The memory tools there are the ordinary memory
tools on the Work's memory (`works/<id>/memory`, scope `work:<id>`): a Work run never reaches a member's
private memory, and a direct run never reaches a Work's. Board changes name the revision they expect.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from host.errors import HostError
from host.memory import MEMORY_TOOL_NAMES, Evidence, MemoryStore, memory_tool_definitions, run_memory_tool
from host.runs.host_tools import ArgumentsError, HostCall, parse_arguments, tool_spec
from host.runs.provenance import run_provenance
from host.runs.scheduler import RunManager, RunOrigin
from host.store.agents import Agent
from host.together.work_service import WorkService, board_text
from protocol.models.kernel import ToolCallResult, ToolSpec
from protocol.models.together import WORK_TOOLS, HandoffTaskArgs, PostToWorkArgs, ReadWorkTimelineArgs

__all__ = ["WorkMemories", "WorkTools"]


def _member_dirs(work_dir: Path) -> list[Path]:
    """Where a Work's memory is read: each member's Work-run transcript and prompt cache."""
    members = work_dir / "members"
    return sorted(path for path in members.iterdir() if path.is_dir()) if members.is_dir() else []


class WorkMemories:
    """The Works' memories, opened on first use and kept open (one writer each)."""

    def __init__(self, works_dir: Path) -> None:
        self._works_dir = works_dir
        self._stores: dict[str, MemoryStore] = {}

    def get(self, work_id: str) -> MemoryStore:
        store = self._stores.get(work_id)
        if store is None:
            directory = self._works_dir / work_id
            store = MemoryStore(
                directory, agent_id=work_id, scope=f"work:{work_id}", places=lambda: _member_dirs(directory)
            )
            self._stores[work_id] = store
        return store

    def opened(self, work_id: str) -> MemoryStore | None:
        """The Work's memory if it is open, without opening it."""
        return self._stores.get(work_id)

    def close_work(self, work_id: str) -> None:
        store = self._stores.pop(work_id, None)
        if store is not None:
            store.close()

    def close(self) -> None:
        for work_id in list(self._stores):
            self.close_work(work_id)


class WorkTools:
    """Args:
    service: the Works.
    memories: the Works' memories.
    runs: the run manager (a Work run's transcript, for evidence).
    """

    def __init__(self, service: WorkService, memories: WorkMemories, runs: RunManager) -> None:
        self._service = service
        self._memories = memories
        self._runs = runs
        self._work_specs = [tool_spec(name, model) for name, model in WORK_TOOLS.items()]
        self._memory_specs = [
            ToolSpec(name=name, description=description.replace("your", "this Work's"), input_schema=schema)
            for name, description, schema in memory_tool_definitions()
        ]

    def offered(self, agent: Agent, origin: RunOrigin) -> list[ToolSpec]:
        if origin.work_id is None or not self._service.works.exists(origin.work_id):
            return []
        return [*self._work_specs, *(self._memory_specs if agent.settings.memory else [])]

    async def call(self, call: HostCall) -> ToolCallResult:
        work_id = call.origin.work_id or ""
        try:
            if call.name in MEMORY_TOOL_NAMES:
                transcript = self._runs.transcript_of(call.run)
                evidence = Evidence("agent", transcript.last_seq, call.tool_call_id)
                # What this run has read (timeline entries of other members included) decides trust.
                provenance = run_provenance(transcript.read_backwards())
                content, is_error = await run_memory_tool(
                    self._memories.get(work_id), call.name, call.arguments, evidence, provenance=provenance
                )
                return ToolCallResult(content=content, is_error=is_error)
            text = await self._work_tool(call, work_id, call.arguments)
            return ToolCallResult(content=text)
        except ArgumentsError as exc:
            return ToolCallResult(content=f"{exc}.", is_error=True)
        except HostError as exc:
            return ToolCallResult(content=f"{call.name} was refused: {exc.message}", is_error=True)

    async def _work_tool(self, call: HostCall, work_id: str, raw: dict[str, Any]) -> str:
        me = call.agent.agent_id
        if call.name == "post_to_work":
            post = parse_arguments(PostToWorkArgs, raw)
            seq = await self._service.record(work_id, "post", me, post.text)
            return f"Posted to the Work's timeline as entry {seq}."
        if call.name == "handoff_task":
            args = parse_arguments(HandoffTaskArgs, raw)
            task, revision = await self._service.handoff(
                work_id, me, args.task_id, args.summary, args.status, args.deliverables, args.expected_revision
            )
            return f"Handed off {task.task_id} as {task.status}; the board is now at revision {revision}."
        args_t = parse_arguments(ReadWorkTimelineArgs, raw)
        entries, _ = self._service.timeline(work_id, args_t.after_seq, 100_000)
        lines = [f"#{e['seq']} {e['actor']} ({e['kind']}): {e['text']}" for e in entries[-args_t.limit :]]
        work = self._service.works.get(work_id)
        return "\n".join([board_text(work), "", "Timeline:", *(lines or ["(empty)"])])
