"""Background extraction, the planning part: whether a turn is worth it, the instruction, the parse, the apply.

The host asks the kernel for one tool-less `summarize` call with `extraction_prompt` after a completed turn
that passes `worth_extracting`, then hands the reply to `parse_extraction` and `apply_extraction`. Each
operation names the transcript line it rests on; when the exchange is given, the source of that line (not
the model's label) decides trust, so a fact read from a tool result or a peer is only proposed, and a fact
that cites the user's line is confirmed only when that line supports it (`host.memory.support`): citing the
user for what only a tool said gives a proposal. A correction is never more trusted than the fact it
corrects. Retractions rest on a user line that asks for them. The store's lock serialises this with writes.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from host.memory.errors import MemoryStoreError
from host.memory.fold import Fact
from host.memory.records import Evidence, normalise_text
from host.memory.section import fact_line
from host.memory.store import MemoryStore
from host.memory.support import asks_to_forget, supported_by
from host.memory.values import WriteOutcome

__all__ = [
    "ExchangeItem",
    "ExtractionOp",
    "worth_extracting",
    "extraction_prompt",
    "parse_extraction",
    "apply_extraction",
]

logger = logging.getLogger(__name__)

_ITEM_CHARS = 2000
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_LATIN_WORD = re.compile(r"[^\W\d_\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+|\d+")
_SMALL_TALK_WORDS = frozenset(
    "hi hello hey hiya yo thanks thank you thx ty ok okay k kk yes yeah yep yup no nope nah sure cool nice great "
    "awesome lol lmao haha hahaha hehe bye goodbye cya night morning good see later welcome np got it sounds fine "
    "alright right wow oh ah hmm um so much very a the".split()
)
_SMALL_TALK_CJK = tuple(
    (
        "你好 您好 谢谢 謝謝 好的 嗯嗯 嗯 哈哈 再见 再見 晚安 早上好 早安 没事 不客气 "
        "可以 是的 好吧 行 对 好 啊 呢 吧 呀 "
        "こんにちは こんばんは ありがとうございます ありがとう おはよう おやすみ さようなら 了解 はい うん "
        "안녕하세요 안녕 감사합니다 고마워 네 응 ㅋ ㅎ"
    ).split()
)
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|im|i've|i'd|my|me|mine|we|our|us)\b|我|私|僕|俺|わたし|제가|저는|나는|내가|우리"
)


def _content_units(text: str) -> float:
    """Content words: Latin words that are not small talk, plus Han/kana/Hangul characters at two per word."""
    folded = text.casefold()
    for phrase in _SMALL_TALK_CJK:
        folded = folded.replace(phrase, " ")
    words = [w for w in _LATIN_WORD.findall(folded) if w not in _SMALL_TALK_WORDS]
    return len(words) + len(_CJK.findall(folded)) / 2


def worth_extracting(user_text: str, assistant_text: str) -> bool:
    """Whether a completed exchange may hold something to remember (a cheap, CJK-aware small-talk gate).

    Args:
        user_text: the user's message of the turn.
        assistant_text: the assistant's reply.

    Returns:
        False for greetings, thanks and acknowledgements in any script; True when the user said something
        with content (or something short in the first person, such as "I'm Sam" or "我住在柏林").
    """
    if not normalise_text(user_text):
        return False
    units = _content_units(user_text)
    if units == 0:
        return False
    if units >= 3 or (_FIRST_PERSON.search(user_text.casefold()) and units >= 1):
        return True
    return _content_units(assistant_text) >= 8 and units >= 1


@dataclass(frozen=True, slots=True)
class ExchangeItem:
    """One transcript line the extractor sees: `role` is user, assistant, tool or peer; `name` the tool or peer."""

    seq: int
    role: str
    text: str
    name: str | None = None

    @property
    def source(self) -> str:
        if self.role in ("tool", "peer"):
            return f"{self.role}:{self.name or 'unknown'}"
        return self.role


@dataclass(frozen=True, slots=True)
class ExtractionOp:
    """One planned memory operation: assert (text), correct (record_id, text) or retract (record_id)."""

    op: str
    seq: int | None
    source: str | None
    text: str | None = None
    key: str | None = None
    tier: str = "note"
    record_id: str | None = None
    reason: str | None = None
    valid_from: str | None = None


_INSTRUCTION = """You keep the long-term memory of an assistant. Read the exchange and the current facts, then \
reply with JSON only, in this form: {"operations": [...]}.
Each operation is one of:
  {"op": "assert", "text": "<one fact as a full sentence>", "key": "<optional slot, e.g. user.home_city>", \
"tier": "profile|note|log", "validFrom": "<optional ISO date>", "seq": <seq of the line>, "source": "<its source>"}
  {"op": "correct", "id": "<fact id>", "text": "<the corrected fact>", "validFrom": "<optional: when it changed>", \
"seq": <seq>, "source": "<source>"}
  {"op": "retract", "id": "<fact id>", "reason": "<why>", "seq": <seq>, "source": "<source>"}
