"""Delivery: every run of an agent comes from its inbox, one at a time, in order.

A person's message, a wake, a request's outcome or a Work instruction is put in the agent's inbox and
acknowledged at once (with its place in line); when the agent is free the next item's message is written
to its transcript and its run starts. `interrupt` (a person) and `priority` (a peer) put the item first and
cancel the running turn, which starts the item once it has ended. When a run ends (or an item is dropped
unstarted) the end listeners hear of it before the item leaves the inbox, so a request is closed before
its wake is forgotten. After a restart every item still in an inbox is delivered once.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Literal

from host.errors import StorageError
from host.runs.project_root import check_project_root
from host.runs.scheduler import Notify, Run, RunManager, RunOrigin
from host.store.agents import AgentStore
from host.together.inbox import INBOX_FILE, Inbox, InboxItem
from protocol.models.host import AgentEndedEvent, RunInfo
from protocol.models.together import QueuedRun

__all__ = ["Deliveries", "EndListener", "ItemEnd"]

logger = logging.getLogger(__name__)

ItemEnd = Literal["idle", "error", "cancelled", "stopped"]
"""How an item's run ended; `stopped` when its agent was stopped or deleted (then it may not have started)."""

EndListener = Callable[[InboxItem, ItemEnd, Run | None], Awaitable[None]]


