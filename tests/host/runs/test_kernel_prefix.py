"""What the kernel holds of each session: a request goes as what follows it, and again whole when it is not held."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from pydantic import BaseModel

from host.runs.kernel_prefix import PrefixLink, SentPrefixes, shared_count
from protocol.errors import PROVIDER_ERROR, UNKNOWN_PREFIX, JsonRpcError
from protocol.models.host import KernelState
from protocol.models.kernel import (
    ChatMessage,
    ModelSpec,
    SummarizeParams,
    SummarizeResult,
    TurnStartParams,
    TurnStartResult,
    chain_hashes,
)

SPEC = ModelSpec(provider="scripted")


class FakeKernel:
    """Refuses the first request that names a prefix with `code`; records every request."""

    def __init__(self, code: int = UNKNOWN_PREFIX) -> None:
        self.sent: list[BaseModel] = []
        self._code: int | None = code

    @property
    def state(self) -> KernelState:
        return "up"

    async def wait_up(self, timeout: float) -> bool:
        return True

    async def request(self, method: str, params: BaseModel, result_type: type[Any], *, timeout: float = 60.0) -> Any:
        self.sent.append(params)
        if getattr(params, "prefix", None) is not None and self._code is not None:
            code, self._code = self._code, None
            raise JsonRpcError("no", code=code)
        answer = {"accepted": True} if result_type is TurnStartResult else {"text": "", "usage": {}}
        return result_type.model_validate(answer)


def _messages(n: int) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=f"m{k}") for k in range(n)]


def _turn(prefixes: SentPrefixes, messages: list[ChatMessage]) -> TurnStartParams:
    prefix, tail = prefixes.split("turn.start", "ann", messages, chain_hashes(messages))
    return TurnStartParams(run_id="r", session="ann", messages=tail, prefix=prefix, model=SPEC)


def test_the_shared_count_found_by_bisection_is_the_common_prefix() -> None:
    rng = random.Random(1)
    for _ in range(200):
        a = [rng.choice("ab") for _ in range(rng.randrange(12))]
        b = a[: rng.randrange(len(a) + 1)] + [rng.choice("ab") for _ in range(rng.randrange(6))]
        held = chain_hashes([ChatMessage(role="user", content=c) for c in a])
        chain = chain_hashes([ChatMessage(role="user", content=c) for c in b])
        common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        assert shared_count(held, chain) == common


def test_a_request_whose_prefix_the_kernel_does_not_hold_goes_again_whole() -> None:
    prefixes = SentPrefixes()
    kernel = FakeKernel()
    link = PrefixLink(kernel, prefixes)
    asyncio.run(link.request("turn.start", _turn(prefixes, _messages(3)), TurnStartResult))
    later = _turn(prefixes, _messages(5))
    assert later.prefix is not None and later.prefix.count == 3 and len(later.messages) == 2
    asyncio.run(link.request("turn.start", later, TurnStartResult))
    resent = kernel.sent[-1]
    assert isinstance(resent, TurnStartParams) and resent.prefix is None and resent.messages == _messages(5)
    assert len(kernel.sent) == 3


def test_a_summary_continues_the_turns_list_and_goes_again_whole_too() -> None:
    prefixes = SentPrefixes()
    kernel = FakeKernel()
    link = PrefixLink(kernel, prefixes)
    asyncio.run(link.request("turn.start", _turn(prefixes, _messages(3)), TurnStartResult))
    whole = [*_messages(3), ChatMessage(role="user", content="sum up")]
    prefix, tail = prefixes.split("summarize", "ann", whole, chain_hashes(_messages(3)))
    assert prefix is not None and prefix.count == 3 and tail == whole[3:]
    params = SummarizeParams(session="ann", prefix=prefix, messages=tail, model=SPEC)
    asyncio.run(link.request("summarize", params, SummarizeResult))
    resent = kernel.sent[-1]
    assert isinstance(resent, SummarizeParams) and resent.prefix is None and resent.messages == whole
    # a summary's list is not what the kernel holds: the next turn still continues the turn's list
    following = _turn(prefixes, _messages(4)).prefix
    assert following is not None and following.count == 3


def test_any_other_error_is_not_answered_by_sending_again() -> None:
    prefixes = SentPrefixes()
    kernel = FakeKernel(PROVIDER_ERROR)
    link = PrefixLink(kernel, prefixes)
    asyncio.run(link.request("turn.start", _turn(prefixes, _messages(2)), TurnStartResult))
    with pytest.raises(JsonRpcError) as failed:
        asyncio.run(link.request("turn.start", _turn(prefixes, _messages(4)), TurnStartResult))
    assert failed.value.code == PROVIDER_ERROR and len(kernel.sent) == 2


def test_a_turn_the_kernel_did_not_take_is_not_taken_for_held() -> None:
    prefixes = SentPrefixes()
    _turn(prefixes, _messages(3))
    prefixes.done("turn.start", "ann", accepted=False)
    assert _turn(prefixes, _messages(4)).prefix is None


def test_after_a_new_kernel_every_session_starts_whole() -> None:
    prefixes = SentPrefixes()
    _turn(prefixes, _messages(3))
    prefixes.done("turn.start", "ann", accepted=True)
    assert _turn(prefixes, _messages(4)).prefix is not None
    prefixes.forget_all()
    assert _turn(prefixes, _messages(4)).prefix is None
