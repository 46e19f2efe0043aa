"""Delivery: every run of an agent comes from its inbox, one at a time, in order.

A person's message, a wake, a request's outcome or a Work instruction is put in the agent's inbox and
acknowledged once it is on disk (with its place in line); when the agent is free the next item's message
is written to its transcript, naming the item's run id, and its run starts. `interrupt` (a person) and
`priority` (a peer) put the item first and cancel the running turn, which starts the item once it has
ended. When a run ends (or an item is dropped unstarted) the end listeners hear of it before the item
leaves the inbox, so a request is closed before its wake is forgotten. After a restart every item still in
an inbox is delivered again, one whose run had begun (its id is in its transcript) as a new attempt under
a new run id. Every inbox change goes through `_change`, one at a time per agent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import Literal

from host.errors import StorageError
from host.runs.project_root import check_project_root
from host.runs.scheduler import Notify, Run, RunManager, RunOrigin
from host.store.agents import AgentStore
from host.store.transcript import Transcript
from host.together.inbox import INBOX_FILE, Inbox, InboxItem, new_run_id
from protocol.errors import JsonRpcError
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
        self._leaving: set[str] = set()  # waiting items being dropped: never started meanwhile
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
        """Every waiting run of every agent, for `host.status` (and whether the host is idle): one marked started
        whose run the run manager does not know yet (its message is being written) is counted too."""
        return [
            RunInfo(run_id=item.run_id, agent_id=agent_id, state="queued")
            for agent_id in sorted(self._inboxes)
            for item in (self._inboxes[agent_id].items if self._store.exists(agent_id) else [])
            if not item.started or self._runs.get(item.run_id) is None
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
        item = InboxItem(new_run_id(), "user", text, project_root=root)
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
            StorageError: the inbox could not take it (it is not kept), or its message could not be written yet
                (it waits in its place).
        """
        await self.enqueue(agent_id, item, front=front or interrupt)
        return await self.place(agent_id, item.run_id, interrupt=interrupt)

    async def place(self, agent_id: str, run_id: str, *, interrupt: bool = False) -> tuple[int | None, int]:
        """Start the agent's next item if it is free (its turn cancelled first on `interrupt`); where is `run_id`?

        Returns:
            (seq of its message, 0) when its run started, else (None, its place in line from 1).

        Raises:
            StorageError: the next item's message could not be written yet (it waits in its place).
        """
        if interrupt:
            await self._runs.cancel(agent_id)
        await self.pump(agent_id)
        inbox = self.inbox(agent_id)
        current = inbox.find(run_id)
        if current is None or current.started:  # started (and perhaps already ended)
            return self._seqs.pop(run_id, None), 0
        await self._on_status(agent_id)
        return None, inbox.waiting().index(current) + 1

    async def enqueue(self, agent_id: str, item: InboxItem, *, front: bool = False) -> None:
        """Put `item` in the agent's inbox, on disk, without starting it (`pump` does).

        Raises:
            NotFoundError: no such agent.
            StorageError: the disk refused it; it is not in the inbox.
        """
        self._store.get(agent_id)
        item = replace(item, after_seq=self._last_seq(agent_id, item))
        await self._change(agent_id, lambda inbox: inbox.pushed(item, front=front))

    def _transcript(self, agent_id: str, item: InboxItem) -> Transcript:
        """Where the item's runs write (its agent's transcript, or the member's in a Work)."""
        return self._runs.transcript_of(Run(item.run_id, agent_id, _origin(item)))

    def _last_seq(self, agent_id: str, item: InboxItem) -> int:
        try:
            return self._transcript(agent_id, item).last_seq
        except (JsonRpcError, OSError):  # not readable now: a restart then looks through all of it
            return 0

    async def _change(
        self,
        agent_id: str,
        change: Callable[[Inbox], list[InboxItem] | None],
        *,
        write: bool = True,
        even_if_refused: bool = False,
    ) -> list[InboxItem] | None:
        """The one way an inbox changes: `change` makes the new items from those last written, a worker thread
        writes them (one write at a time per agent, so the loop never waits on the fsyncs and an older list is
        never written over a newer one), and only then are they the inbox's items. With `write` False the
        change is made in memory alone (a start mark), in the same order, and reaches the file with the next.

        Returns:
            The new items, or None when `change` had nothing to change.

        Raises:
            StorageError: the disk refused the write; the items are as they were, unless `even_if_refused`
                (then they are the new ones all the same, and the file catches up at the next write).
        """
        inbox = self.inbox(agent_id)
        async with self._saving.setdefault(agent_id, asyncio.Lock()):
            items = change(inbox)
            if items is None:
                return None
            if not write:
                inbox.items = items
                return items
            try:
                await asyncio.to_thread(inbox.write, items)
            except StorageError:
                if even_if_refused:
                    inbox.items = items
                raise
        return items

    def _busy(self, agent_id: str) -> bool:
        """Whether nothing may start for the agent now (stopping host, deleted agent, a run in progress)."""
        return self.halted or not self._store.exists(agent_id) or self._runs.active_run(agent_id) is not None

    async def pump(self, agent_id: str) -> None:
        """Start the agent's next item if it has no run.

        Raises:
            StorageError: its message could not be written (it waits, and the caller hears why).
        """
        if self._busy(agent_id):
            return

        def start_next(inbox: Inbox) -> list[InboxItem] | None:
            if self._busy(agent_id) or any(item.started for item in inbox.items):
                return None
            head = next((item for item in inbox.waiting() if item.run_id not in self._leaving), None)
            return None if head is None else inbox.marked(head.run_id)

        # Not written: the message line the run starts with is the record that it began (see `recover`).
        items = await self._change(agent_id, start_next, write=False)
        if items is None:
            return
        item = next(item for item in items if item.started)
        try:
            _, seq = await self._runs.start(agent_id, item.event(), run_id=item.run_id, origin=_origin(item))
        except BaseException:
            await self._change(agent_id, lambda inbox: inbox.marked(item.run_id, False), write=False)
            raise
        self._seqs[item.run_id] = seq

    async def record_end(self, run: Run) -> None:
        """The run manager's end record (before the end is announced): tell the listeners, let the item go.

        So a shell that hears of the end and stops the host at once never gets the message delivered again.
        """
        try:
            if self.halted or not self._store.exists(run.agent_id):
                return  # a stopping host keeps the item: its run is in the transcript, so the next start retries it
            item = self.inbox(run.agent_id).find(run.run_id)
            if item is not None:
                reason: ItemEnd = "stopped" if run.agent_id in self._stopping else run.reason or "error"
                await self._tell(item, reason, run)
                # Gone even if the disk refuses: its run has ended and the agent must go on. The file then keeps
                # it, and a restart runs it again under a new id (its run is in the transcript).
                await self._change(run.agent_id, lambda inbox: inbox.without(run.run_id), even_if_refused=True)
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
            StorageError: the waiting item could not be removed (it waits still).
        """
        inbox = self.inbox(agent_id)
        active = self._runs.active_run(agent_id)
        if run_id is None or (active is not None and active.run_id == run_id):
            return await self._runs.cancel(agent_id)
        item = inbox.find(run_id)
        if item is None or item.started:
            return False
        dropped = await self._drop(agent_id, item, "cancelled")
        await self._on_status(agent_id)
        return dropped

    def _unless_started(self, run_id: str) -> Callable[[Inbox], list[InboxItem] | None]:
        """A change removing a waiting item; nothing when it has started meanwhile (or is gone)."""

        def remove(inbox: Inbox) -> list[InboxItem] | None:
            item = inbox.find(run_id)
            return None if item is None or item.started else inbox.without(run_id)

        return remove

    async def _drop(self, agent_id: str, item: InboxItem, reason: ItemEnd) -> bool:
        """Tell the listeners, then remove the waiting item (kept from starting meanwhile) and announce its end."""
        self._leaving.add(item.run_id)
        try:
            await self._tell(item, reason, None)
            removed = await self._change(agent_id, self._unless_started(item.run_id))
        finally:
            self._leaving.discard(item.run_id)
        if removed is None:
            return False
        await self._notify("agent.ended", AgentEndedEvent(agent_id=agent_id, run_id=item.run_id, reason="cancelled"))
        return True

    async def withdraw(self, agent_id: str, run_id: str) -> bool:
        """Remove one waiting item that must not run: a question whose request was never opened, or is closed.

        It is gone even when the disk refuses the write: a restart drops it from the file again (its request is
        unknown or closed there too). Returns whether it was waiting.
        """
        try:
            return await self._change(agent_id, self._unless_started(run_id), even_if_refused=True) is not None
        except StorageError as exc:
            logger.error("%s: run %s is dropped, but the inbox could not be written: %s", agent_id, run_id, exc.message)
            return True

    async def drop(self, agent_id: str, run_id: str) -> bool:
        """Drop one waiting item without announcing it to listeners as a person's cancel (a request timed out)."""
        if not await self.withdraw(agent_id, run_id):
            return False
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
        dropped = 0
        try:
            for item in inbox.waiting():
                dropped += await self._drop(agent_id, item, "stopped")
            await self._runs.cancel(agent_id)
        finally:
            self._stopping.discard(agent_id)
        await self._on_status(agent_id)
        return dropped

    def forget(self, agent_id: str) -> None:
        """Let a deleted agent's inbox go (its file went to the trash with the agent)."""
        self._inboxes.pop(agent_id, None)

    async def recover(self) -> int:
        """At start-up, before any run (after the transcripts' recovery): every item left in an inbox waits
        again, and one whose run had begun waits as a new attempt under a new run id, since that run was
        closed (or ended) under its own.

        Returns:
            How many items wait in all.
        """
        total = 0
        for agent in self._store.list():
            inbox = self.inbox(agent.agent_id)
            begun = self._begun(agent.agent_id, inbox.items)
            if begun or any(item.started for item in inbox.items):
                logger.info("%s: %d run(s) had begun when the host stopped; again now", agent.agent_id, len(begun))
                try:
                    await self._change(agent.agent_id, partial(Inbox.retried, begun=begun), even_if_refused=True)
                except StorageError as exc:  # the transcripts still say so: the next start renames them again
                    logger.error("%s: the inbox could not be written: %s", agent.agent_id, exc.message)
            total += len(inbox.items)
        return total

    def _begun(self, agent_id: str, items: list[InboxItem]) -> set[str]:
        """The ids of `items` whose run wrote a line: read back in each transcript to the oldest item's queueing.

        An item whose transcript cannot be read counts as begun: a new id is always safe.
        """
        places: dict[str | None, list[InboxItem]] = {}
        for item in items:
            places.setdefault(item.work_id, []).append(item)
        begun: set[str] = set()
        for place in places.values():
            ids = {item.run_id for item in place}
            since = min(item.after_seq for item in place)
            try:
                for event in self._transcript(agent_id, place[0]).read_backwards():
                    if int(event["seq"]) <= since or ids <= begun:
                        break
                    if event.get("runId") in ids:
                        begun.add(str(event["runId"]))
            except (JsonRpcError, OSError) as exc:
                logger.error("%s: its transcript could not be read (%s); its waiting runs get new ids", agent_id, exc)
                begun |= ids
        return begun

    async def pump_all(self) -> None:
        for agent_id in sorted(self._inboxes):
            await self.pump(agent_id)


def _origin(item: InboxItem) -> RunOrigin:
    return RunOrigin(
        kind=item.kind,
        from_agent=item.from_agent,
        hops=item.hops,
        request_id=item.request_id,
        work_id=item.work_id,
        project_root=item.project_root,
    )