Rules:
- Keep only durable facts worth knowing in a later conversation: about the user (who they are, what they like, \
their plans, people and commitments) and their work. Skip small talk, questions and the assistant's own suggestions.
- Never record passwords, keys, tokens, card numbers or other secrets.
- Do not repeat a current fact. If one changed, correct it by id; retract one by id only when the user said it no \
longer holds or asked to forget it.
- "seq" and "source" name the line the fact comes from, exactly as shown in its brackets.
- If nothing is worth keeping, reply {"operations": []}."""


def extraction_prompt(exchange: Sequence[ExchangeItem], current_facts: Sequence[Fact]) -> str:
    """The instruction for one tool-less `summarize` call over a completed exchange.

    Args:
        exchange: the turn's transcript lines (user message, assistant reply, tool results, peer messages).
        current_facts: the facts standing now, with their ids (so the model can correct or retract).
    """
    facts = [f"- {fact_line(fact)}" for fact in current_facts] or ["(none)"]
    lines = []
    for item in exchange:
        text = item.text if len(item.text) <= _ITEM_CHARS else item.text[:_ITEM_CHARS] + " […]"
        lines.append(f"[seq {item.seq} · {item.source}] {text}")
    return "\n\n".join([_INSTRUCTION, "Current facts:\n" + "\n".join(facts), "Exchange:\n" + "\n".join(lines)])


def _json_value(text: str) -> object:
    body = re.sub(r"```(?:json)?", "", text)
    starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
    if not starts:
        raise ValueError("no JSON in the reply")
    value, _ = json.JSONDecoder().raw_decode(body[min(starts) :])
    return value


def _opt_str(raw: dict[str, object], name: str) -> str | None:
    value = raw.get(name)
    return value.strip() or None if isinstance(value, str) else None


def _parse_op(raw: object) -> ExtractionOp | None:
    if not isinstance(raw, dict):
        return None
    op = raw.get("op")
    seq = raw.get("seq")
    seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else None
    text, record_id = _opt_str(raw, "text"), _opt_str(raw, "id")
    if op == "assert" and text or op == "correct" and text and record_id or op == "retract" and record_id:
        tier = _opt_str(raw, "tier") or "note"
        return ExtractionOp(
            op=str(op),
            seq=seq,
            source=_opt_str(raw, "source"),
            text=text,
            key=_opt_str(raw, "key"),
            tier=tier if tier in ("profile", "note", "log") else "note",
            record_id=record_id,
            reason=_opt_str(raw, "reason"),
            valid_from=_opt_str(raw, "validFrom"),
        )
    return None


def parse_extraction(text: str) -> list[ExtractionOp]:
    """The operations in a `summarize` reply; tolerant of code fences and prose around the JSON.

    Returns:
        The well-formed operations; malformed ones are dropped, and an unreadable reply gives [] (both logged).
    """
    try:
        value = _json_value(text)
    except ValueError as exc:
        logger.warning("memory extraction: the reply was not JSON (%s); nothing extracted", exc)
        return []
    raw_ops = value.get("operations") if isinstance(value, dict) else value
    if not isinstance(raw_ops, list):
        logger.warning("memory extraction: the reply had no operations list; nothing extracted")
        return []
    ops = [parsed for raw in raw_ops if (parsed := _parse_op(raw)) is not None]
    if len(ops) != len(raw_ops):
        logger.warning("memory extraction: dropped %d malformed operation(s)", len(raw_ops) - len(ops))
    return ops


def _basis(op: ExtractionOp, lines: dict[int, ExchangeItem] | None) -> str:
    if lines is not None:
        item = lines.get(op.seq) if op.seq is not None else None
        if item is None:
            return "unknown"
        if item.role == "user" and op.text is not None and not supported_by(op.text, [item.text]):
            # The cited line does not say it: the fact rests on whichever other line does, or on the model.
            other = next((i for i in lines.values() if i.role != "user" and supported_by(op.text, [i.text])), None)
            return "agent" if other is None or other.role == "assistant" else other.source
        return "agent" if item.role == "assistant" else item.source
    label = op.source or "unknown"
    return "agent" if label == "assistant" else label


def _retraction_asked(op: ExtractionOp, store: MemoryStore, lines: dict[int, ExchangeItem] | None) -> bool:
    """A retraction stands on a cited user line that asks for it (or, for a proposed fact, that is the user's)."""
    item = lines.get(op.seq) if lines is not None and op.seq is not None else None
    if lines is not None and (item is None or item.role != "user"):
        return False
    fact = store.fact(op.record_id or "")
    if fact.trust != "confirmed" or item is None:
        return True
    return asks_to_forget(fact.text, fact.id, [item.text])


async def apply_extraction(
    store: MemoryStore, ops: Sequence[ExtractionOp], evidence: Evidence, *, exchange: Sequence[ExchangeItem] = ()
) -> list[WriteOutcome]:
    """Apply parsed operations as the extractor (each op's failure is logged and skipped).

    Args:
        store: the agent's memory.
        ops: from `parse_extraction`.
        evidence: the extractor's evidence (source `extractor`; its seq is the fallback pointer).
        exchange: the lines the extractor saw; when given, each op's source is taken from its line.

    Returns:
        What each applied operation did.
    """
    lines = {item.seq: item for item in exchange} if exchange else None
    outcomes: list[WriteOutcome] = []
    for op in ops:
        basis = _basis(op, lines)
        where = Evidence(evidence.source, op.seq if op.seq is not None else evidence.seq, evidence.tool_call_id, basis)
        try:
            if op.op == "assert" and op.text:
                outcomes.append(
                    await store.note(op.text, evidence=where, key=op.key, tier=op.tier, valid_from=op.valid_from)
                )
            elif op.op == "correct" and op.text and op.record_id:
                outcomes.append(await store.correct(op.record_id, op.text, evidence=where, valid_from=op.valid_from))
            elif op.op == "retract" and op.record_id and basis == "user" and _retraction_asked(op, store, lines):
                outcomes.append(await store.retract(op.record_id, evidence=where, reason=op.reason))
            elif op.op == "retract":
                logger.info("memory extraction: ignored a retraction the user's cited words do not ask for")
        except MemoryStoreError as exc:
            logger.warning("memory extraction: %s %s skipped: %s", op.op, op.record_id or "", exc.message)
    return outcomes
