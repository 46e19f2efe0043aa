"""A run's receipt: which memory its request carried, written to the transcript beside the run's other lines.

Built from the request as sent (the frozen system prompt's memory segment and the recall blocks attached to the
built messages), so it lists exactly the fact ids the model received, and nothing the request did not carry.
The transcript is its durable home: one writer (the host's transcript), read back by run id.
"""

from __future__ import annotations

import hashlib

from host.memory.section import block_fact_ids, block_summary_ids
from host.prompt.cache import AssembledPrompt
from host.runs.live_context import Context
from protocol.models.transcript import ReceiptEvent

__all__ = ["build_receipt", "prefix_hash"]


def prefix_hash(system: str) -> str:
    """The frozen prefix's hash as a receipt records it: `sha256:` and the hex digest of its UTF-8 bytes."""
    return "sha256:" + hashlib.sha256(system.encode("utf-8")).hexdigest()


def build_receipt(run_id: str, prompt: AssembledPrompt, built: Context) -> ReceiptEvent:
    """The receipt of run `run_id`, whose request is `built` from `prompt`."""
    memory = [segment.text for segment in prompt.segments if segment.name == "memory"]
    section = [fact for text in memory for fact in block_fact_ids(text)]
    summaries = [summary for text in memory for summary in block_summary_ids(text)]
    recall = [fact for text in built.recall for fact in block_fact_ids(text)]
    return ReceiptEvent(
        run_id=run_id,
        epoch=prompt.epoch,
        prefix_hash=prefix_hash(prompt.system),
        section=list(dict.fromkeys(section)),
        recall=list(dict.fromkeys(recall)),
        summaries=list(dict.fromkeys(summaries)),
    )
