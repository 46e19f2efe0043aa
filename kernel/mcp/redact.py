"""A server's secrets withheld from what it says: each value as itself and in the encodings a leak takes.

Every form is replaced by `[secret VAR withheld]`, longest first, so a value that contains another is withheld
whole. The forms of a value (UTF-8): itself; base64 in both alphabets, padded or not, and, for each of the three
byte alignments, the characters that depend on the value alone, so it is found inside a longer blob (a
`user:token` pair, a JSON document encoded whole); hex, lower and upper case; percent-encoding (`/` escaped or
kept, `+` for a space, upper or lower case escapes); and a JSON string's escapes (ASCII-only or not, `/` as
`\\/` or not). A value shorter than `MIN_ENCODED_CHARS` is withheld only as itself: its encodings would be
at most nine base64 characters at an offset or fourteen hex digits, short enough to occur by chance in ids,
hashes and blobs a server returns, so replacing them would garble honest output for a secret that short.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Callable
from urllib.parse import quote, quote_plus

__all__ = ["MIN_ENCODED_CHARS", "redact", "secret_forms"]

MIN_ENCODED_CHARS = 8
"""A secret this long or longer is withheld in its encodings too; a shorter one only as itself."""

_ESCAPE = re.compile(r"%[0-9A-F]{2}")


def _aligned(raw: bytes, encode: Callable[[bytes], bytes]) -> list[str]:
    """The base64 characters fixed by `raw` alone when it starts 0, 1 or 2 bytes into a longer input."""
    cores = []
    for offset in range(3):
        text = encode(bytes(offset) + raw).decode("ascii")
        # Character j carries bits 6j..6j+5; keep those that lie wholly within the value's bits.
        cores.append(text[-(-offset * 8 // 6) : (offset + len(raw)) * 8 // 6])
    return cores


def secret_forms(value: str) -> tuple[str, ...]:
    """Every form of `value` that is withheld (see the module docstring), without repeats."""
    if not value:
        return ()
    forms = [value]
    if len(value) >= MIN_ENCODED_CHARS:
        raw = value.encode("utf-8")
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            whole = encode(raw).decode("ascii")
            forms += [whole, whole.rstrip("="), *_aligned(raw, encode)]
        forms += [raw.hex(), raw.hex().upper()]
        escaped = [quote(raw, safe=""), quote(raw), quote_plus(raw), quote_plus(raw, safe="/")]
        forms += [*escaped, *(_ESCAPE.sub(lambda m: m[0].lower(), form) for form in escaped)]
        for ascii_only in (True, False):
            body = json.dumps(value, ensure_ascii=ascii_only)[1:-1]
            forms += [body, body.replace("/", "\\/")]
    return tuple(dict.fromkeys(form for form in forms if form))


@functools.lru_cache(maxsize=64)
def _pattern(secrets: tuple[tuple[str, str], ...]) -> tuple[re.Pattern[str], dict[str, str]] | None:
    marker: dict[str, str] = {}
    for var, value in secrets:
        for form in secret_forms(value):
            marker.setdefault(form, f"[secret {var} withheld]")
    if not marker:
        return None
    alternatives = sorted(marker, key=lambda form: (-len(form), form))
    return re.compile("|".join(re.escape(form) for form in alternatives)), marker


def redact(text: str, secrets: tuple[tuple[str, str], ...]) -> str:
    """`text` with every form of every secret value replaced by a marker naming its variable.

    Args:
        text: what the server said (a result, an error, its stderr).
        secrets: (variable, value) pairs the server was given.
    """
    found = _pattern(secrets)
    if found is None:
        return text
    pattern, marker = found
    return pattern.sub(lambda match: marker[match[0]], text)
