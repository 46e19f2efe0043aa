"""Each agent's model context kept between its turns, so preparing a turn costs what is new, not the transcript.

A `LiveContext` gives what `build_messages(system, since_last_compact(), recall)` gives, kept and extended:
the lines appended since its last read (`Transcript.read_after`) are folded into its `ContextBuilder`, the new
turns' recall blocks are rendered and attached, and the token estimate and chain hashes are extended. It is
read afresh from the transcript when the prompt epoch changes (an erase scrubs lines in place, then bumps
it; memory changes and compaction bump it too), when the file is another one, shorter, or rewritten in place,
when a `compact` is read or a seq does not follow; and the list is rebuilt from the kept events when the
system prompt, the recall budget or the memory switch changes, or an earlier epoch's block was kept only as
the newest. Recall blocks and the system prompt are byte-stable within an epoch, which is what makes the
kept list valid. A property test holds every build to a build from scratch, byte for byte.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from host.runs.compaction import message_chars
from host.runs.context import ContextBuilder
from host.runs.provenance_tracker import ProvenanceTracker
from host.store.transcript import Mark, Transcript
from protocol.models.kernel import ChatMessage, chain_hashes

__all__ = ["Context", "LiveContext", "LiveContexts", "RecallFor"]

RecallFor = Callable[[list[dict[str, Any]]], Mapping[int, str]]
"""The recall text to attach for these `context` events, by seq, rendered from memory now (the replay rule)."""

MAX_MESSAGES = 200_000
"""How many messages the host keeps built, over all agents, before it lets the least recently used go."""


@dataclass(frozen=True, slots=True)
class Context:
    """One build: the messages (the system prefix first), the chain hash after each, the token estimate, and the
    recall blocks attached to its messages (their text, oldest first: what the run's receipt lists)."""

    messages: list[ChatMessage]
    chain: list[str]
    tokens: int
    recall: tuple[str, ...] = ()


class LiveContext:
    """One agent's context, kept between builds. `lines_read` counts the transcript lines read, for tests.

    `provenance` keeps what the agent's memory calls need of their run's provenance.
    """

    def __init__(self) -> None:
        self.lines_read = 0
        self.provenance = ProvenanceTracker()
        self._mark: Mark | None = None
        self._epoch: int | None = None
        self._last_seq = 0
        self._builder = ContextBuilder()
        self._contexts: list[dict[str, Any]] = []  # the `context` events since the last compaction
        self._budget = 0
        self._system: list[ChatMessage] = []
        self._recall_for: RecallFor | None = None
        self._list: list[ChatMessage] = []  # the system prefix, then the builder's messages with recall attached
        self._chain: list[str] = []  # the chain hash after each message of the list, as far as computed
        self._chars = 0  # what the list counts towards the token estimate
        self._added = 0  # builder messages in the list
        self._attached = 0  # `context` events whose recall has been rendered into the list
        self._pinned = False  # the newest block is of an earlier epoch, kept only because it is the newest
        self._shown: dict[int, str] = {}  # the recall text attached to the list, by its `context` event's seq

    def __len__(self) -> int:
        return len(self._list)

    def build(
        self, transcript: Transcript, epoch: int, system: list[ChatMessage], recall: RecallFor | None, budget: int
    ) -> Context:
        """The context of `transcript` for a turn of prompt epoch `epoch` with this system prefix.

        Args:
            recall: renders the recall blocks to attach (None: memory is off, none are).
            budget: the byte budget `recall` gives earlier epochs' blocks (a new one chooses them anew).
        """
        self._read(transcript, epoch)
        if system != self._system or (recall is None) != (self._recall_for is None) or budget != self._budget:
            self._reset_list(system, recall)
            self._budget = budget
        self._recall_for = recall  # the same rule with the same budget, rendering from memory as it is now
        self._extend()
        if len(self._chain) < len(self._list):
            previous = self._chain[-1] if self._chain else ""
            self._chain.extend(chain_hashes(self._list[len(self._chain) :], previous))
        closing = self._builder.closing()
        chain = self._chain + chain_hashes(closing, self._chain[-1] if self._chain else "")
        chars = self._chars + sum(message_chars(message) for message in closing)
        shown = tuple(self._shown[seq] for seq in sorted(self._shown))
        return Context(self._list + closing, chain, chars // 4, shown)

    def _read(self, transcript: Transcript, epoch: int) -> None:
        if self._mark is not None and epoch == self._epoch:
            appended = transcript.read_after(self._mark)
            if appended is not None and self._follows(appended[0]):
                events, self._mark = appended
                self.lines_read += len(events)
                for event in events:
                    self._add(event)
                return
        events, self._mark = transcript.context_at()
        self.lines_read += len(events)
        self._epoch = epoch
        self._builder = ContextBuilder()
        self._contexts = []
        self._last_seq = 0
        for event in events:
            self._add(event)
        self._reset_list(self._system, self._recall_for)

    def _follows(self, events: list[dict[str, Any]]) -> bool:
        """Whether appended events continue what was read: dense seqs, and no compaction among them."""
        seqs = [int(event["seq"]) for event in events]
        if seqs != list(range(self._last_seq + 1, self._last_seq + 1 + len(seqs))):
            return False
        return all(event.get("type") != "compact" for event in events)

    def _add(self, event: dict[str, Any]) -> None:
        self._builder.add(event)
        self._last_seq = max(self._last_seq, int(event["seq"]))
        if event.get("type") == "context":
            self._contexts.append(event)

    def _reset_list(self, system: list[ChatMessage], recall: RecallFor | None) -> None:
        """Start the built list again from the system prefix (the kept events are added by `_extend`)."""
        self._system = list(system)
        self._recall_for = recall
        self._list = list(system)
        self._chain = []
        self._chars = sum(message_chars(message) for message in system)
        self._added = 0
        self._attached = 0
        self._pinned = False
        self._shown = {}

    def _extend(self) -> None:
        messages = self._builder.messages
        for message in messages[self._added :]:
            self._list.append(message)
            self._chars += message_chars(message)
        self._added = len(messages)
        new = self._contexts[self._attached :]
        if not new or self._recall_for is None:
            self._attached = len(self._contexts)
            return
        epoch = self._epoch or 0
        if self._attached and (self._pinned or any(int(e.get("epoch") or 0) < epoch for e in new)):
            # The rule chooses earlier epochs' blocks anew: start the list again.
            self._reset_list(self._system, self._recall_for)
            self._extend()
            return
        offset, recall = len(self._system), self._recall_for(new)
        targets = {offset + self._builder.anchors[seq] for seq in recall if seq in self._builder.anchors}
        self._chars -= sum(message_chars(self._list[index]) for index in targets)
        self._builder.attach(self._list, offset, recall)
        self._shown.update({seq: text for seq, text in recall.items() if seq in self._builder.anchors})
        self._chars += sum(message_chars(self._list[index]) for index in targets)
        if targets:
            del self._chain[min(targets) :]
        self._attached = len(self._contexts)
        newest = self._contexts[-1]
        self._pinned = int(newest.get("epoch") or 0) < epoch


class LiveContexts:
    """The kept contexts, by agent; the least recently built are let go past `max_messages` in all."""

    def __init__(self, max_messages: int = MAX_MESSAGES) -> None:
        self._kept: OrderedDict[str, LiveContext] = OrderedDict()
        self._max_messages = max_messages

    def of(self, agent_id: str) -> LiveContext:
        live = self._kept.get(agent_id)
        if live is None:
            live = self._kept[agent_id] = LiveContext()
        self._kept.move_to_end(agent_id)
        total = sum(len(kept) for kept in self._kept.values())
        while total > self._max_messages and len(self._kept) > 1:
            _, dropped = self._kept.popitem(last=False)
            total -= len(dropped)
        return live

    def forget(self, agent_id: str) -> None:
        self._kept.pop(agent_id, None)
