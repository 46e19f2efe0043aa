"""An erase's conversation scrub beyond the agent's own transcript: the copies of what it exchanged with peers.

When a person erases a fact and asks for the conversation to be scrubbed too, the text also leaves what
the agent sent to other agents or got from them: the wakes from it in each receiver's transcript, the inbox
items from it or waiting for it, and the questions and answers of the requests it asked or was asked (the
requests book). A peer's own words in its own transcript (what it said in reply, its own tool calls) are its
conversation and are left. Works are not reached: a Work run never reads an agent's private memory. A peer
whose transcript changed starts a new prompt epoch, so nothing it kept of its transcript outlives the scrub.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any

from host.memory.scrub import TextScrub, scrub_transcript
from host.prompt.cache import bump_epoch
from host.store.agents import AgentStore
from host.together.delivery import Deliveries
from host.together.inbox import InboxItem
from host.together.requests import RequestBook

__all__ = ["ConversationCopies"]

logger = logging.getLogger(__name__)


class ConversationCopies:
    """Args:
    store: the agents (their transcripts).
    deliveries: their inboxes.
    book: the requests between them.
    """

    def __init__(self, store: AgentStore, deliveries: Deliveries, book: RequestBook) -> None:
        self._store = store
        self._deliveries = deliveries
        self._book = book

    async def scrub(self, agent_id: str, scrub: TextScrub) -> int:
        """Scrub `agent_id`'s messages kept outside its own transcript; returns how many were scrubbed."""
        scrubbed = 0
        for peer in self._store.list():
            if peer.agent_id == agent_id:
                continue
            path = peer.directory / "transcript.jsonl"
            found = await asyncio.to_thread(
                scrub_transcript, path, scrub, conversation=True, only=lambda e: _wake_from(e, agent_id)
            )
            if found.scrubbed:
                # Lines changed in place: whatever the peer kept of its transcript belongs to an old epoch now.
                bump_epoch(peer.directory, "erase")
            scrubbed += found.scrubbed
        for peer in self._store.list():
            mine = peer.agent_id == agent_id

            def change(item: InboxItem, mine: bool = mine) -> InboxItem:
                if mine or item.from_agent == agent_id:
                    return replace(item, text=scrub.text(item.text))
                return item

            scrubbed += await self._deliveries.rewrite(peer.agent_id, change)
        found = await asyncio.to_thread(
            scrub_transcript, self._book.path, scrub, conversation=True, only=lambda e: self._involves(e, agent_id)
        )
        if found.scrubbed:
            self._book.reload()
            scrubbed += found.scrubbed
        if scrubbed:
            logger.info("erase: scrubbed %d message(s) %s exchanged with other agents", scrubbed, agent_id)
        return scrubbed

    def _involves(self, entry: dict[str, Any], agent_id: str) -> bool:
        """Whether a line of the requests book belongs to a request `agent_id` asked or was asked."""
        if entry.get("op") == "open":
            return agent_id in (entry.get("asker"), entry.get("receiver"))
        request = self._book.get(str(entry.get("id")))
        return request is not None and agent_id in (request.asker, request.receiver)


def _wake_from(event: dict[str, Any], agent_id: str) -> bool:
    return event.get("type") == "wake" and event.get("fromAgent") == agent_id
