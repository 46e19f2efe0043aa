"""Memory records: the ledger's unit, its canonical JSON, its hash and its salted commitments.

A record is one immutable event. Its *chained* form leaves out the content fields (text, reason, sig) and
their salt: the hash covers `commit`, a map of sha256(salt + value) per content field, plus `prev`. So an
erase can drop the content and the salt while every hash, and so the chain, still verifies.
Timestamps are UTC instants in one fixed-width form, so comparing the strings compares the times.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import unicodedata
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import Any

from protocol.ids import RECORD_ID_PATTERN

__all__ = [
    "OPS",
    "TIERS",
    "TRUSTS",
    "DECISIONS",
    "CONTENT_FIELDS",
    "GENESIS",
    "RECORD_FIELDS",
    "RECORD_KEYS",
    "Evidence",
    "Record",
    "new_record_id",
    "is_record_id",
    "content_signature",
    "normalise_text",
    "to_instant",
    "format_instant",
    "canonical_json",
    "seal",
    "chain_hash",
    "commitment",
]

OPS = ("assert", "correct", "retract", "review", "erase", "suppress", "expire")
TIERS = ("profile", "note", "log")
TRUSTS = ("confirmed", "proposed", "rejected")
DECISIONS = ("confirm", "reject", "edit")
CONTENT_FIELDS = ("text", "reason", "sig")
GENESIS = "0" * 64

_ID_RE = re.compile(RECORD_ID_PATTERN)


@dataclass(frozen=True, slots=True)
class Evidence:
    """Who writes and where the content came from.

    `source` is the actor (`user`, `agent`, `extractor`, `peer:<id>`, `tool:<name>`, `human`); `basis` is
    where the content itself came from when that differs (`user`, `agent`, `tool:<name>`, `peer:<id>`,
    `file`); `seq` and `tool_call_id` point into the transcript.
    """

    source: str
    seq: int | None = None
    tool_call_id: str | None = None
    basis: str | None = None


@dataclass(frozen=True, slots=True)
class Record:
    """One ledger line. Content fields are None once erased; `commit` still names what they were."""

    seq: int
    id: str
    op: str
    source: str
    observed_at: str
    prev: str = GENESIS
    hash: str = ""
    trust: str | None = None
    key: str | None = None
    tier: str | None = None
    scope: str = "private"
    evidence_seq: int | None = None
    tool_call_id: str | None = None
    basis: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    replaces: str | None = None
    target: str | None = None
    targets: tuple[str, ...] = ()
    scrubbed: tuple[str, ...] = ()
    decision: str | None = None
    conflicts_with: tuple[str, ...] = ()
    confidence: float | None = None
    reassert: bool = False
    commit: tuple[tuple[str, str], ...] = ()
    text: str | None = None
    reason: str | None = None
    sig: str | None = None
    salt: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_fact(self) -> bool:
        """Whether this record states a fact (and so carries text and a signature)."""
        return self.op in ("assert", "correct") or (self.op == "review" and self.decision == "edit")

    def content(self) -> dict[str, str]:
        """The content fields that are present."""
        values = {"text": self.text, "reason": self.reason, "sig": self.sig}
        return {name: value for name, value in values.items() if value is not None}

    def without_content(self) -> Record:
        """The same record with its content and salt physically gone (what erase leaves)."""
        return replace(self, text=None, reason=None, sig=None, salt=None)

    def to_json(self) -> dict[str, Any]:
        """The ledger line as a JSON object (camelCase, empty fields left out)."""
        out = self.chained()
        out["hash"] = self.hash
        for name, value in self.content().items():
            out[name] = value
        if self.salt is not None:
            out["salt"] = self.salt
        return out

    def chained(self) -> dict[str, Any]:
        """The fields the hash covers: everything but the content, the salt and the hash itself."""
        evidence = {"seq": self.evidence_seq, "toolCallId": self.tool_call_id, "basis": self.basis}
        out: dict[str, Any] = {**self.extra, "evidence": {k: v for k, v in evidence.items() if v is not None} or None}
        for name in _CHAINED:
            value = getattr(self, name)
            if name == "commit":
                value = dict(value) or None
            elif isinstance(value, tuple):
                value = list(value) or None
            elif value is False:
                value = None
            out[_camel(name)] = value
        return {k: v for k, v in out.items() if v is not None}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Record:
        """Parse a ledger line.

        Raises:
            ValueError: a required field is missing or has the wrong type.
        """
        try:
            evidence = obj.get("evidence") or {}
            seq, rid, op = obj["seq"], obj["id"], obj["op"]
            if not isinstance(seq, int) or not isinstance(rid, str) or op not in OPS:
                raise ValueError("bad seq, id or op")
            values: dict[str, Any] = {name: str(obj[_camel(name)]) for name in _REQUIRED_TEXT}
            for name, default in _OPTIONAL.items():
                value = obj.get(_camel(name))
                if name == "commit":
                    value = tuple(sorted((value or {}).items()))
                elif isinstance(default, tuple):
                    value = tuple(value or ())
                elif isinstance(default, bool):
                    value = bool(value)
                elif value is None:
                    value = default
                values[name] = value
            return cls(
                seq=seq,
                id=rid,
                op=op,
                evidence_seq=evidence.get("seq"),
                tool_call_id=evidence.get("toolCallId"),
                basis=evidence.get("basis"),
                extra={k: v for k, v in obj.items() if k not in RECORD_KEYS},
                **values,
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed record: {exc}") from exc


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# Field lists derived from the dataclass, so a new field is stored, parsed and hashed without a second copy.
_EVIDENCE_FIELDS = ("evidence_seq", "tool_call_id", "basis")
_CHAINED = tuple(
    f.name for f in fields(Record) if f.name not in {"hash", "salt", "extra", *CONTENT_FIELDS, *_EVIDENCE_FIELDS}
)
_REQUIRED_TEXT = ("source", "observed_at", "prev", "hash")
_OPTIONAL = {
    f.name: f.default
    for f in fields(Record)
    if f.name not in {"seq", "id", "op", "extra", *_REQUIRED_TEXT, *_EVIDENCE_FIELDS}
}
RECORD_FIELDS = tuple(f.name for f in fields(Record))
"""Every field of a record, in declaration order."""
RECORD_KEYS = frozenset(
    {_camel(f.name) for f in fields(Record) if f.name not in {"extra", *_EVIDENCE_FIELDS}} | {"evidence"}
)
"""The keys of a ledger line that map to record fields; any other key is kept in `extra`."""


def new_record_id() -> str:
    """A short random id the model can quote back: `m-` and 12 hex digits."""
    return "m-" + secrets.token_hex(6)


def is_record_id(value: str) -> bool:
    """Whether `value` has the shape of a record id."""
    return _ID_RE.match(value) is not None


def normalise_text(text: str) -> str:
    """The form two statements of the same fact share: NFKC, case-folded, apostrophes dropped, other
    punctuation and spacing collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("'", "").replace("\u2019", "")
    kept = "".join(ch if ch.isalnum() else " " for ch in folded)
    return " ".join(kept.split())


