"""Retrying a provider stream: one table says which failures deserve another attempt and what to tell the user.

Provider modules translate their SDK's exceptions into a neutral `Failure` (kind, status, Retry-After, the
provider's own message); `stream_with_retries` looks the failure up in `RETRY_TABLE` and either waits and
tries again or raises `ProviderError`. Invariants: nothing is retried once text or a tool call has reached
the consumer (the stream is then reported as interrupted); waits go through an injectable `Clock`; the
API key is scrubbed from every message this module builds.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from typing import Protocol

from kernel.errors import ProviderError
from kernel.providers.base import ModelEvent, TextDelta, ToolCallReady

__all__ = [
    "Clock",
    "RealClock",
    "Failure",
    "Rule",
    "RETRY_TABLE",
    "RetryPolicy",
    "CallInfo",
    "rule_for",
    "stream_with_retries",
    "redact",
]


class Clock(Protocol):
    """Where backoff waits happen; tests pass a clock that records the wait instead of sleeping."""

    async def sleep(self, seconds: float) -> None: ...


class RealClock:
    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class Failure(Exception):
    """A provider call failed; `kind` is a key of `RETRY_TABLE` (an HTTP status or a named kind)."""

    def __init__(
        self, kind: int | str, *, status: int | None = None, retry_after: float | None = None, detail: str = ""
    ) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.status = status
        self.retry_after = retry_after
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Rule:
    """Whether a failure may be retried and the message the user sees when it is not (or no longer) retried.

    The message is a `str.format` template over `provider`, `secret`, `model`, `status`, `base_url` and
    `detail` (the provider's own message, already scrubbed of the key).
    """

    retry: bool
    message: str


_REFUSED_KEY = "the API key for {provider} was refused; set a new one with `hearth secrets set {secret}`"
_SERVER_ERROR = "{provider} had a server error (HTTP {status}): {detail}"

# The one place that decides retryability. Integer keys are HTTP statuses; "4xx"/"5xx" catch the rest.
RETRY_TABLE: dict[int | str, Rule] = {
    400: Rule(False, "{provider} rejected the request: {detail}"),
    401: Rule(False, _REFUSED_KEY),
    403: Rule(False, _REFUSED_KEY + " (permission denied)"),
    404: Rule(False, "model {model!r} was not found at {provider} (check the model name and baseUrl): {detail}"),
    408: Rule(True, "{provider} timed out the request (HTTP 408)"),
    409: Rule(True, "{provider} reported a conflict (HTTP 409): {detail}"),
    413: Rule(False, "the request is too large for {provider}: {detail}"),
    422: Rule(False, "{provider} could not process the request: {detail}"),
    429: Rule(True, "{provider} is rate limiting requests; try again later: {detail}"),
    500: Rule(True, _SERVER_ERROR),
    502: Rule(True, _SERVER_ERROR),
    503: Rule(True, _SERVER_ERROR),
    504: Rule(True, _SERVER_ERROR),
    529: Rule(True, "{provider} is overloaded; try again later"),
    "4xx": Rule(False, "{provider} refused the request (HTTP {status}): {detail}"),
    "5xx": Rule(True, _SERVER_ERROR),
    "overloaded": Rule(True, "{provider} is overloaded; try again later"),
    "connection": Rule(True, "the connection to {provider} failed: {detail}"),
    "provider_error": Rule(True, "{provider} reported an error: {detail}"),
    "timeout": Rule(True, "{provider} did not answer in time"),
    "ended_early": Rule(True, "the stream from {provider} ended before the answer was complete"),
    "malformed": Rule(False, "{provider} sent a malformed stream: {detail}"),
    "bad_tool_arguments": Rule(False, "the model sent malformed arguments for a tool call: {detail}"),
}

_INTERRUPTED = "the stream from {provider} was interrupted after the answer had started: {reason}"


def rule_for(kind: int | str) -> Rule:
    """The table row for `kind`; an unlisted status falls back to its class ("4xx" or "5xx")."""
    if kind in RETRY_TABLE:
        return RETRY_TABLE[kind]
    if isinstance(kind, int) and kind >= 500:
        return RETRY_TABLE["5xx"]
    if isinstance(kind, int):
        return RETRY_TABLE["4xx"]
    return RETRY_TABLE["malformed"]


def redact(text: str, secret: str | None) -> str:
    """`text` with every occurrence of `secret` replaced, so a key echoed by a server never reaches a message."""
    if secret and len(secret) >= 4:
        return text.replace(secret, "[redacted]")
    return text


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to retry. A Retry-After beyond `max_wait` is not waited for."""

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_wait: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt number `attempt + 1` (attempts count from 1)."""
        if retry_after is not None:
            return max(0.0, retry_after)
        return min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))


@dataclass(frozen=True, slots=True)
class CallInfo:
    """What the messages may name: never the key itself (it is only used to scrub)."""

    provider: str
    model: str
    secret_name: str
    base_url: str
    api_key: str | None = None

    def message(self, failure: Failure, rule: Rule) -> str:
        detail = redact(failure.detail or "no details given", self.api_key)
        text = rule.message.format(
            provider=self.provider,
            secret=self.secret_name,
            model=self.model,
            status=failure.status,
            base_url=self.base_url,
            detail=detail,
        )
        return redact(text, self.api_key)


async def stream_with_retries(
    open_stream: Callable[[], AsyncGenerator[ModelEvent, None]],
    info: CallInfo,
    *,
    clock: Clock,
    policy: RetryPolicy,
) -> AsyncIterator[ModelEvent]:
    """Run `open_stream` until it completes, retrying per `RETRY_TABLE` while nothing has been delivered.

    Args:
        open_stream: starts one attempt; raises `Failure` for anything that went wrong.
        info: names for the messages, and the key to scrub from them.
        clock: where backoff waits happen.
        policy: attempt count and delays.

    Returns:
        An async iterator of the events of the attempt that succeeded.

    Raises:
        ProviderError: a failure that may not be retried, retries ran out, or the stream broke after output.
    """
    attempt = 0
    while True:
        attempt += 1
        delivered = False
        stream = open_stream()
        try:
            async for event in stream:
                if isinstance(event, TextDelta | ToolCallReady):
                    delivered = True
                yield event
            return
        except Failure as failure:
            rule = rule_for(failure.kind)
            if delivered and rule.retry:
                # A broken stream after output: the loop keeps the partial text, and repeating the call
                # would show it twice, so this is reported instead of retried.
                reason = redact(failure.detail or "it ended early", info.api_key)
                message = _INTERRUPTED.format(provider=info.provider, reason=reason)
                raise ProviderError(message, retryable=True, status=failure.status) from None
            if delivered:
                raise ProviderError(info.message(failure, rule), status=failure.status) from None
            wait = policy.delay(attempt, failure.retry_after)
            if not rule.retry or attempt >= policy.max_attempts or wait > policy.max_wait:
                raise ProviderError(info.message(failure, rule), retryable=rule.retry, status=failure.status) from None
        finally:
            await stream.aclose()
        await clock.sleep(wait)
