"""An ended run's last transcript lines, its partial reply and its `ended`: written at once, or kept.

A line the disk refuses is kept in memory, in order, and written before the agent's next message, so
the transcript never shows a new message before the end of the run before it, and a send that cannot
write them is refused. A partial reply that does not fit is given up (the person saw it stream; it was
never acknowledged), so a long text on a nearly full disk never keeps the small `ended` line out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from host.errors import StorageError
from host.runs.run import Run
from host.store.agents import AgentStore
from host.store.transcript import Transcript, utc_now
from protocol.models.transcript import AssistantEvent, RunEndedEvent

__all__ = ["EndLines"]

logger = logging.getLogger(__name__)


class EndLines:
    """Args:
    store: the agent store (an agent deleted meanwhile has nothing to write).
    transcript_of: where a run's lines go.
    """

    def __init__(self, store: AgentStore, transcript_of: Callable[[Run], Transcript]) -> None:
        self._store = store
        self._transcript_of = transcript_of
        self._waiting: dict[str, list[tuple[Run, dict[str, Any]]]] = {}

    async def write(self, run: Run, ended: RunEndedEvent) -> StorageError | None:
        """Write the run's partial text (taken from it) and its end, after any lines still waiting.

        Returns:
            Why a line could not be written yet (it is kept), or None when everything is on disk.
        """
        if not self._store.exists(run.agent_id):
            run.partial.clear()
            return None
        lines = self._waiting.setdefault(run.agent_id, [])
        if run.partial:
            partial = AssistantEvent(run_id=run.run_id, text="".join(run.partial), partial=True, ts=utc_now())
            lines.append((run, partial.model_dump(mode="json")))
            run.partial.clear()
        # The time of the end is when it happened, however late the disk takes it.
        lines.append((run, ended.model_copy(update={"ts": utc_now()}).model_dump(mode="json")))
        error = await self.flush(run.agent_id)
        if error is not None:
            logger.error("run %s: its end could not be stored yet: %s", run.run_id, error.message)
        return error

    async def flush(self, agent_id: str) -> StorageError | None:
        """Write the agent's waiting lines in order.

        Returns:
            Why the first line that still cannot be written failed, or None.
        """
        lines = self._waiting.get(agent_id)
        while lines:
            run, line = lines[0]
            try:
                await self._transcript_of(run).append_async(line)
            except StorageError as exc:
                if line.get("type") != "assistant":
                    return exc
                logger.error("run %s: its partial reply (%d chars) is given up: %s", run.run_id, len(line["text"]), exc)
            lines.pop(0)
        self._waiting.pop(agent_id, None)
        return None
