"""One running MCP server of one session: started inside its OS sandbox, listed, called, and stopped.

A connection is owned by one task (`run`), which holds the `mcp` client open from the start until `close`
or until the server's stdout ends (or carries a line that is not JSON-RPC); calls come from turn tasks. Every
state change is reported (`starting`, `ready` with the tool count, `failed` with the stderr tail and the likely
cause, `stopped`), with the server's secrets withheld from every message and tail. A call never raises
anything but `McpCallError`, so a dead or garbled server ends that call at once with a clear error and the
turn goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable
from typing import Any, Protocol

import mcp_types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from kernel.errors import KernelError
from kernel.mcp._stdio import StderrTail, watched_stdio
from kernel.mcp.causes import likely_cause
from kernel.mcp.spec import ServerSpec
from protocol.models.host import PROTOCOL_VERSION
from protocol.models.mcp import McpState
from sandbox import Launch

__all__ = ["McpCallError", "McpConnection", "Report"]

logger = logging.getLogger(__name__)


class Report(Protocol):
    """One status change of this server; a failure comes with its stderr tail and likely cause when known."""

    async def __call__(
        self,
        state: McpState,
        *,
        tools: int | None = None,
        error: str | None = None,
        tail: str | None = None,
        cause: str | None = None,
    ) -> None: ...


_MAX_TOOL_PAGES = 50
_CLOSE_GRACE = 10.0
_CLIENT = mcp_types.Implementation(name="hearth", version=PROTOCOL_VERSION)


class McpCallError(KernelError):
    """An MCP tool call failed; `message` is fit for the model, with the server's secrets withheld."""


