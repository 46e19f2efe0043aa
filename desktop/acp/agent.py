"""Hearth as an ACP v1 agent: each ACP method is one or two host methods (see docs/acp.md for the mapping).

`initialize` answers without the host; every session method reaches the host through `HostLink`, and every host
refusal is translated once (`host_errors`). A prompt is an `agent.send` followed to its end by a `TurnFollower`;
a slash command is answered from memory without a turn; `session/cancel` is an `agent.cancel` of the session's
run, waiting or running, and the prompt then answers `cancelled` however the run ended.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text, update_agent_thought_text
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AvailableCommandsUpdate,
    ClientCapabilities,
    CloseSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
    Usage,
)

from desktop.acp.commands import COMMANDS, run_command
from desktop.acp.errors import host_refused, host_unreachable, open_elsewhere, run_failed, unknown_session
from desktop.acp.events import EventHub
from desktop.acp.host_link import HostLink
from desktop.acp.mcp_servers import McpServer, adopt_mcp_servers
from desktop.acp.prompt_text import Message, PromptBlock, prompt_message
from desktop.acp.replay import REPLAY_EVENTS, replay_updates
from desktop.acp.sessions import Session, existing_agent, open_agent, project_root_for, session_title
from desktop.acp.turn import TurnFollower
from protocol.errors import ConnectionClosedError, JsonRpcError
from protocol.models.agents import DEFAULT_CONTEXT_WINDOWS, AgentInfo, AgentListResult, AgentSendResult
from protocol.models.host import AgentEndedEvent
from protocol.models.transcript import UsageInfo
from protocol.project_note import project_note
from protocol.version import hearth_version

__all__ = ["HearthAcpAgent", "host_errors"]

logger = logging.getLogger(__name__)

Spawn = Callable[[Coroutine[Any, Any, None]], object]


@contextlib.contextmanager
def host_errors() -> Iterator[None]:
    """Turn a host refusal into the ACP error the editor shows (the one place this happens)."""
    try:
        yield
    except ConnectionClosedError as exc:
        raise host_unreachable(exc.message) from None
    except JsonRpcError as exc:
        raise host_refused(exc) from None


def _usage(usage: UsageInfo | None) -> Usage | None:
    if usage is None:
        return None
    return Usage(
        total_tokens=usage.input_tokens + usage.output_tokens,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_read_tokens=usage.cached_input_tokens,
        cached_write_tokens=usage.cache_write_tokens,
    )


def _context_window(agent: AgentInfo) -> int:
    model = agent.settings.model
    return model.context_window or DEFAULT_CONTEXT_WINDOWS.get(model.provider, 8192)


class HearthAcpAgent:
    """The ACP `Agent` side of `hearth acp`.

    Args:
        link: the host connection.
        hub: the host's run events.
        pinned: the agent every new session is of (`hearth acp AGENT`), or None to pick one by session title.
        spawn: runs a coroutine in the serving task group (announcements sent after a response).
    """

    def __init__(self, link: HostLink, hub: EventHub, *, pinned: str | None, spawn: Spawn) -> None:
        self._link = link
        self._hub = hub
        self._pinned = pinned
        self._spawn = spawn
        self._sessions: dict[str, Session] = {}
        self._client: Client | None = None

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    @property
    def client(self) -> Client:
        assert self._client is not None, "on_connect comes first"
        return self._client

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(), resume=SessionResumeCapabilities()
                ),
            ),
            agent_info=Implementation(name="hearth", title="Hearth", version=hearth_version()),
            auth_methods=[],
        )

    def _check_free(self, agent: AgentInfo, root: str) -> None:
        """An agent open here keeps its project root: opening it again elsewhere is refused (CONFLICT)."""
        before = self._sessions.get(agent.agent_id)
        if before is not None and before.project_root != root:
            raise open_elsewhere(agent.agent_id, before.project_root, root)

    async def _open(
        self, agent: AgentInfo, root: str, cwd: str, mcp_servers: list[McpServer] | None, extra: list[str] | None
    ) -> Session:
        self._check_free(agent, root)
        session = Session(agent=agent, cwd=cwd, project_root=root)
        before = self._sessions.get(session.session_id)
        if before is not None:  # opened again on the same root: its runs still in flight stay cancellable
            session.runs = before.runs
        if mcp_servers:
            with host_errors():
                session.notices += await adopt_mcp_servers(self._link, agent, mcp_servers)
        if extra:
            session.notices.append(
                f"[Only {session.project_root} is open to the agent; the additional folders are not.]"
            )
        self._sessions[session.session_id] = session
        self._spawn(self._announce(session))
        return session

    async def _announce(self, session: Session) -> None:
        """After the response: the session's commands and title."""
        try:
            commands = AvailableCommandsUpdate(session_update="available_commands_update", available_commands=COMMANDS)
            await self.client.session_update(session.session_id, commands)
            title = SessionInfoUpdate(session_update="session_info_update", title=session.agent.name)
            await self.client.session_update(session.session_id, title)
        except Exception:  # a task of the serving group: the editor going away must not end it
            logger.exception("announcing session %s failed", session.session_id)

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        root = project_root_for(cwd, self._link.data_dir)  # a bad folder is refused before any agent is made
        with host_errors():
            agent = await open_agent(self._link, pinned=self._pinned, title=session_title(cwd, kwargs))
        session = await self._open(agent, root, cwd, mcp_servers, additional_directories)
        return NewSessionResponse(session_id=session.session_id)

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        root = project_root_for(cwd, self._link.data_dir)
        with host_errors():
            agent = await existing_agent(self._link, session_id)
            self._check_free(agent, root)
            page = await self._link.call("agent.transcript", {"agentId": agent.agent_id, "limit": REPLAY_EVENTS})
        for update in replay_updates(page["events"], has_more=page["hasMore"]):
            await self.client.session_update(agent.agent_id, update)
        await self._open(agent, root, cwd, mcp_servers, additional_directories)
        return LoadSessionResponse()

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        root = project_root_for(cwd, self._link.data_dir)
        with host_errors():
            agent = await existing_agent(self._link, session_id)
        await self._open(agent, root, cwd, mcp_servers, additional_directories)
        return ResumeSessionResponse()

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        sessions = []
        with host_errors():
            agents = (await self._link.call("agent.list", {}, AgentListResult)).agents
            for agent in agents:
                last = await self._link.call("agent.transcript", {"agentId": agent.agent_id, "limit": 1})
                updated = last["events"][-1]["ts"] if last["events"] else agent.created_at
                open_in = self._sessions.get(agent.agent_id)
                where = open_in.cwd if open_in is not None else cwd or ""
                sessions.append(SessionInfo(session_id=agent.agent_id, cwd=where, title=agent.name, updated_at=updated))
        return ListSessionsResponse(sessions=sessions)

    async def prompt(self, session_id: str, prompt: list[PromptBlock], **kwargs: Any) -> PromptResponse:
        session = self._sessions.get(session_id)
        if session is None:
            raise unknown_session(session_id)
        session.cancelled = False
        message = prompt_message(prompt)
        with host_errors():
            # A slash command is the person's own words alone: with a file attached it is a message.
            reply = None if message.attachments else await run_command(self._link, session.agent.agent_id, message.text)
            if reply is not None:
                await self.client.session_update(session_id, update_agent_message_text(reply))
                return PromptResponse(stop_reason="end_turn")
            for notice in session.notices:
                await self.client.session_update(session_id, update_agent_message_text(notice + "\n\n"))
            session.notices.clear()
            if not message.text and not message.attachments:
                return PromptResponse(stop_reason="end_turn")
            ended = await self._run(session, message)
        return self._response(session, ended)

    async def _run(self, session: Session, message: Message) -> AgentEndedEvent:
        text = message.text
        if not session.told_project:
            text = f"{project_note(session.project_root)}\n\n{text}"
        agent_id = session.agent.agent_id
        with self._hub.follow(agent_id) as queue:
            params: dict[str, Any] = {"agentId": agent_id, "text": text, "projectRoot": session.project_root}
            if message.attachments:
                params["attachments"] = message.attachments
            sent = await self._link.call("agent.send", params, AgentSendResult)
            session.told_project = True
            session.runs.append(sent.run_id)
            try:
                if session.cancelled:  # the cancel came while the message was on its way
                    await self._cancel_run(session.agent.agent_id, sent.run_id)
                elif sent.position > 0:
                    waiting = f"(waiting for {session.agent.name}: {sent.position} run(s) go first)"
                    await self.client.session_update(session.session_id, update_agent_thought_text(waiting))
                follower = TurnFollower(
                    self.client, self._link, session.session_id, agent_id, _context_window(session.agent)
                )
                return await follower.follow(queue, sent.run_id)
            finally:
                session.runs.remove(sent.run_id)

    def _response(self, session: Session, ended: AgentEndedEvent) -> PromptResponse:
        stop: StopReason
        if ended.reason == "cancelled" or session.cancelled:
            stop = "cancelled"
        elif ended.reason == "error":
            raise run_failed(session.agent.name, ended.error or "the run failed", ended.error_code)
        else:
            stop = ended.stop_reason or "end_turn"
        return PromptResponse(stop_reason=stop, usage=_usage(ended.usage))

    async def _cancel_run(self, agent_id: str, run_id: str) -> None:
        try:
            await self._link.call("agent.cancel", {"agentId": agent_id, "runId": run_id})
        except JsonRpcError as exc:
            logger.warning("cancelling %s failed: %s", run_id, exc.message)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self._sessions.get(session_id)
        if session is None:
            return
        session.cancelled = True
        # Waiting runs first, so none of them starts when the running one ends.
        for run_id in reversed(session.runs):
            await self._cancel_run(session.agent.agent_id, run_id)

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        """The editor is done with the session here; the agent and its conversation stay in Hearth."""
        self._sessions.pop(session_id, None)
        return CloseSessionResponse()

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        return AuthenticateResponse()  # no methods are offered: the host is this user's own process

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse | None:
        raise RequestError.invalid_params({"details": "Hearth sessions have no modes"})

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        raise RequestError.invalid_params({"details": "Hearth sessions have no config options; use hearth chat"})

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        raise RequestError.method_not_found("session/fork")  # an agent is one conversation

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        logger.debug("ignored the extension notification _%s", method)
