"""Requests that always get an answer: `ask_agent`'s question to the receiver, its outcome back to the asker.

The question wakes the receiver; the receiver's `reply_to_agent`, or its final message of the run the
question started, is the answer. A failed or cancelled run closes the request as `failed`, a stopped or
deleted receiver as `refused`, a passed deadline as `timeout`: whichever comes first closes it, once, and
its outcome wakes the asker as a new turn. The question is in the receiver's inbox before the request is
opened, so a request the asker is told failed was never opened and never comes back; the outcome is in
the asker's inbox before the request is marked delivered, so after a crash it is delivered exactly once.
At start-up every open request whose question is not waiting is sent again, a question whose request was
closed is not run, and one whose request was never opened is dropped. A write the disk refuses is tried
again later (an expiry, an outcome), never dropped.
"""

from __future__ import annotations

import asyncio
import logging

from host.errors import StorageError
from host.runs.scheduler import Run, RunManager
from host.store.agents import AgentStore
from host.together.clock import Clock
from host.together.delivery import Deliveries, ItemEnd
from host.together.inbox import InboxItem, new_run_id
from host.together.requests import Request, RequestBook, new_request_id
from protocol.models.together import RequestStatus

__all__ = ["RequestDesk", "RETRY_SECONDS", "final_text"]

logger = logging.getLogger(__name__)

RETRY_SECONDS = 5.0
"""How long a write the disk refused (an expiry, an outcome's delivery) waits before it is tried again."""


def final_text(runs: RunManager, run: Run) -> str:
    """The run's last complete assistant text (empty when it said nothing)."""
    for event in runs.transcript_of(run).read_backwards():
        if event.get("type") in ("user", "wake"):
            break  # the run's own message, or (from before messages named their run) an earlier one
        if event.get("runId") != run.run_id:
            continue
        if event.get("type") == "assistant" and not event.get("partial") and event.get("text", "").strip():
            return str(event["text"]).strip()
    return ""


_WHY: dict[str, tuple[RequestStatus, str]] = {
    "error": ("failed", "its run failed before it answered"),
    "cancelled": ("failed", "its run was cancelled before it answered"),
    "stopped": ("refused", "it was stopped or deleted before it answered"),
}


