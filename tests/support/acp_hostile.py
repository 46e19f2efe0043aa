"""Hostile frames for `hearth acp`, each with the answer a correct ACP agent gives it.

The host's fuzz (`hostile_frames`) with ACP's methods: what needs no host is answered at once (`initialize`, a
bad `cwd`, a prompt to a session never opened), so a few hundred cases run in seconds. An expectation is None (no
answer at all) or `(id, code)` (code None means a result). `hearth acp` answers no batch: any array is -32600.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from protocol.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, NOT_FOUND, PARSE_ERROR
from tests.support.hostile_frames import (
    BAD_UTF8,
    LONE_SURROGATES,
    NON_FINITE_CONSTANTS,
    NOT_IDS,
    ODD_IDS,
    OVERFLOWS,
    Case,
    Expect,
)

__all__ = ["ACP_KINDS", "INITIALIZE", "acp_cases"]

INITIALIZE = b'{"protocolVersion":1}'


def _j(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _line(ident: bytes | None, method: bytes = b'"initialize"', params: bytes | None = INITIALIZE) -> bytes:
    body = b'{"jsonrpc":"2.0"' + (b',"id":' + ident if ident is not None else b"") + b',"method":' + method
    return body + (b',"params":' + params if params is not None else b"") + b"}\n"


def _not_an_object(rng: random.Random, n: int) -> Case:
    value = rng.choice([b"5", b'"x"', b"null", b"true", b"1.5", b"-0", b"{}", b'{"jsonrpc":"2.0"}'])
    return Case("not_an_object", value + b"\n", (None, INVALID_REQUEST))


def _batch(rng: random.Random, n: int) -> Case:
    one = _line(_j(f"f{n}")).strip()
    value = rng.choice([b"[]", b"[" + one + b"]", b"[1,2,3]", b"[[]]", b"[" + one + b"," + one + b"]", b"[null]"])
    return Case("batch", value + b"\n", (None, INVALID_REQUEST))


def _strings(rng: random.Random, n: int) -> Case:
    """Bad UTF-8 (unreadable), or a lone surrogate where it can be read around (id, params, a notification)."""
    ident = _j(f"f{n}")
    where = rng.randrange(5)
    if where == 0:
        params = b'{"protocolVersion":1,"clientInfo":{"name":"' + rng.choice(BAD_UTF8) + b'","version":"1"}}'
        return Case("utf8_invalid", _line(ident, params=params), (None, PARSE_ERROR))
    lone = rng.choice(LONE_SURROGATES)
    if where == 1:
        return Case("surrogate_id", _line(b'"' + lone + b'"'), (None, INVALID_REQUEST))
    if where == 2:
        params = b'{"cwd":"/tmp/' + lone + b'","mcpServers":[]}'
        return Case("surrogate_params", _line(ident, b'"session/new"', params), (f"f{n}", INVALID_PARAMS))
    if where == 3:
        return Case("surrogate_method", _line(ident, b'"initialize' + lone + b'"'), (f"f{n}", METHOD_NOT_FOUND))
    return Case("surrogate_notification", _line(None, b'"session/cancel"', b'{"sessionId":"' + lone + b'"}'), None)


def _numbers(rng: random.Random, n: int) -> Case:
    ident = _j(f"f{n}")
    where = rng.randrange(4)
    if where == 0:
        params = b'{"protocolVersion":' + rng.choice(NON_FINITE_CONSTANTS) + b"}"
        return Case("non_finite", _line(ident, params=params), (None, PARSE_ERROR))
    if where == 1:
        return Case("overflow_id", _line(rng.choice(OVERFLOWS)), (None, INVALID_REQUEST))
    if where == 2:
        params = b'{"protocolVersion":' + rng.choice(OVERFLOWS) + b"}"
        return Case("overflow_params", _line(ident, params=params), (f"f{n}", INVALID_PARAMS))
    digits = rng.choice([400, 4000])
    return Case("huge_int_id", _line(b"7" * digits), (int(b"7" * digits), None))


def _deep(rng: random.Random, n: int) -> Case:
    depth = rng.choice([250, 600, 3000, 50000])
    nested = b"[" * depth + b"]" * depth
    if depth < 900:
        params = b'{"cwd":"/tmp","mcpServers":' + nested + b"}"
        return Case("deep_params", _line(_j(f"f{n}"), b'"session/new"', params), (f"f{n}", INVALID_PARAMS))
    return Case("deep_unreadable", nested + b"\n", (None, PARSE_ERROR))


def _envelope(rng: random.Random, n: int) -> Case:
    value: Any = rng.choice(ODD_IDS) if rng.random() < 0.3 else f"f{n}"
    ident = _j(value)
    variants = [
        ("missing_method", b'{"jsonrpc":"2.0","id":' + ident + b"}\n"),
        ("bad_version", b'{"jsonrpc":"1.0","id":' + ident + b',"method":"initialize","params":{}}\n'),
        ("no_version", b'{"id":' + ident + b',"method":"initialize","params":' + INITIALIZE + b"}\n"),
        ("bad_method_type", _line(ident, rng.choice([b"5", b"null", b"[]", b"{}", b"true"]))),
        ("bad_params_type", _line(ident, params=rng.choice([b"5", b'"x"', b"true"]))),
        ("extra_member", b'{"jsonrpc":"2.0","id":' + ident + b',"method":"initialize","params":{},"extra":1}\n'),
    ]
    kind, line = rng.choice(variants)
    return Case(kind, line, (value, INVALID_REQUEST))


def _ids(rng: random.Random, n: int) -> Case:
    if rng.random() < 0.4:
        return Case("not_an_id", _line(rng.choice(NOT_IDS)), (None, INVALID_REQUEST))
    value = rng.choice(ODD_IDS)
    return Case("odd_id", _line(_j(value)), (value, None))


def _answers(rng: random.Random, n: int) -> Case:
    """Answers to calls `hearth acp` never made: nobody waits for them, so nothing is said back."""
    ident = rng.choice([*NOT_IDS, b"null", b"0", b"7", _j(f"f{n}"), b"1.5"])
    body = rng.choice([b'"result":{}', b'"result":null', b'"error":{"code":1,"message":"x"}', b'"error":"boom"'])
    return Case("response_shaped", b'{"jsonrpc":"2.0","id":' + ident + b"," + body + b"}\n", None)


def _methods(rng: random.Random, n: int) -> Case:
    """ACP's own methods with params that cannot be used, and methods it does not have."""
    ident = _j(f"f{n}")
    variants: list[tuple[str, bytes, Expect]] = [
        ("unknown_method", _line(ident, b'"no/such"', b"{}"), (f"f{n}", METHOD_NOT_FOUND)),
        ("client_method", _line(ident, b'"session/update"', b"{}"), (f"f{n}", METHOD_NOT_FOUND)),
        ("bad_initialize", _line(ident, params=b"[1]"), (f"f{n}", INVALID_PARAMS)),
        ("null_params", _line(ident, params=b"null"), (f"f{n}", INVALID_PARAMS)),
        ("no_params", _line(ident, params=None), (f"f{n}", INVALID_PARAMS)),
        ("bad_cwd_type", _line(ident, b'"session/new"', b'{"cwd":5,"mcpServers":[]}'), (f"f{n}", INVALID_PARAMS)),
        ("relative_cwd", _line(ident, b'"session/new"', b'{"cwd":"x","mcpServers":[]}'), (f"f{n}", INVALID_PARAMS)),
        ("system_cwd", _line(ident, b'"session/new"', b'{"cwd":"/proc","mcpServers":[]}'), (f"f{n}", INVALID_PARAMS)),
        (
            "nul_cwd",
            _line(ident, b'"session/new"', b'{"cwd":"/tmp\\u0000","mcpServers":[]}'),
            (f"f{n}", INVALID_PARAMS),
        ),
        (
            "prompt_no_session",
            _line(ident, b'"session/prompt"', b'{"sessionId":"x","prompt":[]}'),
            (f"f{n}", NOT_FOUND),
        ),
        (
            "prompt_bad_blocks",
            _line(ident, b'"session/prompt"', b'{"sessionId":"x","prompt":[5]}'),
            (f"f{n}", INVALID_PARAMS),
        ),
        ("cancel_unknown", _line(None, b'"session/cancel"', b'{"sessionId":"nobody"}'), None),
        ("notification_bad", _line(None, b'"session/cancel"', b"[1,2]"), None),
        ("notification_unknown", _line(None, b'"no/such"', b"{}"), None),
        ("notification_bad_type", _line(None, b'"session/cancel"', b'"x"'), (None, INVALID_REQUEST)),
    ]
    kind, line, expect = rng.choice(variants)
    return Case(kind, line, expect)