class McpConnection:
    """Args:
    spec: the server's spec.
    launch: how to start it inside the sandbox.
    report: where its status changes go.
    program: the program it runs, as named (for the likely cause of a failure).
    call_timeout: seconds one tool call may take.
    """

    def __init__(self, spec: ServerSpec, launch: Launch, report: Report, *, program: str, call_timeout: float) -> None:
        self.spec = spec
        self.program = program
        self.state: McpState = "starting"
        self.tools: tuple[mcp_types.Tool, ...] = ()
        self.error: str | None = None
        self.last_used = time.monotonic()
        self.busy = 0
        self.task: asyncio.Task[None] | None = None
        self._launch = launch
        self._report = report
        self._call_timeout = call_timeout
        self._client: Client | None = None
        self._settled = asyncio.Event()
        self._closing = asyncio.Event()
        self._close_reason: str | None = None
        self._garbled: str | None = None
        self._tail = StderrTail()

    async def run(self) -> None:
        """The owner task: start, list the tools, serve until closed or dead. Never raises but on cancellation."""
        await self._report("starting")
        read_fd, write_fd = os.pipe()
        errlog = os.fdopen(write_fd, "w", encoding="utf-8")
        try:
            async with asyncio.TaskGroup() as tasks:
                pump = tasks.create_task(self._tail.pump(read_fd))
                try:
                    failure = await self._serve(errlog)
                finally:
                    errlog.close()
                    self._client = None
                await self._tail.settle(2.0)
                pump.cancel()  # a leftover process holding the pipe open must not hold the owner
        except Exception as exc:  # the owner's top level: a failure here is a failed server, not a dead kernel
            logger.error("MCP server %s: %s", self.spec.name, type(exc).__name__)
            failure = f"the MCP client failed ({type(exc).__name__})"
        finally:
            self._settled.set()
        failure = failure or self._close_reason
        if self._closing.is_set() and failure is None:
            self.state = "stopped"
            await self._report("stopped")
        else:
            self.state, self.error = "failed", failure or "the server exited"
            await self._report_failure(self.error)

    async def _report_failure(self, error: str) -> None:
        tail = self.spec.redact(self._tail.text())
        await self._report("failed", error=error, tail=tail or None, cause=likely_cause(self.spec, self.program, tail))

    def _note_garbled(self, line: str) -> None:
        self._garbled = self.spec.redact(line)

    def _garbled_message(self) -> str | None:
        if self._garbled is None:
            return None
        return (
            f"the server wrote a line on stdout that is not a JSON-RPC message, so its session was ended: "
            f"{self._garbled!r} (stdout carries MCP messages only; a server logs on stderr)"
        )

    async def _serve(self, errlog: Any) -> str | None:
        """Hold the session open; the reason it failed, or None once it was closed on purpose."""
        ended = asyncio.Event()
        launch = self._launch
        params = StdioServerParameters(
            command=launch.argv[0], args=list(launch.argv[1:]), env=dict(launch.env), cwd=launch.cwd
        )
        failure: str | None = None
        try:
            transport = watched_stdio(params, errlog, ended, self._note_garbled)
            async with Client(transport, client_info=_CLIENT) as client:
                errlog.close()  # the server holds its own copy; ours would keep the tail from ending
                tools = await _list_tools(client)
                self._client = client
                self.tools = tuple(tool for tool in tools if self.spec.offers(tool.name))
                self.state = "ready"
                self.last_used = time.monotonic()
                self._settled.set()
                await self._report("ready", tools=len(self.tools))
                await _first(self._closing.wait(), ended.wait())
                if not self._closing.is_set():
                    failure = self._garbled_message() or "the server exited"
        except* MCPError as group:
            failure = self._garbled_message() or _start_failure(_leaf(group), self.spec)
        except* UnicodeDecodeError:
            failure = "the server wrote bytes on stdout that are not UTF-8 (stdout carries MCP messages only)"
        except* (OSError, ValidationError, RuntimeError) as group:
            failure = self.spec.redact(f"the server could not be started: {_describe(_leaf(group))}")
        return failure

    async def ready(self, timeout: float) -> bool:
        """Wait until the server is ready or has failed; False when it is not ready within `timeout`."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._settled.wait()
        return self.state == "ready"

    @property
    def alive(self) -> bool:
        return self.state in ("starting", "ready")

    async def call(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call one tool of this server.

        Raises:
            McpCallError: the server is not running, stopped during the call, timed out, or answered badly.
        """
        client = self._client
        if client is None or self.state != "ready":
            raise McpCallError(f"the MCP server {self.spec.name!r} is not running ({self.error or self.state})")
        self.busy += 1
        try:
            return await client.call_tool(tool, arguments, read_timeout_seconds=self._call_timeout)
        except MCPError as exc:
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                raise McpCallError(f"{tool} did not answer within {self._call_timeout:g} seconds") from exc
            if exc.code == mcp_types.CONNECTION_CLOSED or self.state != "ready":
                garbled = self._garbled_message()
                raise McpCallError(f"{tool}: {garbled}" if garbled else self._stopped_message()) from exc
            raise McpCallError(self.spec.redact(f"{tool} failed: {exc.message}")) from exc
        except ValidationError as exc:
            raise McpCallError(f"the answer of {tool} does not follow the MCP protocol") from exc
        except (OSError, RuntimeError) as exc:
            raise McpCallError(self._stopped_message()) from exc
        finally:
            self.busy -= 1
            self.last_used = time.monotonic()

    def _stopped_message(self) -> str:
        tail = self.spec.redact(self._tail.text(lines=5))
        said = f"; its last words on stderr: {tail}" if tail else ""
        return f"the MCP server {self.spec.name!r} stopped during the call{said}"

    async def close(self, reason: str | None = None) -> None:
        """Stop the server and wait for it: `stopped`, or `failed` with `reason` when one is given.

        A ready server gets its stdin closed, then is terminated, then killed (the `mcp` client's shutdown);
        one still starting, or one that does not stop in time, has its owner task cancelled, which kills it.
        """
        self._close_reason = reason
        self._closing.set()
        task = self.task
        if task is None or task.done():
            return
        if self.state == "ready":
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_CLOSE_GRACE):
                    await asyncio.shield(task)
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self.state = "failed" if reason else "stopped"
            self.error = reason
            if reason:
                await self._report_failure(reason)
            else:
                await self._report("stopped")


async def _list_tools(client: Client) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


async def _first(*waits: Awaitable[Any]) -> None:
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


def _start_failure(exc: BaseException, spec: ServerSpec) -> str:
    if isinstance(exc, MCPError) and exc.code == mcp_types.CONNECTION_CLOSED:
        return "the server exited before it answered"
    return spec.redact(f"the server refused the session: {exc}")


def _leaf(group: BaseExceptionGroup[Any]) -> BaseException:
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