class Deliveries:
    """The agents' inboxes and the one place runs are started from.

    Args:
        store: the agent store.
        runs: the run manager.
        notify: sends an event to the shell.
        on_status: told when an agent's queue changed.
    """

    def __init__(
        self, store: AgentStore, runs: RunManager, notify: Notify, on_status: Callable[[str], Awaitable[None]]
    ) -> None:
        self._store = store
        self._runs = runs
        self._notify = notify
        self._on_status = on_status
        self._inboxes: dict[str, Inbox] = {}
        self._seqs: dict[str, int] = {}
        self._stopping: set[str] = set()
        self._saving: dict[str, asyncio.Lock] = {}
        self.end_listeners: list[EndListener] = []
        self.halted = False
        """Set while the host stops: an ending run then keeps its item, to be delivered on the next start."""

    def inbox(self, agent_id: str) -> Inbox:
        """The agent's inbox (NotFoundError for an unknown agent)."""
        inbox = self._inboxes.get(agent_id)
        if inbox is None:
            inbox = Inbox(self._store.get(agent_id).directory / INBOX_FILE)
            self._inboxes[agent_id] = inbox
        return inbox

    def queue(self, agent_id: str) -> list[QueuedRun]:
        """What waits for the agent, next first."""
        if not self._store.exists(agent_id):
            return []
        return [
            QueuedRun(
                run_id=item.run_id,
                kind=item.kind,
                position=number,
                from_agent=item.from_agent,
                request_id=item.request_id,
                work_id=item.work_id,
            )
            for number, item in enumerate(self.inbox(agent_id).waiting(), start=1)
        ]

    def queued_runs(self) -> list[RunInfo]:
        """Every waiting run of every agent, for `host.status`."""
        return [
            RunInfo(run_id=item.run_id, agent_id=agent_id, state="queued")
            for agent_id in sorted(self._inboxes)
            for item in (self._inboxes[agent_id].waiting() if self._store.exists(agent_id) else [])
        ]

    async def send(
        self, agent_id: str, text: str, *, interrupt: bool = False, project_root: str | None = None
    ) -> tuple[str, int | None, int]:
        """A person's message: a chain of wakes starts again from it (hops 0).

        Args:
            agent_id: the receiver.
            text: the message.
            interrupt: cancel the running turn and go first.
            project_root: a directory the run may read (and write with a person's yes), such as an editor's project.

        Returns:
            (runId, seq of the message when its run started at once, place in line: 0 when it started).

        Raises:
            NotFoundError: no such agent.
            InvalidRequestError: the project root cannot be one (see `check_project_root`).
        """
        root = check_project_root(project_root, self._store.data_dir) if project_root is not None else None
        item = InboxItem(f"run-{uuid.uuid4().hex[:12]}", "user", text, project_root=root)
        seq, position = await self.deliver(agent_id, item, interrupt=interrupt)
        return item.run_id, seq, position

    async def deliver(
        self, agent_id: str, item: InboxItem, *, front: bool = False, interrupt: bool = False
    ) -> tuple[int | None, int]:
        """Put `item` in the agent's inbox and start it if the agent is free.

        Args:
            agent_id: the receiver.
            item: what to run.
            front: ahead of every waiting item.
            interrupt: ahead of every waiting item, and cancel the running turn first.

        Returns:
            (seq of its message, 0) when its run started at once, else (None, its place in line from 1).

        Raises:
            NotFoundError: no such agent.
        """
        inbox = self.inbox(agent_id)
        inbox.push(item, front=front or interrupt, save=False)
        try:
            await self._save(agent_id)
        except StorageError:
            inbox.remove(item.run_id, save=False)  # refused, so it must not wait in memory and run later
            raise
        if interrupt:
            await self._runs.cancel(agent_id)
        await self.pump(agent_id)
        current = inbox.find(item.run_id)
        if current is not None and current.started:
            return self._seqs.pop(item.run_id, None), 0
        if current is None:  # it started and already ended
            return self._seqs.pop(item.run_id, None), 0
        await self._on_status(agent_id)
        return None, inbox.waiting().index(current) + 1

    async def _save(self, agent_id: str) -> None:
        """Write the agent's inbox in a worker thread, one write at a time, so the event loop never waits
        on its fsyncs. Each write takes the items as they are when it runs, so the last one is the newest.

        Raises:
            StorageError: the disk refused the write.
        """
        async with self._saving.setdefault(agent_id, asyncio.Lock()):
            await asyncio.to_thread(self.inbox(agent_id).save)

    async def pump(self, agent_id: str) -> None:
        """Start the agent's next item if it has no run."""
        if self.halted or not self._store.exists(agent_id) or self._runs.active_run(agent_id) is not None:
            return
        inbox = self.inbox(agent_id)
        waiting = inbox.waiting()
        if not waiting or any(item.started for item in inbox.items):
            return
        item = waiting[0]
        # Not written: a restart delivers a started item again anyway, so the flag matters in memory only.
        inbox.mark_started(item.run_id, save=False)
        origin = RunOrigin(
            kind=item.kind,
            from_agent=item.from_agent,
            hops=item.hops,
            request_id=item.request_id,
            work_id=item.work_id,
            project_root=item.project_root,
            chain_id=item.chain_id or item.run_id,
            path=(*item.path, agent_id),
            firing_id=item.firing_id,
        )
        try:
            _, seq = await self._runs.start(agent_id, item.event(), run_id=item.run_id, origin=origin)
        except BaseException:
            # Not started (its message could not be written): it waits, and the caller hears why.
            inbox.mark_started(item.run_id, False, save=False)
            raise
        self._seqs[item.run_id] = seq

    async def record_end(self, run: Run) -> None:
        """The run manager's end record (before the end is announced): tell the listeners, let the item go.

        So a shell that hears of the end and stops the host at once never gets the message delivered again.
        """
        try:
            if self.halted or not self._store.exists(run.agent_id):
                return
            inbox = self.inbox(run.agent_id)
            item = inbox.find(run.run_id)
            if item is not None:
                reason: ItemEnd = "stopped" if run.agent_id in self._stopping else run.reason or "error"
                await self._tell(item, reason, run)
                inbox.remove(run.run_id, save=False)
                await self._save(run.agent_id)
        except Exception:  # an end record must never stop the end of a run from being announced
            logger.exception("after run %s of %s, closing its inbox item failed", run.run_id, run.agent_id)

    async def run_ended(self, run: Run) -> None:
        """The run manager's end hook (after the end is announced): start the agent's next item."""
        self._seqs.pop(run.run_id, None)
        if self.halted or not self._store.exists(run.agent_id):
            return
        try:
            await self.pump(run.agent_id)
        except Exception:  # an end hook must never stop the end of a run from being announced
            logger.exception("after run %s of %s, delivering the next message failed", run.run_id, run.agent_id)

    async def _tell(self, item: InboxItem, reason: ItemEnd, run: Run | None) -> None:
        for listener in self.end_listeners:
            await listener(item, reason, run)

    async def cancel(self, agent_id: str, run_id: str | None) -> bool:
        """Cancel the running turn (no `run_id`), or the run `run_id`, running or waiting.

        Raises:
            NotFoundError: no such agent.
        """
        inbox = self.inbox(agent_id)
        active = self._runs.active_run(agent_id)
        if run_id is None or (active is not None and active.run_id == run_id):
            return await self._runs.cancel(agent_id)
        item = inbox.find(run_id)
        if item is None or item.started:
            return False
        await self._drop(agent_id, item, "cancelled")
        await self._on_status(agent_id)
        return True

    async def _drop(self, agent_id: str, item: InboxItem, reason: ItemEnd) -> None:
        await self._tell(item, reason, None)
        self.inbox(agent_id).remove(item.run_id, save=False)
        await self._save(agent_id)
        await self._notify("agent.ended", AgentEndedEvent(agent_id=agent_id, run_id=item.run_id, reason="cancelled"))

    async def drop(self, agent_id: str, run_id: str) -> bool:
        """Drop one waiting item without announcing it to listeners as a person's cancel (a request timed out)."""
        inbox = self.inbox(agent_id)
        item = inbox.find(run_id)
        if item is None or item.started:
            return False
        inbox.remove(run_id, save=False)
        await self._save(agent_id)
        await self._notify("agent.ended", AgentEndedEvent(agent_id=agent_id, run_id=run_id, reason="cancelled"))
        await self._on_status(agent_id)
        return True

    async def stop(self, agent_id: str) -> int:
        """Stop the agent: drop what waits for it, then cancel its turn; every item ends as `stopped`.

        Returns:
            How many waiting items were dropped.
        """
        inbox = self.inbox(agent_id)
        self._stopping.add(agent_id)
        try:
            waiting = inbox.waiting()
            for item in waiting:
                await self._drop(agent_id, item, "stopped")
            await self._runs.cancel(agent_id)
        finally:
            self._stopping.discard(agent_id)
        await self._on_status(agent_id)
        return len(waiting)

    def forget(self, agent_id: str) -> None:
        """Let a deleted agent's inbox go (its file went to the trash with the agent)."""
        self._inboxes.pop(agent_id, None)

    def recover(self) -> int:
        """At start-up, before any run: every item left in an inbox waits again (its run never ended).

        Returns:
            How many items wait in all.
        """
        total = 0
        for agent in self._store.list():
            inbox = self.inbox(agent.agent_id)
            again = inbox.restart()
            if again:
                logger.info(
                    "%s: %d run(s) had not ended when the host stopped; delivering again", agent.agent_id, len(again)
                )
            total += len(inbox.items)
        return total

    async def pump_all(self) -> None:
        for agent_id in sorted(self._inboxes):
            await self.pump(agent_id)