def content_signature(text: str) -> str:
    """The signature a tombstone keeps: the same fact in other words of case or punctuation matches."""
    return hashlib.sha256(("sig1:" + normalise_text(text)).encode("utf-8")).hexdigest()


def format_instant(moment: datetime) -> str:
    """A UTC instant in the one fixed-width form the ledger uses."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def to_instant(value: str) -> str:
    """Normalise an ISO 8601 date or date-time to the ledger's instant form (naive times are UTC).

    Raises:
        ValueError: `value` is not an ISO 8601 date or date-time.
    """
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    return format_instant(datetime.fromisoformat(text))


def canonical_json(value: Any) -> str:
    """Sorted keys, compact separators, UTF-8 kept: the one form that is hashed."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def commitment(salt: str, value: str) -> str:
    """sha256(salt + value): binds the chain to a content field without revealing it."""
    return hashlib.sha256((salt + value).encode("utf-8")).hexdigest()


def chain_hash(record: Record) -> str:
    """The hash of a record's chained form (which includes `prev`)."""
    return hashlib.sha256(canonical_json(record.chained()).encode("utf-8")).hexdigest()


def seal(draft: Record, *, seq: int, prev: str) -> Record:
    """Give a draft its place in the chain: seq, prev, a fresh salt, commitments and hash."""
    content = draft.content()
    salt = secrets.token_hex(16) if content else None
    commit = tuple(sorted((name, commitment(salt or "", value)) for name, value in content.items()))
    placed = replace(draft, seq=seq, prev=prev, salt=salt, commit=commit, hash="")
    return replace(placed, hash=chain_hash(placed))
