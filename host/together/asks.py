"""Requests that always get an answer: `ask_agent`'s question to the receiver, its outcome back to the asker.

The question wakes the receiver; the receiver's `reply_to_agent`, or its final message of the run the
question started, is the answer. A failed or cancelled run closes the request as `failed`, a stopped or
deleted receiver as `refused`, a passed deadline as `timeout`: whichever comes first closes it, once, and
its outcome wakes the asker as a new turn. The outcome is put in the asker's inbox and marked delivered
with no await between, so after a crash it is delivered exactly once; at start-up every open request
whose question is not waiting is sent again, and a question whose request was closed is not run.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from host.runs.scheduler import Run, RunManager
from host.store.agents import AgentStore
from host.together.clock import Clock
from host.together.delivery import Deliveries, ItemEnd
from host.together.inbox import InboxItem
from host.together.requests import Request, RequestBook
from protocol.models.together import RequestStatus

__all__ = ["RequestDesk", "final_text"]

logger = logging.getLogger(__name__)


def _run_id() -> str:
    return f"run-{uuid.uuid4().hex[:12]}"


def _question(request: Request) -> InboxItem:
    """The receiver's inbox item for a request's question, carrying the asker's chain on."""
    return InboxItem(
        _run_id(),
        "wake",
        request.question,
        from_agent=request.asker,
        hops=request.hops,
        request_id=request.request_id,
        chain_id=request.chain_id,
        path=request.path,
    )


def final_text(runs: RunManager, run: Run) -> str:
    """The run's last complete assistant text (empty when it said nothing)."""
    for event in runs.transcript_of(run).read_backwards():
        if event.get("runId") != run.run_id:
            if event.get("type") in ("user", "wake"):
                break
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
        deliveries.end_listeners.append(self.item_ended)

    async def ask(
        self,
        asker: str,
        receiver: str,
        question: str,
        timeout: float,
        hops: int,
        *,
        chain_id: str | None = None,
        path: tuple[str, ...] = (),
    ) -> tuple[Request, int]:
        """Record a request and put its question in the receiver's inbox.

        Returns:
            The request, and the question's place in line (0: the receiver started on it).
        """
        request = self.book.open_request(asker, receiver, question, timeout, hops, chain_id=chain_id, path=path)
        self._changed.set()
        _, position = await self._deliveries.deliver(receiver, _question(request))
        return request, position

    def refuse_at_once(
        self, asker: str, receiver: str, question: str, hops: int, reason: str, why: str, path: tuple[str, ...]
    ) -> Request:
        """Record a request the host refuses before it goes out (a loop, a spent budget): closed `refused` with
        `reason`, its outcome delivered by the asker's tool result, nothing put in the receiver's inbox."""
        request = self.book.open_request(asker, receiver, question, 0, hops, path=path)
        self.book.close(request.request_id, "refused", why, reason=reason)
        self.book.mark_delivered(request.request_id)
        return self.book.get(request.request_id) or request

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
        if self._store.exists(request.asker):
            inbox = self._deliveries.inbox(request.asker)
            if not any(i.kind == "answer" and i.request_id == request.request_id for i in inbox.items):
                text = request.answer if request.status == "answered" else request.answer or str(request.status)
                inbox.push(
                    InboxItem(
                        _run_id(),
                        "answer",
                        text,
                        from_agent=request.receiver,
                        hops=request.hops,
                        request_id=request.request_id,
                        status=request.status,
                        chain_id=request.chain_id,
                        path=(*request.path, request.receiver) if request.chain_id else (),
                    )
                )
        self.book.mark_delivered(request.request_id)
        if self._store.exists(request.asker):
            await self._deliveries.pump(request.asker)

    async def refuse_all_to(self, receiver: str, why: str) -> None:
        """Refuse every open request to `receiver` (it is being deleted)."""
        for request in self.book.open_requests():
            if request.receiver == receiver:
                await self.close(request, "refused", why)

    async def expire_due(self) -> int:
        """Close every open request past its deadline as `timeout`. Returns how many."""
        due = self.book.due()
        for request in due:
            seconds = round(request.deadline - request.opened_at)
            await self.close(request, "timeout", f"{request.receiver} did not answer within {seconds} s")
        return len(due)

    async def recover(self) -> None:
        """At start-up (after `Deliveries.recover`, before any run): make the inboxes agree with the book."""
        for request in self.book.all():
            if request.open and not self._store.exists(request.receiver):
                await self.close(request, "refused", f"{request.receiver} no longer exists")
            elif request.open:
                inbox = self._deliveries.inbox(request.receiver)
                if not any(i.kind == "wake" and i.request_id == request.request_id for i in inbox.items):
                    inbox.push(_question(request))
            else:
                if self._store.exists(request.receiver):
                    inbox = self._deliveries.inbox(request.receiver)
                    for item in list(inbox.items):
                        if item.kind == "wake" and item.request_id == request.request_id:
                            inbox.remove(item.run_id)
                if not request.delivered:
                    await self._send_outcome(request)
        await self.expire_due()

    async def serve(self) -> None:
        """Expire requests at their deadlines, until cancelled."""
        while True:
            await self.expire_due()
            self._changed.clear()
            deadline = self.book.next_deadline()
            wait = None if deadline is None else max(0.0, deadline - self._clock.now()) + 0.01
            try:
                async with asyncio.timeout(wait):
                    await self._changed.wait()
            except TimeoutError:
                pass
