"""The frame every remote provider shares: key check, the SDK client, and the retry loop.

A subclass names its default base URL and supplies three things: how to build its SDK's client, the
request body for a `ModelRequest`, and one streamed attempt. Given a `ClientPool` (the kernel's), a call
reuses the client of its configuration; without one, it builds a client and closes it when done. Retries,
backoff and the translation of failures into `ProviderError` stay in `kernel.providers.retry`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, ClassVar

import httpx2

from kernel.providers._common import call_info, require_api_key
from kernel.providers.base import ModelConfig, ModelEvent, ModelRequest
from kernel.providers.clients import ClientKey, ClientPool, SdkClient
from kernel.providers.retry import CallInfo, Clock, RealClock, RetryPolicy, stream_with_retries

_CONNECT_TIMEOUT = 10.0

__all__ = ["RemoteProvider"]


class RemoteProvider(ABC):
    """A model behind an HTTP API. `clock` and `policy` are for tests and tuning; defaults suit real use.

    `clients` is the pool to take the SDK client from; `open_provider` passes the kernel's.
    """

    DEFAULT_BASE_URL: ClassVar[str]
    SHARES_CLIENTS: ClassVar[bool] = True

    def __init__(
        self,
        config: ModelConfig,
        *,
        clock: Clock | None = None,
        policy: RetryPolicy | None = None,
        clients: ClientPool | None = None,
    ) -> None:
        self.config = config
        self._clock = clock or RealClock()
        self._policy = policy or RetryPolicy()
        self._clients = clients

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream the model's answer; see `kernel.providers.base.Provider`.

        Raises:
            ProviderError: no key for a remote API (before any call), or a failure per `retry.RETRY_TABLE`.
            BadModelConfigError: the model has no name.
        """
        return self._stream(request)

    @abstractmethod
    def open_client(self, api_key: str, base_url: str, timeout: httpx2.Timeout) -> SdkClient:
        """A new SDK client for this configuration, with the SDK's own retries off."""

    @abstractmethod
    def request_body(self, request: ModelRequest) -> bytes:
        """The provider's request body for `request`: the JSON bytes posted."""

    @abstractmethod
    def attempt(self, client: Any, body: bytes) -> AsyncGenerator[ModelEvent, None]:
        """One streamed call; raises `retry.Failure` for what the retry table should judge."""

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        config = request.config
        api_key = require_api_key(config)
        body = self.request_body(request)
        info = call_info(config, self.DEFAULT_BASE_URL)
        read_timeout = float(config.options.get("read_timeout", 300.0))
        timeout = httpx2.Timeout(read_timeout, connect=_CONNECT_TIMEOUT)
        base_url = config.base_url or self.DEFAULT_BASE_URL
        if self._clients is not None:
            key = ClientKey(type(self).__name__, base_url, api_key, read_timeout, _CONNECT_TIMEOUT)
            client = self._clients.get(key, lambda: self.open_client(api_key, base_url, timeout))
            async for event in self._attempts(client, body, info):
                yield event
            return
        client = self.open_client(api_key, base_url, timeout)
        try:
            async for event in self._attempts(client, body, info):
                yield event
        finally:
            await client.close()

    def _attempts(self, client: Any, body: bytes, info: CallInfo) -> AsyncIterator[ModelEvent]:
        def one_attempt() -> AsyncGenerator[ModelEvent, None]:
            return self.attempt(client, body)

        return stream_with_retries(one_attempt, info, clock=self._clock, policy=self._policy)
