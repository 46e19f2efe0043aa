"""The retry table and loop on their own: what is retried, how long it waits, what the user reads."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable

import pytest

from kernel.errors import ProviderError
from kernel.providers._common import require_api_key, retry_after_seconds
from kernel.providers.base import ModelConfig, ModelEvent, StreamEnd, TextDelta
from kernel.providers.retry import (
    RETRY_TABLE,
    CallInfo,
    Failure,
    RetryPolicy,
    redact,
    rule_for,
    stream_with_retries,
)
from protocol.errors import PROVIDER_ERROR
from tests.kernel.providers.fake_llm_server import FakeClock

KEY = "sk-live-abcdef0123456789"
INFO = CallInfo("openai", "gpt-test", "openai", "https://api.example", KEY)


OpenStream = Callable[[], AsyncGenerator[ModelEvent, None]]


def scripted(*outcomes: Failure | str) -> tuple[list[int], OpenStream]:
    """An `open_stream` that plays one outcome per attempt: a Failure, or a text answer."""
    attempts: list[int] = []

    def open_stream() -> AsyncGenerator[ModelEvent, None]:
        outcome = outcomes[len(attempts)]
        attempts.append(len(attempts) + 1)

        async def attempt() -> AsyncGenerator[ModelEvent, None]:
            if isinstance(outcome, Failure):
                raise outcome
            yield TextDelta(outcome)
            yield StreamEnd()

        return attempt()

    return attempts, open_stream


async def drain(open_stream: OpenStream, clock: FakeClock) -> list[ModelEvent]:
    events: list[ModelEvent] = []
    async with asyncio.timeout(5):
        async for event in stream_with_retries(open_stream, INFO, clock=clock, policy=RetryPolicy()):
            events.append(event)
    return events


def test_every_retryable_status_in_the_table_is_one_that_deserves_it() -> None:
    retryable = {k for k, rule in RETRY_TABLE.items() if isinstance(k, int) and rule.retry}
    assert retryable == {408, 409, 429, 500, 502, 503, 504, 529}


def test_unlisted_statuses_fall_back_to_their_class() -> None:
    assert rule_for(599).retry is True
    assert rule_for(418).retry is False


def test_backoff_doubles_up_to_the_cap_and_retry_after_wins() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0)
    assert [policy.delay(n, None) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    assert policy.delay(1, 12.5) == 12.5


def test_a_retry_after_longer_than_max_wait_is_not_waited_for() -> None:
    clock = FakeClock()
    attempts, open_stream = scripted(Failure(429, status=429, retry_after=3600.0), "never")
    with pytest.raises(ProviderError) as caught:
        asyncio.run(drain(open_stream, clock))
    assert caught.value.code == PROVIDER_ERROR
    assert caught.value.retryable is True
    assert attempts == [1]
    assert clock.sleeps == []


def test_a_retry_after_within_max_wait_is_waited_for() -> None:
    clock = FakeClock()
    attempts, open_stream = scripted(Failure(429, status=429, retry_after=59.0), "ok")
    events = asyncio.run(drain(open_stream, clock))
    assert events[0] == TextDelta("ok")
    assert attempts == [1, 2]
    assert clock.sleeps == [59.0]


def test_a_non_retryable_failure_is_raised_at_once() -> None:
    clock = FakeClock()
    attempts, open_stream = scripted(Failure(401, status=401), "never")
    with pytest.raises(ProviderError) as caught:
        asyncio.run(drain(open_stream, clock))
    assert caught.value.status == 401
    assert caught.value.retryable is False
    assert attempts == [1]


def test_messages_never_contain_the_key_even_when_the_server_echoes_it() -> None:
    clock = FakeClock()
    _, open_stream = scripted(Failure(400, status=400, detail=f"key {KEY} lacks scope"))
    with pytest.raises(ProviderError) as caught:
        asyncio.run(drain(open_stream, clock))
    assert KEY not in caught.value.message
    assert "lacks scope" in caught.value.message


def test_redact_leaves_text_without_the_secret_alone() -> None:
    assert redact("nothing here", KEY) == "nothing here"
    assert redact(f"a {KEY} b", KEY) == "a [redacted] b"


def test_retry_after_is_read_from_seconds_milliseconds_and_dates() -> None:
    assert retry_after_seconds({"retry-after": "7"}) == 7.0
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_a_key_is_required_for_a_public_api_but_not_for_loopback() -> None:
    with pytest.raises(ProviderError) as caught:
        require_api_key(ModelConfig(provider="openai", name="m", base_url="https://api.deepseek.com/v1"))
    assert caught.value.code == PROVIDER_ERROR
    assert require_api_key(ModelConfig(provider="openai", name="m", base_url="http://localhost:11434/v1")) == "no-key"
    assert require_api_key(ModelConfig(provider="openai", name="m", base_url="http://127.0.0.1:8080/v1")) == "no-key"
    stored = ModelConfig(provider="openai", name="m", base_url="http://[::1]:8000/v1", api_key=KEY)
    assert require_api_key(stored) == KEY