def _encoding(rng: random.Random, n: int) -> Case:
    ident = _j(f"f{n}")
    variants: list[tuple[str, bytes, Expect]] = [
        ("bom", b"\xef\xbb\xbf" + _line(ident), (None, PARSE_ERROR)),
        ("crlf", _line(ident).rstrip(b"\n") + b"\r\n", (f"f{n}", None)),
        ("nul_raw", _line(ident).rstrip(b"\n") + b"\x00\n", (None, PARSE_ERROR)),
        ("truncated", _line(ident)[: rng.randrange(1, 30)] + b"\n", (None, PARSE_ERROR)),
        ("blank", rng.choice([b"   \t  \n", b"\r\n", b"\n"]), None),
        (
            "garbage",
            b"@" + bytes(rng.randrange(32, 127) for _ in range(rng.randrange(1, 200))) + b"\n",
            (None, PARSE_ERROR),
        ),
        (
            "long_line",
            _line(ident, b'"no/such"', b'{"pad":"' + b"y" * rng.choice([65536, 524288]) + b'"}'),
            (f"f{n}", METHOD_NOT_FOUND),
        ),
    ]
    kind, line, expect = rng.choice(variants)
    return Case(kind, line, expect)


ACP_KINDS: list[Callable[[random.Random, int], Case]] = [
    _not_an_object,
    _batch,
    _strings,
    _numbers,
    _deep,
    _envelope,
    _ids,
    _answers,
    _methods,
    _encoding,
]


def acp_cases(seed: int, count: int) -> list[Case]:
    """`count` cases, the same for the same seed, cycling through every kind."""
    rng = random.Random(seed)
    return [ACP_KINDS[n % len(ACP_KINDS)](rng, n) for n in range(count)]
