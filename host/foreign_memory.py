"""A ledger from an archive this installation did not sign, made into proposals that wait for a person.

A valid chain proves only that nobody changed it after it was sealed, and anyone can seal one, so none of its
records is carried: the facts that stand in it become new `assert` records (trust `proposed`, source
`tool:archive`, basis `file`), held to the checks of every memory write. Its reviews, retractions, tombstones
and erases, whatever source they claim, are not carried: nothing is confirmed or suppressed by the forger.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from host.memory.errors import MemoryStoreError
from host.memory.fold import Fact, replay
from host.memory.records import Record, content_signature, is_record_id, new_record_id
from host.memory.values import NoteItem, check_item

__all__ = ["ARCHIVE_SOURCE", "Proposals", "propose_facts"]

ARCHIVE_SOURCE = "tool:archive"
"""The source of every record made from an archive this installation did not sign."""


@dataclass(frozen=True, slots=True)
class Proposals:
    """Unsealed drafts of the proposals, and how many standing facts were not carried (and why not)."""

    drafts: tuple[Record, ...]
    left_out: int
    problems: tuple[str, ...]


def propose_facts(records: Sequence[Record], reason: str, now: str) -> Proposals:
    """One proposed `assert` draft per fact that stands in `records` (a chain already verified). Pure.

    Args:
        records: the archive's ledger, in order.
        reason: why the archive is not trusted, kept in each proposal's reason.
        now: the ledger instant the proposals are recorded at.
    """
    drafts: list[Record] = []
    problems: list[str] = []
    seen: set[tuple[str, str | None]] = set()
    for fact in sorted(replay(records).facts.values(), key=lambda f: f.seq):
        if fact.op == "retract" or fact.status != "live" or fact.text is None or fact.trust == "rejected":
            continue  # a request to forget, or a fact that no longer stands there
        try:
            item = check_item(
                NoteItem(fact.text, fact.key, fact.tier, fact.valid_from, fact.valid_until, _confidence(fact))
            )
        except MemoryStoreError as exc:
            problems.append(f"record {fact.seq}: {exc.message}")
            continue
        sig = content_signature(item.text)
        if (sig, item.key) in seen:
            continue
        seen.add((sig, item.key))
        known = is_record_id(fact.id)
        drafts.append(
            Record(
                seq=0,
                id=fact.id if known else new_record_id(),
                op="assert",
                source=ARCHIVE_SOURCE,
                observed_at=now,
                trust="proposed",
                key=item.key,
                tier=item.tier,
                evidence_seq=fact.evidence_seq if type(fact.evidence_seq) is int else None,
                basis="file",
                valid_from=item.valid_from,
                valid_until=item.valid_until,
                confidence=item.confidence,
                text=item.text,
                sig=sig,
                reason=f"from an archive this installation did not sign ({reason})"
                + (f"; record {fact.id} there" if known else ""),
            )
        )
    return Proposals(tuple(drafts), len(problems), tuple(problems))


def _confidence(fact: Fact) -> float | None:
    value = fact.confidence
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        return None
    return float(value)
