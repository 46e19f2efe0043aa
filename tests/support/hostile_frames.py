"""Hostile frames for the wire fuzzer, each with the answer a correct host gives it.

`hostile_cases(seed, count)` is deterministic for a seed and cycles through every kind below, so even a
few hundred cases cover them all. An expectation is None (no answer at all), `(id, code)` for one answer
(code None means a result), or a list of such pairs for one batch answer (in any order).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from protocol.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR

__all__ = ["KEEPER", "KINDS", "Case", "Expect", "Pair", "hostile_cases", "long_line_cases"]

KEEPER = "keeper"
"""The agent the fuzz runs against: its one note must survive, and nothing bad may be added to it."""

Pair = tuple[Any, int | None]
Expect = Pair | list[Pair] | None


@dataclass(frozen=True, slots=True)
class Case:
    kind: str
    line: bytes
    expect: Expect


def _j(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _request(request_id: bytes, method: bytes = b'"ping"', params: bytes | None = b"{}", extra: bytes = b"") -> bytes:
    body = b'{"jsonrpc":"2.0","id":' + request_id + b',"method":' + method
    if params is not None:
        body += b',"params":' + params
    return body + extra + b"}\n"


def _notification(method: bytes = b'"ping"', params: bytes = b"{}") -> bytes:
    return b'{"jsonrpc":"2.0","method":' + method + b',"params":' + params + b"}\n"


BAD_UTF8 = [
    b"\xff",
    b"\xfe",
    b"\xc0\xaf",
    b"\xe0\x80\xaf",
    b"\xed\xa0\x80",
    b"\xed\xbf\xbf",
    b"\xf4\x90\x80\x80",
    b"\x80",
    b"\xc3",
    b"\xe2\x82",
]
LONE_SURROGATES = [b"\\ud800", b"\\udbff", b"\\udc00", b"\\udfff", b"\\ude00\\ud83d", b"\\ud83dx", b"\\uDC80"]
NON_FINITE_CONSTANTS = [b"NaN", b"Infinity", b"-Infinity"]
OVERFLOWS = [b"1e400", b"-1e400", b"1e999", b"123e307", b"1E+309", b"9" * 320 + b".5"]
NOT_IDS = [b"true", b"false", b"[1]", b"[]", b'{"a":1}', b"{}"]
ODD_IDS: list[Any] = [1.5, -7, 0, 10**30, 10**300, "", "x" * 5000, "ünï 😀", None, 1e308, -0.5]


def _id_text(rng: random.Random, n: int) -> tuple[Any, bytes]:
    """A readable id: usually a fresh string, sometimes an odd but valid one."""
    if rng.random() < 0.3:
        value = rng.choice(ODD_IDS)
        return value, _j(value)
    return f"f{n}", _j(f"f{n}")


def _with_string(rng: random.Random, inner: bytes) -> tuple[bytes, bytes]:
    """(method, params) of a request whose params carry `inner` inside a string somewhere."""
    choice = rng.randrange(4)
    if choice == 0:
        return b'"memory.note"', b'{"agentId":"' + KEEPER.encode() + b'","text":"bad ' + inner + b' text"}'
    if choice == 1:
        return b'"agent.create"', b'{"name":"' + inner + b'"}'
    if choice == 2:
        return b'"ping"', b'{"deep":[{"x":["' + inner + b'"]}]}'
    return b'"agent.create"', b'{"name":"n","settings":{"instructions":"' + inner + b'"}}'


def _utf8_invalid(rng: random.Random, n: int) -> Case:
    method, params = _with_string(rng, rng.choice(BAD_UTF8))
    return Case("utf8_invalid", _request(_j(f"f{n}"), method, params), (None, PARSE_ERROR))


def _surrogate(rng: random.Random, n: int) -> Case:
    lone = rng.choice(LONE_SURROGATES)
    where = rng.randrange(5)
    if where == 0:
        return Case("surrogate_id", _request(b'"' + lone + b'"'), (None, INVALID_REQUEST))
    if where == 1:
        return Case("surrogate_method", _request(_j(f"f{n}"), b'"ping' + lone + b'"'), (f"f{n}", METHOD_NOT_FOUND))
    if where == 2:
        return Case("surrogate_key", _request(_j(f"f{n}"), extra=b',"' + lone + b'":1'), (f"f{n}", INVALID_REQUEST))
    if where == 3:
        return Case("surrogate_notification", _notification(params=b'{"t":"' + lone + b'"}'), None)
    method, params = _with_string(rng, lone)
    return Case("surrogate_params", _request(_j(f"f{n}"), method, params), (f"f{n}", INVALID_PARAMS))


def _non_finite(rng: random.Random, n: int) -> Case:
    if rng.random() < 0.5:
        constant = rng.choice(NON_FINITE_CONSTANTS)
        line = _request(constant) if rng.random() < 0.5 else _request(_j(f"f{n}"), params=b'{"x":' + constant + b"}")
        return Case("non_finite_constant", line, (None, PARSE_ERROR))
    overflow = rng.choice(OVERFLOWS)
    if rng.random() < 0.5:
        return Case("overflow_id", _request(overflow), (None, INVALID_REQUEST))
    params = b'{"agentId":"' + KEEPER.encode() + b'","text":"t","confidence":' + overflow + b"}"
    return Case("overflow_params", _request(_j(f"f{n}"), b'"memory.note"', params), (f"f{n}", INVALID_PARAMS))


def _deep(rng: random.Random, n: int) -> Case:
    depth = rng.choice([250, 600, 1000, 3000, 50000])
    opened, closed = (b"[" * depth, b"]" * depth) if rng.random() < 0.5 else (b'{"a":' * depth, b"0" + b"}" * depth)
    where = rng.randrange(3)
    if where == 0:
        code = INVALID_PARAMS if depth < 900 else None
        line = _request(_j(f"f{n}"), params=b'{"x":' + opened + closed + b"}")
        return Case("deep_params", line, (f"f{n}", code) if code else (None, PARSE_ERROR))
    if where == 1 and depth < 900:
        # Too deep to keep, shallow enough to read: a bad lone message (object) or batch member (array).
        expect: Expect = (None, INVALID_REQUEST) if opened.startswith(b"{") else [(None, INVALID_REQUEST)]
        return Case("deep_top", opened + closed + b"\n", expect)
    return Case("deep_unreadable", b"[" * max(depth, 1000) + b"]" * max(depth, 1000) + b"\n", (None, PARSE_ERROR))


def _response_shaped(rng: random.Random, n: int) -> Case:
    ident = rng.choice([*NOT_IDS, b"null", b"7", _j(f"f{n}"), b"1.5"])
    body = rng.choice(
        [
            b'"result":{}',
            b'"result":null',
            b'"error":{"code":1,"message":"x"}',
            b'"error":{"code":"abc","message":[]}',
            b'"error":"boom"',
            b'"result":1,"error":{}',
        ]
    )
    return Case("response_shaped", b'{"jsonrpc":"2.0","id":' + ident + b"," + body + b"}\n", None)


def _bad_envelope(rng: random.Random, n: int) -> Case:
    value, ident = _id_text(rng, n)
    variants = [
        ("missing_method", b'{"jsonrpc":"2.0","id":' + ident + b"}\n"),
        (
            "bad_version",
            b'{"jsonrpc":' + rng.choice([b'"1.0"', b"2.0", b"null"]) + b',"id":' + ident + b',"method":"ping"}\n',
        ),
        ("no_version", b'{"id":' + ident + b',"method":"ping"}\n'),
        ("bad_method_type", _request(ident, rng.choice([b"5", b"null", b"[]", b"{}", b"true"]))),
        ("bad_params_type", _request(ident, params=rng.choice([b"5", b'"x"', b"true", b"null"]))),
        ("extra_member", _request(ident, extra=b',"extra":1')),
    ]
    kind, line = rng.choice(variants)
    return Case(kind, line, (value, INVALID_REQUEST))


def _odd_id(rng: random.Random, n: int) -> Case:
    if rng.random() < 0.4:
        return Case("not_an_id", _request(rng.choice(NOT_IDS)), (None, INVALID_REQUEST))
    value = rng.choice(ODD_IDS)
    return Case("odd_id", _request(_j(value)), (value, None))


def _huge_int(rng: random.Random, n: int) -> Case:
    digits = rng.choice([400, 4000, 5000])
    number = b"7" * digits
    if digits > 4300:
        return Case("huge_int_unreadable", _request(_j(f"f{n}"), params=b'{"x":' + number + b"}"), (None, PARSE_ERROR))
    if rng.random() < 0.5:
        return Case("huge_int_id", _request(number), (int(number), None))
    return Case("huge_int_params", _request(_j(f"f{n}"), params=b'{"x":' + number + b"}"), (f"f{n}", INVALID_PARAMS))


def _batch(rng: random.Random, n: int) -> Case:
    a, b = _j(f"f{n}a"), _j(f"f{n}b")
    variants: list[tuple[str, bytes, Expect]] = [
        ("batch_empty", b"[]\n", (None, INVALID_REQUEST)),
        ("batch_of_numbers", b"[1,2,3]\n", [(None, INVALID_REQUEST)] * 3),
        (
            "batch_mixed",
            b"[" + _request(a).strip() + b',{"jsonrpc":"2.0","id":' + b + b"}," + _notification().strip() + b",5]\n",
            [(f"f{n}a", None), (f"f{n}b", INVALID_REQUEST), (None, INVALID_REQUEST)],
        ),
        ("batch_nested", b"[[" + _request(a).strip() + b"]]\n", [(None, INVALID_REQUEST)]),
        ("batch_nested_empty", b"[[]]\n", [(None, INVALID_REQUEST)]),
        (
            "batch_notifications",
            b"[" + _notification().strip() + b"," + _notification(b'"no.such"').strip() + b"]\n",
            None,
        ),
        (
            "batch_with_answer",
            b'[{"jsonrpc":"2.0","id":99,"result":{}},' + _request(a).strip() + b"]\n",
            [(f"f{n}a", None)],
        ),
        (
            "batch_surrogate",
            b"[" + _request(a, params=b'{"x":"\\udc80"}').strip() + b"," + _request(b, b'"nope"').strip() + b"]\n",
            [(f"f{n}a", INVALID_PARAMS), (f"f{n}b", METHOD_NOT_FOUND)],
        ),
    ]
    kind, line, expect = rng.choice(variants)
    return Case(kind, line, expect)


def _notification_bad(rng: random.Random, n: int) -> Case:
    variants: list[tuple[str, bytes, Expect]] = [
        ("notification_bad_params", _notification(params=b'{"x":1}'), None),
        ("notification_unknown", _notification(b'"no.such.method"'), None),
        ("notification_list_params", _notification(params=b"[1,2]"), None),
        ("notification_lax_params", _notification(b'"settings.set"', b'{"maxConcurrentRuns":"7"}'), None),
        ("notification_bad_params_type", _notification(params=b'"x"'), (None, INVALID_REQUEST)),
        ("notification_bad_version", b'{"jsonrpc":"1.0","method":"ping"}\n', (None, INVALID_REQUEST)),
    ]
    kind, line, expect = rng.choice(variants)
    return Case(kind, line, expect)


def _encoding_quirks(rng: random.Random, n: int) -> Case:
    ident = _j(f"f{n}")
    variants: list[tuple[str, bytes, Expect]] = [
        (
            "duplicate_keys",
            b'{"jsonrpc":"2.0","id":"dup","id":' + ident + b',"method":"nope","method":"ping"}\n',
            (f"f{n}", None),
        ),
        ("bom", b"\xef\xbb\xbf" + _request(ident), (None, PARSE_ERROR)),
        ("crlf", _request(ident).rstrip(b"\n") + b"\r\n", (f"f{n}", None)),
        ("cr_inside", b'{"jsonrpc":"2.0",\r"id":' + ident + b',\t"method":"ping"}\n', (f"f{n}", None)),
        ("nul_raw_in_string", _request(ident, params=b'{"x":"a\x00b"}'), (None, PARSE_ERROR)),
        ("nul_raw_outside", _request(ident).rstrip(b"\n") + b"\x00\n", (None, PARSE_ERROR)),
        ("nul_escaped", _request(ident, params=b'{"x":"a\\u0000b"}'), (f"f{n}", INVALID_PARAMS)),
        ("not_an_object", rng.choice([b"5", b'"str"', b"null", b"true", b"1.5"]) + b"\n", (None, INVALID_REQUEST)),
        ("truncated", _request(ident)[: rng.randrange(1, 30)] + b"\n", (None, PARSE_ERROR)),
        ("blank", rng.choice([b"   \t  \n", b"\r\n", b"\n"]), None),
        (
            "garbage",
            b"@" + bytes(rng.randrange(32, 127) for _ in range(rng.randrange(1, 200))) + b"\n",
            (None, PARSE_ERROR),
        ),
    ]
    kind, line, expect = rng.choice(variants)
    return Case(kind, line, expect)


def _lax_types(rng: random.Random, n: int) -> Case:
    ident = _j(f"f{n}")
    keeper = KEEPER.encode()
    variants = [
        (b'"settings.set"', b'{"maxConcurrentRuns":"7"}'),
        (b'"settings.set"', b'{"maxConcurrentRuns":true}'),
        (b'"settings.set"', b'{"maxConcurrentRuns":7.0}'),
        (b'"memory.note"', b'{"agentId":"' + keeper + b'","text":"t","confidence":true}'),
        (b'"memory.note"', b'{"agentId":"' + keeper + b'","text":5}'),
        (b'"agent.transcript"', b'{"agentId":"' + keeper + b'","limit":"5"}'),
        (b'"agent.create"', b'{"name":"n","settings":{"memory":0}}'),
        (b'"agent.create"', b'{"name":"n","settings":{"model":{"temperature":"1"}}}'),
        (b'"ping"', b"[1]"),
    ]
    method, params = rng.choice(variants)
    return Case("lax_types", _request(ident, method, params), (f"f{n}", INVALID_PARAMS))


def _benign(rng: random.Random, n: int) -> Case:
    method = rng.choice([b'"ping"', b'"host.status"', b'"agent.list"', b'"settings.get"'])
    if rng.random() < 0.2:
        return Case("unknown_method", _request(_j(f"f{n}"), b'"no.such.method"'), (f"f{n}", METHOD_NOT_FOUND))
    return Case("benign", _request(_j(f"f{n}"), method, rng.choice([b"{}", None])), (f"f{n}", None))


def _long(rng: random.Random, n: int, size: int) -> Case:
    pad = b"y" * size
    return Case("long_line", _request(_j(f"f{n}"), params=b'{"pad":"' + pad + b'"}'), (f"f{n}", INVALID_PARAMS))


KINDS: list[Callable[[random.Random, int], Case]] = [
    _utf8_invalid,
    _surrogate,
    _non_finite,
    _deep,
    _response_shaped,
    _bad_envelope,
    _odd_id,
    _huge_int,
    _batch,
    _notification_bad,
    _encoding_quirks,
    _lax_types,
    _benign,
    lambda rng, n: _long(rng, n, rng.choice([64 * 1024, 512 * 1024])),
]


def hostile_cases(seed: int, count: int) -> list[Case]:
    """`count` cases, the same for the same seed, cycling through every kind."""
    rng = random.Random(seed)
    return [KINDS[n % len(KINDS)](rng, n) for n in range(count)]


def long_line_cases(limit: int) -> list[Case]:
    """Lines near the frame limit: one just under it (read and answered) and one just over (skipped whole)."""
    under = _long(random.Random(0), 0, limit - 1024)
    over = Case("over_limit", b"z" * (limit + 4096) + b"\n", (None, INVALID_REQUEST))
    undecodable = Case("long_undecodable", b'{"x":"' + b"\xff" * (limit // 2) + b'"}\n', (None, PARSE_ERROR))
    return [under, over, undecodable]