class RequestDesk:
    """Opens, closes and delivers requests.

    Args:
        book: the durable requests.
        deliveries: the inboxes.
        store: the agent store.
        runs: the run manager (for the receiver's final message).
        clock: the time source of deadlines.
    """

    def __init__(
        self, book: RequestBook, deliveries: Deliveries, store: AgentStore, runs: RunManager, clock: Clock
    ) -> None:
        self.book = book
        self._deliveries = deliveries
        self._store = store
        self._runs = runs
        self._clock = clock
        self._changed = asyncio.Event()
        self._unsent: set[str] = set()  # closed requests whose outcome the disk refused so far
        deliveries.end_listeners.append(self.item_ended)

    async def ask(self, asker: str, receiver: str, question: str, timeout: float, hops: int) -> tuple[Request, int]:
        """Put the question in the receiver's inbox, then record the request, then start the question if it can.

        Returns:
            The request, and the question's place in line (0: the receiver started on it).

        Raises:
            StorageError: the question or the request could not be stored: there is no request.
        """
        request_id = new_request_id()
        item = InboxItem(new_run_id(), "wake", question, from_agent=asker, hops=hops, request_id=request_id)
        await self._deliveries.enqueue(receiver, item)
        try:
            request = self.book.open_request(asker, receiver, question, timeout, hops, request_id=request_id)
        except StorageError:
            await self._deliveries.withdraw(receiver, item.run_id)  # and at the next start, if still on disk
            raise
        self._changed.set()
        try:
            _, position = await self._deliveries.place(receiver, item.run_id)
        except StorageError as exc:  # the request stands; its question waits for room in the transcript
            logger.error("request %s: its question waits, it could not start yet: %s", request_id, exc.message)
            waiting = self._deliveries.inbox(receiver).waiting()
            position = next((n for n, i in enumerate(waiting, 1) if i.run_id == item.run_id), 1)
        return request, position

    async def reply(self, receiver: str, request_id: str, answer: str) -> tuple[str, bool]:
        """`reply_to_agent`: (message for the model, whether it is an error)."""
        request = self.book.get(request_id)
        if request is None or request.receiver != receiver:
            return f"There is no request {request_id} addressed to you.", True
        if not request.open:
            return f"Request {request_id} is already closed ({request.status}); your answer was not sent.", True
        await self.close(request, "answered", answer)
        return f"Answer sent to {request.asker} for request {request_id}.", False

    async def item_ended(self, item: InboxItem, reason: ItemEnd, run: Run | None) -> None:
        """Deliveries' end listener: a question's run ended (or the question was dropped)."""
        if item.kind != "wake" or item.request_id is None:
            return
        request = self.book.get(item.request_id)
        if request is None or not request.open:
            return
        if reason == "idle" and run is not None:
            answer = final_text(self._runs, run)
            if answer:
                await self.close(request, "answered", answer)
            else:
                await self.close(request, "failed", f"{request.receiver} ended its turn without an answer")
            return
        status, why = _WHY.get(reason, ("failed", "its run did not complete"))
        await self.close(request, status, f"{request.receiver}: {why}")

    async def close(self, request: Request, status: RequestStatus, answer: str) -> None:
        """Close `request` (no-op when already closed), drop its waiting question, and wake the asker."""
        closed = self.book.close(request.request_id, status, answer)
        if closed is None:
            return
        self._changed.set()
        if self._store.exists(closed.receiver):
            for item in self._deliveries.inbox(closed.receiver).waiting():
                if item.request_id == closed.request_id and item.kind == "wake":
                    await self._deliveries.drop(closed.receiver, item.run_id)
        await self._send_outcome(closed)

    async def _send_outcome(self, request: Request) -> None:
        """Put the outcome in the asker's inbox (on disk), then mark it delivered, then start it if it can.

        A refused write leaves the outcome to be sent again (`serve` retries; so does the next start).
        """
        if self._store.exists(request.asker):
            inbox = self._deliveries.inbox(request.asker)
            if not any(i.kind == "answer" and i.request_id == request.request_id for i in inbox.items):
                text = request.answer if request.status == "answered" else request.answer or str(request.status)
                outcome = InboxItem(
                    new_run_id(),
                    "answer",
                    text,
                    from_agent=request.receiver,
                    hops=request.hops,
                    request_id=request.request_id,
                    status=request.status,
                )
                try:
                    await self._deliveries.enqueue(request.asker, outcome)
                except StorageError as exc:
                    logger.error("request %s: its outcome waits for room: %s", request.request_id, exc.message)
                    self._unsent.add(request.request_id)
                    self._changed.set()  # `serve` tries it again
                    return
        self._unsent.discard(request.request_id)
        try:
            self.book.mark_delivered(request.request_id)
        except StorageError as exc:  # the outcome is in the inbox, where the next start finds it
            logger.error("request %s: its delivery could not be marked: %s", request.request_id, exc.message)
        if self._store.exists(request.asker):
            await self._deliveries.pump(request.asker)

    async def refuse_all_to(self, receiver: str, why: str) -> None:
        """Refuse every open request to `receiver` (it is being deleted)."""
        for request in self.book.open_requests():
            if request.receiver == receiver:
                await self.close(request, "refused", why)

    async def expire_due(self) -> int:
        """Close every open request past its deadline as `timeout`. Returns how many.

        One the disk refuses to close stays open and due; `serve` tries it again after `RETRY_SECONDS`.
        """
        due = self.book.due()
        expired = 0
        for request in due:
            seconds = round(request.deadline - request.opened_at)
            try:
                await self.close(request, "timeout", f"{request.receiver} did not answer within {seconds} s")
            except StorageError as exc:
                logger.error("request %s could not be closed yet: %s", request.request_id, exc.message)
                self._changed.set()  # `serve` tries it again
                continue
            expired += 1
        return expired

    async def recover(self) -> None:
        """At start-up (after `Deliveries.recover`, before any run): make the inboxes agree with the book."""
        known = {request.request_id for request in self.book.all()}
        for agent in self._store.list():
            for item in list(self._deliveries.inbox(agent.agent_id).items):
                if item.kind == "wake" and item.request_id is not None and item.request_id not in known:
                    await self._deliveries.withdraw(agent.agent_id, item.run_id)  # its request was never opened
        for request in self.book.all():
            if request.open and not self._store.exists(request.receiver):
                await self.close(request, "refused", f"{request.receiver} no longer exists")
            elif request.open:
                inbox = self._deliveries.inbox(request.receiver)
                if not any(i.kind == "wake" and i.request_id == request.request_id for i in inbox.items):
                    item = InboxItem(
                        new_run_id(),
                        "wake",
                        request.question,
                        from_agent=request.asker,
                        hops=request.hops,
                        request_id=request.request_id,
                    )
                    await self._deliveries.enqueue(request.receiver, item)
            else:
                if self._store.exists(request.receiver):
                    inbox = self._deliveries.inbox(request.receiver)
                    for item in list(inbox.items):
                        if item.kind == "wake" and item.request_id == request.request_id:
                            await self._deliveries.withdraw(request.receiver, item.run_id)
                if not request.delivered:
                    await self._send_outcome(request)
        await self.expire_due()

    async def _send_unsent(self) -> None:
        for request_id in sorted(self._unsent):
            request = self.book.get(request_id)
            if request is not None:
                await self._send_outcome(request)

    async def serve(self) -> None:
        """Expire requests at their deadlines and send outcomes the disk refused before, until cancelled."""
        while True:
            expired = await self.expire_due()
            await self._send_unsent()
            self._changed.clear()
            deadline = self.book.next_deadline()
            now = self._clock.now()
            if self._unsent or (deadline is not None and deadline <= now and not expired):
                deadline = now + RETRY_SECONDS  # a refused write: try again in a while, not at once
            wait = None if deadline is None else max(0.0, deadline - now) + 0.01
            try:
                async with asyncio.timeout(wait):
                    await self._changed.wait()
            except TimeoutError:
                pass
