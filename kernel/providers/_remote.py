"""The frame every remote provider shares: key check, one SDK client per turn, and the retry loop.

A subclass names its default base URL and supplies three things: how to open its SDK's client, the
request body for a `ModelRequest`, and one streamed attempt. Retries, backoff and the translation of
failures into `ProviderError` stay in `kernel.providers.retry`, the one place they are decided.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar

import httpx2

from kernel.providers._common import call_info, require_api_key
from kernel.providers.base import ModelConfig, ModelEvent, ModelRequest
from kernel.providers.retry import Clock, RealClock, RetryPolicy, stream_with_retries

__all__ = ["RemoteProvider"]


class RemoteProvider(ABC):
    """A model behind an HTTP API. `clock` and `policy` are for tests and tuning; defaults suit real use."""

    DEFAULT_BASE_URL: ClassVar[str]

    def __init__(self, config: ModelConfig, *, clock: Clock | None = None, policy: RetryPolicy | None = None) -> None:
        self.config = config
        self._clock = clock or RealClock()
        self._policy = policy or RetryPolicy()

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream the model's answer; see `kernel.providers.base.Provider`.

        Raises:
            ProviderError: no key for a remote API (before any call), or a failure per `retry.RETRY_TABLE`.
            BadModelConfigError: the model has no name.
        """
        return self._stream(request)

    @abstractmethod
    def open_client(self, api_key: str, base_url: str, timeout: httpx2.Timeout) -> AbstractAsyncContextManager[Any]:
        """The SDK client for one turn, with the SDK's own retries off."""

    @abstractmethod
    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The provider's request body for `request`."""

    @abstractmethod
    def attempt(self, client: Any, body: dict[str, Any]) -> AsyncGenerator[ModelEvent, None]:
        """One streamed call; raises `retry.Failure` for what the retry table should judge."""

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        config = request.config
        api_key = require_api_key(config)
        body = self.request_body(request)
        info = call_info(config, self.DEFAULT_BASE_URL)
        timeout = httpx2.Timeout(float(config.options.get("read_timeout", 300.0)), connect=10.0)
        async with self.open_client(api_key, config.base_url or self.DEFAULT_BASE_URL, timeout) as client:

            def one_attempt() -> AsyncGenerator[ModelEvent, None]:
                return self.attempt(client, body)

            async for event in stream_with_retries(one_attempt, info, clock=self._clock, policy=self._policy):
                yield event
