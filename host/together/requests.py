"""Durable requests between agents: `<data>/together/requests.jsonl`, append-only, each line fsynced.

A request is opened with an id, asker, receiver, question, deadline and hop count, and closed exactly once
with a status (`answered`, `timeout`, `failed`, `refused`) and the answer or the reason. `delivered` marks
that its outcome is in the asker's inbox. The book is the fold of the file, so it survives any crash. Each
line is appended by `append_durably`: a line the disk refuses is cut back off and raises `StorageError`
(STORAGE_FULL on a full disk), and the book is unchanged. A torn last line (a crash mid-append) is skipped
with a warning, and the next append starts on a line of its own.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from host.store.durable import append_durably, create_durably, storage_errors
from host.together.clock import Clock
from protocol.models.together import RequestStatus

__all__ = ["Request", "RequestBook", "REQUESTS_FILE", "new_request_id"]

logger = logging.getLogger(__name__)

REQUESTS_FILE = Path("together") / "requests.jsonl"


def new_request_id() -> str:
    return f"q-{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True, slots=True)
class Request:
    request_id: str
    asker: str
    receiver: str
    question: str
    deadline: float
    hops: int
    opened_at: float
    status: RequestStatus | None = None
    answer: str = ""
    closed_at: float | None = None
    delivered: bool = False

    @property
    def open(self) -> bool:
        return self.status is None


class RequestBook:
    """Every request the host knows, open or closed.

    Args:
        data_dir: the host's data directory.
        clock: the time source for open and close times.
    """

    def __init__(self, data_dir: Path, clock: Clock) -> None:
        self.path = data_dir / REQUESTS_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._clock = clock
        self._requests: dict[str, Request] = {}
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        with self.path.open("rb") as f:
            for number, line in enumerate(f, start=1):
                try:
                    self._apply(json.loads(line))
                except (ValueError, KeyError, TypeError) as exc:
                    logger.warning("%s line %d is unreadable (%s); skipped", self.path, number, exc)

    def _apply(self, entry: dict[str, Any]) -> None:
        op, request_id = entry["op"], str(entry["id"])
        if op == "open":
            self._requests[request_id] = Request(
                request_id,
                str(entry["asker"]),
                str(entry["receiver"]),
                str(entry["question"]),
                float(entry["deadline"]),
                int(entry["hops"]),
                float(entry["at"]),
            )
        elif op == "close" and request_id in self._requests:
            self._requests[request_id] = replace(
                self._requests[request_id],
                status=entry["status"],
                answer=str(entry.get("answer", "")),
                closed_at=float(entry["at"]),
            )
        elif op == "delivered" and request_id in self._requests:
            self._requests[request_id] = replace(self._requests[request_id], delivered=True)

    def _append(self, entry: dict[str, Any], what: str) -> None:
        """Append one line for `entry` durably, then apply it.

        Raises:
            StorageError: nothing was written (the disk refused it); the book is unchanged.
        """
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        create_durably(self.path, mode=0o600)
        with storage_errors(self.path, what):
            size = self.path.stat().st_size
            if size and self._last_byte(size) != b"\n":
                line = b"\n" + line  # end a torn line from a crash so this one stands alone
        append_durably(self.path, line, what)
        self._apply(entry)

    def _last_byte(self, size: int) -> bytes:
        fd = os.open(self.path, os.O_RDONLY)
        try:
            return os.pread(fd, 1, size - 1)
        finally:
            os.close(fd)

    def open_request(
        self, asker: str, receiver: str, question: str, timeout: float, hops: int, *, request_id: str | None = None
    ) -> Request:
        """Record a new request, durably, and return it.

        Raises:
            StorageError: it could not be stored, so it does not exist.
        """
        now = self._clock.now()
        request_id = request_id or new_request_id()
        entry = {
            "op": "open",
            "id": request_id,
            "asker": asker,
            "receiver": receiver,
            "question": question,
            "deadline": now + timeout,
            "hops": hops,
            "at": now,
        }
        self._append(entry, f"the request to {receiver}")
        return self._requests[request_id]

    def close(self, request_id: str, status: RequestStatus, answer: str) -> Request | None:
        """Close an open request; None when it is unknown or already closed (nothing is written).

        Raises:
            StorageError: the close could not be stored; the request is still open.
        """
        request = self._requests.get(request_id)
        if request is None or not request.open:
            return None
        entry = {"op": "close", "id": request_id, "status": status, "answer": answer, "at": self._clock.now()}
        self._append(entry, f"the outcome of request {request_id}")
        return self._requests[request_id]

    def mark_delivered(self, request_id: str) -> None:
        """Raises: StorageError: the mark could not be stored (start-up finds the outcome in the inbox)."""
        request = self._requests.get(request_id)
        if request is not None and not request.delivered:
            self._append({"op": "delivered", "id": request_id}, f"the delivery of request {request_id}'s outcome")

    def get(self, request_id: str) -> Request | None:
        return self._requests.get(request_id)

    def all(self) -> list[Request]:
        return list(self._requests.values())

    def open_requests(self) -> list[Request]:
        return [request for request in self._requests.values() if request.open]

    def due(self) -> list[Request]:
        """Open requests whose deadline has passed."""
        now = self._clock.now()
        return [request for request in self.open_requests() if request.deadline <= now]

    def next_deadline(self) -> float | None:
        return min((request.deadline for request in self.open_requests()), default=None)
