"""A Work run's turn: the member's identity, the Work's brief, members and memory, nothing private.

The prompt is the member's name and the person's standing instructions, the Work (name, description,
members) and the Work's own memory section; the conversation is the member's Work-run transcript under
the Work's directory; the tools are the kernel's local tools under a Work policy (the Work's files only)
and the host tools a Work run is offered. No part of the member's private memory, transcript or prompt
cache is read here, so none can reach the model.
"""

from __future__ import annotations

from collections.abc import Callable

from host.prompt.cache import assemble_prompt
from host.prompt.identity import AgentIdentity
from host.runs.context import build_messages
from host.runs.host_tools import HostTools
from host.runs.scheduler import RunOrigin
from host.runs.turns import TurnPlanner
from host.store.agents import Agent, AgentStore
from host.store.approvals import ApprovalStore
from host.together.work_tools import WorkMemories
from host.together.works import WorkStore
from protocol.models.kernel import ChatMessage, KernelInitializeResult, ToolSet, TurnStartParams
from protocol.models.policy import SandboxPolicy
from protocol.models.transcript import ContextEvent
from sandbox import rules_to_wire

__all__ = ["WorkRunPlanner", "work_brief"]


def work_brief(name: str, work_id: str, description: str, scratch: str) -> str:
    """What a member is told about the Work it runs in (stable while the Work's details are unchanged)."""
    lines = [
        f"This turn runs inside the Work {name!r} (id {work_id}), a room shared with its members and the user.",
        f"Your workspace here is the Work's shared files ({scratch}); your private memory, your own conversations "
        "and your own files are not available inside a Work, and nothing from them belongs here.",
        "Post progress with post_to_work, read what others did with read_work_timeline, and hand a task back "
        "with handoff_task. The memory tools here read and write the Work's own memory.",
    ]
    if description.strip():
        lines += ["", "What the Work is about:", description.strip()]
    return "\n".join(lines)


class WorkRunPlanner:
    """Builds `turn.start` for Work runs.

    Args:
        store: the agent store.
        works: the Work store.
        memories: the Works' memories.
        planner: the direct-run planner (for the model and the shell note).
        host_tools: the host-tool table.
        kernel_info: the kernel's tool list.
    """

    def __init__(
        self,
        store: AgentStore,
        works: WorkStore,
        memories: WorkMemories,
        planner: TurnPlanner,
        host_tools: HostTools,
        kernel_info: Callable[[], KernelInitializeResult | None],
    ) -> None:
        self._store = store
        self._works = works
        self._memories = memories
        self._planner = planner
        self._host_tools = host_tools
        self._kernel_info = kernel_info

    async def prepare(self, agent: Agent, run_id: str, origin: RunOrigin) -> TurnStartParams:
        work_id = origin.work_id or ""
        work = self._works.get(work_id)
        spec = self._planner.resolve_model(agent)
        transcript = self._works.member_transcript(work_id, agent.agent_id)
        memory = self._memories.get(work_id) if agent.settings.memory else None
        latest = next((e["text"] for e in transcript.read_backwards() if e.get("type") == "user"), "")
        scratch = str(work.directory / "scratch")
        note = " ".join(
            filter(None, [work_brief(work.name, work_id, work.description, scratch), self._planner.tools_note()])
        )
        identity = AgentIdentity(agent.agent_id, agent.name, agent.settings.instructions, note, in_work=True)
        members = [
            (m.agent_id, m.name, "")
            for m in self._store.list()
            if m.agent_id in work.members and m.agent_id != agent.agent_id
        ]
        prompt = assemble_prompt(self._works.member_dir(work_id, agent.agent_id), identity, members, memory, latest)
        transcript.append(
            ContextEvent(run_id=run_id, epoch=prompt.epoch, recall=prompt.recall_block).model_dump(mode="json")
        )
        system = [ChatMessage(role="system", content=prompt.system, cache_breakpoint=True)]
        info = self._kernel_info()
        local = [tool.name for tool in info.tools] if info is not None else []
        return TurnStartParams(
            run_id=run_id,
            session=agent.agent_id,
            messages=build_messages(system, transcript.since_last_compact()),
            model=spec,
            tools=ToolSet(local=local, host=self._host_tools.offered(agent, origin)),
            policy=SandboxPolicy(
                data_dir=str(self._store.data_dir),
                agent_id=agent.agent_id,
                run_kind="work",
                work_id=work_id,
                network=agent.settings.network,
                permission=agent.settings.tool_permission,
            ),
            approvals=rules_to_wire(ApprovalStore.for_agent(self._store.data_dir, agent.agent_id).rules()),
        )
