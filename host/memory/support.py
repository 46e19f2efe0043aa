"""Whether a fact rests on given words: the host's own check, never the model's say-so.

A fact is supported by some text when every content word of the fact (after case folding, NFKC and a light
stemming) occurs in that text; words that only frame a fact about the user ("the user", "is", "lives",
"prefers", "called") do not count, digits always do, and a negation in the fact must be in the text too. A
content word that the text only has right after a negation ("I don't live in Lisbon") does not support a
fact without one. Han, kana and Hangul count character by character. Strict on purpose: a paraphrase with
new words is not supported, which costs a person's review, never a false confirmation.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

__all__ = ["NEGATION", "content_words", "supported_by", "asks_to_forget"]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_NEGATION_WINDOW = 3
NEGATION = "~not"
"""What every negation word stems to; no stem of an ordinary word can equal it ("note" stems to "not")."""

_NEGATIONS = frozenset(
    "not no never none nobody nothing neither nor without dont doesnt didnt isnt arent wasnt werent cant cannot "
    "wont wouldnt shouldnt hasnt havent hadnt aint nicht kein keine pas jamais 不 没 沒 別 别 ない 안 못".split()
)

_FRAME = frozenset(
    (
        "a an the of to in on at for with by from and or as is are was were be been being am has have had do does "
        "did will would shall should can could may might must it its this that these those there here also very "
        "really just then than so such too some any all about into onto over "
        "user users person they them their theirs themselves he him his she her hers i me my mine myself we us "
        "our ours you your yours im ive id "
        "name named names called call calls known goes "
        "live lives lived living reside resides resided based located "
        "like likes liked prefer prefers preferred love loves loved enjoy enjoys enjoyed favourite favorite "
        "work works worked working job own owns owned currently now usually often "
        "fact facts note noted remember remembered said says told mentioned stated "
        "用 户 的 是 在 了 他 她 我 你 叫 住 有 私 は が を の に です ます 사 용 자 는 은 이 가 를 을 의 에"
    ).split()
)

_FORGET = (
    "forget",
    "forgot",
    "remove",
    "delete",
    "erase",
    "drop",
    "retract",
    "no longer",
    "not anymore",
    "anymore",
    "not true",
    "isnt true",
    "untrue",
    "wrong",
    "incorrect",
    "not correct",
    "outdated",
    "obsolete",
    "stop remembering",
    "dont remember",
    "moved away",
    "vergiss",
    "oublie",
    "olvida",
    "忘",
    "删除",
    "削除",
    "잊",
    "삭제",
)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace("'", "").replace("\u2019", "")


def _stem(word: str) -> str:
    if word in _NEGATIONS:
        return NEGATION
    if len(word) <= 3 or not word.isalpha() or not word.isascii():
        return word
    for suffix, replacement in (("sses", "ss"), ("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: len(word) - len(suffix)] + replacement
            break
    else:
        if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) >= 4:
            word = word[:-1]
    return word[:-1] if word.endswith("e") and len(word) >= 4 else word


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(_fold(text))


def content_words(text: str) -> set[str]:
    """The stemmed words of `text` that carry its content (every negation becomes `NEGATION`)."""
    return {_stem(token) for token in _tokens(text) if token not in _FRAME}


def _after_negation(tokens: list[str]) -> set[str]:
    """Stems that occur only within a few words after a negation."""
    negated: set[str] = set()
    plain: set[str] = set()
    since = _NEGATION_WINDOW + 1
    for token in tokens:
        stem = _stem(token)
        if stem == NEGATION:
            since = 0
            continue
        since += 1
        (negated if since <= _NEGATION_WINDOW else plain).add(stem)
    return negated - plain


def supported_by(text: str, sources: Iterable[str]) -> bool:
    """Whether every content word of the fact `text` occurs in `sources` (see the module docstring).

    Args:
        text: the fact as it would be stored.
        sources: the words it should rest on (the user's own message).

    Returns:
        True only when the fact has content words and all of them are found; a fact with none is not supported.
    """
    needed = content_words(text)
    if not needed:
        return False
    tokens = [token for source in sources for token in _tokens(source)]
    have = {_stem(token) for token in tokens} | set(tokens)
    if not needed <= have:
        return False
    return NEGATION in needed or not needed & _after_negation(tokens)


def asks_to_forget(fact_text: str | None, record_id: str, sources: Iterable[str]) -> bool:
    """Whether `sources` ask to forget this fact: a word of forgetting, and the fact named by id or by a content word.

    Args:
        fact_text: the fact's text (None when erased).
        record_id: its id, which the user may quote.
        sources: the user's own message.
    """
    words = " ".join(_fold(source) for source in sources)
    if not any(marker in words for marker in _FORGET):
        return False
    if record_id.casefold() in words:
        return True
    named = content_words(fact_text or "") - {NEGATION}
    return bool(named & {_stem(token) for token in _TOKEN.findall(words)})
